import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CompressionType, encodeRecordBatch } from '@samsa/protocol';
import { readReplicaLog, segmentFiles } from './log-files.js';

let dir = '';
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

const batch = (base: number, values: string[], epoch = 0, compression: CompressionType = CompressionType.NONE) =>
  encodeRecordBatch({ baseOffset: base, partitionLeaderEpoch: epoch, compression, records: values.map((v) => ({ value: Buffer.from(v) })) });

describe('verify log files', () => {
  it('verify – reads every segment of a partition in offset order, stops at a partial trailing batch', async () => {
    dir = await mkdtemp(join(tmpdir(), 'samsa-verify-'));
    const p = join(dir, 't-0');
    await mkdir(p);
    await writeFile(join(p, '00000000000000000000.log'), Buffer.concat([batch(0, ['a', 'b']), batch(2, ['c'], 1, CompressionType.GZIP)]));
    const tail = batch(4, ['e']);
    await writeFile(join(p, '00000000000000000003.log'), Buffer.concat([batch(3, ['d'], 2), tail.subarray(0, tail.length - 5)]));
    await writeFile(join(p, '00000000000000000000.index'), Buffer.alloc(8));
    expect((await segmentFiles(dir, 't', 0)).map((f) => f.slice(p.length + 1))).toEqual(['00000000000000000000.log', '00000000000000000003.log']);
    const all = await readReplicaLog(dir, 't', 0);
    expect(all.endOffset).toBe(4);
    expect(all.records.map((r) => [r.offset, r.value, r.epoch])).toEqual([
      [0, 'a', 0],
      [1, 'b', 0],
      [2, 'c', 1],
      [3, 'd', 2],
    ]);
    expect((await readReplicaLog(dir, 't', 0, 2)).records.map((r) => r.value)).toEqual(['a', 'b']);
    expect(await readReplicaLog(dir, 't', 1)).toEqual({ records: [], endOffset: 0 });
  });
});
