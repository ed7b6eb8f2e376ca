import { describe, expect, it } from 'vitest';
import {
  CompressionType,
  compress,
  TimestampType,
  encodeEndTxnMarkerBatch,
  encodeRecordBatch,
  readEndTxnMarker,
  RecordBatch,
  rewriteCrc,
  validateRecords,
  type RecordBatchInput,
  type RecordsValidationFailure,
  type RecordsValidationOk,
} from './index.js';

const NOW = 1_700_000_000_000;

function batch(over: Partial<RecordBatchInput> = {}): Buffer {
  return encodeRecordBatch({
    records: [
      { key: 'a', value: 'one', timestamp: NOW - 10 },
      { key: 'b', value: 'two', timestamp: NOW - 5 },
      { key: 'c', value: 'three', timestamp: NOW - 7 },
    ],
    ...over,
  });
}

function ok(r: ReturnType<typeof validateRecords>): RecordsValidationOk {
  if (!r.ok) throw new Error(`expected ok, got ${r.errorCode}: ${r.message}`);
  return r;
}

function failed(r: ReturnType<typeof validateRecords>): RecordsValidationFailure {
  if (r.ok) throw new Error('expected a failure');
  return r;
}

/** Patch a header field and fix the CRC so only the intended check fires. */
function patch(buf: Buffer, fn: (b: Buffer) => void, fixCrc = true): Buffer {
  const copy = Buffer.from(buf);
  fn(copy);
  if (fixCrc) rewriteCrc(copy, 0, copy.length);
  return copy;
}

describe('records – validation: accepted batches', () => {
  for (const compression of [0, 1, 2, 3, 4] as CompressionType[]) {
    it(`summarises a valid ${compression} batch`, () => {
      const r = ok(validateRecords(batch({ compression }), { produceVersion: 9, now: NOW }));
      expect(r.batches).toHaveLength(1);
      const b = r.batches[0]!;
      expect(b).toMatchObject({
        position: 0,
        compression,
        recordCount: 3,
        firstOffsetDelta: 0,
        lastOffsetDelta: 2,
        baseTimestamp: BigInt(NOW - 10),
        maxTimestamp: BigInt(NOW - 5),
        recordsMaxTimestamp: BigInt(NOW - 5),
        offsetDeltaOfMaxTimestamp: 1,
        producerId: -1n,
        producerEpoch: -1,
        baseSequence: -1,
        lastSequence: -1,
        hasProducerId: false,
        isTransactional: false,
        isControl: false,
        recordsWalked: true,
      });
      expect(r.recordCount).toBe(3);
      expect(r.maxTimestamp).toBe(BigInt(NOW - 5));
      expect(r.maxTimestampRecordIndex).toBe(1);
      expect(r.validBytes).toBe(b.sizeInBytes);
    });
  }

  it('skips decompression when nothing needs the records', () => {
    const buf = batch({ compression: CompressionType.GZIP });
    // Break the compressed payload but keep the CRC valid: only a deep walk notices.
    const broken = patch(buf, (b) => b.fill(0x55, 70, 80));
    expect(failed(validateRecords(broken, { now: NOW })).errorCode).toBe(2);
    const r = ok(validateRecords(broken, { now: NOW, deepCompressed: false }));
    expect(r.batches[0]!.recordsWalked).toBe(false);
    expect(r.batches[0]!.recordsMaxTimestamp).toBeNull();
    expect(r.maxTimestamp).toBe(BigInt(NOW - 5));
    // ...but timestamp bounds force the walk.
    expect(failed(validateRecords(broken, { now: NOW, deepCompressed: false, timestampBeforeMaxMs: 1000 })).errorCode).toBe(2);
  });

  it('accepts idempotent and transactional producer fields', () => {
    const r = ok(
      validateRecords(batch({ producerId: 77n, producerEpoch: 2, baseSequence: 2147483646, transactional: true }), {
        now: NOW,
      }),
    );
    expect(r.batches[0]).toMatchObject({
      producerId: 77n,
      producerEpoch: 2,
      baseSequence: 2147483646,
      lastSequence: 0, // wraps past Int32.MAX
      hasProducerId: true,
      isTransactional: true,
    });
  });

  it("accepts KafkaJS's non-idempotent defaults (producerId -1, epoch 0, sequence 0)", () => {
    ok(validateRecords(batch({ producerId: -1n, producerEpoch: 0, baseSequence: 0, partitionLeaderEpoch: 0 }), { now: NOW }));
  });

  it('accepts control batches from the coordinator, several batches only from replication', () => {
    const marker = encodeEndTxnMarkerBatch({ producerId: 9n, producerEpoch: 1, commit: true, coordinatorEpoch: 4, timestamp: NOW });
    const c = ok(validateRecords(marker, { origin: 'coordinator', now: NOW }));
    expect(c.batches[0]!.isControl).toBe(true);
    const rec = new RecordBatch(marker).toArray()[0]!;
    expect(readEndTxnMarker(rec.key, rec.value)).toEqual({ commit: true, coordinatorEpoch: 4 });

    const two = Buffer.concat([batch(), patch(marker, (b) => b.writeBigInt64BE(3n, 0), false)]);
    expect(failed(validateRecords(two, { origin: 'coordinator' })).message).toMatch(/more than one batch/);
    const r = ok(validateRecords(two, { origin: 'replication', now: NOW }));
    expect(r.batches.map((b) => b.isControl)).toEqual([false, true]);
    expect(r.recordCount).toBe(4);
  });

  it('replication appends skip LogValidator: timestamps and keys are not checked', () => {
    const buf = encodeRecordBatch({ records: [{ key: null, value: 'v', timestamp: 5 }] });
    ok(validateRecords(buf, { origin: 'replication', now: NOW, timestampBeforeMaxMs: 1, compactedTopic: true }));
    expect(failed(validateRecords(buf, { origin: 'client', now: NOW, timestampBeforeMaxMs: 1, compactedTopic: true })).errorCode).toBe(87);
  });
});

