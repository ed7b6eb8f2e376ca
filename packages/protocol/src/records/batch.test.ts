import { describe, expect, it } from 'vitest';
import { KafkaError } from '../errors.js';
import {
  CompressionType,
  RecordBatch,
  TimestampType,
  assignOffsets,
  compress,
  computeBatchCrc,
  crc32c,
  decompress,
  encodeRecordBatch,
  isXerialSnappy,
  readBatchHeader,
  recordBatches,
  scanRecordSet,
  setBaseOffset,
  setMaxTimestamp,
  setPartitionLeaderEpoch,
  type RecordInput,
} from './index.js';

const T0 = 1_700_000_000_000;

function u32le(v: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(v >>> 0);
  return b;
}

function sampleRecords(n = 5): RecordInput[] {
  return Array.from({ length: n }, (_, i) => ({
    key: i === 1 ? null : `key-${i}`,
    value: i === 2 ? null : `value-${i}-`.repeat(20),
    timestamp: T0 + i * 7,
    headers:
      i === 3
        ? [
            { key: 'h1', value: 'v1' },
            { key: 'h2', value: null },
            { key: 'ünï', value: '' },
          ]
        : [],
  }));
}

const codecs: [string, CompressionType, 'xerial' | 'raw' | undefined][] = [
  ['none', CompressionType.NONE, undefined],
  ['gzip', CompressionType.GZIP, undefined],
  ['snappy (xerial)', CompressionType.SNAPPY, 'xerial'],
  ['snappy (raw)', CompressionType.SNAPPY, 'raw'],
  ['lz4', CompressionType.LZ4, undefined],
  ['zstd', CompressionType.ZSTD, undefined],
];

describe('records – crc32c', () => {
  it('matches the standard check value', () => {
    expect(crc32c(Buffer.from('123456789'))).toBe(0xe3069283);
    expect(crc32c(Buffer.alloc(0))).toBe(0);
  });
});

