/**
 * TransactionMetadata's prepare/complete transitions (Kafka 3.x's TransactionMetadataTest facts):
 * each prepare* validates against the transition table and sets the pending state; completing
 * applies exactly what was prepared.
 */
import { describe, expect, it } from 'vitest';
import {
  MAX_PRODUCER_EPOCH,
  NO_PRODUCER_EPOCH,
  NO_PRODUCER_ID,
  TopicPartitionSet,
  TransactionMetadata,
  TransactionStateError,
  isEpochExhausted,
  transitToLogValue,
  type TransactionMetadataInit,
} from './transaction-metadata.js';
import { ALL_TRANSACTION_STATES, TransactionState, isValidTransition } from './transaction-state.js';

const S = TransactionState;
const T0 = 1000;
const tp = (topic: string, partition: number) => ({ topic, partition });

function meta(init: Partial<TransactionMetadataInit> = {}): TransactionMetadata {
  return new TransactionMetadata('txn', { producerId: 7n, producerEpoch: 3, txnTimeoutMs: 60_000, state: S.Empty, txnLastUpdateTimestamp: T0, ...init });
}

function ongoing(partitions = [tp('t', 0), tp('t', 1)]): TransactionMetadata {
  return meta({ state: S.Ongoing, topicPartitions: partitions, txnStartTimestamp: T0 });
}

describe('transaction metadata – epoch bumps (InitProducerId)', () => {
  it('a new producer (epoch -1) gets epoch 0 with no last epoch', () => {
    const m = meta({ producerEpoch: NO_PRODUCER_EPOCH });
    const r = m.prepareIncrementProducerEpoch(30_000, null, T0 + 1);
    if (!('transit' in r)) throw new Error('expected a transit');
    expect(m.pendingState).toBe(S.Empty);
    m.completeTransitionTo(r.transit);
    expect([m.producerId, m.producerEpoch, m.lastProducerEpoch, m.txnTimeoutMs, m.txnLastUpdateTimestamp, m.pendingState]).toEqual([
      7n,
      0,
      -1,
      30_000,
      T0 + 1,
      null,
    ]);
  });

  it('without an expected epoch bumps and forgets the last epoch', () => {
    const m = meta({ lastProducerEpoch: 2 });
    const r = m.prepareIncrementProducerEpoch(60_000, null, T0);
    if (!('transit' in r)) throw new Error('expected a transit');
    m.completeTransitionTo(r.transit);
    expect([m.producerEpoch, m.lastProducerEpoch]).toEqual([4, NO_PRODUCER_EPOCH]);
  });

  it('KIP-360: the current epoch bumps and is remembered; the last epoch is a retry (no bump); any other is fenced', () => {
    const m = meta();
    const r = m.prepareIncrementProducerEpoch(60_000, 3, T0);
    if (!('transit' in r)) throw new Error('expected a transit');
    m.completeTransitionTo(r.transit);
    expect([m.producerEpoch, m.lastProducerEpoch]).toEqual([4, 3]);

    const retry = m.prepareIncrementProducerEpoch(60_000, 3, T0);
    if (!('transit' in retry)) throw new Error('expected a transit');
    m.completeTransitionTo(retry.transit);
    expect([m.producerEpoch, m.lastProducerEpoch]).toEqual([4, 3]);

    expect(m.prepareIncrementProducerEpoch(60_000, 1, T0)).toEqual({ error: 'PRODUCER_FENCED' });
    expect(m.pendingState).toBeNull();
  });

  it('an exhausted epoch cannot be bumped; Short.MaxValue-1 counts as exhausted', () => {
    expect(isEpochExhausted(MAX_PRODUCER_EPOCH - 2)).toBe(false);
    expect(isEpochExhausted(MAX_PRODUCER_EPOCH - 1)).toBe(true);
    const m = meta({ producerEpoch: MAX_PRODUCER_EPOCH - 1 });
    expect(m.isProducerEpochExhausted).toBe(true);
    expect(() => m.prepareIncrementProducerEpoch(60_000, null, T0)).toThrow(TransactionStateError);
  });

  it('rotation: a new producer id at epoch 0, recording the last epoch only when asked', () => {
    const m = meta({ producerEpoch: MAX_PRODUCER_EPOCH - 1 });
    const t = m.prepareProducerIdRotation(99n, 60_000, T0 + 5, true);
    expect([t.producerId, t.lastProducerId, t.producerEpoch, t.lastProducerEpoch]).toEqual([99n, 7n, 0, MAX_PRODUCER_EPOCH - 1]);
    m.completeTransitionTo(t);
    expect([m.producerId, m.lastProducerId, m.producerEpoch, m.lastProducerEpoch]).toEqual([99n, 7n, 0, MAX_PRODUCER_EPOCH - 1]);
    const m2 = meta({ producerEpoch: MAX_PRODUCER_EPOCH - 1 });
    expect(m2.prepareProducerIdRotation(100n, 60_000, T0, false).lastProducerEpoch).toBe(NO_PRODUCER_EPOCH);
  });

  it('rotation is refused while a transaction is open', () => {
    expect(() => ongoing().prepareProducerIdRotation(99n, 60_000, T0, false)).toThrow(/pending/);
  });

  it('completing Empty refuses an epoch that is neither kept, bumped by one, nor 0 with a new id', () => {
    const m = meta();
    const r = m.prepareIncrementProducerEpoch(60_000, null, T0);
    if (!('transit' in r)) throw new Error('expected a transit');
    expect(() => m.completeTransitionTo({ ...r.transit, producerEpoch: 6 })).toThrow(/unexpected metadata/);
    expect(() => m.completeTransitionTo({ ...r.transit, txnStartTimestamp: 5 })).toThrow(/unexpected metadata/);
  });
});

