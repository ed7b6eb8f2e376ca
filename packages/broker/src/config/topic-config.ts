/**
 * Topic-level configs (Kafka's `TopicConfig` / `LogConfig`, 3.8, without tiered storage), their
 * broker-level synonyms (`ServerTopicConfigSynonyms`), and what CreateTopics / DescribeConfigs need:
 * validating topic overrides, the effective values of a topic, and DescribeConfigs entries.
 *
 * A topic without an override of a config takes the broker's value of its synonym: `retention.ms`
 * comes from log.retention.ms, else log.retention.minutes, else log.retention.hours.
 */
import { ConfigError } from './errors.js';
import { CLEANUP_POLICIES, COMPRESSION_TYPES, MIN_SEGMENT_BYTES, TIMESTAMP_TYPES, isBrokerConfigName, type BrokerConfigName } from './definitions.js';
import { brokerSynonymEntries, type ConfigDescription, type ConfigSynonym, type DescribableBrokerConfig } from './describe.js';
import { freezeTable, type TopicConfigDef } from './types.js';
import { IBP_3_0_IV1, parseMetadataVersion, shouldIgnoreMessageFormatVersion } from '@samsa/server-common';
import { LONG_MAX, formatValue, parseValue, type ValueOfDef } from './values.js';

export const TOPIC_CONFIGS = freezeTable({
  'cleanup.policy': {
    type: 'list',
    default: ['delete'],
    oneOf: CLEANUP_POLICIES,
    importance: 'medium',
    doc: 'What to do with old segments: delete, compact, or both.',
  },
  'compression.type': {
    type: 'string',
    default: 'producer',
    oneOf: COMPRESSION_TYPES,
    importance: 'medium',
    doc: 'Compression of stored batches; producer keeps what the producer sent.',
  },
  'delete.retention.ms': { type: 'long', default: 86400000, min: 0, importance: 'medium', doc: 'How long tombstones are kept in a compacted topic.' },
  'file.delete.delay.ms': { type: 'long', default: 60000, min: 0, importance: 'medium', doc: "Delay before a deleted segment's files are removed." },
  'flush.messages': { type: 'long', default: LONG_MAX, min: 1, importance: 'medium', doc: 'Messages appended before the log is fsynced.' },
  'flush.ms': { type: 'long', default: LONG_MAX, min: 0, importance: 'medium', doc: 'Time before the log is fsynced.' },
  'follower.replication.throttled.replicas': {
    type: 'list',
    default: [],
    importance: 'medium',
    doc: 'Replicas (partition:broker, or *) throttled on the follower side.',
  },
  'index.interval.bytes': { type: 'int', default: 4096, min: 0, importance: 'medium', doc: 'Bytes between offset index entries.' },
  'leader.replication.throttled.replicas': {
    type: 'list',
    default: [],
    importance: 'medium',
    doc: 'Replicas (partition:broker, or *) throttled on the leader side.',
  },
  'max.compaction.lag.ms': {
    type: 'long',
    default: LONG_MAX,
    min: 1,
    importance: 'medium',
    doc: 'Maximum age of a record before it must be eligible for compaction.',
  },
  'max.message.bytes': { type: 'int', default: 1048588, min: 0, importance: 'medium', doc: 'Largest record batch accepted for the topic.' },
  'message.downconversion.enable': { type: 'boolean', default: true, importance: 'low', doc: 'Down-convert records for old consumers.' },
  'message.format.version': {
    type: 'string',
    default: '3.0-IV1',
    importance: 'medium',
    doc: 'Message format version of the topic (deprecated in Kafka 3.0; ignored when inter.broker.protocol.version is 3.0 or higher).',
  },
  'message.timestamp.after.max.ms': {
    type: 'long',
    default: LONG_MAX,
    min: 0,
    importance: 'medium',
    doc: 'How far in the future a CreateTime timestamp may be.',
  },
  'message.timestamp.before.max.ms': {
    type: 'long',
    default: LONG_MAX,
    min: 0,
    importance: 'medium',
    doc: 'How far in the past a CreateTime timestamp may be.',
  },
  'message.timestamp.difference.max.ms': {
    type: 'long',
    default: LONG_MAX,
    min: 0,
    importance: 'medium',
    doc: 'Largest accepted difference between a CreateTime timestamp and the broker clock (deprecated).',
  },
  'message.timestamp.type': {
    type: 'string',
    default: 'CreateTime',
    oneOf: TIMESTAMP_TYPES,
    importance: 'medium',
    doc: "Record timestamps: as the producer set them, or the broker's append time.",
  },
  'min.cleanable.dirty.ratio': { type: 'double', default: 0.5, min: 0, max: 1, importance: 'medium', doc: 'Dirty/total ratio above which the log is cleaned.' },
  'min.compaction.lag.ms': { type: 'long', default: 0, min: 0, importance: 'medium', doc: 'Minimum age of a record before it may be compacted.' },
  'min.insync.replicas': { type: 'int', default: 1, min: 1, importance: 'medium', doc: 'In-sync replicas needed for an acks=all produce to succeed.' },
  preallocate: { type: 'boolean', default: false, importance: 'medium', doc: 'Preallocate segment files.' },
  'retention.bytes': { type: 'long', default: -1, importance: 'medium', doc: 'Largest size of a partition before old segments are deleted (-1: no limit).' },
  'retention.ms': { type: 'long', default: 604800000, min: -1, importance: 'medium', doc: 'How long to keep a segment (-1: forever).' },
  'segment.bytes': { type: 'int', default: 1073741824, min: MIN_SEGMENT_BYTES, importance: 'medium', doc: 'Size at which a segment is rolled.' },
  'segment.index.bytes': { type: 'int', default: 10485760, min: 4, importance: 'medium', doc: 'Largest offset index of a segment.' },
  'segment.jitter.ms': { type: 'long', default: 0, min: 0, importance: 'medium', doc: 'Random jitter subtracted from the roll age.' },
  'segment.ms': { type: 'long', default: 604800000, min: 1, importance: 'medium', doc: 'Age at which a segment is rolled.' },
  'unclean.leader.election.enable': {
    type: 'boolean',
    default: false,
    importance: 'medium',
    doc: 'Allow an out-of-sync replica to become leader as a last resort (may lose data).',
  },
} as const satisfies Record<string, TopicConfigDef>);

