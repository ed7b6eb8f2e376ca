/**
 * One transactional id's state as the coordinator caches it (Kafka 3.x's TransactionMetadata) and
 * the immutable target of a transition (TxnTransitMetadata). A transition is two steps: a
 * `prepare*` method validates it against the transition table, sets `pendingState` and returns the
 * transit metadata to write to `__transaction_state`; once that record is replicated,
 * `completeTransitionTo` applies it. Until then every other transition is refused.
 */
import { compareTopicPartitions, TopicPartitionMap, topicPartitionKey, type TopicPartition } from '@samsa/protocol';
import type { TransactionLogValue, TxnPartitions } from './transaction-log.js';
import { hasPendingTransaction, isValidTransition, TRANSACTION_STATE_NAMES, TransactionState } from './transaction-state.js';

/** RecordBatch.NO_PRODUCER_ID */
export const NO_PRODUCER_ID = -1n;
/** RecordBatch.NO_PRODUCER_EPOCH */
export const NO_PRODUCER_EPOCH = -1;
/** Java's Short.MaxValue: the last producer epoch, kept for fencing. */
export const MAX_PRODUCER_EPOCH = 32767;

/**
 * Kafka's TransactionMetadata.isEpochExhausted: the client may not use Short.MaxValue, so that the
 * coordinator can always fence it by one more bump; at Short.MaxValue - 1 the producer id rotates.
 */
export function isEpochExhausted(producerEpoch: number): boolean {
  return producerEpoch >= MAX_PRODUCER_EPOCH - 1;
}

/** An illegal transition or a transition completed against metadata it was not prepared on (Kafka's IllegalStateException). */
export class TransactionStateError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TransactionStateError';
  }
}

/** A set of (topic, partition). */
export class TopicPartitionSet implements Iterable<TopicPartition> {
  private readonly map = new TopicPartitionMap<true>();

  constructor(tps: Iterable<TopicPartition> = []) {
    for (const tp of tps) this.add(tp);
  }

  get size(): number {
    return this.map.size;
  }

  has(tp: TopicPartition): boolean {
    return this.map.has(tp.topic, tp.partition);
  }

  add(tp: TopicPartition): this {
    this.map.set(tp.topic, tp.partition, true);
    return this;
  }

  delete(tp: TopicPartition): boolean {
    return this.map.delete(tp.topic, tp.partition) !== undefined;
  }

  clear(): void {
    this.map.clear();
  }

  isSubsetOf(other: TopicPartitionSet): boolean {
    for (const tp of this) if (!other.has(tp)) return false;
    return true;
  }

  equals(other: TopicPartitionSet): boolean {
    return this.size === other.size && this.isSubsetOf(other);
  }

  /** Sorted by topic, then partition. */
  toArray(): TopicPartition[] {
    return [...this].sort(compareTopicPartitions);
  }

  /** Grouped by topic, as `__transaction_state` and DescribeTransactions carry them. */
  byTopic(): TxnPartitions[] {
    const out: TxnPartitions[] = [];
    for (const tp of this.toArray()) {
      const last = out[out.length - 1];
      if (last?.topic === tp.topic) last.partitionIds.push(tp.partition);
      else out.push({ topic: tp.topic, partitionIds: [tp.partition] });
    }
    return out;
  }

  [Symbol.iterator](): Iterator<TopicPartition> {
    return this.map.keys();
  }
}

/** The target of a transition, written to `__transaction_state` before it is applied (Kafka's TxnTransitMetadata). */
export interface TxnTransitMetadata {
  readonly producerId: bigint;
  readonly lastProducerId: bigint;
  readonly producerEpoch: number;
  readonly lastProducerEpoch: number;
  readonly txnTimeoutMs: number;
  readonly txnState: TransactionState;
  readonly topicPartitions: TopicPartitionSet;
  readonly txnStartTimestamp: number;
  readonly txnLastUpdateTimestamp: number;
}

