/**
 * Log layer configuration: Kafka's topic-level log settings (same meaning, camelCase names) plus the
 * small runtime dependencies (clock, logger) the log classes take.
 */

/** Kafka's message.timestamp.type. */
export const TimestampType = {
  CREATE_TIME: 'CreateTime',
  LOG_APPEND_TIME: 'LogAppendTime',
} as const;
export type TimestampType = (typeof TimestampType)[keyof typeof TimestampType];

export interface LogConfig {
  /** segment.bytes: roll when the active segment would exceed this size. Default 1 GiB. */
  segmentBytes: number;
  /** segment.ms: roll when the first batch of the active segment is this old. Default 7 days. */
  segmentMs: number;
  /** segment.jitter.ms: each segment rolls up to this much earlier (random per segment). Default 0. */
  segmentJitterMs: number;
  /** segment.index.bytes: size index files are preallocated to; a full index rolls the segment. Default 10 MiB. */
  maxIndexSize: number;
  /** index.interval.bytes: bytes appended between two offset index entries. Default 4096. */
  indexIntervalBytes: number;
  /** retention.ms: delete segments whose newest record is older than this; -1 = unlimited. Default 7 days. */
  retentionMs: number;
  /** retention.bytes: delete old segments while the log exceeds this size; -1 = unlimited. Default -1. */
  retentionBytes: number;
  /** max.message.bytes: largest batch accepted (and the bound recovery trusts). Default 1048588. */
  maxMessageBytes: number;
  /** file.delete.delay.ms: delay between renaming a segment to `.deleted` and removing it. Default 60000. */
  fileDeleteDelayMs: number;
  /** message.timestamp.type. Default CreateTime. */
  messageTimestampType: TimestampType;
  /** cleanup.policy includes `compact`: the log cleaner keeps the latest record per key. Default false. */
  compact: boolean;
  /** delete.retention.ms: how long a cleaned tombstone stays (its batch's delete horizon). Default 1 day. */
  deleteRetentionMs: number;
  /** min.cleanable.dirty.ratio: dirty/total bytes above which the cleaner picks the log. Default 0.5. */
  minCleanableRatio: number;
  /** min.compaction.lag.ms: segments with records younger than this are not cleaned. Default 0. */
  minCompactionLagMs: number;
  /** max.compaction.lag.ms: dirty records older than this force a clean; >= MAX_SAFE_INTEGER = never. */
  maxCompactionLagMs: number;
}

export const DEFAULT_LOG_CONFIG: Readonly<LogConfig> = Object.freeze({
  segmentBytes: 1024 * 1024 * 1024,
  segmentMs: 7 * 24 * 60 * 60 * 1000,
  segmentJitterMs: 0,
  maxIndexSize: 10 * 1024 * 1024,
  indexIntervalBytes: 4096,
  retentionMs: 7 * 24 * 60 * 60 * 1000,
  retentionBytes: -1,
  maxMessageBytes: 1048588,
  fileDeleteDelayMs: 60_000,
  messageTimestampType: TimestampType.CREATE_TIME,
  compact: false,
  deleteRetentionMs: 24 * 60 * 60 * 1000,
  minCleanableRatio: 0.5,
  minCompactionLagMs: 0,
  maxCompactionLagMs: Number.MAX_SAFE_INTEGER,
});

/** Defaults overlaid with `overrides`, validated. */
export function logConfig(overrides: Partial<LogConfig> = {}): LogConfig {
  const c: LogConfig = { ...DEFAULT_LOG_CONFIG };
  for (const [k, v] of Object.entries(overrides) as [keyof LogConfig, LogConfig[keyof LogConfig] | undefined][]) {
    if (v !== undefined) (c as unknown as Record<string, unknown>)[k] = v;
  }
  validateLogConfig(c);
  return c;
}

export function validateLogConfig(c: LogConfig): void {
  const intAtLeast = (name: keyof LogConfig, min: number): void => {
    const v = c[name];
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) {
      throw new RangeError(`Invalid log config ${name}=${String(v)} (must be an integer >= ${min})`);
    }
  };
  intAtLeast('segmentBytes', 14);
  intAtLeast('segmentMs', 1);
  intAtLeast('segmentJitterMs', 0);
  intAtLeast('maxIndexSize', 12);
  intAtLeast('indexIntervalBytes', 0);
  intAtLeast('retentionMs', -1);
  intAtLeast('retentionBytes', -1);
  intAtLeast('maxMessageBytes', 0);
  intAtLeast('fileDeleteDelayMs', 0);
  intAtLeast('deleteRetentionMs', 0);
  intAtLeast('minCompactionLagMs', 0);
  intAtLeast('maxCompactionLagMs', 1);
  if (typeof c.compact !== 'boolean') throw new RangeError(`Invalid log config compact=${String(c.compact)}`);
  if (typeof c.minCleanableRatio !== 'number' || !(c.minCleanableRatio >= 0 && c.minCleanableRatio <= 1)) {
    throw new RangeError(`Invalid log config minCleanableRatio=${String(c.minCleanableRatio)} (must be in [0, 1])`);
  }
  if (c.segmentBytes > 0x7fffffff) throw new RangeError(`Invalid log config segmentBytes=${c.segmentBytes} (max ${0x7fffffff})`);
  if (c.messageTimestampType !== TimestampType.CREATE_TIME && c.messageTimestampType !== TimestampType.LOG_APPEND_TIME) {
    throw new RangeError(`Invalid log config messageTimestampType=${String(c.messageTimestampType)}`);
  }
}

/** Wall clock in milliseconds; injected so tests can move time. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** File name suffixes Kafka uses in a partition directory. */
export const LOG_FILE_SUFFIX = '.log';
export const INDEX_FILE_SUFFIX = '.index';
export const TIME_INDEX_FILE_SUFFIX = '.timeindex';
export const TXN_INDEX_FILE_SUFFIX = '.txnindex';
export const DELETED_FILE_SUFFIX = '.deleted';
export const CLEANED_FILE_SUFFIX = '.cleaned';
export const SWAP_FILE_SUFFIX = '.swap';
/** Kafka's `-delete` suffix for directories of deleted partitions. */
export const DELETE_DIR_SUFFIX = '-delete';
export const FUTURE_DIR_SUFFIX = '-future';
export const STRAY_DIR_SUFFIX = '-stray';
export const LEADER_EPOCH_CHECKPOINT_FILE = 'leader-epoch-checkpoint';

/** `00000000000000000042` — Kafka's zero-padded 20-digit segment file name stem. */
export function filenamePrefixFromOffset(offset: bigint): string {
  return offset.toString().padStart(20, '0');
}

/** Base offset encoded in a segment or index file name, or null if the name is not one. */
export function offsetFromFileName(name: string): bigint | null {
  const m = /^(\d{20})\./.exec(name);
  return m?.[1] !== undefined ? BigInt(m[1]) : null;
}
