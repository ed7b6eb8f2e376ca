import type { ProducerRecord, RecordMetadata } from './types.js';
import { InterceptorChainBase } from '../interceptor-chain.js';

/**
 * Kafka's ProducerInterceptor: `onSend` runs before the key and value are serialized and the
 * partition chosen (it may return a modified record); `onAcknowledgement` runs when the record is
 * acknowledged or fails, before the send() promise settles. Interceptors form a chain in order;
 * an interceptor that throws is logged and skipped, as in Kafka.
 */
export interface ProducerInterceptor<K, V> {
  onSend?(record: ProducerRecord<K, V>): ProducerRecord<K, V>;
  onAcknowledgement?(metadata: RecordMetadata | null, error: Error | null): void;
  close?(): void;
}

export class InterceptorChain<K, V> extends InterceptorChainBase<ProducerInterceptor<K, V>> {
  onSend(record: ProducerRecord<K, V>): ProducerRecord<K, V> {
    return this.pipe(record, 'onSend', (i, r) => (i.onSend ? i.onSend(r) : r));
  }

  onAcknowledgement(metadata: RecordMetadata | null, error: Error | null): void {
    this.each('onAcknowledgement', (i) => i.onAcknowledgement?.(metadata, error));
  }
}
