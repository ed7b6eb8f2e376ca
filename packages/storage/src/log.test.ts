import { readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { isBatchCrcValid } from './batch-header.js';
import { TimestampType, logConfig, type LogConfig } from './config.js';
import { CorruptRecordError, OffsetOutOfRangeError, OffsetsOutOfOrderError, RecordTooLargeError, UnexpectedAppendOffsetError } from './errors.js';
import { ListOffsetsTimestamp, Log, prepareAppends } from './log.js';
import { LogSegment, type FetchDataInfo } from './segment.js';
import { ManualClock, batchOf, batchesIn, buildBatch, makeTempDir } from './test-support.js';

let dir: string;
let cleanup: () => Promise<void>;
let clock: ManualClock;
const open: Log[] = [];
beforeEach(async () => {
  ({ dir, cleanup } = await makeTempDir());
  clock = new ManualClock(2_000_000_000_000);
});
afterEach(async () => {
  for (const l of open.splice(0)) await l.close();
  await cleanup();
});

async function openLog(over: Partial<LogConfig> = {}, extra: Partial<Parameters<typeof Log.open>[0]> = {}): Promise<Log> {
  const log = await Log.open({
    dir: join(dir, 'orders-0'),
    topicPartition: { topic: 'orders', partition: 0 },
    config: logConfig({ indexIntervalBytes: 100, fileDeleteDelayMs: 0, ...over }),
    clock,
    ...extra,
  });
  open.push(log);
  return log;
}

async function readAll(log: Log, from: bigint, maxOffset?: bigint): Promise<ReturnType<typeof batchesIn>> {
  const out: ReturnType<typeof batchesIn> = [];
  let next = from;
  for (;;) {
    const info = await log.read(next, 1 << 20, maxOffset, true);
    const got = batchesIn(await info.records.read());
    if (got.length === 0) return out;
    out.push(...got);
    next = got.at(-1)!.lastOffset + 1n;
  }
}

describe('log', () => {
  test('log – appendAsLeader assigns offsets in place, stamps the leader epoch, keeps CRCs valid', async () => {
    const log = await openLog();
    const a = batchOf(3, 10, { timestamp: clock.now() });
    const info = await log.appendAsLeader(a, 5);
    expect(info).toMatchObject({ firstOffset: 0n, lastOffset: 2n, recordCount: 3, batchCount: 1, logAppendTime: -1n });
    const twoBatches = Buffer.concat([batchOf(2, 10, { baseOffset: 77n }), batchOf(4, 10, { baseOffset: 0n })]);
    const info2 = await log.appendAsLeader(twoBatches, 6);
    expect(info2).toMatchObject({ firstOffset: 3n, lastOffset: 8n, batchCount: 2, recordCount: 6 });
    expect(log.logEndOffset).toBe(9n);
    const batches = await readAll(log, 0n);
    expect(batches.map((b) => [b.baseOffset, b.lastOffset, b.epoch])).toEqual([
      [0n, 2n, 5],
      [3n, 4n, 6],
      [5n, 8n, 6],
    ]);
    const bytes = await (await log.read(0n, 1 << 20)).records.read();
    let pos = 0;
    for (const b of batches) {
      expect(isBatchCrcValid(bytes, pos, b.size)).toBe(true);
      pos += b.size;
    }
    expect(log.epochs.epochEntries()).toEqual([
      { epoch: 5, startOffset: 0n },
      { epoch: 6, startOffset: 3n },
    ]);
  });

  test('log – the recovery point waits for a leader epoch entry written in the background', async () => {
    const log = await openLog();
    await log.appendAsLeader(batchOf(2, 5), 0);
    expect(log.epochs.assignInBackground(1, log.logEndOffset)).toBe(true);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const written = vi.spyOn(log.epochs, 'written').mockReturnValue(gate);
    let flushed = false;
    const flush = log.flush().then(() => (flushed = true));
    await vi.waitFor(() => expect(written).toHaveBeenCalled());
    expect(flushed).toBe(false);
    expect(log.recoveryPoint).toBe(0n);
    release();
    await flush;
    expect(log.recoveryPoint).toBe(2n);
    written.mockRestore();
  });

  test('log – a log holding no records drops its queued leader epoch checkpoint at close; one with records keeps it', async () => {
    const empty = await openLog();
    const full = await openLog({}, { dir: join(dir, 'orders-1'), topicPartition: { topic: 'orders', partition: 1 } });
    await full.appendAsLeader(batchOf(2, 5), 0);
    const dropEmpty = vi.spyOn(empty.epochs, 'dropQueuedWrite');
    const dropFull = vi.spyOn(full.epochs, 'dropQueuedWrite');
    empty.epochs.assignInBackground(1, 0n);
    full.epochs.assignInBackground(1, full.logEndOffset);
    await empty.close();
    await full.close();
    expect(dropEmpty).toHaveBeenCalledTimes(1);
    expect(dropFull).not.toHaveBeenCalled();
    // the log with records has its entry on disk
    expect((await readdir(join(dir, 'orders-1'))).includes('leader-epoch-checkpoint')).toBe(true);
  });

  test('log – a new leadership of a log holding no records writes its epoch checkpoint only with the first record (leader or follower append)', async () => {
    const hasCheckpoint = async (d: string): Promise<boolean> => (await readdir(d)).includes('leader-epoch-checkpoint');
    const leader = await openLog();
    leader.assignLeaderEpochStart(1);
    expect(leader.latestEpoch).toBe(1);
    await leader.epochs.written();
    expect(await hasCheckpoint(leader.dir)).toBe(false);
    await leader.appendAsLeader(batchOf(2, 5), 1);
    await leader.flush();
    expect(await readFile(join(leader.dir, 'leader-epoch-checkpoint'), 'utf8')).toBe('0\n1\n1 0\n');
    // a log with records writes the next leadership's entry in the background at once
    leader.assignLeaderEpochStart(2);
    await leader.epochs.written();
    expect(await readFile(join(leader.dir, 'leader-epoch-checkpoint'), 'utf8')).toBe('0\n2\n1 0\n2 2\n');

    const follower = await openLog({}, { dir: join(dir, 'orders-1'), topicPartition: { topic: 'orders', partition: 1 } });
    follower.assignLeaderEpochStart(3);
    await follower.appendAsFollower(batchOf(1, 5, { baseOffset: 0n, partitionLeaderEpoch: 3 }));
    await follower.flush();
    expect(await readFile(join(follower.dir, 'leader-epoch-checkpoint'), 'utf8')).toBe('0\n1\n3 0\n');

    // closed before any record: no file at all
    const unused = await openLog({}, { dir: join(dir, 'orders-2'), topicPartition: { topic: 'orders', partition: 2 } });
    unused.assignLeaderEpochStart(1);
    await unused.close();
    expect(await hasCheckpoint(unused.dir)).toBe(false);
  });

  test('log – beforeNextAppend runs before the first record is written and once; a failed one fails the append and runs again', async () => {
    const log = await openLog();
    const sizesSeen: number[] = [];
    let fail = true;
    log.beforeNextAppend(async () => {
      sizesSeen.push(log.size);
      if (fail) throw new Error('fsync failed');
    });
    await expect(log.appendAsLeader(batchOf(1, 5), 0)).rejects.toThrow('fsync failed');
    expect(log.logEndOffset).toBe(0n);
    fail = false;
    await log.appendAsLeader(batchOf(1, 5), 0);
    await log.appendAsFollower(batchOf(1, 5, { baseOffset: 1n, partitionLeaderEpoch: 0 }));
    // run before anything was written, twice (the failure, then the retry), never again
    expect(sizesSeen).toEqual([0, 0]);
    expect(log.logEndOffset).toBe(2n);
  });

  test("log – prepareAppends runs the logs' due work together, and an append meanwhile shares the run instead of repeating it", async () => {
    const logs = await Promise.all([0, 1, 2].map((p) => openLog({}, { dir: join(dir, `orders-${p}`), topicPartition: { topic: 'orders', partition: p } })));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const started: number[] = [];
    logs.forEach((log, i) =>
      log.beforeNextAppend(async () => {
        started.push(i);
        await gate;
      }),
    );
    const prepared = prepareAppends(logs);
    // all three started before any finished (one after the other, the second would wait for the gate)
    await vi.waitFor(() => expect(started).toEqual([0, 1, 2]));
    const append = logs[0]!.appendAsLeader(batchOf(1, 5), 0);
    release();
    await prepared;
    await append;
    expect(started).toEqual([0, 1, 2]);
    expect(logs.every((l) => l.readyToAppend)).toBe(true);
    expect(logs[0]!.logEndOffset).toBe(1n);
  });

  test('log – at close a pending beforeNextAppend task runs if the log holds records, and not if it holds none', async () => {
    const empty = await openLog();
    const full = await openLog({}, { dir: join(dir, 'orders-1'), topicPartition: { topic: 'orders', partition: 1 } });
    await full.appendAsLeader(batchOf(1, 5), 0);
    const ran: string[] = [];
    empty.beforeNextAppend(async () => void ran.push('empty'));
    full.beforeNextAppend(async () => void ran.push('full'));
    await empty.close();
    await full.close();
    expect(ran).toEqual(['full']);
  });

  test('log – LogAppendTime stamps maxTimestamp and the attribute, recomputing the CRC', async () => {
    const log = await openLog({ messageTimestampType: TimestampType.LOG_APPEND_TIME });
    const info = await log.appendAsLeader(batchOf(2, 5, { timestamp: 5 }), 0);
    expect(info.logAppendTime).toBe(BigInt(clock.now()));
    expect(info.maxTimestamp).toBe(BigInt(clock.now()));
    const bytes = await (await log.read(0n, 1000)).records.read();
    expect(bytes.readBigInt64BE(35)).toBe(BigInt(clock.now()));
    expect(bytes.readInt16BE(21) & 0x08).toBe(0x08);
    expect(isBatchCrcValid(bytes, 0, bytes.length)).toBe(true);
  });

  test('log – rejects bad framing and oversized batches without writing', async () => {
    const log = await openLog({ maxMessageBytes: 500 });
    const b = batchOf(1, 10);
    await expect(log.appendAsLeader(b.subarray(0, b.length - 1), 0)).rejects.toThrow(CorruptRecordError);
    await expect(log.appendAsLeader(Buffer.concat([b, Buffer.alloc(5)]), 0)).rejects.toThrow(CorruptRecordError);
    await expect(log.appendAsLeader(batchOf(1, 600), 0)).rejects.toThrow(RecordTooLargeError);
    const bad = Buffer.from(b);
    bad.writeUInt8(bad.readUInt8(bad.length - 1) ^ 1, bad.length - 1);
    await expect(log.appendAsLeader(bad, 0, { verifyCrc: true })).rejects.toThrow(/corrupt/);
    expect(log.logEndOffset).toBe(0n);
    expect(log.size).toBe(0);
  });

  test('log – concurrent appends get consecutive offsets in call order', async () => {
    const log = await openLog({ segmentBytes: 2000 });
    const infos = await Promise.all(Array.from({ length: 50 }, () => log.appendAsLeader(batchOf(2, 20), 1)));
    expect(infos.map((i) => i.firstOffset)).toEqual(Array.from({ length: 50 }, (_, i) => BigInt(i * 2)));
    expect(log.numberOfSegments).toBeGreaterThan(1);
    const all = await readAll(log, 0n);
    expect(all.map((b) => b.baseOffset)).toEqual(infos.map((i) => i.firstOffset));
  });

  test('log – read: OFFSET_OUT_OF_RANGE outside [logStart, LEO], empty at LEO, bounded by the high watermark', async () => {
    const log = await openLog();
    for (let i = 0; i < 5; i++) await log.appendAsLeader(batchOf(2, 10), 0);
    await expect(log.read(11n, 100)).rejects.toBeInstanceOf(OffsetOutOfRangeError);
    await expect(log.read(-1n, 100)).rejects.toMatchObject({ code: 1 });
    const atEnd = await log.read(10n, 100);
    expect(atEnd.records.sizeInBytes).toBe(0);
    expect(atEnd.fetchOffsetMetadata.messageOffset).toBe(10n);
    // High watermark at 6: batches [0,1] [2,3] [4,5] only.
    const upTo6 = await readAll(log, 0n, 6n);
    expect(upTo6.map((b) => b.baseOffset)).toEqual([0n, 2n, 4n]);
    expect((await log.read(6n, 1000, 6n)).records.sizeInBytes).toBe(0);
    expect((await log.read(8n, 1000, 6n)).fetchOffsetMetadata).toEqual({ messageOffset: 8n, segmentBaseOffset: -1n, relativePositionInSegment: -1 });
  });

  test('log – KIP-74: the first batch is returned whole when minOneMessage, else cut to maxBytes', async () => {
    const log = await openLog();
    const first = batchOf(3, 400);
    await log.appendAsLeader(first, 0);
    await log.appendAsLeader(batchOf(1, 10), 0);
    const r1 = await log.read(0n, 50, undefined, true);
    expect(r1.records.sizeInBytes).toBe(first.length);
    const r2 = await log.read(0n, 50, undefined, false);
    expect(r2.records.sizeInBytes).toBe(50);
    expect(r2.firstEntryIncomplete).toBe(true);
    const r3 = await log.read(1n, first.length + 5, undefined, false);
    expect(r3.records.sizeInBytes).toBe(first.length + 5); // a partial trailing batch, as Kafka sends
  });

  test('log – rolls by size; reads continue across segments', async () => {
    const log = await openLog({ segmentBytes: 1000 });
    const sizes: number[] = [];
    for (let i = 0; i < 30; i++) {
      const b = batchOf(2, 50);
      sizes.push(b.length);
      await log.appendAsLeader(b, 0);
    }
    expect(log.numberOfSegments).toBeGreaterThan(3);
    for (const s of log.segments) expect(s.size).toBeLessThanOrEqual(1000);
    const files = (await readdir(log.dir)).filter((f) => f.endsWith('.log')).sort();
    expect(files[0]).toBe('00000000000000000000.log');
    expect(files).toContain(`${log.segments[1]!.baseOffset.toString().padStart(20, '0')}.log`);
    // A read from an older segment stops at that segment's end.
    const r = await log.read(0n, 1 << 20);
    expect(r.records.sizeInBytes).toBe(log.segments[0]!.size);
    expect((await readAll(log, 0n)).length).toBe(30);
    const mid = log.segments[2]!.baseOffset + 1n;
    expect((await readAll(log, mid))[0]?.baseOffset).toBe(mid - 1n);
    await log.flush();
    expect(log.recoveryPoint).toBe(60n);
  });

  test('log – rolls by time: record timestamps since the first batch, else wall clock (injected)', async () => {
    const log = await openLog({ segmentMs: 60_000 });
    await log.appendAsLeader(batchOf(1, 10, { timestamp: 1_000_000 }), 0);
    await log.appendAsLeader(batchOf(1, 10, { timestamp: 1_050_000 }), 0);
    expect(log.numberOfSegments).toBe(1);
    await log.appendAsLeader(batchOf(1, 10, { timestamp: 1_060_001 }), 0);
    expect(log.numberOfSegments).toBe(2);
    expect(log.activeSegment.baseOffset).toBe(2n);

    const log2 = await Log.open({ dir: join(dir, 'wall-0'), topicPartition: { topic: 'wall', partition: 0 }, config: logConfig({ segmentMs: 60_000 }), clock });
    open.push(log2);
    await log2.appendAsLeader(batchOf(1, 10, { timestamp: -1 }), 0);
    clock.advance(59_000);
    await log2.appendAsLeader(batchOf(1, 10, { timestamp: -1 }), 0);
    expect(log2.numberOfSegments).toBe(1);
    clock.advance(1_001);
    await log2.appendAsLeader(batchOf(1, 10, { timestamp: -1 }), 0);
    expect(log2.numberOfSegments).toBe(2);
  });

  test('log – rolls when the index is full', async () => {
    const log = await openLog({ maxIndexSize: 24, indexIntervalBytes: 1 });
    for (let i = 0; i < 10; i++) await log.appendAsLeader(batchOf(1, 10), 0);
    expect(log.numberOfSegments).toBeGreaterThan(2);
    expect((await readAll(log, 0n)).length).toBe(10);
    const inactive = log.segments[0]!;
    expect((await stat(inactive.offsetIndex.path)).size).toBe(inactive.offsetIndex.entries * 8);
  });

  test('log – retention by size deletes whole old segments below the high watermark, never the active one', async () => {
    const log = await openLog({ segmentBytes: 600, retentionBytes: 1000, retentionMs: -1 });
    for (let i = 0; i < 20; i++) await log.appendAsLeader(batchOf(2, 40), 3);
    const before = log.numberOfSegments;
    expect(await log.deleteOldSegments()).toBe(0); // high watermark still 0
    log.updateHighWatermark(log.logEndOffset);
    const deleted = await log.deleteOldSegments();
    expect(deleted).toBeGreaterThan(0);
    expect(log.numberOfSegments).toBe(before - deleted);
    expect(log.size).toBeLessThanOrEqual(1000 + log.segments[0]!.size);
    expect(log.size - log.segments[0]!.size).toBeLessThan(1000);
    expect(log.logStartOffset).toBe(log.segments[0]!.baseOffset);
    expect(log.epochs.epochEntries()).toEqual([{ epoch: 3, startOffset: log.logStartOffset }]);
    await expect(log.read(0n, 100)).rejects.toBeInstanceOf(OffsetOutOfRangeError);
    await log.awaitPendingDeletes();
    const files = await readdir(log.dir);
    expect(files.some((f) => f.startsWith('00000000000000000000.'))).toBe(false);
    expect(files.some((f) => f.endsWith('.deleted'))).toBe(false);
    // With a tiny limit, everything but the active segment goes.
    await log.updateConfig(logConfig({ ...log.config, retentionBytes: 0 }));
    await log.deleteOldSegments();
    expect(log.numberOfSegments).toBe(1);
  });

  test('log – a slice handed out before retention deleted its segment stays readable until the delete delay', async () => {
    const log = await openLog({ segmentBytes: 500, retentionBytes: 0, fileDeleteDelayMs: 60_000 });
    for (let i = 0; i < 10; i++) await log.appendAsLeader(batchOf(2, 40), 0);
    const slice = (await log.read(0n, 1 << 20)).records;
    log.updateHighWatermark(log.logEndOffset);
    expect(await log.deleteOldSegments()).toBeGreaterThan(0);
    const files = await readdir(log.dir);
    expect(files).toContain('00000000000000000000.log.deleted');
    expect(batchesIn(await slice.read())[0]?.baseOffset).toBe(0n);
    await log.close(); // runs the pending deletion now
    expect((await readdir(log.dir)).some((f) => f.endsWith('.deleted'))).toBe(false);
    await expect(slice.read()).rejects.toThrow(/Failed to read/);
  });

  test('log – retention by time uses the newest record timestamp of each segment', async () => {
    const log = await openLog({ segmentBytes: 400, retentionMs: 10_000 });
    const now = clock.now();
    for (let i = 0; i < 12; i++) await log.appendAsLeader(batchOf(1, 40, { timestamp: now - 100_000 + i * 1000 }), 0);
    for (let i = 0; i < 6; i++) await log.appendAsLeader(batchOf(1, 40, { timestamp: now - 5000 }), 0);
    log.updateHighWatermark(log.logEndOffset);
    const deleted = await log.deleteOldSegments();
    expect(deleted).toBeGreaterThan(0);
    for (const s of log.segments.slice(0, -1)) expect(now - (await s.largestTimestamp())).toBeLessThanOrEqual(10_000);
    clock.advance(1_000_000);
    await log.deleteOldSegments();
    expect(log.numberOfSegments).toBe(1);
    expect(log.logStartOffset).toBe(log.activeSegment.baseOffset);
  });

  test('log – log start offset moves with DeleteRecords; retention then drops segments below it', async () => {
    const log = await openLog({ segmentBytes: 500, retentionMs: -1 });
    for (let i = 0; i < 20; i++) await log.appendAsLeader(batchOf(2, 40), 0);
    await expect(log.maybeIncrementLogStartOffset(10n)).rejects.toBeInstanceOf(OffsetOutOfRangeError);
    log.updateHighWatermark(30n);
    expect(await log.maybeIncrementLogStartOffset(25n)).toBe(true);
    expect(await log.maybeIncrementLogStartOffset(20n)).toBe(false);
    await expect(log.read(24n, 100)).rejects.toBeInstanceOf(OffsetOutOfRangeError);
    expect((await log.read(25n, 1000)).records.sizeInBytes).toBeGreaterThan(0);
    const n = await log.deleteOldSegments();
    expect(n).toBeGreaterThan(0);
    expect(log.segments[0]!.baseOffset).toBeLessThanOrEqual(25n);
    expect(log.segments[1]!.baseOffset).toBeGreaterThan(25n);
    expect(log.logStartOffset).toBe(25n);
  });

  test('log – truncateTo removes later segments and batches, truncates the epoch cache, appends continue', async () => {
    const log = await openLog({ segmentBytes: 500 });
    for (let i = 0; i < 20; i++) await log.appendAsLeader(batchOf(2, 40), i < 10 ? 1 : 2);
    log.updateHighWatermark(40n);
    expect(await log.truncateTo(50n)).toBe(false);
    expect(await log.truncateTo(16n)).toBe(true);
    expect(log.logEndOffset).toBe(16n);
    expect(log.highWatermark).toBe(16n);
    expect(log.epochs.epochEntries()).toEqual([{ epoch: 1, startOffset: 0n }]);
    expect(log.activeSegment.baseOffset).toBeLessThanOrEqual(16n);
    const info = await log.appendAsLeader(batchOf(2, 40), 3);
    expect(info.firstOffset).toBe(16n);
    const all = await readAll(log, 0n);
    expect(all.map((b) => b.baseOffset)).toEqual(Array.from({ length: 9 }, (_, i) => BigInt(i * 2)));
    // Mid-batch target: the whole batch goes.
    await log.truncateTo(13n);
    expect(log.logEndOffset).toBe(12n);
    await log.awaitPendingDeletes();
    expect((await readdir(log.dir)).filter((f) => f.endsWith('.deleted'))).toEqual([]);
  });

  test('log – truncateFullyAndStartAt empties the log and starts at the new offset', async () => {
    const log = await openLog({ segmentBytes: 500 });
    for (let i = 0; i < 10; i++) await log.appendAsLeader(batchOf(2, 40), 1);
    await log.truncateFullyAndStartAt(1000n);
    expect(log.numberOfSegments).toBe(1);
    expect(log.logStartOffset).toBe(1000n);
    expect(log.logEndOffset).toBe(1000n);
    expect(log.epochs.isEmpty).toBe(true);
    await expect(log.read(0n, 10)).rejects.toBeInstanceOf(OffsetOutOfRangeError);
    const info = await log.appendAsFollower(batchOf(2, 5, { baseOffset: 1000n, partitionLeaderEpoch: 4 }));
    expect(info.lastOffset).toBe(1001n);
    await log.awaitPendingDeletes();
    expect((await readdir(log.dir)).filter((f) => f.endsWith('.log'))).toEqual(['00000000000000001000.log']);
  });

  test('log – appendAsFollower keeps offsets and epochs, rejects offsets below the LEO or out of order', async () => {
    const log = await openLog();
    await log.appendAsFollower(
      Buffer.concat([batchOf(2, 5, { baseOffset: 0n, partitionLeaderEpoch: 0 }), batchOf(3, 5, { baseOffset: 2n, partitionLeaderEpoch: 2 })]),
    );
    expect(log.logEndOffset).toBe(5n);
    await expect(log.appendAsFollower(batchOf(1, 5, { baseOffset: 4n, partitionLeaderEpoch: 2 }))).rejects.toBeInstanceOf(UnexpectedAppendOffsetError);
    await expect(log.appendAsFollower(Buffer.concat([batchOf(2, 5, { baseOffset: 10n }), batchOf(1, 5, { baseOffset: 11n })]))).rejects.toBeInstanceOf(
      OffsetsOutOfOrderError,
    );
    const bad = batchOf(1, 5, { baseOffset: 5n });
    bad.writeUInt8(bad.readUInt8(bad.length - 1) ^ 1, bad.length - 1);
    await expect(log.appendAsFollower(bad)).rejects.toBeInstanceOf(CorruptRecordError);
    // A gap (compacted leader) is allowed.
    await log.appendAsFollower(batchOf(1, 5, { baseOffset: 9n, partitionLeaderEpoch: 3 }));
    expect(log.logEndOffset).toBe(10n);
    expect(log.epochs.epochEntries()).toEqual([
      { epoch: 0, startOffset: 0n },
      { epoch: 2, startOffset: 2n },
      { epoch: 3, startOffset: 9n },
    ]);
    expect(log.endOffsetForEpoch(0)).toEqual({ epoch: 0, endOffset: 2n });
    expect(log.endOffsetForEpoch(1)).toEqual({ epoch: 0, endOffset: 2n });
    expect(log.endOffsetForEpoch(3)).toEqual({ epoch: 3, endOffset: 10n });
    expect(log.endOffsetForEpoch(7)).toBeNull();
    // Far-away follower offsets roll to a segment based at the batch.
    await log.appendAsFollower(batchOf(1, 5, { baseOffset: 10n + 0x80000000n, partitionLeaderEpoch: 3 }));
    expect(log.activeSegment.baseOffset).toBe(10n + 0x80000000n);
  });

  test('log – offsetForTimestamp: latest, earliest, max timestamp and by time across segments', async () => {
    const log = await openLog({ segmentBytes: 500 });
    for (let i = 0; i < 20; i++) {
      await log.appendAsLeader(buildBatch({ records: [0, 1].map((j) => ({ value: 'x'.repeat(40), timestamp: 100_000 + i * 1000 + j })) }), i < 10 ? 0 : 1);
    }
    expect(await log.offsetForTimestamp(ListOffsetsTimestamp.LATEST)).toEqual({ timestamp: -1n, offset: 40n, leaderEpoch: 1 });
    expect(await log.offsetForTimestamp(ListOffsetsTimestamp.EARLIEST)).toEqual({ timestamp: -1n, offset: 0n, leaderEpoch: 0 });
    expect(await log.offsetForTimestamp(ListOffsetsTimestamp.MAX_TIMESTAMP)).toEqual({ timestamp: 119_001n, offset: 39n, leaderEpoch: 1 });
    expect(await log.offsetForTimestamp(0n)).toEqual({ timestamp: 100_000n, offset: 0n, leaderEpoch: 0 });
    expect(await log.offsetForTimestamp(107_001n)).toEqual({ timestamp: 107_001n, offset: 15n, leaderEpoch: 0 });
    expect(await log.offsetForTimestamp(113_500n)).toEqual({ timestamp: 114_000n, offset: 28n, leaderEpoch: 1 });
    expect(await log.offsetForTimestamp(200_000n)).toBeNull();
  });

  test('log – reopen after a clean close keeps data, offsets and epochs', async () => {
    const log = await openLog({ segmentBytes: 500 });
    for (let i = 0; i < 15; i++) await log.appendAsLeader(batchOf(2, 40), 7);
    await log.flush();
    await log.close();
    open.splice(0);
    const re = await openLog({ segmentBytes: 500 }, { hadCleanShutdown: true, recoveryPoint: 30n });
    expect(re.logEndOffset).toBe(30n);
    expect(re.recoveryPoint).toBe(30n);
    expect(re.epochs.epochEntries()).toEqual([{ epoch: 7, startOffset: 0n }]);
    expect((await readAll(re, 0n)).length).toBe(15);
    expect((await re.appendAsLeader(batchOf(1, 5), 7)).firstOffset).toBe(30n);
  });

  test('log – reads at recently appended batch boundaries find them without batch-header reads and match a reopened log', async () => {
    const log = await openLog({ segmentBytes: 700 });
    const boundaries: bigint[] = [];
    for (let i = 0; i < 12; i++) boundaries.push((await log.appendAsLeader(batchOf(1 + (i % 4), 20 + i * 7), 3)).firstOffset);
    // a follower-style append of two batches at once records both boundaries
    const two = Buffer.concat([
      batchOf(2, 15, { baseOffset: log.logEndOffset, partitionLeaderEpoch: 3 }),
      batchOf(3, 15, { baseOffset: log.logEndOffset + 2n, partitionLeaderEpoch: 3 }),
    ]);
    boundaries.push(log.logEndOffset, log.logEndOffset + 2n);
    await log.appendAsFollower(two);
    expect(log.numberOfSegments).toBeGreaterThan(1);
    const shape = (i: FetchDataInfo) => ({
      meta: i.fetchOffsetMetadata,
      position: i.records.position,
      size: i.records.sizeInBytes,
      incomplete: i.firstEntryIncomplete,
    });
    const cases = boundaries.flatMap((from) => [
      { from, maxBytes: 1 << 20, maxOffset: undefined, minOne: true },
      { from, maxBytes: 10, maxOffset: undefined, minOne: false },
      { from, maxBytes: 10, maxOffset: undefined, minOne: true },
      ...boundaries.filter((hw) => hw > from).map((hw) => ({ from, maxBytes: 1 << 20, maxOffset: hw, minOne: true })),
    ]);
    const translate = vi.spyOn(LogSegment.prototype, 'translateOffset');
    const live = [];
    for (const c of cases) live.push(shape(await log.read(c.from, c.maxBytes, c.maxOffset, c.minOne)));
    expect(translate).not.toHaveBeenCalled();
    translate.mockRestore();
    await log.close();
    open.splice(open.indexOf(log), 1);
    const reopened = await openLog({ segmentBytes: 700 });
    const cold = [];
    for (const c of cases) cold.push(shape(await reopened.read(c.from, c.maxBytes, c.maxOffset, c.minOne)));
    expect(live).toEqual(cold);
  });

  test('log – after truncation a read at a remembered offset finds the batch appended since, not the old one', async () => {
    const log = await openLog();
    for (let i = 0; i < 4; i++) await log.appendAsLeader(batchOf(2, 10), 1);
    await log.truncateTo(2n);
    await log.appendAsLeader(batchOf(1, 50), 2);
    await log.appendAsLeader(batchOf(3, 5), 2);
    const at3 = await log.read(3n, 1 << 20, undefined, true);
    expect(batchesIn(await at3.records.read()).map((b) => [b.baseOffset, b.lastOffset, b.epoch])).toEqual([[3n, 5n, 2]]);
    const at2 = await log.read(2n, 1 << 20, 3n, true);
    expect(batchesIn(await at2.records.read()).map((b) => [b.baseOffset, b.lastOffset, b.epoch])).toEqual([[2n, 2n, 2]]);
  });
});
