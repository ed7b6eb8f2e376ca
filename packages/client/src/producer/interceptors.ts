import type { ProducerRecord, RecordMetadata } from './types.js';

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

export class InterceptorChain<K, V> {
  constructor(
    private readonly interceptors: readonly ProducerInterceptor<K, V>[],
    private readonly onError: (err: unknown, phase: string) => void,
  ) {}

  get empty(): boolean {
    return this.interceptors.length === 0;
  }

  onSend(record: ProducerRecord<K, V>): ProducerRecord<K, V> {
    let r = record;
    for (const i of this.interceptors) {
      if (!i.onSend) continue;
      try {
        r = i.onSend(r);
      } catch (err) {
        this.onError(err, 'onSend');
      }
    }
    return r;
  }

  onAcknowledgement(metadata: RecordMetadata | null, error: Error | null): void {
    for (const i of this.interceptors) {
      try {
        i.onAcknowledgement?.(metadata, error);
      } catch (err) {
        this.onError(err, 'onAcknowledgement');
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
