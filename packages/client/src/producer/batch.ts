/**
 * ProducerBatch: the records of one partition, written as a magic v2 RecordBatch directly into a
 * buffer from the BufferPool (header space reserved, records appended in place — no per-record
 * objects or copies besides the key/value bytes themselves). `seal()` writes the header (and
 * compresses the records when compression.type is set); `setProducerState()` stamps producer id,
 * epoch and base sequence (again after an epoch bump). The CRC covers those fields, so it is computed
 * once, when the bytes leave (`wireBytes()`), not at sealing and again at stamping.
 */
import {
  ATTRIBUTES_OFFSET,
  BASE_OFFSET_OFFSET,
  BASE_SEQUENCE_OFFSET,
  BASE_TIMESTAMP_OFFSET,
  BATCH_LENGTH_OFFSET,
  CRC_OFFSET,
  CURRENT_MAGIC,
  LAST_OFFSET_DELTA_OFFSET,
  LOG_OVERHEAD,
  MAGIC_OFFSET,
  MAX_TIMESTAMP_OFFSET,
  PARTITION_LEADER_EPOCH_OFFSET,
  PRODUCER_EPOCH_OFFSET,
  PRODUCER_ID_OFFSET,
  RECORDS_COUNT_OFFSET,
  RECORD_BATCH_OVERHEAD,
  compress,
  computeBatchCrc,
  writeInt64BE,
  writeSafeInt64BE,
  TRANSACTIONAL_FLAG_MASK,
  type CompressionType,
} from '@samsa/protocol';
import { notify, type Completion, type RecordMetadata } from './types.js';

export interface RecordHeaderBytes {
  key: Buffer;
  value: Buffer | null;
}

function sizeOfUnsignedVarint(v: number): number {
  let n = 1;
  while (v >= 0x80) {
    v = Math.floor(v / 128);
    n++;
  }
  return n;
}

/** Zigzag size for a (safe) integer. */
export function sizeOfVarlong(n: number): number {
  return sizeOfUnsignedVarint(n >= 0 ? n * 2 : -n * 2 - 1);
}

function writeVarlong(buf: Buffer, pos: number, n: number): number {
  let v = n >= 0 ? n * 2 : -n * 2 - 1;
  while (v >= 0x80) {
    buf[pos++] = (v % 128) | 0x80;
    v = Math.floor(v / 128);
  }
  buf[pos++] = v;
  return pos;
}

/** Bytes a record takes in a batch, its length prefix included. */
export function recordSize(
  tsDelta: number,
  offsetDelta: number,
  key: Buffer | null,
  value: Buffer | null,
  headers: readonly RecordHeaderBytes[] | null,
): number {
  let body = 1 + sizeOfVarlong(tsDelta) + sizeOfVarlong(offsetDelta);
  body += key ? sizeOfVarlong(key.length) + key.length : 1;
  body += value ? sizeOfVarlong(value.length) + value.length : 1;
  body += sizeOfVarlong(headers?.length ?? 0);
  if (headers) {
    for (const h of headers) body += sizeOfVarlong(h.key.length) + h.key.length + (h.value ? sizeOfVarlong(h.value.length) + h.value.length : 1);
  }
  return sizeOfVarlong(body) + body;
}

/** An upper bound of a record's size in a fresh batch (deltas of 0). */
export function estimateRecordSize(key: Buffer | null, value: Buffer | null, headers: readonly RecordHeaderBytes[] | null): number {
  return recordSize(0, 0, key, value, headers) + 20;
}

