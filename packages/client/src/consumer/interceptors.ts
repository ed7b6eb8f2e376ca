import type { ConsumerRecord, OffsetAndMetadata, TopicPartition } from './types.js';
import { InterceptorChainBase } from '../interceptor-chain.js';

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

export class ConsumerInterceptorChain<K, V> extends InterceptorChainBase<ConsumerInterceptor<K, V>> {
  onConsume(records: ConsumerRecord<K, V>[]): ConsumerRecord<K, V>[] {
    return this.pipe(records, 'onConsume', (i, r) => (i.onConsume ? i.onConsume(r) : r));
  }

  onCommit(offsets: Map<TopicPartition, OffsetAndMetadata>): void {
    this.each('onCommit', (i) => i.onCommit?.(offsets));
  }
}
