/**
 * Record batch (magic v2) view, header decoding, lazy record iteration and encoding.
 *
 *   baseOffset: int64 | batchLength: int32 | partitionLeaderEpoch: int32 | magic: int8 | crc: uint32 |
 *   attributes: int16 | lastOffsetDelta: int32 | baseTimestamp: int64 | maxTimestamp: int64 |
 *   producerId: int64 | producerEpoch: int16 | baseSequence: int32 | recordCount: int32 | records...
 *
 * The CRC (CRC-32C) covers attributes..end, so baseOffset, batchLength and partitionLeaderEpoch can be
 * rewritten in place without recomputing it.
 */
import { KafkaError } from '../errors.js';
import { COMPRESSION_CODEC_MASK, CompressionType, compress, decompress, type CompressOptions, type DecompressOptions } from './compression.js';
import {
  ATTRIBUTES_OFFSET,
  BASE_OFFSET_OFFSET,
  BASE_SEQUENCE_OFFSET,
  BASE_TIMESTAMP_OFFSET,
  BATCH_LENGTH_OFFSET,
  CONTROL_FLAG_MASK,
  CRC_OFFSET,
  CURRENT_MAGIC,
  DELETE_HORIZON_FLAG_MASK,
  HEADER_SIZE_UP_TO_MAGIC,
  LAST_OFFSET_DELTA_OFFSET,
  LOG_OVERHEAD,
  MAGIC_OFFSET,
  MAX_TIMESTAMP_OFFSET,
  NO_SEQUENCE,
  PARTITION_LEADER_EPOCH_OFFSET,
  PRODUCER_EPOCH_OFFSET,
  PRODUCER_ID_OFFSET,
  RECORD_BATCH_OVERHEAD,
  RECORDS_COUNT_OFFSET,
  RECORDS_OFFSET,
  TIMESTAMP_TYPE_MASK,
  TRANSACTIONAL_FLAG_MASK,
  TimestampType,
} from './constants.js';
import { computeBatchCrc } from './crc.js';
import { encodeRecords, readRecord, type KafkaRecord, type RecordContext, type RecordInput } from './record.js';
import { Cursor } from './varint.js';

const CORRUPT_MESSAGE = 2;
const INVALID_RECORD = 87;

export interface RecordBatchHeader {
  baseOffset: bigint;
  batchLength: number;
  partitionLeaderEpoch: number;
  magic: number;
  /** Unsigned 32-bit CRC as stored. */
  crc: number;
  attributes: number;
  lastOffsetDelta: number;
  baseTimestamp: bigint;
  maxTimestamp: bigint;
  producerId: bigint;
  producerEpoch: number;
  baseSequence: number;
  recordCount: number;
}

/** Decodes the 61-byte header at `offset`. Throws CORRUPT_MESSAGE if fewer bytes are available. */
export function readBatchHeader(buf: Buffer, offset = 0): RecordBatchHeader {
  if (offset < 0 || buf.length - offset < RECORD_BATCH_OVERHEAD) {
    throw new KafkaError(CORRUPT_MESSAGE, `Record batch header needs ${RECORD_BATCH_OVERHEAD} bytes, ${buf.length - offset} available`);
  }
  return {
    baseOffset: buf.readBigInt64BE(offset + BASE_OFFSET_OFFSET),
    batchLength: buf.readInt32BE(offset + BATCH_LENGTH_OFFSET),
    partitionLeaderEpoch: buf.readInt32BE(offset + PARTITION_LEADER_EPOCH_OFFSET),
    magic: buf.readInt8(offset + MAGIC_OFFSET),
    crc: buf.readUInt32BE(offset + CRC_OFFSET),
    attributes: buf.readInt16BE(offset + ATTRIBUTES_OFFSET),
    lastOffsetDelta: buf.readInt32BE(offset + LAST_OFFSET_DELTA_OFFSET),
    baseTimestamp: buf.readBigInt64BE(offset + BASE_TIMESTAMP_OFFSET),
    maxTimestamp: buf.readBigInt64BE(offset + MAX_TIMESTAMP_OFFSET),
    producerId: buf.readBigInt64BE(offset + PRODUCER_ID_OFFSET),
    producerEpoch: buf.readInt16BE(offset + PRODUCER_EPOCH_OFFSET),
    baseSequence: buf.readInt32BE(offset + BASE_SEQUENCE_OFFSET),
    recordCount: buf.readInt32BE(offset + RECORDS_COUNT_OFFSET),
  };
}

