/**
 * The transaction state manager over an in-memory `__transaction_state`: loading a partition
 * (records of an earlier coordinator, tombstones, Prepare* transactions completed after the
 * load), unloading, append error mapping and coordinator epoch checks, transactional id expiration.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CompressionType, encodeRecordBatch, ErrorCode } from '@samsa/protocol';
import { encodeTransactionLogKey, encodeTransactionLogValue, type TransactionLogValue } from './transaction-log.js';
import { partitionForTransactionalId } from './transaction-partitioner.js';
import { transactionLogAppendError, TransactionResult } from './transaction-state-manager.js';
import { TransactionState } from './transaction-state.js';
import { flush, newHarness, type Harness } from './test-support.js';

const E = ErrorCode;
const S = TransactionState;
const TIMEOUT = 60_000;
const NOW = 1_000_000;

let h: Harness;

beforeEach(async () => {
  vi.useFakeTimers({ now: NOW, toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
  h = await newHarness();
});

afterEach(async () => {
  await h.coord.shutdown();
  vi.useRealTimers();
});

function value(v: Partial<TransactionLogValue>): TransactionLogValue {
  return {
    producerId: 500n,
    producerEpoch: 4,
    transactionTimeoutMs: TIMEOUT,
    state: S.Empty,
    partitions: null,
    lastUpdateTimestampMs: NOW,
    startTimestampMs: -1,
    ...v,
  };
}

/** Writes records as an earlier coordinator of partition 0 did. */
function previously(records: Array<[string, TransactionLogValue | null]>, keyVersion = 0): void {
  h.storage.write(
    0,
    encodeRecordBatch({
      records: records.map(([id, v]) => {
        const key = encodeTransactionLogKey(id);
        if (keyVersion !== 0) key.writeInt16BE(keyVersion, 0);
        return { key, value: v === null ? null : encodeTransactionLogValue(v) };
      }),
      baseTimestamp: NOW,
      compression: CompressionType.NONE,
    }),
  );
}

async function reload(epoch = 2): Promise<void> {
  h.coord.onResignation(0, 1);
  await h.coord.onElection(0, epoch);
}

function lookup(id: string) {
  const r = h.coord.txnManager.getTransactionState(id);
  return 'found' in r ? r.found : r.error;
}

