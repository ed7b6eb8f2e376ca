/**
 * Producer configuration. Keys are Kafka's own dotted config names (`bootstrap.servers`,
 * `linger.ms`, ...) with the Java client's defaults (Kafka 3.8: linger.ms 0, acks all, idempotence
 * on), so a Java `producer.properties` file maps one to one. Values may be given as strings (from
 * properties files / `--producer-property`) or as numbers/booleans.
 */
import type { ConnectionOptions } from 'node:tls';
import { KafkaError } from '@samsa/protocol';
import type { Logger } from '../logger.js';
import type { SaslOptions } from '../sasl/index.js';
import type { ProducerInterceptor } from './interceptors.js';
import type { Partitioner } from './partitioner.js';
import type { Serializer } from './serializers.js';

export interface ProducerConfigInput {
  'bootstrap.servers': string | readonly string[];
  'client.id'?: string;
  acks?: 'all' | '-1' | '0' | '1' | -1 | 0 | 1;
  'batch.size'?: number | string;
  'linger.ms'?: number | string;
  'buffer.memory'?: number | string;
  'max.block.ms'?: number | string;
  'max.request.size'?: number | string;
  'compression.type'?: 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd';
  retries?: number | string;
  'retry.backoff.ms'?: number | string;
  'retry.backoff.max.ms'?: number | string;
  'delivery.timeout.ms'?: number | string;
  'request.timeout.ms'?: number | string;
  'max.in.flight.requests.per.connection'?: number | string;
  'enable.idempotence'?: boolean | 'true' | 'false';
  'metadata.max.age.ms'?: number | string;
  /** Makes the producer transactional (initTransactions() & co); implies enable.idempotence. */
  'transactional.id'?: string | null;
  /** transaction.timeout.ms sent in InitProducerId (the coordinator aborts a transaction open longer). */
  'transaction.timeout.ms'?: number | string;
  /** `default` (murmur2 for keys, sticky for null keys) or `round-robin`; the Java class names work too. */
  'partitioner.class'?: string | Partitioner;
  /** Java 3.x option: true → the sticky behaviour is skipped for keyed records too (hash ignored). */
  'partitioner.ignore.keys'?: boolean | 'true' | 'false';
  'key.serializer'?: Serializer<unknown>;
  'value.serializer'?: Serializer<unknown>;
  'interceptor.classes'?: readonly ProducerInterceptor<unknown, unknown>[];
  /** Connect with TLS (security.protocol SSL / SASL_SSL): Node's TLS options, e.g. `{ ca: [caPem] }` (ConnectionOptions.tls). */
  tls?: ConnectionOptions;
  logger?: Logger;
  /** SASL credentials (SASL_PLAINTEXT listeners). */
  sasl?: SaslOptions;
}

export type Acks = -1 | 0 | 1;

export interface ProducerConfig {
  bootstrapServers: string | readonly string[];
  clientId: string;
  acks: Acks;
  batchSize: number;
  lingerMs: number;
  bufferMemory: number;
  maxBlockMs: number;
  maxRequestSize: number;
  compressionType: 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd';
  retries: number;
  retryBackoffMs: number;
  retryBackoffMaxMs: number;
  deliveryTimeoutMs: number;
  requestTimeoutMs: number;
  maxInFlight: number;
  idempotence: boolean;
  metadataMaxAgeMs: number;
  /** null: not transactional. */
  transactionalId: string | null;
  transactionTimeoutMs: number;
  partitioner: string | Partitioner;
  ignoreKeys: boolean;
}

/** The Java client's defaults (Kafka 3.8). */
export const PRODUCER_DEFAULTS = {
  'client.id': '',
  acks: 'all',
  'batch.size': 16384,
  'linger.ms': 0,
  'buffer.memory': 33554432,
  'max.block.ms': 60000,
  'max.request.size': 1048576,
  'compression.type': 'none',
  retries: 2147483647,
  'retry.backoff.ms': 100,
  'retry.backoff.max.ms': 1000,
  'delivery.timeout.ms': 120000,
  'request.timeout.ms': 30000,
  'max.in.flight.requests.per.connection': 5,
  'enable.idempotence': true,
  'metadata.max.age.ms': 300000,
  'transactional.id': null,
  'transaction.timeout.ms': 60000,
  'partitioner.class': 'default',
  'partitioner.ignore.keys': false,
} as const;

let clientSeq = 0;

function configError(msg: string): KafkaError {
  return new KafkaError('INVALID_CONFIG', msg);
}

function int(input: Record<string, unknown>, name: keyof typeof PRODUCER_DEFAULTS, min = 0): number {
  const raw = input[name] ?? PRODUCER_DEFAULTS[name];
  const n = typeof raw === 'number' ? raw : Number(String(raw).trim());
  if (!Number.isInteger(n) || n < min) throw configError(`Invalid value ${String(raw)} for configuration ${name}: must be an integer >= ${min}`);
  return n;
}

