import { describe, expect, it } from 'vitest';
import { CompressionType, encodeRecordBatch } from '@samsa/protocol';
import { dumpSegment } from './dump-log.js';

const b1 = encodeRecordBatch({
  baseOffset: 0,
  partitionLeaderEpoch: 3,
  producerId: 7,
  producerEpoch: 0,
  baseSequence: 10,
  baseTimestamp: 1700000000000,
  records: [
    { value: Buffer.from('hello') },
    { key: Buffer.from('k'), value: Buffer.from('world'), headers: [{ key: 'h', value: Buffer.from('v') }], timestamp: 1700000000005 },
  ],
});
const b2 = encodeRecordBatch({ baseOffset: 2, compression: CompressionType.GZIP, baseTimestamp: 1700000000010, records: [{ value: Buffer.from('z') }] });

describe('dump-log', () => {
  it('dump-log – batch lines in Kafka DumpLogSegments format', () => {
    const { lines } = dumpSegment('/x/t-0/00000000000000000000.log', Buffer.concat([b1, b2]), { printDataLog: false, deepIteration: false });
    expect(lines[0]).toBe('Log starting offset: 0');
    expect(lines[1]).toBe(
      `baseOffset: 0 lastOffset: 1 count: 2 baseSequence: 10 lastSequence: 11 producerId: 7 producerEpoch: 0 partitionLeaderEpoch: 3 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1700000000005 size: ${b1.length} magic: 2 compresscodec: none crc: ${b1.readUInt32BE(17)} isvalid: true`,
    );
    expect(lines[2]).toMatch(
      new RegExp(
        `^baseOffset: 2 lastOffset: 2 count: 1 baseSequence: -1 lastSequence: -1 producerId: -1 .* position: ${b1.length} CreateTime: 1700000000010 size: ${b2.length} magic: 2 compresscodec: gzip crc: \\d+ isvalid: true$`,
      ),
    );
    expect(lines).toHaveLength(3);
  });

  it('dump-log – --print-data-log prints records with sequence, header keys, key and payload; trailing bytes are reported', () => {
    const { lines } = dumpSegment('00000000000000000000.log', Buffer.concat([b1, b2.subarray(0, 20)]), { printDataLog: true, deepIteration: false });
    expect(lines.slice(2)).toEqual([
      '| offset: 0 CreateTime: 1700000000000 keySize: -1 valueSize: 5 sequence: 10 headerKeys: [] payload: hello',
      '| offset: 1 CreateTime: 1700000000005 keySize: 1 valueSize: 5 sequence: 11 headerKeys: [h] key: k payload: world',
      'Found 20 invalid bytes at the end of 00000000000000000000.log',
    ]);
  });
});
