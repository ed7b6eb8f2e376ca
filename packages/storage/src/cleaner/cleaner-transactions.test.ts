import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { encodeEndTxnMarkerBatch, encodeRecordBatch } from '@samsa/protocol';
import { logConfig, type LogConfig } from '../config.js';
import { Log } from '../log.js';
import { ManualClock, makeTempDir } from '../test-support.js';
import { cleanableOffsets } from './cleaner-manager.js';
import { cleanLog, makeCleaner, readCommittedView, readLog, type ReadBatch } from './test-support.js';

let dir: string;
let cleanup: () => Promise<void>;
let clock: ManualClock;
const open: Log[] = [];
beforeEach(async () => {
  ({ dir, cleanup } = await makeTempDir('samsa-cleaner-txn-'));
  clock = new ManualClock(1_700_000_000_000);
});
afterEach(async () => {
  for (const l of open.splice(0)) if (!l.isClosed) await l.close();
  await cleanup();
});

async function openLog(over: Partial<LogConfig> = {}, extra: Partial<Parameters<typeof Log.open>[0]> = {}): Promise<Log> {
  const log = await Log.open({
    dir: join(dir, 'compacted-0'),
    topicPartition: { topic: 'compacted', partition: 0 },
    config: logConfig({ compact: true, segmentBytes: 1 << 20, fileDeleteDelayMs: 0, retentionMs: -1, deleteRetentionMs: 60_000, ...over }),
    clock,
    ...extra,
  });
  open.push(log);
  return log;
}

type KV = [key: string, value: string | null];

/** Writes batches as a leader would take them, tracking each producer's sequence; the high watermark follows. */
class Writer {
  private readonly seqs = new Map<bigint, number>();
  constructor(private readonly log: Log) {}

  /** Non-transactional records without a producer id; answers their first offset. */
  plain(...records: KV[]): Promise<bigint> {
    return this.append(encodeRecordBatch({ records: records.map(([key, value]) => ({ key, value, timestamp: clock.now() })) }));
  }

  /** A transactional batch of `producerId` (starts or continues its transaction). */
  txn(producerId: bigint, ...records: KV[]): Promise<bigint> {
    return this.txnWithEpoch(producerId, 0, ...records);
  }

  txnWithEpoch(producerId: bigint, producerEpoch: number, ...records: KV[]): Promise<bigint> {
    const baseSequence = this.seqs.get(producerId) ?? 0;
    this.seqs.set(producerId, baseSequence + records.length);
    const batch = encodeRecordBatch({
      records: records.map(([key, value]) => ({ key, value, timestamp: clock.now() })),
      producerId,
      producerEpoch,
      baseSequence,
      transactional: true,
    });
    return this.append(batch);
  }

  /** The coordinator's COMMIT or ABORT marker for `producerId`. */
  marker(producerId: bigint, commit: boolean, producerEpoch = 0): Promise<bigint> {
    return this.append(encodeEndTxnMarkerBatch({ producerId, producerEpoch, commit, coordinatorEpoch: 0, timestamp: clock.now() }), true);
  }

  /** Some values of other keys (so that a cleaning has something to map). */
  async filler(round: number): Promise<void> {
    for (let i = 0; i < 4; i++) await this.plain([`f${i}`, `r${round}`]);
  }

  private async append(batch: Buffer, coordinator = false): Promise<bigint> {
    const info = await this.log.appendAsLeader(batch, 0, coordinator ? { origin: 'coordinator' } : {});
    this.log.updateHighWatermark(this.log.logEndOffset);
    return info.firstOffset;
  }
}

/** The latest committed record of each key among `view`'s records below `upTo`, everything from it on. */
function compacted(view: Array<[bigint, string | null, string | null]>, upTo: bigint): Array<[bigint, string | null, string | null]> {
  const latest = new Map<string | null, bigint>();
  for (const [off, key] of view) if (off < upTo) latest.set(key, off);
  return view.filter(([off, key]) => off >= upTo || latest.get(key) === off);
}

const batchAt = (batches: readonly ReadBatch[], offset: bigint): ReadBatch | undefined => batches.find((b) => b.baseOffset <= offset && b.lastOffset >= offset);

