import { ProtocolDecodeError } from './errors.js';
import type { TaggedField } from './types.js';

/**
 * A cursor over a Buffer. Every read checks the remaining length first and throws
 * `ProtocolDecodeError` (never RangeError) on truncated or malformed input.
 * `bytes`/`records`/unknown tagged fields are returned as zero-copy `subarray` views.
 */
export class Reader {
  readonly buf: Buffer;
  /** Absolute position of the next byte to read. */
  offset: number;
  /** Exclusive upper bound for reads (temporarily narrowed inside tagged fields). */
  end: number;

  constructor(buf: Buffer, offset = 0, end: number = buf.length) {
    if (offset < 0 || end > buf.length || offset > end) {
      throw new RangeError(`Reader bounds [${offset}, ${end}) outside buffer of ${buf.length} bytes`);
    }
    this.buf = buf;
    this.offset = offset;
    this.end = end;
  }

  get remaining(): number {
    return this.end - this.offset;
  }

  /** Throws a ProtocolDecodeError at `at` (default: the current offset). */
  fail(reason: string, at: number = this.offset): never {
    throw new ProtocolDecodeError(reason, at);
  }

  private need(n: number, what: string): number {
    const o = this.offset;
    if (n > this.end - o) {
      this.fail(`truncated ${what}: need ${n} bytes, ${this.end - o} remaining`);
    }
    this.offset = o + n;
    return o;
  }

  // ---- fixed-width -------------------------------------------------------------------------

  readBool(): boolean {
    const o = this.need(1, 'bool');
    return this.buf[o] !== 0;
  }

  readInt8(): number {
    const o = this.need(1, 'int8');
    return (this.buf[o]! << 24) >> 24;
  }

  readUInt8(): number {
    const o = this.need(1, 'uint8');
    return this.buf[o]!;
  }

  readInt16(): number {
    const o = this.need(2, 'int16');
    const b = this.buf;
    return (((b[o]! << 8) | b[o + 1]!) << 16) >> 16;
  }

  readUInt16(): number {
    const o = this.need(2, 'uint16');
    const b = this.buf;
    return (b[o]! << 8) | b[o + 1]!;
  }

