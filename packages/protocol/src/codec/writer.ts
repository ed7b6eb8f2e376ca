import { ProtocolEncodeError } from './errors.js';
import type { TaggedField } from './types.js';

const MAX_STRING_BYTES = 0x7fff;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const SAFE_MIN = BigInt(Number.MIN_SAFE_INTEGER);
const SAFE_MAX = BigInt(Number.MAX_SAFE_INTEGER);

/** Writes a safe integer as a big-endian int64 without making a BigInt (Buffer.writeBigInt64BE does). */
export function writeSafeInt64BE(buf: Buffer, n: number, offset: number): void {
  const hi = Math.floor(n / 0x1_0000_0000);
  buf.writeInt32BE(hi, offset);
  buf.writeUInt32BE(n - hi * 0x1_0000_0000, offset + 4);
}

/**
 * Buffer.writeBigInt64BE without its BigInt arithmetic for the usual values (offsets, timestamps,
 * producer ids are safe integers): those go through writeSafeInt64BE.
 */
export function writeInt64BE(buf: Buffer, v: bigint, offset: number): void {
  if (v >= SAFE_MIN && v <= SAFE_MAX) writeSafeInt64BE(buf, Number(v), offset);
  else buf.writeBigInt64BE(v, offset);
}

/**
 * A growable output buffer. Values are written at `offset`; the buffer doubles when full.
 * `finish()` returns a view of the bytes written so far.
 * Out-of-range values and over-long strings throw `ProtocolEncodeError`.
 */
export class Writer {
  buf: Buffer;
  offset = 0;
  /** Buffers written by reference instead of copied (see `byReference`). */
  private refs: Set<Buffer> | undefined;
  private refAt: Array<{ at: number; data: Buffer }> = [];

  constructor(initialCapacity = 512) {
    this.buf = Buffer.allocUnsafe(Math.max(16, initialCapacity));
  }

  get length(): number {
    return this.offset;
  }

  /** Makes room for `n` more bytes. */
  ensure(n: number): void {
    if (this.offset + n > this.buf.length) this.grow(n);
  }

  private grow(n: number): void {
    let cap = this.buf.length * 2;
    while (cap < this.offset + n) cap *= 2;
    const next = Buffer.allocUnsafe(cap);
    this.buf.copy(next, 0, 0, this.offset);
    this.buf = next;
  }

  /** The bytes written so far (a view; valid until the next write or `reset`). */
  finish(): Buffer {
    return this.buf.subarray(0, this.offset);
  }

  /** A copy of the bytes written so far. */
  toBuffer(): Buffer {
    return Buffer.from(this.buf.subarray(0, this.offset));
  }

  reset(): void {
    this.offset = 0;
    this.refAt = [];
  }

  /**
   * Marks buffers that `writeRaw` (and so bytes/records fields) must not copy: they are kept by
   * reference and `finishChunks()` returns the output as [bytes, ref, bytes, ref, …, bytes], ready
   * for a vectored socket write. Fetch uses it so record data is copied once, file to memory.
   */
  byReference(data: Buffer): void {
    (this.refs ??= new Set()).add(data);
  }

  /** Total output length, referenced buffers included. */
  get totalLength(): number {
    let n = this.offset;
    for (const r of this.refAt) n += r.data.length;
    return n;
  }

  /** The output as chunks (views of this writer's buffer interleaved with the referenced buffers). */
  finishChunks(): Buffer[] {
    const out: Buffer[] = [];
    let prev = 0;
    for (const r of this.refAt) {
      if (r.at > prev) out.push(this.buf.subarray(prev, r.at));
      if (r.data.length > 0) out.push(r.data);
      prev = r.at;
    }
    out.push(this.buf.subarray(prev, this.offset));
    return out;
  }

  // ---- fixed-width -------------------------------------------------------------------------

  writeBool(v: boolean): void {
    this.ensure(1);
    this.buf[this.offset++] = v ? 1 : 0;
  }

  writeInt8(v: number): void {
    if ((v << 24) >> 24 !== v) throw new ProtocolEncodeError(`int8 out of range: ${v}`);
    this.ensure(1);
    this.buf[this.offset++] = v & 0xff;
  }

  writeUInt8(v: number): void {
    if ((v & 0xff) !== v) throw new ProtocolEncodeError(`uint8 out of range: ${v}`);
    this.ensure(1);
    this.buf[this.offset++] = v;
  }

