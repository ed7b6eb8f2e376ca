/**
 * Kafka 3.x's transaction coordinator (kafka.coordinator.transaction.TransactionCoordinator) with
 * plain inputs and outputs: the broker's InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn,
 * EndTxn, DescribeTransactions and ListTransactions handlers map wire requests onto these. Every
 * call resolves (with an error when this broker stops coordinating the transactional id meanwhile).
 * A transaction's Prepare* record is written before EndTxn answers; its markers and completion
 * follow through the marker channel. Ongoing transactions past their timeout are aborted by an
 * epoch bump every transaction.abort.timed.out.transaction.cleanup.interval.ms.
 */
import type { Logger } from 'pino';
import { API_KEYS, ErrorCode, errorCodeOf, errorName, type TopicPartition } from '@samsa/protocol';
import type { CoordinatorLog } from '@samsa/server-common';
import { isEpochExhausted, NO_PRODUCER_EPOCH, NO_PRODUCER_ID, TransactionMetadata, type TxnTransitMetadata } from './transaction-metadata.js';
import { TransactionMarkerChannelManager, type PartitionLeaderLookup, type TxnMarkerSender } from './transaction-marker-channel-manager.js';
import {
  DEFAULT_TRANSACTION_CONFIG,
  TransactionResult,
  TransactionStateManager,
  type CoordinatorEpochAndTxnMetadata,
  type ListTransactionsResult,
  type TransactionConfig,
  type TransactionalIdAndProducerIdEpoch,
} from './transaction-state-manager.js';
import { TRANSACTION_STATE_NAMES, TransactionState, type TransactionStateName } from './transaction-state.js';

/** The `__consumer_offsets` topic, whose partition AddOffsetsToTxn adds. */
const GROUP_METADATA_TOPIC_NAME = '__consumer_offsets';

export interface TransactionCoordinatorOptions {
  brokerId: number;
  config?: Partial<TransactionConfig>;
  /** `__transaction_state` on this broker's replicas. */
  storage: CoordinatorLog;
  logger: Logger;
  /** A new producer id (the broker's ProducerIdManager); a KafkaError rejection answers its code. */
  generateProducerId: () => Promise<bigint>;
  /** The `__consumer_offsets` partition of a group (the group coordinator's partitionFor). */
  partitionForGroup: (groupId: string) => number;
  /** The leader of a partition a marker goes to (see PartitionLeaderLookup). */
  leaderFor: PartitionLeaderLookup;
  /** Sends WriteTxnMarkers to a broker. */
  sendMarkers: TxnMarkerSender;
  /** Backoff before markers and completion writes are retried. */
  markerRetryBackoffMs?: number;
  now?: () => number;
}

export interface ProducerIdAndEpoch {
  producerId: bigint;
  producerEpoch: number;
}

export interface InitProducerIdResult {
  errorCode: number;
  producerId: bigint;
  producerEpoch: number;
}

export interface DescribedTransaction {
  errorCode: number;
  transactionalId: string;
  transactionState: TransactionStateName | '';
  transactionTimeoutMs: number;
  transactionStartTimeMs: number;
  producerId: bigint;
  producerEpoch: number;
  topics: Array<{ topic: string; partitions: number[] }>;
}

/** The API keys whose answers carry producer fencing. */
export const TxnApiKey = {
  InitProducerId: API_KEYS.InitProducerId,
  AddPartitionsToTxn: API_KEYS.AddPartitionsToTxn,
  AddOffsetsToTxn: API_KEYS.AddOffsetsToTxn,
  EndTxn: API_KEYS.EndTxn,
} as const;
export type TxnApiKey = (typeof TxnApiKey)[keyof typeof TxnApiKey];

/**
 * Kafka answers PRODUCER_FENCED only to clients that know it (InitProducerId v4+, AddPartitionsToTxn,
 * AddOffsetsToTxn and EndTxn v2+); older ones get INVALID_PRODUCER_EPOCH, which they handle alike.
 */
