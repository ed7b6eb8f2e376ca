/**
 * The transaction coordinator's API logic (Kafka 3.x's TransactionCoordinatorTest facts) over an
 * in-memory `__transaction_state` and fake marker destinations, on a fake clock.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ErrorCode, KafkaError } from '@samsa/protocol';
import { MAX_PRODUCER_EPOCH, NO_PRODUCER_EPOCH } from './transaction-metadata.js';
import { TransactionResult } from './transaction-state-manager.js';
import { TransactionState } from './transaction-state.js';
import { TxnApiKey, producerFencedErrorForVersion } from './transaction-coordinator.js';
import { flush, newHarness, type Harness } from './test-support.js';

const E = ErrorCode;
const S = TransactionState;
const { COMMIT, ABORT } = TransactionResult;
const TXN = 'txn';
const TIMEOUT = 60_000;
const tp = (topic: string, partition: number) => ({ topic, partition });

let h: Harness;

beforeEach(async () => {
  vi.useFakeTimers({ now: 1_000_000, toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
  h = await newHarness();
});

afterEach(async () => {
  await h.coord.shutdown();
  vi.useRealTimers();
});

function metadata(id = TXN) {
  const r = h.coord.txnManager.getTransactionState(id);
  if (!('found' in r) || !r.found) throw new Error(`no metadata for ${id}`);
  return r.found.metadata;
}

/** The states written to `__transaction_state` partition 0, in order. */
function written(id = TXN): Array<[TransactionState | null, number | undefined]> {
  return h.storage
    .records(0)
    .filter((r) => r.transactionalId === id)
    .map((r) => [r.value?.state ?? null, r.value?.producerEpoch]);
}

async function init(expected: { producerId: bigint; producerEpoch: number } | null = null, version = 4) {
  return h.coord.handleInitProducerId(TXN, TIMEOUT, expected, version);
}

/** InitProducerId then AddPartitionsToTxn: an Ongoing transaction on t-0 and u-1. */
async function openTransaction(partitions = [tp('t', 0), tp('u', 1)]) {
  const r = await init();
  expect(r.errorCode).toBe(E.NONE);
  expect(await h.coord.handleAddPartitionsToTransaction(TXN, r.producerId, r.producerEpoch, partitions)).toBe(E.NONE);
  return r;
}