  readInt32(): number {
    const o = this.need(4, 'int32');
    const b = this.buf;
    return (b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!;
  }

  readUInt32(): number {
    const o = this.need(4, 'uint32');
    const b = this.buf;
    return b[o]! * 0x1000000 + ((b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!);
  }

  readInt64(): bigint {
    const o = this.need(8, 'int64');
    return this.buf.readBigInt64BE(o);
  }

  readFloat64(): number {
    const o = this.need(8, 'float64');
    return this.buf.readDoubleBE(o);
  }

  // ---- varints -----------------------------------------------------------------------------

  /** Unsigned varint (at most 5 bytes, 32 bits) as a non-negative number. */
  readUVarint(): number {
    const b = this.buf;
    let o = this.offset;
    const end = this.end;
    if (o >= end) this.fail('truncated unsigned varint');
    let byte = b[o++]!;
    if (byte < 0x80) {
      this.offset = o;
      return byte;
    }
    let value = byte & 0x7f;
    let shift = 7;
    for (;;) {
      if (o >= end) this.fail('truncated unsigned varint', o);
      byte = b[o++]!;
      if (shift === 28) {
        if (byte > 0x0f) this.fail('unsigned varint does not fit in 32 bits', o - 1);
        value += byte * 0x10000000;
        break;
      }
      value |= (byte & 0x7f) << shift;
      if (byte < 0x80) break;
      shift += 7;
    }
    this.offset = o;
    return value;
  }

  /** Zigzag-encoded signed 32-bit varint. */
  readVarint(): number {
    const u = this.readUVarint();
    return (u >>> 1) ^ -(u & 1);
  }

  /** Zigzag-encoded signed 64-bit varint (at most 10 bytes). */
  readVarlong(): bigint {
    const b = this.buf;
    let o = this.offset;
    const end = this.end;
    let lo = 0; // low 28 bits
    let hi = 0; // bits 28..63, kept as an exact double
    let shift = 0;
    for (;;) {
      if (o >= end) this.fail('truncated varlong', o);
      const byte = b[o++]!;
      if (shift < 28) {
        lo |= (byte & 0x7f) << shift;
      } else if (shift === 63) {
        if (byte > 1) this.fail('varlong does not fit in 64 bits', o - 1);
        hi += byte * 2 ** 35;
        break;
      } else {
        hi += (byte & 0x7f) * 2 ** (shift - 28);
      }
      if (byte < 0x80) break;
      shift += 7;
    }
    this.offset = o;
    if (hi === 0) return BigInt((lo >>> 1) ^ -(lo & 1));
    const u = (BigInt(hi) << 28n) | BigInt(lo);
    return (u >> 1n) ^ -(u & 1n);
  }

  // ---- strings -----------------------------------------------------------------------------

  private utf8(len: number, what: string): string {
    const o = this.need(len, what);
    return this.buf.toString('utf8', o, o + len);
  }

  /** INT16 length + UTF-8; null (-1) is rejected. */
  readString(): string {
    const at = this.offset;
    const len = this.readInt16();
    if (len < 0) this.fail(len === -1 ? 'null in non-nullable string' : `invalid string length ${len}`, at);
    return this.utf8(len, 'string');
  }

  readNullableString(): string | null {
    const at = this.offset;
    const len = this.readInt16();
    if (len < 0) {
      if (len === -1) return null;
      this.fail(`invalid string length ${len}`, at);
    }
    return this.utf8(len, 'string');
  }

  /** UNSIGNED_VARINT (length+1) + UTF-8; null (0) is rejected. */
  readCompactString(): string {
    const at = this.offset;
    const n = this.readUVarint();
    if (n === 0) this.fail('null in non-nullable compact string', at);
    return this.utf8(n - 1, 'compact string');
  }

  readCompactNullableString(): string | null {
    const n = this.readUVarint();
    if (n === 0) return null;
    return this.utf8(n - 1, 'compact string');
  }

  // ---- bytes -------------------------------------------------------------------------------

  /** `n` raw bytes as a view of the input. */
  readRaw(n: number): Buffer {
    const o = this.need(n, 'bytes');
    return this.buf.subarray(o, o + n);
  }

  readBytes(): Buffer {
    const at = this.offset;
    const len = this.readInt32();
    if (len < 0) this.fail(len === -1 ? 'null in non-nullable bytes' : `invalid bytes length ${len}`, at);
    return this.readRaw(len);
  }

  readNullableBytes(): Buffer | null {
    const at = this.offset;
    const len = this.readInt32();
    if (len < 0) {
      if (len === -1) return null;
      this.fail(`invalid bytes length ${len}`, at);
    }
    return this.readRaw(len);
  }

  readCompactBytes(): Buffer {
    const at = this.offset;
    const n = this.readUVarint();
    if (n === 0) this.fail('null in non-nullable compact bytes', at);
    return this.readRaw(n - 1);
  }

  readCompactNullableBytes(): Buffer | null {
    const n = this.readUVarint();
    if (n === 0) return null;
    return this.readRaw(n - 1);
  }

  /** 16 bytes, copied (ids outlive the request buffer, e.g. as map keys). */
  readUuid(): Buffer {
    const o = this.need(16, 'uuid');
    return Buffer.from(this.buf.subarray(o, o + 16));
  }

  // ---- arrays ------------------------------------------------------------------------------

  private checkCount(n: number, minElemSize: number, at: number): void {
    const need = minElemSize < 1 ? n : n * minElemSize;
    if (need > this.end - this.offset) {
      this.fail(`array length ${n} exceeds the ${this.end - this.offset} remaining bytes`, at);
    }
  }

  /**
   * INT32 element count; returns -1 for a null array (only when `nullable`).
   * `minElemSize` is a lower bound on the encoded size of one element, used to reject
   * absurd counts before anything is allocated.
   */
  readArrayLength(minElemSize: number, nullable: boolean): number {
    const at = this.offset;
    const n = this.readInt32();
    if (n < 0) {
      if (n === -1 && nullable) return -1;
      this.fail(n === -1 ? 'null in non-nullable array' : `invalid array length ${n}`, at);
    }
    this.checkCount(n, minElemSize, at);
    return n;
  }

  /** UNSIGNED_VARINT (count+1); returns -1 for null (0 on the wire; only when `nullable`). */
  readCompactArrayLength(minElemSize: number, nullable: boolean): number {
    const at = this.offset;
    const u = this.readUVarint();
    if (u === 0) {
      if (nullable) return -1;
      this.fail('null in non-nullable compact array', at);
    }
    const n = u - 1;
    this.checkCount(n, minElemSize, at);
    return n;
  }

  /** Nullable-struct marker: INT8 -1 = null, 1 = present. */
  readStructPresent(): boolean {
    const at = this.offset;
    const m = this.readInt8();
    if (m === 1) return true;
    if (m === -1) return false;
    return this.fail(`invalid nullable struct marker ${m}`, at);
  }

  // ---- tagged fields -----------------------------------------------------------------------

  /** Number of tagged fields in a section (each takes at least 2 bytes). */
  readTaggedFieldCount(): number {
    const at = this.offset;
    const n = this.readUVarint();
    if (n * 2 > this.end - this.offset) {
      this.fail(`tagged field count ${n} exceeds the ${this.end - this.offset} remaining bytes`, at);
    }
    return n;
  }

  /** Narrows reads to the next `size` bytes; returns the previous end for `popLimit`. */
  pushLimit(size: number): number {
    const prev = this.end;
    if (size > prev - this.offset) {
      this.fail(`tagged field size ${size} exceeds the ${prev - this.offset} remaining bytes`);
    }
    this.end = this.offset + size;
    return prev;
  }

  /** Checks that the narrowed region was consumed exactly and restores the previous end. */
  popLimit(prevEnd: number, tag: number): void {
    if (this.offset !== this.end) {
      this.fail(`tagged field ${tag} has ${this.end - this.offset} unread bytes`);
    }
    this.end = prevEnd;
  }

  /** Reads a whole tagged-field section whose tags are all unknown to the caller. */
  readTaggedFields(): TaggedField[] | undefined {
    const n = this.readTaggedFieldCount();
    if (n === 0) return undefined;
    const out: TaggedField[] = [];
    for (let i = 0; i < n; i++) {
      const tag = this.readUVarint();
      const size = this.readUVarint();
      out.push({ tag, data: this.readRaw(size) });
    }
    return out;
  }

  /** Skips a tagged-field section. */
  skipTaggedFields(): void {
    const n = this.readTaggedFieldCount();
    for (let i = 0; i < n; i++) {
      this.readUVarint();
      this.need(this.readUVarint(), 'tagged field');
    }
  }
}