describe('transaction metadata – add partitions, end, complete', () => {
  it('adding partitions from Empty starts the transaction clock; from Ongoing keeps it and unions the partitions', () => {
    const m = meta();
    const t = m.prepareAddPartitions([tp('t', 0)], T0 + 10);
    expect(t.txnStartTimestamp).toBe(T0 + 10);
    m.completeTransitionTo(t);
    expect([m.state, m.txnStartTimestamp, m.topicPartitions.toArray()]).toEqual([S.Ongoing, T0 + 10, [tp('t', 0)]]);
    const t2 = m.prepareAddPartitions([tp('a', 3)], T0 + 20);
    expect(t2.txnStartTimestamp).toBe(T0 + 10);
    m.completeTransitionTo(t2);
    expect(m.topicPartitions.toArray()).toEqual([tp('a', 3), tp('t', 0)]);
    expect(m.txnLastUpdateTimestamp).toBe(T0 + 20);
  });

  it('from CompleteCommit/CompleteAbort a new transaction starts a new clock', () => {
    for (const state of [S.CompleteCommit, S.CompleteAbort]) {
      const m = meta({ state, txnStartTimestamp: 5 });
      expect(m.prepareAddPartitions([tp('t', 0)], T0 + 30).txnStartTimestamp).toBe(T0 + 30);
    }
  });

  it('commit: PrepareCommit keeps the partitions, markers remove them, CompleteCommit clears them', () => {
    const m = ongoing();
    const p = m.prepareAbortOrCommit(S.PrepareCommit, T0 + 1);
    expect(p.topicPartitions.size).toBe(2);
    m.completeTransitionTo(p);
    expect(m.state).toBe(S.PrepareCommit);
    const c = m.prepareComplete(T0 + 2);
    expect([c.txnState, c.topicPartitions.size, c.txnStartTimestamp]).toEqual([S.CompleteCommit, 0, T0]);
    m.removePartition(tp('t', 0));
    m.removePartition(tp('t', 1));
    m.completeTransitionTo(c);
    expect([m.state, m.topicPartitions.size, m.txnStartTimestamp, m.txnLastUpdateTimestamp]).toEqual([S.CompleteCommit, 0, T0, T0 + 2]);
  });

  it('abort goes PrepareAbort → CompleteAbort', () => {
    const m = ongoing();
    m.completeTransitionTo(m.prepareAbortOrCommit(S.PrepareAbort, T0 + 1));
    const c = m.prepareComplete(T0 + 2);
    expect(c.txnState).toBe(S.CompleteAbort);
    m.completeTransitionTo(c);
    expect(m.state).toBe(S.CompleteAbort);
  });

  it('removing a partition outside PrepareCommit/PrepareAbort is a bug', () => {
    expect(() => ongoing().removePartition(tp('t', 0))).toThrow(TransactionStateError);
  });

  it('Prepare* refuses a transit whose partitions or producer differ', () => {
    const m = ongoing();
    const p = m.prepareAbortOrCommit(S.PrepareCommit, T0 + 1);
    expect(() => m.completeTransitionTo({ ...p, topicPartitions: new TopicPartitionSet([tp('t', 0)]) })).toThrow(/unexpected metadata/);
    expect(() => m.completeTransitionTo({ ...p, producerEpoch: 9 })).toThrow(/unexpected metadata/);
    expect(() => m.completeTransitionTo({ ...p, txnState: S.PrepareAbort })).toThrow(/unexpected metadata/);
  });

  it('completing without a pending state throws', () => {
    const m = ongoing();
    expect(() => m.completeTransitionTo(m.prepareNoTransit())).toThrow(/does not have a pending state/);
  });
});

