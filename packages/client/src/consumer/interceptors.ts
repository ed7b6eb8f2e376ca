import type { ConsumerRecord, OffsetAndMetadata, TopicPartition } from './types.js';

/**
 * Kafka's ConsumerInterceptor: `onConsume` sees the records poll() is about to return (it may
 * return other records), `onCommit` the offsets of each successful commit. Interceptors form a
 * chain in order; one that throws is logged and skipped, as in Kafka.
 */
export interface ConsumerInterceptor<K, V> {
  onConsume?(records: ConsumerRecord<K, V>[]): ConsumerRecord<K, V>[];
  onCommit?(offsets: Map<TopicPartition, OffsetAndMetadata>): void;
  close?(): void;
}

export class ConsumerInterceptorChain<K, V> {
  constructor(
    private readonly interceptors: readonly ConsumerInterceptor<K, V>[],
    private readonly onError: (err: unknown, phase: string) => void,
  ) {}

  get empty(): boolean {
    return this.interceptors.length === 0;
  }

  onConsume(records: ConsumerRecord<K, V>[]): ConsumerRecord<K, V>[] {
    let r = records;
    for (const i of this.interceptors) {
      if (!i.onConsume) continue;
      try {
        r = i.onConsume(r);
      } catch (err) {
        this.onError(err, 'onConsume');
      }
    }
    return r;
  }

  onCommit(offsets: Map<TopicPartition, OffsetAndMetadata>): void {
    for (const i of this.interceptors) {
      try {
        i.onCommit?.(offsets);
      } catch (err) {
        this.onError(err, 'onCommit');
      }
    }
  }

  close(): void {
    for (const i of this.interceptors) {
      try {
        i.close?.();
      } catch (err) {
        this.onError(err, 'close');
      }
    }
  }
}
