import { readdir, truncate, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { KafkaError, encodeEndTxnMarkerBatch, encodeRecordBatch } from '@samsa/protocol';
import { logConfig } from './config.js';
import { Log } from './log.js';
import { LogSegment } from './segment.js';
import { readSnapshotFile } from './snapshot.js';
import { ManualClock, batchesIn, makeTempDir } from './test-support.js';

let dir: string;
let cleanup: () => Promise<void>;
let clock: ManualClock;
const open: Log[] = [];
beforeEach(async () => {
  ({ dir, cleanup } = await makeTempDir('samsa-txn-'));
  clock = new ManualClock(2_000_000_000_000);
});
afterEach(async () => {
  for (const l of open.splice(0)) if (!l.isClosed) await l.close();
  await cleanup();
});

const partitionDir = () => join(dir, 'orders-0');

async function openLog(extra: Partial<Parameters<typeof Log.open>[0]> = {}): Promise<Log> {
  const log = await Log.open({
    dir: partitionDir(),
    topicPartition: { topic: 'orders', partition: 0 },
    config: logConfig({ indexIntervalBytes: 100, fileDeleteDelayMs: 0 }),
    clock,
    ...extra,
  });
  open.push(log);
  return log;
}

/** A data batch of `n` records; transactional unless said otherwise. */
function data(producerId: bigint, epoch: number, seq: number, n = 2, transactional = true): Buffer {
  const records = Array.from({ length: n }, (_, i) => ({ key: `k${i}`, value: 'v', timestamp: clock.now() }));
  return encodeRecordBatch({ records, producerId, producerEpoch: epoch, baseSequence: seq, transactional });
}

function marker(producerId: bigint, epoch: number, commit: boolean, coordinatorEpoch = 0): Buffer {
  return encodeEndTxnMarkerBatch({ producerId, producerEpoch: epoch, commit, coordinatorEpoch, timestamp: clock.now() });
}

const coordinator = { origin: 'coordinator' } as const;

/** Appends as leader and moves the high watermark to the log end (a single replica). */
async function write(log: Log, records: Buffer, asCoordinator = false): Promise<bigint> {
  const info = await log.appendAsLeader(records, 0, asCoordinator ? coordinator : {});
  log.updateHighWatermark(log.logEndOffset);
  return info.firstOffset;
}

async function rejected(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(KafkaError);
  return (err as KafkaError).errorName;
}

describe('log transactions', () => {
  test('producer state – a transactional batch starts a transaction; its ABORT completes it, unreplicated until the high watermark passes the marker', async () => {
    const log = await openLog();
    await log.appendAsLeader(data(1n, 0, 0), 0); // offsets 0-1
    const e = log.producerState.lastEntry(1n)!;
    expect(e.currentTxnFirstOffset).toBe(0n);
    expect([...log.producerState.transactions.ongoingTxns.keys()]).toEqual([0n]);
    await log.appendAsLeader(data(2n, 0, 0, 2, false), 0); // 2-3, idempotent, not transactional
    await log.appendAsLeader(marker(1n, 0, false, 3), 0, coordinator); // ABORT at 4
    expect(e.currentTxnFirstOffset).toBe(-1n);
    expect(e.coordinatorEpoch).toBe(3);
    expect(log.producerState.transactions.ongoingTxns.size).toBe(0);
    expect(log.producerState.transactions.unreplicatedTxns.get(0n)).toEqual({ producerId: 1n, firstOffset: 0n, lastOffset: 4n });
    expect(await log.collectAbortedTransactions(0n, 100n)).toEqual([{ producerId: 1n, firstOffset: 0n, lastOffset: 4n, lastStableOffset: 5n }]);
    log.updateHighWatermark(4n);
    expect(log.lastStableOffset).toBe(0n);
    log.updateHighWatermark(5n);
    expect(log.producerState.firstUnstableOffset).toBeNull();
    expect(log.lastStableOffset).toBe(5n);
  });

  test('LSO – ongoing transactions hold it back; COMMIT writes no index entry; an ABORT records the oldest other ongoing transaction as its LSO', async () => {
    const log = await openLog();
    await write(log, data(1n, 0, 0)); // 0-1
    expect(log.highWatermark).toBe(2n);
    expect(log.lastStableOffset).toBe(0n);
    await write(log, data(2n, 0, 0)); // 2-3
    await write(log, marker(1n, 0, false), true); // ABORT at 4
    expect(log.lastStableOffset).toBe(2n);
    await log.appendAsLeader(marker(2n, 0, true), 0, coordinator); // COMMIT at 5, high watermark still 5
    expect(log.lastStableOffset).toBe(2n);
    log.updateHighWatermark(6n);
    expect(log.lastStableOffset).toBe(6n);
    expect(await log.collectAbortedTransactions(0n, 100n)).toEqual([{ producerId: 1n, firstOffset: 0n, lastOffset: 4n, lastStableOffset: 2n }]);
    // non-transactional data never holds the LSO back
    await write(log, data(3n, 0, 0, 2, false));
    expect(log.lastStableOffset).toBe(log.highWatermark);
  });

  test('producer state – leader checks: stale coordinator epoch, older producer epoch on a marker, non-transactional write inside a transaction', async () => {
    const log = await openLog();
    await write(log, data(1n, 0, 0)); // 0-1
    await write(log, marker(1n, 0, true, 5), true); // 2
    await write(log, data(1n, 0, 2)); // 3-4, a new transaction
    expect(await rejected(log.appendAsLeader(marker(1n, 0, false, 4), 0, coordinator))).toBe('TRANSACTION_COORDINATOR_FENCED');
    expect(await rejected(log.appendAsLeader(data(1n, 0, 4, 1, false), 0))).toBe('INVALID_TXN_STATE');
    expect(log.logEndOffset).toBe(5n);
    // the coordinator bumps the epoch when it aborts (a timed-out transaction): accepted
    await write(log, marker(1n, 1, false, 5), true); // 5
    expect(log.producerState.lastEntry(1n)!.producerEpoch).toBe(1);
    expect(await rejected(log.appendAsLeader(marker(1n, 0, true, 5), 0, coordinator))).toBe('INVALID_PRODUCER_EPOCH');
    expect(await rejected(log.appendAsLeader(data(1n, 0, 5), 0))).toBe('INVALID_PRODUCER_EPOCH');
    // after the marker, a non-transactional batch of the new epoch is fine again
    await write(log, data(1n, 1, 0, 1, false));
    expect(log.logEndOffset).toBe(7n);
  });

  test('producer state – followers take markers as they are (no fencing checks)', async () => {
    const log = await openLog();
    await write(log, data(1n, 0, 0));
    await write(log, marker(1n, 0, true, 5), true);
    const stale = encodeEndTxnMarkerBatch({ producerId: 1n, producerEpoch: 0, commit: false, coordinatorEpoch: 1, baseOffset: log.logEndOffset });
    await log.appendAsFollower(stale);
    expect(log.producerState.lastEntry(1n)!.coordinatorEpoch).toBe(1);
  });

  test('collectAbortedTransactions – walks the segments from the one holding the start offset and stops at a complete search', async () => {
    const log = await openLog();
    await write(log, data(1n, 0, 0)); // 0-1
    await write(log, marker(1n, 0, false), true); // 2
    await log.roll();
    await write(log, data(2n, 0, 0)); // 3-4
    await write(log, marker(2n, 0, false), true); // 5
    await log.roll();
    await write(log, data(3n, 0, 0)); // 6-7
    await write(log, marker(3n, 0, true), true); // 8
    await write(log, data(4n, 0, 0)); // 9-10
    await write(log, marker(4n, 0, false), true); // 11
    expect(log.segments.map((s) => s.baseOffset)).toEqual([0n, 3n, 6n]);
    const names = (await readdir(partitionDir())).filter((n) => n.endsWith('.txnindex')).sort();
    expect(names).toEqual(['00000000000000000000.txnindex', '00000000000000000003.txnindex', '00000000000000000006.txnindex']);
    expect((await log.collectAbortedTransactions(0n, 12n)).map((t) => [t.producerId, t.firstOffset, t.lastOffset])).toEqual([
      [1n, 0n, 2n],
      [2n, 3n, 5n],
      [4n, 9n, 11n],
    ]);
    expect((await log.collectAbortedTransactions(3n, 6n)).map((t) => t.producerId)).toEqual([2n]);
    expect((await log.collectAbortedTransactions(6n, 9n)).map((t) => t.producerId)).toEqual([]);
  });

  test('readCommitted – reads up to the LSO and answers the aborted transactions of the range read', async () => {
    const log = await openLog();
    await write(log, data(1n, 0, 0)); // 0-1, open
    await write(log, data(2n, 0, 0, 2, false)); // 2-3
    let r = await log.readCommitted(0n, 1 << 20, true);
    expect(r.records.sizeInBytes).toBe(0);
    expect(r.abortedTransactions).toEqual([]);
    await write(log, marker(1n, 0, false), true); // 4
    await write(log, data(5n, 0, 0)); // 5-6, open
    expect(log.lastStableOffset).toBe(5n);
    r = await log.readCommitted(0n, 1 << 20, true);
    expect(batchesIn(await r.records.read()).map((b) => b.baseOffset)).toEqual([0n, 2n, 4n]);
    expect(r.abortedTransactions.map((t) => [t.producerId, t.firstOffset])).toEqual([[1n, 0n]]);
    // read_uncommitted reads to the high watermark
    const u = await log.read(0n, 1 << 20, log.highWatermark, true);
    expect(batchesIn(await u.records.read()).map((b) => b.baseOffset)).toEqual([0n, 2n, 4n, 5n]);
  });

  test('recovery – deleted or torn .txnindex files are rebuilt by an unclean reopen: same aborted list and LSO', async () => {
    let log = await openLog();
    await write(log, data(1n, 0, 0)); // 0-1
    await write(log, data(2n, 0, 0)); // 2-3
    await write(log, marker(1n, 0, false), true); // 4
    await log.roll();
    await write(log, marker(2n, 0, false), true); // 5
    await write(log, data(3n, 0, 0)); // 6-7
    await write(log, marker(3n, 0, false), true); // 8
    await write(log, data(4n, 0, 0)); // 9-10, still open
    const aborted = await log.collectAbortedTransactions(0n, log.logEndOffset);
    const lso = log.lastStableOffset;
    const hw = log.highWatermark;
    expect(aborted).toHaveLength(3);
    expect(lso).toBe(9n);
    await log.flush();
    await log.close();
    for (const variant of ['deleted', 'torn'] as const) {
      for (const n of await readdir(partitionDir())) {
        if (!n.endsWith('.txnindex')) continue;
        if (variant === 'deleted') await unlink(join(partitionDir(), n));
        else await truncate(join(partitionDir(), n), 20);
      }
      log = await openLog({ hadCleanShutdown: false, recoveryPoint: 0n, highWatermark: hw });
      expect(await log.collectAbortedTransactions(0n, log.logEndOffset)).toEqual(aborted);
      expect(log.lastStableOffset).toBe(lso);
      await log.close();
    }
  });

  test('truncation – drops the index entries at and after the offset and reopens the transactions it cuts', async () => {
    const log = await openLog();
    await write(log, data(1n, 0, 0)); // 0-1
    await write(log, marker(1n, 0, false), true); // 2
    await log.roll();
    await write(log, data(2n, 0, 0)); // 3-4
    await write(log, marker(2n, 0, false), true); // 5
    await write(log, data(3n, 0, 0)); // 6-7
    await write(log, marker(3n, 0, false), true); // 8
    await log.truncateTo(8n);
    expect((await log.collectAbortedTransactions(0n, 100n)).map((t) => t.producerId)).toEqual([1n, 2n]);
    expect((await log.segments[1]!.txnIndex.allAbortedTxns()).map((t) => t.lastOffset)).toEqual([5n]);
    expect(log.lastStableOffset).toBe(6n); // producer 3's transaction is open again
    await log.truncateTo(5n);
    expect((await log.collectAbortedTransactions(0n, 100n)).map((t) => t.producerId)).toEqual([1n]);
    expect(log.lastStableOffset).toBe(3n);
  });

  test('snapshot – an ongoing transaction and the coordinator epoch survive a clean close and reopen', async () => {
    let log = await openLog();
    await write(log, data(1n, 0, 0)); // 0-1
    await write(log, marker(1n, 0, true, 7), true); // 2
    await write(log, data(1n, 0, 2)); // 3-4, open
    const hw = log.highWatermark;
    await log.flush();
    await log.close();
    const entries = await readSnapshotFile(partitionDir(), 5n);
    expect(entries).toMatchObject([{ producerId: 1n, coordinatorEpoch: 7, currentTxnFirstOffset: 3n, lastOffset: 4n }]);
    log = await openLog({ hadCleanShutdown: true, recoveryPoint: 5n, highWatermark: hw });
    const e = log.producerState.lastEntry(1n)!;
    expect(e.currentTxnFirstOffset).toBe(3n);
    expect(e.coordinatorEpoch).toBe(7);
    expect(log.lastStableOffset).toBe(3n);
    expect(await rejected(log.appendAsLeader(marker(1n, 0, false, 6), 0, coordinator))).toBe('TRANSACTION_COORDINATOR_FENCED');
    await write(log, marker(1n, 0, false, 7), true); // 5
    expect(log.lastStableOffset).toBe(6n);
    expect(await log.collectAbortedTransactions(0n, 100n)).toEqual([{ producerId: 1n, firstOffset: 3n, lastOffset: 5n, lastStableOffset: 6n }]);
  });

  test("segment files – a .txnindex goes with its segment: deleted by retention, replaced by the cleaned segment's own by the swap", async () => {
    const log = await openLog();
    await write(log, data(1n, 0, 0)); // 0-1
    await write(log, marker(1n, 0, false), true); // 2
    await log.roll();
    await write(log, data(2n, 0, 0, 2, false)); // 3-4
    await log.roll();
    await write(log, data(3n, 0, 0)); // 5-6
    await write(log, marker(3n, 0, false), true); // 7
    await log.roll();
    // the cleaner's swap: one cleaned segment (the same batches, its index written by the cleaner) replaces the first two
    const old = log.segments.slice(0, 2);
    const cleaned = await LogSegment.create(partitionDir(), 0n, { config: log.config, clock, fileSuffix: '.cleaned' });
    for (const s of old) {
      const bytes = await s.log.slice(0, s.size).read();
      await cleaned.append(batchesIn(bytes).at(-1)!.lastOffset, clock.now(), 0n, bytes);
    }
    for (const t of await old[0]!.txnIndex.allAbortedTxns()) await cleaned.txnIndex.append(t);
    expect(await log.replaceSegments([cleaned], old, log.truncationCount)).toBe(true);
    await log.awaitPendingDeletes();
    expect(await cleaned.txnIndex.allAbortedTxns()).toEqual([{ producerId: 1n, firstOffset: 0n, lastOffset: 2n, lastStableOffset: 3n }]);
    const txnFiles = async () => (await readdir(partitionDir())).filter((n) => n.includes('.txnindex')).sort();
    expect(await txnFiles()).toEqual(['00000000000000000000.txnindex', '00000000000000000005.txnindex']);
    expect((await log.collectAbortedTransactions(0n, 100n)).map((t) => t.producerId)).toEqual([1n, 3n]);
    // retention: segments below the log start offset go with their transaction indexes
    await log.maybeIncrementLogStartOffset(8n);
    expect(await log.deleteOldSegments()).toBe(2);
    await log.awaitPendingDeletes();
    expect(await txnFiles()).toEqual([]);
  });
});