describe('records – validation: rejected batches', () => {
  it('CRC mismatch → CORRUPT_MESSAGE', () => {
    const bad = patch(batch(), (b) => (b[b.length - 2]! ^= 0xff), false);
    const r = failed(validateRecords(bad, { now: NOW }));
    expect(r.errorCode).toBe(2);
    expect(r.message).toMatch(/crc/);
    expect(r.batchIndex).toBe(0);
  });

  it('magic: legacy → UNSUPPORTED_FOR_MESSAGE_FORMAT (or INVALID_RECORD for produce v3+), unknown → CORRUPT_MESSAGE', () => {
    const legacy = patch(batch(), (b) => (b[16] = 1), false);
    expect(failed(validateRecords(legacy)).errorCode).toBe(43);
    expect(failed(validateRecords(legacy, { produceVersion: 2 })).errorCode).toBe(43);
    expect(failed(validateRecords(legacy, { produceVersion: 3 })).errorCode).toBe(87);
    const future = patch(batch(), (b) => (b[16] = 3), false);
    expect(failed(validateRecords(future)).errorCode).toBe(2);
  });

  it('batchLength inconsistent with the buffer → CORRUPT_MESSAGE', () => {
    const buf = batch();
    expect(failed(validateRecords(buf.subarray(0, buf.length - 1))).errorCode).toBe(2);
    expect(failed(validateRecords(patch(buf, (b) => b.writeInt32BE(3, 8), false))).errorCode).toBe(2);
    const r = ok(validateRecords(Buffer.concat([buf, buf.subarray(0, 20)]), { allowTrailingBytes: true, now: NOW }));
    expect(r.partial).toEqual({ position: buf.length, available: 20, declared: buf.length });
  });

  it('no complete batch or several batches in produce v3+ → INVALID_RECORD', () => {
    expect(failed(validateRecords(Buffer.alloc(0), { produceVersion: 3 })).errorCode).toBe(87);
    expect(failed(validateRecords(Buffer.alloc(0))).errorCode).toBe(87);
    expect(failed(validateRecords(Buffer.concat([batch(), batch()]), { produceVersion: 8 })).errorCode).toBe(87);
  });

  it('zstd before produce v7 → UNSUPPORTED_COMPRESSION_TYPE; unknown codec → CORRUPT_MESSAGE', () => {
    expect(failed(validateRecords(batch({ compression: CompressionType.ZSTD }), { produceVersion: 6 })).errorCode).toBe(76);
    ok(validateRecords(batch({ compression: CompressionType.ZSTD }), { produceVersion: 7, now: NOW }));
    const unknown = patch(batch(), (b) => b.writeInt16BE(6, 21));
    expect(failed(validateRecords(unknown)).errorCode).toBe(2);
  });

  it('size limits → MESSAGE_TOO_LARGE / RECORD_LIST_TOO_LARGE', () => {
    const buf = batch();
    expect(failed(validateRecords(buf, { maxMessageBytes: buf.length - 1 })).errorCode).toBe(10);
    ok(validateRecords(buf, { maxMessageBytes: buf.length, now: NOW }));
    expect(failed(validateRecords(buf, { segmentBytes: buf.length - 1, now: NOW })).errorCode).toBe(18);
    const moved = patch(buf, (b) => b.writeBigInt64BE(3n, 0), false);
    const two = Buffer.concat([buf, moved]);
    expect(failed(validateRecords(two, { origin: 'replication', segmentBytes: buf.length + 5 })).errorCode).toBe(18);
  });

  it('client batches need baseOffset 0', () => {
    const moved = patch(batch(), (b) => b.writeBigInt64BE(5n, 0), false);
    expect(failed(validateRecords(moved)).errorCode).toBe(87);
    ok(validateRecords(moved, { origin: 'replication', now: NOW }));
  });

  it('recordCount vs lastOffsetDelta → INVALID_RECORD', () => {
    expect(failed(validateRecords(patch(batch(), (b) => b.writeInt32BE(5, 23)))).message).toMatch(/Inconsistent/);
    expect(failed(validateRecords(patch(batch(), (b) => b.writeInt32BE(-1, 23)))).errorCode).toBe(87);
    expect(failed(validateRecords(patch(batch(), (b) => b.writeInt32BE(0, 57)))).errorCode).toBe(87);
    // count and lastOffsetDelta agree but the payload holds fewer / more records
    const fewer = patch(batch(), (b) => {
      b.writeInt32BE(3, 23);
      b.writeInt32BE(4, 57);
    });
    expect(failed(validateRecords(fewer)).message).toMatch(/payload ends/);
    const more = patch(batch(), (b) => {
      b.writeInt32BE(1, 23);
      b.writeInt32BE(2, 57);
    });
    expect(failed(validateRecords(more)).message).toMatch(/remaining/);
  });

  it('unparseable records (also after decompression) → INVALID_RECORD', () => {
    const garbage = [
      Buffer.from([0x7e, 0x00]), // a record claiming 63 bytes
      Buffer.from([0x0e, 0x00, 0x00, 0x00, 0x01, 0x01, 0x01, 0x00]), // key length -1, then value claims more than remains
      Buffer.from([0x10, 0x00, 0x00, 0x00, 0x01, 0x01, 0x01, 0x01, 0x00]), // header count -1
    ];
    for (const compression of [0, 1, 2, 3, 4] as CompressionType[]) {
      for (const g of garbage) {
        const r = failed(validateRecords(encodeWithPayload(compression, g)));
        expect(r.errorCode).toBe(87);
      }
    }
  });

  it('non-sequential offset deltas → INVALID_RECORD unless allowed', () => {
    const buf = encodeRecordBatch({
      records: [
        { value: 'a', offsetDelta: 0 },
        { value: 'b', offsetDelta: 2 },
      ],
      lastOffsetDelta: 1,
    });
    expect(failed(validateRecords(buf)).errorCode).toBe(87);
    ok(validateRecords(buf, { requireSequentialOffsetDeltas: false }));
  });

  it('control batches from clients → INVALID_RECORD', () => {
    const marker = encodeEndTxnMarkerBatch({ producerId: 9n, producerEpoch: 1, commit: false, coordinatorEpoch: 0 });
    expect(failed(validateRecords(marker)).message).toMatch(/control/);
  });

  it('producer id with a negative sequence, or transactional without producer id → INVALID_RECORD', () => {
    expect(failed(validateRecords(batch({ producerId: 5n, producerEpoch: 0, baseSequence: -1 }))).errorCode).toBe(87);
    expect(failed(validateRecords(batch({ transactional: true }))).errorCode).toBe(87);
  });

  it('CreateTime out of bounds → INVALID_TIMESTAMP with per-record errors', () => {
    const r = failed(validateRecords(batch(), { now: NOW, timestampBeforeMaxMs: 6, timestampAfterMaxMs: 0 }));
    expect(r.errorCode).toBe(32);
    expect(r.recordErrors.map((e) => e.batchIndex)).toEqual([0, 2]);
    expect(r.recordErrors[0]!.message).toMatch(/out of range/);
    const future = failed(validateRecords(batch(), { now: NOW - 100, timestampAfterMaxMs: 50 }));
    expect(future.errorCode).toBe(32);
    expect(future.recordErrors).toHaveLength(3);
    ok(validateRecords(batch(), { now: NOW, timestampBeforeMaxMs: 10, timestampAfterMaxMs: 0 }));
  });

  it('LogAppendTime batch into a LogAppendTime topic from a client → INVALID_TIMESTAMP', () => {
    const lat = batch({ timestampType: TimestampType.LOG_APPEND_TIME });
    expect(failed(validateRecords(lat, { timestampType: TimestampType.LOG_APPEND_TIME })).errorCode).toBe(32);
    ok(validateRecords(batch(), { timestampType: TimestampType.LOG_APPEND_TIME }));
  });

  it("a key error hides the same record's timestamp error; any timestamp error makes the batch INVALID_TIMESTAMP", () => {
    const buf = encodeRecordBatch({
      records: [
        { key: null, value: 'a', timestamp: 1 },
        { key: 'k', value: 'b', timestamp: NOW },
      ],
    });
    const keyOnly = failed(validateRecords(buf, { now: NOW, timestampBeforeMaxMs: 1000, compactedTopic: true }));
    expect(keyOnly.errorCode).toBe(87);
    expect(keyOnly.recordErrors).toHaveLength(1);
    const both = encodeRecordBatch({
      records: [
        { key: null, value: 'a', timestamp: NOW },
        { key: 'k', value: 'b', timestamp: 1 },
      ],
    });
    const r = failed(validateRecords(both, { now: NOW, timestampBeforeMaxMs: 1000, compactedTopic: true }));
    expect(r.errorCode).toBe(32);
    expect(r.recordErrors.map((e) => e.batchIndex)).toEqual([0, 1]);
  });

  it('compacted topics need keys → INVALID_RECORD', () => {
    const buf = encodeRecordBatch({
      records: [
        { key: 'k', value: 'v' },
        { key: null, value: 'v' },
      ],
      compression: CompressionType.SNAPPY,
    });
    const r = failed(validateRecords(buf, { compactedTopic: true }));
    expect(r.errorCode).toBe(87);
    expect(r.recordErrors).toEqual([{ batchIndex: 1, message: expect.stringMatching(/without key/) }]);
  });
});

/** A batch whose (compressed) payload is exactly `records`, with a record count of 1. */
function encodeWithPayload(compression: CompressionType, records: Buffer): Buffer {
  const good = encodeRecordBatch({ records: [{ value: 'x' }], compression });
  const header = Buffer.from(good.subarray(0, 61));
  const payload = compress(compression, records);
  const out = Buffer.concat([header, payload]);
  out.writeInt32BE(out.length - 12, 8);
  rewriteCrc(out, 0, out.length);
  return out;
}
