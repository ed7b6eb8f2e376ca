import { describe, expect, it } from 'vitest';
import { murmur2, toPositive } from './murmur2.js';

describe('murmur2', () => {
  // apache/kafka clients/src/test/java/org/apache/kafka/common/utils/UtilsTest.java testMurmur2
  const vectors: Array<[Uint8Array, number]> = [
    [Buffer.from('21'), -973932308],
    [Buffer.from('foobar'), -790332482],
    [Buffer.from('a-little-bit-long-string'), -985981536],
    [Buffer.from('a-little-bit-longer-string'), -1486304829],
    [Buffer.from('lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8'), -58897971],
    [Buffer.from([0x61, 0x62, 0x63]), 479470107],
  ];
  it.each(vectors)('murmur2 – matches the Java client vector for %s', (bytes, expected) => {
    expect(murmur2(bytes)).toBe(expected);
  });
  it('murmur2 – toPositive clears the sign bit like Utils.toPositive', () => {
    expect(toPositive(-973932308)).toBe(-973932308 & 0x7fffffff);
    expect(toPositive(-2147483648)).toBe(0);
    expect(toPositive(5)).toBe(5);
  });
});
