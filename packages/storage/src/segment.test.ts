import { open, readFile, stat, writeFile } from 'node:fs/promises';
import { CompressionType } from '@samsa/protocol';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { logConfig, type LogConfig } from './config.js';
import { LogSegment, segmentFilePaths } from './segment.js';
import { ManualClock, batchOf, batchesIn, buildBatch, capturingLogger, makeTempDir } from './test-support.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await makeTempDir()));
afterEach(async () => cleanup());

const clock = new ManualClock();

function opts(over: Partial<LogConfig> = {}) {
  return { config: logConfig({ indexIntervalBytes: 200, maxIndexSize: 4096, ...over }), clock };
}

/** Appends `n` single-batch appends of `records` records each, starting at `from`. Returns the batches. */
async function fill(seg: LogSegment, from: bigint, n: number, records = 3, valueSize = 40): Promise<Buffer[]> {
  const out: Buffer[] = [];
  let next = from;
  for (let i = 0; i < n; i++) {
    const b = batchOf(records, valueSize, { baseOffset: next, timestamp: 1000 + i });
    const last = next + BigInt(records - 1);
    await seg.append(last, 1000 + i, last, b);
    out.push(b);
    next = last + 1n;
  }
  return out;
}

describe('segment', () => {
  test('segment – files are named by the 20-digit base offset', async () => {
    const seg = await LogSegment.create(dir, 42n, opts());
    expect(seg.log.path.endsWith('/00000000000000000042.log')).toBe(true);
    expect(seg.offsetIndex.path.endsWith('/00000000000000000042.index')).toBe(true);
    expect(seg.timeIndex.path.endsWith('/00000000000000000042.timeindex')).toBe(true);
    await seg.close();
  });

  test('segment – append then read returns a file slice holding the batches', async () => {
    const seg = await LogSegment.create(dir, 0n, opts());
    const batches = await fill(seg, 0n, 10);
    expect(seg.size).toBe(batches.reduce((n, b) => n + b.length, 0));
    const info = await seg.read(0n, 1 << 20);
    expect(info).not.toBeNull();
    expect(info?.records.position).toBe(0);
    expect(info?.records.sizeInBytes).toBe(seg.size);
    const bytes = await info!.records.read();
    expect(bytes.equals(Buffer.concat(batches))).toBe(true);
    // From the middle of a batch: the read starts at that batch.
    const mid = await seg.read(13n, 1 << 20);
    const got = batchesIn(await mid!.records.read());
    expect(got[0]?.baseOffset).toBe(12n);
    expect(mid?.fetchOffsetMetadata).toEqual({ messageOffset: 13n, segmentBaseOffset: 0n, relativePositionInSegment: batches[0]!.length * 4 });
    expect(await seg.read(30n, 100)).toBeNull();
    await seg.close();
  });

  test('segment – sparse index: one entry per index.interval.bytes, lookups land on the right batch', async () => {
    const seg = await LogSegment.create(dir, 0n, opts());
    const batches = await fill(seg, 0n, 40);
    const size = batches[0]!.length;
    expect(size).toBeGreaterThan(100);
    // An entry whenever more than 200 bytes were appended since the previous one.
    const perEntry = Math.floor(200 / size) + 1;
    expect(seg.offsetIndex.entries).toBe(Math.floor((40 - 1) / perEntry));
    const e0 = seg.offsetIndex.entry(0);
    expect(e0.position).toBe(perEntry * size);
    expect(e0.offset).toBe(BigInt(perEntry * 3 + 2)); // last offset of the batch at that position
    for (const target of [0n, 1n, 5n, 17n, 60n, 119n]) {
      const found = await seg.translateOffset(target);
      const i = Number(target / 3n);
      expect(found).toEqual({ baseOffset: BigInt(i * 3), lastOffset: BigInt(i * 3 + 2), position: i * size, size });
    }
    expect(seg.timeIndex.entries).toBe(seg.offsetIndex.entries);
    await seg.close();
  });

  test('segment – KIP-74: minOneMessage returns the whole first batch even when larger than maxSize', async () => {
    const seg = await LogSegment.create(dir, 0n, opts());
    const [big] = await fill(seg, 0n, 2, 5, 500);
    const cut = await seg.read(0n, 100, seg.size, false);
    expect(cut?.records.sizeInBytes).toBe(100);
    expect(cut?.firstEntryIncomplete).toBe(true);
    const whole = await seg.read(0n, 100, seg.size, true);
    expect(whole?.records.sizeInBytes).toBe(big!.length);
    expect(whole?.firstEntryIncomplete).toBe(false);
    const zero = await seg.read(0n, 0, seg.size, false);
    expect(zero?.records.sizeInBytes).toBe(0);
    // maxPosition bounds even the first batch.
    const bounded = await seg.read(5n, 1 << 20, big!.length, true);
    expect(bounded?.records.sizeInBytes).toBe(0);
    await seg.close();
  });

  test('segment – slice readInto writes straight into a caller buffer at an offset', async () => {
    const seg = await LogSegment.create(dir, 0n, opts());
    const batches = await fill(seg, 0n, 3);
    const info = await seg.read(3n, 1 << 20);
    const target = Buffer.alloc(info!.records.sizeInBytes + 7, 0xee);
    expect(await info!.records.readInto(target, 7)).toBe(info!.records.sizeInBytes);
    expect(target.subarray(7).equals(Buffer.concat(batches.slice(1)))).toBe(true);
    expect(target[6]).toBe(0xee);
    await seg.close();
  });

  test('segment – readNextOffset and truncateTo', async () => {
    const seg = await LogSegment.create(dir, 100n, opts());
    const batches = await fill(seg, 100n, 20);
    expect(await seg.readNextOffset()).toBe(160n);
    const removed = await seg.truncateTo(130n);
    expect(removed).toBe(batches.slice(10).reduce((n, b) => n + b.length, 0));
    expect(await seg.readNextOffset()).toBe(130n);
    expect(seg.offsetIndex.lastOffset).toBeLessThan(130n);
    expect((await seg.maxTimestampSoFar()).timestamp).toBeLessThanOrEqual(1009);
    // Truncating to a mid-batch offset removes the whole batch.
    await seg.truncateTo(125n);
    expect(await seg.readNextOffset()).toBe(124n);
    await fill(seg, 124n, 2);
    expect(await seg.readNextOffset()).toBe(130n);
    await seg.close();
  });

  test('segment – roll conditions: size, time by record timestamps or wall clock, full index, offset overflow', async () => {
    const c = new ManualClock(10_000);
    const seg = await LogSegment.create(dir, 0n, {
      config: logConfig({ segmentBytes: 1000, segmentMs: 5000, maxIndexSize: 12, indexIntervalBytes: 1 }),
      clock: c,
    });
    const p = { messagesSize: 100, maxTimestampInMessages: -1, maxOffsetInMessages: 0n, now: c.now() };
    expect(seg.shouldRoll(p)).toBe(false); // empty
    const b = batchOf(1, 10, { baseOffset: 0n, timestamp: 50_000 });
    await seg.append(0n, 50_000, 0n, b);
    expect(seg.shouldRoll({ ...p, maxTimestampInMessages: 54_000 })).toBe(false);
    expect(seg.shouldRoll({ ...p, maxTimestampInMessages: 55_001 })).toBe(true); // record time since first batch
    expect(seg.shouldRoll({ ...p, messagesSize: 1000 - b.length + 1 })).toBe(true); // size
    expect(seg.shouldRoll({ ...p, maxOffsetInMessages: 0x80000000n })).toBe(true); // relative offset overflow
    expect(seg.shouldRoll(p)).toBe(false);
    await seg.append(1n, 50_000, 1n, batchOf(1, 10, { baseOffset: 1n, timestamp: 50_000 }));
    expect(seg.offsetIndex.isFull).toBe(true); // 12 bytes: one offset entry, one time entry
    expect(seg.timeIndex.isFull).toBe(true);
    expect(seg.shouldRoll(p)).toBe(true);
    await seg.close();

    const seg2 = await LogSegment.create(dir, 100n, { config: logConfig({ segmentMs: 5000 }), clock: c });
    await seg2.append(100n, -1, 100n, batchOf(1, 10, { baseOffset: 100n, timestamp: -1 }));
    const p2 = { ...p, maxOffsetInMessages: 101n };
    expect(seg2.shouldRoll(p2)).toBe(false);
    c.advance(5001);
    expect(seg2.shouldRoll({ ...p2, now: c.now() })).toBe(true); // no timestamps: wall clock since creation
    await seg2.close();
  });

  test('segment – close trims the indexes; reopen loads lazily and finds offsets', async () => {
    const seg = await LogSegment.create(dir, 0n, opts());
    await fill(seg, 0n, 30);
    const entries = seg.offsetIndex.entries;
    await seg.close();
    const paths = segmentFilePaths(dir, 0n);
    expect((await stat(paths.index)).size).toBe(entries * 8);
    const re = await LogSegment.open(dir, 0n, opts());
    expect(re.indexesLoaded).toBe(false);
    expect((await re.translateOffset(50n))?.baseOffset).toBe(48n);
    expect(re.offsetIndex.entries).toBe(entries);
    expect(await re.maxTimestampSoFar()).toEqual({ timestamp: 1029, offset: 89n });
    re.releaseIndexes();
    expect(re.indexesLoaded).toBe(false);
    expect(await re.readNextOffset()).toBe(90n);
    await re.close();
  });

  test('segment – a corrupt index is rebuilt from the log on load (warn logged)', async () => {
    const seg = await LogSegment.create(dir, 0n, opts());
    await fill(seg, 0n, 30);
    const good = seg.offsetIndex.entries;
    await seg.close();
    const paths = segmentFilePaths(dir, 0n);
    const raw = await readFile(paths.index);
    raw.writeInt32BE(0, raw.length - 8); // last entry goes back to relative offset 0
    await writeFile(paths.index, raw);
    const { logger, lines } = capturingLogger();
    const re = await LogSegment.open(dir, 0n, { ...opts(), logger });
    expect((await re.translateOffset(77n))?.baseOffset).toBe(75n);
    expect(re.offsetIndex.entries).toBe(good);
    expect(lines.some((l) => l.msg === 'corrupt index found; rebuilding indexes' && l.level === 40)).toBe(true);
    expect((await stat(paths.index)).size).toBe(good * 8);
    await re.close();
    // A missing index is rebuilt as well.
    await writeFile(paths.timeIndex, Buffer.alloc(0));
    await (await open(paths.index, 'r+')).truncate(3).then(() => undefined);
    const re2 = await LogSegment.open(dir, 0n, opts());
    expect((await re2.translateOffset(3n))?.baseOffset).toBe(3n);
    expect(re2.offsetIndex.entries).toBe(good);
    await re2.close();
  });

  test('segment – recover keeps valid batches, truncates a torn tail and rebuilds the indexes', async () => {
    const seg = await LogSegment.create(dir, 0n, opts());
    const batches = await fill(seg, 0n, 12);
    const validSize = seg.size;
    await seg.log.append(batches[0]!.subarray(0, 30)); // torn write
    const truncated = await seg.recover(1 << 20);
    expect(truncated).toBe(30);
    expect(seg.size).toBe(validSize);
    expect(await seg.readNextOffset()).toBe(36n);
    expect(seg.offsetIndex.entries).toBeGreaterThan(0);
    expect((await seg.translateOffset(20n))?.baseOffset).toBe(18n);
    await seg.close();
  });

  test('segment – recover stops at a CRC failure, a bad magic, oversized or out-of-order batches', async () => {
    const cases: [string, (b: Buffer) => Buffer, number][] = [
      [
        'crc',
        (b) => {
          const c = Buffer.from(b);
          c[c.length - 1] = (c[c.length - 1]! + 1) & 0xff;
          return c;
        },
        1 << 20,
      ],
      [
        'magic',
        (b) => {
          const c = Buffer.from(b);
          c.writeInt8(1, 16);
          return c;
        },
        1 << 20,
      ],
      ['size', (b) => b, 50],
      [
        'order',
        (b) => {
          const c = Buffer.from(b);
          c.writeBigInt64BE(0n, 0);
          return c;
        },
        1 << 20,
      ],
    ];
    for (const [name, corrupt, max] of cases) {
      const { dir: d, cleanup: done } = await makeTempDir();
      const seg = await LogSegment.create(d, 0n, opts());
      const batches = await fill(seg, 0n, 3, 1, 20);
      const last = buildBatch({ baseOffset: 3n, records: [{ value: 'tail' }] });
      await seg.log.append(corrupt(last));
      const epochs: bigint[] = [];
      const truncated = await seg.recover(max, (_e, base) => epochs.push(base));
      if (name === 'size') {
        // Every batch is over the limit: nothing survives.
        expect(truncated).toBe(batches.reduce((n, b) => n + b.length, 0) + last.length);
      } else {
        expect(truncated, name).toBe(last.length);
        expect(epochs).toEqual([0n, 1n, 2n]);
        expect(await seg.readNextOffset()).toBe(3n);
      }
      await seg.close();
      await done();
    }
  });

  test('segment – findOffsetByTimestamp finds the first record at or after a time', async () => {
    const seg = await LogSegment.create(dir, 0n, opts());
    let next = 0n;
    for (let i = 0; i < 20; i++) {
      const b = buildBatch({ baseOffset: next, records: [0, 1, 2].map((j) => ({ value: `v${i}-${j}`, timestamp: 10_000 + i * 100 + j * 10 })) });
      await seg.append(next + 2n, 10_000 + i * 100 + 20, next + 2n, b);
      next += 3n;
    }
    expect(await seg.findOffsetByTimestamp(0, 0n)).toEqual({ timestamp: 10_000, offset: 0n });
    expect(await seg.findOffsetByTimestamp(10_511, 0n)).toEqual({ timestamp: 10_520, offset: 17n });
    expect(await seg.findOffsetByTimestamp(11_900, 0n)).toEqual({ timestamp: 11_900, offset: 57n });
    expect(await seg.findOffsetByTimestamp(10_000, 31n)).toEqual({ timestamp: 11_010, offset: 31n });
    expect(await seg.findOffsetByTimestamp(12_000, 0n)).toBeNull();
    await seg.close();
  });

  test('segment – findOffsetByTimestamp looks inside compressed batches', async () => {
    const seg = await LogSegment.create(dir, 0n, opts());
    const b = buildBatch({ compression: CompressionType.GZIP, records: [0, 1, 2, 3].map((j) => ({ value: `v${j}`, timestamp: 5000 + j * 10 })) });
    expect(b.readInt16BE(21) & 7).toBe(CompressionType.GZIP);
    await seg.append(3n, 5030, 3n, b);
    expect(await seg.findOffsetByTimestamp(5015, 0n)).toEqual({ timestamp: 5020, offset: 2n });
    expect(await seg.findOffsetByTimestamp(0, 3n)).toEqual({ timestamp: 5030, offset: 3n });
    await seg.close();
  });

  test('segment – rename with .deleted suffix then delete', async () => {
    const seg = await LogSegment.create(dir, 7n, opts());
    await fill(seg, 7n, 2);
    await seg.onBecomeInactive();
    await seg.changeFileSuffixes('', '.deleted');
    const p = segmentFilePaths(dir, 7n, '.deleted');
    expect((await stat(p.log)).size).toBe(seg.size);
    await stat(p.index);
    // Reads still work on the renamed files (open handle).
    expect((await seg.read(8n, 1000))?.records.sizeInBytes).toBeGreaterThan(0);
    await seg.deleteFiles();
    await expect(stat(p.log)).rejects.toThrow();
    await expect(stat(p.index)).rejects.toThrow();
  });
});
