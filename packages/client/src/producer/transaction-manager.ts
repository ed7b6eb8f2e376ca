/**
 * The transactional part of Kafka's TransactionManager (KIP-98, KIP-360, KIP-588): the state
 * machine of a producer with a transactional.id and its requests to the transaction coordinator
 * (FindCoordinator key type 1) and, for sendOffsetsToTransaction, the group coordinator.
 *
 *   UNINITIALIZED → INITIALIZING → READY → IN_TRANSACTION → COMMITTING_TRANSACTION → READY
 *                                              │  ↑                 │
 *                                              ↓  │ (abort)         ↓
 *                                        ABORTABLE_ERROR → ABORTING_TRANSACTION → READY
 *   any → FATAL_ERROR (fencing, authorization, unexpected coordinator errors)
 *
 * Partitions a transaction writes to are added with AddPartitionsToTxn before their first Produce
 * (the sender holds their batches until then). A failed batch or a failed transactional request
 * puts the transaction in ABORTABLE_ERROR: only abortTransaction() is possible then. PRODUCER_FENCED
 * (and INVALID_PRODUCER_EPOCH from the coordinator), TRANSACTIONAL_ID_AUTHORIZATION_FAILED and the
 * like are fatal: every later call fails with that error; the producer can only be closed.
 * Sequence trouble (an epoch bump the idempotent producer would run by itself) is abortable here,
 * and the abort bumps the epoch with InitProducerId(producer id, epoch) (KIP-360).
 */
