import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { ErrorCode, KafkaError, encodeRecordBatch, errorCodeOf } from '@samsa/protocol';
import { logConfig, type LogConfig } from './config.js';
import { Log } from './log.js';
import { ManualClock, capturingLogger, makeTempDir } from './test-support.js';
import { CorruptSnapshotError, decodeSnapshot, encodeSnapshot, snapshotFilePath, type SnapshotEntry } from './snapshot.js';

const INT32_MAX = 0x7fffffff;

let dir: string;
let cleanup: () => Promise<void>;
let clock: ManualClock;
const opened: Log[] = [];

beforeEach(async () => {
  ({ dir, cleanup } = await makeTempDir('samsa-pstate-'));
  clock = new ManualClock(Date.now());
});
afterEach(async () => {
  for (const l of opened.splice(0)) await l.close();
  await cleanup();
});

const partDir = () => join(dir, 'idem-0');

async function openLog(over: Partial<LogConfig> = {}, extra: Partial<Parameters<typeof Log.open>[0]> = {}): Promise<Log> {
  const log = await Log.open({
    dir: partDir(),
    topicPartition: { topic: 'idem', partition: 0 },
    config: logConfig({ indexIntervalBytes: 100, fileDeleteDelayMs: 0, ...over }),
    clock,
    ...extra,
  });
  opened.push(log);
  return log;
}

/** An idempotent batch: `count` records, sequences baseSequence..baseSequence+count-1 (wrapping). */
function idem(producerId: bigint, epoch: number, baseSequence: number, count: number, opts: { baseOffset?: bigint; timestamp?: number } = {}): Buffer {
  const ts = opts.timestamp ?? clock.now();
  return encodeRecordBatch({
    records: Array.from({ length: count }, (_, i) => ({ key: null, value: Buffer.from(`p${producerId}-e${epoch}-s${baseSequence + i}`), timestamp: ts })),
    baseOffset: opts.baseOffset ?? 0n,
    producerId,
    producerEpoch: epoch,
    baseSequence,
  });
}

/** A plain (non-idempotent) batch. */
function plain(count: number): Buffer {
  return encodeRecordBatch({ records: Array.from({ length: count }, (_, i) => ({ key: null, value: Buffer.from(`v${i}`), timestamp: clock.now() })) });
}

async function codeOf(p: Promise<unknown>): Promise<number> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(KafkaError);
    return errorCodeOf(err);
  }
  return ErrorCode.NONE;
}

