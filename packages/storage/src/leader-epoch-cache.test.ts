import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { LeaderEpochFileCache } from './leader-epoch-cache.js';
import { capturingLogger, makeTempDir } from './test-support.js';

let dir: string;
let cleanup: () => Promise<void>;
let path: string;
beforeEach(async () => {
  ({ dir, cleanup } = await makeTempDir());
  path = join(dir, 'leader-epoch-checkpoint');
});
afterEach(async () => cleanup());

describe('leader epoch cache', () => {
  test('log – leader epoch cache: assign persists `epoch startOffset` lines atomically', async () => {
    const c = await LeaderEpochFileCache.load(path);
    expect(c.isEmpty).toBe(true);
    expect(await c.assign(0, 0n)).toBe(true);
    expect(await c.assign(0, 10n)).toBe(false); // same epoch, later offset: no change
    expect(await c.assign(1, 150n)).toBe(true);
    expect(await c.assign(4, 300n)).toBe(true);
    expect(await readFile(path, 'utf8')).toBe('0\n3\n0 0\n1 150\n4 300\n');
    const again = await LeaderEpochFileCache.load(path);
    expect(again.epochEntries()).toEqual(c.epochEntries());
    expect(again.latestEpoch).toBe(4);
    await expect(c.assign(-1, 5n)).rejects.toThrow(RangeError);
  });

  test('log – leader epoch cache: a conflicting assign truncates later entries (warn)', async () => {
    const { logger, lines } = capturingLogger();
    const c = await LeaderEpochFileCache.load(path, logger);
    await c.assign(1, 0n);
    await c.assign(2, 100n);
    await c.assign(3, 200n);
    await c.assign(2, 150n);
    expect(c.epochEntries()).toEqual([
      { epoch: 1, startOffset: 0n },
      { epoch: 2, startOffset: 150n },
    ]);
    expect(lines.some((l) => l.msg === 'new leader epoch entry truncated conflicting entries')).toBe(true);
  });

  test('log – leader epoch cache: endOffsetFor follows Kafka (OffsetForLeaderEpoch)', async () => {
    const c = await LeaderEpochFileCache.load(path);
    await c.assign(2, 10n);
    await c.assign(4, 50n);
    await c.assign(7, 90n);
    const leo = 120n;
    expect(c.endOffsetFor(-1, leo)).toEqual({ epoch: -1, endOffset: -1n });
    expect(c.endOffsetFor(7, leo)).toEqual({ epoch: 7, endOffset: 120n });
    expect(c.endOffsetFor(4, leo)).toEqual({ epoch: 4, endOffset: 90n });
    expect(c.endOffsetFor(5, leo)).toEqual({ epoch: 4, endOffset: 90n });
    expect(c.endOffsetFor(1, leo)).toEqual({ epoch: 1, endOffset: 10n });
    expect(c.endOffsetFor(8, leo)).toEqual({ epoch: -1, endOffset: -1n });
    expect(c.epochForOffset(5n)).toBeUndefined();
    expect(c.epochForOffset(50n)).toBe(4);
    expect(c.epochForOffset(89n)).toBe(4);
    expect(c.epochForOffset(1000n)).toBe(7);
  });

  test('log – leader epoch cache: truncation from the end and from the start', async () => {
    const c = await LeaderEpochFileCache.load(path);
    await c.assign(2, 10n);
    await c.assign(4, 50n);
    await c.assign(7, 90n);
    await c.truncateFromEnd(90n);
    expect(c.latestEpoch).toBe(4);
    await c.truncateFromStart(60n);
    expect(c.epochEntries()).toEqual([{ epoch: 4, startOffset: 60n }]);
    expect(await readFile(path, 'utf8')).toBe('0\n1\n4 60\n');
    await c.truncateFromStart(40n); // before the first entry: no change
    expect(c.epochEntries()).toEqual([{ epoch: 4, startOffset: 60n }]);
    await c.clearAndFlush();
    expect(await readFile(path, 'utf8')).toBe('0\n0\n');
  });

  test('log – leader epoch cache: assignInBackground changes the cache at once and writes the file later, once for several assigns', async () => {
    const c = await LeaderEpochFileCache.load(path);
    expect(c.assignInBackground(3, 0n)).toBe(true);
    expect(c.assignInBackground(3, 5n)).toBe(false); // same epoch, later offset: no change
    expect(c.assignInBackground(4, 20n)).toBe(true);
    // in memory at once, nothing written yet (a LeaderAndIsr answers without waiting for the file)
    expect(c.latestEntry).toEqual({ epoch: 4, startOffset: 20n });
    await expect(readFile(path, 'utf8')).rejects.toThrow(/ENOENT/);
    await c.written();
    expect(await readFile(path, 'utf8')).toBe('0\n2\n3 0\n4 20\n');
    const again = await LeaderEpochFileCache.load(path);
    expect(again.epochEntries()).toEqual(c.epochEntries());
  });

  test('log – leader epoch cache: written() starts a write still queued behind other logs at once (a closing log does not wait for the queue)', async () => {
    // many caches queue their writes; the process runs a couple at a time
    const many = await Promise.all(Array.from({ length: 50 }, (_, i) => LeaderEpochFileCache.load(join(dir, `q-${i}`))));
    for (const c of many) c.assignInBackground(1, 0n);
    await many.at(-1)!.written();
    // the last one is written while most of those queued before it still wait
    const written = await Promise.all(
      many.slice(0, -1).map((_, i) =>
        readFile(join(dir, `q-${i}`), 'utf8').then(
          () => true,
          () => false,
        ),
      ),
    );
    expect(written.filter(Boolean).length).toBeLessThan(40);
    await Promise.all(many.map((c) => c.written()));
    expect(await readFile(join(dir, 'q-49'), 'utf8')).toBe('0\n1\n1 0\n');
  });

  test('log – leader epoch cache: a queued background write can be dropped unwritten; one already started cannot', async () => {
    const many = await Promise.all(Array.from({ length: 10 }, (_, i) => LeaderEpochFileCache.load(join(dir, `d-${i}`))));
    for (const c of many) c.assignInBackground(1, 0n);
    // the first writes start at once, the rest wait in the process-wide queue
    expect(many[0]!.dropQueuedWrite()).toBe(false);
    expect(many[9]!.dropQueuedWrite()).toBe(true);
    expect(many[9]!.dropQueuedWrite()).toBe(false);
    await Promise.all(many.map((c) => c.written()));
    await expect(readFile(join(dir, 'd-9'), 'utf8')).rejects.toThrow(/ENOENT/);
    expect(await readFile(join(dir, 'd-0'), 'utf8')).toBe('0\n1\n1 0\n');
    // the entry is still in memory, and a later assign queues a write again
    expect(many[9]!.latestEntry).toEqual({ epoch: 1, startOffset: 0n });
    many[9]!.assignInBackground(2, 0n);
    await many[9]!.written();
    expect(await readFile(join(dir, 'd-9'), 'utf8')).toBe('0\n1\n2 0\n');
  });

  test('log – leader epoch cache: a held entry is written only once released (the log gained a record), and a held write can be dropped', async () => {
    const c = await LeaderEpochFileCache.load(path);
    expect(c.assignHeld(2, 0n)).toBe(true);
    expect(c.hasHeldWrite).toBe(true);
    expect(c.latestEntry).toEqual({ epoch: 2, startOffset: 0n });
    // nothing queued: written() has nothing to wait for, and no file appears
    await c.written();
    await expect(readFile(path, 'utf8')).rejects.toThrow(/ENOENT/);
    c.releaseHeldWrite();
    expect(c.hasHeldWrite).toBe(false);
    await c.written();
    expect(await readFile(path, 'utf8')).toBe('0\n1\n2 0\n');

    const other = join(dir, 'other');
    const d = await LeaderEpochFileCache.load(other);
    d.assignHeld(1, 0n);
    expect(d.dropHeldWrite()).toBe(true);
    expect(d.dropHeldWrite()).toBe(false);
    d.releaseHeldWrite(); // dropped: nothing to release
    await d.written();
    await expect(readFile(other, 'utf8')).rejects.toThrow(/ENOENT/);
  });

  test('log – leader epoch cache: any other write of the file takes a held entry with it', async () => {
    const c = await LeaderEpochFileCache.load(path);
    c.assignHeld(1, 0n);
    expect(await c.assign(2, 10n)).toBe(true);
    expect(c.hasHeldWrite).toBe(false);
    expect(await readFile(path, 'utf8')).toBe('0\n2\n1 0\n2 10\n');
    c.assignHeld(3, 10n);
    await c.truncateFromStart(5n);
    expect(c.hasHeldWrite).toBe(false);
    // (3 10) replaced (2 10) in memory; the truncation's write carries it
    expect(await readFile(path, 'utf8')).toBe('0\n2\n1 5\n3 10\n');
  });

  test('log – leader epoch cache: a failed background write is reported by written() until the file is rewritten', async () => {
    const { logger, lines } = capturingLogger();
    const c = await LeaderEpochFileCache.load(join(dir, 'missing-dir', 'leader-epoch-checkpoint'), logger);
    c.assignInBackground(1, 0n);
    await expect(c.written()).rejects.toThrow(/ENOENT/);
    expect(lines.some((l) => l.msg === 'background leader epoch checkpoint write failed')).toBe(true);
    await expect(c.written()).rejects.toThrow(/ENOENT/);
  });

  test('log – leader epoch cache: a corrupt checkpoint file fails loudly', async () => {
    await writeFile(path, '0\n2\n1 0\n');
    await expect(LeaderEpochFileCache.load(path)).rejects.toThrow(/expected 2 entries/);
  });
});
