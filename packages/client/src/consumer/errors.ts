import { KafkaError, topicPartitionKey } from '@samsa/protocol';
import { type TopicPartition } from './types.js';

/** Kafka's CommitFailedException: the generation moved on (rebalance, member fenced); `cause` is the broker's error. */
export class CommitFailedError extends KafkaError {
  constructor(code: number, reason: string, options?: { cause?: unknown }) {
    super(
      code,
      `Commit cannot be completed since the group has already rebalanced and assigned the partitions to another member (${reason}). This means that the time between subsequent calls to poll() was longer than the configured max.poll.interval.ms, which typically implies that the poll loop is spending too much time message processing. You can address this either by increasing max.poll.interval.ms or by reducing the maximum size of batches returned in poll() with max.poll.records.`,
      options,
    );
    this.name = 'CommitFailedError';
  }
}

/** Kafka's NoOffsetForPartitionException: no committed offset and auto.offset.reset=none. */
export class NoOffsetForPartitionError extends KafkaError {
  readonly partitions: TopicPartition[];
  constructor(partitions: TopicPartition[]) {
    super('OFFSET_OUT_OF_RANGE', `Undefined offset with no reset policy for partitions: [${partitions.map(topicPartitionKey).join(', ')}]`);
    this.name = 'NoOffsetForPartitionError';
    this.partitions = partitions;
  }
}

/** Kafka's OffsetOutOfRangeException: the fetch position is outside the log and auto.offset.reset=none. */
export class OffsetOutOfRangeError extends KafkaError {
  readonly offsets: Map<string, bigint>;
  constructor(offsets: Map<string, bigint>) {
    super(
      'OFFSET_OUT_OF_RANGE',
      `Fetch position out of range, no configured reset policy for partitions: {${[...offsets].map(([k, o]) => `${k}=${o}`).join(', ')}}`,
    );
    this.name = 'OffsetOutOfRangeError';
    this.offsets = offsets;
  }
}
