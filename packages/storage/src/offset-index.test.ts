import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { CorruptIndexError } from './errors.js';
import { OffsetIndex } from './offset-index.js';
import { OpenIndexFiles } from './open-index-files.js';
import { makeTempDir } from './test-support.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await makeTempDir()));
afterEach(async () => cleanup());

describe('offset index', () => {
  test('offset index – created empty, preallocated when first written, lookup returns the largest entry <= target, trimmed on close', async () => {
    const path = join(dir, '00000000000000000100.index');
    const idx = new OffsetIndex(path, 100n, 1024);
    await idx.createEmpty();
    expect((await stat(path)).size).toBe(0);
    expect(idx.isFileOpen).toBe(false);
    expect(idx.lookup(150n)).toEqual({ offset: 100n, position: 0 });
    idx.append(110n, 4000);
    idx.append(120n, 8200);
    idx.append(135n, 12500);
    expect(idx.isFileOpen).toBe(false);
    await idx.writeDirty();
    expect(idx.isFileOpen).toBe(true);
    expect((await stat(path)).size).toBe(1024);
    expect(idx.lookup(99n)).toEqual({ offset: 100n, position: 0 });
    expect(idx.lookup(109n)).toEqual({ offset: 100n, position: 0 });
    expect(idx.lookup(110n)).toEqual({ offset: 110n, position: 4000 });
    expect(idx.lookup(134n)).toEqual({ offset: 120n, position: 8200 });
    expect(idx.lookup(10_000n)).toEqual({ offset: 135n, position: 12500 });
    expect(idx.lastOffset).toBe(135n);
    await idx.closeWritable();
    const bytes = await readFile(path);
    expect(bytes.length).toBe(24);
    expect([bytes.readInt32BE(0), bytes.readInt32BE(4), bytes.readInt32BE(16), bytes.readInt32BE(20)]).toEqual([10, 4000, 35, 12500]);
    const again = new OffsetIndex(path, 100n, 1024);
    await again.load(20_000);
    expect(again.entries).toBe(3);
    expect(again.lookup(125n)).toEqual({ offset: 120n, position: 8200 });
  });

  test('offset index – an empty index holds no memory; the first entry allocates 4 KiB, growth doubles up to the max size', async () => {
    const idx = new OffsetIndex(join(dir, 'm.index'), 0n, 16384);
    await idx.createEmpty();
    expect(idx.memoryBytes).toBe(0);
    idx.append(1n, 10);
    expect(idx.memoryBytes).toBe(4096);
    for (let i = 2; i <= 513; i++) idx.append(BigInt(i), i * 10);
    expect(idx.memoryBytes).toBe(8192);
    expect(idx.lookup(300n)).toEqual({ offset: 300n, position: 3000 });
    await idx.reset();
    expect(idx.entries).toBe(0);
    await idx.close();
    expect(idx.memoryBytes).toBe(0);
  });

  test('offset index – resize applies now to an open file, at the next open to one not open yet', async () => {
    const path = join(dir, 'r.index');
    const idx = new OffsetIndex(path, 0n, 4096);
    await idx.createEmpty();
    await idx.resize(2048);
    expect((await stat(path)).size).toBe(0);
    idx.append(1n, 10);
    await idx.flush();
    expect((await stat(path)).size).toBe(2048);
    await idx.resize(1024);
    expect((await stat(path)).size).toBe(1024);
    expect(idx.maxEntries).toBe(128);
    await idx.closeWritable();
    expect((await stat(path)).size).toBe(8);
  });

  test('offset index – a write that fails (its file cannot be opened) leaves the entries pending for the next flush', async () => {
    const sub = join(dir, 'gone');
    await mkdir(sub);
    const path = join(sub, 'x.index');
    const files = new OpenIndexFiles(4);
    const idx = new OffsetIndex(path, 0n, 1024, files);
    await idx.createEmpty();
    idx.append(5n, 100);
    await rm(sub, { recursive: true });
    await expect(idx.flush()).rejects.toThrow(/ENOENT/);
    expect(files.openCount).toBe(0);
    await mkdir(sub);
    await idx.flush();
    await idx.closeWritable();
    const raw = await readFile(path);
    expect([raw.length, raw.readInt32BE(0), raw.readInt32BE(4)]).toEqual([8, 5, 100]);
    expect(files.openCount).toBe(0);
  });

  test('offset index – rejects non-increasing offsets and knows when it is full', async () => {
    const idx = new OffsetIndex(join(dir, 'a.index'), 0n, 24);
    await idx.createEmpty();
    idx.append(5n, 100);
    expect(() => idx.append(5n, 200)).toThrow(CorruptIndexError);
    idx.append(6n, 200);
    idx.append(7n, 300);
    expect(idx.isFull).toBe(true);
    expect(() => idx.append(8n, 400)).toThrow(RangeError);
    expect(() => idx.append(0x80000000n, 500)).toThrow(RangeError);
  });

  test('offset index – truncateTo removes entries >= offset, on disk too', async () => {
    const path = join(dir, 'b.index');
    const idx = new OffsetIndex(path, 0n, 4096);
    await idx.createEmpty();
    for (let i = 1; i <= 10; i++) idx.append(BigInt(i * 10), i * 1000);
    await idx.writeDirty();
    idx.truncateTo(55n);
    expect(idx.entries).toBe(5);
    expect(idx.lastOffset).toBe(50n);
    idx.truncateTo(50n);
    expect(idx.entries).toBe(4);
    await idx.writeDirty();
    const raw = await readFile(path);
    expect(raw.readInt32BE(4 * 8)).toBe(0); // zeroed, not stale
    idx.append(45n, 4500);
    expect(idx.lookup(47n)).toEqual({ offset: 45n, position: 4500 });
    idx.truncateTo(0n);
    expect(idx.entries).toBe(0);
    await idx.close();
  });

  test('offset index – sanity check rejects non-monotonic entries, zero tails and positions past the log', async () => {
    const path = join(dir, 'c.index');
    const b = Buffer.alloc(32);
    b.writeInt32BE(10, 0);
    b.writeInt32BE(100, 4);
    b.writeInt32BE(20, 8);
    b.writeInt32BE(200, 12); // then two zero entries: an untrimmed preallocated tail
    await writeFile(path, b);
    await expect(new OffsetIndex(path, 0n, 1024).load(1000)).rejects.toThrow(CorruptIndexError);
    await writeFile(path, b.subarray(0, 16));
    await expect(new OffsetIndex(path, 0n, 1024).load(150)).rejects.toThrow(/beyond the log size/);
    await writeFile(path, b.subarray(0, 12));
    await expect(new OffsetIndex(path, 0n, 1024).load()).rejects.toThrow(/multiple of 8/);
    await writeFile(path, b.subarray(0, 16));
    const ok = new OffsetIndex(path, 0n, 1024);
    await ok.load(1000);
    expect(ok.entries).toBe(2);
  });

  test('offset index – lookup agrees with a linear scan (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.integer({ min: 0, max: 100_000 }), { maxLength: 200 }),
        fc.integer({ min: -10, max: 100_010 }),
        async (rels, target) => {
          const sorted = [...rels].sort((a, b) => a - b);
          const idx = new OffsetIndex(join(dir, 'p.index'), 1000n, 1 << 16);
          await idx.createEmpty();
          sorted.forEach((r, i) => idx.append(1000n + BigInt(r), (i + 1) * 10));
          const t = 1000n + BigInt(target);
          let expected = { offset: 1000n, position: 0 };
          sorted.forEach((r, i) => {
            if (1000n + BigInt(r) <= t) expected = { offset: 1000n + BigInt(r), position: (i + 1) * 10 };
          });
          expect(idx.lookup(t)).toEqual(expected);
          await idx.close();
        },
      ),
      { numRuns: 50 },
    );
  });
});