export type TopicConfigDefs = typeof TOPIC_CONFIGS;
export type TopicConfigName = keyof TopicConfigDefs;
export type TopicConfigValue<K extends TopicConfigName> = ValueOfDef<TopicConfigDefs[K]>;
/** A value for every topic config. */
export type TopicConfigValues = { readonly [K in TopicConfigName]: TopicConfigValue<K> };
/** Topic-level overrides (what /config/topics/<name> holds), decoded. */
export type TopicConfigOverrides = { readonly [K in TopicConfigName]?: TopicConfigValue<K> };

export const TOPIC_CONFIG_NAMES: readonly TopicConfigName[] = Object.freeze(Object.keys(TOPIC_CONFIGS) as TopicConfigName[]);

export function isTopicConfigName(name: string): name is TopicConfigName {
  return Object.prototype.hasOwnProperty.call(TOPIC_CONFIGS, name);
}

/** A broker config a topic config falls back to; `multiplier` converts its unit to the topic's. */
export interface TopicConfigSynonym {
  readonly name: BrokerConfigName;
  readonly multiplier: number;
}

const HOUR_MS = 3_600_000;
const same = (name: BrokerConfigName): TopicConfigSynonym => ({ name, multiplier: 1 });

/** Broker synonyms of each topic config, in order of precedence (ServerTopicConfigSynonyms). */
export const TOPIC_CONFIG_SYNONYMS: { readonly [K in TopicConfigName]: readonly TopicConfigSynonym[] } = deepFreeze({
  'cleanup.policy': [same('log.cleanup.policy')],
  'compression.type': [same('compression.type')],
  'delete.retention.ms': [same('log.cleaner.delete.retention.ms')],
  'file.delete.delay.ms': [same('log.segment.delete.delay.ms')],
  'flush.messages': [same('log.flush.interval.messages')],
  'flush.ms': [same('log.flush.interval.ms'), same('log.flush.scheduler.interval.ms')],
  'follower.replication.throttled.replicas': [],
  'index.interval.bytes': [same('log.index.interval.bytes')],
  'leader.replication.throttled.replicas': [],
  'max.compaction.lag.ms': [same('log.cleaner.max.compaction.lag.ms')],
  'max.message.bytes': [same('message.max.bytes')],
  'message.downconversion.enable': [same('log.message.downconversion.enable')],
  'message.format.version': [same('log.message.format.version')],
  'message.timestamp.after.max.ms': [same('log.message.timestamp.after.max.ms')],
  'message.timestamp.before.max.ms': [same('log.message.timestamp.before.max.ms')],
  'message.timestamp.difference.max.ms': [same('log.message.timestamp.difference.max.ms')],
  'message.timestamp.type': [same('log.message.timestamp.type')],
  'min.cleanable.dirty.ratio': [same('log.cleaner.min.cleanable.ratio')],
  'min.compaction.lag.ms': [same('log.cleaner.min.compaction.lag.ms')],
  'min.insync.replicas': [same('min.insync.replicas')],
  preallocate: [same('log.preallocate')],
  'retention.bytes': [same('log.retention.bytes')],
  'retention.ms': [same('log.retention.ms'), { name: 'log.retention.minutes', multiplier: 60_000 }, { name: 'log.retention.hours', multiplier: HOUR_MS }],
  'segment.bytes': [same('log.segment.bytes')],
  'segment.index.bytes': [same('log.index.size.max.bytes')],
  'segment.jitter.ms': [same('log.roll.jitter.ms'), { name: 'log.roll.jitter.hours', multiplier: HOUR_MS }],
  'segment.ms': [same('log.roll.ms'), { name: 'log.roll.hours', multiplier: HOUR_MS }],
  'unclean.leader.election.enable': [same('unclean.leader.election.enable')],
});

