import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { CorruptIndexError } from './errors.js';
import { TimeIndex } from './time-index.js';
import { makeTempDir } from './test-support.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await makeTempDir()));
afterEach(async () => cleanup());

describe('time index', () => {
  test('time index – appends only increasing timestamps, lookup by time, truncate by offset, preallocated when first written', async () => {
    const path = join(dir, '00000000000000000050.timeindex');
    const idx = new TimeIndex(path, 50n, 1200);
    await idx.createEmpty();
    expect((await stat(path)).size).toBe(0); // created empty, opened on first write
    expect(idx.isFileOpen).toBe(false);
    expect(idx.lookup(5)).toEqual({ timestamp: -1, offset: 50n });
    idx.maybeAppend(1000, 55n);
    expect(idx.isFileOpen).toBe(false);
    await idx.flush();
    expect(idx.isFileOpen).toBe(true);
    expect((await stat(path)).size).toBe(1200);
    idx.maybeAppend(1000, 57n); // same timestamp: skipped
    idx.maybeAppend(2000, 60n);
    idx.maybeAppend(1_700_000_000_123, 70n);
    expect(idx.entries).toBe(3);
    expect(() => idx.maybeAppend(500, 80n)).toThrow(CorruptIndexError);
    expect(() => idx.maybeAppend(3_000_000_000_000, 65n)).toThrow(CorruptIndexError);
    expect(idx.lookup(999)).toEqual({ timestamp: -1, offset: 50n });
    expect(idx.lookup(1500)).toEqual({ timestamp: 1000, offset: 55n });
    expect(idx.lookup(1_800_000_000_000)).toEqual({ timestamp: 1_700_000_000_123, offset: 70n });
    idx.truncateTo(60n);
    expect(idx.lastEntry).toEqual({ timestamp: 1000, offset: 55n });
    await idx.closeWritable();
    expect((await stat(path)).size).toBe(12);
    const again = new TimeIndex(path, 50n, 1200);
    await again.load();
    expect(again.lastEntry).toEqual({ timestamp: 1000, offset: 55n });
  });

  test('time index – full check, skipFullCheck for the final entry, corrupt file detection', async () => {
    const path = join(dir, 'f.timeindex');
    const idx = new TimeIndex(path, 0n, 24);
    await idx.createEmpty();
    idx.maybeAppend(10, 1n);
    idx.maybeAppend(20, 2n);
    expect(idx.isFull).toBe(true);
    expect(() => idx.maybeAppend(30, 3n)).toThrow(RangeError);
    idx.maybeAppend(30, 3n, true);
    await idx.closeWritable();
    expect((await stat(path)).size).toBe(36);
    const b = Buffer.alloc(36);
    b.writeBigInt64BE(100n, 0);
    b.writeBigInt64BE(50n, 12); // goes back in time
    await writeFile(path, b.subarray(0, 24));
    await expect(new TimeIndex(path, 0n, 1024).load()).rejects.toThrow(CorruptIndexError);
  });
});
