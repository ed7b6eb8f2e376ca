/**
 * Magic v2 record batch header access for the log layer, working on header fields only (no record
 * decoding, no per-record allocation):
 *
 *   baseOffset int64 @0 | batchLength int32 @8 | partitionLeaderEpoch int32 @12 | magic int8 @16 |
 *   crc uint32 @17 (CRC-32C over bytes 21..end) | attributes int16 @21 | lastOffsetDelta int32 @23 |
 *   baseTimestamp int64 @27 | maxTimestamp int64 @35 | producerId int64 @43 | producerEpoch int16 @51 |
 *   baseSequence int32 @53 | recordCount int32 @57 | records @61
 *
 * `@samsa/protocol` has a richer implementation (RecordBatch, validateRecords) that is not exported
 * from the package yet; this file only holds what the storage layer needs.
 */
import { crc32c } from '@node-rs/crc32';
import { CorruptRecordError, RecordTooLargeError } from './errors.js';

export const BASE_OFFSET_OFFSET = 0;
export const BATCH_LENGTH_OFFSET = 8;
export const PARTITION_LEADER_EPOCH_OFFSET = 12;
export const MAGIC_OFFSET = 16;
export const CRC_OFFSET = 17;
export const ATTRIBUTES_OFFSET = 21;
export const LAST_OFFSET_DELTA_OFFSET = 23;
export const BASE_TIMESTAMP_OFFSET = 27;
export const MAX_TIMESTAMP_OFFSET = 35;
export const RECORDS_COUNT_OFFSET = 57;
export const RECORDS_OFFSET = 61;
/** Size of the v2 header, also the smallest v2 batch. */
export const RECORD_BATCH_OVERHEAD = 61;
/** baseOffset + batchLength (not counted in batchLength). */
export const LOG_OVERHEAD = 12;
export const MAGIC_V2 = 2;
export const COMPRESSION_CODEC_MASK = 0x07;
export const TIMESTAMP_TYPE_MASK = 0x08;
export const NO_TIMESTAMP = -1;

const TWO_32 = 4294967296;

/** An int64 read as a JS number (exact for |v| < 2^53; timestamps always are). */
export function readInt64AsNumber(buf: Buffer, offset: number): number {
  return buf.readInt32BE(offset) * TWO_32 + buf.readUInt32BE(offset + 4);
}

export function writeInt64FromNumber(buf: Buffer, value: number, offset: number): void {
  const hi = Math.floor(value / TWO_32);
  buf.writeInt32BE(hi, offset);
  buf.writeUInt32BE(value - hi * TWO_32, offset + 4);
}

/** CRC-32C of the batch occupying buf[pos, pos + size), as Kafka computes it (attributes..end). */
export function computeBatchCrc(buf: Buffer, pos: number, size: number): number {
  return crc32c(buf.subarray(pos + ATTRIBUTES_OFFSET, pos + size)) >>> 0;
}

export function isBatchCrcValid(buf: Buffer, pos: number, size: number): boolean {
  return computeBatchCrc(buf, pos, size) === buf.readUInt32BE(pos + CRC_OFFSET);
}

/** Header-level facts about a records buffer about to be appended. */
export interface RecordsSummary {
  batchCount: number;
  sizeInBytes: number;
  recordCount: number;
  /** As found in the buffer (the leader overwrites them). */
  firstOffset: bigint;
  lastOffset: bigint;
  /** Largest maxTimestamp of the batches (-1 if none carries one). */
  maxTimestamp: number;
  /** Last offset of the batch holding maxTimestamp (as found in the buffer). */
  offsetOfMaxTimestamp: bigint;
  /** Batches strictly increasing in offset, each lastOffset >= baseOffset (as found in the buffer). */
  offsetsMonotonic: boolean;
  /** Largest single batch. */
  maxBatchSize: number;
}

export interface AnalyzeOptions {
  maxMessageBytes: number;
  /** Verify each batch CRC (CORRUPT_MESSAGE when wrong). */
  verifyCrc: boolean;
}

/**
 * Checks the framing of a records buffer (complete v2 batches, consistent lengths, sizes within
 * max.message.bytes, optionally CRCs) and summarises it. Throws CorruptRecordError / RecordTooLargeError.
 */
