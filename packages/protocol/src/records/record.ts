/**
 * Single records inside a v2 batch:
 *
 *   length: varint            (bytes that follow)
 *   attributes: int8          (unused, 0)
 *   timestampDelta: varlong
 *   offsetDelta: varint
 *   keyLength: varint, key    (-1 = null)
 *   valueLength: varint, value
 *   headerCount: varint, then per header: keyLength varint + UTF-8 key, valueLength varint + value (-1 = null)
 *
 * Decoding is zero-copy: keys, values and header values are `subarray` views of the batch (or of
 * its decompressed payload).
 */
import { KafkaError } from '../errors.js';
import { Cursor, sizeOfVarint, sizeOfVarlong, writeVarint, writeVarlong } from './varint.js';

const INVALID_RECORD = 87;

export interface RecordHeader {
  readonly key: string;
  readonly value: Buffer | null;
}

export interface KafkaRecord {
  readonly attributes: number;
  readonly timestampDelta: number;
  readonly offsetDelta: number;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: readonly RecordHeader[];
  /** Encoded size including the length varint. */
  readonly sizeInBytes: number;
  /** baseOffset + offsetDelta. */
  readonly offset: bigint;
  /** baseTimestamp + timestampDelta, or the batch maxTimestamp for LogAppendTime batches (as Kafka reports it). */
  readonly timestamp: bigint;
}

const EMPTY_HEADERS: readonly RecordHeader[] = Object.freeze([]);

/**
 * A record decoded from a payload buffer. Structure is fully checked when it is read; the key, value
 * and headers are materialised (as zero-copy views) only when first accessed.
 */
class DecodedRecord implements KafkaRecord {
  private keyView: Buffer | null | undefined;
  private valueView: Buffer | null | undefined;
  private headerList: readonly RecordHeader[] | undefined;

  constructor(
    private readonly payload: Buffer,
    readonly attributes: number,
    readonly timestampDelta: number,
    readonly offsetDelta: number,
    private readonly keyStart: number,
    private readonly keySize: number,
    private readonly valueStart: number,
    private readonly valueSize: number,
    private readonly headersStart: number,
    private readonly headerCount: number,
    readonly sizeInBytes: number,
    private readonly ctx: RecordContext,
  ) {}

  get key(): Buffer | null {
    if (this.keyView === undefined) {
      this.keyView = this.keySize < 0 ? null : this.payload.subarray(this.keyStart, this.keyStart + this.keySize);
    }
    return this.keyView;
  }

  get value(): Buffer | null {
    if (this.valueView === undefined) {
      this.valueView = this.valueSize < 0 ? null : this.payload.subarray(this.valueStart, this.valueStart + this.valueSize);
    }
    return this.valueView;
  }

  get headers(): readonly RecordHeader[] {
    if (this.headerList === undefined) {
      if (this.headerCount === 0) {
        this.headerList = EMPTY_HEADERS;
      } else {
        // Already validated by readRecord, so this cannot fail.
        const c = new Cursor(this.payload, this.headersStart);
        const list: RecordHeader[] = [];
        for (let i = 0; i < this.headerCount; i++) {
          const k = c.view(c.varint()).toString('utf8');
          const vLen = c.varint();
          list.push({ key: k, value: vLen >= 0 ? c.view(vLen) : null });
        }
        this.headerList = list;
      }
    }
    return this.headerList;
  }

  get offset(): bigint {
    return this.ctx.baseOffset + BigInt(this.offsetDelta);
  }

  get timestamp(): bigint {
    return this.ctx.logAppendTime ?? this.ctx.baseTimestamp + BigInt(this.timestampDelta);
  }

  toJSON(): object {
    return {
      offset: this.offset.toString(),
      timestamp: this.timestamp.toString(),
      key: this.key?.toString('base64') ?? null,
      value: this.value?.toString('base64') ?? null,
      headers: this.headers.map((h) => ({ key: h.key, value: h.value?.toString('base64') ?? null })),
    };
  }
}

/** Context a record needs from its batch to report absolute offset and timestamp. */
export interface RecordContext {
  baseOffset: bigint;
  baseTimestamp: bigint;
  /** Non-null for LogAppendTime batches: every record reports this timestamp. */
  logAppendTime: bigint | null;
}

function badSize(bodySize: number, read: number): never {
  throw new KafkaError(INVALID_RECORD, `Invalid record size: expected to read ${bodySize} bytes in record payload, but instead read ${read}`);
}

/** Reads one record at the cursor; throws KafkaError INVALID_RECORD when malformed. */
export function readRecord(c: Cursor, ctx: RecordContext): KafkaRecord {
  const start = c.pos;
  const bodySize = c.varint();
  const bodyStart = c.pos;
  if (bodySize < 0 || bodySize > c.end - bodyStart) {
    throw new KafkaError(INVALID_RECORD, `Invalid record size: expected ${bodySize} bytes in record payload, but only ${c.end - bodyStart} remain`);
  }
  const outerEnd = c.end;
  c.end = bodyStart + bodySize;
  const attributes = c.int8();
  const timestampDelta = c.varlong();
  const offsetDelta = c.varint();
  const keySize = c.varint();
  const keyStart = c.pos;
  if (keySize > 0) c.skip(keySize);
  const valueSize = c.varint();
  const valueStart = c.pos;
  if (valueSize > 0) c.skip(valueSize);
  const headerCount = c.varint();
  if (headerCount < 0) throw new KafkaError(INVALID_RECORD, `Found invalid number of record headers ${headerCount}`);
  const headersStart = c.pos;
  for (let i = 0; i < headerCount; i++) {
    const keyLen = c.varint();
    if (keyLen < 0) throw new KafkaError(INVALID_RECORD, `Invalid negative header key size ${keyLen}`);
    c.skip(keyLen);
    const vLen = c.varint();
    if (vLen > 0) c.skip(vLen);
  }
  if (c.pos !== c.end) badSize(bodySize, c.pos - bodyStart);
  c.end = outerEnd;
  return new DecodedRecord(
    c.buf,
    attributes,
    timestampDelta,
    offsetDelta,
    keyStart,
    keySize,
    valueStart,
    valueSize,
    headersStart,
    headerCount,
    c.pos - start,
    ctx,
  );
}

