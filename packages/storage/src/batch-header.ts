/**
 * Magic v2 record batch header access for the log layer, working on header fields only (no record
 * decoding, no per-record allocation). Field offsets, CRC and record decoding come from
 * `@samsa/protocol`; this file adds what storage needs on top: framing checks with a header
 * summary, the leader's in-place offset assignment, and int64 timestamps as numbers.
 *
 *   baseOffset int64 @0 | batchLength int32 @8 | partitionLeaderEpoch int32 @12 | magic int8 @16 |
 *   crc uint32 @17 (CRC-32C over bytes 21..end) | attributes int16 @21 | lastOffsetDelta int32 @23 |
 *   baseTimestamp int64 @27 | maxTimestamp int64 @35 | producerId int64 @43 | producerEpoch int16 @51 |
 *   baseSequence int32 @53 | recordCount int32 @57 | records @61
 */
import {
  ATTRIBUTES_OFFSET,
  BASE_OFFSET_OFFSET,
  BATCH_LENGTH_OFFSET,
  CRC_OFFSET,
  CURRENT_MAGIC,
  LAST_OFFSET_DELTA_OFFSET,
  LOG_OVERHEAD,
  MAGIC_OFFSET,
  MAX_TIMESTAMP_OFFSET,
  PARTITION_LEADER_EPOCH_OFFSET,
  RECORD_BATCH_OVERHEAD,
  RECORDS_COUNT_OFFSET,
  RecordBatch,
  TIMESTAMP_TYPE_MASK,
  computeBatchCrc as computeCrcOf,
} from '@samsa/protocol';
import { CorruptRecordError, RecordTooLargeError } from './errors.js';

export {
  BASE_OFFSET_OFFSET,
  BATCH_LENGTH_OFFSET,
  LAST_OFFSET_DELTA_OFFSET,
  LOG_OVERHEAD,
  MAGIC_OFFSET,
  MAX_TIMESTAMP_OFFSET,
  PARTITION_LEADER_EPOCH_OFFSET,
  RECORD_BATCH_OVERHEAD,
};

export const MAGIC_V2 = CURRENT_MAGIC;
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
  return computeCrcOf(buf.subarray(pos, pos + size));
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
 * Bytes of the complete batches at the start of `records`: a fetch response may end in a partial
 * batch (a read is cut at the fetch's byte limit, as in Kafka), which readers leave out.
 */
export function completeBatchesLength(records: Buffer): number {
  let pos = 0;
  while (records.length - pos >= LOG_OVERHEAD) {
    const size = records.readInt32BE(pos + BATCH_LENGTH_OFFSET) + LOG_OVERHEAD;
    if (size < LOG_OVERHEAD || size > records.length - pos) break;
    pos += size;
  }
  return pos;
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
    if (magic !== CURRENT_MAGIC) throw new CorruptRecordError(`Unsupported record batch magic ${magic} at position ${pos} (only v2 is supported)`);
    const size = records.readInt32BE(pos + BATCH_LENGTH_OFFSET) + LOG_OVERHEAD;
    if (size < RECORD_BATCH_OVERHEAD)
      throw new CorruptRecordError(`Record batch at position ${pos} declares ${size} bytes, less than the ${RECORD_BATCH_OVERHEAD}-byte header`);
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
  for (let pos = 0; pos < records.length;) {
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

export interface TimestampAndOffset {
  timestamp: number;
  offset: bigint;
}

/**
 * First record of the complete batch `batch` (a buffer holding exactly the batch) whose timestamp
 * is >= `target` and offset >= `minOffset`. Decodes (and decompresses) the records with
 * `@samsa/protocol`'s RecordBatch: ListOffsets by time is the one place the log looks inside batches.
 */
export function searchBatchForTimestamp(batch: Buffer, target: number, minOffset: bigint): TimestampAndOffset | null {
  const maxTimestamp = readInt64AsNumber(batch, MAX_TIMESTAMP_OFFSET);
  const lastOffset = batch.readBigInt64BE(BASE_OFFSET_OFFSET) + BigInt(batch.readInt32BE(LAST_OFFSET_DELTA_OFFSET));
  if (maxTimestamp < target || lastOffset < minOffset) return null;
  const t = BigInt(target);
  try {
    for (const r of new RecordBatch(batch).records()) {
      if (r.timestamp >= t && r.offset >= minOffset) return { timestamp: Number(r.timestamp), offset: r.offset };
    }
  } catch (err) {
    throw new CorruptRecordError(`Cannot decode the records of the batch at offset ${lastOffset}: ${(err as Error).message}`, { cause: err });
  }
  return null;
}
