/**
 * Sends a completing transaction's markers to the leaders of its partitions and writes its
 * CompleteCommit/CompleteAbort once every partition has one (Kafka 3.x's
 * TransactionMarkerChannelManager with its TransactionMarkerRequestCompletionHandler). Markers
 * queue per destination broker (per `__transaction_state` partition, so that a resignation can drop
 * them); one WriteTxnMarkers request per broker is in flight at a time. Retriable errors, a failed
 * request and partitions without an available leader are retried after `retryBackoffMs`; a
 * partition that no longer exists (deleted topic) needs no marker; a changed coordinator epoch or
 * an unloaded partition drops the transaction (the next coordinator completes it).
 */
import type { Logger } from 'pino';
import { ErrorCode, errorName, topicPartitionKey, type TopicPartition } from '@samsa/protocol';
import type { TransactionMetadata, TxnTransitMetadata } from './transaction-metadata.js';
import type { TransactionResult, TransactionStateManager } from './transaction-state-manager.js';

/** One WriteTxnMarkers marker (Kafka's TxnMarkerEntry). */
export interface TxnMarkerEntry {
  producerId: bigint;
  producerEpoch: number;
  coordinatorEpoch: number;
  result: TransactionResult;
  partitions: TopicPartition[];
}

/** A marker's answer: an error code per partition (WriteTxnMarkersResponse's WritableTxnMarkerResult). */
export interface TxnMarkerResult {
  producerId: bigint;
  partitions: Array<{ topic: string; partition: number; errorCode: number }>;
}

/** Where a partition's marker goes: its leader's id, -1 while it has no available leader, undefined when the partition does not exist. */
export type PartitionLeaderLookup = (topic: string, partition: number) => number | undefined;

/**
 * Sends one WriteTxnMarkers request to a broker and resolves to its per-marker results; rejects
 * when the request fails (disconnection, timeout): its markers are sent again.
 */
export type TxnMarkerSender = (brokerId: number, markers: readonly TxnMarkerEntry[]) => Promise<TxnMarkerResult[]>;

export interface TransactionMarkerChannelOptions {
  stateManager: TransactionStateManager;
  leaderFor: PartitionLeaderLookup;
  send: TxnMarkerSender;
  logger: Logger;
  /** Delay before a retry (markers and completion writes); Kafka's retry.backoff.ms default. */
  retryBackoffMs?: number;
}

interface TxnIdAndMarkerEntry {
  transactionalId: string;
  marker: TxnMarkerEntry;
}

interface PendingCompleteTxn {
  transactionalId: string;
  coordinatorEpoch: number;
  metadata: TransactionMetadata;
  newMetadata: TxnTransitMetadata;
}

/** Markers for one destination, per `__transaction_state` partition. */
class TxnMarkerQueue {
  readonly byTxnPartition = new Map<number, TxnIdAndMarkerEntry[]>();

  add(txnPartition: number, e: TxnIdAndMarkerEntry): void {
    const q = this.byTxnPartition.get(txnPartition);
    if (q) q.push(e);
    else this.byTxnPartition.set(txnPartition, [e]);
  }

  drain(): TxnIdAndMarkerEntry[] {
    const out = [...this.byTxnPartition.values()].flat();
    this.byTxnPartition.clear();
    return out;
  }

  removeForTxnPartition(txnPartition: number): TxnIdAndMarkerEntry[] {
    const q = this.byTxnPartition.get(txnPartition) ?? [];
    this.byTxnPartition.delete(txnPartition);
    return q;
  }

  get size(): number {
    let n = 0;
    for (const q of this.byTxnPartition.values()) n += q.length;
    return n;
  }
}

const RETRIABLE_MARKER_ERRORS = new Set<number>([
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ErrorCode.NOT_ENOUGH_REPLICAS,
  ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
  ErrorCode.REQUEST_TIMED_OUT,
  ErrorCode.KAFKA_STORAGE_ERROR,
]);

