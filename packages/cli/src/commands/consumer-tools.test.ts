import { describe, expect, it } from 'vitest';
import type { ConsumerRecord } from '@samsa/client';
import { formatRecord, formatterProps } from './console-consumer.js';
import { PERF_HEADER, formatDate, summaryLine } from './consumer-perf-test.js';
import { latencyPercentiles } from './end-to-end-latency.js';
import { renderBar } from './progress.js';

const rec = (o: Partial<ConsumerRecord<Buffer | null, Buffer | null>> = {}): ConsumerRecord<Buffer | null, Buffer | null> => ({
  topic: 't',
  partition: 2,
  offset: 41n,
  timestamp: 1700000000123,
  timestampType: 'CreateTime',
  key: Buffer.from('k'),
  value: Buffer.from('v'),
  headers: [],
  leaderEpoch: 0,
  serializedKeySize: 1,
  serializedValueSize: 1,
  ...o,
});

describe('consumer tools', () => {
  it('console-consumer – DefaultMessageFormatter: value only by default; key, timestamp, partition, offset, headers in Kafka order with key.separator', () => {
    expect(formatRecord(rec(), formatterProps({}))).toBe('v\n');
    expect(formatRecord(rec(), formatterProps({ 'print.key': 'true' }))).toBe('k\tv\n');
    expect(formatRecord(rec({ key: null }), formatterProps({ 'print.key': 'true', 'key.separator': ':' }))).toBe('null:v\n');
    expect(formatRecord(rec(), formatterProps({ 'print.timestamp': 'true', 'print.partition': 'true', 'print.offset': 'true', 'print.key': 'true' }))).toBe('CreateTime:1700000000123\tPartition:2\tOffset:41\tk\tv\n');
    expect(formatRecord(rec({ headers: [{ key: 'h1', value: Buffer.from('x') }, { key: 'h2', value: null }] }), formatterProps({ 'print.headers': 'true' }))).toBe('h1:x,h2:null\tv\n');
    expect(formatRecord(rec(), formatterProps({ 'print.headers': 'true', 'print.value': 'false' }))).toBe('NO_HEADERS\n');
    expect(formatRecord(rec({ value: null }), formatterProps({ 'null.literal': '<nil>', 'line.separator': '\\r\\n' }))).toBe('<nil>\r\n');
  });

  it('consumer-perf-test – Kafka header and summary line (MB = 2^20 bytes, fetch time excludes rebalance time)', () => {
    expect(PERF_HEADER.split(', ')).toHaveLength(10);
    const line = summaryLine({ startMs: 0, endMs: 2000, bytes: 4 * 1024 * 1024, messages: 1000, joinMs: 1000 });
    const f = line.split(', ');
    expect(f[0]).toBe(formatDate(0));
    expect(f.slice(2)).toEqual(['4.0000', '2.0000', '1000', '500.0000', '1000', '1000', '4.0000', '1000.0000']);
    expect(formatDate(Date.UTC(2026, 0, 2, 3, 4, 5, 6) + new Date(Date.UTC(2026, 0, 2)).getTimezoneOffset() * 60000)).toBe('2026-01-02 03:04:05:006');
  });

  it('end-to-end-latency – percentiles at floor(n·p) of the sorted latencies', () => {
    const l = Array.from({ length: 1000 }, (_, i) => 1000 - i);
    expect(latencyPercentiles(l)).toEqual({ p50: 501, p99: 991, p999: 1000 });
    expect(latencyPercentiles([7])).toEqual({ p50: 7, p99: 7, p999: 7 });
  });

  it('progress – the bar fills with the fraction done and fits the width', () => {
    const b = renderBar(50, 100, 'msgs', 1000, 60);
    expect(b.length).toBeLessThanOrEqual(60);
    expect(b).toContain('50.0% 50/100 msgs 50.0 msgs/s');
    const inner = /\[([#.]+)\]/.exec(b)![1]!;
    expect(inner.split('#').length - 1).toBe(Math.round(inner.length / 2));
  });
});
