/**
 * The transaction coordinator's cache and its storage in `__transaction_state` (Kafka 3.x's
 * TransactionStateManager): the transactional ids of each partition this broker leads and has
 * loaded, loading a partition from its log when elected (requests answer
 * COORDINATOR_LOAD_IN_PROGRESS meanwhile, NOT_COORDINATOR for partitions not owned), unloading it on
 * resignation, writing a transition's record with acks=-1 and applying it once replicated, the
 * transactions past their timeout, and the expiration of idle transactional ids with tombstones.
 */
import type { Logger } from 'pino';
import { CompressionType, encodeRecordBatch, ErrorCode, recordBatches } from '@samsa/protocol';
import type { CoordinatorLog } from '@samsa/server-common';
import {
  decodeTransactionLogKey,
  decodeTransactionLogValue,
  encodeTransactionLogKey,
  encodeTransactionLogValue,
  TRANSACTION_LOG_KEY_VERSION,
} from './transaction-log.js';
import { TransactionMetadata, transitToLogValue, type TxnTransitMetadata } from './transaction-metadata.js';
import { partitionForTransactionalId } from './transaction-partitioner.js';
import { isExpirationAllowed, TRANSACTION_STATE_NAMES, TransactionState, type TransactionStateName } from './transaction-state.js';

/** The coordinator's settings, under Kafka's config names (defaults are Kafka's). */
export interface TransactionConfig {
  /** transactional.id.expiration.ms */
  transactionalIdExpirationMs: number;
  /** transaction.max.timeout.ms */
  transactionMaxTimeoutMs: number;
  /** transaction.state.log.num.partitions */
  transactionLogNumPartitions: number;
  /** transaction.state.log.replication.factor */
  transactionLogReplicationFactor: number;
  /** transaction.state.log.segment.bytes */
  transactionLogSegmentBytes: number;
  /** transaction.state.log.load.buffer.size */
  transactionLogLoadBufferSize: number;
  /** transaction.state.log.min.isr */
  transactionLogMinInsyncReplicas: number;
  /** transaction.abort.timed.out.transaction.cleanup.interval.ms */
  abortTimedOutTransactionsIntervalMs: number;
  /** transaction.remove.expired.transaction.cleanup.interval.ms */
  removeExpiredTransactionalIdsIntervalMs: number;
  /** request.timeout.ms: bounds the expiration tombstones' append */
  requestTimeoutMs: number;
}

export const DEFAULT_TRANSACTION_CONFIG: Readonly<TransactionConfig> = {
  transactionalIdExpirationMs: 604_800_000,
  transactionMaxTimeoutMs: 900_000,
  transactionLogNumPartitions: 50,
  transactionLogReplicationFactor: 3,
  transactionLogSegmentBytes: 100 * 1024 * 1024,
  transactionLogLoadBufferSize: 5 * 1024 * 1024,
  transactionLogMinInsyncReplicas: 2,
  abortTimedOutTransactionsIntervalMs: 10_000,
  removeExpiredTransactionalIdsIntervalMs: 3_600_000,
  requestTimeoutMs: 30_000,
};

/** Expiration tombstones are batched within Kafka's default max.message.bytes. */
export const TOMBSTONE_BATCH_MAX_BYTES = 1_048_588;
const RECORD_BATCH_OVERHEAD = 61;
/** A tombstone record's bytes besides its transactional id: length varints, attributes, deltas, key version and string length. */
const TOMBSTONE_RECORD_OVERHEAD = 24;

/** Kafka writes `__transaction_state` with acks=-1 only. */
export const TRANSACTION_LOG_REQUIRED_ACKS = -1;

/** COMMIT or ABORT (Kafka's TransactionResult). */
export const TransactionResult = { ABORT: 0, COMMIT: 1 } as const;
export type TransactionResult = (typeof TransactionResult)[keyof typeof TransactionResult];

export interface CoordinatorEpochAndTxnMetadata {
  coordinatorEpoch: number;
  metadata: TransactionMetadata;
}

/** A lookup: an error (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS) or the metadata, undefined when the id is unknown. */
export type TxnStateLookup = { error: number } | { error: typeof ErrorCode.NONE; found: CoordinatorEpochAndTxnMetadata | undefined };

export interface TransactionalIdAndProducerIdEpoch {
  transactionalId: string;
  producerId: bigint;
  producerEpoch: number;
}

