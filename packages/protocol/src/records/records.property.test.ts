import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KafkaError, errorByCode } from '../errors.js';
import type { CompressionType } from './index.js';
import { RecordBatch, encodeRecordBatch, rewriteCrc, scanRecordSet, validateRecords, type RecordInput } from './index.js';
import { Cursor, sizeOfVarint, sizeOfVarlong, writeVarint, writeVarlong } from './varint.js';

const bytes = fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from(a));
const nullableBytes = fc.option(bytes, { nil: null });
const header = fc.record({ key: fc.string({ maxLength: 12, unit: 'grapheme' }), value: nullableBytes });
const T0 = 1_600_000_000_000;
const record: fc.Arbitrary<RecordInput> = fc.record({
  key: nullableBytes,
  value: nullableBytes,
  headers: fc.array(header, { maxLength: 4 }),
  timestamp: fc.integer({ min: T0 - 1_000_000_000, max: T0 + 1_000_000_000 }),
});
const compression = fc.constantFrom<CompressionType>(0, 1, 2, 3, 4);

/** Runs every decoding entry point over `buf`; only KafkaError may escape. */
function decodeEverything(buf: Buffer): void {
  try {
    const scan = scanRecordSet(buf);
    for (const b of scan.batches) {
      b.header();
      b.isValidCrc();
      for (const r of b.records()) {
        void r.offset;
        void r.timestamp;
        void r.headers.length;
      }
    }
  } catch (e) {
    if (!(e instanceof KafkaError)) throw e;
    expect(errorByCode(e.code)).toBeDefined();
  }
  const v = validateRecords(buf, { deepCompressed: true });
  if (!v.ok) expect(errorByCode(v.errorCode)).toBeDefined();
  expect(v.ok || v.errorCode !== -1).toBe(true);
}

describe('records – property: varints', () => {
  it('varint round-trips every int32', () => {
    fc.assert(
      fc.property(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), (v) => {
        const buf = Buffer.alloc(5);
        const end = writeVarint(buf, 0, v);
        expect(end).toBe(sizeOfVarint(v));
        const c = new Cursor(buf, 0, end);
        expect(c.varint()).toBe(v);
        expect(c.pos).toBe(end);
      }),
    );
  });

  it('varlong round-trips every safe integer (number and bigint writers agree)', () => {
    fc.assert(
      fc.property(fc.maxSafeInteger(), (v) => {
        const a = Buffer.alloc(10);
        const b = Buffer.alloc(10);
        const endA = writeVarlong(a, 0, v);
        const endB = writeVarlong(b, 0, BigInt(v));
        expect(a.subarray(0, endA)).toEqual(b.subarray(0, endB));
        expect(endA).toBe(sizeOfVarlong(v));
        expect(new Cursor(a, 0, endA).varlong()).toBe(v);
      }),
    );
  });
});

describe('records – property: encode/decode', () => {
  it('decoding an encoded batch gives back every record', () => {
    fc.assert(
      fc.property(fc.array(record, { minLength: 1, maxLength: 12 }), compression, (records, comp) => {
        const buf = encodeRecordBatch({ records, compression: comp });
        const batch = new RecordBatch(buf);
        expect(batch.isValidCrc()).toBe(true);
        const decoded = batch.toArray();
        expect(decoded).toHaveLength(records.length);
        decoded.forEach((r, i) => {
          const src = records[i]!;
          expect(r.key).toEqual(src.key);
          expect(r.value).toEqual(src.value);
          expect(r.timestamp).toBe(BigInt(src.timestamp!));
          expect(r.offsetDelta).toBe(i);
          expect(r.headers.map((h) => ({ key: h.key, value: h.value }))).toEqual(src.headers);
        });
        const v = validateRecords(buf, { produceVersion: 9 });
        expect(v.ok).toBe(true);
        if (v.ok) {
          expect(v.recordCount).toBe(records.length);
          expect(v.maxTimestamp).toBe(BigInt(Math.max(...records.map((r) => Number(r.timestamp)))));
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe('records – property: garbage never throws anything but KafkaError', () => {
  it('random bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (a) => decodeEverything(Buffer.from(a))),
      { numRuns: 1000 },
    );
  });

  it('random bytes behind a plausible header', () => {
    const valid = encodeRecordBatch({ records: [{ key: 'k', value: 'v' }] });
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), fc.integer({ min: -2, max: 5 }), compression, (tail, count, comp) => {
        const buf = Buffer.concat([valid.subarray(0, 61), Buffer.from(tail)]);
        buf.writeInt32BE(buf.length - 12, 8);
        buf.writeInt16BE(comp, 21);
        buf.writeInt32BE(count - 1, 23);
        buf.writeInt32BE(count, 57);
        rewriteCrc(buf, 0, buf.length);
        decodeEverything(buf);
      }),
      { numRuns: 1000 },
    );
  });

  it('mutated and truncated valid batches', () => {
    fc.assert(
      fc.property(
        fc.array(record, { minLength: 1, maxLength: 5 }),
        compression,
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), { minLength: 1, maxLength: 4 }),
        fc.nat(),
        fc.boolean(),
        (records, comp, flips, cut, fixCrc) => {
          const buf = encodeRecordBatch({ records, compression: comp });
          const crcBefore = buf.readUInt32BE(17);
          for (const [pos, x] of flips) buf[pos % buf.length]! ^= x;
          if (fixCrc && buf.readInt32BE(8) === buf.length - 12) rewriteCrc(buf, 0, buf.length);
          decodeEverything(buf);
          decodeEverything(buf.subarray(0, cut % (buf.length + 1)));
          void crcBefore;
        },
      ),
      { numRuns: 500 },
    );
  });

  it('a single flipped byte in the CRC range is always detected', () => {
    fc.assert(
      fc.property(fc.array(record, { minLength: 1, maxLength: 5 }), compression, fc.nat(), fc.integer({ min: 1, max: 255 }), (records, comp, p, x) => {
        const buf = encodeRecordBatch({ records, compression: comp });
        const pos = 21 + (p % (buf.length - 21));
        buf[pos]! ^= x;
        const r = validateRecords(buf);
        expect(r.ok).toBe(false);
        if (!r.ok) expect(r.errorCode).toBe(2);
      }),
      { numRuns: 300 },
    );
  });
});
