import { readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import {
  CheckpointFile,
  deferredFlushes,
  OFFSET_CHECKPOINT_FORMAT,
  OffsetCheckpointFile,
  parseCheckpoint,
  tempFileName,
  writeFileAtomically,
} from './checkpoint.js';
import { CorruptCheckpointError } from './errors.js';
import { deleteDirName, parsePartitionDirName } from './topic-partition.js';
import { makeTempDir } from './test-support.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await makeTempDir()));
afterEach(async () => cleanup());

describe('checkpoint', () => {
  test('checkpoint – Kafka text format: version, count, `topic partition offset` lines', async () => {
    const path = join(dir, 'recovery-point-offset-checkpoint');
    const f = new OffsetCheckpointFile(path);
    expect((await f.read()).size).toBe(0);
    await f.write([
      { topic: 'orders', partition: 0, offset: 1234n },
      { topic: 'my-topic.v2', partition: 11, offset: 9_007_199_254_740_993n },
    ]);
    expect(await readFile(path, 'utf8')).toBe('0\n2\norders 0 1234\nmy-topic.v2 11 9007199254740993\n');
    const back = await f.read();
    expect(back.get('orders-0')).toBe(1234n);
    expect(back.get('my-topic.v2-11')).toBe(9_007_199_254_740_993n);
    await f.write([]);
    expect(await readFile(path, 'utf8')).toBe('0\n0\n');
  });

  test('checkpoint – written atomically: no temp file left, concurrent writes serialized', async () => {
    const path = join(dir, 'log-start-offset-checkpoint');
    const f = new OffsetCheckpointFile(path);
    await Promise.all(Array.from({ length: 20 }, (_, i) => f.write([{ topic: 't', partition: 0, offset: BigInt(i) }])));
    expect(await readFile(path, 'utf8')).toBe('0\n1\nt 0 19\n');
    expect(await readdir(dir)).toEqual(['log-start-offset-checkpoint']);
    await writeFileAtomically(join(dir, 'x'), 'hello');
    expect(await readFile(join(dir, 'x'), 'utf8')).toBe('hello');
  });

  test('checkpoint – concurrent writeFileAtomically of one path from different writers: one at a time, unique temp names', async () => {
    const path = join(dir, 'replication-offset-checkpoint');
    // Separate OffsetCheckpointFile instances (as the high-watermark checkpoint creates) and bare writes.
    const writes = Array.from({ length: 20 }, (_, i) =>
      i % 2 === 0 ? new OffsetCheckpointFile(path).write([{ topic: 't', partition: 0, offset: BigInt(i) }]) : writeFileAtomically(path, `0\n1\nt 0 ${i}\n`),
    );
    await Promise.all(writes);
    expect(await readFile(path, 'utf8')).toBe('0\n1\nt 0 19\n');
    expect(await readdir(dir)).toEqual(['replication-offset-checkpoint']);
  });

  test('checkpoint – a deferred-fsync write is in place when it resolves, its flush runs after; a file deleted meanwhile is no error', async () => {
    const path = join(dir, 'partition.metadata');
    const writes = Array.from({ length: 20 }, (_, i) => writeFileAtomically(path, `version: 0\ntopic_id: ${i}\n`, 'deferred'));
    await Promise.all(writes);
    expect(await readFile(path, 'utf8')).toBe('version: 0\ntopic_id: 19\n');
    expect((await readdir(dir)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    const other = join(dir, 'gone');
    await writeFileAtomically(other, 'x', 'deferred');
    await rm(other);
    await expect(deferredFlushes()).resolves.toBeUndefined();
  });

  test('checkpoint – temp files are named <file>.<pid>.<counter>.tmp', () => {
    const a = tempFileName('/d/partition.metadata');
    const b = tempFileName('/d/partition.metadata');
    expect(a).toMatch(new RegExp(`^/d/partition\\.metadata\\.${process.pid}\\.\\d+\\.tmp$`));
    expect(a).not.toBe(b);
  });

  test('checkpoint – malformed files are CorruptCheckpointError', async () => {
    const bad = ['', '1\n0\n', '0\n2\nt 0 1\n', '0\nx\n', '0\n1\nt zero 1\n', '0\n1\nt 0 1 extra\n'];
    for (const text of bad) {
      expect(() => parseCheckpoint(text, 0, OFFSET_CHECKPOINT_FORMAT), JSON.stringify(text)).toThrow(CorruptCheckpointError);
    }
    await writeFile(join(dir, 'c'), '0\n1\nt 0\n');
    await expect(new CheckpointFile(join(dir, 'c'), 0, OFFSET_CHECKPOINT_FORMAT).read()).rejects.toThrow(/malformed line/);
  });

  test('checkpoint – format round trip (property)', () => {
    const entry = fc.record({
      topic: fc.stringMatching(/^[a-zA-Z0-9._-]{1,30}$/),
      partition: fc.integer({ min: 0, max: 10_000 }),
      offset: fc.bigInt({ min: 0n, max: (1n << 63n) - 1n }),
    });
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 30 }), (entries) => {
        const text = `0\n${entries.length}\n${entries.map((e) => OFFSET_CHECKPOINT_FORMAT.toLine(e) + '\n').join('')}`;
        expect(parseCheckpoint(text, 0, OFFSET_CHECKPOINT_FORMAT)).toEqual(entries);
      }),
    );
  });

  test('checkpoint – partition directory names', () => {
    expect(parsePartitionDirName('orders-0')).toEqual({ topic: 'orders', partition: 0, kind: 'log' });
    expect(parsePartitionDirName('my-topic-12')).toEqual({ topic: 'my-topic', partition: 12, kind: 'log' });
    expect(parsePartitionDirName('orders-x')).toBeNull();
    expect(parsePartitionDirName('-1')).toBeNull();
    const del = deleteDirName({ topic: 'my-topic', partition: 3 });
    expect(del).toMatch(/^my-topic-3\.[0-9a-f]{32}-delete$/);
    expect(parsePartitionDirName(del)).toEqual({ topic: 'my-topic', partition: 3, kind: 'delete' });
    expect(deleteDirName({ topic: 'x'.repeat(249), partition: 1 }).length).toBeLessThanOrEqual(255);
    expect(parsePartitionDirName('orders-1.abcdef-future')?.kind).toBe('future');
  });
});