export function analyzeRecords(records: Buffer, opts: AnalyzeOptions): RecordsSummary {
  const s: RecordsSummary = {
    batchCount: 0,
    sizeInBytes: records.length,
    recordCount: 0,
    firstOffset: -1n,
    lastOffset: -1n,
    maxTimestamp: NO_TIMESTAMP,
    offsetOfMaxTimestamp: -1n,
    offsetsMonotonic: true,
    maxBatchSize: 0,
  };
  let pos = 0;
  const end = records.length;
  while (pos < end) {
    if (end - pos < RECORD_BATCH_OVERHEAD) {
      throw new CorruptRecordError(`Incomplete record batch at position ${pos}: ${end - pos} bytes left, header needs ${RECORD_BATCH_OVERHEAD}`);
    }
    const magic = records.readInt8(pos + MAGIC_OFFSET);
    if (magic !== MAGIC_V2) throw new CorruptRecordError(`Unsupported record batch magic ${magic} at position ${pos} (only v2 is supported)`);
    const size = records.readInt32BE(pos + BATCH_LENGTH_OFFSET) + LOG_OVERHEAD;
    if (size < RECORD_BATCH_OVERHEAD) throw new CorruptRecordError(`Record batch at position ${pos} declares ${size} bytes, less than the ${RECORD_BATCH_OVERHEAD}-byte header`);
    if (size > end - pos) throw new CorruptRecordError(`Record batch at position ${pos} declares ${size} bytes, only ${end - pos} present`);
    if (size > opts.maxMessageBytes) {
      throw new RecordTooLargeError(`Record batch of ${size} bytes at position ${pos} exceeds max.message.bytes (${opts.maxMessageBytes})`);
    }
    const lastOffsetDelta = records.readInt32BE(pos + LAST_OFFSET_DELTA_OFFSET);
    if (lastOffsetDelta < 0) throw new CorruptRecordError(`Record batch at position ${pos} has negative lastOffsetDelta ${lastOffsetDelta}`);
    const count = records.readInt32BE(pos + RECORDS_COUNT_OFFSET);
    if (count < 0) throw new CorruptRecordError(`Record batch at position ${pos} has negative record count ${count}`);
    if (opts.verifyCrc && !isBatchCrcValid(records, pos, size)) {
      throw new CorruptRecordError(
        `Record batch at position ${pos} is corrupt (stored crc = ${records.readUInt32BE(pos + CRC_OFFSET)}, computed crc = ${computeBatchCrc(records, pos, size)})`,
      );
    }
    const base = records.readBigInt64BE(pos + BASE_OFFSET_OFFSET);
    const last = base + BigInt(lastOffsetDelta);
    if (s.batchCount === 0) s.firstOffset = base;
    else if (base <= s.lastOffset) s.offsetsMonotonic = false;
    s.lastOffset = last;
    const maxTs = readInt64AsNumber(records, pos + MAX_TIMESTAMP_OFFSET);
    if (maxTs > s.maxTimestamp) {
      s.maxTimestamp = maxTs;
      s.offsetOfMaxTimestamp = last;
    }
    s.recordCount += count;
    s.batchCount++;
    if (size > s.maxBatchSize) s.maxBatchSize = size;
    pos += size;
  }
  return s;
}

export interface AssignedOffsets {
  lastOffset: bigint;
  maxTimestamp: number;
  /** Last offset of the (first) batch holding maxTimestamp. */
  offsetOfMaxTimestamp: bigint;
}

/**
 * The leader's in-place rewrite of framed batches: consecutive offsets from `firstOffset` and the
 * partition leader epoch (both outside the CRC). With `logAppendTime` >= 0 the timestamp-type bit
 * and maxTimestamp are set too and the CRC is recomputed.
 */