export function producerFencedErrorForVersion(apiKey: TxnApiKey, apiVersion: number, errorCode: number): number {
  if (errorCode !== ErrorCode.PRODUCER_FENCED) return errorCode;
  const firstVersion = apiKey === TxnApiKey.InitProducerId ? 4 : 2;
  return apiVersion < firstVersion ? ErrorCode.INVALID_PRODUCER_EPOCH : errorCode;
}

type Prepared = { error: number } | { coordinatorEpoch: number; transit: TxnTransitMetadata };

function initError(errorCode: number): InitProducerIdResult {
  return { errorCode, producerId: NO_PRODUCER_ID, producerEpoch: NO_PRODUCER_EPOCH };
}

export class TransactionCoordinator {
  readonly config: TransactionConfig;
  readonly txnManager: TransactionStateManager;
  readonly markerChannel: TransactionMarkerChannelManager;
  private readonly log: Logger;
  private readonly generateProducerId: () => Promise<bigint>;
  private readonly partitionForGroup: (groupId: string) => number;
  private readonly now: () => number;
  private active = false;
  private abortTimer: NodeJS.Timeout | undefined;

  constructor(o: TransactionCoordinatorOptions) {
    this.config = { ...DEFAULT_TRANSACTION_CONFIG, ...o.config };
    this.log = o.logger.child({ component: 'transaction-coordinator' });
    this.now = o.now ?? Date.now;
    this.generateProducerId = o.generateProducerId;
    this.partitionForGroup = o.partitionForGroup;
    this.txnManager = new TransactionStateManager(o.brokerId, this.config, o.storage, this.log, this.now);
    this.markerChannel = new TransactionMarkerChannelManager({
      stateManager: this.txnManager,
      leaderFor: o.leaderFor,
      send: o.sendMarkers,
      logger: this.log,
      retryBackoffMs: o.markerRetryBackoffMs,
    });
  }

  /** `partitionCount`: `__transaction_state`'s real count when it exists, else transaction.state.log.num.partitions. */
  startup(partitionCount: number = this.config.transactionLogNumPartitions, enableTransactionalIdExpiration = true): void {
    const abort = () => void this.abortTimedOutTransactions().catch((err: unknown) => this.log.error({ err }, 'aborting timed-out transactions failed'));
    this.abortTimer = setInterval(abort, Math.max(1, this.config.abortTimedOutTransactionsIntervalMs));
    this.abortTimer.unref();
    this.txnManager.startup(partitionCount, enableTransactionalIdExpiration);
    this.active = true;
    this.log.info('transaction coordinator started');
  }

  async shutdown(): Promise<void> {
    this.active = false;
    clearInterval(this.abortTimer);
    this.markerChannel.shutdown();
    await this.txnManager.shutdown();
    this.log.info('transaction coordinator shut down');
  }

  get isActive(): boolean {
    return this.active;
  }

  partitionFor(transactionalId: string): number {
    return this.txnManager.partitionFor(transactionalId);
  }

  private async newProducerId(): Promise<{ producerId: bigint } | { error: number }> {
    try {
      return { producerId: await this.generateProducerId() };
    } catch (err) {
      this.log.warn({ err }, 'could not generate a producer id');
      return { error: errorCodeOf(err) };
    }
  }

  /**
   * InitProducerId. A null transactional id gets a fresh producer id (idempotence). Otherwise the
   * id's epoch is bumped (a new id at epoch 0 once exhausted); an open transaction is aborted first
   * (CONCURRENT_TRANSACTIONS: the client retries). `expected` (KIP-360) continues that producer:
   * another current producer id answers PRODUCER_FENCED.
   */
  async handleInitProducerId(
    transactionalId: string | null,
    transactionTimeoutMs: number,
    expected: ProducerIdAndEpoch | null,
    apiVersion = 4,
  ): Promise<InitProducerIdResult> {
    const r = await this.guarded('InitProducerId', transactionalId, () => this.initProducerId(transactionalId, transactionTimeoutMs, expected), initError);
    return { ...r, errorCode: producerFencedErrorForVersion(TxnApiKey.InitProducerId, apiVersion, r.errorCode) };
  }

