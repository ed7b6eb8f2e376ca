export interface RecordHeaderInput {
  key: string;
  value: Buffer | string | null;
}

/** Kafka's ProducerRecord. */
export interface ProducerRecord<K = Buffer | string | null, V = Buffer | string | null> {
  topic: string;
  partition?: number | null;
  key?: K;
  value: V;
  headers?: readonly RecordHeaderInput[];
  /** Milliseconds since the epoch (CreateTime). Default: now. */
  timestamp?: number | null;
}

/** Kafka's RecordMetadata. offset -1 with acks=0. */
export interface RecordMetadata {
  topic: string;
  partition: number;
  offset: bigint;
  /** The record's timestamp, or the broker's append time on LogAppendTime topics. */
  timestamp: number;
  serializedKeySize: number;
  serializedValueSize: number;
}

export interface TopicPartitionInfo {
  partition: number;
  /** -1 when the partition has no leader. */
  leader: number;
  leaderEpoch: number;
}

/** Kafka's producer Callback: (null, metadata) once acknowledged, (error, null) when the record failed. */
export type SendCallback = (error: Error | null, metadata: RecordMetadata | null) => void;