describe('transaction coordinator – InitProducerId', () => {
  it('a null transactional id gets a new producer id at epoch 0, with nothing written', async () => {
    expect(await h.coord.handleInitProducerId(null, TIMEOUT, null)).toEqual({ errorCode: E.NONE, producerId: 1000n, producerEpoch: 0 });
    expect(await h.coord.handleInitProducerId(null, TIMEOUT, null)).toMatchObject({ producerId: 1001n });
    expect(h.storage.appends).toHaveLength(0);
  });

  it('an empty transactional id is INVALID_REQUEST; a timeout above transaction.max.timeout.ms or ≤ 0 is INVALID_TRANSACTION_TIMEOUT', async () => {
    expect((await h.coord.handleInitProducerId('', TIMEOUT, null)).errorCode).toBe(E.INVALID_REQUEST);
    expect((await h.coord.handleInitProducerId(TXN, 900_001, null)).errorCode).toBe(E.INVALID_TRANSACTION_TIMEOUT);
    expect((await h.coord.handleInitProducerId(TXN, 0, null)).errorCode).toBe(E.INVALID_TRANSACTION_TIMEOUT);
    expect((await h.coord.handleInitProducerId(TXN, 900_000, null)).errorCode).toBe(E.NONE);
  });

  it('a new transactional id gets a producer id at epoch 0, written as Empty with acks=-1 within its timeout', async () => {
    expect(await init()).toEqual({ errorCode: E.NONE, producerId: 1000n, producerEpoch: 0 });
    expect(written()).toEqual([[S.Empty, 0]]);
    expect(h.storage.appends).toEqual([{ partition: 0, acks: -1, timeoutMs: TIMEOUT }]);
    expect(h.storage.records(0)[0]!.value).toMatchObject({ partitions: null, startTimestampMs: -1, transactionTimeoutMs: TIMEOUT });
  });

  it('a known transactional id keeps its producer id and bumps the epoch', async () => {
    await init();
    expect(await init()).toEqual({ errorCode: E.NONE, producerId: 1000n, producerEpoch: 1 });
    expect(metadata().lastProducerEpoch).toBe(NO_PRODUCER_EPOCH);
  });

  it('answers NOT_COORDINATOR for a partition this broker does not own and COORDINATOR_LOAD_IN_PROGRESS while loading it', async () => {
    h.coord.onResignation(0, 1);
    expect((await init()).errorCode).toBe(E.NOT_COORDINATOR);
    let open!: () => void;
    h.storage.readGate = new Promise((r) => (open = r));
    const load = h.coord.onElection(0, 2);
    expect((await init()).errorCode).toBe(E.COORDINATOR_LOAD_IN_PROGRESS);
    open();
    await load;
    expect((await init()).errorCode).toBe(E.NONE);
  });

  it('a producer id generation failure answers its code (UNKNOWN_SERVER_ERROR for a plain error)', async () => {
    h.pids.fail = new KafkaError('COORDINATOR_LOAD_IN_PROGRESS');
    expect((await init()).errorCode).toBe(E.COORDINATOR_LOAD_IN_PROGRESS);
    h.pids.fail = new Error('zk down');
    expect((await init()).errorCode).toBe(E.UNKNOWN_SERVER_ERROR);
  });

  it('an append error is mapped and leaves no pending transition', async () => {
    await init();
    h.storage.nextErrors.push(E.NOT_ENOUGH_REPLICAS);
    expect((await init()).errorCode).toBe(E.COORDINATOR_NOT_AVAILABLE);
    expect(metadata().pendingState).toBeNull();
    expect(await init()).toMatchObject({ errorCode: E.NONE, producerEpoch: 1 });
  });

  it('while a transition is being written: CONCURRENT_TRANSACTIONS', async () => {
    await init();
    h.storage.hold = true;
    const first = init();
    await flush();
    expect((await init()).errorCode).toBe(E.CONCURRENT_TRANSACTIONS);
    h.storage.release();
    expect((await first).producerEpoch).toBe(1);
  });

  it('an open transaction is aborted with a fencing epoch and answered CONCURRENT_TRANSACTIONS; the retry gets the next epoch', async () => {
    await openTransaction();
    expect((await init()).errorCode).toBe(E.CONCURRENT_TRANSACTIONS);
    // the abort was written with epoch 1 (the fence), then its markers, then CompleteAbort
    await flush();
    expect(h.brokers.markersFor('t', 0)).toEqual([{ brokerId: 1, result: ABORT, producerEpoch: 1, coordinatorEpoch: 1 }]);
    expect(h.brokers.markersFor('u', 1)).toEqual([{ brokerId: 2, result: ABORT, producerEpoch: 1, coordinatorEpoch: 1 }]);
    expect(written()).toEqual([
      [S.Empty, 0],
      [S.Ongoing, 0],
      [S.PrepareAbort, 1],
      [S.CompleteAbort, 1],
    ]);
    expect(await init()).toEqual({ errorCode: E.NONE, producerId: 1000n, producerEpoch: 2 });
  });

  it('while a transaction completes (PrepareCommit, markers in flight): CONCURRENT_TRANSACTIONS', async () => {
    const r = await openTransaction();
    h.brokers.hold = true;
    expect(await h.coord.handleEndTransaction(TXN, r.producerId, r.producerEpoch, COMMIT)).toBe(E.NONE);
    expect((await init()).errorCode).toBe(E.CONCURRENT_TRANSACTIONS);
    h.brokers.answer();
    await flush();
    expect(metadata().state).toBe(S.CompleteCommit);
    expect((await init()).producerEpoch).toBe(1);
  });

  it('a new transactional id with an expected producer id/epoch (platformatic sends 0/0) is just created: epoch 0, not fenced', async () => {
    expect(await init({ producerId: 0n, producerEpoch: 0 }, 5)).toEqual({ errorCode: E.NONE, producerId: 1000n, producerEpoch: 0 });
    expect(written()).toEqual([[S.Empty, 0]]);
    // once it exists, that stale expectation is another producer's
    expect((await init({ producerId: 0n, producerEpoch: 0 }, 5)).errorCode).toBe(E.PRODUCER_FENCED);
  });

  it('KIP-360: the current producer bumps and keeps its last epoch; a retry of that bump gets the same epoch', async () => {
    const r = await init();
    const bumped = await init({ producerId: r.producerId, producerEpoch: 0 });
    expect(bumped).toEqual({ errorCode: E.NONE, producerId: 1000n, producerEpoch: 1 });
    expect(metadata().lastProducerEpoch).toBe(0);
    expect(await init({ producerId: r.producerId, producerEpoch: 0 })).toEqual({ errorCode: E.NONE, producerId: 1000n, producerEpoch: 1 });
  });

  it('KIP-360: another producer id or a stale epoch is PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before v4)', async () => {
    await init();
    await init();
    await init();
    expect((await init({ producerId: 555n, producerEpoch: 2 })).errorCode).toBe(E.PRODUCER_FENCED);
    expect((await init({ producerId: 1000n, producerEpoch: 0 })).errorCode).toBe(E.PRODUCER_FENCED);
    expect((await init({ producerId: 1000n, producerEpoch: 0 }, 3)).errorCode).toBe(E.INVALID_PRODUCER_EPOCH);
    expect((await init({ producerId: 555n, producerEpoch: 2 }, 3)).errorCode).toBe(E.INVALID_PRODUCER_EPOCH);
  });

  it('exhausted epochs rotate to a new producer id at epoch 0; a KIP-360 retry with the old id and exhausted epoch is accepted', async () => {
    await init();
    const m = metadata();
    m.producerEpoch = MAX_PRODUCER_EPOCH - 1;
    expect(await init({ producerId: 1000n, producerEpoch: MAX_PRODUCER_EPOCH - 1 })).toEqual({ errorCode: E.NONE, producerId: 1001n, producerEpoch: 0 });
    expect([m.lastProducerId, m.lastProducerEpoch]).toEqual([1000n, MAX_PRODUCER_EPOCH - 1]);
    // the retry of the rotation (old id, exhausted epoch): not fenced, a fresh bump of the new id
    expect(await init({ producerId: 1000n, producerEpoch: MAX_PRODUCER_EPOCH - 1 })).toMatchObject({ errorCode: E.NONE, producerId: 1001n });
  });

  it('exhausted epochs without an expected epoch rotate too, forgetting the last epoch', async () => {
    await init();
    metadata().producerEpoch = MAX_PRODUCER_EPOCH - 1;
    expect(await init()).toEqual({ errorCode: E.NONE, producerId: 1001n, producerEpoch: 0 });
    expect(metadata().lastProducerEpoch).toBe(NO_PRODUCER_EPOCH);
  });
});