export function assignOffsetsInPlace(records: Buffer, firstOffset: bigint, leaderEpoch: number, logAppendTime: number): AssignedOffsets {
  let next = firstOffset;
  let maxTimestamp = NO_TIMESTAMP;
  let offsetOfMaxTimestamp = firstOffset;
  for (let pos = 0; pos < records.length; ) {
    const size = records.readInt32BE(pos + BATCH_LENGTH_OFFSET) + LOG_OVERHEAD;
    records.writeBigInt64BE(next, pos + BASE_OFFSET_OFFSET);
    records.writeInt32BE(leaderEpoch, pos + PARTITION_LEADER_EPOCH_OFFSET);
    if (logAppendTime >= 0) {
      records.writeInt16BE(records.readInt16BE(pos + ATTRIBUTES_OFFSET) | TIMESTAMP_TYPE_MASK, pos + ATTRIBUTES_OFFSET);
      writeInt64FromNumber(records, logAppendTime, pos + MAX_TIMESTAMP_OFFSET);
      records.writeUInt32BE(computeBatchCrc(records, pos, size), pos + CRC_OFFSET);
    }
    const last = next + BigInt(records.readInt32BE(pos + LAST_OFFSET_DELTA_OFFSET));
    const ts = readInt64AsNumber(records, pos + MAX_TIMESTAMP_OFFSET);
    if (ts > maxTimestamp) {
      maxTimestamp = ts;
      offsetOfMaxTimestamp = last;
    }
    next = last + 1n;
    pos += size;
  }
  return { lastOffset: next - 1n, maxTimestamp, offsetOfMaxTimestamp };
}

// ---------------------------------------------------------------------------------------------
// Record-level timestamp search (ListOffsets by time). Only here do we look inside a batch.

/** Decompresses a batch payload; the broker wires `@samsa/protocol`'s decompress in. */
export type Decompressor = (codec: number, payload: Buffer) => Buffer;

class VarCursor {
  pos: number;
  constructor(
    readonly buf: Buffer,
    pos: number,
    readonly end: number,
  ) {
    this.pos = pos;
  }
  /** Zig-zag varint/varlong as a JS number (exact below 2^53). */
  readVarlong(): number {
    let result = 0;
    let mul = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new CorruptRecordError('Truncated varint in record');
      const b = this.buf[this.pos++] as number;
      result += (b & 0x7f) * mul;
      if ((b & 0x80) === 0) return result % 2 === 0 ? result / 2 : -(result + 1) / 2;
      mul *= 128;
    }
    throw new CorruptRecordError('Varint too long in record');
  }
}

export interface TimestampAndOffset {
  timestamp: number;
  offset: bigint;
}

/**
 * First record of the complete batch `batch` (a buffer holding exactly the batch) whose timestamp
 * is >= `target` and offset >= `minOffset`. For a compressed batch without a decompressor, answers
 * at batch granularity (the batch's maxTimestamp and max(baseOffset, minOffset)).
 */
export function searchBatchForTimestamp(
  batch: Buffer,
  target: number,
  minOffset: bigint,
  decompress?: Decompressor,
): TimestampAndOffset | null {
  const baseOffset = batch.readBigInt64BE(BASE_OFFSET_OFFSET);
  const attributes = batch.readInt16BE(ATTRIBUTES_OFFSET);
  const maxTimestamp = readInt64AsNumber(batch, MAX_TIMESTAMP_OFFSET);
  const lastOffset = baseOffset + BigInt(batch.readInt32BE(LAST_OFFSET_DELTA_OFFSET));
  if (maxTimestamp < target || lastOffset < minOffset) return null;
  if (attributes & TIMESTAMP_TYPE_MASK) {
    // LogAppendTime: every record carries the batch's maxTimestamp.
    return { timestamp: maxTimestamp, offset: baseOffset > minOffset ? baseOffset : minOffset };
  }
  const codec = attributes & COMPRESSION_CODEC_MASK;
  let payload = batch.subarray(RECORDS_OFFSET);
  if (codec !== 0) {
    if (!decompress) return { timestamp: maxTimestamp, offset: baseOffset > minOffset ? baseOffset : minOffset };
    payload = decompress(codec, payload);
  }
  const baseTimestamp = readInt64AsNumber(batch, BASE_TIMESTAMP_OFFSET);
  const count = batch.readInt32BE(RECORDS_COUNT_OFFSET);
  const c = new VarCursor(payload, 0, payload.length);
  for (let i = 0; i < count; i++) {
    const length = c.readVarlong();
    const recordEnd = c.pos + length;
    if (length < 0 || recordEnd > payload.length) throw new CorruptRecordError(`Record ${i} of batch at offset ${baseOffset} has invalid length ${length}`);
    c.pos += 1; // attributes
    const ts = baseTimestamp + c.readVarlong();
    const offset = baseOffset + BigInt(c.readVarlong());
    if (ts >= target && offset >= minOffset) return { timestamp: ts, offset };
    c.pos = recordEnd;
  }
  return null;
}
