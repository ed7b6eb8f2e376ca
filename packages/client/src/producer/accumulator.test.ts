import { describe, expect, it } from 'vitest';
import { RecordBatch } from '@samsa/protocol';
import { RecordAccumulator } from './accumulator.js';
import { BufferPool } from './buffer-pool.js';

const noCallback = () => (): void => undefined;
const opts = { batchSize: 1024, lingerMs: 50, bufferMemory: 4096, compression: 0 as const, maxBlockMs: 100 };

describe('RecordAccumulator', () => {
  it('accumulator – a batch is sendable after linger.ms, or at once when full', () => {
    const acc = new RecordAccumulator(opts);
    const r = acc.append('t', 0, 1000, null, Buffer.alloc(10), null, noCallback(), false);
    if (r instanceof Promise || 'abortForNewBatch' in r) throw new Error('unexpected');
    const q = acc.queue('t', 0);
    expect(acc.isSendable(q, r.batch, r.batch.createdMs + 10)).toBe(false);
    expect(acc.waitTime(r.batch, r.batch.createdMs + 10)).toBe(40);
    expect(acc.isSendable(q, r.batch, r.batch.createdMs + 50)).toBe(true);
    // fill past batch.size: a second batch starts and the first is full
    let n = 1;
    while (q.batches.length === 1) {
      acc.append('t', 0, 1000, null, Buffer.alloc(10), null, noCallback(), false);
      n++;
    }
    expect(q.batches[0]!.full).toBe(true);
    expect(acc.isSendable(q, q.batches[0]!, q.batches[0]!.createdMs)).toBe(true);
    // the sealed bytes are a valid RecordBatch v2 holding every record of the first batch
    const bytes = q.batches[0]!.wireBytes();
    const batch = new RecordBatch(bytes);
    expect(batch.recordCount).toBe(n - 1);
    expect(bytes.length).toBeLessThanOrEqual(1024);
    expect([...batch].every((rec) => rec.value?.length === 10)).toBe(true);
  });

  it('accumulator – abortOnNewBatch reports a full sticky batch instead of starting one', () => {
    const acc = new RecordAccumulator(opts);
    acc.append('t', 0, 1000, null, Buffer.alloc(900), null, noCallback(), false);
    expect(acc.append('t', 0, 1000, null, Buffer.alloc(900), null, noCallback(), true)).toEqual({ abortForNewBatch: true });
  });

  it('accumulator – buffer.memory exhausted: append waits for freed memory, fails after max.block.ms', async () => {
    const pool = new BufferPool(2048, 1024);
    const a = pool.allocate(1024, 100) as Buffer;
    pool.allocate(1024, 100);
    const waiting = pool.allocate(1024, 1000);
    expect(waiting).toBeInstanceOf(Promise);
    pool.deallocate(a);
    await expect(waiting).resolves.toHaveLength(1024);
    const t0 = Date.now();
    await expect(pool.allocate(1024, 100)).rejects.toThrow(/Failed to allocate 1024 bytes within the configured max blocking time 100 ms/);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(90);
  });
});