describe('transaction metadata – fencing and expiry', () => {
  it('fencing bumps the epoch once; after a failed fence it reuses the bumped epoch', () => {
    const m = ongoing();
    const f = m.prepareFenceProducerEpoch();
    expect([f.txnState, f.producerEpoch, f.lastProducerEpoch]).toEqual([S.PrepareEpochFence, 4, NO_PRODUCER_EPOCH]);
    m.pendingState = null;
    m.producerEpoch = 4;
    m.hasFailedEpochFence = true;
    expect(m.prepareFenceProducerEpoch().producerEpoch).toBe(4);
  });

  it('prepareComplete clears a failed fence (the Prepare record was written)', () => {
    const m = meta({ state: S.PrepareAbort, topicPartitions: [tp('t', 0)], txnStartTimestamp: T0 });
    m.hasFailedEpochFence = true;
    m.prepareComplete(T0);
    expect(m.hasFailedEpochFence).toBe(false);
  });

  it('fencing at Short.MaxValue would overflow', () => {
    expect(() => meta({ state: S.Ongoing, producerEpoch: MAX_PRODUCER_EPOCH, txnStartTimestamp: T0 }).prepareFenceProducerEpoch()).toThrow(/overflow/);
  });

  it('PrepareEpochFence and Dead never complete', () => {
    const m = ongoing();
    expect(() => m.completeTransitionTo(m.prepareFenceProducerEpoch())).toThrow(/unexpected metadata/);
    const d = meta();
    expect(() => d.completeTransitionTo(d.prepareDead())).toThrow(/Dead/);
  });

  it('Dead keeps the epoch of a just-created id (-1)', () => {
    const d = meta({ producerEpoch: NO_PRODUCER_EPOCH });
    expect(d.prepareDead().producerEpoch).toBe(NO_PRODUCER_EPOCH);
  });
});

describe('transaction metadata – prepareTransitionTo validation', () => {
  it('refuses a second transition while one is pending', () => {
    const m = ongoing();
    m.prepareAbortOrCommit(S.PrepareCommit, T0);
    expect(() => m.prepareAddPartitions([tp('x', 0)], T0)).toThrow(/already a pending state PrepareCommit/);
  });

  it('refuses transitions the table does not allow, from every state', () => {
    const attempts: Array<[TransactionState, (m: TransactionMetadata) => unknown]> = [
      [S.Ongoing, (m) => m.prepareAddPartitions([tp('t', 0)], T0)],
      [S.PrepareCommit, (m) => m.prepareAbortOrCommit(S.PrepareCommit, T0)],
      [S.PrepareAbort, (m) => m.prepareAbortOrCommit(S.PrepareAbort, T0)],
      [S.Dead, (m) => m.prepareDead()],
      [S.PrepareEpochFence, (m) => m.prepareFenceProducerEpoch()],
    ];
    for (const from of ALL_TRANSACTION_STATES) {
      for (const [to, attempt] of attempts) {
        const m = meta({ state: from, txnStartTimestamp: T0, topicPartitions: from === S.Empty ? [] : [tp('t', 0)] });
        if (isValidTransition(from, to)) {
          attempt(m);
          expect(m.pendingState).toBe(to);
        } else {
          expect(() => attempt(m), `${from}→${to}`).toThrow(/not a valid previous state/);
          expect(m.pendingState).toBeNull();
        }
      }
    }
  });

  it('refuses a negative producer id or epoch', () => {
    expect(() => meta().prepareProducerIdRotation(-5n, 60_000, T0, false)).toThrow(/Illegal new producer id/);
    expect(() => meta({ producerEpoch: -2 }).prepareAddPartitions([tp('t', 0)], T0)).toThrow(/Illegal new producer epoch/);
  });
});

describe('transaction metadata – log values', () => {
  it('Empty is written with null partitions, others grouped by topic', () => {
    const m = meta({ producerEpoch: NO_PRODUCER_EPOCH });
    const r = m.prepareIncrementProducerEpoch(60_000, null, T0);
    if (!('transit' in r)) throw new Error('expected a transit');
    expect(transitToLogValue(r.transit).partitions).toBeNull();
    const o = meta();
    const t = o.prepareAddPartitions([tp('b', 1), tp('a', 2), tp('b', 0)], T0);
    expect(transitToLogValue(t)).toEqual({
      producerId: 7n,
      producerEpoch: 3,
      transactionTimeoutMs: 60_000,
      state: S.Ongoing,
      partitions: [
        { topic: 'a', partitionIds: [2] },
        { topic: 'b', partitionIds: [0, 1] },
      ],
      lastUpdateTimestampMs: T0,
      startTimestampMs: T0,
    });
  });

  it('read back: Empty ignores partitions; last producer id and epoch are unknown', () => {
    const m = TransactionMetadata.fromLogValue('x', {
      producerId: 5n,
      producerEpoch: 2,
      transactionTimeoutMs: 100,
      state: S.Empty,
      partitions: [{ topic: 't', partitionIds: [1] }],
      lastUpdateTimestampMs: 9,
      startTimestampMs: -1,
    });
    expect([m.topicPartitions.size, m.lastProducerId, m.lastProducerEpoch, m.pendingState]).toEqual([0, NO_PRODUCER_ID, NO_PRODUCER_EPOCH, null]);
  });
});