/** Hands a loaded PrepareCommit/PrepareAbort transaction to the marker channel, with its prepared completion. */
export type SendTxnMarkers = (coordinatorEpoch: number, result: TransactionResult, metadata: TransactionMetadata, transit: TxnTransitMetadata) => void;

export interface ListTransactionsResult {
  errorCode: number;
  unknownStateFilters: string[];
  transactionStates: Array<{ transactionalId: string; producerId: bigint; transactionState: TransactionStateName }>;
}

interface CacheEntry {
  coordinatorEpoch: number;
  metadataPerTransactionalId: Map<string, TransactionMetadata>;
}

/** Kafka's mapping of an append error to what the coordinator answers. */
export function transactionLogAppendError(code: number): number {
  switch (code) {
    case ErrorCode.NONE:
      return ErrorCode.NONE;
    case ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
    case ErrorCode.NOT_ENOUGH_REPLICAS:
    case ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND:
    case ErrorCode.REQUEST_TIMED_OUT: // the client retries
      return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    case ErrorCode.NOT_LEADER_OR_FOLLOWER:
    case ErrorCode.KAFKA_STORAGE_ERROR:
      return ErrorCode.NOT_COORDINATOR;
    case ErrorCode.MESSAGE_TOO_LARGE:
    case ErrorCode.RECORD_LIST_TOO_LARGE:
      return ErrorCode.UNKNOWN_SERVER_ERROR;
    default:
      return code;
  }
}

