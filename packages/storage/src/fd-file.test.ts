import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LogClosedError } from './errors.js';
import { FdFile } from './fd-file.js';

describe('FdFile', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fd-file-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('fd file – synchronous positional writes and reads agree with the asynchronous ones', async () => {
    const f = await FdFile.open(join(dir, 'a'), 'w+');
    const data = Buffer.from('0123456789abcdef');
    f.writeFullySync(data, 0, 8, 0);
    await f.writeFully(data, 8, 8, 8);
    const viaSync = Buffer.alloc(16);
    expect(f.readFullySync(viaSync, 0, 16, 0)).toBe(16);
    const viaAsync = Buffer.alloc(16);
    expect(await f.readFully(viaAsync, 0, 16, 0)).toBe(16);
    expect(viaSync.toString()).toBe('0123456789abcdef');
    expect(viaAsync.equals(viaSync)).toBe(true);
    // past the end: what is there
    expect(f.readFullySync(Buffer.alloc(8), 0, 8, 12)).toBe(4);
    await f.close();
  });

  it('fd file – synchronous operations are refused once close() has begun', async () => {
    const f = await FdFile.open(join(dir, 'b'), 'w+');
    const closing = f.close();
    expect(() => f.writeFullySync(Buffer.from('x'), 0, 1, 0)).toThrow(LogClosedError);
    expect(() => f.readFullySync(Buffer.alloc(1), 0, 1, 0)).toThrow(LogClosedError);
    await closing;
  });
});