/**
 * Throws unless `magic` is 2: magic 0/1 (legacy formats, not supported by Samsa) give
 * UNSUPPORTED_FOR_MESSAGE_FORMAT, anything else CORRUPT_MESSAGE (Kafka's "Invalid magic found in record").
 */
export function ensureMagicV2(magic: number): void {
  if (magic === CURRENT_MAGIC) return;
  if (magic === 0 || magic === 1) {
    throw new KafkaError(43, `Message format v${magic} is not supported; only record batch v2 is`);
  }
  throw new KafkaError(CORRUPT_MESSAGE, `Invalid magic found in record: ${magic}`);
}

/** Kafka's sequence arithmetic: sequences wrap from Int32.MAX to 0. */
export function incrementSequence(sequence: number, increment: number): number {
  if (sequence > 0x7fffffff - increment) return increment - (0x7fffffff - sequence) - 1;
  return sequence + increment;
}

/**
 * A zero-copy view over exactly one magic v2 batch. Header fields are read from the buffer on access;
 * records are decoded lazily; a compressed payload is decompressed once, on first need.
 */
export class RecordBatch {
  /** The batch bytes (a view; `buffer.length === sizeInBytes`). */
  readonly buffer: Buffer;
  private payloadCache: Buffer | undefined;

  /**
   * Wraps `buffer`, which must hold exactly one batch. Checks only what is needed to read it safely:
   * at least the 61-byte header, magic 2 and batchLength matching the buffer.
   */
  constructor(buffer: Buffer) {
    if (buffer.length < HEADER_SIZE_UP_TO_MAGIC) {
      throw new KafkaError(CORRUPT_MESSAGE, `Record batch is truncated (${buffer.length} bytes)`);
    }
    ensureMagicV2(buffer.readInt8(MAGIC_OFFSET));
    if (buffer.length < RECORD_BATCH_OVERHEAD) {
      throw new KafkaError(
        CORRUPT_MESSAGE,
        `Record batch is corrupt (the size ${buffer.length} is smaller than the minimum allowed overhead ${RECORD_BATCH_OVERHEAD})`,
      );
    }
    const batchLength = buffer.readInt32BE(BATCH_LENGTH_OFFSET);
    if (batchLength + LOG_OVERHEAD !== buffer.length) {
      throw new KafkaError(CORRUPT_MESSAGE, `Record batch length field (${batchLength}) does not match the ${buffer.length - LOG_OVERHEAD} bytes available`);
    }
    this.buffer = buffer;
  }

  /** A view of the batch starting at `offset` in `buf` (sized by its batchLength field). */
  static at(buf: Buffer, offset = 0): RecordBatch {
    if (buf.length - offset < LOG_OVERHEAD) {
      throw new KafkaError(CORRUPT_MESSAGE, `Truncated record batch at position ${offset}`);
    }
    const size = buf.readInt32BE(offset + BATCH_LENGTH_OFFSET) + LOG_OVERHEAD;
    if (size < RECORD_BATCH_OVERHEAD || size > buf.length - offset) {
      throw new KafkaError(CORRUPT_MESSAGE, `Record batch at position ${offset} declares ${size} bytes, ${buf.length - offset} available`);
    }
    return new RecordBatch(buf.subarray(offset, offset + size));
  }