  private async initProducerId(
    transactionalId: string | null,
    transactionTimeoutMs: number,
    expected: ProducerIdAndEpoch | null,
  ): Promise<InitProducerIdResult> {
    if (transactionalId === null) {
      const id = await this.newProducerId();
      return 'error' in id ? initError(id.error) : { errorCode: ErrorCode.NONE, producerId: id.producerId, producerEpoch: 0 };
    }
    if (transactionalId === '') return initError(ErrorCode.INVALID_REQUEST);
    if (!this.txnManager.validateTransactionTimeoutMs(transactionTimeoutMs)) return initError(ErrorCode.INVALID_TRANSACTION_TIMEOUT);

    let existing = this.txnManager.getTransactionState(transactionalId);
    if (!('found' in existing)) return initError(existing.error);
    if (existing.found === undefined) {
      const id = await this.newProducerId();
      if ('error' in id) return initError(id.error);
      const created = new TransactionMetadata(transactionalId, {
        producerId: id.producerId,
        producerEpoch: NO_PRODUCER_EPOCH,
        txnTimeoutMs: transactionTimeoutMs,
        state: TransactionState.Empty,
        txnLastUpdateTimestamp: this.now(),
      });
      // the partition may have moved while the id was generated
      existing = this.txnManager.putTransactionStateIfNotExists(created);
      if (!('found' in existing) || existing.found === undefined) return initError(existing.error);
    }
    let prepared = this.prepareInitProducerIdTransit(transactionalId, transactionTimeoutMs, existing.found, expected, undefined);
    if (prepared === 'needs-producer-id') {
      // the epochs are exhausted: rotate to a new producer id, then check again (state may have moved meanwhile)
      const id = await this.newProducerId();
      if ('error' in id) return initError(id.error);
      const again = this.txnManager.getTransactionState(transactionalId);
      if (!('found' in again)) return initError(again.error);
      if (again.found === undefined) return initError(ErrorCode.NOT_COORDINATOR);
      prepared = this.prepareInitProducerIdTransit(transactionalId, transactionTimeoutMs, again.found, expected, id.producerId);
    }
    if (prepared === 'needs-producer-id') throw new Error('unreachable: a producer id was supplied');
    if ('error' in prepared) return initError(prepared.error);

    const { coordinatorEpoch, transit } = prepared;
    if (transit.txnState === TransactionState.PrepareEpochFence) {
      // abort the open transaction; the client retries and then gets the bumped epoch
      const error = await this.endTransaction(transactionalId, transit.producerId, transit.producerEpoch, TransactionResult.ABORT, false);
      return initError(error !== ErrorCode.NONE ? error : ErrorCode.CONCURRENT_TRANSACTIONS);
    }
    const error = await this.txnManager.appendTransactionToLog(transactionalId, coordinatorEpoch, transit);
    if (error !== ErrorCode.NONE) {
      this.log.info({ transactionalId, error: errorName(error) }, 'answering an InitProducerId request with an error');
      return initError(error);
    }
    this.log.info(
      { transactionalId, producerId: transit.producerId, producerEpoch: transit.producerEpoch, partition: this.partitionFor(transactionalId) },
      'initialized transactional id',
    );
    return { errorCode: ErrorCode.NONE, producerId: transit.producerId, producerEpoch: transit.producerEpoch };
  }