describe('transaction coordinator – AddPartitionsToTxn / AddOffsetsToTxn', () => {
  it('adds partitions: Ongoing, written, the transaction clock started', async () => {
    const r = await openTransaction();
    const m = metadata();
    expect([m.state, m.txnStartTimestamp, m.topicPartitions.toArray()]).toEqual([S.Ongoing, Date.now(), [tp('t', 0), tp('u', 1)]]);
    expect(h.storage.records(0).at(-1)!.value!.partitions).toEqual([
      { topic: 't', partitionIds: [0] },
      { topic: 'u', partitionIds: [1] },
    ]);
    // already in the transaction: answered without a write
    const appends = h.storage.appends.length;
    expect(await h.coord.handleAddPartitionsToTransaction(TXN, r.producerId, r.producerEpoch, [tp('t', 0)])).toBe(E.NONE);
    expect(h.storage.appends).toHaveLength(appends);
  });

  it('refuses unknown ids and producer ids (INVALID_PRODUCER_ID_MAPPING), stale epochs (PRODUCER_FENCED, INVALID_PRODUCER_EPOCH before v2), empty ids', async () => {
    expect(await h.coord.handleAddPartitionsToTransaction('nope', 1n, 0, [tp('t', 0)])).toBe(E.INVALID_PRODUCER_ID_MAPPING);
    const r = await init();
    expect(await h.coord.handleAddPartitionsToTransaction(TXN, 9n, 0, [tp('t', 0)])).toBe(E.INVALID_PRODUCER_ID_MAPPING);
    await init();
    expect(await h.coord.handleAddPartitionsToTransaction(TXN, r.producerId, 0, [tp('t', 0)])).toBe(E.PRODUCER_FENCED);
    expect(await h.coord.handleAddPartitionsToTransaction(TXN, r.producerId, 0, [tp('t', 0)], 1)).toBe(E.INVALID_PRODUCER_EPOCH);
    expect(await h.coord.handleAddPartitionsToTransaction('', r.producerId, 1, [tp('t', 0)])).toBe(E.INVALID_REQUEST);
  });

  it('while the transaction completes: CONCURRENT_TRANSACTIONS', async () => {
    const r = await openTransaction();
    h.brokers.hold = true;
    await h.coord.handleEndTransaction(TXN, r.producerId, r.producerEpoch, COMMIT);
    expect(await h.coord.handleAddPartitionsToTransaction(TXN, r.producerId, r.producerEpoch, [tp('t', 2)])).toBe(E.CONCURRENT_TRANSACTIONS);
    h.brokers.answer();
  });

  it('AddOffsetsToTxn adds the group’s __consumer_offsets partition', async () => {
    const r = await init();
    expect(await h.coord.handleAddOffsetsToTransaction(TXN, r.producerId, r.producerEpoch, 'group')).toBe(E.NONE);
    expect(metadata().topicPartitions.toArray()).toEqual([tp('__consumer_offsets', 4)]);
    expect(await h.coord.handleAddOffsetsToTransaction(TXN, r.producerId, 7, 'group', 1)).toBe(E.INVALID_PRODUCER_EPOCH);
  });
});

