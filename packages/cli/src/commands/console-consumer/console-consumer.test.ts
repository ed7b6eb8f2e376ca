import { describe, expect, it } from 'vitest';
import type { ConsumerRecord } from '@samsa/client';
import { formatRecord, formatterProps } from './console-consumer.js';

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

describe('console-consumer', () => {
  it('console-consumer – DefaultMessageFormatter: value only by default; key, timestamp, partition, offset, headers in Kafka order with key.separator', () => {
    expect(formatRecord(rec(), formatterProps({}))).toBe('v\n');
    expect(formatRecord(rec(), formatterProps({ 'print.key': 'true' }))).toBe('k\tv\n');
    expect(formatRecord(rec({ key: null }), formatterProps({ 'print.key': 'true', 'key.separator': ':' }))).toBe('null:v\n');
    expect(formatRecord(rec(), formatterProps({ 'print.timestamp': 'true', 'print.partition': 'true', 'print.offset': 'true', 'print.key': 'true' }))).toBe(
      'CreateTime:1700000000123\tPartition:2\tOffset:41\tk\tv\n',
    );
    expect(
      formatRecord(
        rec({
          headers: [
            { key: 'h1', value: Buffer.from('x') },
            { key: 'h2', value: null },
          ],
        }),
        formatterProps({ 'print.headers': 'true' }),
      ),
    ).toBe('h1:x,h2:null\tv\n');
    expect(formatRecord(rec(), formatterProps({ 'print.headers': 'true', 'print.value': 'false' }))).toBe('NO_HEADERS\n');
    expect(formatRecord(rec({ value: null }), formatterProps({ 'null.literal': '<nil>', 'line.separator': '\\r\\n' }))).toBe('<nil>\r\n');
  });
});