export class ProducerBatch {
  readonly createdMs: number;
  /** Each record's callback (a flat array per batch: no object per record kept until the answer). */
  private readonly callbacks: Completion[] = [];
  /** Per record: timestamp, key size, value size (flat, unboxed). */
  private readonly recordInfo: number[] = [];
  /** Write position (end of the last record) in `buffer`. */
  private pos = RECORD_BATCH_OVERHEAD;
  private baseTimestamp = 0;
  private maxTimestamp = -1;
  /** Set when a record did not fit: the batch is ready to be sent. */
  full = false;
  /** The sealed RecordBatch bytes (set by seal()); their CRC is current only after wireBytes(). */
  bytes: Buffer | undefined;
  private crcCurrent = false;
  attempts = 0;
  /** Date.now() of the last send attempt (retry backoff). */
  lastAttemptMs = 0;
  retryBackoffUntil = 0;
  inFlight = false;
  /** On its partition's queue in the accumulator (not taken by the sender, or put back to retry). */
  queued = false;
  producerId = -1n;
  producerEpoch = -1;
  baseSequence = -1;
  /** Completed (acknowledged, failed or expired). */
  done = false;
  /** The accumulator's answer for appends to this batch (one object per batch, not per record). */
  readonly appended: { batch: ProducerBatch; newBatch: false } = { batch: this, newBatch: false };

  constructor(
    readonly topic: string,
    readonly partition: number,
    /** Pooled buffer; released by the accumulator when the batch is done. */
    readonly buffer: Buffer,
    private readonly compression: CompressionType,
    now: number,
    /** Part of a transaction: the batch carries the transactional attribute. */
    readonly transactional = false,
  ) {
    this.createdMs = now;
  }

  get recordCount(): number {
    return this.callbacks.length;
  }

  get hasSequence(): boolean {
    return this.baseSequence >= 0;
  }

  /** Bytes used so far (uncompressed). */
  get sizeInBytes(): number {
    return this.bytes?.length ?? this.pos;
  }

  /** Appends a record when it fits; false when it does not (the batch is then full). */
  tryAppend(timestamp: number, key: Buffer | null, value: Buffer | null, headers: readonly RecordHeaderBytes[] | null, callback: Completion): boolean {
    if (this.bytes) return false;
    const offsetDelta = this.callbacks.length;
    if (offsetDelta === 0) this.baseTimestamp = timestamp;
    const tsDelta = timestamp - this.baseTimestamp;
    const size = recordSize(tsDelta, offsetDelta, key, value, headers);
    const buf = this.buffer;
    if (this.pos + size > buf.length) {
      this.full = true;
      return false;
    }
    let p = writeVarlong(buf, this.pos, bodyLen(size));
    buf[p++] = 0; // attributes
    p = writeVarlong(buf, p, tsDelta);
    p = writeVarlong(buf, p, offsetDelta);
    if (key) {
      p = writeVarlong(buf, p, key.length);
      p += key.copy(buf, p);
    } else p = writeVarlong(buf, p, -1);
    if (value) {
      p = writeVarlong(buf, p, value.length);
      p += value.copy(buf, p);
    } else p = writeVarlong(buf, p, -1);
    p = writeVarlong(buf, p, headers?.length ?? 0);
    if (headers) {
      for (const h of headers) {
        p = writeVarlong(buf, p, h.key.length);
        p += h.key.copy(buf, p);
        if (h.value) {
          p = writeVarlong(buf, p, h.value.length);
          p += h.value.copy(buf, p);
        } else p = writeVarlong(buf, p, -1);
      }
    }
    this.pos = p;
    if (timestamp > this.maxTimestamp) this.maxTimestamp = timestamp;
    this.callbacks.push(callback);
    this.recordInfo.push(timestamp, key ? key.length : -1, value ? value.length : -1);
    if (buf.length - p < 16) this.full = true;
    return true;
  }