describe('transaction coordinator – EndTxn', () => {
  it('commit: answered once PrepareCommit is written, then markers to each leader, then CompleteCommit', async () => {
    const r = await openTransaction();
    h.storage.hold = true;
    const end = h.coord.handleEndTransaction(TXN, r.producerId, r.producerEpoch, COMMIT);
    let answered = false;
    void end.then(() => (answered = true));
    await flush();
    expect(answered).toBe(false);
    expect(h.brokers.requests).toHaveLength(0);
    h.storage.hold = false;
    h.storage.release();
    expect(await end).toBe(E.NONE);
    await flush();
    expect(h.brokers.requests.map((q) => q.brokerId).sort()).toEqual([1, 2]);
    expect(h.brokers.markersFor('t', 0)).toEqual([{ brokerId: 1, result: COMMIT, producerEpoch: 0, coordinatorEpoch: 1 }]);
    expect(written().slice(-2)).toEqual([
      [S.PrepareCommit, 0],
      [S.CompleteCommit, 0],
    ]);
    expect(h.storage.records(0).at(-1)!.value!.partitions).toEqual([]);
    expect([metadata().state, metadata().topicPartitions.size, metadata().pendingState]).toEqual([S.CompleteCommit, 0, null]);
  });

  it('abort: PrepareAbort, abort markers, CompleteAbort', async () => {
    const r = await openTransaction();
    expect(await h.coord.handleEndTransaction(TXN, r.producerId, r.producerEpoch, ABORT)).toBe(E.NONE);
    await flush();
    expect(h.brokers.markersFor('u', 1)).toEqual([{ brokerId: 2, result: ABORT, producerEpoch: 0, coordinatorEpoch: 1 }]);
    expect(written().slice(-2)).toEqual([
      [S.PrepareAbort, 0],
      [S.CompleteAbort, 0],
    ]);
  });

  it('retries: the same result after completion is NONE, while completing CONCURRENT_TRANSACTIONS; the other result INVALID_TXN_STATE', async () => {
    const r = await openTransaction();
    h.brokers.hold = true;
    expect(await h.coord.handleEndTransaction(TXN, r.producerId, r.producerEpoch, COMMIT)).toBe(E.NONE);
    expect(await h.coord.handleEndTransaction(TXN, r.producerId, r.producerEpoch, COMMIT)).toBe(E.CONCURRENT_TRANSACTIONS);
    h.brokers.answer();
    await flush();
    expect(await h.coord.handleEndTransaction(TXN, r.producerId, r.producerEpoch, COMMIT)).toBe(E.NONE);
    expect(await h.coord.handleEndTransaction(TXN, r.producerId, r.producerEpoch, ABORT)).toBe(E.INVALID_TXN_STATE);
    const appends = h.storage.appends.length;
    expect(h.storage.appends).toHaveLength(appends);
  });

  it('a CompleteAbort answers a retried abort NONE and a commit INVALID_TXN_STATE; Empty answers INVALID_TXN_STATE', async () => {
    const r = await openTransaction();
    await h.coord.handleEndTransaction(TXN, r.producerId, r.producerEpoch, ABORT);
    await flush();
    expect(await h.coord.handleEndTransaction(TXN, r.producerId, r.producerEpoch, ABORT)).toBe(E.NONE);
    expect(await h.coord.handleEndTransaction(TXN, r.producerId, r.producerEpoch, COMMIT)).toBe(E.INVALID_TXN_STATE);
    const e = await init();
    expect(await h.coord.handleEndTransaction(TXN, e.producerId, e.producerEpoch, COMMIT)).toBe(E.INVALID_TXN_STATE);
  });

  it('fencing by version: PRODUCER_FENCED from EndTxn v2, INVALID_PRODUCER_EPOCH before', async () => {
    const r = await openTransaction();
    expect(await h.coord.handleEndTransaction(TXN, r.producerId, r.producerEpoch + 1, COMMIT, 2)).toBe(E.PRODUCER_FENCED);
    expect(await h.coord.handleEndTransaction(TXN, r.producerId, r.producerEpoch + 1, COMMIT, 1)).toBe(E.INVALID_PRODUCER_EPOCH);
    expect(await h.coord.handleEndTransaction(TXN, r.producerId, r.producerEpoch + 1, COMMIT, 0)).toBe(E.INVALID_PRODUCER_EPOCH);
    expect(await h.coord.handleEndTransaction(TXN, 42n, r.producerEpoch, COMMIT)).toBe(E.INVALID_PRODUCER_ID_MAPPING);
    expect(await h.coord.handleEndTransaction('', r.producerId, r.producerEpoch, COMMIT)).toBe(E.INVALID_REQUEST);
    expect(await h.coord.handleEndTransaction('other', r.producerId, r.producerEpoch, COMMIT)).toBe(E.INVALID_PRODUCER_ID_MAPPING);
    expect(metadata().state).toBe(S.Ongoing);
  });

  it('the version mapping only touches PRODUCER_FENCED, per API', () => {
    expect(producerFencedErrorForVersion(TxnApiKey.InitProducerId, 3, E.PRODUCER_FENCED)).toBe(E.INVALID_PRODUCER_EPOCH);
    expect(producerFencedErrorForVersion(TxnApiKey.InitProducerId, 4, E.PRODUCER_FENCED)).toBe(E.PRODUCER_FENCED);
    expect(producerFencedErrorForVersion(TxnApiKey.EndTxn, 1, E.CONCURRENT_TRANSACTIONS)).toBe(E.CONCURRENT_TRANSACTIONS);
    expect(producerFencedErrorForVersion(TxnApiKey.AddOffsetsToTxn, 2, E.PRODUCER_FENCED)).toBe(E.PRODUCER_FENCED);
  });

  it('a failed Prepare write answers the mapped error and leaves the transaction Ongoing to retry', async () => {
    const r = await openTransaction();
    h.storage.nextErrors.push(E.REQUEST_TIMED_OUT);
    expect(await h.coord.handleEndTransaction(TXN, r.producerId, r.producerEpoch, COMMIT)).toBe(E.COORDINATOR_NOT_AVAILABLE);
    expect([metadata().state, metadata().pendingState]).toEqual([S.Ongoing, null]);
    expect(h.brokers.requests).toHaveLength(0);
    expect(await h.coord.handleEndTransaction(TXN, r.producerId, r.producerEpoch, COMMIT)).toBe(E.NONE);
  });

  it('resigning while the Prepare write waits for its acks answers NOT_COORDINATOR at once', async () => {
    const r = await openTransaction();
    h.storage.hold = true;
    const end = h.coord.handleEndTransaction(TXN, r.producerId, r.producerEpoch, COMMIT);
    await flush();
    h.coord.onResignation(0, 1);
    expect(await end).toBe(E.NOT_COORDINATOR);
    h.storage.release();
    await flush();
    expect(h.brokers.requests).toHaveLength(0);
  });
});

