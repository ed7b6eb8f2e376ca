import { describe, expect, test } from 'vitest';
import { BYTES_PER_ENTRY, SkimpyOffsetMap } from './offset-map.js';

const key = (i: number): Buffer => Buffer.from(`key-${i}`);

describe('offset map', () => {
  test('offset map – keeps the latest offset per key and answers -1 for unknown keys', () => {
    const map = new SkimpyOffsetMap(1000 * BYTES_PER_ENTRY);
    for (let i = 0; i < 500; i++) map.put(key(i % 100), BigInt(i));
    expect(map.size).toBe(100);
    for (let k = 0; k < 100; k++) expect(map.get(key(k))).toBe(BigInt(400 + k));
    expect(map.get(Buffer.from('never-put'))).toBe(-1n);
    expect(map.latestOffset).toBe(499n);
  });

  test('offset map – fills every slot of a small table without losing entries', () => {
    const map = new SkimpyOffsetMap(64 * BYTES_PER_ENTRY);
    expect(map.slots).toBe(64);
    for (let i = 0; i < 64; i++) map.put(key(i), BigInt(i * 10));
    expect(map.size).toBe(64);
    expect(map.utilization).toBe(1);
    for (let i = 0; i < 64; i++) expect(map.get(key(i))).toBe(BigInt(i * 10));
    // an existing key can still be updated in a full table, a new one cannot be added
    map.put(key(3), 999n);
    expect(map.get(key(3))).toBe(999n);
    expect(() => map.put(key(1000), 1n)).toThrow(/full offset map/);
    expect(map.get(key(1000))).toBe(-1n);
  });

  test('offset map – clear empties it and resets the latest offset; updateLatestOffset moves it without an entry', () => {
    const map = new SkimpyOffsetMap(100 * BYTES_PER_ENTRY);
    map.put(key(1), 5n);
    map.updateLatestOffset(42n);
    expect(map.latestOffset).toBe(42n);
    map.clear();
    expect(map.size).toBe(0);
    expect(map.latestOffset).toBe(-1n);
    expect(map.get(key(1))).toBe(-1n);
    map.put(key(1), 7n);
    expect(map.get(key(1))).toBe(7n);
  });

  test('offset map – keys are compared by content, including empty and binary keys', () => {
    const map = new SkimpyOffsetMap(100 * BYTES_PER_ENTRY);
    map.put(Buffer.alloc(0), 1n);
    map.put(Buffer.from([0, 0, 0]), 2n);
    map.put(Buffer.from([0, 0, 0, 0]), 3n);
    expect(map.get(Buffer.alloc(0))).toBe(1n);
    expect(map.get(Buffer.from([0, 0, 0]))).toBe(2n);
    expect(map.get(Buffer.from([0, 0, 0, 0]))).toBe(3n);
  });

  test('offset map – a table too small for one entry is rejected', () => {
    expect(() => new SkimpyOffsetMap(BYTES_PER_ENTRY - 1)).toThrow(RangeError);
  });
});