  /** Closes the batch to appends and builds its RecordBatch bytes. Idempotent. */
  seal(): Buffer {
    if (this.bytes) return this.bytes;
    const buf = this.buffer;
    let out: Buffer;
    if (this.compression === 0) {
      out = buf.subarray(0, this.pos);
    } else {
      const payload = compress(this.compression, buf.subarray(RECORD_BATCH_OVERHEAD, this.pos));
      out = Buffer.allocUnsafe(RECORD_BATCH_OVERHEAD + payload.length);
      payload.copy(out, RECORD_BATCH_OVERHEAD);
    }
    writeSafeInt64BE(out, 0, BASE_OFFSET_OFFSET);
    out.writeInt32BE(out.length - LOG_OVERHEAD, BATCH_LENGTH_OFFSET);
    out.writeInt32BE(-1, PARTITION_LEADER_EPOCH_OFFSET);
    out.writeInt8(CURRENT_MAGIC, MAGIC_OFFSET);
    out.writeInt16BE(this.compression | (this.transactional ? TRANSACTIONAL_FLAG_MASK : 0), ATTRIBUTES_OFFSET);
    out.writeInt32BE(this.callbacks.length - 1, LAST_OFFSET_DELTA_OFFSET);
    writeSafeInt64BE(out, this.baseTimestamp, BASE_TIMESTAMP_OFFSET);
    writeSafeInt64BE(out, this.maxTimestamp, MAX_TIMESTAMP_OFFSET);
    out.writeInt32BE(this.callbacks.length, RECORDS_COUNT_OFFSET);
    this.bytes = out;
    this.writeProducerState();
    return out;
  }

  /** The sealed bytes with their CRC computed over the header as it stands (seals first if needed). */
  wireBytes(): Buffer {
    const out = this.seal();
    if (!this.crcCurrent) {
      out.writeUInt32BE(computeBatchCrc(out), CRC_OFFSET);
      this.crcCurrent = true;
    }
    return out;
  }

  /** Stamps producer id / epoch / base sequence (idempotence); the CRC follows in wireBytes(). */
  setProducerState(producerId: bigint, epoch: number, baseSequence: number): void {
    this.producerId = producerId;
    this.producerEpoch = epoch;
    this.baseSequence = baseSequence;
    if (this.bytes) this.writeProducerState();
  }

  private writeProducerState(): void {
    const out = this.bytes!;
    writeInt64BE(out, this.producerId, PRODUCER_ID_OFFSET);
    out.writeInt16BE(this.producerEpoch, PRODUCER_EPOCH_OFFSET);
    out.writeInt32BE(this.baseSequence, BASE_SEQUENCE_OFFSET);
    this.crcCurrent = false;
  }

  /** Calls every record's callback with its metadata (offsets from baseOffset). */
  complete(baseOffset: bigint, logAppendTime: number): void {
    if (this.done) return;
    this.done = true;
    const n = this.callbacks.length;
    const info = this.recordInfo;
    let thrown: { err: unknown } | undefined;
    for (let i = 0; i < n; i++) {
      const m: RecordMetadata = {
        topic: this.topic,
        partition: this.partition,
        offset: baseOffset < 0n ? -1n : baseOffset + (i < SMALL_BIGINTS.length ? SMALL_BIGINTS[i]! : BigInt(i)),
        timestamp: logAppendTime >= 0 ? logAppendTime : info[3 * i]!,
        serializedKeySize: info[3 * i + 1]!,
        serializedValueSize: info[3 * i + 2]!,
      };
      try {
        notify(this.callbacks[i]!, null, m);
      } catch (err) {
        // a throwing callback does not keep the records after it from theirs
        thrown ??= { err };
      }
    }
    if (thrown) throw thrown.err;
  }

  fail(err: Error): void {
    if (this.done) return;
    this.done = true;
    let thrown: { err: unknown } | undefined;
    for (const cb of this.callbacks) {
      try {
        notify(cb, err, null);
      } catch (e) {
        thrown ??= { err: e };
      }
    }
    if (thrown) throw thrown.err;
  }
}

/** BigInt(i) for offset deltas, made once. */
const SMALL_BIGINTS: readonly bigint[] = Array.from({ length: 4096 }, (_, i) => BigInt(i));

/** The record body length for a record whose total size (with length prefix) is `size`. */
function bodyLen(size: number): number {
  // the prefix is 1-3 bytes for any record that fits a batch; find the body length it encodes
  for (let prefix = 1; prefix <= 5; prefix++) if (sizeOfVarlong(size - prefix) === prefix) return size - prefix;
  throw new Error(`Cannot encode a record of ${size} bytes`);
}