  writeInt16(v: number): void {
    if ((v << 16) >> 16 !== v) throw new ProtocolEncodeError(`int16 out of range: ${v}`);
    this.ensure(2);
    const b = this.buf;
    const o = this.offset;
    b[o] = (v >>> 8) & 0xff;
    b[o + 1] = v & 0xff;
    this.offset = o + 2;
  }

  writeUInt16(v: number): void {
    if ((v & 0xffff) !== v) throw new ProtocolEncodeError(`uint16 out of range: ${v}`);
    this.ensure(2);
    const b = this.buf;
    const o = this.offset;
    b[o] = v >>> 8;
    b[o + 1] = v & 0xff;
    this.offset = o + 2;
  }

  writeInt32(v: number): void {
    if ((v | 0) !== v) throw new ProtocolEncodeError(`int32 out of range: ${v}`);
    this.ensure(4);
    const b = this.buf;
    const o = this.offset;
    b[o] = v >>> 24;
    b[o + 1] = (v >>> 16) & 0xff;
    b[o + 2] = (v >>> 8) & 0xff;
    b[o + 3] = v & 0xff;
    this.offset = o + 4;
  }

  writeUInt32(v: number): void {
    if (v >>> 0 !== v) throw new ProtocolEncodeError(`uint32 out of range: ${v}`);
    this.ensure(4);
    const b = this.buf;
    const o = this.offset;
    b[o] = v >>> 24;
    b[o + 1] = (v >>> 16) & 0xff;
    b[o + 2] = (v >>> 8) & 0xff;
    b[o + 3] = v & 0xff;
    this.offset = o + 4;
  }

  writeInt64(v: bigint): void {
    if (v < INT64_MIN || v > INT64_MAX) throw new ProtocolEncodeError(`int64 out of range: ${v}`);
    this.ensure(8);
    writeInt64BE(this.buf, v, this.offset);
    this.offset += 8;
  }

  writeFloat64(v: number): void {
    this.ensure(8);
    this.buf.writeDoubleBE(v, this.offset);
    this.offset += 8;
  }

  // ---- varints -----------------------------------------------------------------------------