describe('transaction state manager – loading', () => {
  it('loads every transactional id of the partition; a tombstone removes one; keys of unknown versions are skipped', async () => {
    previously([
      ['a', value({ state: S.Empty })],
      ['b', value({ state: S.Ongoing, partitions: [{ topic: 't', partitionIds: [0, 1] }], startTimestampMs: NOW - 5 })],
      ['gone', value({})],
      ['gone', null],
    ]);
    previously([['weird', value({})]], 7);
    await reload();
    const b = lookup('b');
    if (typeof b !== 'object' || b === undefined) throw new Error('b not loaded');
    expect([b.coordinatorEpoch, b.metadata.state, b.metadata.producerId, b.metadata.producerEpoch, b.metadata.txnStartTimestamp]).toEqual([
      2,
      S.Ongoing,
      500n,
      4,
      NOW - 5,
    ]);
    expect(b.metadata.topicPartitions.toArray()).toEqual([
      { topic: 't', partition: 0 },
      { topic: 't', partition: 1 },
    ]);
    expect(lookup('a')).toBeDefined();
    expect(lookup('gone')).toBeUndefined();
    expect(lookup('weird')).toBeUndefined();
  });

  it('answers COORDINATOR_LOAD_IN_PROGRESS while reading and NOT_COORDINATOR for partitions not led', async () => {
    const h2 = await newHarness({}, 2);
    const id0 = ['a', 'b', 'c', 'd', 'e'].find((id) => partitionForTransactionalId(id, 2) === 0)!;
    const id1 = ['a', 'b', 'c', 'd', 'e'].find((id) => partitionForTransactionalId(id, 2) === 1)!;
    h2.coord.onResignation(1, 1);
    let open!: () => void;
    h2.storage.readGate = new Promise((r) => (open = r));
    h2.coord.onResignation(0, 1);
    const load = h2.coord.onElection(0, 2);
    expect(h2.coord.txnManager.getTransactionState(id0)).toEqual({ error: E.COORDINATOR_LOAD_IN_PROGRESS });
    expect(h2.coord.txnManager.getTransactionState(id1)).toEqual({ error: E.NOT_COORDINATOR });
    open();
    await load;
    expect(h2.coord.txnManager.getTransactionState(id0)).toEqual({ error: E.NONE, found: undefined });
    await h2.coord.shutdown();
  });

  it('a resignation during the load discards what was read', async () => {
    previously([['a', value({})]]);
    h.coord.onResignation(0, 1);
    let open!: () => void;
    h.storage.readGate = new Promise((r) => (open = r));
    const load = h.coord.onElection(0, 2);
    h.coord.onResignation(0, 2);
    open();
    await load;
    expect(lookup('a')).toBe(E.NOT_COORDINATOR);
  });

  it('transactions loaded in PrepareCommit/PrepareAbort get their markers sent again and are completed', async () => {
    previously([
      ['c', value({ producerId: 7n, state: S.PrepareCommit, partitions: [{ topic: 't', partitionIds: [2] }], startTimestampMs: NOW - 9 })],
      ['x', value({ producerId: 8n, producerEpoch: 1, state: S.PrepareAbort, partitions: [{ topic: 'u', partitionIds: [3] }], startTimestampMs: NOW - 9 })],
    ]);
    await reload(5);
    await flush();
    expect(h.brokers.markersFor('t', 2)).toEqual([{ brokerId: 1, result: TransactionResult.COMMIT, producerEpoch: 4, coordinatorEpoch: 5 }]);
    expect(h.brokers.markersFor('u', 3)).toEqual([{ brokerId: 2, result: TransactionResult.ABORT, producerEpoch: 1, coordinatorEpoch: 5 }]);
    const tail = h.storage.records(0).slice(-2);
    expect(tail.map((r) => [r.transactionalId, r.value?.state]).sort()).toEqual([
      ['c', S.CompleteCommit],
      ['x', S.CompleteAbort],
    ]);
  });
});

describe('transaction state manager – appends', () => {
  it('maps append errors as Kafka does', () => {
    const cases: Array<[number, number]> = [
      [E.NONE, E.NONE],
      [E.UNKNOWN_TOPIC_OR_PARTITION, E.COORDINATOR_NOT_AVAILABLE],
      [E.NOT_ENOUGH_REPLICAS, E.COORDINATOR_NOT_AVAILABLE],
      [E.NOT_ENOUGH_REPLICAS_AFTER_APPEND, E.COORDINATOR_NOT_AVAILABLE],
      [E.REQUEST_TIMED_OUT, E.COORDINATOR_NOT_AVAILABLE],
      [E.NOT_LEADER_OR_FOLLOWER, E.NOT_COORDINATOR],
      [E.KAFKA_STORAGE_ERROR, E.NOT_COORDINATOR],
      [E.MESSAGE_TOO_LARGE, E.UNKNOWN_SERVER_ERROR],
      [E.RECORD_LIST_TOO_LARGE, E.UNKNOWN_SERVER_ERROR],
      [E.INVALID_FETCH_SIZE, E.INVALID_FETCH_SIZE],
    ];
    for (const [append, answer] of cases) expect(transactionLogAppendError(append), `append ${append}`).toBe(answer);
  });

  it('an append error reaches the caller mapped (NOT_LEADER_OR_FOLLOWER → NOT_COORDINATOR) and leaves no pending state', async () => {
    await h.coord.handleInitProducerId('a', TIMEOUT, null);
    h.storage.nextErrors.push(E.NOT_LEADER_OR_FOLLOWER);
    expect((await h.coord.handleInitProducerId('a', TIMEOUT, null)).errorCode).toBe(E.NOT_COORDINATOR);
    h.storage.nextErrors.push(E.MESSAGE_TOO_LARGE);
    expect((await h.coord.handleInitProducerId('a', TIMEOUT, null)).errorCode).toBe(E.UNKNOWN_SERVER_ERROR);
    const m = lookup('a');
    expect(typeof m === 'object' && m?.metadata.pendingState).toBeNull();
  });

  it('a coordinator epoch change during the append answers NOT_COORDINATOR and does not apply the transition', async () => {
    await h.coord.handleInitProducerId('a', TIMEOUT, null);
    h.storage.hold = true;
    const pending = h.coord.handleInitProducerId('a', TIMEOUT, null);
    await flush();
    // resign and lead again (a newer epoch) while the write waits for its acks
    h.coord.onResignation(0, 1);
    h.storage.hold = false;
    await h.coord.onElection(0, 2);
    expect((await pending).errorCode).toBe(E.NOT_COORDINATOR);
    h.storage.release();
    const m = lookup('a');
    if (typeof m !== 'object' || m === undefined) throw new Error('a not loaded');
    // the reload read the written record (epoch 1); the old in-memory transition was not applied twice
    expect([m.coordinatorEpoch, m.metadata.producerEpoch, m.metadata.pendingState]).toEqual([2, 1, null]);
  });
});