describe('transaction coordinator – timed-out transactions', () => {
  it('an Ongoing transaction past its timeout is aborted with a bumped epoch; its producer is fenced', async () => {
    const r = await openTransaction();
    await vi.advanceTimersByTimeAsync(TIMEOUT);
    await h.coord.abortTimedOutTransactions();
    expect(metadata().state).toBe(S.Ongoing);
    await vi.advanceTimersByTimeAsync(1);
    await h.coord.abortTimedOutTransactions();
    await flush();
    expect(written().slice(-2)).toEqual([
      [S.PrepareAbort, 1],
      [S.CompleteAbort, 1],
    ]);
    expect(metadata().lastProducerEpoch).toBe(NO_PRODUCER_EPOCH);
    expect(await h.coord.handleEndTransaction(TXN, r.producerId, r.producerEpoch, COMMIT)).toBe(E.PRODUCER_FENCED);
  });

  it('runs every transaction.abort.timed.out.transaction.cleanup.interval.ms', async () => {
    await openTransaction();
    await vi.advanceTimersByTimeAsync(TIMEOUT + 10_000);
    await flush();
    expect(metadata().state).toBe(S.CompleteAbort);
  });

  it('a failed fence write is remembered: the next fence reuses the bumped epoch', async () => {
    await openTransaction();
    await vi.advanceTimersByTimeAsync(TIMEOUT + 1);
    h.storage.nextErrors.push(E.NOT_ENOUGH_REPLICAS);
    await h.coord.abortTimedOutTransactions();
    const m = metadata();
    expect([m.state, m.producerEpoch, m.hasFailedEpochFence, m.pendingState]).toEqual([S.Ongoing, 1, true, null]);
    await h.coord.abortTimedOutTransactions();
    await flush();
    expect(written().slice(-2)).toEqual([
      [S.PrepareAbort, 1],
      [S.CompleteAbort, 1],
    ]);
  });
});