  private prepareInitProducerIdTransit(
    transactionalId: string,
    transactionTimeoutMs: number,
    { coordinatorEpoch, metadata: m }: CoordinatorEpochAndTxnMetadata,
    expected: ProducerIdAndEpoch | null,
    rotatedProducerId: bigint | undefined,
  ): Prepared | 'needs-producer-id' {
    // KIP-360: continue only a producer that is still current (or just created, or retrying a rotation it missed the answer to)
    const validExpected =
      expected === null ||
      m.producerEpoch === NO_PRODUCER_EPOCH ||
      expected.producerId === m.producerId ||
      (expected.producerId === m.lastProducerId && isEpochExhausted(expected.producerEpoch));
    if (m.pendingTransitionInProgress) return { error: ErrorCode.CONCURRENT_TRANSACTIONS };
    if (!validExpected) return { error: ErrorCode.PRODUCER_FENCED };
    switch (m.state) {
      case TransactionState.PrepareAbort:
      case TransactionState.PrepareCommit:
        return { error: ErrorCode.CONCURRENT_TRANSACTIONS };
      case TransactionState.CompleteAbort:
      case TransactionState.CompleteCommit:
      case TransactionState.Empty: {
        if (m.isProducerEpochExhausted && (expected === null || expected.producerEpoch === m.producerEpoch)) {
          if (rotatedProducerId === undefined) return 'needs-producer-id';
          return { coordinatorEpoch, transit: m.prepareProducerIdRotation(rotatedProducerId, transactionTimeoutMs, this.now(), expected !== null) };
        }
        const r = m.prepareIncrementProducerEpoch(transactionTimeoutMs, expected?.producerEpoch ?? null, this.now());
        return 'error' in r ? { error: ErrorCode[r.error] } : { coordinatorEpoch, transit: r.transit };
      }
      case TransactionState.Ongoing:
        // this epoch is never returned: the transaction is aborted and the client retries, bumping again
        // (and rotating the producer id if this fence exhausted the epochs)
        return { coordinatorEpoch, transit: m.prepareFenceProducerEpoch() };
      default:
        throw new Error(
          `Found transactionalId ${transactionalId} with state ${m.stateName}. This is illegal as we should never have transitioned to this state.`,
        );
    }
  }

  /** AddPartitionsToTxn: the partitions join the producer's transaction (Ongoing), answered once written. */
  async handleAddPartitionsToTransaction(
    transactionalId: string,
    producerId: bigint,
    producerEpoch: number,
    partitions: readonly TopicPartition[],
    apiVersion = 3,
  ): Promise<number> {
    const error = await this.guarded(
      'AddPartitionsToTxn',
      transactionalId,
      () => this.addPartitions(transactionalId, producerId, producerEpoch, partitions),
      (e) => e,
    );
    return producerFencedErrorForVersion(TxnApiKey.AddPartitionsToTxn, apiVersion, error);
  }

  /** AddOffsetsToTxn: the group's `__consumer_offsets` partition joins the transaction. */
  async handleAddOffsetsToTransaction(transactionalId: string, producerId: bigint, producerEpoch: number, groupId: string, apiVersion = 3): Promise<number> {
    const error = await this.guarded(
      'AddOffsetsToTxn',
      transactionalId,
      () => this.addPartitions(transactionalId, producerId, producerEpoch, [{ topic: GROUP_METADATA_TOPIC_NAME, partition: this.partitionForGroup(groupId) }]),
      (e) => e,
    );
    return producerFencedErrorForVersion(TxnApiKey.AddOffsetsToTxn, apiVersion, error);
  }

  private async addPartitions(transactionalId: string, producerId: bigint, producerEpoch: number, partitions: readonly TopicPartition[]): Promise<number> {
    if (!transactionalId) return ErrorCode.INVALID_REQUEST;
    const r = this.txnManager.getTransactionState(transactionalId);
    if (!('found' in r)) return r.error;
    if (r.found === undefined) return ErrorCode.INVALID_PRODUCER_ID_MAPPING;
    const { coordinatorEpoch, metadata: m } = r.found;
    if (m.producerId !== producerId) return ErrorCode.INVALID_PRODUCER_ID_MAPPING;
    if (m.producerEpoch !== producerEpoch) return ErrorCode.PRODUCER_FENCED;
    if (m.pendingTransitionInProgress) return ErrorCode.CONCURRENT_TRANSACTIONS;
    if (m.state === TransactionState.PrepareCommit || m.state === TransactionState.PrepareAbort) return ErrorCode.CONCURRENT_TRANSACTIONS;
    // already in the transaction: nothing to write
    if (m.state === TransactionState.Ongoing && partitions.every((tp) => m.topicPartitions.has(tp))) return ErrorCode.NONE;
    const transit = m.prepareAddPartitions(partitions, this.now());
    return this.txnManager.appendTransactionToLog(transactionalId, coordinatorEpoch, transit);
  }