/** The `__transaction_state` value for a transit (Kafka's TransactionLog.valueToBytes: Empty writes null partitions). */
export function transitToLogValue(t: TxnTransitMetadata): TransactionLogValue {
  if (t.txnState === TransactionState.Empty && t.topicPartitions.size > 0) {
    throw new TransactionStateError(`Transaction is not expected to have any partitions since its state is Empty: ${describeTransit(t)}`);
  }
  return {
    producerId: t.producerId,
    producerEpoch: t.producerEpoch,
    transactionTimeoutMs: t.txnTimeoutMs,
    state: t.txnState,
    partitions: t.txnState === TransactionState.Empty ? null : t.topicPartitions.byTopic(),
    lastUpdateTimestampMs: t.txnLastUpdateTimestamp,
    startTimestampMs: t.txnStartTimestamp,
  };
}

export function describeTransit(t: TxnTransitMetadata): string {
  return (
    `TxnTransitMetadata(producerId=${t.producerId}, lastProducerId=${t.lastProducerId}, producerEpoch=${t.producerEpoch}, ` +
    `lastProducerEpoch=${t.lastProducerEpoch}, txnTimeoutMs=${t.txnTimeoutMs}, txnState=${TRANSACTION_STATE_NAMES[t.txnState]}, ` +
    `topicPartitions=[${t.topicPartitions.toArray().map((tp) => topicPartitionKey(tp))}], ` +
    `txnStartTimestamp=${t.txnStartTimestamp}, txnLastUpdateTimestamp=${t.txnLastUpdateTimestamp})`
  );
}

export interface TransactionMetadataInit {
  producerId: bigint;
  lastProducerId?: bigint;
  producerEpoch: number;
  lastProducerEpoch?: number;
  txnTimeoutMs: number;
  state: TransactionState;
  topicPartitions?: Iterable<TopicPartition>;
  txnStartTimestamp?: number;
  txnLastUpdateTimestamp: number;
}

export class TransactionMetadata {
  producerId: bigint;
  /** The producer id before the last rotation (lets a KIP-360 retry across the rotation succeed). */
  lastProducerId: bigint;
  producerEpoch: number;
  /** The epoch before the last client-requested bump (KIP-360 retries), -1 after a fresh InitProducerId. */
  lastProducerEpoch: number;
  txnTimeoutMs: number;
  state: TransactionState;
  readonly topicPartitions: TopicPartitionSet;
  /** When the first partition was added, -1 with no transaction. */
  txnStartTimestamp: number;
  /** Any update; transactional id expiration counts from it. */
  txnLastUpdateTimestamp: number;
  /** The state a prepared transition goes to, until it completes or its append fails. */
  pendingState: TransactionState | null = null;
  /**
   * A previous epoch fence may not have been written: the next fence reuses the bumped epoch
   * instead of bumping again (it was never returned to a client).
   */
  hasFailedEpochFence = false;

  constructor(
    readonly transactionalId: string,
    init: TransactionMetadataInit,
  ) {
    this.producerId = init.producerId;
    this.lastProducerId = init.lastProducerId ?? NO_PRODUCER_ID;
    this.producerEpoch = init.producerEpoch;
    this.lastProducerEpoch = init.lastProducerEpoch ?? NO_PRODUCER_EPOCH;
    this.txnTimeoutMs = init.txnTimeoutMs;
    this.state = init.state;
    this.topicPartitions = new TopicPartitionSet(init.topicPartitions);
    this.txnStartTimestamp = init.txnStartTimestamp ?? -1;
    this.txnLastUpdateTimestamp = init.txnLastUpdateTimestamp;
  }

  /** Metadata read back from `__transaction_state` (Kafka's readTxnRecordValue: Empty has no partitions, last id/epoch unknown). */
  static fromLogValue(transactionalId: string, v: TransactionLogValue): TransactionMetadata {
    const partitions: TopicPartition[] = [];
    if (v.state !== TransactionState.Empty) {
      for (const p of v.partitions ?? []) for (const partition of p.partitionIds) partitions.push({ topic: p.topic, partition });
    }
    return new TransactionMetadata(transactionalId, {
      producerId: v.producerId,
      producerEpoch: v.producerEpoch,
      txnTimeoutMs: v.transactionTimeoutMs,
      state: v.state,
      topicPartitions: partitions,
      txnStartTimestamp: v.startTimestampMs,
      txnLastUpdateTimestamp: v.lastUpdateTimestampMs,
    });
  }

  get pendingTransitionInProgress(): boolean {
    return this.pendingState !== null;
  }

  get isProducerEpochExhausted(): boolean {
    return isEpochExhausted(this.producerEpoch);
  }

