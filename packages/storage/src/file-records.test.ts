import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { KafkaStorageError } from './errors.js';
import { FileRecords, SYNC_IO_MAX_BYTES } from './file-records.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function fileWith(bytes: Buffer): Promise<FileRecords> {
  const dir = mkdtempSync(join(tmpdir(), 'samsa-file-records-'));
  dirs.push(dir);
  const f = await FileRecords.open(join(dir, '00000000000000000000.log'));
  await f.append(bytes);
  return f;
}

describe('file records', () => {
  it('file records – a small slice of the hot tail is read at once, with the file bytes', async () => {
    const data = Buffer.from(Array.from({ length: 5000 }, (_, i) => i % 251));
    const f = await fileWith(data);
    const slice = f.slice(1000, 3000);
    const target = Buffer.alloc(3000);
    const n = slice.readIntoNow(target);
    expect(n).toBe(3000);
    expect(target.equals(data.subarray(1000, 4000))).toBe(true);
    await f.close();
  });

  it('file records – a slice larger than the immediate-read limit comes back through a promise', async () => {
    const data = Buffer.alloc(SYNC_IO_MAX_BYTES + 10, 7);
    const f = await fileWith(data);
    const target = Buffer.alloc(data.length);
    const n = f.slice(0, data.length).readIntoNow(target);
    expect(n).toBeInstanceOf(Promise);
    expect(await n).toBe(data.length);
    expect(target.equals(data)).toBe(true);
    await f.close();
  });

  it('file records – an immediate read of a closed file throws KafkaStorageError; readInto rejects with it', async () => {
    const f = await fileWith(Buffer.alloc(100, 1));
    const slice = f.slice(0, 100);
    await f.close();
    expect(() => slice.readIntoNow(Buffer.alloc(100))).toThrow(KafkaStorageError);
    await expect(slice.readInto(Buffer.alloc(100))).rejects.toThrow(KafkaStorageError);
  });
});
