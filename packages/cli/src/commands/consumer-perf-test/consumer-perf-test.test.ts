import { describe, expect, it } from 'vitest';
import { PERF_HEADER, formatDate, summaryLine } from './consumer-perf-test.js';

describe('consumer-perf-test', () => {
  it('consumer-perf-test – Kafka header and summary line (MB = 2^20 bytes, fetch time excludes rebalance time)', () => {
    expect(PERF_HEADER.split(', ')).toHaveLength(10);
    const line = summaryLine({ startMs: 0, endMs: 2000, bytes: 4 * 1024 * 1024, messages: 1000, joinMs: 1000 });
    const f = line.split(', ');
    expect(f[0]).toBe(formatDate(0));
    expect(f.slice(2)).toEqual(['4.0000', '2.0000', '1000', '500.0000', '1000', '1000', '4.0000', '1000.0000']);
    expect(formatDate(Date.UTC(2026, 0, 2, 3, 4, 5, 6) + new Date(Date.UTC(2026, 0, 2)).getTimezoneOffset() * 60000)).toBe('2026-01-02 03:04:05:006');
  });
});