function deepFreeze<T extends Record<string, readonly object[]>>(o: T): T {
  for (const list of Object.values(o)) {
    for (const item of list) Object.freeze(item);
    Object.freeze(list);
  }
  return Object.freeze(o);
}

/** The broker config that stands for a topic config (`retention.ms` → `log.retention.ms`). */
export function brokerSynonymOf(name: TopicConfigName): BrokerConfigName | undefined {
  return TOPIC_CONFIG_SYNONYMS[name][0]?.name;
}

const THROTTLED_REPLICAS = /^(\*|\d+:\d+)$/;

/**
 * Decodes and checks topic overrides (CreateTopics configs, AlterConfigs, /config/topics).
 * Throws `ConfigError` for an unknown name or an invalid value; Kafka answers INVALID_CONFIG.
 */
export function parseTopicConfigs(props: Readonly<Record<string, string>> | ReadonlyMap<string, string>): TopicConfigOverrides {
  const out: Record<string, unknown> = {};
  const entries = props instanceof Map ? [...props.entries()] : Object.entries(props as Readonly<Record<string, string>>);
  for (const [key, raw] of entries) {
    if (!isTopicConfigName(key)) throw new ConfigError(key, `Unknown topic config name: ${key}.`);
    const value = parseValue(key, TOPIC_CONFIGS[key], raw);
    if (key === 'message.format.version' && parseMetadataVersion(value as string) === null) {
      throw new ConfigError(key, `Invalid value ${raw} for configuration ${key}: Version ${raw} is not a valid version`);
    }
    if (key === 'leader.replication.throttled.replicas' || key === 'follower.replication.throttled.replicas') {
      const items = value as readonly string[];
      if (items.some((i) => !THROTTLED_REPLICAS.test(i)) || (items.includes('*') && items.length > 1)) {
        throw new ConfigError(key, `Invalid value '${raw}' for configuration '${key}': expected * or a comma-separated list of partitionId:brokerId.`);
      }
    }
    out[key] = value;
  }
  return Object.freeze(out) as TopicConfigOverrides;
}