  get stateName(): string {
    return TRANSACTION_STATE_NAMES[this.state];
  }

  addPartitions(partitions: Iterable<TopicPartition>): void {
    for (const tp of partitions) this.topicPartitions.add(tp);
  }

  /** A partition's marker is written; only while the transaction is being completed. */
  removePartition(tp: TopicPartition): void {
    if (this.state !== TransactionState.PrepareCommit && this.state !== TransactionState.PrepareAbort) {
      throw new TransactionStateError(
        `Transaction metadata's current state is ${this.stateName}, and its pending state is ${this.pendingName} ` +
          'while trying to remove partitions whose txn marker has been sent, this is not expected',
      );
    }
    this.topicPartitions.delete(tp);
  }

  /** Fence the producer of an open transaction: one epoch up (or the same after a failed fence), on the way to aborting. */
  prepareFenceProducerEpoch(): TxnTransitMetadata {
    if (this.producerEpoch === MAX_PRODUCER_EPOCH) {
      throw new TransactionStateError('Cannot fence producer with epoch equal to Short.MaxValue since this would overflow');
    }
    const bumpedEpoch = this.hasFailedEpochFence ? this.producerEpoch : this.producerEpoch + 1;
    return this.prepareTransitionTo(
      TransactionState.PrepareEpochFence,
      this.producerId,
      bumpedEpoch,
      NO_PRODUCER_EPOCH,
      this.txnTimeoutMs,
      new TopicPartitionSet(this.topicPartitions),
      this.txnStartTimestamp,
      this.txnLastUpdateTimestamp,
    );
  }

  /**
   * InitProducerId's epoch bump to Empty. With an expected epoch (KIP-360): the current one (or
   * none yet) bumps and remembers it; the last one is a retry of a bump that succeeded (no bump);
   * any other answers PRODUCER_FENCED.
   */
  prepareIncrementProducerEpoch(
    newTxnTimeoutMs: number,
    expectedProducerEpoch: number | null,
    updateTimestamp: number,
  ): { error: 'PRODUCER_FENCED' } | { transit: TxnTransitMetadata } {
    if (this.isProducerEpochExhausted) throw new TransactionStateError(`Cannot allocate any more producer epochs for producerId ${this.producerId}`);
    const bumped = this.producerEpoch + 1;
    let next: [number, number];
    if (expectedProducerEpoch === null) next = [bumped, NO_PRODUCER_EPOCH];
    else if (this.producerEpoch === NO_PRODUCER_EPOCH || expectedProducerEpoch === this.producerEpoch) next = [bumped, this.producerEpoch];
    else if (expectedProducerEpoch === this.lastProducerEpoch) next = [this.producerEpoch, this.lastProducerEpoch];
    else return { error: 'PRODUCER_FENCED' };
    return {
      transit: this.prepareTransitionTo(
        TransactionState.Empty,
        this.producerId,
        next[0],
        next[1],
        newTxnTimeoutMs,
        new TopicPartitionSet(),
        -1,
        updateTimestamp,
      ),
    };
  }

  /** A new producer id at epoch 0 (the epochs of the old one are exhausted); not while a transaction is open. */
  prepareProducerIdRotation(newProducerId: bigint, newTxnTimeoutMs: number, updateTimestamp: number, recordLastEpoch: boolean): TxnTransitMetadata {
    if (hasPendingTransaction(this.state)) throw new TransactionStateError('Cannot rotate producer ids while a transaction is still pending');
    return this.prepareTransitionTo(
      TransactionState.Empty,
      newProducerId,
      0,
      recordLastEpoch ? this.producerEpoch : NO_PRODUCER_EPOCH,
      newTxnTimeoutMs,
      new TopicPartitionSet(),
      -1,
      updateTimestamp,
    );
  }

  /** AddPartitionsToTxn: Ongoing with the union of partitions; a new transaction starts its clock now. */
  prepareAddPartitions(added: Iterable<TopicPartition>, updateTimestamp: number): TxnTransitMetadata {
    const s = this.state;
    const start =
      s === TransactionState.Empty || s === TransactionState.CompleteAbort || s === TransactionState.CompleteCommit ? updateTimestamp : this.txnStartTimestamp;
    const partitions = new TopicPartitionSet(this.topicPartitions);
    for (const tp of added) partitions.add(tp);
    return this.prepareTransitionTo(
      TransactionState.Ongoing,
      this.producerId,
      this.producerEpoch,
      this.lastProducerEpoch,
      this.txnTimeoutMs,
      partitions,
      start,
      updateTimestamp,
    );
  }

