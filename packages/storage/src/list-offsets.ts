/**
 * ListOffsets over a log's segments (Kafka's UnifiedLog.fetchOffsetByTimestamp without tiered
 * storage): the special timestamps -1 latest, -2 earliest, -3 max timestamp, -4 earliest local, or
 * the first record whose timestamp is >= the target.
 */
import type { LeaderEpochFileCache } from './leader-epoch-cache.js';
import type { LogSegment } from './segment.js';

/** Special ListOffsets timestamps. */
export const ListOffsetsTimestamp = {
  LATEST: -1n,
  EARLIEST: -2n,
  MAX_TIMESTAMP: -3n,
  EARLIEST_LOCAL: -4n,
} as const;

export interface OffsetForTimestamp {
  timestamp: bigint;
  offset: bigint;
  /** Leader epoch of the offset, when the epoch cache knows it. */
  leaderEpoch: number | undefined;
}

export interface ListOffsetsContext {
  segments: readonly LogSegment[];
  logStartOffset: bigint;
  logEndOffset: bigint;
  epochs: LeaderEpochFileCache;
  /** Called for each inactive segment whose indexes were used. */
  touched?: (segment: LogSegment) => void;
}

export async function fetchOffsetByTimestamp(timestamp: bigint, ctx: ListOffsetsContext): Promise<OffsetForTimestamp | null> {
  const { segments: segs, logStartOffset: start, epochs } = ctx;
  if (timestamp === ListOffsetsTimestamp.LATEST) {
    return { timestamp: -1n, offset: ctx.logEndOffset, leaderEpoch: epochs.latestEpoch };
  }
  if (timestamp === ListOffsetsTimestamp.EARLIEST || timestamp === ListOffsetsTimestamp.EARLIEST_LOCAL) {
    return { timestamp: -1n, offset: start, leaderEpoch: epochs.epochForOffset(start) };
  }
  if (timestamp === ListOffsetsTimestamp.MAX_TIMESTAMP) {
    let best: { timestamp: number; offset: bigint } | null = null;
    for (const s of segs) {
      const m = await s.maxTimestampSoFar();
      if (m.timestamp >= 0 && (!best || m.timestamp > best.timestamp)) best = m;
    }
    if (!best || best.offset < start) return null;
    return { timestamp: BigInt(best.timestamp), offset: best.offset, leaderEpoch: epochs.epochForOffset(best.offset) };
  }
  if (timestamp < 0n) return null;
  const target = Number(timestamp);
  for (let i = 0; i < segs.length; i++) {
    const seg = segs[i] as LogSegment;
    const next = segs[i + 1];
    if (next && next.baseOffset <= start) continue;
    if ((await seg.largestTimestamp()) < target) continue;
    const found = await seg.findOffsetByTimestamp(target, start);
    if (next) ctx.touched?.(seg);
    if (found) return { timestamp: BigInt(found.timestamp), offset: found.offset, leaderEpoch: epochs.epochForOffset(found.offset) };
  }
  return null;
}
