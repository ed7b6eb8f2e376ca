/**
 * RecordAccumulator: per-partition queues of ProducerBatches. `append` adds a record to the last
 * open batch of its partition or starts a new one with a buffer from the BufferPool (blocking up to
 * max.block.ms when buffer.memory is used up). A partition's first batch is ready to send when it
 * is full, when linger.ms has passed since it was created, when a flush or close is in progress, or
 * (for a retry) when its backoff has passed.
 */
import type { CompressionType } from '@samsa/protocol';
import { ProducerBatch, estimateRecordSize, type RecordHeaderBytes } from './batch.js';
import type { Completion } from './types.js';
import { BufferPool } from './buffer-pool.js';

export interface AccumulatorOptions {
  batchSize: number;
  lingerMs: number;
  bufferMemory: number;
  compression: CompressionType;
  maxBlockMs: number;
  /** Batches carry the transactional attribute (a transactional producer). */
  transactional?: boolean;
}

export interface PartitionQueue {
  topic: string;
  partition: number;
  batches: ProducerBatch[];
}

export type AppendResult = { batch: ProducerBatch; newBatch: boolean } | { abortForNewBatch: true };

export class RecordAccumulator {
  readonly pool: BufferPool;
  private readonly queues = new Map<string, PartitionQueue>();
  private readonly byTopic = new Map<string, PartitionQueue[]>();
  private flushes = 0;
  closing = false;
  /** Called when a batch became sendable (full or new batch): the sender should run. */
  onReady: () => void = () => undefined;

  constructor(readonly opts: AccumulatorOptions) {
    this.pool = new BufferPool(opts.bufferMemory, opts.batchSize);
  }

  queue(topic: string, partition: number): PartitionQueue {
    // by topic, then partition index: no key string built per record
    let forTopic = this.byTopic.get(topic);
    if (!forTopic) this.byTopic.set(topic, (forTopic = []));
    let q = forTopic[partition];
    if (!q) {
      q = { topic, partition, batches: [] };
      forTopic[partition] = q;
      this.queues.set(`${topic}\u0000${partition}`, q);
    }
    return q;
  }

  allQueues(): IterableIterator<PartitionQueue> {
    return this.queues.values();
  }

  /**
   * Appends a record. Synchronous when the record fits the open batch or memory is available; a
   * promise when it must wait for buffer memory. `abortOnNewBatch`: return `abortForNewBatch`
   * instead of starting a batch (sticky partitioning then picks another partition).
   */
  append(
    topic: string,
    partition: number,
    timestamp: number,
    key: Buffer | null,
    value: Buffer | null,
    headers: readonly RecordHeaderBytes[] | null,
    callback: Completion,
    abortOnNewBatch: boolean,
  ): AppendResult | Promise<AppendResult> {
    const q = this.queue(topic, partition);
    const last = q.batches[q.batches.length - 1];
    if (last && !last.bytes && last.tryAppend(timestamp, key, value, headers, callback)) {
      if (last.full) this.onReady();
      return last.appended;
    }
    if (last && !last.bytes) this.onReady(); // it just became full
    if (abortOnNewBatch) return { abortForNewBatch: true };
    const size = Math.max(this.opts.batchSize, estimateRecordSize(key, value, headers) + 61);
    const buf = this.pool.allocate(size, this.opts.maxBlockMs);
    const finish = (b: Buffer): AppendResult => {
      // another append may have opened a batch meanwhile
      const l = q.batches[q.batches.length - 1];
      if (l && !l.bytes && l.tryAppend(timestamp, key, value, headers, callback)) {
        this.pool.deallocate(b, size);
        return { batch: l, newBatch: false };
      }
      const batch = new ProducerBatch(topic, partition, b, this.opts.compression, Date.now(), this.opts.transactional ?? false);
      if (!batch.tryAppend(timestamp, key, value, headers, callback)) throw new Error('a record did not fit into a new batch sized for it');
      q.batches.push(batch);
      batch.queued = true;
      this.onReady();
      return { batch, newBatch: true };
    };
    return Buffer.isBuffer(buf) ? finish(buf) : (buf as Promise<Buffer>).then(finish);
  }

  /** Whether `batch` (the first of its queue) may be sent at `now`. */
  isSendable(q: PartitionQueue, batch: ProducerBatch, now: number): boolean {
    if (batch.retryBackoffUntil > now) return false;
    if (batch.attempts > 0) return true;
    return q.batches.length > 1 || batch.full || batch.bytes !== undefined || this.flushes > 0 || this.closing || now - batch.createdMs >= this.opts.lingerMs;
  }

  /** Milliseconds until `batch` becomes sendable by time (linger or backoff). */
  waitTime(batch: ProducerBatch, now: number): number {
    if (batch.attempts > 0) return Math.max(0, batch.retryBackoffUntil - now);
    return Math.max(0, batch.createdMs + this.opts.lingerMs - now);
  }

  beginFlush(): void {
    this.flushes++;
    this.onReady();
  }

  endFlush(): void {
    this.flushes--;
  }

  /** Releases a finished batch's memory and removes it from its queue (when still queued). */
  deallocate(batch: ProducerBatch): void {
    if (batch.queued) {
      const q = this.queue(batch.topic, batch.partition);
      const i = q.batches.indexOf(batch);
      if (i >= 0) q.batches.splice(i, 1);
      batch.queued = false;
    }
    this.pool.deallocate(batch.buffer);
  }

  /** Puts a batch to retry back in sequence order (idempotence: retries keep their sequence). */
  reenqueue(batch: ProducerBatch, now: number, backoffMs: number): void {
    batch.inFlight = false;
    batch.retryBackoffUntil = now + backoffMs;
    const q = this.queue(batch.topic, batch.partition);
    if (batch.queued) return;
    batch.queued = true;
    let i = 0;
    if (batch.hasSequence) {
      while (i < q.batches.length && q.batches[i]!.hasSequence && q.batches[i]!.baseSequence < batch.baseSequence) i++;
    }
    q.batches.splice(i, 0, batch);
  }

  /** Batches not yet finished (queued or in flight are tracked by the sender). */
  hasUndrained(): boolean {
    for (const q of this.queues.values()) if (q.batches.length > 0) return true;
    return false;
  }

  /**
   * Fails and drops the queued batches not sent yet (a transaction aborted or in error; Kafka's
   * abortUndrainedBatches). Batches put back to retry stay, unless `retriesToo`. Returns whether a
   * dropped batch had a sequence number (then the producer epoch must be bumped).
   */
  abortUndrained(err: Error, retriesToo = false): boolean {
    let sequenced = false;
    for (const q of this.queues.values()) {
      const keep: ProducerBatch[] = [];
      for (const b of q.batches) {
        if (b.inFlight || (b.attempts > 0 && !retriesToo)) {
          keep.push(b);
          continue;
        }
        if (b.hasSequence) sequenced = true;
        b.queued = false;
        b.fail(err);
        this.pool.deallocate(b.buffer);
      }
      q.batches = keep;
    }
    return sequenced;
  }

  /** Fails and drops every queued batch (close with timeout, fatal errors). */
  abortAll(err: Error): void {
    for (const q of this.queues.values()) {
      for (const b of q.batches.splice(0)) {
        b.queued = false;
        if (!b.inFlight) {
          b.fail(err);
          this.pool.deallocate(b.buffer);
        }
      }
    }
  }
}