describe('records – encode/decode round trip', () => {
  for (const [name, compression, snappyFraming] of codecs) {
    it(`round-trips a batch with ${name}`, () => {
      const input = sampleRecords();
      const buf = encodeRecordBatch({
        records: input,
        compression,
        snappyFraming,
        baseOffset: 42n,
        partitionLeaderEpoch: 7,
        producerId: 1234n,
        producerEpoch: 3,
        baseSequence: 10,
      });
      const batch = new RecordBatch(buf);
      expect(batch.magic).toBe(2);
      expect(batch.compression).toBe(compression);
      expect(batch.baseOffset).toBe(42n);
      expect(batch.partitionLeaderEpoch).toBe(7);
      expect(batch.recordCount).toBe(5);
      expect(batch.lastOffsetDelta).toBe(4);
      expect(batch.lastOffset).toBe(46n);
      expect(batch.baseTimestamp).toBe(BigInt(T0));
      expect(batch.maxTimestamp).toBe(BigInt(T0 + 28));
      expect(batch.producerId).toBe(1234n);
      expect(batch.producerEpoch).toBe(3);
      expect(batch.baseSequence).toBe(10);
      expect(batch.lastSequence).toBe(14);
      expect(batch.isValidCrc()).toBe(true);
      expect(batch.batchLength).toBe(buf.length - 12);
      if (compression === CompressionType.SNAPPY) {
        expect(isXerialSnappy(batch.rawPayload())).toBe(snappyFraming === 'xerial');
      }

      const records = batch.toArray();
      expect(records).toHaveLength(5);
      records.forEach((r, i) => {
        expect(r.offsetDelta).toBe(i);
        expect(r.offset).toBe(42n + BigInt(i));
        expect(r.timestamp).toBe(BigInt(T0 + i * 7));
        expect(r.key?.toString()).toBe(i === 1 ? undefined : `key-${i}`);
        expect(r.value?.toString()).toBe(i === 2 ? undefined : `value-${i}-`.repeat(20));
      });
      expect(records[1]!.key).toBeNull();
      expect(records[2]!.value).toBeNull();
      expect(records[3]!.headers.map((h) => [h.key, h.value?.toString() ?? null])).toEqual([
        ['h1', 'v1'],
        ['h2', null],
        ['ünï', ''],
      ]);
      expect(readBatchHeader(buf)).toEqual(batch.header());
    });
  }

  it('gives zero-copy views into the batch buffer for uncompressed batches', () => {
    const buf = encodeRecordBatch({ records: sampleRecords(2) });
    const [r0] = new RecordBatch(buf).toArray();
    expect(r0!.key!.buffer).toBe(buf.buffer);
    expect(r0!.key!.byteOffset).toBeGreaterThan(buf.byteOffset);
  });

  it('records serialise to JSON (bigints as strings, bytes as base64)', () => {
    const [r] = new RecordBatch(
      encodeRecordBatch({ records: [{ key: 'k', value: null, timestamp: T0, headers: [{ key: 'h', value: 'v' }] }], baseOffset: 9n }),
    ).toArray();
    expect(JSON.parse(JSON.stringify(r))).toEqual({
      offset: '9',
      timestamp: String(T0),
      key: Buffer.from('k').toString('base64'),
      value: null,
      headers: [{ key: 'h', value: Buffer.from('v').toString('base64') }],
    });
  });

  it('decodes lazily: records before a corrupt one are yielded', () => {
    const buf = encodeRecordBatch({ records: [{ value: 'a' }, { value: 'b' }, { value: 'c' }] });
    // Corrupt the third record's length varint to claim more bytes than remain.
    const batch = new RecordBatch(buf);
    const it = batch.records();
    expect(it.next().value?.value?.toString()).toBe('a');
    const third = buf.length - 8; // records here are 8 bytes each
    buf[third] = 0x7e;
    expect(it.next().value?.value?.toString()).toBe('b');
    expect(() => it.next()).toThrowError(KafkaError);
  });

  it('reports LogAppendTime batches with the batch max timestamp for every record', () => {
    const buf = encodeRecordBatch({
      records: [
        { value: 'x', timestamp: T0 },
        { value: 'y', timestamp: T0 + 5 },
      ],
      timestampType: TimestampType.LOG_APPEND_TIME,
      maxTimestamp: T0 + 1000,
    });
    const batch = new RecordBatch(buf);
    expect(batch.timestampType).toBe(TimestampType.LOG_APPEND_TIME);
    expect(batch.toArray().map((r) => r.timestamp)).toEqual([BigInt(T0 + 1000), BigInt(T0 + 1000)]);
  });

  it('encodes attributes bits', () => {
    const b = new RecordBatch(
      encodeRecordBatch({
        records: [{ value: 'x' }],
        transactional: true,
        producerId: 5n,
        producerEpoch: 0,
        baseSequence: 0,
        compression: CompressionType.GZIP,
      }),
    );
    expect(b.isTransactional).toBe(true);
    expect(b.isControl).toBe(false);
    expect(b.attributes).toBe(0x10 | 1);
  });

  it('rejects wrong magic and length mismatch when wrapping', () => {
    const buf = encodeRecordBatch({ records: [{ value: 'x' }] });
    const legacy = Buffer.from(buf);
    legacy[16] = 1;
    expect(() => new RecordBatch(legacy)).toThrowError(expect.objectContaining({ code: 43 }));
    const bad = Buffer.from(buf);
    bad[16] = 9;
    expect(() => new RecordBatch(bad)).toThrowError(expect.objectContaining({ code: 2 }));
    expect(() => new RecordBatch(buf.subarray(0, buf.length - 1))).toThrowError(expect.objectContaining({ code: 2 }));
    expect(() => new RecordBatch(buf.subarray(0, 30))).toThrowError(expect.objectContaining({ code: 2 }));
  });
});

describe('records – CRC', () => {
  it('detects a flipped byte anywhere in the CRC range', () => {
    const buf = encodeRecordBatch({ records: sampleRecords(), compression: CompressionType.NONE });
    for (const pos of [21, 30, 61, buf.length - 1]) {
      const copy = Buffer.from(buf);
      copy[pos]! ^= 0x01;
      const b = new RecordBatch(copy);
      expect(b.isValidCrc()).toBe(false);
      expect(() => b.ensureValidCrc()).toThrowError(expect.objectContaining({ code: 2 }));
    }
  });

  it('in-place rewrite of baseOffset and partitionLeaderEpoch keeps the CRC valid', () => {
    const buf = encodeRecordBatch({ records: sampleRecords(), compression: CompressionType.LZ4 });
    const crc = new RecordBatch(buf).crc;
    setBaseOffset(buf, 123456789012n);
    setPartitionLeaderEpoch(buf, 99);
    const b = new RecordBatch(buf);
    expect(b.baseOffset).toBe(123456789012n);
    expect(b.partitionLeaderEpoch).toBe(99);
    expect(b.crc).toBe(crc);
    expect(b.isValidCrc()).toBe(true);
    expect(b.toArray()[4]!.offset).toBe(123456789016n);
  });

  it('setMaxTimestamp rewrites the CRC (the field is inside the CRC range)', () => {
    const buf = encodeRecordBatch({ records: sampleRecords() });
    expect(setMaxTimestamp(buf, TimestampType.CREATE_TIME, BigInt(T0 + 28))).toBe(false);
    expect(setMaxTimestamp(buf, TimestampType.LOG_APPEND_TIME, 1n << 41n)).toBe(true);
    const b = new RecordBatch(buf);
    expect(b.timestampType).toBe(TimestampType.LOG_APPEND_TIME);
    expect(b.maxTimestamp).toBe(1n << 41n);
    expect(b.isValidCrc()).toBe(true);
    expect(computeBatchCrc(buf)).toBe(b.crc);
  });

  it('assignOffsets stamps consecutive offsets over several batches', () => {
    const a = encodeRecordBatch({ records: sampleRecords(3) });
    const b = encodeRecordBatch({ records: sampleRecords(5), compression: CompressionType.ZSTD });
    const set = Buffer.concat([a, b]);
    expect(assignOffsets(set, 100n, 4)).toBe(108n);
    const [ba, bb] = scanRecordSet(set).batches;
    expect(ba!.baseOffset).toBe(100n);
    expect(bb!.baseOffset).toBe(103n);
    expect(bb!.partitionLeaderEpoch).toBe(4);
    expect(ba!.isValidCrc() && bb!.isValidCrc()).toBe(true);
  });
});