/** The value a topic without an override takes from the broker (first synonym with a value). */
function fromBroker(broker: DescribableBrokerConfig, name: TopicConfigName): { value: unknown; from: BrokerConfigName | undefined } {
  if (name === 'message.format.version') return { value: brokerMessageFormatVersion(broker), from: 'log.message.format.version' };
  for (const s of TOPIC_CONFIG_SYNONYMS[name]) {
    const v = broker.value(s.name);
    if (v === null) continue;
    if (typeof v !== 'number') return { value: v, from: s.name };
    const n = v * s.multiplier;
    // KafkaConfig.logRetentionTimeMillis: any negative retention means "forever".
    return { value: name === 'retention.ms' && n < 0 ? -1 : n, from: s.name };
  }
  return { value: TOPIC_CONFIGS[name].default, from: undefined };
}

/**
 * What a topic without its own message.format.version reports (KafkaConfig.logMessageFormatVersion,
 * as a full version): log.message.format.version ("2.0" reads 2.0-IV1), or 3.0-IV1 whenever
 * inter.broker.protocol.version is 3.0 or higher.
 */
function brokerMessageFormatVersion(broker: DescribableBrokerConfig): string {
  const ibp = parseMetadataVersion(String(broker.value('inter.broker.protocol.version')));
  const configured = parseMetadataVersion(String(broker.value('log.message.format.version')));
  if (!ibp || shouldIgnoreMessageFormatVersion(ibp) || !configured) return IBP_3_0_IV1.version;
  return configured.version;
}

/** Every topic config's value for a topic with `overrides`, the rest from the broker. */
export function effectiveTopicConfig(broker: DescribableBrokerConfig, overrides: TopicConfigOverrides = {}): TopicConfigValues {
  const out: Record<string, unknown> = {};
  for (const name of TOPIC_CONFIG_NAMES) {
    const o = overrides[name];
    out[name] = o !== undefined ? o : fromBroker(broker, name).value;
  }
  return Object.freeze(out) as TopicConfigValues;
}

/**
 * DescribeConfigs entries of a topic, sorted by name. `overrides` are the topic's own configs
 * (source DYNAMIC_TOPIC_CONFIG); synonyms list the override, then the broker's static values,
 * then defaults, as Kafka does.
 */
export function describeTopicConfigs(broker: DescribableBrokerConfig, overrides: TopicConfigOverrides = {}): ConfigDescription[] {
  const effective = effectiveTopicConfig(broker, overrides);
  return [...TOPIC_CONFIG_NAMES].sort().map((name) => {
    const def: TopicConfigDef = TOPIC_CONFIGS[name];
    const value = formatValue(def.type, effective[name]);
    const synonyms: ConfigSynonym[] = [];
    if (overrides[name] !== undefined) synonyms.push({ name, value, source: 'DYNAMIC_TOPIC_CONFIG' });
    // Kafka lists the synonyms of the primary broker name only from that name on: retention.ms
    // shows log.retention.hours only after a log.retention.ms entry (ConfigHelper.configSynonyms)
    const primary = brokerSynonymOf(name);
    if (primary) synonyms.push(...brokerSynonymEntries(broker, primary));
    const head = synonyms[0];
    const origin =
      head?.source === 'DYNAMIC_TOPIC_CONFIG'
        ? ({ kind: 'dynamic', level: 'topic' } as const)
        : head && head.source !== 'DEFAULT_CONFIG' && isBrokerConfigName(head.name)
          ? broker.origin(head.name)
          : ({ kind: 'default' } as const);
    return Object.freeze({
      name,
      value,
      source: head?.source ?? 'DEFAULT_CONFIG',
      sensitive: false,
      readOnly: false,
      type: def.type,
      documentation: def.doc,
      synonyms: Object.freeze(synonyms),
      origin,
    });
  });
}
