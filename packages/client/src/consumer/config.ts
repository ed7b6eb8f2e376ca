/**
 * Consumer configuration. Keys are Kafka's dotted config names (`group.id`, `auto.offset.reset`,
 * `max.poll.records`, ...) with the Java client's defaults (Kafka 3.8), so a Java
 * `consumer.properties` file maps one to one. Values may be strings (properties files,
 * `--consumer-property`) or numbers/booleans.
 */
import type { ConnectionOptions } from 'node:tls';
import { KafkaError } from '@samsa/protocol';
import type { Logger } from '../logger.js';
import type { SaslOptions } from '../sasl/index.js';
import type { PartitionAssignor } from './assignors/types.js';
import type { ConsumerInterceptor } from './interceptors.js';
import type { Deserializer } from './types.js';

export interface ConsumerConfigInput {
  'bootstrap.servers': string | readonly string[];
  'client.id'?: string;
  'group.id'?: string | null;
  'group.instance.id'?: string | null;
  'client.rack'?: string;
  'session.timeout.ms'?: number | string;
  'heartbeat.interval.ms'?: number | string;
  'max.poll.interval.ms'?: number | string;
  'max.poll.records'?: number | string;
  'enable.auto.commit'?: boolean | 'true' | 'false';
  'auto.commit.interval.ms'?: number | string;
  'auto.offset.reset'?: 'earliest' | 'latest' | 'none';
  'isolation.level'?: 'read_uncommitted' | 'read_committed';
  'fetch.min.bytes'?: number | string;
  'fetch.max.bytes'?: number | string;
  'fetch.max.wait.ms'?: number | string;
  'max.partition.fetch.bytes'?: number | string;
  'check.crcs'?: boolean | 'true' | 'false';
  /** Assignor names (`range`, `roundrobin`, `sticky`, `cooperative-sticky`, Java class names work too), comma-separated, or objects. */
  'partition.assignment.strategy'?: string | readonly (string | PartitionAssignor)[];
  'request.timeout.ms'?: number | string;
  'default.api.timeout.ms'?: number | string;
  'retry.backoff.ms'?: number | string;
  'retry.backoff.max.ms'?: number | string;
  'metadata.max.age.ms'?: number | string;
  'exclude.internal.topics'?: boolean | 'true' | 'false';
  'allow.auto.create.topics'?: boolean | 'true' | 'false';
  'key.deserializer'?: Deserializer<unknown>;
  'value.deserializer'?: Deserializer<unknown>;
  'interceptor.classes'?: readonly ConsumerInterceptor<unknown, unknown>[];
  /** Connect with TLS (security.protocol SSL / SASL_SSL): Node's TLS options, e.g. `{ ca: [caPem] }` (ConnectionOptions.tls). */
  tls?: ConnectionOptions;
  logger?: Logger;
  /** SASL credentials (SASL_PLAINTEXT listeners). */
  sasl?: SaslOptions;
}

export type IsolationLevel = 'read_uncommitted' | 'read_committed';
export type OffsetResetStrategy = 'earliest' | 'latest' | 'none';

export interface ConsumerConfig {
  bootstrapServers: string | readonly string[];
  clientId: string;
  groupId: string | null;
  groupInstanceId: string | null;
  clientRack: string;
  sessionTimeoutMs: number;
  heartbeatIntervalMs: number;
  maxPollIntervalMs: number;
  maxPollRecords: number;
  enableAutoCommit: boolean;
  autoCommitIntervalMs: number;
  autoOffsetReset: OffsetResetStrategy;
  isolationLevel: IsolationLevel;
  fetchMinBytes: number;
  fetchMaxBytes: number;
  fetchMaxWaitMs: number;
  maxPartitionFetchBytes: number;
  checkCrcs: boolean;
  assignmentStrategy: readonly (string | PartitionAssignor)[];
  /** partition.assignment.strategy was not given. */
  assignmentStrategyIsDefault: boolean;
  requestTimeoutMs: number;
  defaultApiTimeoutMs: number;
  retryBackoffMs: number;
  retryBackoffMaxMs: number;
  metadataMaxAgeMs: number;
  excludeInternalTopics: boolean;
  allowAutoCreateTopics: boolean;
}

/** The Java client's defaults (Kafka 3.8). */
export const CONSUMER_DEFAULTS = {
  'client.id': '',
  'group.id': null,
  'group.instance.id': null,
  'client.rack': '',
  'session.timeout.ms': 45000,
  'heartbeat.interval.ms': 3000,
  'max.poll.interval.ms': 300000,
  'max.poll.records': 500,
  'enable.auto.commit': true,
  'auto.commit.interval.ms': 5000,
  'auto.offset.reset': 'latest',
  'isolation.level': 'read_uncommitted',
  'fetch.min.bytes': 1,
  'fetch.max.bytes': 52428800,
  'fetch.max.wait.ms': 500,
  'max.partition.fetch.bytes': 1048576,
  'check.crcs': true,
  'partition.assignment.strategy': 'range,cooperative-sticky',
  'request.timeout.ms': 30000,
  'default.api.timeout.ms': 60000,
  'retry.backoff.ms': 100,
  'retry.backoff.max.ms': 1000,
  'metadata.max.age.ms': 300000,
  'exclude.internal.topics': true,
  'allow.auto.create.topics': true,
} as const;

let clientSeq = 0;

