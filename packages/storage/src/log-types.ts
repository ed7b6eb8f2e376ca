/** Options and results of `Log` (kept apart to keep log.ts small). */
import type { TopicPartition } from '@samsa/protocol';
import type { Logger } from 'pino';
import type { Log } from './log.js';
import type { Clock, LogConfig } from './config.js';
import type { BatchMetadata } from './producer-state-manager.js';
import type { OpenIndexFiles } from './open-index-files.js';

export interface LogOptions {
  /** The partition directory `<log.dir>/<topic>-<partition>`. */
  dir: string;
  topicPartition: TopicPartition;
  config: LogConfig;
  clock?: Clock;
  logger?: Logger;
  /** From recovery-point-offset-checkpoint; default 0 (recover everything after an unclean shutdown). */
  recoveryPoint?: bigint;
  /** From log-start-offset-checkpoint; default 0. */
  logStartOffset?: bigint;
  /** The log dir had `.kafka_cleanshutdown`; default false. */
  hadCleanShutdown?: boolean;
  /** Initial high watermark (replication-offset-checkpoint); default the log start offset. */
  highWatermark?: bigint;
  /** How many inactive segments may keep their indexes in memory after reads. Default 2. */
  maxLoadedInactiveSegments?: number;
  /** Told before and after a truncation (the log cleaner pauses around it, as Kafka's LogManager does). */
  truncationListener?: TruncationListener;
  /** The cap on open index descriptors (the LogManager's); default a process-wide one. */
  indexFiles?: OpenIndexFiles;
  /**
   * The partition directory was just created and is empty (a new partition): nothing is listed or
   * read, the first segment's files are created directly. Default false.
   */
  newDirectory?: boolean;
}

/**
 * Called around `truncateTo` (when it removes something) and `truncateFullyAndStartAt`: `before`
 * runs before the log's lock is taken (it may wait for a cleaning of the log to stop), `after` once
 * the truncation is done or failed.
 */
export interface TruncationListener {
  beforeTruncation(log: Log): Promise<void>;
  afterTruncation(log: Log): Promise<void>;
}

export interface LogAppendInfo {
  firstOffset: bigint;
  lastOffset: bigint;
  /** Largest batch maxTimestamp (-1 if none); equals logAppendTime under LogAppendTime. */
  maxTimestamp: bigint;
  offsetOfMaxTimestamp: bigint;
  /** The append time stamped on the batches, or -1 under CreateTime. */
  logAppendTime: bigint;
  logStartOffset: bigint;
  recordCount: number;
  batchCount: number;
  validBytes: number;
}

/** The answer to an append of no batches. */
export function emptyAppendInfo(next: bigint, logStartOffset: bigint): LogAppendInfo {
  return {
    firstOffset: next,
    lastOffset: next - 1n,
    maxTimestamp: -1n,
    offsetOfMaxTimestamp: -1n,
    logAppendTime: -1n,
    logStartOffset,
    recordCount: 0,
    batchCount: 0,
    validBytes: 0,
  };
}

/** Kafka's answer to a duplicate batch: the cached batch's offsets and timestamp, nothing written. */
export function duplicateAppendInfo(d: BatchMetadata, logStartOffset: bigint, logAppendTime: boolean): LogAppendInfo {
  return {
    firstOffset: d.firstOffset,
    lastOffset: d.lastOffset,
    maxTimestamp: BigInt(d.timestamp),
    offsetOfMaxTimestamp: d.lastOffset,
    logAppendTime: logAppendTime ? BigInt(d.timestamp) : -1n,
    logStartOffset,
    recordCount: 0,
    batchCount: 0,
    validBytes: 0,
  };
}