  /** Unsigned varint of a 32-bit unsigned value. */
  writeUVarint(v: number): void {
    if (v >>> 0 !== v) throw new ProtocolEncodeError(`unsigned varint out of range: ${v}`);
    this.ensure(5);
    const b = this.buf;
    let o = this.offset;
    while (v >= 0x80) {
      b[o++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    b[o++] = v;
    this.offset = o;
  }

  /** Zigzag varint of a signed 32-bit value. */
  writeVarint(v: number): void {
    if ((v | 0) !== v) throw new ProtocolEncodeError(`varint out of range: ${v}`);
    this.writeUVarint(((v << 1) ^ (v >> 31)) >>> 0);
  }

  /** Zigzag varlong of a signed 64-bit value. */
  writeVarlong(v: bigint): void {
    if (v < INT64_MIN || v > INT64_MAX) throw new ProtocolEncodeError(`varlong out of range: ${v}`);
    if (v >= -0x8000000n && v < 0x8000000n) {
      // zigzag of a 28-bit value fits in 28 bits: the 32-bit path is exact.
      const n = Number(v);
      this.writeUVarint(((n << 1) ^ (n >> 31)) >>> 0);
      return;
    }
    let u = (v << 1n) ^ (v >> 63n);
    if (u < 0n) u += 1n << 64n;
    this.ensure(10);
    const b = this.buf;
    let o = this.offset;
    while (u >= 0x80n) {
      b[o++] = Number(u & 0x7fn) | 0x80;
      u >>= 7n;
    }
    b[o++] = Number(u);
    this.offset = o;
  }

  // ---- strings -----------------------------------------------------------------------------

  /** Writes `s` as UTF-8 at `o` (capacity already ensured for 3 bytes/char); returns the byte count. */
  private utf8At(s: string, o: number): number {
    const len = s.length;
    if (len < 64) {
      const b = this.buf;
      let i = 0;
      for (; i < len; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) break;
        b[o + i] = c;
      }
      if (i === len) return len;
    }
    return this.buf.write(s, o, 'utf8');
  }

  private checkStringBytes(n: number): void {
    if (n > MAX_STRING_BYTES) throw new ProtocolEncodeError(`string of ${n} bytes exceeds ${MAX_STRING_BYTES}`);
  }

  writeString(s: string): void {
    this.ensure(2 + s.length * 3);
    const o = this.offset;
    const n = this.utf8At(s, o + 2);
    this.checkStringBytes(n);
    this.buf[o] = n >>> 8;
    this.buf[o + 1] = n & 0xff;
    this.offset = o + 2 + n;
  }

  writeNullableString(s: string | null): void {
    if (s === null) this.writeInt16(-1);
    else this.writeString(s);
  }

  writeCompactString(s: string): void {
    const maxBytes = s.length * 3;
    if (maxBytes < 127) {
      // length+1 fits in one varint byte
      this.ensure(1 + maxBytes);
      const o = this.offset;
      const n = this.utf8At(s, o + 1);
      this.buf[o] = n + 1;
      this.offset = o + 1 + n;
      return;
    }
    const n = Buffer.byteLength(s, 'utf8');
    this.checkStringBytes(n);
    this.writeUVarint(n + 1);
    this.ensure(n);
    this.offset += this.buf.write(s, this.offset, 'utf8');
  }

  writeCompactNullableString(s: string | null): void {
    if (s === null) this.writeUVarint(0);
    else this.writeCompactString(s);
  }

  // ---- bytes -------------------------------------------------------------------------------

  writeRaw(data: Buffer): void {
    if (this.refs?.has(data)) {
      this.refAt.push({ at: this.offset, data });
      return;
    }
    const n = data.length;
    this.ensure(n);
    data.copy(this.buf, this.offset);
    this.offset += n;
  }

  writeBytes(data: Buffer): void {
    this.writeInt32(data.length);
    this.writeRaw(data);
  }

  writeNullableBytes(data: Buffer | null): void {
    if (data === null) this.writeInt32(-1);
    else this.writeBytes(data);
  }

  writeCompactBytes(data: Buffer): void {
    this.writeUVarint(data.length + 1);
    this.writeRaw(data);
  }

  writeCompactNullableBytes(data: Buffer | null): void {
    if (data === null) this.writeUVarint(0);
    else this.writeCompactBytes(data);
  }

  writeUuid(u: Buffer): void {
    if (u.length !== 16) throw new ProtocolEncodeError(`uuid must be 16 bytes, got ${u.length}`);
    this.writeRaw(u);
  }

  // ---- arrays / structs --------------------------------------------------------------------

  /** INT32 count (-1 = null). */
  writeArrayLength(n: number): void {
    this.writeInt32(n);
  }

  /** UNSIGNED_VARINT count+1 (0 = null, pass -1). */
  writeCompactArrayLength(n: number): void {
    this.writeUVarint(n + 1);
  }

  /** Nullable-struct marker: INT8 1 = present, -1 = null. */
  writeStructPresent(present: boolean): void {
    this.writeInt8(present ? 1 : -1);
  }

  // ---- tagged fields -----------------------------------------------------------------------

  /** Writes a tagged-field section holding only `fields` (e.g. preserved unknown tags). */
  writeTaggedFields(fields: readonly TaggedField[] | undefined): void {
    if (fields === undefined || fields.length === 0) {
      this.ensure(1);
      this.buf[this.offset++] = 0;
      return;
    }
    this.writeUVarint(fields.length);
    for (const f of fields) this.writeTaggedField(f);
  }

  writeTaggedField(f: TaggedField): void {
    this.writeUVarint(f.tag);
    this.writeUVarint(f.data.length);
    this.writeRaw(f.data);
  }

  /** Writes `fields[from..]` whose tag is below `tag`; returns the index of the first one not written. */
  writeTaggedFieldsBelow(fields: readonly TaggedField[], from: number, tag: number): number {
    let i = from;
    for (; i < fields.length; i++) {
      const f = fields[i]!;
      if (f.tag >= tag) break;
      this.writeTaggedField(f);
    }
    return i;
  }

  /**
   * Starts a size-prefixed region (UNSIGNED_VARINT size): reserves one byte and returns
   * a mark for `endSized`, which fixes up the prefix (shifting the body if it needs more bytes).
   */
  beginSized(): number {
    this.ensure(1);
    return this.offset++;
  }

  endSized(mark: number): void {
    const size = this.offset - mark - 1;
    if (size < 0x80) {
      this.buf[mark] = size;
      return;
    }
    let extra = 0;
    for (let v = size >>> 7; v > 0; v >>>= 7) extra++;
    this.ensure(extra);
    this.buf.copyWithin(mark + 1 + extra, mark + 1, this.offset);
    const end = this.offset + extra;
    this.offset = mark;
    this.writeUVarint(size);
    this.offset = end;
  }
}
