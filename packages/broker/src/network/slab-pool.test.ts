import { describe, expect, it } from 'vitest';
import { SlabPool } from './slab-pool.js';

describe('slab pool', () => {
  it('slab pool – buffers from one slab never overlap and stay 8-byte aligned', () => {
    const pool = new SlabPool(64 * 1024);
    const bufs = [100, 4096, 5000, 1, 7, 9000].map((n) => pool.take(n));
    bufs.forEach((b, i) => b.fill(i + 1));
    bufs.forEach((b, i) => {
      expect(b.every((x) => x === i + 1)).toBe(true);
      expect(b.byteOffset % 8).toBe(0);
    });
    expect(new Set(bufs.map((b) => b.buffer)).size).toBe(1);
  });

  it('slab pool – starts a new slab when the current one is full, leaving handed-out buffers intact', () => {
    const pool = new SlabPool(16 * 1024);
    const a = pool.take(4096).fill(1);
    const b = pool.take(4096).fill(2);
    const c = pool.take(4096).fill(3);
    const d = pool.take(4096).fill(4);
    const e = pool.take(4096).fill(5); // does not fit: a new slab
    expect(e.buffer).not.toBe(a.buffer);
    expect([a, b, c, d].every((x, i) => x.every((y) => y === i + 1))).toBe(true);
  });

  it('slab pool – a request over a quarter of a slab gets its own buffer', () => {
    const pool = new SlabPool(16 * 1024);
    const small = pool.take(100);
    const big = pool.take(4097);
    expect(big.length).toBe(4097);
    expect(big.buffer).not.toBe(small.buffer);
  });
});