  /** EndTxn: PrepareCommit or PrepareAbort with the transaction's partitions. */
  prepareAbortOrCommit(newState: typeof TransactionState.PrepareCommit | typeof TransactionState.PrepareAbort, updateTimestamp: number): TxnTransitMetadata {
    return this.prepareTransitionTo(
      newState,
      this.producerId,
      this.producerEpoch,
      this.lastProducerEpoch,
      this.txnTimeoutMs,
      new TopicPartitionSet(this.topicPartitions),
      this.txnStartTimestamp,
      updateTimestamp,
    );
  }

  /** Every marker is written: CompleteCommit or CompleteAbort, without partitions. */
  prepareComplete(updateTimestamp: number): TxnTransitMetadata {
    const newState = this.state === TransactionState.PrepareCommit ? TransactionState.CompleteCommit : TransactionState.CompleteAbort;
    // the Prepare* record was written: a fence in it succeeded
    this.hasFailedEpochFence = false;
    return this.prepareTransitionTo(
      newState,
      this.producerId,
      this.producerEpoch,
      this.lastProducerEpoch,
      this.txnTimeoutMs,
      new TopicPartitionSet(),
      this.txnStartTimestamp,
      updateTimestamp,
    );
  }

  /** Transactional id expiration: Dead (its tombstone is written, then it leaves the cache). */
  prepareDead(): TxnTransitMetadata {
    return this.prepareTransitionTo(
      TransactionState.Dead,
      this.producerId,
      this.producerEpoch,
      this.lastProducerEpoch,
      this.txnTimeoutMs,
      new TopicPartitionSet(),
      this.txnStartTimestamp,
      this.txnLastUpdateTimestamp,
    );
  }

  /** The current metadata as a transit, without preparing anything (tests). */
  prepareNoTransit(): TxnTransitMetadata {
    return {
      producerId: this.producerId,
      lastProducerId: this.lastProducerId,
      producerEpoch: this.producerEpoch,
      lastProducerEpoch: this.lastProducerEpoch,
      txnTimeoutMs: this.txnTimeoutMs,
      txnState: this.state,
      topicPartitions: new TopicPartitionSet(this.topicPartitions),
      txnStartTimestamp: this.txnStartTimestamp,
      txnLastUpdateTimestamp: this.txnLastUpdateTimestamp,
    };
  }

  private prepareTransitionTo(
    newState: TransactionState,
    newProducerId: bigint,
    newEpoch: number,
    newLastEpoch: number,
    newTxnTimeoutMs: number,
    newTopicPartitions: TopicPartitionSet,
    newTxnStartTimestamp: number,
    updateTimestamp: number,
  ): TxnTransitMetadata {
    const to = TRANSACTION_STATE_NAMES[newState];
    if (this.pendingState !== null) {
      throw new TransactionStateError(`Preparing transaction state transition to ${to} while it already a pending state ${this.pendingName}`);
    }
    if (newProducerId < 0n) throw new TransactionStateError(`Illegal new producer id ${newProducerId}`);
    // a just-created transactional id has epoch -1 and may keep it until it goes Dead
    if (newState !== TransactionState.Dead && newEpoch < 0) throw new TransactionStateError(`Illegal new producer epoch ${newEpoch}`);
    if (!isValidTransition(this.state, newState)) {
      throw new TransactionStateError(
        `Preparing transaction state transition to ${to} failed since the target state ${to} is not a valid previous state of the current state ${this.stateName}`,
      );
    }
    this.pendingState = newState;
    return {
      producerId: newProducerId,
      lastProducerId: this.producerId,
      producerEpoch: newEpoch,
      lastProducerEpoch: newLastEpoch,
      txnTimeoutMs: newTxnTimeoutMs,
      txnState: newState,
      topicPartitions: newTopicPartitions,
      txnStartTimestamp: newTxnStartTimestamp,
      txnLastUpdateTimestamp: updateTimestamp,
    };
  }