import { API_KEYS, ErrorCode, KafkaError, errorName, topicPartitionKey } from '@samsa/protocol';
import { CoordinatorType, findCoordinator } from '../admin-groups.js';
import type { Cluster } from '../cluster.js';
import type { Connection } from '../connection.js';
import { ConnectionError, RequestTimeoutError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { IdempotenceManager } from './idempotence.js';

export const TransactionState = {
  UNINITIALIZED: 'UNINITIALIZED',
  INITIALIZING: 'INITIALIZING',
  READY: 'READY',
  IN_TRANSACTION: 'IN_TRANSACTION',
  COMMITTING_TRANSACTION: 'COMMITTING_TRANSACTION',
  ABORTING_TRANSACTION: 'ABORTING_TRANSACTION',
  ABORTABLE_ERROR: 'ABORTABLE_ERROR',
  FATAL_ERROR: 'FATAL_ERROR',
} as const;
export type TransactionState = (typeof TransactionState)[keyof typeof TransactionState];

/** Kafka's ConsumerGroupMetadata (consumer.groupMetadata()). */
export interface ConsumerGroupMetadata {
  groupId: string | null;
  generationId?: number;
  memberId?: string;
  groupInstanceId?: string | null;
}

/** An offset to commit with the transaction (Kafka's OffsetAndMetadata per TopicPartition). */
export interface TransactionOffset {
  topic: string;
  partition: number;
  /** The offset of the next record to consume. */
  offset: bigint | number;
  leaderEpoch?: number;
  metadata?: string | null;
}

export interface TransactionManagerOptions {
  transactionalId: string;
  transactionTimeoutMs: number;
  /** How long initTransactions / commit / abort / sendOffsets may block (max.block.ms). */
  maxBlockMs: number;
  retryBackoffMs: number;
  requestTimeoutMs: number;
}

/** A call not allowed in the current state (Java's IllegalStateException); error name INVALID_TXN_STATE. */
export class IllegalTransactionStateError extends KafkaError {
  constructor(message: string) {
    super('INVALID_TXN_STATE', message);
    this.name = 'IllegalTransactionStateError';
  }
}

/** A batch dropped because its transaction was aborted (Kafka's TransactionAbortedException). */
export class TransactionAbortedError extends KafkaError {
  constructor(message = 'Failing batch since transaction was aborted', options?: { cause?: unknown }) {
    super('TRANSACTION_ABORTABLE', message, options);
    this.name = 'TransactionAbortedError';
  }
}

const FATAL = new Set<number>([
  ErrorCode.PRODUCER_FENCED,
  ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
  ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
  ErrorCode.UNSUPPORTED_VERSION,
  ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT,
]);
/** Retried (after a backoff) until max.block.ms. */
const RETRY = new Set<number>([
  ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
  ErrorCode.CONCURRENT_TRANSACTIONS,
  ErrorCode.REQUEST_TIMED_OUT,
  ErrorCode.NETWORK_EXCEPTION,
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
]);
/** The coordinator moved: look it up again, then retry. */
const RELOOKUP = new Set<number>([ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR]);
/** AddOffsetsToTxn errors that are abortable (others not retried are fatal). */
const ADD_OFFSETS_ABORTABLE = new Set<number>([ErrorCode.GROUP_AUTHORIZATION_FAILED, ErrorCode.UNKNOWN_PRODUCER_ID, ErrorCode.INVALID_PRODUCER_ID_MAPPING]);
/** Produce errors that need a new epoch (the idempotent producer would bump it by itself). */
const BUMP = new Set<number>([ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, ErrorCode.UNKNOWN_PRODUCER_ID, ErrorCode.INVALID_PRODUCER_ID_MAPPING]);

/**
 * Kafka's ADD_PARTITIONS_RETRY_BACKOFF_MS: CONCURRENT_TRANSACTIONS before anything of a transaction
 * reached the coordinator means the previous one is still completing: retried after 20 ms, not
 * retry.backoff.ms. Kafka does it for AddPartitionsToTxn; here also AddOffsetsToTxn, sent beside it.
 */
export const FIRST_ADD_RETRY_BACKOFF_MS = 20;

type Outcome = 'done' | 'retry' | 'relookup';
/** Filled in by classify(): the error code behind a retry / relookup outcome. */
type RetryNote = { code: number };
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export class TransactionManager {
  private _state: TransactionState = TransactionState.UNINITIALIZED;
  private _lastError: KafkaError | undefined;
  private coordinators = new Map<string, number>();
  /** Partitions added to the current transaction (AddPartitionsToTxn answered). */
  private readonly added = new Set<string>();
  /** Partitions written to and not added yet. */
  private readonly pending = new Map<string, { topic: string; partition: number }>();
  private adding: Promise<void> | undefined;
  /** Partitions or offsets were added: the coordinator knows the transaction (EndTxn needed). */
  private transactionStarted = false;
  private epochBumpRequired = false;
  /** Counts completed transactions: an AddPartitionsToTxn answer for an earlier one is ignored. */
  private generation = 0;
  /** Called when partitions were added or the state changed: the sender should run. */
  onChange: () => void = () => undefined;

  constructor(
    private readonly cluster: Cluster,
    private readonly idempotence: IdempotenceManager,
    private readonly opts: TransactionManagerOptions,
    private readonly log: Logger,
  ) {}

  get transactionalId(): string {
    return this.opts.transactionalId;
  }

  get state(): TransactionState {
    return this._state;
  }

  get lastError(): KafkaError | undefined {
    return this._lastError;
  }

  get hasError(): boolean {
    return this._state === TransactionState.ABORTABLE_ERROR || this._state === TransactionState.FATAL_ERROR;
  }

  get hasFatalError(): boolean {
    return this._state === TransactionState.FATAL_ERROR;
  }

  get isAborting(): boolean {
    return this._state === TransactionState.ABORTING_TRANSACTION;
  }

  /** A transaction is open (begun and not completed). */
  get inTransaction(): boolean {
    return (
      this._state === TransactionState.IN_TRANSACTION ||
      this._state === TransactionState.COMMITTING_TRANSACTION ||
      this._state === TransactionState.ABORTING_TRANSACTION ||
      this._state === TransactionState.ABORTABLE_ERROR
    );
  }

  // ---- the producer's API ----------------------------------------------------------------

  /** InitProducerId with the transactional id: fences older producers of the id, completes their transaction. */
  async initTransactions(): Promise<void> {
    this.throwIfFatal();
    if (this._state !== TransactionState.UNINITIALIZED && this._state !== TransactionState.INITIALIZING)
      throw new IllegalTransactionStateError(
        `TransactionalId ${this.transactionalId}: Invalid transition attempted from state ${this._state} to state INITIALIZING`,
      );
    this.transition(TransactionState.INITIALIZING);
    await this.initProducerId(-1n, -1);
    this.transition(TransactionState.READY);
  }

  beginTransaction(): void {
    this.throwIfFatal();
    if (this._state !== TransactionState.READY)
      throw new IllegalTransactionStateError(
        `TransactionalId ${this.transactionalId}: Invalid transition attempted from state ${this._state} to state IN_TRANSACTION`,
      );
    this.transition(TransactionState.IN_TRANSACTION);
  }

  /** At send(): throws outside a transaction or when the transaction is in error. */
  checkSend(): void {
    this.throwIfFatal();
    if (this._state === TransactionState.ABORTABLE_ERROR)
      throw new KafkaError(
        this._lastError?.code ?? ErrorCode.TRANSACTION_ABORTABLE,
        `Cannot perform send because at least one previous transactional or idempotent request has failed with errors: ${this._lastError?.message ?? ''}`,
        { cause: this._lastError },
      );
    if (this._state !== TransactionState.IN_TRANSACTION) throw new IllegalTransactionStateError(`Cannot call send in state ${this._state}`);
  }

  /**
   * When a record is appended: its partition joins the transaction. A send accepted in the
   * transaction may be appended after commitTransaction() began (it waited for metadata, which
   * Java's send() does before returning); one appended after an abort began fails.
   */
  maybeAddPartition(topic: string, partition: number): void {
    if (this._state === TransactionState.ABORTING_TRANSACTION) throw new TransactionAbortedError();
    if (this._state !== TransactionState.COMMITTING_TRANSACTION) this.checkSend();
    const k = topicPartitionKey(topic, partition);
    if (!this.added.has(k) && !this.pending.has(k)) this.pending.set(k, { topic, partition });
  }

  /** Whether the sender may send batches of this partition (added to the transaction). */
  isPartitionAdded(topic: string, partition: number): boolean {
    return this.added.has(topicPartitionKey(topic, partition));
  }

  get hasPendingPartitions(): boolean {
    return this.pending.size > 0;
  }

  /**
   * AddPartitionsToTxn for the pending partitions (one request in flight; the sender calls this
   * whenever it runs). Retriable errors are retried; others put the transaction in error.
   */
  addPendingPartitions(): void {
    if (this.adding || this.pending.size === 0 || this.hasError) return;
    this.adding = this.addPartitions()
      .catch(async (err: unknown) => {
        this.onRequestError(err, 'AddPartitionsToTxn');
        // not in error (a timeout): tried again when the sender runs next, not at once
        if (!this.hasError) await sleep(this.opts.retryBackoffMs);
      })
      .finally(() => {
        this.adding = undefined;
        this.onChange();
      });
  }

  /** AddOffsetsToTxn to the transaction coordinator, then TxnOffsetCommit to the group coordinator. */
  async sendOffsetsToTransaction(offsets: readonly TransactionOffset[], group: ConsumerGroupMetadata): Promise<void> {
    this.throwIfFatal();
    if (this._state === TransactionState.ABORTABLE_ERROR) throw this.abortableError('send offsets');
    if (this._state !== TransactionState.IN_TRANSACTION)
      throw new IllegalTransactionStateError(`Cannot send offsets if a transaction is not in progress (currentState= ${this._state})`);
    if (!group.groupId) throw new KafkaError('INVALID_GROUP_ID', 'sendOffsetsToTransaction needs a consumer group id');
    const groupId = group.groupId;
    try {
      await this.coordinatorCall('AddOffsetsToTxn', CoordinatorType.TRANSACTION, this.transactionalId, async (conn, note) => {
        const res = await conn.send(API_KEYS.AddOffsetsToTxn, { transactionalId: this.transactionalId, ...this.producerIdAndEpoch(), groupId });
        return this.classify('AddOffsetsToTxn', res.errorCode, (code) => (ADD_OFFSETS_ABORTABLE.has(code) ? 'abortable' : 'fatal'), note);
      });
      this.transactionStarted = true;
      let left = [...offsets];
      await this.coordinatorCall('TxnOffsetCommit', CoordinatorType.GROUP, groupId, async (conn, note) => {
        const byTopic = new Map<string, TransactionOffset[]>();
        for (const o of left) byTopic.set(o.topic, [...(byTopic.get(o.topic) ?? []), o]);
        const res = await conn.send(API_KEYS.TxnOffsetCommit, {
          transactionalId: this.transactionalId,
          groupId,
          ...this.producerIdAndEpoch(),
          generationId: group.generationId ?? -1,
          memberId: group.memberId ?? '',
          groupInstanceId: group.groupInstanceId ?? null,
          topics: [...byTopic].map(([name, ps]) => ({
            name,
            partitions: ps.map((p) => ({
              partitionIndex: p.partition,
              committedOffset: BigInt(p.offset),
              committedLeaderEpoch: p.leaderEpoch ?? -1,
              committedMetadata: p.metadata ?? '',
            })),
          })),
        });
        let outcome: Outcome = 'done';
        const retry: TransactionOffset[] = [];
        for (const t of res.topics) {
          for (const p of t.partitions) {
            const o = this.classify('TxnOffsetCommit', p.errorCode, () => 'abortable', note);
            if (o !== 'done') {
              retry.push(...left.filter((x) => x.topic === t.name && x.partition === p.partitionIndex));
              if (outcome !== 'relookup') outcome = o;
            }
          }
        }
        left = retry;
        return outcome;
      });
    } catch (err) {
      throw this.onRequestError(err, 'sendOffsetsToTransaction');
    }
  }

  /** Flushes (`flush`: the producer's), then EndTxn(commit). */
  async commitTransaction(flush: () => Promise<void>): Promise<void> {
    this.throwIfFatal();
    if (this._state === TransactionState.ABORTABLE_ERROR) throw this.abortableError('commit');
    if (this._state !== TransactionState.IN_TRANSACTION && this._state !== TransactionState.COMMITTING_TRANSACTION)
      throw new IllegalTransactionStateError(
        `TransactionalId ${this.transactionalId}: Invalid transition attempted from state ${this._state} to state COMMITTING_TRANSACTION`,
      );
    this.transition(TransactionState.COMMITTING_TRANSACTION);
    await flush();
    this.throwIfFatal();
    if (this.hasError) throw this.abortableError('commit');
    await this.endTxn(true);
    this.completeTransaction();
  }

  /**
   * Drops what was not sent yet (`dropUnsent`), waits for what is in flight (`flush`), then
   * EndTxn(abort) — and, when the epoch must be bumped, InitProducerId with the current id/epoch.
   */
  async abortTransaction(dropUnsent: (err: Error) => void, flush: () => Promise<void>): Promise<void> {
    this.throwIfFatal();
    if (
      this._state !== TransactionState.IN_TRANSACTION &&
      this._state !== TransactionState.ABORTABLE_ERROR &&
      this._state !== TransactionState.ABORTING_TRANSACTION
    )
      throw new IllegalTransactionStateError(
        `TransactionalId ${this.transactionalId}: Invalid transition attempted from state ${this._state} to state ABORTING_TRANSACTION`,
      );
    this.transition(TransactionState.ABORTING_TRANSACTION);
    this.pending.clear();
    dropUnsent(new TransactionAbortedError(undefined, { cause: this._lastError }));
    await flush();
    // an AddPartitionsToTxn still in flight: its partitions are part of what EndTxn aborts
    await this.adding;
    this.throwIfFatal();
    await this.endTxn(false);
    if (this.epochBumpRequired || this.idempotence.bumpRequested) {
      const { producerId, producerEpoch } = this.producerIdAndEpoch();
      await this.initProducerId(producerId, producerEpoch);
      this.epochBumpRequired = false;
    }
    this.completeTransaction();
  }

  // ---- called by the sender ---------------------------------------------------------------

  /** A batch of the transaction failed: fatal for fencing/authorization errors, abortable otherwise. */
  onBatchFailed(err: Error): void {
    const code = err instanceof KafkaError ? err.code : ErrorCode.UNKNOWN_SERVER_ERROR;
    if (err instanceof TransactionAbortedError) return;
    if (FATAL.has(code)) {
      this.fatal(err instanceof KafkaError ? err : new KafkaError(code, err.message, { cause: err }));
      return;
    }
    if (BUMP.has(code)) this.epochBumpRequired = true;
    if (this._state === TransactionState.ABORTING_TRANSACTION) return;
    this.abortable(err instanceof KafkaError ? err : new KafkaError(code, err.message, { cause: err }));
  }

  /** The idempotent producer wants a new epoch: in a transaction that is an abortable error. */
  onEpochBumpNeeded(): void {
    this.epochBumpRequired = true;
    if (this._state === TransactionState.IN_TRANSACTION || this._state === TransactionState.COMMITTING_TRANSACTION)
      this.abortable(
        new KafkaError('OUT_OF_ORDER_SEQUENCE_NUMBER', 'The producer epoch must be bumped (a sequence gap or an unknown producer id): abort the transaction'),
      );
  }

  // ---- internals --------------------------------------------------------------------------

  private producerIdAndEpoch(): { producerId: bigint; producerEpoch: number } {
    return { producerId: this.idempotence.producerId, producerEpoch: this.idempotence.producerEpoch };
  }

  private transition(to: TransactionState): void {
    if (to !== this._state) this.log.debug({ transactionalId: this.transactionalId, from: this._state, to }, 'transaction state');
    this._state = to;
    if (to === TransactionState.READY || to === TransactionState.IN_TRANSACTION) this._lastError = undefined;
    this.onChange();
  }

  private completeTransaction(): void {
    this.generation++;
    this.added.clear();
    this.pending.clear();
    this.transactionStarted = false;
    this.transition(TransactionState.READY);
  }

  private abortable(err: KafkaError): void {
    if (this._state === TransactionState.FATAL_ERROR) return;
    this._lastError = err;
    this.log.warn({ transactionalId: this.transactionalId, error: err.errorName, err: err.message }, 'transaction must be aborted');
    this.transition(TransactionState.ABORTABLE_ERROR);
  }

  private fatal(err: KafkaError): void {
    if (this._state === TransactionState.FATAL_ERROR) return;
    this._lastError = err;
    this.log.error({ transactionalId: this.transactionalId, error: err.errorName, err: err.message }, 'fatal transactional error');
    this.transition(TransactionState.FATAL_ERROR);
  }

  private throwIfFatal(): void {
    if (this._state === TransactionState.FATAL_ERROR) throw this._lastError!;
  }

  private abortableError(what: string): KafkaError {
    const e = this._lastError;
    return new KafkaError(
      e?.code ?? ErrorCode.TRANSACTION_ABORTABLE,
      `Cannot ${what} because at least one previous transactional request has failed with errors: ${e?.message ?? ''}`,
      {
        cause: e,
      },
    );
  }

  /** An error thrown by a transactional request: a TransactionalError moves the state; the error is returned to throw. */
  private onRequestError(err: unknown, what: string): Error {
    if (err instanceof TransactionalError) {
      if (err.fatal) this.fatal(err.error);
      else this.abortable(err.error);
      return err.error;
    }
    this.log.debug({ transactionalId: this.transactionalId, what, err: (err as Error).message }, 'transactional request failed');
    return err as Error;
  }

  /** What an error code means for a transactional request; throws a TransactionalError for abortable / fatal ones. */
  private classify(api: string, code: number, otherwise: (code: number) => 'abortable' | 'fatal', note: RetryNote): Outcome {
    if (code === ErrorCode.NONE) return 'done';
    if (RELOOKUP.has(code) || RETRY.has(code)) note.code = code;
    if (RELOOKUP.has(code)) return 'relookup';
    if (RETRY.has(code)) return 'retry';
    // a newer producer has the transactional id: Kafka reports both as PRODUCER_FENCED (ProducerFencedException)
    if (code === ErrorCode.INVALID_PRODUCER_EPOCH || code === ErrorCode.PRODUCER_FENCED)
      throw new TransactionalError(
        true,
        new KafkaError('PRODUCER_FENCED', `${api}: there is a newer producer with the same transactionalId ${this.transactionalId} (${errorName(code)})`),
      );
    if (FATAL.has(code))
      throw new TransactionalError(true, new KafkaError(code, `${api} failed for transactionalId ${this.transactionalId}: ${errorName(code)}`));
    const kind = otherwise(code);
    throw new TransactionalError(kind === 'fatal', new KafkaError(code, `${api} failed for transactionalId ${this.transactionalId}: ${errorName(code)}`));
  }

  /** Sends to the coordinator of `key` until `fn` reports done, retrying and re-finding the coordinator, within max.block.ms. */
  private async coordinatorCall(api: string, type: CoordinatorType, key: string, fn: (conn: Connection, note: RetryNote) => Promise<Outcome>): Promise<void> {
    const deadline = Date.now() + this.opts.maxBlockMs;
    let lastError: unknown;
    for (let attempt = 1; ; attempt++) {
      if (this.cluster.isClosed) throw new KafkaError('UNKNOWN_SERVER_ERROR', `${api}: the producer is closed`, { cause: lastError });
      const ck = `${type}:${key}`;
      let outcome: Outcome;
      const note: RetryNote = { code: ErrorCode.NONE };
      try {
        let node = this.coordinators.get(ck);
        if (node === undefined) {
          node = (await findCoordinator(this.cluster, key, type)).nodeId;
          this.coordinators.set(ck, node);
        }
        outcome = await fn(await this.cluster.connectionTo(node), note);
        if (outcome === 'done') return;
        lastError = new KafkaError(note.code || ErrorCode.UNKNOWN_SERVER_ERROR, `${api}: coordinator ${node} answered ${errorName(note.code)} (${outcome})`);
      } catch (err) {
        if (err instanceof TransactionalError) throw err;
        const retriable =
          err instanceof ConnectionError || err instanceof RequestTimeoutError || (err instanceof KafkaError && (err.retriable || RELOOKUP.has(err.code)));
        if (!retriable) throw err;
        lastError = err;
        outcome = 'relookup';
      }
      if (outcome === 'relookup') this.coordinators.delete(ck);
      const firstAdd = api === 'AddPartitionsToTxn' || api === 'AddOffsetsToTxn';
      const previousCompleting = firstAdd && outcome === 'retry' && note.code === ErrorCode.CONCURRENT_TRANSACTIONS && !this.transactionStarted;
      const backoff = previousCompleting
        ? Math.min(FIRST_ADD_RETRY_BACKOFF_MS, this.opts.retryBackoffMs)
        : Math.min(1000, this.opts.retryBackoffMs * 2 ** Math.min(attempt - 1, 4));
      if (Date.now() + backoff >= deadline)
        throw new KafkaError('REQUEST_TIMED_OUT', `Timeout expired after ${this.opts.maxBlockMs} ms while awaiting ${api}`, { cause: lastError });
      this.log.debug({ transactionalId: this.transactionalId, api, attempt, err: (lastError as Error).message }, 'retrying transactional request');
      await sleep(backoff);
    }
  }

  private async initProducerId(producerId: bigint, producerEpoch: number): Promise<void> {
    try {
      await this.coordinatorCall('InitProducerId', CoordinatorType.TRANSACTION, this.transactionalId, async (conn, note) => {
        const res = await conn.send(
          API_KEYS.InitProducerId,
          { transactionalId: this.transactionalId, transactionTimeoutMs: this.opts.transactionTimeoutMs, producerId, producerEpoch },
          // KIP-360: an epoch bump names the current producer id / epoch (v3+)
          producerId >= 0n ? { minVersion: 3 } : {},
        );
        const o = this.classify('InitProducerId', res.errorCode, () => 'fatal', note);
        if (o === 'done') {
          this.idempotence.setProducerIdAndEpoch(res.producerId, res.producerEpoch);
          this.log.info(
            { transactionalId: this.transactionalId, producerId: String(res.producerId), epoch: res.producerEpoch },
            'transactional producer id assigned',
          );
        }
        return o;
      });
    } catch (err) {
      throw this.onRequestError(err, 'InitProducerId');
    }
  }

  private async addPartitions(): Promise<void> {
    const batch = [...this.pending.values()];
    const generation = this.generation;
    const byTopic = new Map<string, number[]>();
    for (const p of batch) byTopic.set(p.topic, [...(byTopic.get(p.topic) ?? []), p.partition]);
    await this.coordinatorCall('AddPartitionsToTxn', CoordinatorType.TRANSACTION, this.transactionalId, async (conn, note) => {
      const res = await conn.send(API_KEYS.AddPartitionsToTxn, {
        transactionalId: this.transactionalId,
        ...this.producerIdAndEpoch(),
        topics: [...byTopic].map(([name, partitions]) => ({ name, partitions })),
      });
      let outcome: Outcome = 'done';
      let failure: TransactionalError | undefined;
      for (const t of res.resultsByTopic) {
        for (const p of t.resultsByPartition) {
          // OPERATION_NOT_ATTEMPTED: another partition of the request failed
          if (p.partitionErrorCode === ErrorCode.OPERATION_NOT_ATTEMPTED) continue;
          try {
            const o = this.classify('AddPartitionsToTxn', p.partitionErrorCode, (code) => (code === ErrorCode.INVALID_TXN_STATE ? 'fatal' : 'abortable'), note);
            if (o !== 'done' && outcome !== 'relookup') outcome = o;
          } catch (err) {
            if (!(err instanceof TransactionalError)) throw err;
            if (!failure || (err.fatal && !failure.fatal)) failure = err;
            if (BUMP.has(p.partitionErrorCode)) this.epochBumpRequired = true;
          }
        }
      }
      if (generation !== this.generation) return 'done'; // that transaction is over
      if (failure) throw failure;
      if (outcome === 'done') {
        for (const p of batch) {
          const k = topicPartitionKey(p.topic, p.partition);
          this.pending.delete(k);
          this.added.add(k);
        }
        this.transactionStarted = true;
        this.log.debug(
          { transactionalId: this.transactionalId, partitions: batch.map((p) => topicPartitionKey(p.topic, p.partition)) },
          'partitions added to the transaction',
        );
      }
      return outcome;
    });
  }

  private async endTxn(commit: boolean): Promise<void> {
    // nothing was added: the coordinator has no transaction to end (Kafka completes it locally)
    if (!this.transactionStarted) return;
    try {
      await this.coordinatorCall('EndTxn', CoordinatorType.TRANSACTION, this.transactionalId, async (conn, note) => {
        const res = await conn.send(API_KEYS.EndTxn, { transactionalId: this.transactionalId, ...this.producerIdAndEpoch(), committed: commit });
        return this.classify('EndTxn', res.errorCode, () => 'fatal', note);
      });
    } catch (err) {
      throw this.onRequestError(err, 'EndTxn');
    }
  }
}

/** A transactional request failed for good: `fatal` → FATAL_ERROR, else ABORTABLE_ERROR. */
class TransactionalError extends Error {
  constructor(
    readonly fatal: boolean,
    readonly error: KafkaError,
  ) {
    super(error.message, { cause: error });
  }
}