/** Result slots filled by `skimRecord` (reused across calls; no per-record allocation). */
export interface RecordSkim {
  timestampDelta: number;
  offsetDelta: number;
  keyIsNull: boolean;
}

/**
 * Walks one record at the cursor without allocating: checks the same structure `readRecord` does
 * and fills `out` with the fields validation needs.
 */
export function skimRecord(c: Cursor, out: RecordSkim): void {
  const bodySize = c.varint();
  const bodyStart = c.pos;
  if (bodySize < 0 || bodySize > c.end - bodyStart) {
    throw new KafkaError(INVALID_RECORD, `Invalid record size: expected ${bodySize} bytes in record payload, but only ${c.end - bodyStart} remain`);
  }
  const outerEnd = c.end;
  c.end = bodyStart + bodySize;
  c.int8();
  out.timestampDelta = c.varlong();
  out.offsetDelta = c.varint();
  const keySize = c.varint();
  out.keyIsNull = keySize < 0;
  if (keySize > 0) c.skip(keySize);
  const valueSize = c.varint();
  if (valueSize > 0) c.skip(valueSize);
  const headerCount = c.varint();
  if (headerCount < 0) throw new KafkaError(INVALID_RECORD, `Found invalid number of record headers ${headerCount}`);
  for (let i = 0; i < headerCount; i++) {
    const keyLen = c.varint();
    if (keyLen < 0) throw new KafkaError(INVALID_RECORD, `Invalid negative header key size ${keyLen}`);
    c.skip(keyLen);
    const vLen = c.varint();
    if (vLen > 0) c.skip(vLen);
  }
  if (c.pos !== c.end) {
    throw new KafkaError(INVALID_RECORD, `Invalid record size: expected to read ${bodySize} bytes in record payload, but instead read ${c.pos - bodyStart}`);
  }
  c.end = outerEnd;
}

// ---------------------------------------------------------------------------------------------
// Encoding

export type BytesInput = Uint8Array | string | null | undefined;

export interface RecordHeaderInput {
  key: string;
  value?: BytesInput;
}

export interface RecordInput {
  key?: BytesInput;
  value?: BytesInput;
  headers?: readonly RecordHeaderInput[];
  /** Absolute timestamp in ms; defaults to the batch's base timestamp. */
  timestamp?: bigint | number;
  /** Defaults to the record's index in the batch. */
  offsetDelta?: number;
  /** Record attributes byte (unused by Kafka; default 0). */
  attributes?: number;
}

function toBytes(v: BytesInput): Buffer | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string') return Buffer.from(v, 'utf8');
  return Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

function sizeOfBytes(b: Buffer | null): number {
  return b === null ? 1 : sizeOfVarint(b.length) + b.length;
}

interface PreparedRecord {
  attributes: number;
  timestampDelta: number;
  offsetDelta: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: { key: Buffer; value: Buffer | null }[];
  bodySize: number;
}

function prepare(r: RecordInput, index: number, baseTimestamp: number): PreparedRecord {
  const key = toBytes(r.key);
  const value = toBytes(r.value);
  const headers = (r.headers ?? []).map((h) => ({ key: Buffer.from(h.key, 'utf8'), value: toBytes(h.value) }));
  const timestampDelta = r.timestamp === undefined ? 0 : Number(r.timestamp) - baseTimestamp;
  const offsetDelta = r.offsetDelta ?? index;
  let bodySize = 1 + sizeOfVarlong(timestampDelta) + sizeOfVarint(offsetDelta) + sizeOfBytes(key) + sizeOfBytes(value);
  bodySize += sizeOfVarint(headers.length);
  for (const h of headers) bodySize += sizeOfVarint(h.key.length) + h.key.length + sizeOfBytes(h.value);
  return { attributes: r.attributes ?? 0, timestampDelta, offsetDelta, key, value, headers, bodySize };
}

function writeBytes(buf: Buffer, pos: number, b: Buffer | null): number {
  if (b === null) return writeVarint(buf, pos, -1);
  pos = writeVarint(buf, pos, b.length);
  b.copy(buf, pos);
  return pos + b.length;
}

/** Encodes records (the uncompressed batch payload) relative to `baseTimestamp` (ms). */
export function encodeRecords(records: readonly RecordInput[], baseTimestamp: number): Buffer {
  const prepared = records.map((r, i) => prepare(r, i, baseTimestamp));
  let total = 0;
  for (const p of prepared) total += sizeOfVarint(p.bodySize) + p.bodySize;
  const buf = Buffer.allocUnsafe(total);
  let pos = 0;
  for (const p of prepared) {
    pos = writeVarint(buf, pos, p.bodySize);
    buf.writeInt8((p.attributes << 24) >> 24, pos++);
    pos = writeVarlong(buf, pos, p.timestampDelta);
    pos = writeVarint(buf, pos, p.offsetDelta);
    pos = writeBytes(buf, pos, p.key);
    pos = writeBytes(buf, pos, p.value);
    pos = writeVarint(buf, pos, p.headers.length);
    for (const h of p.headers) {
      pos = writeBytes(buf, pos, h.key);
      pos = writeBytes(buf, pos, h.value);
    }
  }
  if (pos !== total) throw new Error(`record encoding size mismatch: wrote ${pos} of ${total}`);
  return buf;
}
