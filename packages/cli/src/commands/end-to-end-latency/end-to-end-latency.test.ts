import { describe, expect, it } from 'vitest';
import { latencyPercentiles } from './end-to-end-latency.js';

describe('end-to-end-latency', () => {
  it('end-to-end-latency – percentiles at floor(n·p) of the sorted latencies', () => {
    const l = Array.from({ length: 1000 }, (_, i) => 1000 - i);
    expect(latencyPercentiles(l)).toEqual({ p50: 501, p99: 991, p999: 1000 });
    expect(latencyPercentiles([7])).toEqual({ p50: 7, p99: 7, p999: 7 });
  });
});
