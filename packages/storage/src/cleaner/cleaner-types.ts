/**
 * Shared pieces of the log cleaner: its configuration (Kafka's CleanerConfig), the description of a
 * log chosen for cleaning (LogToClean), per-cleaning statistics, the abort error, and segment range
 * queries over a log's segment list (Kafka's LogSegments.values(from, to)).
 */
import type { TopicPartition } from '@samsa/protocol';
import type { Log } from '../log.js';
import type { LogSegment } from '../segment.js';

/** `cleaner-offset-checkpoint`: per log dir, the first dirty offset of each compacted log. */
export const CLEANER_OFFSET_CHECKPOINT_FILE = 'cleaner-offset-checkpoint';

export interface CleanerConfig {
  /** log.cleaner.enable (default true). */
  enableCleaner: boolean;
  /** log.cleaner.threads: concurrent cleaning loops (default 1; 0 runs none). */
  numThreads: number;
  /** log.cleaner.dedupe.buffer.size: offset map memory of all loops (default 128 MiB). */
  dedupeBufferSize: number;
  /** log.cleaner.io.buffer.load.factor: how full an offset map may get (default 0.9). */
  dedupeBufferLoadFactor: number;
  /** log.cleaner.io.buffer.size: read/write buffer memory of all loops (default 512 KiB). */
  ioBufferSize: number;
  /** log.cleaner.io.max.bytes.per.second (default unlimited). */
  maxIoBytesPerSecond: number;
  /** log.cleaner.backoff.ms: sleep when no log needs cleaning (default 15000). */
  backoffMs: number;
}

export const DEFAULT_CLEANER_CONFIG: Readonly<CleanerConfig> = Object.freeze({
  enableCleaner: true,
  numThreads: 1,
  dedupeBufferSize: 128 * 1024 * 1024,
  dedupeBufferLoadFactor: 0.9,
  ioBufferSize: 512 * 1024,
  maxIoBytesPerSecond: Number.MAX_VALUE,
  backoffMs: 15_000,
});

/** Kafka's LogToClean: a compacted log with its dirty range and how dirty it is. */
export interface LogToClean {
  topicPartition: TopicPartition;
  log: Log;
  /** First offset not yet cleaned (the checkpoint, or the log start offset). */
  firstDirtyOffset: bigint;
  /** First offset this cleaning may not touch (active segment, last stable offset, min.compaction.lag.ms). */
  firstUncleanableOffset: bigint;
  /** Bytes of the segments before the dirty range. */
  cleanBytes: number;
  /** Bytes of the segments in the dirty range. */
  cleanableBytes: number;
  /** cleanableBytes / (cleanBytes + cleanableBytes). */
  cleanableRatio: number;
  /** max.compaction.lag.ms has passed for some dirty record. */
  needCompactionNow: boolean;
}

export function totalBytes(l: LogToClean): number {
  return l.cleanBytes + l.cleanableBytes;
}

/** Thrown inside a cleaning that must stop (the log is truncated, deleted or the cleaner stops). */
export class LogCleaningAbortedError extends Error {
  constructor(message = 'log cleaning aborted', options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'LogCleaningAbortedError';
  }
}

/** Kafka's CleanerStats (the numbers logged after each cleaning). */
export class CleanerStats {
  bytesRead = 0;
  bytesWritten = 0;
  mapBytesRead = 0;
  mapMessagesRead = 0;
  messagesRead = 0;
  messagesWritten = 0;
  invalidMessagesRead = 0;
  bufferUtilization = 0;
  readonly startTime: number;
  mapCompleteTime = -1;
  endTime = -1;

  constructor(private readonly now: () => number) {
    this.startTime = now();
  }

  indexDone(): void {
    this.mapCompleteTime = this.now();
  }

  allDone(): void {
    this.endTime = this.now();
  }

  /** Structured fields for the "cleaned log" line. */
  summary(): Record<string, number> {
    const end = this.endTime >= 0 ? this.endTime : this.now();
    return {
      elapsedMs: end - this.startTime,
      indexMs: (this.mapCompleteTime >= 0 ? this.mapCompleteTime : end) - this.startTime,
      mapBytesRead: this.mapBytesRead,
      mapMessagesRead: this.mapMessagesRead,
      bytesRead: this.bytesRead,
      bytesWritten: this.bytesWritten,
      messagesRead: this.messagesRead,
      messagesWritten: this.messagesWritten,
      bufferUtilization: Math.round(this.bufferUtilization * 1000) / 1000,
    };
  }
}

/**
 * The segments holding offsets in [from, to): from the one containing `from` (the last with base
 * offset <= from, else the first) to the last with base offset < to.
 */
export function segmentsInRange(segments: readonly LogSegment[], from: bigint, to: bigint): LogSegment[] {
  if (to <= from) return [];
  let start = 0;
  for (let i = 0; i < segments.length; i++) {
    if ((segments[i] as LogSegment).baseOffset <= from) start = i;
    else break;
  }
  const out: LogSegment[] = [];
  for (let i = start; i < segments.length; i++) {
    const s = segments[i] as LogSegment;
    if (s.baseOffset >= to) break;
    out.push(s);
  }
  return out;
}

/** The inactive segments holding offsets >= `from` (Kafka's nonActiveLogSegmentsFrom). */
export function nonActiveSegmentsFrom(segments: readonly LogSegment[], from: bigint): LogSegment[] {
  const active = segments.at(-1);
  if (!active) return [];
  return segmentsInRange(segments, from, active.baseOffset);
}
