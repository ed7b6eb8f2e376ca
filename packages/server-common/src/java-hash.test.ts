import { describe, expect, it } from 'vitest';
import { javaStringHashCode, kafkaAbs } from './java-hash.js';

describe('java-hash – String.hashCode and Utils.abs', () => {
  it('java-hash – javaStringHashCode matches java.lang.String.hashCode (int32 overflow, UTF-16 units)', () => {
    expect(javaStringHashCode('')).toBe(0);
    expect(javaStringHashCode('a')).toBe(97);
    expect(javaStringHashCode('hello')).toBe(99162322);
    // the classic collision
    expect(javaStringHashCode('Aa')).toBe(javaStringHashCode('BB'));
    // overflow: a string whose hash is Integer.MIN_VALUE
    expect(javaStringHashCode('polygenelubricants')).toBe(-2147483648);
    // a non-BMP character counts as two UTF-16 units, as in Java
    expect(javaStringHashCode('😀')).toBe(Math.imul(0xd83d, 31) + 0xde00);
  });

  it('java-hash – kafkaAbs maps Integer.MIN_VALUE to 0 and is Math.abs otherwise', () => {
    expect(kafkaAbs(-2147483648)).toBe(0);
    expect(kafkaAbs(-5)).toBe(5);
    expect(kafkaAbs(7)).toBe(7);
    expect(kafkaAbs(2147483647)).toBe(2147483647);
  });
});