function bool(input: Record<string, unknown>, name: keyof typeof PRODUCER_DEFAULTS, explicit: Set<string>): boolean {
  const raw = input[name] ?? PRODUCER_DEFAULTS[name];
  if (raw === true || raw === 'true') return true;
  if (raw === false || raw === 'false') return false;
  explicit.delete(name);
  throw configError(`Invalid value ${String(raw)} for configuration ${name}: Expected value to be either true or false`);
}

/** Validates and resolves a config, applying Kafka's defaults and its idempotence constraints. */
export function resolveProducerConfig(input: ProducerConfigInput): ProducerConfig {
  const rec = input as unknown as Record<string, unknown>;
  if (!input['bootstrap.servers'] || input['bootstrap.servers'].length === 0)
    throw configError('Missing required configuration "bootstrap.servers" which has no default value.');
  const explicit = new Set(Object.keys(rec).filter((k) => rec[k] !== undefined));
  const acksRaw = String(input.acks ?? PRODUCER_DEFAULTS.acks).trim();
  const acks = acksRaw === 'all' || acksRaw === '-1' ? -1 : acksRaw === '0' ? 0 : acksRaw === '1' ? 1 : undefined;
  if (acks === undefined) throw configError(`Invalid value ${acksRaw} for configuration acks: String must be one of: all, -1, 0, 1`);
  const compression = String(input['compression.type'] ?? PRODUCER_DEFAULTS['compression.type']).toLowerCase();
  if (!['none', 'gzip', 'snappy', 'lz4', 'zstd'].includes(compression))
    throw configError(`Invalid value ${compression} for configuration compression.type: String must be one of: none, gzip, snappy, lz4, zstd`);
  const maxInFlight = int(rec, 'max.in.flight.requests.per.connection', 1);
  const retries = int(rec, 'retries');
  let idempotence = bool(rec, 'enable.idempotence', explicit);
  // Kafka: idempotence is on by default but silently off when a conflicting setting was given
  // explicitly; an explicit enable.idempotence=true with a conflict is an error.
  const conflict =
    maxInFlight > 5
      ? 'max.in.flight.requests.per.connection must be set to at most 5'
      : retries === 0
        ? 'retries must be greater than 0'
        : acks !== -1
          ? 'acks must be set to all'
          : null;
  const transactionalId = input['transactional.id'] === undefined || input['transactional.id'] === null ? null : String(input['transactional.id']);
  if (transactionalId !== null) {
    // Kafka: a transactional.id requires idempotence (and its constraints), whether or not it was asked for
    if (transactionalId === '') throw configError('Invalid value for configuration transactional.id: must not be empty');
    if (!idempotence) throw configError('Cannot set a transactional.id without also enabling idempotence.');
    if (conflict) throw configError(`To use the idempotent producer, ${conflict}.`);
  }
  if (idempotence && conflict) {
    if (explicit.has('enable.idempotence')) throw configError(`To use the idempotent producer, ${conflict}.`);
    idempotence = false;
  }
  const deliveryTimeoutMs = int(rec, 'delivery.timeout.ms');
  const lingerMs = int(rec, 'linger.ms');
  const requestTimeoutMs = int(rec, 'request.timeout.ms');
  if (deliveryTimeoutMs < lingerMs + requestTimeoutMs) {
    if (explicit.has('delivery.timeout.ms')) throw configError(`delivery.timeout.ms should be equal to or larger than linger.ms + request.timeout.ms`);
  }
  return {
    bootstrapServers: input['bootstrap.servers'],
    clientId: input['client.id'] || `producer-${++clientSeq}`,
    acks,
    batchSize: int(rec, 'batch.size'),
    lingerMs,
    bufferMemory: int(rec, 'buffer.memory'),
    maxBlockMs: int(rec, 'max.block.ms'),
    maxRequestSize: int(rec, 'max.request.size', 1),
    compressionType: compression as ProducerConfig['compressionType'],
    retries,
    retryBackoffMs: int(rec, 'retry.backoff.ms'),
    retryBackoffMaxMs: int(rec, 'retry.backoff.max.ms'),
    deliveryTimeoutMs: Math.max(deliveryTimeoutMs, explicit.has('delivery.timeout.ms') ? 0 : lingerMs + requestTimeoutMs),
    requestTimeoutMs,
    maxInFlight,
    idempotence,
    metadataMaxAgeMs: int(rec, 'metadata.max.age.ms'),
    transactionalId,
    transactionTimeoutMs: int(rec, 'transaction.timeout.ms', 1),
    partitioner: input['partitioner.class'] ?? PRODUCER_DEFAULTS['partitioner.class'],
    ignoreKeys: bool(rec, 'partitioner.ignore.keys', explicit),
  };
}