describe('records – record sets', () => {
  it('iterates several batches and reports a truncated trailing batch', () => {
    const a = encodeRecordBatch({ records: sampleRecords(2) });
    const b = encodeRecordBatch({ records: sampleRecords(3), compression: CompressionType.GZIP });
    const full = Buffer.concat([a, b]);
    for (const cut of [1, 11, 12, 16, 17, 40, 61, b.length - 1]) {
      const scan = scanRecordSet(full.subarray(0, a.length + cut));
      expect(scan.batches).toHaveLength(1);
      expect(scan.validBytes).toBe(a.length);
      expect(scan.partial).toEqual({ position: a.length, available: cut, declared: cut < 12 ? null : b.length });
    }
    const scan = scanRecordSet(full);
    expect(scan.batches.map((x) => x.recordCount)).toEqual([2, 3]);
    expect(scan.partial).toBeNull();
    const it = recordBatches(full.subarray(0, full.length - 3));
    expect([...it]).toHaveLength(1);
    expect(it.partial?.position).toBe(a.length);
  });

  it('throws CORRUPT_MESSAGE on impossible lengths and magic', () => {
    const a = encodeRecordBatch({ records: sampleRecords(2) });
    const tiny = Buffer.from(a);
    tiny.writeInt32BE(5, 8);
    expect(() => scanRecordSet(tiny)).toThrowError(expect.objectContaining({ code: 2 }));
    const magic = Buffer.from(a);
    magic[16] = 7;
    expect(() => scanRecordSet(magic)).toThrowError(expect.objectContaining({ code: 2 }));
    const short = Buffer.from(a);
    short.writeInt32BE(20, 8); // >= 14 but smaller than a v2 header
    expect(() => scanRecordSet(short)).toThrowError(expect.objectContaining({ code: 2 }));
  });

  it('handles an empty buffer', () => {
    expect(scanRecordSet(Buffer.alloc(0))).toEqual({ batches: [], validBytes: 0, partial: null });
  });
});