describe('transaction coordinator – unexpected states', () => {
  it('a state Kafka treats as illegal still answers the caller, UNKNOWN_SERVER_ERROR', async () => {
    await init();
    metadata().state = S.Dead;
    expect((await init()).errorCode).toBe(E.UNKNOWN_SERVER_ERROR);
    metadata().state = S.PrepareEpochFence;
    expect(await h.coord.handleEndTransaction(TXN, 1000n, 0, COMMIT)).toBe(E.UNKNOWN_SERVER_ERROR);
  });
});

describe('transaction coordinator – DescribeTransactions / ListTransactions', () => {
  it('describes an id: state, producer, timeout, start time, partitions by topic; unknown ids are TRANSACTIONAL_ID_NOT_FOUND', async () => {
    expect(h.coord.handleDescribeTransactions('nope').errorCode).toBe(E.TRANSACTIONAL_ID_NOT_FOUND);
    expect(h.coord.handleDescribeTransactions('').errorCode).toBe(E.INVALID_REQUEST);
    await openTransaction([tp('t', 1), tp('t', 0)]);
    expect(h.coord.handleDescribeTransactions(TXN)).toEqual({
      errorCode: E.NONE,
      transactionalId: TXN,
      transactionState: 'Ongoing',
      transactionTimeoutMs: TIMEOUT,
      transactionStartTimeMs: Date.now(),
      producerId: 1000n,
      producerEpoch: 0,
      topics: [{ topic: 't', partitions: [0, 1] }],
    });
  });

  it('lists by state and producer id filters, reporting unknown state names', async () => {
    await openTransaction();
    await h.coord.handleInitProducerId('other', TIMEOUT, null);
    const ids = (r: { transactionStates: Array<{ transactionalId: string }> }) => r.transactionStates.map((s) => s.transactionalId).sort();
    expect(ids(h.coord.handleListTransactions([], []))).toEqual(['other', TXN]);
    expect(ids(h.coord.handleListTransactions([], ['Ongoing']))).toEqual([TXN]);
    expect(ids(h.coord.handleListTransactions([1001n], []))).toEqual(['other']);
    const r = h.coord.handleListTransactions([], ['Empty', 'Bogus', 'toString']);
    expect([r.errorCode, ids(r), r.unknownStateFilters]).toEqual([E.NONE, ['other'], ['Bogus', 'toString']]);
    expect(r.transactionStates[0]).toEqual({ transactionalId: 'other', producerId: 1001n, transactionState: 'Empty' });
  });

  it('answers COORDINATOR_NOT_AVAILABLE when not started and COORDINATOR_LOAD_IN_PROGRESS while loading', async () => {
    h.storage.readGate = new Promise(() => {});
    void h.coord.onElection(0, 2);
    expect(h.coord.handleListTransactions([], []).errorCode).toBe(E.COORDINATOR_LOAD_IN_PROGRESS);
    expect(h.coord.handleDescribeTransactions(TXN).errorCode).toBe(E.COORDINATOR_LOAD_IN_PROGRESS);
    h.coord.onResignation(0, 2);
    await h.coord.shutdown();
    expect(h.coord.handleListTransactions([], []).errorCode).toBe(E.COORDINATOR_NOT_AVAILABLE);
    expect(h.coord.handleDescribeTransactions(TXN).errorCode).toBe(E.COORDINATOR_NOT_AVAILABLE);
  });
});