describe('cleaner transactions', () => {
  test('cleaner transactions – aborted records are removed and shadow nothing; committed ones are compacted by key; read_committed answers the latest committed values', async () => {
    const log = await openLog();
    const w = new Writer(log);
    await w.plain(['k0', 'plain'], ['k1', 'plain'], ['k2', 'plain']);
    await w.txn(1n, ['k0', 'committed-1'], ['k1', 'committed-1']);
    await w.marker(1n, true);
    await w.txn(2n, ['k0', 'aborted'], ['k2', 'aborted']);
    await w.marker(2n, false);
    await w.txn(1n, ['k1', 'committed-2']);
    await w.marker(1n, true);
    // producer 2 goes on, so its aborted batch is not its last
    await w.txn(2n, ['k3', 'committed-3']);
    await w.marker(2n, true);
    await log.roll();
    const before = await readCommittedView(log);
    expect(before.map(([, , v]) => v)).not.toContain('aborted');

    const r = await cleanLog(makeCleaner(clock), log, clock);
    expect(r.endOffset).toBe(log.activeSegment.baseOffset);
    const after = await readCommittedView(log);
    expect(after).toEqual(compacted(before, r.endOffset));
    expect(after.map(([, k, v]) => `${k}=${v}`)).toEqual(['k2=plain', 'k0=committed-1', 'k1=committed-2', 'k3=committed-3']);
    // the aborted records are gone from the log itself, not only hidden from read_committed readers
    const raw = await readLog(log);
    expect(raw.records.some((rec) => rec.value === 'aborted')).toBe(false);
    expect(raw.batches.every((b) => b.crcValid)).toBe(true);
    // a read_uncommitted reader sees the same values now
    expect(raw.records.filter((rec) => !batchAt(raw.batches, rec.offset)?.control).map((rec) => `${rec.key}=${rec.value}`)).toEqual(
      after.map(([, k, v]) => `${k}=${v}`),
    );
  });

  test('cleaner transactions – an ABORT marker stays while its batches are being removed, then gets a delete horizon and goes after it; the cleaned .txnindex follows', async () => {
    const log = await openLog();
    const w = new Writer(log);
    await w.plain(['k0', 'plain']);
    const abortedFirst = await w.txn(2n, ['k0', 'aborted'], ['k1', 'aborted']);
    const abortMarker = await w.marker(2n, false);
    await w.txn(2n, ['k5', 'committed']);
    await w.marker(2n, true);
    await w.filler(0);
    await log.roll();
    const entry = { producerId: 2n, firstOffset: abortedFirst, lastOffset: abortMarker, lastStableOffset: abortMarker + 1n };
    expect(await log.collectAbortedTransactions(0n, log.logEndOffset)).toEqual([entry]);
    const cleaner = makeCleaner(clock);
    // every round: read_committed readers see the latest committed value of each key they saw before
    const round = async (firstDirty?: bigint): Promise<bigint> => {
      const before = await readCommittedView(log);
      const r = await cleanLog(cleaner, log, clock, firstDirty);
      expect(await readCommittedView(log)).toEqual(compacted(before, r.endOffset));
      return r.endOffset;
    };

    // round 1: the aborted batch goes; its marker and index entry stay (the batch was still there)
    let end = await round();
    let view = await readLog(log);
    expect(batchAt(view.batches, abortedFirst)).toBeUndefined();
    expect(batchAt(view.batches, abortMarker)).toMatchObject({ control: true, recordCount: 1, hasDeleteHorizon: false });
    expect(await log.segments[0]!.txnIndex.allAbortedTxns()).toEqual([entry]);
    expect(await log.collectAbortedTransactions(0n, log.logEndOffset)).toEqual([entry]);

    // round 2: nothing of the transaction is left: the marker gets a delete horizon, the index entry goes
    await w.filler(1);
    await log.roll();
    end = await round(end);
    view = await readLog(log);
    expect(batchAt(view.batches, abortMarker)).toMatchObject({ control: true, recordCount: 1, hasDeleteHorizon: true });
    expect(await log.collectAbortedTransactions(0n, log.logEndOffset)).toEqual([]);

    // before the horizon the marker stays
    clock.advance(59_000);
    await w.filler(2);
    await log.roll();
    end = await round(end);
    expect(batchAt((await readLog(log)).batches, abortMarker)).toMatchObject({ control: true, hasDeleteHorizon: true });

    // past it, the marker goes
    clock.advance(2_000);
    await w.filler(3);
    await log.roll();
    await round(end);
    expect(batchAt((await readLog(log)).batches, abortMarker)).toBeUndefined();

    // the cleaned log reloads (unclean: producer state and transaction indexes rebuilt) with the same view
    const committed = await readCommittedView(log);
    const hw = log.highWatermark;
    await log.flush();
    await log.close();
    const reopened = await openLog({}, { highWatermark: hw });
    expect(await readCommittedView(reopened)).toEqual(committed);
    expect(await reopened.collectAbortedTransactions(0n, reopened.logEndOffset)).toEqual([]);
  });

  test('cleaner transactions – an aborted transaction spanning segments cleaned as separate groups: its batches go, its index entry stays with the segment of its marker', async () => {
    const log = await openLog({ segmentBytes: 100 });
    const w = new Writer(log);
    await w.plain(['k0', 'plain'], ['k1', 'plain']);
    const first = await w.txn(2n, ['k0', 'aborted']);
    await w.txn(1n, ['k1', 'committed']);
    await log.roll();
    await w.txn(2n, ['k1', 'aborted']);
    await log.roll();
    const abort = await w.marker(2n, false);
    await w.marker(1n, true);
    await w.txn(2n, ['k2', 'committed']);
    await w.marker(2n, true);
    await log.roll();
    expect(log.numberOfSegments).toBeGreaterThanOrEqual(4);
    const before = await readCommittedView(log);

    const r = await cleanLog(makeCleaner(clock), log, clock);
    expect(log.numberOfSegments).toBeGreaterThanOrEqual(4);
    expect(await readCommittedView(log)).toEqual(compacted(before, r.endOffset));
    expect((await readCommittedView(log)).map(([, k, v]) => `${k}=${v}`)).toEqual(['k0=plain', 'k1=committed', 'k2=committed']);
    expect((await readLog(log)).records.some((rec) => rec.value === 'aborted')).toBe(false);
    // the marker stays this round (its batches were removed now), its entry in the cleaned segment holding it
    const holder = log.segments.findLast((s) => s.baseOffset <= abort)!;
    expect(await holder.txnIndex.allAbortedTxns()).toEqual([{ producerId: 2n, firstOffset: first, lastOffset: abort, lastStableOffset: expect.any(BigInt) }]);
    for (const s of log.segments) if (s !== holder) expect(await s.txnIndex.allAbortedTxns()).toEqual([]);
  });

  test('cleaner transactions – a COMMIT marker stays while records of its transaction remain, and goes after its delete horizon once they are compacted away', async () => {
    const log = await openLog({ deleteRetentionMs: 0 });
    const w = new Writer(log);
    await w.txn(1n, ['k0', 't1'], ['k1', 't1']);
    const firstCommit = await w.marker(1n, true);
    await w.plain(['k0', 'newer']);
    await log.roll();
    const cleaner = makeCleaner(clock);

    // k1 of the transaction is still the latest: the marker stays as it is
    let r = await cleanLog(cleaner, log, clock);
    let view = await readLog(log);
    expect(batchAt(view.batches, firstCommit)).toMatchObject({ control: true, recordCount: 1, hasDeleteHorizon: false });
    expect(view.records.filter((rec) => rec.key === 'k1').map((rec) => rec.value)).toEqual(['t1']);

    // k1 overwritten, and the producer writes on (so its first batch is not its last): the
    // transaction's batch is emptied and dropped in this round (seen: the marker stays) ...
    await w.plain(['k1', 'newer']);
    await w.txn(1n, ['k9', 't2']);
    const lastCommit = await w.marker(1n, true);
    await log.roll();
    clock.advance(1);
    r = await cleanLog(cleaner, log, clock, r.endOffset);
    view = await readLog(log);
    expect(batchAt(view.batches, 0n)).toBeUndefined();
    expect(batchAt(view.batches, firstCommit)).toMatchObject({ control: true, hasDeleteHorizon: false });

    // ... then gets its delete horizon (delete.retention.ms=0) ...
    await w.filler(0);
    await log.roll();
    clock.advance(1);
    r = await cleanLog(cleaner, log, clock, r.endOffset);
    expect(batchAt((await readLog(log)).batches, firstCommit)).toMatchObject({ control: true, hasDeleteHorizon: true });

    // ... and goes at the next cleaning; the later transaction and its marker stay
    await w.filler(1);
    await log.roll();
    clock.advance(1);
    await cleanLog(cleaner, log, clock, r.endOffset);
    view = await readLog(log);
    expect(batchAt(view.batches, firstCommit)).toBeUndefined();
    expect(batchAt(view.batches, lastCommit)).toMatchObject({ control: true, recordCount: 1 });
    expect((await readCommittedView(log)).filter(([, k]) => !k?.startsWith('f')).map(([, k, v]) => `${k}=${v}`)).toEqual(['k0=newer', 'k1=newer', 'k9=t2']);
  });

  test('cleaner transactions – an open transaction is never cleaned: cleaning stops at the last stable offset', async () => {
    const log = await openLog();
    const w = new Writer(log);
    for (let i = 0; i < 3; i++) await w.plain(['k0', `old${i}`], ['k1', `old${i}`]);
    await log.roll();
    const openTxn = await w.txn(1n, ['k0', 'open']);
    await w.plain(['k1', 'after-open']);
    await log.roll();
    await w.plain(['k1', 'latest']);
    await log.roll();
    expect(log.lastStableOffset).toBe(openTxn);
    expect(log.highWatermark).toBeGreaterThan(openTxn);
    const o = await cleanableOffsets(log, undefined, clock.now());
    expect(o.firstUncleanableDirtyOffset).toBe(openTxn);
    const untouched = await Promise.all(log.segments.slice(1).map((s) => readFile(s.log.path)));

    const r = await cleanLog(makeCleaner(clock), log, clock);
    expect(r.endOffset).toBeLessThanOrEqual(openTxn);
    // the segments from the open transaction on are the same files with the same bytes
    expect(await Promise.all(log.segments.slice(1).map((s) => readFile(s.log.path)))).toEqual(untouched);
    const raw = await readLog(log);
    expect(raw.records.filter((rec) => rec.offset >= openTxn).map((rec) => rec.value)).toEqual(['open', 'after-open', 'latest']);
    // below it, compaction happened
    expect(raw.records.filter((rec) => rec.offset < openTxn).map((rec) => rec.value)).toEqual(['old2', 'old2']);

    // committed: the transaction becomes cleanable and is compacted like any record
    await w.marker(1n, true);
    await log.roll();
    expect(log.lastStableOffset).toBe(log.highWatermark);
    await cleanLog(makeCleaner(clock), log, clock, r.endOffset);
    expect((await readCommittedView(log)).map(([, k, v]) => `${k}=${v}`)).toEqual(['k0=open', 'k1=latest']);
  });

  test('cleaner transactions – the last batch of an active producer is kept empty; a producer whose last entry is a marker keeps it with its epoch', async () => {
    const log = await openLog();
    const w = new Writer(log);
    // producer 1's last data batch is an aborted one
    await w.plain(['k0', 'plain']);
    const abortedLast = await w.txn(1n, ['k0', 'aborted']);
    const abort1 = await w.marker(1n, false);
    // producer 3's transaction is aborted by the coordinator with a bumped epoch: its last entry is that marker
    await w.txnWithEpoch(3n, 0, ['k1', 'aborted-3']);
    const abort3 = await w.marker(3n, false, 1);
    await log.roll();
    expect(log.producerState.lastEntry(3n)?.lastDataOffset).toBe(-1n);
    const cleaner = makeCleaner(clock);

    let r = await cleanLog(cleaner, log, clock);
    let view = await readLog(log);
    expect(view.records.some((rec) => rec.value?.startsWith('aborted'))).toBe(false);
    // producer 1's aborted batch stays as an empty batch (its sequence numbers), with its marker
    expect(batchAt(view.batches, abortedLast)).toMatchObject({ baseOffset: abortedLast, recordCount: 0, producerId: 1n, transactional: true, crcValid: true });
    expect(batchAt(view.batches, abort1)).toMatchObject({ control: true, recordCount: 1 });
    expect((await log.collectAbortedTransactions(0n, log.logEndOffset)).map((t) => t.producerId)).toEqual([1n, 3n]);

    // later rounds: producer 3's marker gets a horizon, then loses its record but stays as an empty control batch of epoch 1
    for (let i = 0; i < 3; i++) {
      await w.filler(i);
      await log.roll();
      clock.advance(61_000);
      r = await cleanLog(cleaner, log, clock, r.endOffset);
    }
    view = await readLog(log);
    expect(view.batches.filter((b) => b.producerId === 3n)).toEqual([
      expect.objectContaining({ baseOffset: abort3, control: true, recordCount: 0, producerEpoch: 1, crcValid: true }),
    ]);
    // producer 1's empty batch keeps the marker (its batch is still traversed) and the index entry
    expect(batchAt(view.batches, abortedLast)).toMatchObject({ recordCount: 0 });
    expect(batchAt(view.batches, abort1)).toMatchObject({ control: true, recordCount: 1 });
    expect((await log.collectAbortedTransactions(0n, log.logEndOffset)).map((t) => t.producerId)).toEqual([1n]);

    // the producer state rebuilt from the cleaned log (unclean reopen) keeps producer 1's sequence, no transaction is left open
    const hw = log.highWatermark;
    await log.flush();
    await log.close();
    const reopened = await openLog({}, { highWatermark: hw });
    expect(reopened.producerState.lastEntry(1n)).toMatchObject({ producerEpoch: 0, lastSeq: 0, currentTxnFirstOffset: -1n });
    expect(reopened.lastStableOffset).toBe(hw);
    expect((await reopened.collectAbortedTransactions(0n, reopened.logEndOffset)).map((t) => t.producerId)).toEqual([1n]);
  });
});