function configError(msg: string): KafkaError {
  return new KafkaError('INVALID_CONFIG', msg);
}

type NumericKey = { [K in keyof typeof CONSUMER_DEFAULTS]: (typeof CONSUMER_DEFAULTS)[K] extends number ? K : never }[keyof typeof CONSUMER_DEFAULTS];
type BoolKey = { [K in keyof typeof CONSUMER_DEFAULTS]: (typeof CONSUMER_DEFAULTS)[K] extends boolean ? K : never }[keyof typeof CONSUMER_DEFAULTS];

function int(input: Record<string, unknown>, name: NumericKey, min = 0): number {
  const raw = input[name] ?? CONSUMER_DEFAULTS[name];
  const n = typeof raw === 'number' ? raw : Number(String(raw).trim());
  if (!Number.isInteger(n) || n < min) throw configError(`Invalid value ${String(raw)} for configuration ${name}: must be an integer >= ${min}`);
  return n;
}

function bool(input: Record<string, unknown>, name: BoolKey): boolean {
  const raw = input[name] ?? CONSUMER_DEFAULTS[name];
  if (raw === true || raw === 'true') return true;
  if (raw === false || raw === 'false') return false;
  throw configError(`Invalid value ${String(raw)} for configuration ${name}: Expected value to be either true or false`);
}

function oneOf<T extends string>(input: Record<string, unknown>, name: keyof typeof CONSUMER_DEFAULTS, allowed: readonly T[]): T {
  const v = String(input[name] ?? CONSUMER_DEFAULTS[name])
    .trim()
    .toLowerCase();
  if (!(allowed as readonly string[]).includes(v))
    throw configError(`Invalid value ${v} for configuration ${name}: String must be one of: ${allowed.join(', ')}`);
  return v as T;
}

/** Validates and resolves a consumer config, applying Kafka's defaults and constraints. */
export function resolveConsumerConfig(input: ConsumerConfigInput): ConsumerConfig {
  const rec = input as unknown as Record<string, unknown>;
  if (!input['bootstrap.servers'] || input['bootstrap.servers'].length === 0)
    throw configError('Missing required configuration "bootstrap.servers" which has no default value.');
  const groupId = input['group.id'] === undefined || input['group.id'] === null || input['group.id'] === '' ? null : String(input['group.id']);
  const sessionTimeoutMs = int(rec, 'session.timeout.ms', 1);
  const heartbeatIntervalMs = int(rec, 'heartbeat.interval.ms', 1);
  if (heartbeatIntervalMs >= sessionTimeoutMs) throw configError('heartbeat.interval.ms must be set lower than session.timeout.ms');
  const rawStrategy = input['partition.assignment.strategy'] ?? CONSUMER_DEFAULTS['partition.assignment.strategy'];
  const assignmentStrategy =
    typeof rawStrategy === 'string'
      ? rawStrategy
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : [...rawStrategy];
  if (assignmentStrategy.length === 0) throw configError('Invalid value for configuration partition.assignment.strategy: at least one assignor is required');
  let enableAutoCommit = bool(rec, 'enable.auto.commit');
  if (groupId === null) {
    // Kafka: without group.id auto commit is off; asking for it explicitly is an error
    if (input['enable.auto.commit'] === true || input['enable.auto.commit'] === 'true')
      throw configError('enable.auto.commit cannot be set to true when default group id (null) is used.');
    enableAutoCommit = false;
  }
  return {
    bootstrapServers: input['bootstrap.servers'],
    clientId: input['client.id'] || `consumer-${groupId ?? ''}-${++clientSeq}`,
    groupId,
    groupInstanceId: input['group.instance.id'] ? String(input['group.instance.id']) : null,
    clientRack: String(input['client.rack'] ?? ''),
    sessionTimeoutMs,
    heartbeatIntervalMs,
    maxPollIntervalMs: int(rec, 'max.poll.interval.ms', 1),
    maxPollRecords: int(rec, 'max.poll.records', 1),
    enableAutoCommit,
    autoCommitIntervalMs: int(rec, 'auto.commit.interval.ms'),
    autoOffsetReset: oneOf(rec, 'auto.offset.reset', ['earliest', 'latest', 'none'] as const),
    isolationLevel: oneOf(rec, 'isolation.level', ['read_uncommitted', 'read_committed'] as const),
    fetchMinBytes: int(rec, 'fetch.min.bytes'),
    fetchMaxBytes: int(rec, 'fetch.max.bytes'),
    fetchMaxWaitMs: int(rec, 'fetch.max.wait.ms'),
    maxPartitionFetchBytes: int(rec, 'max.partition.fetch.bytes'),
    checkCrcs: bool(rec, 'check.crcs'),
    assignmentStrategy,
    assignmentStrategyIsDefault: input['partition.assignment.strategy'] === undefined,
    requestTimeoutMs: int(rec, 'request.timeout.ms'),
    defaultApiTimeoutMs: int(rec, 'default.api.timeout.ms'),
    retryBackoffMs: int(rec, 'retry.backoff.ms'),
    retryBackoffMaxMs: int(rec, 'retry.backoff.max.ms'),
    metadataMaxAgeMs: int(rec, 'metadata.max.age.ms'),
    excludeInternalTopics: bool(rec, 'exclude.internal.topics'),
    allowAutoCreateTopics: bool(rec, 'allow.auto.create.topics'),
  };
}