export class TransactionMarkerChannelManager {
  private readonly txnManager: TransactionStateManager;
  private readonly leaderFor: PartitionLeaderLookup;
  private readonly sendRequest: TxnMarkerSender;
  private readonly log: Logger;
  private readonly retryBackoffMs: number;
  private readonly queuePerBroker = new Map<number, TxnMarkerQueue>();
  private readonly queueForUnknownBroker = new TxnMarkerQueue();
  private readonly inFlight = new Set<number>();
  private readonly transactionsWithPendingMarkers = new Map<string, PendingCompleteTxn>();
  private logAppendRetryQueue: PendingCompleteTxn[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private pumpScheduled = false;
  private running = true;
  private readonly requests = new Set<Promise<void>>();

  constructor(o: TransactionMarkerChannelOptions) {
    this.txnManager = o.stateManager;
    this.leaderFor = o.leaderFor;
    this.sendRequest = o.send;
    this.log = o.logger.child({ component: 'transaction-marker-channel-manager' });
    this.retryBackoffMs = o.retryBackoffMs ?? 100;
  }

  /** Stops sending; markers still queued are dropped (the next coordinator sends them again). */
  shutdown(): void {
    this.running = false;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.queuePerBroker.clear();
    this.queueForUnknownBroker.drain();
    this.logAppendRetryQueue = [];
  }

  get numTxnsWithPendingMarkers(): number {
    return this.transactionsWithPendingMarkers.size;
  }

  /** Markers queued (not in flight) for `brokerId`, or for partitions without a leader (-1). */
  queuedMarkers(brokerId: number): number {
    return brokerId === -1 ? this.queueForUnknownBroker.size : (this.queuePerBroker.get(brokerId)?.size ?? 0);
  }

  get logAppendRetries(): number {
    return this.logAppendRetryQueue.length;
  }

  /** WriteTxnMarkers requests in flight (tests wait for them). */
  async awaitRequests(): Promise<void> {
    while (this.requests.size > 0) await Promise.allSettled([...this.requests]);
  }

  /**
   * A transaction's Prepare* record is written (or was loaded): send its markers, and write
   * `newMetadata` (its prepared completion) once every partition has one.
   */
  addTxnMarkersToSend(coordinatorEpoch: number, result: TransactionResult, metadata: TransactionMetadata, newMetadata: TxnTransitMetadata): void {
    const transactionalId = metadata.transactionalId;
    this.transactionsWithPendingMarkers.set(transactionalId, { transactionalId, coordinatorEpoch, metadata, newMetadata });
    this.addTxnMarkersToBrokerQueue(transactionalId, metadata.producerId, metadata.producerEpoch, result, coordinatorEpoch, metadata.topicPartitions.toArray());
    this.maybeWriteTxnCompletion(transactionalId);
  }

  /** Queues the markers by the current leader of each partition. */
  addTxnMarkersToBrokerQueue(
    transactionalId: string,
    producerId: bigint,
    producerEpoch: number,
    result: TransactionResult,
    coordinatorEpoch: number,
    partitions: readonly TopicPartition[],
  ): void {
    if (!this.running) return;
    const txnPartition = this.txnManager.partitionFor(transactionalId);
    const byDestination = new Map<number | undefined, TopicPartition[]>();
    for (const tp of partitions) {
      const leader = this.leaderFor(tp.topic, tp.partition);
      const dest = leader === undefined ? undefined : leader < 0 ? -1 : leader;
      const list = byDestination.get(dest);
      if (list) list.push(tp);
      else byDestination.set(dest, [tp]);
    }
    for (const [dest, tps] of byDestination) {
      const entry: TxnIdAndMarkerEntry = { transactionalId, marker: { producerId, producerEpoch, coordinatorEpoch, result, partitions: tps } };
      if (dest === -1) {
        // the partition exists but its leader is not available: look again after the backoff
        this.queueForUnknownBroker.add(txnPartition, entry);
        this.schedule(() => this.requeueUnknownBroker());
      } else if (dest !== undefined) {
        let q = this.queuePerBroker.get(dest);
        if (!q) {
          q = new TxnMarkerQueue();
          this.queuePerBroker.set(dest, q);
        }
        q.add(txnPartition, entry);
      } else {
        this.skipDeletedPartitions(transactionalId, coordinatorEpoch, tps);
      }
    }
    this.wakeup();
  }

  /** No leader is known for these partitions: the topic is gone, so they need no marker. */
  private skipDeletedPartitions(transactionalId: string, coordinatorEpoch: number, tps: TopicPartition[]): void {
    const r = this.txnManager.getTransactionState(transactionalId);
    if (!('found' in r)) {
      this.log.info({ transactionalId, coordinatorEpoch, errorCode: r.error }, 'cannot fetch transaction metadata; cancel sending its markers');
      this.removeMarkersForTxnId(transactionalId, coordinatorEpoch);
      return;
    }
    if (r.found === undefined) {
      this.log.error({ transactionalId }, 'the coordinator still owns the transaction partition but has no metadata for it; this is not expected');
      this.removeMarkersForTxnId(transactionalId, coordinatorEpoch);
      return;
    }
    if (r.found.coordinatorEpoch !== coordinatorEpoch) {
      this.log.info({ transactionalId, coordinatorEpoch, currentEpoch: r.found.coordinatorEpoch }, 'coordinator epoch changed; cancel sending markers');
      this.removeMarkersForTxnId(transactionalId, coordinatorEpoch);
      return;
    }
    this.log.info({ transactionalId, partitions: tps.map((tp) => topicPartitionKey(tp)) }, 'no leader for partitions, likely deleted; skipping their markers');
    for (const tp of tps) r.found.metadata.removePartition(tp);
    this.maybeWriteTxnCompletion(transactionalId);
  }

  private requeueUnknownBroker(): void {
    for (const e of this.queueForUnknownBroker.drain()) {
      const m = e.marker;
      this.addTxnMarkersToBrokerQueue(e.transactionalId, m.producerId, m.producerEpoch, m.result, m.coordinatorEpoch, m.partitions);
    }
  }

  private schedule(f: () => void): void {
    if (!this.running) return;
    const t = setTimeout(() => {
      this.timers.delete(t);
      if (this.running) f();
    }, this.retryBackoffMs);
    this.timers.add(t);
  }

  private wakeup(): void {
    if (this.pumpScheduled || !this.running) return;
    this.pumpScheduled = true;
    queueMicrotask(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  /** Sends each idle broker's queued markers as one request. */
  private pump(): void {
    if (!this.running) return;
    for (const [brokerId, q] of this.queuePerBroker) {
      if (this.inFlight.has(brokerId) || q.size === 0) continue;
      const entries = q.drain();
      this.inFlight.add(brokerId);
      const p = this.sendRequest(
        brokerId,
        entries.map((e) => e.marker),
      ).then(
        (results) => this.onResponse(brokerId, entries, results),
        (err: unknown) => this.onDisconnect(brokerId, entries, err),
      );
      const tracked: Promise<void> = p
        .catch((err: unknown) => this.log.error({ err, brokerId }, 'handling a WriteTxnMarkers response failed'))
        .finally(() => {
          this.inFlight.delete(brokerId);
          this.requests.delete(tracked);
          this.wakeup();
        });
      this.requests.add(tracked);
    }
  }

  /** The current metadata of a marker's transaction, or undefined after dropping the transaction (not the coordinator any more, epoch changed). */
  private currentFor(e: TxnIdAndMarkerEntry): TransactionMetadata | undefined {
    const r = this.txnManager.getTransactionState(e.transactionalId);
    const log = this.log.child({ transactionalId: e.transactionalId, coordinatorEpoch: e.marker.coordinatorEpoch });
    if (!('found' in r)) {
      // NOT_COORDINATOR, or loading again: the load sends them again
      log.info({ errorCode: r.error }, 'no longer the coordinator of the transaction; cancel sending its markers');
    } else if (r.found === undefined) {
      log.error('the coordinator still owns the transaction partition but has no metadata for it; this is not expected');
    } else if (r.found.coordinatorEpoch !== e.marker.coordinatorEpoch) {
      log.info({ currentEpoch: r.found.coordinatorEpoch }, 'coordinator epoch changed; cancel sending markers');
    } else {
      return r.found.metadata;
    }
    this.removeMarkersForTxnId(e.transactionalId, e.marker.coordinatorEpoch);
    return undefined;
  }

  private onDisconnect(brokerId: number, entries: TxnIdAndMarkerEntry[], err: unknown): void {
    this.log.info({ err, brokerId, markers: entries.length }, 'WriteTxnMarkers request failed; sending its markers again');
    for (const e of entries) {
      if (this.currentFor(e) === undefined) continue;
      const m = e.marker;
      this.schedule(() => this.addTxnMarkersToBrokerQueue(e.transactionalId, m.producerId, m.producerEpoch, m.result, m.coordinatorEpoch, m.partitions));
    }
  }

  private onResponse(brokerId: number, entries: TxnIdAndMarkerEntry[], results: TxnMarkerResult[]): void {
    for (const e of entries) {
      const m = e.marker;
      const errors = results.find((r) => r.producerId === m.producerId);
      if (!errors) {
        this.log.error({ brokerId, producerId: m.producerId }, 'WriteTxnMarkers response has no result for the producer id; sending the markers again');
        this.schedule(() => this.addTxnMarkersToBrokerQueue(e.transactionalId, m.producerId, m.producerEpoch, m.result, m.coordinatorEpoch, m.partitions));
        continue;
      }
      const metadata = this.currentFor(e);
      if (metadata === undefined) continue;
      const retry: TopicPartition[] = [];
      let abortSending = false;
      for (const { topic, partition, errorCode } of errors.partitions) {
        const tp = { topic, partition };
        const log = this.log.child({ transactionalId: e.transactionalId, brokerId, topic, partition, error: errorName(errorCode) });
        if (errorCode === ErrorCode.NONE) {
          metadata.removePartition(tp);
        } else if (RETRIABLE_MARKER_ERRORS.has(errorCode)) {
          log.info('sending a transaction marker failed; retrying');
          retry.push(tp);
        } else if (errorCode === ErrorCode.INVALID_PRODUCER_EPOCH || errorCode === ErrorCode.TRANSACTION_COORDINATOR_FENCED) {
          // the producer or the coordinator epoch moved on: this transaction is not ours to complete
          log.info('sending a transaction marker failed permanently; cancel sending its markers');
          this.removeMarkersForTxnId(e.transactionalId, m.coordinatorEpoch);
          abortSending = true;
        } else if (errorCode === ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT || errorCode === ErrorCode.UNSUPPORTED_VERSION) {
          // the producer could not have written to it either
          log.info('the partition cannot take a transaction marker; it no longer waits for one');
          metadata.removePartition(tp);
        } else {
          // Kafka treats these as fatal (CORRUPT_MESSAGE, MESSAGE_TOO_LARGE, …); keep the transaction open and retry
          log.error('unexpected error sending a transaction marker; retrying');
          retry.push(tp);
        }
      }
      if (abortSending) continue;
      if (retry.length > 0) {
        this.schedule(() => this.addTxnMarkersToBrokerQueue(e.transactionalId, m.producerId, m.producerEpoch, m.result, m.coordinatorEpoch, retry));
      } else {
        this.maybeWriteTxnCompletion(e.transactionalId);
      }
    }
  }

  /** Writes the transaction's completion once no partition waits for a marker. */
  maybeWriteTxnCompletion(transactionalId: string): void {
    const pending = this.transactionsWithPendingMarkers.get(transactionalId);
    if (!pending || pending.metadata.topicPartitions.size > 0) return;
    this.transactionsWithPendingMarkers.delete(transactionalId);
    this.writeTxnCompletion(pending);
  }

  private writeTxnCompletion(p: PendingCompleteTxn): void {
    const r = this.txnManager.getTransactionState(p.transactionalId);
    const log = this.log.child({ transactionalId: p.transactionalId, coordinatorEpoch: p.coordinatorEpoch });
    if (!('found' in r)) {
      log.info({ errorCode: r.error }, 'not the coordinator (or loading again); not writing the transaction completion');
    } else if (r.found === undefined) {
      log.error('the coordinator still owns the transaction partition but has no metadata for it; this is not expected');
    } else if (r.found.coordinatorEpoch !== p.coordinatorEpoch) {
      log.info({ currentEpoch: r.found.coordinatorEpoch }, 'coordinator epoch changed after the markers were sent; not writing the completion');
    } else {
      this.tryAppendToLog(p);
    }
  }

  private tryAppendToLog(p: PendingCompleteTxn): void {
    const log = this.log.child({ transactionalId: p.transactionalId, coordinatorEpoch: p.coordinatorEpoch });
    void this.txnManager
      .appendTransactionToLog(p.transactionalId, p.coordinatorEpoch, p.newMetadata, (e) => e === ErrorCode.COORDINATOR_NOT_AVAILABLE)
      .then(
        (error) => {
          switch (error) {
            case ErrorCode.NONE:
              log.debug('transaction completed');
              break;
            case ErrorCode.NOT_COORDINATOR:
            case ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
              // the next coordinator (or the load) completes it
              log.info({ error: errorName(error) }, 'not writing the transaction completion: not the coordinator any more');
              break;
            case ErrorCode.COORDINATOR_NOT_AVAILABLE:
              log.info('transaction log not available for the completion; retrying');
              this.logAppendRetryQueue.push(p);
              this.schedule(() => this.retryLogAppends());
              break;
            default:
              log.error({ error: errorName(error) }, 'unexpected error writing the transaction completion');
          }
        },
        (err: unknown) => log.error({ err }, 'writing the transaction completion failed'),
      );
  }

  private retryLogAppends(): void {
    const retries = this.logAppendRetryQueue;
    this.logAppendRetryQueue = [];
    for (const p of retries) this.tryAppendToLog(p);
  }

  /** A `__transaction_state` partition was unloaded (or is loading again): drop its queued markers and their transactions. */
  removeMarkersForTxnTopicPartition(txnPartition: number): void {
    for (const e of this.queueForUnknownBroker.removeForTxnPartition(txnPartition)) this.removeMarkersForTxnId(e.transactionalId, e.marker.coordinatorEpoch);
    for (const q of this.queuePerBroker.values()) {
      for (const e of q.removeForTxnPartition(txnPartition)) this.removeMarkersForTxnId(e.transactionalId, e.marker.coordinatorEpoch);
    }
    this.logAppendRetryQueue = this.logAppendRetryQueue.filter((p) => this.txnManager.partitionFor(p.transactionalId) !== txnPartition);
  }

  /**
   * Drops the transaction's pending completion — only the one prepared at `coordinatorEpoch` when
   * given: markers of an earlier term (a request still in flight when the partition was loaded
   * again at a new epoch, e.g. after the controller bumped the leader epoch to shrink the ISR)
   * must not cancel the completion the new term prepared, or the transaction would stay in
   * PrepareCommit/PrepareAbort and its producer get CONCURRENT_TRANSACTIONS until the next load.
   */
  removeMarkersForTxnId(transactionalId: string, coordinatorEpoch?: number): void {
    const pending = this.transactionsWithPendingMarkers.get(transactionalId);
    if (pending && (coordinatorEpoch === undefined || pending.coordinatorEpoch === coordinatorEpoch))
      this.transactionsWithPendingMarkers.delete(transactionalId);
  }
}
