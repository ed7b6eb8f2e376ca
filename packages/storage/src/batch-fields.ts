/**
 * Producer fields of a magic v2 batch header, read in place (no record decoding, no allocation for
 * batches without a producer id).
 */
import {
  ATTRIBUTES_OFFSET,
  BASE_OFFSET_OFFSET,
  ControlRecordType,
  BASE_SEQUENCE_OFFSET,
  BATCH_LENGTH_OFFSET,
  CONTROL_FLAG_MASK,
  LAST_OFFSET_DELTA_OFFSET,
  LOG_OVERHEAD,
  MAX_TIMESTAMP_OFFSET,
  PRODUCER_EPOCH_OFFSET,
  PRODUCER_ID_OFFSET,
  RecordBatch,
  TRANSACTIONAL_FLAG_MASK,
  incrementSequence,
  readControlRecordType,
  readEndTxnMarker,
  type EndTxnMarker,
} from '@samsa/protocol';

export const NO_PRODUCER_EPOCH = -1;
export const NO_SEQUENCE = -1;
export const INT32_MAX = 0x7fffffff;

const TWO_32 = 4294967296;

/** Size of the batch at `pos` (batchLength + 12). */
export function batchSizeAt(buf: Buffer, pos: number): number {
  return buf.readInt32BE(pos + BATCH_LENGTH_OFFSET) + LOG_OVERHEAD;
}

/**
 * True when the batch at `pos` carries a producer id (>= 0) and is a data batch: the batches
 * producer state tracks. A negative int64 has a negative high word, so one int32 read decides.
 */
export function isIdempotentDataBatch(buf: Buffer, pos: number): boolean {
  return buf.readInt32BE(pos + PRODUCER_ID_OFFSET) >= 0 && (buf.readInt16BE(pos + ATTRIBUTES_OFFSET) & CONTROL_FLAG_MASK) === 0;
}

/** True when the batch at `pos` carries a producer id (>= 0): data or control (transaction marker). */
export function hasProducerId(buf: Buffer, pos: number): boolean {
  return buf.readInt32BE(pos + PRODUCER_ID_OFFSET) >= 0;
}

/** The producer fields of one batch (only built for idempotent batches). */
export interface ProducerBatch {
  producerId: bigint;
  producerEpoch: number;
  firstSeq: number;
  /** Kafka's RecordBatch.lastSequence: baseSequence + lastOffsetDelta, wrapping past Int32.MAX to 0. */
  lastSeq: number;
  firstOffset: bigint;
  lastOffset: bigint;
  /** The header's maxTimestamp (the append time under LogAppendTime). */
  maxTimestamp: number;
  isTransactional: boolean;
  /** A control batch: a transaction marker (COMMIT / ABORT) for transactional producers. */
  isControl: boolean;
}

export function readProducerBatch(buf: Buffer, pos: number): ProducerBatch {
  const firstSeq = buf.readInt32BE(pos + BASE_SEQUENCE_OFFSET);
  const lastOffsetDelta = buf.readInt32BE(pos + LAST_OFFSET_DELTA_OFFSET);
  const firstOffset = buf.readBigInt64BE(pos + BASE_OFFSET_OFFSET);
  const attributes = buf.readInt16BE(pos + ATTRIBUTES_OFFSET);
  return {
    producerId: buf.readBigInt64BE(pos + PRODUCER_ID_OFFSET),
    producerEpoch: buf.readInt16BE(pos + PRODUCER_EPOCH_OFFSET),
    firstSeq,
    lastSeq: firstSeq === NO_SEQUENCE ? NO_SEQUENCE : incrementSequence(firstSeq, lastOffsetDelta),
    firstOffset,
    lastOffset: firstOffset + BigInt(lastOffsetDelta),
    maxTimestamp: buf.readInt32BE(pos + MAX_TIMESTAMP_OFFSET) * TWO_32 + buf.readUInt32BE(pos + MAX_TIMESTAMP_OFFSET + 4),
    isTransactional: (attributes & TRANSACTIONAL_FLAG_MASK) !== 0,
    isControl: (attributes & CONTROL_FLAG_MASK) !== 0,
  };
}

/**
 * The end-transaction marker of the control batch at `pos` (its first record, as Kafka reads it),
 * with the record's timestamp; null for an empty control batch (its transaction was cleaned away)
 * or a control record that is not a COMMIT / ABORT marker. `buf` must hold the whole batch.
 * Throws KafkaError INVALID_RECORD for a malformed marker.
 */
export function readMarkerAt(buf: Buffer, pos: number): (EndTxnMarker & { timestamp: number }) | null {
  const batch = RecordBatch.at(buf, pos);
  const first = batch.records().next();
  if (first.done) return null;
  const r = first.value;
  const type = readControlRecordType(r.key);
  if (type !== ControlRecordType.ABORT && type !== ControlRecordType.COMMIT) return null;
  return { ...readEndTxnMarker(r.key, r.value), timestamp: Number(r.timestamp) };
}

/** Kafka's DefaultRecordBatch.decrementSequence. */
export function decrementSequence(sequence: number, decrement: number): number {
  if (sequence < decrement) return INT32_MAX - (decrement - sequence) + 1;
  return sequence - decrement;
}

/** `next` directly follows `last` (Int32.MAX wraps to 0). */
export function inSequence(last: number, next: number): boolean {
  return next === last + 1 || (next === 0 && last === INT32_MAX);
}