describe('producer state (leader rules)', () => {
  test('producer state – duplicate batch returns its original offset', async () => {
    const log = await openLog();
    await log.appendAsLeader(plain(2), 0);
    const first = await log.appendAsLeader(idem(7n, 0, 0, 3), 0);
    expect(first).toMatchObject({ firstOffset: 2n, lastOffset: 4n, batchCount: 1 });
    await log.appendAsLeader(idem(7n, 0, 3, 2), 0);
    expect(log.logEndOffset).toBe(7n);
    // the retry is a fresh copy of the first batch, as a producer resends it
    const again = await log.appendAsLeader(idem(7n, 0, 0, 3), 0);
    expect(again).toMatchObject({ firstOffset: 2n, lastOffset: 4n, batchCount: 0, recordCount: 0, logAppendTime: -1n });
    expect(log.logEndOffset).toBe(7n);
    const again2 = await log.appendAsLeader(idem(7n, 0, 3, 2), 0);
    expect(again2).toMatchObject({ firstOffset: 5n, lastOffset: 6n });
    expect(log.logEndOffset).toBe(7n);
  });

  test('producer state – each of the last 5 batches is recognised; an older one is OUT_OF_ORDER_SEQUENCE_NUMBER', async () => {
    const log = await openLog();
    for (let i = 0; i < 6; i++) await log.appendAsLeader(idem(1n, 0, i * 2, 2), 0);
    const entry = log.producerState.lastEntry(1n)!;
    expect(entry.batches.map((b) => [b.firstSeq, b.lastSeq, b.firstOffset, b.lastOffset])).toEqual([
      [2, 3, 2n, 3n],
      [4, 5, 4n, 5n],
      [6, 7, 6n, 7n],
      [8, 9, 8n, 9n],
      [10, 11, 10n, 11n],
    ]);
    for (let i = 1; i < 6; i++) expect((await log.appendAsLeader(idem(1n, 0, i * 2, 2), 0)).firstOffset).toBe(BigInt(i * 2));
    // the first batch fell out of the cache: Kafka answers OUT_OF_ORDER_SEQUENCE_NUMBER, not a duplicate
    expect(await codeOf(log.appendAsLeader(idem(1n, 0, 0, 2), 0))).toBe(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
    expect(log.logEndOffset).toBe(12n);
  });

  test('producer state – a sequence gap is OUT_OF_ORDER_SEQUENCE_NUMBER and nothing is written', async () => {
    const log = await openLog();
    await log.appendAsLeader(idem(3n, 0, 0, 5), 0);
    const err = await log.appendAsLeader(idem(3n, 0, 6, 1), 0).catch((e: unknown) => e);
    expect(errorCodeOf(err)).toBe(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
    expect((err as Error).message).toMatch(/6 \(incoming seq\. number\), 4 \(current end sequence number\)/);
    // an overlapping range that is not exactly a cached batch is out of order too
    expect(await codeOf(log.appendAsLeader(idem(3n, 0, 2, 3), 0))).toBe(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
    expect(log.logEndOffset).toBe(5n);
    expect((await log.appendAsLeader(idem(3n, 0, 5, 1), 0)).firstOffset).toBe(5n);
  });

  test('producer state – an older epoch is INVALID_PRODUCER_EPOCH', async () => {
    const log = await openLog();
    await log.appendAsLeader(idem(4n, 2, 0, 1), 0);
    expect(await codeOf(log.appendAsLeader(idem(4n, 1, 1, 1), 0))).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
    expect(await codeOf(log.appendAsLeader(idem(4n, 1, 0, 1), 0))).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
    expect(log.logEndOffset).toBe(1n);
  });

  test('producer state – a newer epoch must start at sequence 0 and resets the cached batches (KIP-360)', async () => {
    const log = await openLog();
    await log.appendAsLeader(idem(5n, 0, 0, 3), 0);
    expect(await codeOf(log.appendAsLeader(idem(5n, 1, 3, 1), 0))).toBe(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
    expect((await log.appendAsLeader(idem(5n, 1, 0, 2), 0)).firstOffset).toBe(3n);
    const e = log.producerState.lastEntry(5n)!;
    expect(e.producerEpoch).toBe(1);
    expect(e.batches).toHaveLength(1);
    // the old epoch's batch is no longer a duplicate: its epoch is fenced
    expect(await codeOf(log.appendAsLeader(idem(5n, 0, 0, 3), 0))).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
  });

  test('producer state – an unknown producer may start at any sequence (Kafka 2.5+, no UNKNOWN_PRODUCER_ID)', async () => {
    const log = await openLog();
    expect((await log.appendAsLeader(idem(9n, 3, 42, 2), 0)).firstOffset).toBe(0n);
    expect(log.producerState.lastEntry(9n)).toMatchObject({ producerEpoch: 3, lastSeq: 43 });
    expect(await codeOf(log.appendAsLeader(idem(9n, 3, 45, 1), 0))).toBe(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
  });

  test('producer state – sequences wrap from Int32.MAX to 0', async () => {
    const log = await openLog();
    await log.appendAsLeader(idem(6n, 0, INT32_MAX - 1, 2), 0);
    expect(log.producerState.lastEntry(6n)!.lastSeq).toBe(INT32_MAX);
    await log.appendAsLeader(idem(6n, 0, 0, 1), 0);
    // a batch spanning the wrap: lastSequence = 1
    await log.appendAsLeader(idem(6n, 0, 1, 1), 0);
    expect(log.producerState.lastEntry(6n)!.lastSeq).toBe(1);
    expect((await log.appendAsLeader(idem(6n, 0, INT32_MAX - 1, 2), 0)).firstOffset).toBe(0n);
  });

  test('producer state – producers are independent; non-idempotent batches are not tracked', async () => {
    const log = await openLog();
    await log.appendAsLeader(idem(1n, 0, 0, 1), 0);
    await log.appendAsLeader(idem(2n, 0, 0, 1), 0);
    await log.appendAsLeader(plain(3), 0);
    await log.appendAsLeader(idem(1n, 0, 1, 1), 0);
    expect([...log.producerState.activeProducers.keys()].sort()).toEqual([1n, 2n]);
    expect(log.producerState.lastEntry(1n)!.lastDataOffset).toBe(5n);
    expect(log.producerState.lastEntry(2n)!.lastDataOffset).toBe(1n);
  });

  test('producer state – several batches of one producer in one append chain on each other', async () => {
    const log = await openLog();
    await log.appendAsLeader(Buffer.concat([idem(8n, 0, 0, 2), idem(8n, 0, 2, 2)]), 0);
    expect(log.producerState.lastEntry(8n)!.lastSeq).toBe(3);
    expect(await codeOf(log.appendAsLeader(Buffer.concat([idem(8n, 0, 4, 2), idem(8n, 0, 7, 1)]), 0))).toBe(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
    expect(log.logEndOffset).toBe(4n);
  });

  test('producer state – duplicates under LogAppendTime answer the original append time', async () => {
    const log = await openLog({ messageTimestampType: 'LogAppendTime' });
    const a = await log.appendAsLeader(idem(1n, 0, 0, 1), 0);
    clock.advance(5000);
    const b = await log.appendAsLeader(idem(1n, 0, 0, 1), 0);
    expect(b.logAppendTime).toBe(a.logAppendTime);
    expect(b.firstOffset).toBe(0n);
  });

  test('producer state – concurrent retries of one batch are written once', async () => {
    const log = await openLog();
    const results = await Promise.all([0, 1, 2, 3].map(() => log.appendAsLeader(idem(11n, 0, 0, 4), 0)));
    expect(results.map((r) => r.firstOffset)).toEqual([0n, 0n, 0n, 0n]);
    expect(log.logEndOffset).toBe(4n);
  });
});

describe('producer state (replicas, load, truncation)', () => {
  test('producer state – followers record the batches they append, without checks', async () => {
    const log = await openLog();
    await log.appendAsFollower(idem(1n, 2, 0, 2, { baseOffset: 0n }));
    await log.appendAsFollower(idem(1n, 2, 10, 1, { baseOffset: 2n })); // a gap: not checked
    await log.appendAsFollower(idem(1n, 1, 0, 1, { baseOffset: 3n })); // an older epoch replaces the newer one (Kafka's Replication origin)
    const e = log.producerState.lastEntry(1n)!;
    expect(e.producerEpoch).toBe(1);
    expect(e.batches).toEqual([{ firstSeq: 0, lastSeq: 0, firstOffset: 3n, lastOffset: 3n, timestamp: clock.now() }]);
    expect(log.producerState.mapEndOffset).toBe(4n);
  });

  test('producer state – rebuilt from the log after an unclean shutdown: a restarted leader still detects duplicates', async () => {
    const a = await openLog();
    for (let i = 0; i < 4; i++) await a.appendAsLeader(idem(21n, 0, i * 3, 3), 0);
    await a.appendAsLeader(plain(2), 0);
    // a second process opens the directory as after kill -9 (no clean shutdown, no snapshot)
    expect((await readdir(partDir())).filter((n) => n.endsWith('.snapshot'))).toEqual([]);
    const { logger, lines } = capturingLogger();
    const b = await Log.open({ dir: partDir(), topicPartition: { topic: 'idem', partition: 0 }, config: a.config, clock, logger });
    opened.push(b);
    expect(lines.some((l) => l['msg'] === 'rebuilt producer state from the log' && l['segmentsScanned'] === 1)).toBe(true);
    expect(b.producerState.lastEntry(21n)!.batches.map((x) => x.firstOffset)).toEqual([0n, 3n, 6n, 9n]);
    for (let i = 0; i < 4; i++) expect((await b.appendAsLeader(idem(21n, 0, i * 3, 3), 0)).firstOffset).toBe(BigInt(i * 3));
    expect(b.logEndOffset).toBe(14n);
    expect((await b.appendAsLeader(idem(21n, 0, 12, 1), 0)).firstOffset).toBe(14n);
    // the rebuild left a snapshot at the log end it covered
    expect(b.producerState.snapshotOffsets).toEqual([14n]);
  });

  test('producer state – a clean close writes <offset>.snapshot; the reload keeps the last batch of each producer (as Kafka)', async () => {
    const a = await openLog();
    await a.appendAsLeader(idem(31n, 1, 0, 2), 0);
    await a.appendAsLeader(idem(31n, 1, 2, 2), 0);
    await a.appendAsLeader(idem(32n, 0, 0, 1), 0);
    await a.close();
    opened.splice(opened.indexOf(a), 1);
    expect((await readdir(partDir())).filter((n) => n.endsWith('.snapshot'))).toEqual(['00000000000000000005.snapshot']);
    const { logger, lines } = capturingLogger();
    const b = await openLog({}, { hadCleanShutdown: true, recoveryPoint: 5n, logger });
    expect(lines.some((l) => l['msg'] === 'rebuilt producer state from the log')).toBe(false);
    expect(b.producerState.lastEntry(31n)).toMatchObject({ producerEpoch: 1, lastSeq: 3, lastDataOffset: 3n });
    expect((await b.appendAsLeader(idem(31n, 1, 2, 2), 0)).firstOffset).toBe(2n);
    expect(await codeOf(b.appendAsLeader(idem(31n, 1, 0, 2), 0))).toBe(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
    expect((await b.appendAsLeader(idem(32n, 0, 1, 1), 0)).firstOffset).toBe(5n);
  });

  test('producer state – a snapshot per rolled segment bounds the scan after a crash to the segments after it', async () => {
    const a = await openLog({ segmentBytes: 1024 });
    for (let i = 0; i < 40; i++) await a.appendAsLeader(idem(41n, 0, i * 2, 2), 0);
    const bases = a.segments.map((s) => s.baseOffset);
    expect(bases.length).toBeGreaterThan(3);
    // every roll snapshotted the state at the new segment's base offset
    expect(a.producerState.snapshotOffsets).toEqual(bases.slice(1));
    // a crash after the last roll's flush: recovery (and its producer state replay, which rebuilds
    // the recovered segments' transaction indexes) starts at the active segment
    await a.flush(bases.at(-1));
    const { logger, lines } = capturingLogger();
    const b = await Log.open({
      dir: partDir(),
      topicPartition: { topic: 'idem', partition: 0 },
      config: a.config,
      clock,
      logger,
      recoveryPoint: a.recoveryPoint,
    });
    opened.push(b);
    expect(lines.find((l) => l['msg'] === 'rebuilt producer state from the log')?.['segmentsScanned']).toBe(1);
    // the snapshot brought the last batch before the active segment, the scan the ones in it
    const rebuilt = b.producerState.lastEntry(41n)!.batches;
    expect(rebuilt.length).toBeGreaterThan(1);
    expect(rebuilt).toEqual(a.producerState.lastEntry(41n)!.batches.slice(-rebuilt.length));
    expect((await b.appendAsLeader(idem(41n, 0, 78, 2), 0)).firstOffset).toBe(78n);
    expect((await b.appendAsLeader(idem(41n, 0, 80, 2), 0)).firstOffset).toBe(80n);
  });

  test('producer state – a corrupt snapshot is deleted and the state rebuilt from an older one or the log', async () => {
    const a = await openLog();
    await a.appendAsLeader(idem(51n, 0, 0, 2), 0);
    await a.appendAsLeader(idem(51n, 0, 2, 2), 0);
    await a.close();
    opened.splice(opened.indexOf(a), 1);
    await writeFile(snapshotFilePath(partDir(), 4n), Buffer.from([0, 1, 0, 0, 0, 0, 0, 0, 0, 9]));
    const { logger, lines } = capturingLogger();
    const b = await openLog({}, { hadCleanShutdown: true, recoveryPoint: 4n, logger });
    expect(lines.some((l) => l['msg'] === 'failed to load producer state snapshot; deleting it')).toBe(true);
    expect(b.producerState.lastEntry(51n)!.batches.map((x) => x.firstSeq)).toEqual([0, 2]);
    expect((await b.appendAsLeader(idem(51n, 0, 0, 2), 0)).firstOffset).toBe(0n);
  });

  test('producer state – follower truncation rolls the state back (rebuilt from the log)', async () => {
    const log = await openLog();
    for (let i = 0; i < 5; i++) await log.appendAsFollower(idem(61n, 0, i * 2, 2, { baseOffset: BigInt(i * 2) }));
    await log.appendAsFollower(idem(62n, 0, 0, 1, { baseOffset: 10n }));
    await log.truncateTo(6n);
    expect(log.logEndOffset).toBe(6n);
    expect(log.producerState.lastEntry(61n)!.batches.map((x) => [x.firstSeq, x.lastOffset])).toEqual([
      [0, 1n],
      [2, 3n],
      [4, 5n],
    ]);
    expect(log.producerState.lastEntry(62n)).toBeUndefined();
    expect(log.producerState.mapEndOffset).toBe(6n);
    // as the new leader: the next batch follows the truncated history
    expect(await codeOf(log.appendAsLeader(idem(61n, 0, 8, 2), 0))).toBe(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
    expect((await log.appendAsLeader(idem(61n, 0, 6, 2), 0)).firstOffset).toBe(6n);
    await log.truncateFullyAndStartAt(100n);
    expect(log.producerState.activeProducers.size).toBe(0);
    expect(log.producerState.snapshotOffsets).toEqual([]);
  });

  test('producer state – retention deletes the snapshots of deleted segments', async () => {
    const log = await openLog({ segmentBytes: 1024, retentionBytes: 1024 });
    for (let i = 0; i < 30; i++) await log.appendAsLeader(idem(71n, 0, i, 1), 0);
    log.updateHighWatermark(log.logEndOffset);
    expect(await log.deleteOldSegments()).toBeGreaterThan(0);
    const first = log.segments[0]!.baseOffset;
    expect(log.producerState.snapshotOffsets.every((s) => s >= first)).toBe(true);
    const onDisk = (await readdir(partDir())).filter((n) => n.endsWith('.snapshot')).map((n) => BigInt(n.slice(0, 20)));
    expect(onDisk.every((s) => s >= first)).toBe(true);
  });

  test('producer state – producers idle past producer.id.expiration.ms are dropped when loading a snapshot', async () => {
    const a = await openLog();
    await a.appendAsLeader(idem(81n, 0, 0, 1, { timestamp: clock.now() - 2 * 86_400_000 }), 0);
    await a.appendAsLeader(idem(82n, 0, 0, 1), 0);
    await a.close();
    opened.splice(opened.indexOf(a), 1);
    const b = await openLog({}, { hadCleanShutdown: true, recoveryPoint: 2n });
    expect([...b.producerState.activeProducers.keys()]).toEqual([82n]);
  });
});

describe('producer state snapshot format', () => {
  const entries: SnapshotEntry[] = [
    {
      producerId: 1000n,
      producerEpoch: 3,
      lastSequence: 41,
      lastOffset: 99n,
      offsetDelta: 4,
      timestamp: 1_700_000_000_123,
      coordinatorEpoch: -1,
      currentTxnFirstOffset: -1n,
    },
    { producerId: 1n, producerEpoch: 0, lastSequence: 0, lastOffset: 0n, offsetDelta: 0, timestamp: 5, coordinatorEpoch: -1, currentTxnFirstOffset: -1n },
  ];

  test('producer state – snapshot files use Kafka’s PidSnapshot v1 layout and round-trip', () => {
    const buf = encodeSnapshot(entries);
    expect(buf.length).toBe(2 + 4 + 4 + 2 * 46);
    expect(buf.readInt16BE(0)).toBe(1);
    expect(buf.readInt32BE(6)).toBe(2);
    expect(buf.readBigInt64BE(10)).toBe(1000n);
    expect(buf.readInt16BE(18)).toBe(3);
    expect(buf.readInt32BE(20)).toBe(41);
    expect(buf.readBigInt64BE(24)).toBe(99n);
    expect(decodeSnapshot(buf)).toEqual(entries);
    expect(decodeSnapshot(encodeSnapshot([]))).toEqual([]);
  });

  test('producer state – a snapshot with a bad CRC, version or length is rejected', () => {
    const buf = encodeSnapshot(entries);
    const flipped = Buffer.from(buf);
    flipped[30] = flipped[30]! ^ 1;
    expect(() => decodeSnapshot(flipped)).toThrow(CorruptSnapshotError);
    const v2 = Buffer.from(buf);
    v2.writeInt16BE(2, 0);
    expect(() => decodeSnapshot(v2)).toThrow(/unknown file version 2/);
    expect(() => decodeSnapshot(buf.subarray(0, buf.length - 1))).toThrow(CorruptSnapshotError);
  });
});