  /**
   * Applies a prepared transition once its record is replicated. It must match the pending state,
   * keep the producer id and epoch (Empty: bump by one, or epoch 0 with a new id), only grow the
   * partitions (Ongoing), keep them (Prepare*); Dead and PrepareEpochFence never complete.
   */
  completeTransitionTo(t: TxnTransitMetadata): void {
    const toState = this.pendingState;
    if (toState === null) {
      throw new TransactionStateError(`TransactionalId ${this.transactionalId} completing transaction state transition while it does not have a pending state`);
    }
    if (toState !== t.txnState) this.transitionFailure(t);
    switch (toState) {
      case TransactionState.Empty: // InitProducerId
        if ((this.producerEpoch !== t.producerEpoch && !this.validProducerEpochBump(t)) || t.topicPartitions.size > 0 || t.txnStartTimestamp !== -1) {
          this.transitionFailure(t);
        }
        this.txnTimeoutMs = t.txnTimeoutMs;
        this.producerEpoch = t.producerEpoch;
        this.lastProducerEpoch = t.lastProducerEpoch;
        this.producerId = t.producerId;
        this.lastProducerId = t.lastProducerId;
        break;
      case TransactionState.Ongoing: // AddPartitionsToTxn
        if (!this.validProducerEpoch(t) || !this.topicPartitions.isSubsetOf(t.topicPartitions) || this.txnTimeoutMs !== t.txnTimeoutMs)
          this.transitionFailure(t);
        this.txnStartTimestamp = t.txnStartTimestamp;
        this.addPartitions(t.topicPartitions);
        break;
      case TransactionState.PrepareCommit: // EndTxn
      case TransactionState.PrepareAbort:
        if (
          !this.validProducerEpoch(t) ||
          !this.topicPartitions.equals(t.topicPartitions) ||
          this.txnTimeoutMs !== t.txnTimeoutMs ||
          this.txnStartTimestamp !== t.txnStartTimestamp
        ) {
          this.transitionFailure(t);
        }
        break;
      case TransactionState.CompleteCommit: // markers written
      case TransactionState.CompleteAbort:
        if (!this.validProducerEpoch(t) || this.txnTimeoutMs !== t.txnTimeoutMs || t.txnStartTimestamp === -1) this.transitionFailure(t);
        this.txnStartTimestamp = t.txnStartTimestamp;
        this.topicPartitions.clear();
        break;
      case TransactionState.PrepareEpochFence:
        // the fence is immediately followed by PrepareAbort; it is never written on its own
        this.transitionFailure(t);
        break;
      case TransactionState.Dead:
        throw new TransactionStateError(
          `TransactionalId ${this.transactionalId} is trying to complete a transition to Dead. This means that the transactionalId ` +
            'was being expired, and the only acceptable completion of this operation is to remove the transaction metadata from the cache, ' +
            'not to persist the Dead in the log.',
        );
    }
    this.txnLastUpdateTimestamp = t.txnLastUpdateTimestamp;
    this.pendingState = null;
    this.state = toState;
  }

  private validProducerEpoch(t: TxnTransitMetadata): boolean {
    return t.producerEpoch === this.producerEpoch && t.producerId === this.producerId;
  }

  private validProducerEpochBump(t: TxnTransitMetadata): boolean {
    return t.producerEpoch === this.producerEpoch + 1 || (t.producerEpoch === 0 && t.producerId !== this.producerId);
  }

  private transitionFailure(t: TxnTransitMetadata): never {
    throw new TransactionStateError(`TransactionalId ${this.transactionalId} failed transition to state ${describeTransit(t)} due to unexpected metadata`);
  }

  private get pendingName(): string {
    return this.pendingState === null ? 'None' : TRANSACTION_STATE_NAMES[this.pendingState];
  }

  toString(): string {
    return (
      `TransactionMetadata(transactionalId=${this.transactionalId}, producerId=${this.producerId}, lastProducerId=${this.lastProducerId}, ` +
      `producerEpoch=${this.producerEpoch}, lastProducerEpoch=${this.lastProducerEpoch}, txnTimeoutMs=${this.txnTimeoutMs}, state=${this.stateName}, ` +
      `pendingState=${this.pendingName}, topicPartitions=[${this.topicPartitions.toArray().map((tp) => topicPartitionKey(tp))}], ` +
      `txnStartTimestamp=${this.txnStartTimestamp}, txnLastUpdateTimestamp=${this.txnLastUpdateTimestamp})`
    );
  }
}
