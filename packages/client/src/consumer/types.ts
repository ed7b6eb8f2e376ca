import type { TopicPartition } from './assignors/types.js';

export type { TopicPartition };

/** Kafka's Deserializer: bytes (or null) of one record's key or value to a value. */
export interface Deserializer<T> {
  deserialize(topic: string, data: Buffer | null): T;
}

export const bufferDeserializer: Deserializer<Buffer | null> = { deserialize: (_t, d) => d };
export const stringDeserializer: Deserializer<string | null> = { deserialize: (_t, d) => (d === null ? null : d.toString('utf8')) };

export interface ConsumerRecordHeader {
  key: string;
  value: Buffer | null;
}

/** Kafka's ConsumerRecord. */
export interface ConsumerRecord<K, V> {
  topic: string;
  partition: number;
  offset: bigint;
  /** ms since the epoch. */
  timestamp: number;
  timestampType: 'CreateTime' | 'LogAppendTime';
  key: K;
  value: V;
  headers: ConsumerRecordHeader[];
  /** Leader epoch of the batch, -1 when unknown. */
  leaderEpoch: number;
  serializedKeySize: number;
  serializedValueSize: number;
}

/** Kafka's OffsetAndMetadata. */
export interface OffsetAndMetadata {
  offset: bigint;
  /** -1 when unknown. */
  leaderEpoch: number;
  metadata: string;
}

/**
 * Kafka's ConsumerRebalanceListener. `onPartitionsRevoked` runs before a rebalance (eager: every
 * owned partition; cooperative: only those moving away) and before close; `onPartitionsAssigned`
 * after SyncGroup with the partitions added; `onPartitionsLost` when the member lost its
 * generation (session timeout, fencing) and the partitions may already belong to someone else.
 * They run inside poll() (or close()) and may call commitSync, seek, position.
 */
export interface ConsumerRebalanceListener {
  onPartitionsRevoked?(partitions: TopicPartition[]): void | Promise<void>;
  onPartitionsAssigned?(partitions: TopicPartition[]): void | Promise<void>;
  onPartitionsLost?(partitions: TopicPartition[]): void | Promise<void>;
}
