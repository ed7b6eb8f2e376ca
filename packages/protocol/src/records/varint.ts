/**
 * Zig-zag varint / varlong helpers for the record format (internal to records/).
 *
 * Decoding mirrors Kafka's `ByteUtils.readVarint/readVarlong`: a varint may use at most 5 bytes and a
 * varlong at most 10; longer encodings are rejected. Varlongs decode to a JS number and are rejected
 * when the value is outside ±(2^53 - 1) (a timestamp delta that large cannot come from a real client).
 */
import { KafkaError } from '../errors.js';

const INVALID_RECORD = 87;
const TWO_POW_32 = 4294967296;

/** A read position over a buffer, bounded by `end`. All reads throw INVALID_RECORD on underflow. */
export class Cursor {
  buf: Buffer;
  pos: number;
  end: number;

  constructor(buf: Buffer, pos = 0, end = buf.length) {
    this.buf = buf;
    this.pos = pos;
    this.end = end;
  }

  underflow(): never {
    throw new KafkaError(INVALID_RECORD, 'Found invalid record structure: read past the end of the record data');
  }

  int8(): number {
    if (this.pos >= this.end) this.underflow();
    const v = this.buf[this.pos++]!;
    return v > 127 ? v - 256 : v;
  }

  int16(): number {
    if (this.pos + 2 > this.end) this.underflow();
    const v = this.buf.readInt16BE(this.pos);
    this.pos += 2;
    return v;
  }

  int32(): number {
    if (this.pos + 4 > this.end) this.underflow();
    const v = this.buf.readInt32BE(this.pos);
    this.pos += 4;
    return v;
  }

  varint(): number {
    const buf = this.buf;
    const end = this.end;
    let pos = this.pos;
    let value = 0;
    let shift = 0;
    let b: number;
    for (;;) {
      if (pos >= end) this.underflow();
      b = buf[pos++]!;
      if ((b & 0x80) === 0) break;
      value |= (b & 0x7f) << shift;
      shift += 7;
      if (shift > 28) throw new KafkaError(INVALID_RECORD, 'Found invalid record structure: varint is too long');
    }
    value |= b << shift;
    this.pos = pos;
    return (value >>> 1) ^ -(value & 1);
  }

  /** Zig-zag varlong as a number; INVALID_RECORD if longer than 10 bytes or not a safe integer. */
  varlong(): number {
    const buf = this.buf;
    const end = this.end;
    let pos = this.pos;
    // Fast path: up to 7 bytes (49 bits) accumulate exactly in a double.
    let u = 0;
    let mul = 1;
    for (let i = 0; i < 7; i++) {
      if (pos >= end) this.underflow();
      const b = buf[pos++]!;
      u += (b & 0x7f) * mul;
      if ((b & 0x80) === 0) {
        this.pos = pos;
        return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
      }
      mul *= 128;
    }
    // Slow path: exact 64-bit arithmetic.
    let big = BigInt(u);
    let shift = 49n;
    for (;;) {
      if (pos >= end) this.underflow();
      const b = buf[pos++]!;
      big |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) break;
      shift += 7n;
      if (shift > 63n) throw new KafkaError(INVALID_RECORD, 'Found invalid record structure: varlong is too long');
    }
    this.pos = pos;
    big = BigInt.asUintN(64, big);
    const signed = (big >> 1n) ^ -(big & 1n);
    if (signed > BigInt(Number.MAX_SAFE_INTEGER) || signed < BigInt(Number.MIN_SAFE_INTEGER)) {
      throw new KafkaError(INVALID_RECORD, `Record timestamp delta ${signed} is outside the supported range`);
    }
    return Number(signed);
  }

  skip(n: number): void {
    if (n < 0 || this.pos + n > this.end) this.underflow();
    this.pos += n;
  }

  /** A zero-copy view of the next n bytes. */
  view(n: number): Buffer {
    if (n < 0 || this.pos + n > this.end) this.underflow();
    const v = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return v;
  }
}

export function sizeOfVarint(value: number): number {
  let v = ((value << 1) ^ (value >> 31)) >>> 0;
  let n = 1;
  while (v >= 0x80) {
    v >>>= 7;
    n++;
  }
  return n;
}

function zigzag64(value: number | bigint): bigint | number {
  if (typeof value === 'number') {
    // Exact in a double while |2v| stays below 2^53.
    if (Number.isInteger(value) && Math.abs(value) < 2 ** 52) return value >= 0 ? value * 2 : -value * 2 - 1;
    value = BigInt(Math.trunc(value));
  }
  const v = BigInt.asIntN(64, value);
  return BigInt.asUintN(64, (v << 1n) ^ (v >> 63n));
}

export function sizeOfVarlong(value: number | bigint): number {
  let u = zigzag64(value);
  let n = 1;
  if (typeof u === 'number') {
    while (u >= 128) {
      u = Math.floor(u / 128);
      n++;
    }
    return n;
  }
  while (u >= 128n) {
    u >>= 7n;
    n++;
  }
  return n;
}

/** Writes a zig-zag varint at `pos`, returning the new position. */
export function writeVarint(buf: Buffer, pos: number, value: number): number {
  let v = ((value << 1) ^ (value >> 31)) >>> 0;
  while (v >= 0x80) {
    buf[pos++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  buf[pos++] = v;
  return pos;
}

/** Writes a zig-zag varlong at `pos`, returning the new position. */
export function writeVarlong(buf: Buffer, pos: number, value: number | bigint): number {
  let u = zigzag64(value);
  if (typeof u === 'number') {
    while (u >= 128) {
      buf[pos++] = (u % 128) | 0x80;
      u = Math.floor(u / 128);
    }
    buf[pos++] = u;
    return pos;
  }
  while (u >= 128n) {
    buf[pos++] = Number(u & 0x7fn) | 0x80;
    u >>= 7n;
  }
  buf[pos++] = Number(u);
  return pos;
}

/** Reads a signed int64 as a JS number (exact for |v| < 2^53). */
export function readInt64AsNumber(buf: Buffer, pos: number): number {
  return buf.readInt32BE(pos) * TWO_POW_32 + buf.readUInt32BE(pos + 4);
}
