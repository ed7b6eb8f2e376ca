/**
 * Idempotent-producer state (the non-transactional part of Kafka's TransactionManager): the
 * producer id and epoch from InitProducerId, the next sequence per partition, the last acknowledged
 * sequence/offset per partition and the batches in flight per partition (kept in sequence order so
 * retries go out in order). An epoch bump (new producer id/epoch, sequences back to 0) is requested
 * after a sequence gap the broker reports (OUT_OF_ORDER_SEQUENCE_NUMBER for the next expected batch),
 * UNKNOWN_PRODUCER_ID, or an expired batch whose outcome is unknown; it runs once nothing is in flight.
 */
import { API_KEYS, KafkaError, incrementSequence } from '@samsa/protocol';
import type { Cluster } from '../cluster.js';
import type { ProducerBatch } from './batch.js';

const tpKey = (topic: string, partition: number) => `${topic}\u0000${partition}`;

export class IdempotenceManager {
  producerId = -1n;
  producerEpoch = -1;
  /** A new producer id / epoch is needed before more batches are sent. */
  bumpRequested = true;
  private readonly nextSeq = new Map<string, number>();
  private readonly lastAcked = new Map<string, number>();
  private readonly inFlight = new Map<string, ProducerBatch[]>();
  private inFlightTotal = 0;

  get hasProducerId(): boolean {
    return this.producerId >= 0n && !this.bumpRequested;
  }

  get totalInFlight(): number {
    return this.inFlightTotal;
  }

  inFlightFor(topic: string, partition: number): readonly ProducerBatch[] {
    return this.inFlight.get(tpKey(topic, partition)) ?? [];
  }

  /** InitProducerId (idempotent: no transactional id), to the least loaded broker, with retries. */
  async initProducerId(cluster: Cluster, timeoutMs: number): Promise<void> {
    const res = await cluster.retry(
      'InitProducerId',
      async () => {
        const conn = await cluster.anyConnection();
        const body = await conn.send(API_KEYS.InitProducerId, { transactionalId: null, transactionTimeoutMs: 60000, producerId: -1n, producerEpoch: -1 });
        if (body.errorCode !== 0) throw new KafkaError(body.errorCode, `InitProducerId failed`);
        return body;
      },
      { timeoutMs },
    );
    this.setProducerIdAndEpoch(res.producerId, res.producerEpoch);
  }

  /** A new producer id / epoch (InitProducerId answered): sequences start again from 0. */
  setProducerIdAndEpoch(producerId: bigint, epoch: number): void {
    this.producerId = producerId;
    this.producerEpoch = epoch;
    this.nextSeq.clear();
    this.lastAcked.clear();
    this.bumpRequested = false;
  }

  /** Stamps a batch leaving for the first time (or first after an epoch bump). */
  assignSequence(batch: ProducerBatch): void {
    const k = tpKey(batch.topic, batch.partition);
    if (!batch.hasSequence || batch.producerId !== this.producerId || batch.producerEpoch !== this.producerEpoch) {
      const seq = this.nextSeq.get(k) ?? 0;
      batch.setProducerState(this.producerId, this.producerEpoch, seq);
      this.nextSeq.set(k, incrementSequence(seq, batch.recordCount));
    }
  }

  addInFlight(batch: ProducerBatch): void {
    const k = tpKey(batch.topic, batch.partition);
    let list = this.inFlight.get(k);
    if (!list) this.inFlight.set(k, (list = []));
    let i = list.length;
    while (i > 0 && list[i - 1]!.baseSequence > batch.baseSequence) i--;
    list.splice(i, 0, batch);
    this.inFlightTotal++;
  }

  removeInFlight(batch: ProducerBatch): void {
    const list = this.inFlight.get(tpKey(batch.topic, batch.partition));
    const i = list ? list.indexOf(batch) : -1;
    if (i >= 0) {
      list!.splice(i, 1);
      this.inFlightTotal--;
    }
  }

  acked(batch: ProducerBatch): void {
    const k = tpKey(batch.topic, batch.partition);
    const last = batch.baseSequence + batch.recordCount - 1;
    if ((this.lastAcked.get(k) ?? -1) < last) this.lastAcked.set(k, last);
  }

  /** Whether `batch` is the next one the broker expects (all earlier sequences acknowledged). */
  isNextExpected(batch: ProducerBatch): boolean {
    return batch.baseSequence === (this.lastAcked.get(tpKey(batch.topic, batch.partition)) ?? -1) + 1;
  }

  /** Whether some batch of the partition was acknowledged under the current producer id/epoch. */
  hasAcked(topic: string, partition: number): boolean {
    return this.lastAcked.has(tpKey(topic, partition));
  }

  requestBump(): void {
    this.bumpRequested = true;
  }
}
