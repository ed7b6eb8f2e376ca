/** Options and results of `Log` (kept apart to keep log.ts small). */
import type { Logger } from 'pino';
import type { Clock, LogConfig } from './config.js';
import type { TopicPartition } from './topic-partition.js';

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