export class TransactionStateManager {
  /** Partitions being loaded → the coordinator epochs they are being loaded at. */
  private readonly loadingPartitions = new Map<number, Set<number>>();
  /** Loaded partitions → their transactional ids. */
  private readonly transactionMetadataCache = new Map<number, CacheEntry>();
  /** Appends waiting for their acks, per partition: answered NOT_COORDINATOR if the partition unloads first. */
  private readonly pendingAppends = new Map<number, Set<(error: number) => void>>();
  private readonly loads = new Set<Promise<void>>();
  private partitionCount: number;
  private shuttingDown = false;
  private expirationTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly brokerId: number,
    readonly config: TransactionConfig,
    private readonly storage: CoordinatorLog,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.partitionCount = config.transactionLogNumPartitions;
  }

  /** `partitionCount`: the topic's real count when it exists (Kafka reads it from ZooKeeper). */
  startup(partitionCount: number = this.config.transactionLogNumPartitions, enableTransactionalIdExpiration = true): void {
    this.partitionCount = partitionCount;
    if (enableTransactionalIdExpiration) {
      this.expirationTimer = setInterval(() => this.removeExpiredTransactionalIds(), Math.max(1, this.config.removeExpiredTransactionalIdsIntervalMs));
      this.expirationTimer.unref();
    }
  }

  async shutdown(): Promise<void> {
    this.shuttingDown = true;
    clearInterval(this.expirationTimer);
    this.loadingPartitions.clear();
    await Promise.allSettled([...this.loads]);
    for (const p of [...this.pendingAppends.keys()]) this.failPendingAppends(p);
    this.transactionMetadataCache.clear();
    this.log.info('transaction state manager shut down');
  }

  get numPartitions(): number {
    return this.partitionCount;
  }

  partitionFor(transactionalId: string): number {
    return partitionForTransactionalId(transactionalId, this.partitionCount);
  }

  /** Kafka's validateTransactionTimeoutMs: positive and at most transaction.max.timeout.ms. */
  validateTransactionTimeoutMs(txnTimeoutMs: number): boolean {
    return txnTimeoutMs <= this.config.transactionMaxTimeoutMs && txnTimeoutMs > 0;
  }

  /** Kafka's transactionTopicConfigs: compacted, uncompressed, no unclean election. */
  transactionTopicConfigs(): Record<string, string> {
    return {
      'unclean.leader.election.enable': 'false',
      'compression.type': 'uncompressed',
      'cleanup.policy': 'compact',
      'min.insync.replicas': String(this.config.transactionLogMinInsyncReplicas),
      'segment.bytes': String(this.config.transactionLogSegmentBytes),
    };
  }

  isPartitionLoading(partition: number): boolean {
    return (this.loadingPartitions.get(partition)?.size ?? 0) > 0;
  }

  isPartitionOwned(partition: number): boolean {
    return this.transactionMetadataCache.has(partition);
  }

  get isLoading(): boolean {
    for (const s of this.loadingPartitions.values()) if (s.size > 0) return true;
    return false;
  }

  getTransactionState(transactionalId: string): TxnStateLookup {
    return this.getAndMaybeAddTransactionState(transactionalId, undefined);
  }

  /** Adds a new transactional id's metadata unless one exists; answers the cached one. */
  putTransactionStateIfNotExists(metadata: TransactionMetadata): { error: number } | { error: typeof ErrorCode.NONE; found: CoordinatorEpochAndTxnMetadata } {
    const r = this.getAndMaybeAddTransactionState(metadata.transactionalId, metadata);
    if (r.error !== ErrorCode.NONE) return { error: r.error };
    if (!('found' in r) || r.found === undefined) throw new Error(`Unexpected empty transaction metadata returned while putting ${metadata.toString()}`);
    return { error: ErrorCode.NONE, found: r.found };
  }

  private getAndMaybeAddTransactionState(transactionalId: string, created: TransactionMetadata | undefined): TxnStateLookup {
    const partition = this.partitionFor(transactionalId);
    if (this.isPartitionLoading(partition)) return { error: ErrorCode.COORDINATOR_LOAD_IN_PROGRESS };
    const entry = this.transactionMetadataCache.get(partition);
    if (!entry) return { error: ErrorCode.NOT_COORDINATOR };
    let metadata = entry.metadataPerTransactionalId.get(transactionalId);
    if (metadata === undefined && created !== undefined) {
      entry.metadataPerTransactionalId.set(transactionalId, created);
      metadata = created;
    }
    return { error: ErrorCode.NONE, found: metadata && { coordinatorEpoch: entry.coordinatorEpoch, metadata } };
  }

  /** Every cached transactional id (tests, metrics). */
  *allTransactions(): IterableIterator<CoordinatorEpochAndTxnMetadata> {
    for (const entry of this.transactionMetadataCache.values()) {
      for (const metadata of entry.metadataPerTransactionalId.values()) yield { coordinatorEpoch: entry.coordinatorEpoch, metadata };
    }
  }

  /**
   * Ongoing transactions open longer than their timeout and with no transition in flight: the
   * coordinator aborts them (best effort: the abort re-checks under the current state).
   */
  timedOutTransactions(): TransactionalIdAndProducerIdEpoch[] {
    const now = this.now();
    const out: TransactionalIdAndProducerIdEpoch[] = [];
    for (const { metadata: m } of this.allTransactions()) {
      if (m.pendingTransitionInProgress || m.state !== TransactionState.Ongoing) continue;
      if (m.txnStartTimestamp + m.txnTimeoutMs < now)
        out.push({ transactionalId: m.transactionalId, producerId: m.producerId, producerEpoch: m.producerEpoch });
    }
    return out;
  }

  /** ListTransactions: every cached id but Dead ones, filtered by producer ids and state names (unknown names are reported). */
  listTransactionStates(filterProducerIds: readonly bigint[], filterStateNames: readonly string[]): ListTransactionsResult {
    const result: ListTransactionsResult = { errorCode: ErrorCode.NONE, unknownStateFilters: [], transactionStates: [] };
    if (this.isLoading) return { ...result, errorCode: ErrorCode.COORDINATOR_LOAD_IN_PROGRESS };
    const states = new Set<TransactionState>();
    for (const name of filterStateNames) {
      const s = (TransactionState as Record<string, TransactionState | undefined>)[name];
      if (s === undefined || !Object.hasOwn(TransactionState, name)) result.unknownStateFilters.push(name);
      else states.add(s);
    }
    const producerIds = new Set(filterProducerIds);
    for (const { metadata: m } of this.allTransactions()) {
      // Dead: being expired and removed
      if (m.state === TransactionState.Dead) continue;
      if (producerIds.size > 0 && !producerIds.has(m.producerId)) continue;
      if (filterStateNames.length > 0 && !states.has(m.state)) continue;
      result.transactionStates.push({ transactionalId: m.transactionalId, producerId: m.producerId, transactionState: TRANSACTION_STATE_NAMES[m.state] });
    }
    return result;
  }

  private batch(key: Buffer, value: Buffer | null, timestamp: number): Buffer {
    return encodeRecordBatch({ records: [{ key, value, timestamp }], baseTimestamp: timestamp, compression: CompressionType.NONE });
  }

  /** Waits for an append, or answers NOT_COORDINATOR if the partition unloads first. */
  private awaitAppend(partition: number, append: Promise<{ errorCode: number }>): Promise<number> {
    return new Promise<number>((resolve) => {
      let set = this.pendingAppends.get(partition);
      if (!set) {
        set = new Set();
        this.pendingAppends.set(partition, set);
      }
      const pending = set;
      let settled = false;
      const settle = (code: number) => {
        if (settled) return;
        settled = true;
        pending.delete(settle);
        if (pending.size === 0 && this.pendingAppends.get(partition) === pending) this.pendingAppends.delete(partition);
        resolve(code);
      };
      pending.add(settle);
      append.then(
        (r) => settle(r.errorCode),
        (err: unknown) => {
          this.log.error({ err, partition }, 'transaction log append failed');
          settle(ErrorCode.UNKNOWN_SERVER_ERROR);
        },
      );
    });
  }

  private failPendingAppends(partition: number): void {
    const set = this.pendingAppends.get(partition);
    if (!set) return;
    this.pendingAppends.delete(partition);
    for (const settle of [...set]) settle(ErrorCode.NOT_COORDINATOR);
  }

  /**
   * Writes a prepared transition to the transactional id's partition (acks=-1, within the
   * transaction's timeout, as Kafka) and applies it once replicated if the coordinator epoch is
   * unchanged. Resolves to NONE or the error to answer; on an error the pending state is cleared
   * unless `retryOnError` says the caller retries the same transition.
   */
  async appendTransactionToLog(
    transactionalId: string,
    coordinatorEpoch: number,
    newMetadata: TxnTransitMetadata,
    retryOnError: (error: number) => boolean = () => false,
  ): Promise<number> {
    const before = this.getTransactionState(transactionalId);
    if (!('found' in before)) return before.error;
    if (before.found === undefined || before.found.coordinatorEpoch !== coordinatorEpoch) return ErrorCode.NOT_COORDINATOR;
    const partition = this.partitionFor(transactionalId);
    const timestamp = this.now();
    const records = this.batch(encodeTransactionLogKey(transactionalId), encodeTransactionLogValue(transitToLogValue(newMetadata)), timestamp);
    const appendError = await this.awaitAppend(partition, this.storage.append(partition, records, TRANSACTION_LOG_REQUIRED_ACKS, newMetadata.txnTimeoutMs));
    const log = this.log.child({ transactionalId, coordinatorEpoch, partition, txnState: TRANSACTION_STATE_NAMES[newMetadata.txnState] });
    let error = transactionLogAppendError(appendError);
    const after = this.getTransactionState(transactionalId);
    if (error === ErrorCode.NONE) {
      if (!('found' in after)) {
        log.info({ errorCode: after.error }, 'cached transaction metadata unavailable after the append; not applying the transition');
        error = after.error;
      } else if (after.found === undefined) {
        log.info('transactional id no longer cached after the append; answering NOT_COORDINATOR');
        error = ErrorCode.NOT_COORDINATOR;
      } else if (after.found.coordinatorEpoch !== coordinatorEpoch) {
        log.info({ currentEpoch: after.found.coordinatorEpoch }, 'coordinator epoch changed during the append; answering NOT_COORDINATOR');
        error = ErrorCode.NOT_COORDINATOR;
      } else {
        after.found.metadata.completeTransitionTo(newMetadata);
        log.debug('transaction state transition written and applied');
      }
    } else {
      log.debug({ appendError, errorCode: error }, 'transaction log append failed');
      if ('found' in after && after.found !== undefined && after.found.coordinatorEpoch === coordinatorEpoch && !retryOnError(error)) {
        // no transition is in flight any more
        after.found.metadata.pendingState = null;
      }
    }
    return error;
  }

  /**
   * This broker leads `__transaction_state` partition `partitionId` at `coordinatorEpoch`: requests
   * for its ids answer COORDINATOR_LOAD_IN_PROGRESS while its log is read to the end; then its ids
   * are cached and the transactions found in PrepareCommit/PrepareAbort go to `sendTxnMarkers`.
   */
  loadTransactionsForTxnTopicPartition(partitionId: number, coordinatorEpoch: number, sendTxnMarkers: SendTxnMarkers): Promise<void> {
    let epochs = this.loadingPartitions.get(partitionId);
    if (!epochs) {
      epochs = new Set();
      this.loadingPartitions.set(partitionId, epochs);
    }
    epochs.add(coordinatorEpoch);
    const p = this.loadTransactions(partitionId, coordinatorEpoch, sendTxnMarkers).finally(() => this.loads.delete(p));
    this.loads.add(p);
    return p;
  }

  private stillLoading(partitionId: number, coordinatorEpoch: number): boolean {
    return this.loadingPartitions.get(partitionId)?.has(coordinatorEpoch) ?? false;
  }

  private async loadTransactions(partitionId: number, coordinatorEpoch: number, sendTxnMarkers: SendTxnMarkers): Promise<void> {
    const started = this.now();
    const log = this.log.child({ partition: partitionId, coordinatorEpoch });
    log.info('loading transaction metadata');
    const loaded = await this.readPartition(partitionId, coordinatorEpoch, log);
    if (!this.stillLoading(partitionId, coordinatorEpoch)) {
      log.info('transaction partition unloaded while loading; discarding what was read');
      return;
    }
    const previous = this.transactionMetadataCache.get(partitionId);
    if (previous) log.warn({ previousEpoch: previous.coordinatorEpoch }, 'replacing cached transaction metadata of an earlier epoch');
    this.transactionMetadataCache.set(partitionId, { coordinatorEpoch, metadataPerTransactionalId: loaded });
    const toComplete: Array<[TransactionResult, TransactionMetadata, TxnTransitMetadata]> = [];
    for (const m of loaded.values()) {
      if (m.state === TransactionState.PrepareAbort) toComplete.push([TransactionResult.ABORT, m, m.prepareComplete(this.now())]);
      else if (m.state === TransactionState.PrepareCommit) toComplete.push([TransactionResult.COMMIT, m, m.prepareComplete(this.now())]);
    }
    // no longer loading before the markers go out, so that their completion can be written
    this.loadingPartitions.get(partitionId)?.delete(coordinatorEpoch);
    if (this.loadingPartitions.get(partitionId)?.size === 0) this.loadingPartitions.delete(partitionId);
    for (const [result, m, transit] of toComplete) sendTxnMarkers(coordinatorEpoch, result, m, transit);
    log.info({ transactionalIds: loaded.size, pendingCompletion: toComplete.length, ms: this.now() - started }, 'finished loading transaction metadata');
  }

  private async readPartition(partitionId: number, coordinatorEpoch: number, log: Logger): Promise<Map<string, TransactionMetadata>> {
    const loaded = new Map<string, TransactionMetadata>();
    let curr = this.storage.logStartOffset(partitionId);
    if (curr === undefined) {
      log.warn('attempted to load transaction metadata but found no log');
      return loaded;
    }
    try {
      let readOne = true;
      // a leader change ends the load: the log end offset is then -1
      while (curr < this.storage.leaderLogEndOffset(partitionId) && readOne && !this.shuttingDown && this.stillLoading(partitionId, coordinatorEpoch)) {
        const buf = await this.storage.read(partitionId, curr, this.config.transactionLogLoadBufferSize);
        const before: bigint = curr;
        for (const batch of recordBatches(buf)) {
          if (!batch.isControl) {
            for (const record of batch) {
              if (!record.key) throw new Error("Transaction state log's key should not be null");
              const version = record.key.length >= 2 ? record.key.readInt16BE(0) : -1;
              if (version !== TRANSACTION_LOG_KEY_VERSION) {
                // Kafka skips these: left over from an aborted upgrade
                log.warn({ version }, 'unknown message key version while loading transaction state; ignoring it');
                continue;
              }
              const transactionalId = decodeTransactionLogKey(record.key);
              if (record.value === null) loaded.delete(transactionalId);
              else loaded.set(transactionalId, TransactionMetadata.fromLogValue(transactionalId, decodeTransactionLogValue(record.value)));
            }
          }
          curr = batch.nextOffset;
        }
        // nothing (or no whole batch) was read: the end of the log
        readOne = curr > before;
      }
    } catch (err) {
      log.error({ err }, 'error loading transactions from the transaction log');
    }
    return loaded;
  }

  /**
   * This broker no longer leads the partition: drop its ids and any load of it (at `coordinatorEpoch`,
   * or every load when null: the replica was deleted), and answer its in-flight appends NOT_COORDINATOR.
   */
  removeTransactionsForTxnTopicPartition(partitionId: number, coordinatorEpoch: number | null): void {
    const epochs = this.loadingPartitions.get(partitionId);
    if (coordinatorEpoch === null) epochs?.clear();
    else epochs?.delete(coordinatorEpoch);
    if (epochs?.size === 0) this.loadingPartitions.delete(partitionId);
    const entry = this.transactionMetadataCache.get(partitionId);
    this.transactionMetadataCache.delete(partitionId);
    this.failPendingAppends(partitionId);
    this.log.info({ partition: partitionId, coordinatorEpoch, transactionalIds: entry?.metadataPerTransactionalId.size ?? 0 }, 'unloaded transaction metadata');
  }

  private shouldExpire(m: TransactionMetadata, now: number): boolean {
    return isExpirationAllowed(m.state) && m.txnLastUpdateTimestamp <= now - this.config.transactionalIdExpirationMs;
  }

  /**
   * The periodic transactional id expiration: ids idle for transactional.id.expiration.ms in
   * Empty/CompleteCommit/CompleteAbort go Dead, their tombstones are written (acks=-1), and they
   * leave the cache once the tombstones are replicated. Resolves when the appends are answered.
   */
  async removeExpiredTransactionalIds(): Promise<number> {
    const now = this.now();
    const appends: Array<Promise<number>> = [];
    for (const [partition, entry] of this.transactionMetadataCache) {
      if (!this.storage.hasLog(partition)) {
        // Kafka: no log config, the partition is not online or no longer local
        this.log.warn({ partition }, 'transactional id expiration skipped: the partition has no local log');
        continue;
      }
      const expired: Array<[TransactionMetadata, TxnTransitMetadata]> = [];
      for (const m of entry.metadataPerTransactionalId.values()) {
        if (m.pendingState === null && this.shouldExpire(m, now)) expired.push([m, m.prepareDead()]);
      }
      // batches within the topic's max.message.bytes (Kafka fills each to the log config's limit)
      let chunk: Array<[TransactionMetadata, TxnTransitMetadata]> = [];
      let bytes = RECORD_BATCH_OVERHEAD;
      for (const e of expired) {
        const size = Buffer.byteLength(e[0].transactionalId) + TOMBSTONE_RECORD_OVERHEAD;
        if (chunk.length > 0 && bytes + size > TOMBSTONE_BATCH_MAX_BYTES) {
          appends.push(this.writeTombstones(partition, entry.coordinatorEpoch, chunk, now));
          chunk = [];
          bytes = RECORD_BATCH_OVERHEAD;
        }
        chunk.push(e);
        bytes += size;
      }
      if (chunk.length > 0) appends.push(this.writeTombstones(partition, entry.coordinatorEpoch, chunk, now));
    }
    const removed = await Promise.all(appends);
    return removed.reduce((a, b) => a + b, 0);
  }

  private async writeTombstones(
    partition: number,
    coordinatorEpoch: number,
    expired: Array<[TransactionMetadata, TxnTransitMetadata]>,
    now: number,
  ): Promise<number> {
    const records = encodeRecordBatch({
      records: expired.map(([m]) => ({ key: encodeTransactionLogKey(m.transactionalId), value: null, timestamp: now })),
      baseTimestamp: now,
      compression: CompressionType.NONE,
    });
    const error = await this.awaitAppend(partition, this.storage.append(partition, records, TRANSACTION_LOG_REQUIRED_ACKS, this.config.requestTimeoutMs));
    const entry = this.transactionMetadataCache.get(partition);
    let removed = 0;
    for (const [m, transit] of expired) {
      const current = entry?.metadataPerTransactionalId.get(m.transactionalId);
      if (
        entry !== undefined &&
        current === m &&
        entry.coordinatorEpoch === coordinatorEpoch &&
        m.pendingState === TransactionState.Dead &&
        m.producerEpoch === transit.producerEpoch &&
        error === ErrorCode.NONE
      ) {
        entry.metadataPerTransactionalId.delete(m.transactionalId);
        removed++;
      } else {
        this.log.warn(
          {
            transactionalId: m.transactionalId,
            errorCode: error,
            producerEpoch: m.producerEpoch,
            coordinatorEpoch: entry?.coordinatorEpoch,
            expectedCoordinatorEpoch: coordinatorEpoch,
          },
          'failed to remove an expired transactional id from the cache',
        );
        m.pendingState = null;
      }
    }
    if (removed > 0) this.log.info({ partition, removed }, 'removed expired transactional ids');
    return removed;
  }

  /** Loads in flight (tests wait for them). */
  async awaitLoads(): Promise<void> {
    await Promise.allSettled([...this.loads]);
  }

  toString(): string {
    return `TransactionStateManager(brokerId=${this.brokerId})`;
  }
}
