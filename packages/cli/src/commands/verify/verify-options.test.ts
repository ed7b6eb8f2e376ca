import { describe, expect, it } from 'vitest';
import { parseAcks, parseCompression, parseDuration, parseLogDirs } from './verify-options.js';

describe('verify options', () => {
  it('verify options – durations in ms, s, m, h; a bare number is seconds', () => {
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('90')).toBe(90_000);
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('5m')).toBe(300_000);
    expect(parseDuration('1.5h')).toBe(5_400_000);
    expect(() => parseDuration('5 minutes')).toThrow(/Invalid duration/);
  });

  it('verify options – log dirs by broker id', () => {
    expect(parseLogDirs('0=/a/logs, 2=/c/logs')).toEqual({ 0: '/a/logs', 2: '/c/logs' });
    expect(() => parseLogDirs('x=/a')).toThrow(/brokerId=/);
    expect(() => parseLogDirs('1=')).toThrow(/brokerId=/);
  });

  it('verify options – acks and compression', () => {
    expect(parseAcks('all')).toBe(-1);
    expect(parseAcks('1')).toBe(1);
    expect(() => parseAcks('2')).toThrow(/--acks/);
    expect(parseCompression('gzip')).toBe('gzip');
    expect(() => parseCompression('brotli')).toThrow(/--compression/);
  });
});
