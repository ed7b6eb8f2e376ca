/**
 * The Sender (Kafka's background I/O thread, here a task on the event loop): drains sendable
 * batches per leader (one batch per partition per Produce request, up to
 * max.in.flight.requests.per.connection requests per broker), handles the responses — success,
 * retries with retry.backoff.ms in sequence order, metadata refreshes on stale leaders, the
 * idempotent producer's sequence errors — and expires batches after delivery.timeout.ms.
 */
import { API_KEYS, ErrorCode, errorName, isRetriable, KafkaError, topicPartitionKey, type ProduceRequestTopic, type ProduceResponse } from '@samsa/protocol';
import type { Cluster } from '../cluster.js';
import type { Connection } from '../connection.js';
import type { Logger } from '../logger.js';
import type { RecordAccumulator } from './accumulator.js';
import type { ProducerBatch } from './batch.js';
import type { ProducerConfig } from './config.js';
import type { ProducerMetadata } from './metadata.js';
import type { IdempotenceManager } from './idempotence.js';
import { TransactionAbortedError, type TransactionManager } from './transaction-manager.js';

const STALE_METADATA_ERRORS = new Set<number>([
  ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  ErrorCode.LEADER_NOT_AVAILABLE,
  ErrorCode.FENCED_LEADER_EPOCH,
  ErrorCode.KAFKA_STORAGE_ERROR,
  ErrorCode.NETWORK_EXCEPTION,
  ErrorCode.REQUEST_TIMED_OUT,
]);

export class Sender {
  private scheduled = false;
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  private readonly nodeInFlight = new Map<number, number>();
  /** Batches sent and not yet answered (all nodes). */
  private inFlightBatches = 0;
  private initializing = false;
  private afterResponseScheduled = false;
  /** Settles of batches acknowledged by the responses being handled (run by afterResponse). */
  private acknowledged: Array<() => void> = [];
  private refreshing = false;
  /** Connections corked by the current runOnce (uncorked at its end). */
  private readonly corked: Connection[] = [];
  running = true;
  /** Called when the last queued/in-flight batch is done (flush waits on it). */
  onIdle: () => void = () => undefined;
  fatalError: Error | undefined;

  constructor(
    private readonly cfg: ProducerConfig,
    private readonly cluster: Cluster,
    private readonly metadata: ProducerMetadata,
    private readonly accumulator: RecordAccumulator,
    private readonly idempotence: IdempotenceManager | undefined,
    private readonly log: Logger,
    /** A transactional producer's transaction manager (with `idempotence`). */
    private readonly transactions?: TransactionManager,
  ) {
    accumulator.onReady = () => this.wakeup();
  }

  get idle(): boolean {
    return this.inFlightBatches === 0 && this.acknowledged.length === 0 && !this.accumulator.hasUndrained();
  }

