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

/**
 * Kafka's Callback interface: `onCompletion(metadata, null)` once acknowledged, `(null, exception)`
 * when the record failed. For senders of many records an object of a class (the Java perf test's
 * PerfCallback) is smaller than a closure and the context it captures: what is held per record
 * until its batch is answered.
 */
export interface Callback {
  onCompletion(metadata: RecordMetadata | null, exception: Error | null): void;
}

/** What send() takes as a callback: a function or a Callback object. */
export type Completion = SendCallback | Callback;

/** Calls a send()'s callback in whichever form it was given. */
export function notify(cb: Completion, error: Error | null, metadata: RecordMetadata | null): void {
  if (typeof cb === 'function') cb(error, metadata);
  else cb.onCompletion(metadata, error);
}