  /**
   * EndTxn: writes PrepareCommit/PrepareAbort and answers, then sends the markers. A retry of a
   * completed (or completing) transaction with the same result answers NONE (CONCURRENT_TRANSACTIONS
   * while completing); the other result answers INVALID_TXN_STATE.
   */
  async handleEndTransaction(transactionalId: string, producerId: bigint, producerEpoch: number, result: TransactionResult, apiVersion = 3): Promise<number> {
    const error = await this.guarded(
      'EndTxn',
      transactionalId,
      () => this.endTransaction(transactionalId, producerId, producerEpoch, result, true),
      (e) => e,
    );
    return producerFencedErrorForVersion(TxnApiKey.EndTxn, apiVersion, error);
  }

  /** A state that should never happen (Kafka's IllegalStateException) still answers the caller: UNKNOWN_SERVER_ERROR. */
  private async guarded<T>(api: string, transactionalId: string | null, f: () => Promise<T>, onError: (code: number) => T): Promise<T> {
    try {
      return await f();
    } catch (err) {
      this.log.error({ err, api, transactionalId }, 'unexpected error handling a transaction request');
      return onError(errorCodeOf(err));
    }
  }

  private invalidState(transactionalId: string, state: TransactionState, result: TransactionResult): { error: number } {
    this.log.debug(
      { transactionalId, state: TRANSACTION_STATE_NAMES[state], result: result === TransactionResult.COMMIT ? 'COMMIT' : 'ABORT' },
      'transaction marker result invalid in this state',
    );
    return { error: ErrorCode.INVALID_TXN_STATE };
  }