describe('records – compression codecs', () => {
  const big = Buffer.from(Array.from({ length: 20000 }, (_, i) => `line ${i % 977}\n`).join(''));

  for (const [name, type, snappyFraming] of codecs) {
    it(`${name} round-trips ${big.length} bytes`, () => {
      const c = compress(type, big, { snappyFraming });
      expect(decompress(type, c).equals(big)).toBe(true);
    });
  }

  it('xerial snappy uses several 32 KiB blocks for large input', () => {
    const c = compress(CompressionType.SNAPPY, big);
    expect(isXerialSnappy(c)).toBe(true);
    expect(c.readInt32BE(8)).toBe(1);
    expect(c.readInt32BE(12)).toBe(1);
    expect(big.length).toBeGreaterThan(3 * 32 * 1024);
  });

  it('lz4 frames: checksum flags, multiple and stored (incompressible) blocks', async () => {
    const { compressFrameSync } = await import('lz4-napi');
    const random = Buffer.alloc(600 * 1024);
    for (let i = 0; i < random.length; i++) random[i] = (Math.imul(i, 2654435761) >>> 13) & 0xff;
    const mixed = Buffer.concat([random, big, random.subarray(0, 1000)]);
    for (const options of [{}, { contentChecksum: true }, { blockChecksums: true }, { contentChecksum: true, blockChecksums: true }]) {
      const frame = compressFrameSync(mixed, options);
      expect(decompress(CompressionType.LZ4, frame).equals(mixed)).toBe(true);
    }
    // Hand-made frame: one stored block, then one compressed block, 64 KiB max block size (as librdkafka writes).
    const stored = Buffer.from('stored block|');
    const { compressSync } = await import('lz4-napi');
    const compressed = compressSync(Buffer.from('abcabcabcabcabcabcabcabc')).subarray(4);
    const frame = Buffer.concat([
      Buffer.from([0x04, 0x22, 0x4d, 0x18, 0x60, 0x40, 0x82]),
      u32le(0x80000000 | stored.length),
      stored,
      u32le(compressed.length),
      compressed,
      u32le(0),
    ]);
    expect(decompress(CompressionType.LZ4, frame).toString()).toBe('stored block|abcabcabcabcabcabcabcabc');
    expect(() => decompress(CompressionType.LZ4, frame.subarray(0, frame.length - 2))).toThrowError(expect.objectContaining({ code: 2 }));
  });

  it('lz4 frames with linked (dependent) blocks', async () => {
    const { compressSync } = await import('lz4-napi');
    const part1 = Buffer.from('The quick brown fox jumps over the lazy dog. '.repeat(50));
    const part2 = Buffer.from('The quick brown fox jumps over the lazy dog! '.repeat(50));
    const b1 = compressSync(part1).subarray(4);
    const b2 = compressSync(part2, part1).subarray(4);
    const frame = Buffer.concat([
      Buffer.from([0x04, 0x22, 0x4d, 0x18, 0x40, 0x40, 0x00]), // FLG 0x40: linked blocks
      u32le(b1.length),
      b1,
      u32le(b2.length),
      b2,
      u32le(0),
    ]);
    expect(decompress(CompressionType.LZ4, frame).equals(Buffer.concat([part1, part2]))).toBe(true);
  });

  it('bounds decompressed size before allocating (decompression bombs)', async () => {
    const { CompressStream } = await import('zstd-napi');
    const zeros = Buffer.alloc(8 * 1024 * 1024);
    // zstd with a declared content size, and streamed without one
    expect(() => decompress(CompressionType.ZSTD, compress(CompressionType.ZSTD, zeros), { maxBytes: 1 << 20 })).toThrowError(
      expect.objectContaining({ code: 2 }),
    );
    const streamed = await new Promise<Buffer>((resolve) => {
      const parts: Buffer[] = [];
      const cs = new CompressStream();
      cs.on('data', (d: Buffer) => parts.push(d));
      cs.on('end', () => resolve(Buffer.concat(parts)));
      cs.end(zeros);
    });
    expect(decompress(CompressionType.ZSTD, streamed).length).toBe(zeros.length);
    expect(() => decompress(CompressionType.ZSTD, streamed, { maxBytes: 1 << 20 })).toThrowError(expect.objectContaining({ code: 2 }));
    // a raw snappy block whose length preamble claims 2 GiB
    const liar = Buffer.from([0x80, 0x80, 0x80, 0x80, 0x08, 0x00, 0x41]);
    const t = performance.now();
    expect(() => decompress(CompressionType.SNAPPY, liar)).toThrowError(expect.objectContaining({ code: 2 }));
    expect(performance.now() - t).toBeLessThan(50);
    // gzip and lz4 honour the limit too
    for (const type of [CompressionType.GZIP, CompressionType.LZ4, CompressionType.SNAPPY]) {
      expect(() => decompress(type, compress(type, zeros), { maxBytes: 1 << 20 })).toThrowError(expect.objectContaining({ code: 2 }));
    }
  });

  it('decodes snappy-java (Xerial) stream vectors', () => {
    const header = [130, 83, 78, 65, 80, 80, 89, 0, 0, 0, 0, 1, 0, 0, 0, 1];
    const vectors: [string, number[]][] = [
      ['PLAINDATA', [...header, 0, 0, 0, 11, 9, 32, 80, 76, 65, 73, 78, 68, 65, 84, 65]],
      ['A', [...header, 0, 0, 0, 3, 1, 0, 0x41]],
      ['', header],
      // two blocks, the second an empty snappy block
      ['AA', [...header, 0, 0, 0, 4, 2, 4, 0x41, 0x41, 0, 0, 0, 1, 0]],
    ];
    for (const [text, bytes] of vectors) {
      expect(decompress(CompressionType.SNAPPY, Buffer.from(bytes)).toString()).toBe(text);
    }
  });

  it('malformed payloads are CORRUPT_MESSAGE', () => {
    const junk = Buffer.from('definitely not compressed data');
    for (const type of [1, 2, 3, 4, 6]) {
      expect(() => decompress(type, junk)).toThrowError(expect.objectContaining({ code: 2 }));
    }
    const xerial = compress(CompressionType.SNAPPY, big);
    expect(() => decompress(CompressionType.SNAPPY, xerial.subarray(0, 30))).toThrowError(KafkaError);
  });

  it('enforces maxBytes', () => {
    for (const [, type, snappyFraming] of codecs.slice(1)) {
      const c = compress(type, big, { snappyFraming });
      expect(() => decompress(type, c, { maxBytes: 1000 })).toThrowError(expect.objectContaining({ code: 2 }));
    }
  });
});