  /** Schedules a run on the next turn of the event loop (appends made meanwhile join batches). */
  wakeup(): void {
    if (this.scheduled || !this.running) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.runOnce();
    });
  }

  private wakeupAt(delayMs: number): void {
    const at = Date.now() + delayMs;
    if (this.timer && this.timerAt <= at) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.timerAt = Infinity;
      this.wakeup();
    }, delayMs);
  }

  stop(): void {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
  }

  runOnce(): void {
    if (!this.running) return;
    const now = Date.now();
    this.expireBatches(now);
    if (this.metadata.needsUpdate && !this.refreshing) {
      this.refreshing = true;
      this.metadata
        .refresh()
        .catch(() => undefined)
        .finally(() => {
          this.refreshing = false;
          this.wakeupAt(this.metadata.needsUpdate ? this.cfg.retryBackoffMs : 0);
        });
    }
    const idem = this.idempotence;
    const tm = this.transactions;
    if (tm && idem) {
      // Kafka: a bump in a transaction is an abortable error; the abort runs InitProducerId
      if (idem.bumpRequested && idem.producerId >= 0n) tm.onEpochBumpNeeded();
      if (tm.hasError || tm.isAborting) {
        // what was not sent yet is dropped (retries too when the epoch changes or the producer is done)
        const err = tm.lastError && tm.hasError ? tm.lastError : new TransactionAbortedError();
        if (this.accumulator.abortUndrained(err, idem.bumpRequested || tm.hasFatalError)) tm.onEpochBumpNeeded();
      }
      if (tm.hasFatalError || !idem.hasProducerId) {
        if (this.idle) this.onIdle();
        return;
      }
      tm.addPendingPartitions();
    } else if (idem && !idem.hasProducerId) {
      // bump / first id: only once nothing is in flight (sequences restart from 0)
      if (idem.totalInFlight === 0 && !this.initializing) this.initProducerId();
      return;
    }
    // Like the Java sender's loop (a drain, then a poll with no wait while more is ready): drain
    // again while a round sent something, so a node gets up to max.in.flight requests at once
    // rather than one per turn of the event loop.
    let nextCheck = Infinity;
    try {
      for (let sent = true; sent;) {
        sent = false;
        nextCheck = Infinity;
        for (const [node, chosen] of this.drain(now, idem, (t) => (nextCheck = Math.min(nextCheck, t)))) {
          this.send(node, chosen);
          sent = true;
        }
      }
    } finally {
      // the requests this run wrote to a connection leave together, before anything else runs
      for (const c of this.corked) c.uncork();
      this.corked.length = 0;
    }
    if (nextCheck < Infinity) this.wakeupAt(Math.max(1, nextCheck));
    if (this.idle) this.onIdle();
  }

  /**
   * One drain: for each node with room for another request, its sendable partitions' first batches
   * (one per partition, up to max.request.size), taken off their queues and given sequences.
   * `later(ms)` is told when a batch becomes sendable by time.
   */
  private drain(now: number, idem: IdempotenceManager | undefined, later: (ms: number) => void): Array<[number, ProducerBatch[]]> {
    const out: Array<[number, ProducerBatch[]]> = [];
    // per node (a short list searched in place: no Map per drain)
    const perNode: Array<[number, ProducerBatch[]]> = [];
    for (const q of this.accumulator.allQueues()) {
      const batch = q.batches[0];
      if (!batch) continue;
      // a transaction's partition is sent to once AddPartitionsToTxn added it
      if (this.transactions && !this.transactions.isPartitionAdded(q.topic, q.partition)) continue;
      if (!this.accumulator.isSendable(q, batch, now)) {
        later(this.accumulator.waitTime(batch, now));
        continue;
      }
      const leader = this.metadata.leaderFor(q.topic, q.partition);
      if (leader < 0) {
        this.metadata.requestUpdate();
        later(this.cfg.retryBackoffMs);
        continue;
      }
      if (idem) {
        const inflight = idem.inFlightFor(q.topic, q.partition);
        // retries go one at a time, in sequence order; new batches up to 5 in flight — but only one
        // until the partition acknowledged a first batch, so a broker never sees sequence n > 0
        // from a producer it does not know yet while the batch with sequence 0 may still fail
        const limit = idem.hasAcked(q.topic, q.partition) ? 5 : 1;
        if (
          inflight.length >= limit ||
          (batch.hasSequence && batch.producerEpoch === idem.producerEpoch && batch.producerId === idem.producerId && inflight.length > 0)
        )
          continue;
      }
      let entry: [number, ProducerBatch[]] | undefined;
      for (const e of perNode) if (e[0] === leader) entry = e;
      if (!entry) perNode.push((entry = [leader, []]));
      entry[1].push(batch);
    }
    for (const [node, batches] of perNode) {
      if ((this.nodeInFlight.get(node) ?? 0) >= this.cfg.maxInFlight) continue;
      const chosen: ProducerBatch[] = [];
      let size = 0;
      for (const b of batches) {
        const bytes = b.seal();
        if (chosen.length > 0 && size + bytes.length > this.cfg.maxRequestSize) break;
        size += bytes.length;
        chosen.push(b);
      }
      for (const b of chosen) {
        const q = this.accumulator.queue(b.topic, b.partition);
        q.batches.shift();
        b.queued = false;
        if (idem) {
          idem.assignSequence(b);
          idem.addInFlight(b);
        }
        b.inFlight = true;
        b.attempts++;
        b.lastAttemptMs = now;
      }
      out.push([node, chosen]);
    }
    return out;
  }

  private initProducerId(): void {
    this.initializing = true;
    this.idempotence!.initProducerId(this.cluster, this.cfg.maxBlockMs)
      .then(
        () => this.log.info({ producerId: String(this.idempotence!.producerId), epoch: this.idempotence!.producerEpoch }, 'producer id assigned'),
        (err: unknown) => {
          this.log.warn({ err: (err as Error).message }, 'InitProducerId failed');
          this.wakeupAt(this.cfg.retryBackoffMs);
        },
      )
      .finally(() => {
        this.initializing = false;
        this.wakeup();
      });
  }

  private send(node: number, batches: ProducerBatch[]): void {
    this.nodeInFlight.set(node, (this.nodeInFlight.get(node) ?? 0) + 1);
    this.inFlightBatches += batches.length;
    const topicData: ProduceRequestTopic[] = [];
    // the sealed batches go out by reference (no copy into the frame): they stay untouched until
    // the response, and go back to the pool only after it
    const byReference: Buffer[] = [];
    for (const b of batches) {
      let t: ProduceRequestTopic | undefined;
      for (const x of topicData) if (x.name === b.topic) t = x;
      if (!t) topicData.push((t = { name: b.topic, partitionData: [] }));
      const records = b.wireBytes();
      t.partitionData.push({ index: b.partition, records });
      byReference.push(records);
    }
    const body = { transactionalId: this.transactions?.transactionalId ?? null, acks: this.cfg.acks, timeoutMs: this.cfg.requestTimeoutMs, topicData };
    const opts = { minVersion: 3, timeoutMs: this.cfg.requestTimeoutMs, byReference };
    const failed = (err: unknown): void => {
      // the whole request failed: lost connection, timeout, unknown broker
      this.metadata.requestUpdate(node);
      const e = err instanceof Error ? err : new Error(String(err));
      const code = err instanceof KafkaError ? err.code : ErrorCode.NETWORK_EXCEPTION;
      this.log.debug({ node, err: e.message }, 'produce request failed');
      for (const b of batches) this.handleError(b, code, e, node);
    };
    const done = (): void => {
      this.nodeInFlight.set(node, (this.nodeInFlight.get(node) ?? 1) - 1);
      this.inFlightBatches -= batches.length;
      this.afterResponse();
    };
    const failedAndDone = (err: unknown): void => {
      failed(err);
      done();
    };
    const issue = (conn: Connection): void => {
      if (this.cfg.acks === 0) {
        conn.sendOneWay(API_KEYS.Produce, body, opts).then(() => {
          for (const b of batches) this.finish(b, () => b.complete(-1n, -1));
          done();
        }, failedAndDone);
        return;
      }
      // a callback, not a promise, per request: the sender keeps up to max.in.flight of them
      conn.sendWithCallback(API_KEYS.Produce, body, opts, (err, res) => {
        try {
          if (err === null) this.handleResponse(node, batches, res!);
          else failed(err);
        } catch (e) {
          this.log.error({ node, err: (e as Error).message }, 'handling a produce response failed');
        }
        done();
      });
    };
    // an open connection is written to now, before the callbacks of what was just acknowledged
    const ready = this.cluster.readyConnection(node);
    if (!ready) {
      this.cluster.connectionTo(node).then(issue, failedAndDone);
      return;
    }
    if (!this.corked.includes(ready)) {
      ready.cork();
      this.corked.push(ready);
    }
    issue(ready);
  }

  /**
   * After the responses that arrived together are handled (a nextTick runs once the promise
   * reactions are done): first the next drain, written out at once, so the broker has work while
   * this process runs the acknowledged records' callbacks; then those callbacks, in order.
   */
  private afterResponse(): void {
    if (this.afterResponseScheduled) return;
    this.afterResponseScheduled = true;
    process.nextTick(() => {
      this.afterResponseScheduled = false;
      this.runOnce();
      const settle = this.acknowledged;
      this.acknowledged = [];
      for (const f of settle) f();
      if (settle.length > 0 && this.idle) this.onIdle();
    });
  }

  private handleResponse(node: number, batches: ProducerBatch[], res: ProduceResponse): void {
    const index = batches.length > 16 ? indexResponse(res) : undefined;
    for (const b of batches) {
      const p = index ? index.get(b.topic)?.get(b.partition) : partitionResponse(res, b.topic, b.partition);
      if (!p) {
        this.handleError(
          b,
          ErrorCode.UNKNOWN_SERVER_ERROR,
          new KafkaError('UNKNOWN_SERVER_ERROR', `Broker ${node} did not answer for ${topicPartitionKey(b)}`),
        );
        continue;
      }
      if (p.errorCode === ErrorCode.NONE || p.errorCode === ErrorCode.DUPLICATE_SEQUENCE_NUMBER) {
        if (p.errorCode !== 0) this.log.debug({ topic: b.topic, partition: b.partition, sequence: b.baseSequence }, 'duplicate batch acknowledged');
        this.finish(b, () => b.complete(p.baseOffset, Number(p.logAppendTimeMs)), true);
        continue;
      }
      this.handleError(b, p.errorCode, new KafkaError(p.errorCode, p.errorMessage ?? `${errorName(p.errorCode)} producing to ${topicPartitionKey(b)}`), node);
    }
  }

  private handleError(b: ProducerBatch, code: number, err: Error, node?: number): void {
    const idem = this.idempotence;
    const now = Date.now();
    if (STALE_METADATA_ERRORS.has(code)) this.metadata.requestUpdate(node);
    let retry = isRetriable(code) || code === ErrorCode.NETWORK_EXCEPTION;
    if (idem && b.hasSequence) {
      if (code === ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER) {
        // an earlier batch is unresolved: this one was refused because of it, send it again
        retry = !idem.isNextExpected(b);
        if (!retry) idem.requestBump();
      } else if (code === ErrorCode.UNKNOWN_PRODUCER_ID) {
        // the broker lost our state: safe to resend under a new epoch when nothing earlier is pending
        retry = true;
        if (idem.isNextExpected(b)) idem.requestBump();
      }
    }
    const expired = now - b.createdMs >= this.cfg.deliveryTimeoutMs;
    if (retry && b.attempts <= this.cfg.retries && !expired && this.running) {
      if (idem) idem.removeInFlight(b);
      this.log.debug({ topic: b.topic, partition: b.partition, attempt: b.attempts, error: errorName(code) }, 'retrying batch');
      this.accumulator.reenqueue(b, now, this.backoff(b.attempts));
      return;
    }
    if (idem && b.hasSequence && code !== ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER) idem.requestBump();
    this.transactions?.onBatchFailed(err);
    this.finish(b, () => b.fail(err));
  }

  private finish(b: ProducerBatch, settle: () => void, acked = false): void {
    if (this.idempotence) {
      this.idempotence.removeInFlight(b);
      if (acked && b.hasSequence) this.idempotence.acked(b);
    }
    b.inFlight = false;
    this.accumulator.deallocate(b);
    // an acknowledged batch's callbacks run after the next drain is written (afterResponse)
    if (acked) this.acknowledged.push(settle);
    else settle();
  }

  private backoff(attempt: number): number {
    const base = Math.min(this.cfg.retryBackoffMaxMs, this.cfg.retryBackoffMs * 2 ** (attempt - 1));
    return Math.round(base * (0.8 + Math.random() * 0.4));
  }

  /** Fails queued batches older than delivery.timeout.ms. */
  private expireBatches(now: number): void {
    for (const q of this.accumulator.allQueues()) {
      while (q.batches.length > 0) {
        const b = q.batches[0]!;
        if (now - b.createdMs < this.cfg.deliveryTimeoutMs) break;
        q.batches.shift();
        b.queued = false;
        if (this.idempotence && b.hasSequence) this.idempotence.requestBump();
        const err = new KafkaError(
          'REQUEST_TIMED_OUT',
          `Expiring ${b.recordCount} record(s) for ${topicPartitionKey(b)}:${now - b.createdMs} ms has passed since batch creation`,
        );
        this.transactions?.onBatchFailed(err);
        this.finish(b, () => b.fail(err));
      }
    }
  }
}

type PartitionResponse = ProduceResponse['responses'][number]['partitionResponses'][number];

/** The answers by topic and partition (requests for many partitions). */
function indexResponse(res: ProduceResponse): Map<string, Map<number, PartitionResponse>> {
  const index = new Map<string, Map<number, PartitionResponse>>();
  for (const t of res.responses) {
    let m = index.get(t.name);
    if (!m) index.set(t.name, (m = new Map()));
    for (const p of t.partitionResponses) m.set(p.index, p);
  }
  return index;
}

/**
 * The answer for one partition: a scan (a request holds one batch per partition, most often of
 * one topic; no map or key strings per response).
 */
function partitionResponse(res: ProduceResponse, topic: string, partition: number): PartitionResponse | undefined {
  for (const t of res.responses) {
    if (t.name !== topic) continue;
    for (const p of t.partitionResponses) if (p.index === partition) return p;
  }
  return undefined;
}
