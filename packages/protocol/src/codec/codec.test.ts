import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Reader } from './reader.js';
import { Writer, writeInt64BE, writeSafeInt64BE } from './writer.js';
import { ProtocolDecodeError, ProtocolEncodeError } from './errors.js';
import { ZERO_UUID, isZeroUuid, uuidFromBase64, uuidToBase64 } from './types.js';

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');
const bytesOf = (f: (w: Writer) => void) => {
  const w = new Writer(16);
  f(w);
  return w.toBuffer();
};
const decodeErr = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(ProtocolDecodeError);
    return e as ProtocolDecodeError;
  }
  throw new Error('expected a ProtocolDecodeError');
};

describe('codec', () => {
  it('codec – fixed-width integers round-trip at their limits', () => {
    const w = new Writer(4);
    w.writeBool(true);
    w.writeInt8(-128);
    w.writeInt16(-32768);
    w.writeUInt16(65535);
    w.writeInt32(-2147483648);
    w.writeUInt32(4294967295);
    w.writeInt64(-(2n ** 63n));
    w.writeInt64(2n ** 63n - 1n);
    w.writeFloat64(-1.5);
    const r = new Reader(w.finish());
    expect(r.readBool()).toBe(true);
    expect(r.readInt8()).toBe(-128);
    expect(r.readInt16()).toBe(-32768);
    expect(r.readUInt16()).toBe(65535);
    expect(r.readInt32()).toBe(-2147483648);
    expect(r.readUInt32()).toBe(4294967295);
    expect(r.readInt64()).toBe(-(2n ** 63n));
    expect(r.readInt64()).toBe(2n ** 63n - 1n);
    expect(r.readFloat64()).toBe(-1.5);
    expect(r.remaining).toBe(0);
  });

  it('codec – big-endian layout matches the wire format', () => {
    expect(bytesOf((w) => w.writeInt16(0x1234))).toEqual(hex('1234'));
    expect(bytesOf((w) => w.writeInt32(-2))).toEqual(hex('fffffffe'));
    expect(bytesOf((w) => w.writeInt64(1n))).toEqual(hex('0000000000000001'));
  });

  it('codec – int64 writes without BigInt arithmetic give the bytes Buffer.writeBigInt64BE gives', () => {
    const reference = (v: bigint) => {
      const b = Buffer.alloc(8);
      b.writeBigInt64BE(v);
      return b;
    };
    const edges = [
      0n,
      1n,
      -1n,
      -2n,
      0xffffffffn,
      0x100000000n,
      -0x100000000n,
      2n ** 53n - 1n,
      -(2n ** 53n - 1n),
      2n ** 53n,
      -(2n ** 53n),
      2n ** 63n - 1n,
      -(2n ** 63n),
    ];
    const check = (v: bigint) => {
      const b = Buffer.alloc(8);
      writeInt64BE(b, v, 0);
      expect(b).toEqual(reference(v));
      if (v >= -(2n ** 53n - 1n) && v <= 2n ** 53n - 1n) {
        const c = Buffer.alloc(8);
        writeSafeInt64BE(c, Number(v), 0);
        expect(c).toEqual(reference(v));
      }
    };
    for (const v of edges) check(v);
    fc.assert(fc.property(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), (v) => check(v)));
    fc.assert(fc.property(fc.maxSafeInteger(), (n) => check(BigInt(n))));
  });

  it('codec – out-of-range writes throw ProtocolEncodeError', () => {
    const w = new Writer();
    expect(() => w.writeInt8(128)).toThrow(ProtocolEncodeError);
    expect(() => w.writeInt16(40000)).toThrow(ProtocolEncodeError);
    expect(() => w.writeInt32(2 ** 31)).toThrow(ProtocolEncodeError);
    expect(() => w.writeInt32(1.5)).toThrow(ProtocolEncodeError);
    expect(() => w.writeUInt32(-1)).toThrow(ProtocolEncodeError);
    expect(() => w.writeInt64(2n ** 63n)).toThrow(ProtocolEncodeError);
    expect(() => w.writeUVarint(-1)).toThrow(ProtocolEncodeError);
    expect(() => w.writeUuid(Buffer.alloc(15))).toThrow(ProtocolEncodeError);
    expect(() => w.writeString('x'.repeat(0x8000))).toThrow(ProtocolEncodeError);
    expect(() => w.writeCompactString('x'.repeat(0x8000))).toThrow(ProtocolEncodeError);
  });

  it('codec – unsigned varint encodings and edge values', () => {
    const cases: [number, string][] = [
      [0, '00'],
      [1, '01'],
      [127, '7f'],
      [128, '8001'],
      [300, 'ac02'],
      [16383, 'ff7f'],
      [16384, '808001'],
      [2 ** 21 - 1, 'ffff7f'],
      [2 ** 21, '80808001'],
      [2 ** 28 - 1, 'ffffff7f'],
      [2 ** 28, '8080808001'],
      [2 ** 31, '8080808008'],
      [2 ** 32 - 1, 'ffffffff0f'],
    ];
    for (const [v, h] of cases) {
      const b = bytesOf((w) => w.writeUVarint(v));
      expect(b.toString('hex'), String(v)).toBe(h);
      const r = new Reader(b);
      expect(r.readUVarint()).toBe(v);
      expect(r.remaining).toBe(0);
    }
  });

  it('codec – varint round-trips (zigzag int32)', () => {
    const cases: [number, string][] = [
      [0, '00'],
      [-1, '01'],
      [1, '02'],
      [-2, '03'],
      [63, '7e'],
      [-64, '7f'],
      [64, '8001'],
      [2147483647, 'feffffff0f'],
      [-2147483648, 'ffffffff0f'],
    ];
    for (const [v, h] of cases) {
      const b = bytesOf((w) => w.writeVarint(v));
      expect(b.toString('hex'), String(v)).toBe(h);
      expect(new Reader(b).readVarint()).toBe(v);
    }
    fc.assert(
      fc.property(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), (v) => {
        const r = new Reader(bytesOf((w) => w.writeVarint(v)));
        return r.readVarint() === v && r.remaining === 0;
      }),
    );
  });

  it('codec – varlong round-trips (zigzag int64)', () => {
    const cases: [bigint, string][] = [
      [0n, '00'],
      [-1n, '01'],
      [1n, '02'],
      [2n ** 27n - 1n, 'feffff7f'],
      [-(2n ** 27n), 'ffffff7f'],
      [2n ** 27n, '8080808001'],
      [2n ** 31n, '8080808010'],
      [2n ** 63n - 1n, 'feffffffffffffffff01'],
      [-(2n ** 63n), 'ffffffffffffffffff01'],
    ];
    for (const [v, h] of cases) {
      const b = bytesOf((w) => w.writeVarlong(v));
      expect(b.toString('hex'), String(v)).toBe(h);
      const r = new Reader(b);
      expect(r.readVarlong()).toBe(v);
      expect(r.remaining).toBe(0);
    }
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), (v) => {
        const r = new Reader(bytesOf((w) => w.writeVarlong(v)));
        return r.readVarlong() === v && r.remaining === 0;
      }),
    );
  });

  it('codec – malformed and truncated varints throw ProtocolDecodeError', () => {
    expect(decodeErr(() => new Reader(hex('')).readUVarint()).offset).toBe(0);
    expect(decodeErr(() => new Reader(hex('8080')).readUVarint()).offset).toBe(2);
    // 5th byte may only carry 4 bits
    expect(decodeErr(() => new Reader(hex('ffffffff1f')).readUVarint()).message).toMatch(/32 bits/);
    expect(decodeErr(() => new Reader(hex('ffffffffffffffffffff')).readVarint()).message).toMatch(/32 bits/);
    // 10th byte may only carry 1 bit
    expect(decodeErr(() => new Reader(hex('ffffffffffffffffff02')).readVarlong()).message).toMatch(/64 bits/);
    decodeErr(() => new Reader(hex('ffffffff')).readVarlong());
  });

  it('codec – classic and compact strings, nullable forms', () => {
    const w = new Writer(8);
    w.writeString('');
    w.writeString('héllo ✓');
    w.writeNullableString(null);
    w.writeCompactString('');
    w.writeCompactString('kafka');
    w.writeCompactNullableString(null);
    w.writeCompactNullableString('😀');
    const long = 'é'.repeat(100); // 200 bytes: two-byte length prefix
    w.writeCompactString(long);
    const r = new Reader(w.finish());
    expect(r.readString()).toBe('');
    expect(r.readString()).toBe('héllo ✓');
    expect(r.readNullableString()).toBeNull();
    expect(r.readCompactString()).toBe('');
    expect(r.readCompactString()).toBe('kafka');
    expect(r.readCompactNullableString()).toBeNull();
    expect(r.readCompactNullableString()).toBe('😀');
    expect(r.readUVarint()).toBe(201);
    expect(r.readRaw(200).toString('utf8')).toBe(long);
    expect(r.remaining).toBe(0);

    expect(bytesOf((w) => w.writeString('ab'))).toEqual(hex('00026162'));
    expect(bytesOf((w) => w.writeNullableString(null))).toEqual(hex('ffff'));
    expect(bytesOf((w) => w.writeCompactString('ab'))).toEqual(hex('036162'));
    expect(bytesOf((w) => w.writeCompactNullableString(null))).toEqual(hex('00'));
    expect(bytesOf((w) => w.writeCompactNullableString(''))).toEqual(hex('01'));
  });

  it('codec – compact nullable round-trips for random strings and bytes', () => {
    fc.assert(
      fc.property(fc.option(fc.string({ unit: 'grapheme', maxLength: 80 })), fc.option(fc.uint8Array({ maxLength: 300 })), (s, b) => {
        const w = new Writer(4);
        w.writeCompactNullableString(s);
        w.writeNullableString(s);
        const buf = b === null ? null : Buffer.from(b);
        w.writeCompactNullableBytes(buf);
        w.writeNullableBytes(buf);
        const r = new Reader(w.finish());
        expect(r.readCompactNullableString()).toBe(s);
        expect(r.readNullableString()).toBe(s);
        expect(r.readCompactNullableBytes()).toEqual(buf);
        expect(r.readNullableBytes()).toEqual(buf);
        expect(r.remaining).toBe(0);
      }),
    );
  });

  it('codec – null in non-nullable forms is a decode error', () => {
    decodeErr(() => new Reader(hex('ffff')).readString());
    decodeErr(() => new Reader(hex('00')).readCompactString());
    decodeErr(() => new Reader(hex('ffffffff')).readBytes());
    decodeErr(() => new Reader(hex('00')).readCompactBytes());
    decodeErr(() => new Reader(hex('fffe')).readNullableString());
    decodeErr(() => new Reader(hex('fffffffe')).readNullableBytes());
    decodeErr(() => new Reader(hex('ffffffff')).readArrayLength(1, false));
    decodeErr(() => new Reader(hex('00')).readCompactArrayLength(1, false));
    expect(new Reader(hex('ffffffff')).readArrayLength(1, true)).toBe(-1);
    expect(new Reader(hex('00')).readCompactArrayLength(1, true)).toBe(-1);
  });

  it('codec – bytes are zero-copy views, uuids are copies', () => {
    const frame = hex('00000003 616263' + '00112233445566778899aabbccddeeff');
    const r = new Reader(frame);
    const b = r.readBytes();
    const u = r.readUuid();
    frame[4] = 0x7a;
    frame[7] = 0x01;
    expect(b.toString()).toBe('zbc');
    expect(b.buffer).toBe(frame.buffer);
    expect(u.toString('hex')).toBe('00112233445566778899aabbccddeeff');
    expect(isZeroUuid(ZERO_UUID)).toBe(true);
    expect(isZeroUuid(u)).toBe(false);
    expect(uuidFromBase64(uuidToBase64(u))).toEqual(u);
  });

  it('codec – lengths beyond the remaining bytes are rejected before allocating', () => {
    const e = decodeErr(() => new Reader(hex('7fffffff 00')).readArrayLength(4, false));
    expect(e.offset).toBe(0);
    expect(e.message).toMatch(/array length 2147483647/);
    decodeErr(() => new Reader(hex('ffffffff0f')).readCompactArrayLength(1, false));
    decodeErr(() => new Reader(hex('0005 6162')).readString());
    decodeErr(() => new Reader(hex('06 6162')).readCompactString());
    decodeErr(() => new Reader(hex('00000010 00')).readBytes());
    decodeErr(() => new Reader(hex('ffffffff0f')).readTaggedFieldCount());
    decodeErr(() => new Reader(hex('0011')).readUuid());
    // every element needs at least one byte even when the declared minimum is 0
    decodeErr(() => new Reader(hex('00000003 0000')).readArrayLength(0, false));
  });

  it('codec – truncated fixed-width reads say what and where', () => {
    const r = new Reader(hex('000000'));
    r.readInt8();
    const e = decodeErr(() => r.readInt32());
    expect(e.offset).toBe(1);
    expect(e.message).toBe('truncated int32: need 4 bytes, 2 remaining at offset 1');
    expect(e.withContext('X v1').message).toBe('X v1: truncated int32: need 4 bytes, 2 remaining at offset 1');
  });

  it('codec – tagged fields: sections, unknown tags preserved, limits enforced', () => {
    const big = Buffer.alloc(20000, 7); // size needs a 3-byte varint
    const w = new Writer(8);
    w.writeUVarint(3);
    w.writeUVarint(1);
    let s = w.beginSized();
    w.writeCompactString('x');
    w.endSized(s);
    w.writeUVarint(5);
    s = w.beginSized();
    w.writeRaw(Buffer.alloc(200, 1)); // 2-byte size
    w.endSized(s);
    w.writeUVarint(9);
    s = w.beginSized();
    w.writeRaw(big);
    w.endSized(s);
    w.writeInt8(42);
    const buf = w.toBuffer();

    const r = new Reader(buf);
    const fields = r.readTaggedFields();
    expect(fields?.map((f) => [f.tag, f.data.length])).toEqual([
      [1, 2],
      [5, 200],
      [9, 20000],
    ]);
    expect(fields?.[2]?.data.equals(big)).toBe(true);
    expect(r.readInt8()).toBe(42);

    const r2 = new Reader(buf);
    r2.skipTaggedFields();
    expect(r2.readInt8()).toBe(42);

    // re-emitting preserves the bytes
    const w2 = new Writer();
    w2.writeTaggedFields(fields);
    w2.writeInt8(42);
    expect(w2.finish().equals(buf)).toBe(true);
    expect(bytesOf((w) => w.writeTaggedFields(undefined))).toEqual(hex('00'));

    // writeTaggedFieldsBelow merges in tag order
    const w3 = new Writer();
    const list = [
      { tag: 0, data: hex('aa') },
      { tag: 4, data: hex('bb') },
    ];
    let i = w3.writeTaggedFieldsBelow(list, 0, 2);
    expect(i).toBe(1);
    w3.writeUVarint(2);
    w3.writeUVarint(0);
    i = w3.writeTaggedFieldsBelow(list, i, 0x100000000);
    expect(i).toBe(2);
    expect(w3.finish()).toEqual(hex('0001aa 0200 0401bb'));

    // a known tagged field must consume exactly its size
    const r3 = new Reader(hex('01 00 03 01 02 03'));
    expect(r3.readTaggedFieldCount()).toBe(1);
    expect(r3.readUVarint()).toBe(0);
    const prev = r3.pushLimit(r3.readUVarint());
    expect(r3.readInt16()).toBe(0x0102);
    decodeErr(() => r3.readInt16()); // limited to the field
    expect(decodeErr(() => r3.popLimit(prev, 0)).message).toMatch(/tagged field 0 has 1 unread bytes/);
    decodeErr(() => new Reader(hex('01 00 05 00')).readTaggedFields());
    decodeErr(() => new Reader(hex('01 00 05 00')).skipTaggedFields());
  });

  it('codec – the writer grows and endSized shifts large bodies correctly', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 40000 }), fc.integer({ min: 0, max: 300 }), (n, pre) => {
        const w = new Writer(16);
        w.writeRaw(Buffer.alloc(pre, 9));
        const s = w.beginSized();
        const body = Buffer.alloc(n);
        for (let i = 0; i < n; i++) body[i] = i & 0xff;
        w.writeRaw(body);
        w.endSized(s);
        const r = new Reader(w.finish());
        r.readRaw(pre);
        expect(r.readUVarint()).toBe(n);
        expect(r.readRaw(n).equals(body)).toBe(true);
        expect(r.remaining).toBe(0);
      }),
      { numRuns: 50 },
    );
  });

  it('codec – nullable struct marker', () => {
    expect(new Reader(hex('01')).readStructPresent()).toBe(true);
    expect(new Reader(hex('ff')).readStructPresent()).toBe(false);
    decodeErr(() => new Reader(hex('02')).readStructPresent());
    expect(bytesOf((w) => (w.writeStructPresent(true), w.writeStructPresent(false)))).toEqual(hex('01ff'));
  });

  it('codec – reader respects a sub-range of the buffer', () => {
    const r = new Reader(hex('0102030405'), 1, 3);
    expect(r.readInt16()).toBe(0x0203);
    decodeErr(() => r.readInt8());
    expect(() => new Reader(hex('00'), 0, 2)).toThrow(RangeError);
  });
});

describe('codec – writer by reference', () => {
  it('codec – buffers marked by reference are not copied and chunks reassemble the same bytes', () => {
    const big = Buffer.from('record-bytes-here');
    const a = new Writer(8);
    a.writeInt32(7);
    a.writeNullableBytes(big);
    a.writeInt16(3);
    const b = new Writer(8);
    b.byReference(big);
    b.writeInt32(7);
    b.writeNullableBytes(big);
    b.writeInt16(3);
    const chunks = b.finishChunks();
    expect(chunks.some((c) => c === big)).toBe(true);
    expect(b.totalLength).toBe(a.length);
    expect(Buffer.concat(chunks).equals(a.finish())).toBe(true);
  });
});