  private async endTransaction(
    transactionalId: string,
    producerId: bigint,
    producerEpoch: number,
    result: TransactionResult,
    isFromClient: boolean,
  ): Promise<number> {
    if (!transactionalId) return ErrorCode.INVALID_REQUEST;
    const commit = result === TransactionResult.COMMIT;
    let isEpochFence = false;
    const preAppend = ((): Prepared => {
      const r = this.txnManager.getTransactionState(transactionalId);
      if (!('found' in r)) return { error: r.error };
      if (r.found === undefined) return { error: ErrorCode.INVALID_PRODUCER_ID_MAPPING };
      const { coordinatorEpoch, metadata: m } = r.found;
      if (m.producerId !== producerId) return { error: ErrorCode.INVALID_PRODUCER_ID_MAPPING };
      // a client's epoch must be the current one; the coordinator's own (fencing) may be one ahead
      if ((isFromClient && producerEpoch !== m.producerEpoch) || producerEpoch < m.producerEpoch) return { error: ErrorCode.PRODUCER_FENCED };
      if (m.pendingState !== null && m.pendingState !== TransactionState.PrepareEpochFence) return { error: ErrorCode.CONCURRENT_TRANSACTIONS };
      switch (m.state) {
        case TransactionState.Ongoing: {
          const next = commit ? TransactionState.PrepareCommit : TransactionState.PrepareAbort;
          if (next === TransactionState.PrepareAbort && m.pendingState === TransactionState.PrepareEpochFence) {
            // make way for PrepareAbort, written with the fencing epoch
            isEpochFence = true;
            m.pendingState = null;
            m.producerEpoch = producerEpoch;
            m.lastProducerEpoch = NO_PRODUCER_EPOCH;
          }
          return { coordinatorEpoch, transit: m.prepareAbortOrCommit(next, this.now()) };
        }
        case TransactionState.CompleteCommit:
          return commit ? { error: ErrorCode.NONE } : this.invalidState(transactionalId, m.state, result);
        case TransactionState.CompleteAbort:
          return !commit ? { error: ErrorCode.NONE } : this.invalidState(transactionalId, m.state, result);
        case TransactionState.PrepareCommit:
          return commit ? { error: ErrorCode.CONCURRENT_TRANSACTIONS } : this.invalidState(transactionalId, m.state, result);
        case TransactionState.PrepareAbort:
          return !commit ? { error: ErrorCode.CONCURRENT_TRANSACTIONS } : this.invalidState(transactionalId, m.state, result);
        case TransactionState.Empty:
          return this.invalidState(transactionalId, m.state, result);
        default:
          throw new Error(
            `Found transactionalId ${transactionalId} with state ${m.stateName}. This is illegal as we should never have transitioned to this state.`,
          );
      }
    })();
    if ('error' in preAppend) return preAppend.error;

    const { coordinatorEpoch, transit } = preAppend;
    const error = await this.txnManager.appendTransactionToLog(transactionalId, coordinatorEpoch, transit);
    const log = this.log.child({ transactionalId, coordinatorEpoch, result: commit ? 'COMMIT' : 'ABORT' });
    if (error !== ErrorCode.NONE) {
      log.info({ error: errorName(error) }, 'writing the end of the transaction failed; not sending markers');
      if (isEpochFence) {
        const r = this.txnManager.getTransactionState(transactionalId);
        if ('found' in r && r.found !== undefined && r.found.coordinatorEpoch === coordinatorEpoch) {
          // the bumped epoch was never returned to a client: the next fence reuses it
          r.found.metadata.hasFailedEpochFence = true;
          log.warn({ producerEpoch: transit.producerEpoch }, 'failed to write an epoch fence');
        }
      }
      return error;
    }

    // the Prepare* record is written: prepare the completion and send the markers
    const r = this.txnManager.getTransactionState(transactionalId);
    let preSend: { error: number } | { metadata: TransactionMetadata; complete: TxnTransitMetadata };
    if (!('found' in r)) preSend = { error: r.error };
    else if (r.found === undefined)
      throw new Error(`The coordinator still owns the transaction partition for ${transactionalId}, but there is no metadata in the cache`);
    else if (r.found.coordinatorEpoch !== coordinatorEpoch) preSend = { error: ErrorCode.NOT_COORDINATOR };
    else {
      const m = r.found.metadata;
      if (m.producerId !== producerId) preSend = { error: ErrorCode.INVALID_PRODUCER_ID_MAPPING };
      else if (m.producerEpoch !== producerEpoch) preSend = { error: ErrorCode.PRODUCER_FENCED };
      else if (m.pendingTransitionInProgress) preSend = { error: ErrorCode.CONCURRENT_TRANSACTIONS };
      else if ((m.state === TransactionState.PrepareCommit && commit) || (m.state === TransactionState.PrepareAbort && !commit)) {
        preSend = { metadata: m, complete: m.prepareComplete(this.now()) };
      } else preSend = this.invalidState(transactionalId, m.state, result);
    }
    if ('error' in preSend) {
      log.info({ error: errorName(preSend.error) }, 'not sending transaction markers after writing the end of the transaction');
      return preSend.error;
    }
    this.markerChannel.addTxnMarkersToSend(coordinatorEpoch, result, preSend.metadata, preSend.complete);
    return ErrorCode.NONE;
  }

  /** Aborts Ongoing transactions past their timeout by fencing their producer (one epoch up). */
  async abortTimedOutTransactions(): Promise<void> {
    const aborts: Array<Promise<void>> = [];
    for (const t of this.txnManager.timedOutTransactions()) aborts.push(this.abortTimedOut(t));
    await Promise.all(aborts);
  }