  get sizeInBytes(): number {
    return this.buffer.length;
  }
  get baseOffset(): bigint {
    return this.buffer.readBigInt64BE(BASE_OFFSET_OFFSET);
  }
  get batchLength(): number {
    return this.buffer.readInt32BE(BATCH_LENGTH_OFFSET);
  }
  get partitionLeaderEpoch(): number {
    return this.buffer.readInt32BE(PARTITION_LEADER_EPOCH_OFFSET);
  }
  get magic(): number {
    return this.buffer.readInt8(MAGIC_OFFSET);
  }
  get crc(): number {
    return this.buffer.readUInt32BE(CRC_OFFSET);
  }
  get attributes(): number {
    return this.buffer.readInt16BE(ATTRIBUTES_OFFSET);
  }
  /** Codec id from attributes bits 0-2 (5..7 are not valid codecs). */
  get compression(): number {
    return this.attributes & COMPRESSION_CODEC_MASK;
  }
  get timestampType(): TimestampType {
    return this.attributes & TIMESTAMP_TYPE_MASK ? TimestampType.LOG_APPEND_TIME : TimestampType.CREATE_TIME;
  }
  get isTransactional(): boolean {
    return (this.attributes & TRANSACTIONAL_FLAG_MASK) !== 0;
  }
  get isControl(): boolean {
    return (this.attributes & CONTROL_FLAG_MASK) !== 0;
  }
  get hasDeleteHorizon(): boolean {
    return (this.attributes & DELETE_HORIZON_FLAG_MASK) !== 0;
  }
  get lastOffsetDelta(): number {
    return this.buffer.readInt32BE(LAST_OFFSET_DELTA_OFFSET);
  }
  get lastOffset(): bigint {
    return this.baseOffset + BigInt(this.lastOffsetDelta);
  }
  get nextOffset(): bigint {
    return this.lastOffset + 1n;
  }
  get baseTimestamp(): bigint {
    return this.buffer.readBigInt64BE(BASE_TIMESTAMP_OFFSET);
  }
  get maxTimestamp(): bigint {
    return this.buffer.readBigInt64BE(MAX_TIMESTAMP_OFFSET);
  }
  get producerId(): bigint {
    return this.buffer.readBigInt64BE(PRODUCER_ID_OFFSET);
  }
  get hasProducerId(): boolean {
    return this.producerId >= 0n;
  }
  get producerEpoch(): number {
    return this.buffer.readInt16BE(PRODUCER_EPOCH_OFFSET);
  }
  get baseSequence(): number {
    return this.buffer.readInt32BE(BASE_SEQUENCE_OFFSET);
  }
  get lastSequence(): number {
    const base = this.baseSequence;
    return base === NO_SEQUENCE ? NO_SEQUENCE : incrementSequence(base, this.lastOffsetDelta);
  }
  get recordCount(): number {
    return this.buffer.readInt32BE(RECORDS_COUNT_OFFSET);
  }

  header(): RecordBatchHeader {
    return readBatchHeader(this.buffer, 0);
  }

  computeCrc(): number {
    return computeBatchCrc(this.buffer);
  }

  isValidCrc(): boolean {
    return this.computeCrc() === this.crc;
  }

  /** Throws CORRUPT_MESSAGE unless the stored CRC matches. */
  ensureValidCrc(): void {
    const stored = this.crc;
    const computed = this.computeCrc();
    if (stored !== computed) {
      throw new KafkaError(CORRUPT_MESSAGE, `Record is corrupt (stored crc = ${stored}, computed crc = ${computed})`);
    }
  }

  /** The raw (possibly compressed) records bytes after the header. */
  rawPayload(): Buffer {
    return this.buffer.subarray(RECORDS_OFFSET);
  }

  /** The uncompressed records bytes (decompressed once and cached). */
  payload(options?: DecompressOptions): Buffer {
    if (this.payloadCache === undefined) {
      this.payloadCache = decompress(this.compression, this.rawPayload(), options);
    }
    return this.payloadCache;
  }

  recordContext(): RecordContext {
    return {
      baseOffset: this.baseOffset,
      baseTimestamp: this.baseTimestamp,
      logAppendTime: this.timestampType === TimestampType.LOG_APPEND_TIME ? this.maxTimestamp : null,
    };
  }

  /**
   * Lazily decodes the records. Throws INVALID_RECORD when a record is malformed, when the payload
   * holds fewer records than recordCount, or when bytes remain after the last one.
   */
  records(options?: DecompressOptions): RecordIterator {
    return new RecordIterator(this.payload(options), this.recordCount, this.recordContext());
  }

  [Symbol.iterator](): RecordIterator {
    return this.records();
  }

  /** Decodes all records into an array (convenience for tests and tools). */
  toArray(): KafkaRecord[] {
    return [...this.records()];
  }
}

export class RecordIterator implements IterableIterator<KafkaRecord> {
  private readonly cursor: Cursor;
  private read = 0;

  constructor(
    payload: Buffer,
    private readonly count: number,
    private readonly ctx: RecordContext,
  ) {
    this.cursor = new Cursor(payload);
    if (count < 0) throw new KafkaError(INVALID_RECORD, `Invalid reported count for record batch: ${count}`);
  }

  next(): IteratorResult<KafkaRecord> {
    const c = this.cursor;
    if (this.read >= this.count) return { done: true, value: undefined };
    if (c.pos >= c.end) {
      throw new KafkaError(INVALID_RECORD, `Record batch declares ${this.count} records but its payload ends after ${this.read}`);
    }
    const record = readRecord(c, this.ctx);
    this.read++;
    if (this.read === this.count && c.pos !== c.end) {
      throw new KafkaError(INVALID_RECORD, 'Incorrect declared batch size, records still remaining in the batch');
    }
    return { done: false, value: record };
  }

