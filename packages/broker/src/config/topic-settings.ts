import type { BrokerConfig } from './broker-config.js';
import { effectiveTopicConfig, parseTopicConfigs } from './topic-config.js';
import type { LogConfig, TimestampType } from '@samsa/storage';

/** Per-topic settings resolved from /config/topics/<t> over the broker defaults. */
export interface TopicSettings {
  logConfig: LogConfig;
  minInsyncReplicas: number;
  /** message.timestamp.before/after.max.ms (CreateTime checks); Infinity = unbounded. */
  timestampBeforeMaxMs: number;
  timestampAfterMaxMs: number;
  /** cleanup.policy includes compact (records need keys). */
  compacted: boolean;
  /** cleanup.policy includes delete (DeleteRecords is refused otherwise); absent means yes. */
  deletes?: boolean;
}

/** Longs of Long.MAX_VALUE size mean "no limit". */
const bounded = (n: number) => (n >= Number.MAX_SAFE_INTEGER ? Number.POSITIVE_INFINITY : n);

/**
 * A topic's effective settings: its /config/topics overrides over the broker's log.* defaults
 * (Kafka's LogConfig), mapped onto what the log layer and the produce path use.
 */
export function topicSettingsFrom(
  config: BrokerConfig,
  overrides: Readonly<Record<string, string>> = {},
): TopicSettings & {
  timestampBeforeMaxMs: number;
  timestampAfterMaxMs: number;
  compacted: boolean;
  deletes: boolean;
} {
  const t = effectiveTopicConfig(config, parseTopicConfigs(overrides));
  // retention deletes segments only under cleanup.policy=delete (a compact-only topic keeps them)
  const deletes = t['cleanup.policy'].includes('delete');
  const logConfig: LogConfig = {
    segmentBytes: t['segment.bytes'],
    segmentMs: Math.min(t['segment.ms'], Number.MAX_SAFE_INTEGER),
    segmentJitterMs: Math.min(t['segment.jitter.ms'], Number.MAX_SAFE_INTEGER),
    maxIndexSize: Math.max(12, t['segment.index.bytes']),
    indexIntervalBytes: t['index.interval.bytes'],
    retentionMs: deletes ? Math.min(t['retention.ms'], Number.MAX_SAFE_INTEGER) : -1,
    retentionBytes: deletes ? Math.min(t['retention.bytes'], Number.MAX_SAFE_INTEGER) : -1,
    maxMessageBytes: t['max.message.bytes'],
    fileDeleteDelayMs: Math.min(t['file.delete.delay.ms'], Number.MAX_SAFE_INTEGER),
    messageTimestampType: t['message.timestamp.type'] as TimestampType,
    compact: t['cleanup.policy'].includes('compact'),
    deleteRetentionMs: Math.min(t['delete.retention.ms'], Number.MAX_SAFE_INTEGER),
    minCleanableRatio: t['min.cleanable.dirty.ratio'],
    minCompactionLagMs: Math.min(t['min.compaction.lag.ms'], Number.MAX_SAFE_INTEGER),
    maxCompactionLagMs: Math.min(t['max.compaction.lag.ms'], Number.MAX_SAFE_INTEGER),
  };
  const diff = bounded(t['message.timestamp.difference.max.ms']);
  return {
    logConfig,
    minInsyncReplicas: t['min.insync.replicas'],
    timestampBeforeMaxMs: Math.min(diff, bounded(t['message.timestamp.before.max.ms'])),
    timestampAfterMaxMs: Math.min(diff, bounded(t['message.timestamp.after.max.ms'])),
    compacted: t['cleanup.policy'].includes('compact'),
    deletes,
  };
}
