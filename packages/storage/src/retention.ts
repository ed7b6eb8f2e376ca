/**
 * Which leading segments retention deletes (Kafka's UnifiedLog.deleteOldSegments for the `delete`
 * cleanup policy): whole segments only, never the active one, and only segments whose successor
 * starts at or below the high watermark. Three passes in Kafka's order, each on what the previous
 * one left: the log start offset, retention.bytes, retention.ms (newest record timestamp, else mtime).
 */
import type { LogSegment } from './segment.js';

export interface RetentionParams {
  highWatermark: bigint;
  logStartOffset: bigint;
  /** -1 = unlimited. */
  retentionBytes: number;
  /** -1 = unlimited. */
  retentionMs: number;
  now: number;
}

export interface RetentionStep {
  /** Leading segments to delete (after the previous steps' segments). */
  count: number;
  reason: string;
}

export async function planRetention(segments: readonly LogSegment[], p: RetentionParams): Promise<RetentionStep[]> {
  const steps: RetentionStep[] = [];
  let from = 0;
  const take = async (pred: (seg: LogSegment, next: LogSegment) => boolean | Promise<boolean>, reason: string): Promise<void> => {
    let n = from;
    while (n < segments.length - 1) {
      const seg = segments[n] as LogSegment;
      const next = segments[n + 1] as LogSegment;
      if (next.baseOffset > p.highWatermark || !(await pred(seg, next))) break;
      n++;
    }
    if (n > from) steps.push({ count: n - from, reason });
    from = n;
  };
  await take((_s, next) => next.baseOffset <= p.logStartOffset, 'log start offset breach');
  if (p.retentionBytes >= 0) {
    let diff = -p.retentionBytes;
    for (let i = from; i < segments.length; i++) diff += (segments[i] as LogSegment).size;
    if (diff > 0) {
      await take((s) => {
        if (diff - s.size < 0) return false;
        diff -= s.size;
        return true;
      }, `retention size ${p.retentionBytes} breach`);
    }
  }
  if (p.retentionMs >= 0) {
    await take(async (s) => p.now - (await s.largestTimestamp()) > p.retentionMs, `retention time ${p.retentionMs}ms breach`);
  }
  return steps;
}