describe('transaction state manager – transactional id expiration', () => {
  const EXPIRY = 604_800_000;

  it('ids idle for transactional.id.expiration.ms in Empty/Complete* get a tombstone and leave the cache; open transactions stay', async () => {
    const a = await h.coord.handleInitProducerId('a', TIMEOUT, null);
    const b = await h.coord.handleInitProducerId('b', TIMEOUT, null);
    await h.coord.handleAddPartitionsToTransaction('b', b.producerId, b.producerEpoch, [{ topic: 't', partition: 0 }]);
    await h.coord.handleInitProducerId('fresh', TIMEOUT, null);
    expect(a.errorCode).toBe(E.NONE);
    vi.setSystemTime(NOW + EXPIRY);
    await h.coord.handleInitProducerId('fresh', TIMEOUT, null);
    expect(await h.coord.txnManager.removeExpiredTransactionalIds()).toBe(1);
    expect(lookup('a')).toBeUndefined();
    expect(lookup('b')).toBeDefined();
    expect(lookup('fresh')).toBeDefined();
    expect(h.storage.records(0).at(-1)).toEqual({ transactionalId: 'a', value: null });
    expect(h.storage.appends.at(-1)).toMatchObject({ acks: -1, timeoutMs: 30_000 });
    // a new InitProducerId for the expired id starts over with a new producer id
    expect(await h.coord.handleInitProducerId('a', TIMEOUT, null)).toMatchObject({ producerId: 1003n, producerEpoch: 0 });
  });

  it('tombstones are batched within max.message.bytes', async () => {
    // 40 ids of 30000 bytes (a string's most is 32767): 1.2 MB of tombstones
    const ids = Array.from({ length: 40 }, (_, i) => `${'x'.repeat(30_000)}${i}`);
    for (const id of ids) expect((await h.coord.handleInitProducerId(id, TIMEOUT, null)).errorCode).toBe(E.NONE);
    const before = h.storage.appends.length;
    vi.setSystemTime(NOW + EXPIRY);
    expect(await h.coord.txnManager.removeExpiredTransactionalIds()).toBe(40);
    expect(h.storage.appends.length - before).toBe(2);
    expect(
      h.storage
        .records(0)
        .slice(-40)
        .every((r) => r.value === null),
    ).toBe(true);
  });

  it('a failed tombstone write keeps the id (no pending state left)', async () => {
    await h.coord.handleInitProducerId('a', TIMEOUT, null);
    vi.setSystemTime(NOW + EXPIRY);
    h.storage.nextErrors.push(E.NOT_ENOUGH_REPLICAS);
    expect(await h.coord.txnManager.removeExpiredTransactionalIds()).toBe(0);
    const m = lookup('a');
    expect(typeof m === 'object' && m !== undefined && [m.metadata.state, m.metadata.pendingState]).toEqual([S.Empty, null]);
  });

  it('runs every transaction.remove.expired.transaction.cleanup.interval.ms once started', async () => {
    const h2 = await newHarness({ removeExpiredTransactionalIdsIntervalMs: 1000, transactionalIdExpirationMs: 5000 });
    h2.coord.txnManager.startup(1, true);
    await h2.coord.handleInitProducerId('a', TIMEOUT, null);
    await vi.advanceTimersByTimeAsync(5000);
    await flush();
    expect(h2.coord.txnManager.getTransactionState('a')).toEqual({ error: E.NONE, found: undefined });
    await h2.coord.shutdown();
  });
});