  [Symbol.iterator](): RecordIterator {
    return this;
  }
}

// ---------------------------------------------------------------------------------------------
// Encoding

export interface RecordBatchInput extends CompressOptions {
  records: readonly RecordInput[];
  /** Default 0. */
  baseOffset?: bigint | number;
  /** Default -1 (what producers send; the leader stamps its epoch on append). */
  partitionLeaderEpoch?: number;
  compression?: CompressionType;
  timestampType?: TimestampType;
  transactional?: boolean;
  control?: boolean;
  /** Default -1 (no producer id). */
  producerId?: bigint | number;
  /** Default -1. */
  producerEpoch?: number;
  /** Default -1. */
  baseSequence?: number;
  /** Default: the first record's timestamp, else now. */
  baseTimestamp?: bigint | number;
  /** Default: the largest record timestamp (or baseTimestamp when there are no records). */
  maxTimestamp?: bigint | number;
  /** Default: the largest record offsetDelta (records.length - 1 for sequential records). */
  lastOffsetDelta?: number;
  /** Sets attributes bit 6: baseTimestamp holds the delete horizon (compaction). */
  deleteHorizon?: boolean;
}

/** Encodes one complete magic v2 batch (CRC included). */
export function encodeRecordBatch(input: RecordBatchInput): Buffer {
  const records = input.records;
  const compression = input.compression ?? CompressionType.NONE;
  const first = records[0];
  const baseTimestamp = input.baseTimestamp !== undefined ? Number(input.baseTimestamp) : first?.timestamp !== undefined ? Number(first.timestamp) : Date.now();
  let maxTs = Number.NEGATIVE_INFINITY;
  let maxDelta = -1;
  records.forEach((r, i) => {
    const ts = r.timestamp === undefined ? baseTimestamp : Number(r.timestamp);
    if (ts > maxTs) maxTs = ts;
    const d = r.offsetDelta ?? i;
    if (d > maxDelta) maxDelta = d;
  });
  const maxTimestamp = input.maxTimestamp !== undefined ? Number(input.maxTimestamp) : records.length ? maxTs : baseTimestamp;
  const lastOffsetDelta = input.lastOffsetDelta ?? (records.length ? maxDelta : 0);

  const body = encodeRecords(records, baseTimestamp);
  const payload = compress(compression, body, input);

  let attributes = compression;
  if (input.timestampType === TimestampType.LOG_APPEND_TIME) attributes |= TIMESTAMP_TYPE_MASK;
  if (input.transactional) attributes |= TRANSACTIONAL_FLAG_MASK;
  if (input.control) attributes |= CONTROL_FLAG_MASK;
  if (input.deleteHorizon) attributes |= DELETE_HORIZON_FLAG_MASK;

  const buf = Buffer.allocUnsafe(RECORD_BATCH_OVERHEAD + payload.length);
  buf.writeBigInt64BE(BigInt(input.baseOffset ?? 0), BASE_OFFSET_OFFSET);
  buf.writeInt32BE(buf.length - LOG_OVERHEAD, BATCH_LENGTH_OFFSET);
  buf.writeInt32BE(input.partitionLeaderEpoch ?? -1, PARTITION_LEADER_EPOCH_OFFSET);
  buf.writeInt8(CURRENT_MAGIC, MAGIC_OFFSET);
  buf.writeInt16BE(attributes, ATTRIBUTES_OFFSET);
  buf.writeInt32BE(lastOffsetDelta, LAST_OFFSET_DELTA_OFFSET);
  buf.writeBigInt64BE(BigInt(baseTimestamp), BASE_TIMESTAMP_OFFSET);
  buf.writeBigInt64BE(BigInt(maxTimestamp), MAX_TIMESTAMP_OFFSET);
  buf.writeBigInt64BE(BigInt(input.producerId ?? -1), PRODUCER_ID_OFFSET);
  buf.writeInt16BE(input.producerEpoch ?? -1, PRODUCER_EPOCH_OFFSET);
  buf.writeInt32BE(input.baseSequence ?? NO_SEQUENCE, BASE_SEQUENCE_OFFSET);
  buf.writeInt32BE(records.length, RECORDS_COUNT_OFFSET);
  payload.copy(buf, RECORDS_OFFSET);
  buf.writeUInt32BE(computeBatchCrc(buf), CRC_OFFSET);
  return buf;
}
