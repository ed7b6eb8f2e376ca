import { access, readFile, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { logConfig, type LogConfig } from './config.js';
import { Log } from './log.js';
import { OpenIndexFiles } from './open-index-files.js';
import { LogSegment, segmentFilePaths } from './segment.js';
import { ManualClock, batchOf, batchesIn, makeTempDir, openFilesUnder } from './test-support.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await makeTempDir()));
afterEach(async () => cleanup());

const clock = new ManualClock();

function segOpts(files: OpenIndexFiles, over: Partial<LogConfig> = {}) {
  return { config: logConfig({ indexIntervalBytes: 200, maxIndexSize: 4096, ...over }), clock, indexFiles: files };
}

/** Appends `n` 3-record batches starting at `from`; returns the next offset. */
async function fill(seg: LogSegment, from: bigint, n: number): Promise<bigint> {
  let next = from;
  for (let i = 0; i < n; i++) {
    const last = next + 2n;
    await seg.append(last, 1000 + Number(next), last, batchOf(3, 40, { baseOffset: next, timestamp: 1000 + Number(next) }));
    next = last + 1n;
  }
  return next;
}

/** Where every offset in [base, end) is found (batch base offset and position), by index lookup + scan. */
async function positions(seg: LogSegment, end: bigint): Promise<string[]> {
  const out: string[] = [];
  for (let o = seg.baseOffset; o < end; o++) {
    const p = await seg.translateOffset(o);
    out.push(`${o}:${p?.baseOffset}@${p?.position}`);
  }
  return out;
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

describe('lazy index', () => {
  test('lazy index – a new segment opens no index file until its entries are flushed; close leaves none open', async () => {
    const files = new OpenIndexFiles(16);
    const seg = await LogSegment.create(dir, 0n, segOpts(files));
    const paths = segmentFilePaths(dir, 0n);
    expect(await openFilesUnder(dir)).toEqual([]);
    expect((await stat(paths.index)).size).toBe(0); // created empty, so a crash leaves a valid (empty) index
    const end = await fill(seg, 0n, 30);
    expect(seg.offsetIndex.entries).toBeGreaterThan(5);
    expect(await openFilesUnder(dir)).toEqual([]); // appends and lookups stay in memory
    const before = await positions(seg, end);
    await seg.flush();
    expect(await openFilesUnder(dir)).toEqual([paths.index, paths.timeIndex]);
    expect(files.openCount).toBe(2);
    await seg.close();
    expect(await openFilesUnder(dir)).toEqual([]);
    expect(files.openCount).toBe(0);
    const re = await LogSegment.open(dir, 0n, segOpts(files));
    expect(await positions(re, end)).toEqual(before);
    expect(await openFilesUnder(dir)).toEqual([]);
    await re.close();
  });

  test('lazy index – a cleanly loaded log opens no index file; reads and appends after it match a reopened log', async () => {
    const files = new OpenIndexFiles(16);
    const open = (hadCleanShutdown: boolean) =>
      Log.open({
        dir: join(dir, 'lazy-0'),
        topicPartition: { topic: 'lazy', partition: 0 },
        config: logConfig({ segmentBytes: 1200, indexIntervalBytes: 150, fileDeleteDelayMs: 0 }),
        clock,
        hadCleanShutdown,
        indexFiles: files,
      });
    const readAll = async (log: Log): Promise<string[]> => {
      const out: string[] = [];
      for (let o = log.logStartOffset; o < log.logEndOffset; o++) {
        const got = batchesIn(await (await log.read(o, 1 << 20, undefined, true)).records.read());
        out.push(`${o}:${got[0]?.baseOffset}`);
      }
      return out;
    };
    const log = await open(false);
    for (let i = 0; i < 40; i++) await log.appendAsLeader(batchOf(2, 40), 1);
    expect(log.numberOfSegments).toBeGreaterThan(3);
    const before = await readAll(log);
    await log.close();

    const re = await open(true);
    expect(await openFilesUnder(dir)).toEqual([]);
    expect(await readAll(re)).toEqual(before);
    for (let i = 0; i < 5; i++) await re.appendAsLeader(batchOf(2, 40), 1);
    expect(await openFilesUnder(dir)).toEqual([]);
    const after = await readAll(re);
    expect(after.slice(0, before.length)).toEqual(before);
    await re.flush();
    expect((await openFilesUnder(dir)).length).toBeLessThanOrEqual(2); // the active segment's, if it has entries
    await re.close();
    expect(files.openCount).toBe(0);
    const again = await open(true);
    expect(await readAll(again)).toEqual(after);
    await again.close();
  });

  test('lazy index – beyond the cap the least recently used idle index files are closed; a closed one reopens and is read right', async () => {
    const files = new OpenIndexFiles(3);
    const segs: LogSegment[] = [];
    const ends: bigint[] = [];
    for (let i = 0; i < 4; i++) {
      const seg = await LogSegment.create(dir, BigInt(i * 1000), segOpts(files));
      ends.push(await fill(seg, seg.baseOffset, 20));
      await seg.flush();
      segs.push(seg);
      expect(files.openCount).toBeLessThanOrEqual(3);
      expect((await openFilesUnder(dir)).length).toBeLessThanOrEqual(3);
    }
    expect(files.evictions).toBeGreaterThanOrEqual(5);
    const first = segs[0] as LogSegment;
    expect(first.offsetIndex.isFileOpen).toBe(false);
    // More entries for the closed index: written through a new descriptor, behind the old ones.
    ends[0] = await fill(first, ends[0] as bigint, 20);
    await first.flush();
    expect(first.offsetIndex.isFileOpen).toBe(true);
    expect(files.openCount).toBeLessThanOrEqual(3);
    const expected: string[][] = [];
    for (let i = 0; i < 4; i++) expected.push(await positions(segs[i] as LogSegment, ends[i] as bigint));
    const entries = segs.map((s) => s.offsetIndex.entries);
    // What is on disk after a crash (no close): the flushed, preallocated index with all entries.
    const raw = await readFile(first.offsetIndex.path);
    expect(raw.length).toBe(4096);
    expect(raw.subarray(0, entries[0]! * 8).equals(Buffer.alloc(entries[0]! * 8))).toBe(false);
    expect(raw.readInt32BE(entries[0]! * 8)).toBe(0);
    expect(raw.readInt32BE((entries[0]! - 1) * 8)).toBe(Number(first.offsetIndex.lastOffset - first.baseOffset));
    for (const s of segs) await s.close();
    expect(files.openCount).toBe(0);
    expect(await openFilesUnder(dir)).toEqual([]);
    for (let i = 0; i < 4; i++) {
      const re = await LogSegment.open(dir, BigInt(i * 1000), segOpts(files));
      expect(await positions(re, ends[i] as bigint)).toEqual(expected[i]);
      expect(re.offsetIndex.entries).toBe(entries[i]);
      expect((await stat(re.offsetIndex.path)).size).toBe(entries[i]! * 8);
      await re.close();
    }
  });

  test('lazy index – truncate, rename and delete of a segment whose index was never opened or was closed by the cap', async () => {
    const files = new OpenIndexFiles(1);
    const never = await LogSegment.create(dir, 0n, segOpts(files));
    const evicted = await LogSegment.create(dir, 1000n, segOpts(files));
    await fill(never, 0n, 20);
    await fill(evicted, 1000n, 20);
    await evicted.flush(); // opens its two indexes in turn: the cap of 1 closes the offset index
    expect(evicted.offsetIndex.isFileOpen).toBe(false);
    expect(never.offsetIndex.isFileOpen || never.timeIndex.isFileOpen).toBe(false);

    for (const [seg, cut] of [
      [never, 31n],
      [evicted, 1031n],
    ] as const) {
      expect(await seg.truncateTo(cut)).toBeGreaterThan(0);
      expect(await seg.readNextOffset()).toBe(cut - 1n);
      await seg.flush();
      expect(files.openCount).toBeLessThanOrEqual(1);
      const kept = await positions(seg, cut - 1n);
      await seg.changeFileSuffixes('', '.deleted');
      const renamed = segmentFilePaths(dir, seg.baseOffset, '.deleted');
      expect(seg.offsetIndex.path).toBe(renamed.index);
      // still readable and flushable after the rename (reopened under the new name)
      expect(await positions(seg, cut - 1n)).toEqual(kept);
      await seg.flush();
      expect(await exists(renamed.index)).toBe(true);
      expect(await exists(segmentFilePaths(dir, seg.baseOffset).index)).toBe(false);
      await seg.deleteFiles();
      expect(await exists(renamed.index)).toBe(false);
      expect(await exists(renamed.timeIndex)).toBe(false);
      expect(await exists(renamed.log)).toBe(false);
    }
    expect(files.openCount).toBe(0);
    expect(await openFilesUnder(dir)).toEqual([]);
  });

  test('lazy index – a segment that crashed before its index was written, or whose index is missing, is rebuilt by recovery', async () => {
    const files = new OpenIndexFiles(4);
    const seg = await LogSegment.create(dir, 0n, segOpts(files));
    const end = await fill(seg, 0n, 25);
    const expected = await positions(seg, end);
    const entries = seg.offsetIndex.entries;
    await seg.log.close(); // a crash: the index entries never reached the (empty) files
    const paths = segmentFilePaths(dir, 0n);
    expect((await stat(paths.index)).size).toBe(0);
    const re = await LogSegment.open(dir, 0n, segOpts(files));
    expect(await re.recover(1 << 20)).toBe(0);
    expect(re.offsetIndex.entries).toBe(entries);
    expect(await positions(re, end)).toEqual(expected);
    await re.close();
    await unlink(paths.index);
    await unlink(paths.timeIndex);
    const again = await LogSegment.open(dir, 0n, segOpts(files));
    await again.makeActive(); // a missing index is rebuilt from the log on first use
    expect(again.offsetIndex.entries).toBe(entries);
    expect(await positions(again, end)).toEqual(expected);
    await again.close();
    expect((await stat(paths.index)).size).toBe(entries * 8);
    expect(files.openCount).toBe(0);
  });
});
