/**
 * In-place rewrites of batch header fields, as the leader does on append.
 *
 * baseOffset and partitionLeaderEpoch lie before the CRC range, so rewriting them leaves the CRC
 * valid; maxTimestamp and the timestamp-type attribute lie inside it, so `setMaxTimestamp` recomputes it.
 */
import { KafkaError } from '../errors.js';
import {
  ATTRIBUTES_OFFSET,
  BASE_OFFSET_OFFSET,
  CRC_OFFSET,
  LAST_OFFSET_DELTA_OFFSET,
  MAX_TIMESTAMP_OFFSET,
  PARTITION_LEADER_EPOCH_OFFSET,
  RECORD_BATCH_OVERHEAD,
  TIMESTAMP_TYPE_MASK,
  TimestampType,
} from './constants.js';
import { computeBatchCrc } from './crc.js';
import { RecordSetIterator } from './record-set.js';

function ensureHeader(buf: Buffer, position: number): void {
  if (position < 0 || buf.length - position < RECORD_BATCH_OVERHEAD) {
    throw new KafkaError(2, `No complete record batch header at position ${position}`);
  }
}

/** Overwrites baseOffset of the batch at `position` (CRC unaffected). */
export function setBaseOffset(buf: Buffer, baseOffset: bigint, position = 0): void {
  ensureHeader(buf, position);
  buf.writeBigInt64BE(baseOffset, position + BASE_OFFSET_OFFSET);
}

/** Overwrites partitionLeaderEpoch of the batch at `position` (CRC unaffected). */
export function setPartitionLeaderEpoch(buf: Buffer, epoch: number, position = 0): void {
  ensureHeader(buf, position);
  buf.writeInt32BE(epoch, position + PARTITION_LEADER_EPOCH_OFFSET);
}

/** Recomputes and stores the CRC of the complete batch occupying `buf[position, position + size)`. */
export function rewriteCrc(buf: Buffer, position: number, size: number): void {
  const batch = buf.subarray(position, position + size);
  buf.writeUInt32BE(computeBatchCrc(batch), position + CRC_OFFSET);
}

/**
 * Sets the timestamp type bit and maxTimestamp of the complete batch at `position` (of `size` bytes)
 * and, if anything changed, recomputes the CRC. Returns whether the batch was modified.
 */
export function setMaxTimestamp(buf: Buffer, timestampType: TimestampType, maxTimestamp: bigint, position = 0, size = buf.length - position): boolean {
  ensureHeader(buf, position);
  const attrs = buf.readInt16BE(position + ATTRIBUTES_OFFSET);
  const newAttrs = timestampType === TimestampType.LOG_APPEND_TIME ? attrs | TIMESTAMP_TYPE_MASK : attrs & ~TIMESTAMP_TYPE_MASK;
  if (newAttrs === attrs && buf.readBigInt64BE(position + MAX_TIMESTAMP_OFFSET) === maxTimestamp) return false;
  buf.writeInt16BE(newAttrs, position + ATTRIBUTES_OFFSET);
  buf.writeBigInt64BE(maxTimestamp, position + MAX_TIMESTAMP_OFFSET);
  rewriteCrc(buf, position, size);
  return true;
}

/**
 * Assigns consecutive offsets to every batch in a records buffer, starting at `firstOffset`, and
 * optionally stamps the partition leader epoch. Each batch covers lastOffsetDelta + 1 offsets.
 * Returns the next offset after the last batch. CRCs stay valid.
 */
export function assignOffsets(records: Buffer, firstOffset: bigint, partitionLeaderEpoch?: number): bigint {
  let next = firstOffset;
  const it = new RecordSetIterator(records);
  for (;;) {
    const position = it.position;
    const r = it.next();
    if (r.done) break;
    records.writeBigInt64BE(next, position + BASE_OFFSET_OFFSET);
    if (partitionLeaderEpoch !== undefined) records.writeInt32BE(partitionLeaderEpoch, position + PARTITION_LEADER_EPOCH_OFFSET);
    next += BigInt(records.readInt32BE(position + LAST_OFFSET_DELTA_OFFSET)) + 1n;
  }
  return next;
}