  private async abortTimedOut(t: TransactionalIdAndProducerIdEpoch): Promise<void> {
    const r = this.txnManager.getTransactionState(t.transactionalId);
    if (!('found' in r) || r.found === undefined) return;
    const m = r.found.metadata;
    if (m.producerId !== t.producerId) {
      this.log.error(
        { transactionalId: t.transactionalId, expected: t.producerId, found: m.producerId },
        'found incorrect producerId when expiring a transaction',
      );
      return;
    }
    if (m.pendingTransitionInProgress) return;
    const fence = m.prepareFenceProducerEpoch();
    const error = await this.endTransaction(t.transactionalId, fence.producerId, fence.producerEpoch, TransactionResult.ABORT, false);
    const log = this.log.child({ transactionalId: t.transactionalId, producerId: t.producerId, producerEpoch: t.producerEpoch });
    if (error === ErrorCode.NONE) log.info('rolled back an ongoing transaction after its timeout');
    else if (error === ErrorCode.INVALID_PRODUCER_ID_MAPPING || error === ErrorCode.PRODUCER_FENCED || error === ErrorCode.CONCURRENT_TRANSACTIONS) {
      log.debug({ error: errorName(error) }, 'rollback of a timed-out transaction cancelled');
    } else log.warn({ error: errorName(error) }, 'rollback of a timed-out transaction failed');
  }

  /** This broker leads `__transaction_state` partition `partition` at `coordinatorEpoch` (its leader epoch): load it. */
  onElection(partition: number, coordinatorEpoch: number): Promise<void> {
    this.log.info({ partition, coordinatorEpoch }, 'elected as the transaction coordinator for a partition');
    // drop whatever an earlier term left behind first
    this.markerChannel.removeMarkersForTxnTopicPartition(partition);
    return this.txnManager.loadTransactionsForTxnTopicPartition(partition, coordinatorEpoch, (epoch, result, metadata, transit) =>
      this.markerChannel.addTxnMarkersToSend(epoch, result, metadata, transit),
    );
  }

  /** This broker no longer leads the partition (`coordinatorEpoch` null: the replica was deleted by StopReplica). */
  onResignation(partition: number, coordinatorEpoch: number | null): void {
    this.log.info({ partition, coordinatorEpoch }, 'resigned as the transaction coordinator for a partition');
    this.txnManager.removeTransactionsForTxnTopicPartition(partition, coordinatorEpoch);
    this.markerChannel.removeMarkersForTxnTopicPartition(partition);
  }

  /** ListTransactions. */
  handleListTransactions(filterProducerIds: readonly bigint[], filterStates: readonly string[]): ListTransactionsResult {
    if (!this.active) return { errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, unknownStateFilters: [], transactionStates: [] };
    return this.txnManager.listTransactionStates(filterProducerIds, filterStates);
  }

  /** DescribeTransactions, for one transactional id. */
  handleDescribeTransactions(transactionalId: string): DescribedTransaction {
    const out: DescribedTransaction = {
      errorCode: ErrorCode.NONE,
      transactionalId,
      transactionState: '',
      transactionTimeoutMs: 0,
      transactionStartTimeMs: -1,
      producerId: NO_PRODUCER_ID,
      producerEpoch: NO_PRODUCER_EPOCH,
      topics: [],
    };
    if (!this.active) return { ...out, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE };
    if (transactionalId === '') return { ...out, errorCode: ErrorCode.INVALID_REQUEST };
    const r = this.txnManager.getTransactionState(transactionalId);
    if (!('found' in r)) return { ...out, errorCode: r.error };
    // Dead: being expired
    if (r.found === undefined || r.found.metadata.state === TransactionState.Dead) return { ...out, errorCode: ErrorCode.TRANSACTIONAL_ID_NOT_FOUND };
    const m = r.found.metadata;
    return {
      ...out,
      transactionState: TRANSACTION_STATE_NAMES[m.state],
      transactionTimeoutMs: m.txnTimeoutMs,
      transactionStartTimeMs: m.txnStartTimestamp,
      producerId: m.producerId,
      producerEpoch: m.producerEpoch,
      topics: m.topicPartitions.byTopic().map((p) => ({ topic: p.topic, partitions: p.partitionIds })),
    };
  }

  /** `__transaction_state`'s topic configs (Kafka's transactionTopicConfigs). */
  transactionTopicConfigs(): Record<string, string> {
    return this.txnManager.transactionTopicConfigs();
  }
}
