/**
 * Record batch compression codecs (attributes bits 0-2).
 *
 * - gzip: zlib (gzip container, as Java's GZIPOutputStream and librdkafka write it).
 * - snappy: decodes both the Xerial/snappy-java framing (what the Java client writes) and a plain raw
 *   snappy block (what librdkafka and kafkajs-snappy write). Encodes Xerial framing by default.
 * - lz4: the standard LZ4 frame format (magic 0x184D2204) with independent blocks. The "broken header
 *   checksum" variant only exists for message format v0, which Samsa does not accept (and the decoder
 *   here does not check the header checksum at all; the batch CRC covers the payload).
 * - zstd: a standard zstd frame (content size may be absent; streaming-produced frames are fine).
 *
 * All functions are synchronous; failures surface as KafkaError CORRUPT_MESSAGE.
 */
import buffer from 'node:buffer';
import { gunzipSync, gzipSync } from 'node:zlib';
import { compressSync as snappyCompress, uncompressSync as snappyUncompress } from 'snappy';
import { compressFrameSync as lz4CompressFrame, uncompressSync as lz4UncompressBlock } from 'lz4-napi';
import { compress as zstdCompress } from 'zstd-napi';
// The native binding is a CommonJS module without detectable named exports: use its default export.
import zstdBinding from 'zstd-napi/binding.js';
import { KafkaError } from '../errors.js';

export const CompressionType = {
  NONE: 0,
  GZIP: 1,
  SNAPPY: 2,
  LZ4: 3,
  ZSTD: 4,
} as const;
export type CompressionType = (typeof CompressionType)[keyof typeof CompressionType];

export const COMPRESSION_CODEC_MASK = 0x07;

const NAMES = ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const;
export type CompressionName = (typeof NAMES)[number];

export function compressionName(type: number): string {
  return NAMES[type] ?? `unknown(${type})`;
}

export function compressionFromName(name: string): CompressionType | undefined {
  const i = (NAMES as readonly string[]).indexOf(name.toLowerCase());
  return i < 0 ? undefined : (i as CompressionType);
}

export function isKnownCompression(type: number): type is CompressionType {
  return type >= 0 && type <= 4 && Number.isInteger(type);
}

/** snappy-java's stream header: 0x82 "SNAPPY" 0x00, then int32 version and int32 min-compatible version. */
export const XERIAL_MAGIC = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
const XERIAL_HEADER_SIZE = 16;
/** snappy-java's default block size. */
const XERIAL_BLOCK_SIZE = 32 * 1024;

export interface CompressOptions {
  /** Snappy framing to write: Xerial (Java client style, default) or a raw snappy block. */
  snappyFraming?: 'xerial' | 'raw';
  /** gzip level (default 6, as Java's GZIPOutputStream). */
  gzipLevel?: number;
  /** zstd level (default 3). */
  zstdLevel?: number;
}

/**
 * Default ceiling for one decompressed batch payload. Compressed input is small (max.message.bytes),
 * but a crafted payload can claim or produce gigabytes; every codec path checks this limit before or
 * while allocating.
 */
export const DEFAULT_MAX_DECOMPRESSED_BYTES = 256 * 1024 * 1024;

export interface DecompressOptions {
  /** Reject payloads that decompress to more than this many bytes (default 256 MiB). */
  maxBytes?: number;
}

function corrupt(type: number, cause: unknown): never {
  throw new KafkaError(2, `Failed to decompress ${compressionName(type)} record batch payload`, { cause });
}

export function isXerialSnappy(data: Uint8Array): boolean {
  if (data.length < XERIAL_HEADER_SIZE) return false;
  for (let i = 0; i < XERIAL_MAGIC.length; i++) if (data[i] !== XERIAL_MAGIC[i]) return false;
  return true;
}

/** A raw snappy block starts with its uncompressed length as a varint; check it before the binding allocates. */
function snappyDeclaredLength(data: Buffer): number {
  let v = 0;
  for (let i = 0; i < 5 && i < data.length; i++) {
    const b = data[i]!;
    v += (b & 0x7f) * 2 ** (7 * i);
    if ((b & 0x80) === 0) return v;
  }
  throw new Error('invalid snappy length preamble');
}

function snappyBlock(data: Buffer, maxBytes: number): Buffer {
  const declared = snappyDeclaredLength(data);
  // A snappy element expands at most ~21x (a 3-byte copy yields 64 bytes).
  if (declared > maxBytes || declared > data.length * 24 + 64) {
    throw new Error(`snappy block declares ${declared} bytes from ${data.length} compressed bytes`);
  }
  // copyOutputData avoids the (much slower) external-buffer path of the binding.
  return snappyUncompress(data, { copyOutputData: true }) as Buffer;
}

const LZ4_MAGIC = 0x184d2204;
const LZ4_BLOCK_SIZES = [0, 0, 0, 0, 64 * 1024, 256 * 1024, 1024 * 1024, 4 * 1024 * 1024];

/**
 * LZ4 frame decoder: parses the frame in JS and decodes each block with the binding's block decoder
 * (several times faster than its frame decoder, and it lets us bound the output). Linked blocks use
 * the previous 64 KiB of output as dictionary. Header, block and content checksums (xxhash32) are not
 * verified: the batch CRC-32C already covers the payload. Frames with a dictionary id are rejected.
 */
function lz4Frame(data: Buffer, maxBytes: number): Buffer {
  if (data.length < 7 || data.readUInt32LE(0) !== LZ4_MAGIC) throw new Error('not an LZ4 frame');
  const flg = data[4]!;
  const bd = data[5]!;
  if (flg >> 6 !== 1) throw new Error(`unsupported LZ4 frame version ${flg >> 6}`);
  const independent = (flg & 0x20) !== 0;
  const blockChecksum = (flg & 0x10) !== 0;
  const contentSize = (flg & 0x08) !== 0;
  const contentChecksum = (flg & 0x04) !== 0;
  if ((flg & 0x01) !== 0) throw new Error('LZ4 frames with a dictionary id are not supported');
  const maxBlock = LZ4_BLOCK_SIZES[(bd >> 4) & 0x07] ?? 0;
  if (maxBlock === 0) throw new Error(`invalid LZ4 block size code ${(bd >> 4) & 0x07}`);
  let pos = 6 + (contentSize ? 8 : 0) + 1; // + header checksum byte
  const parts: Buffer[] = [];
  let total = 0;
  let scratch: Buffer | undefined;
  for (;;) {
    if (pos + 4 > data.length) throw new Error('truncated LZ4 frame');
    const word = data.readUInt32LE(pos);
    pos += 4;
    if (word === 0) break; // end mark
    const stored = (word & 0x80000000) !== 0;
    const size = word & 0x7fffffff;
    if (size > maxBlock || pos + size > data.length) throw new Error(`invalid LZ4 block size ${size}`);
    let block: Buffer;
    if (stored) {
      block = data.subarray(pos, pos + size);
    } else {
      // The binding wants "uncompressed size (LE u32) + block"; an upper bound works as the size.
      const bound = Math.min(maxBlock, maxBytes - total);
      if (bound <= 0) throw new Error(`decompressed size exceeds ${maxBytes} bytes`);
      scratch ??= Buffer.allocUnsafe(4 + maxBlock);
      scratch.writeUInt32LE(bound, 0);
      data.copy(scratch, 4, pos, pos + size);
      const input = scratch.subarray(0, 4 + size);
      block = independent || parts.length === 0 ? lz4UncompressBlock(input) : lz4UncompressBlock(input, lz4Window(parts));
    }
    pos += size + (blockChecksum ? 4 : 0);
    total += block.length;
    if (total > maxBytes) throw new Error(`decompressed size exceeds ${maxBytes} bytes`);
    parts.push(block);
  }
  if (contentChecksum) pos += 4;
  if (pos > data.length) throw new Error('truncated LZ4 frame');
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts, total);
}

/** The last 64 KiB of output so far: the dictionary for a linked block. */
function lz4Window(parts: Buffer[]): Buffer {
  const window = 64 * 1024;
  const last = parts[parts.length - 1]!;
  if (last.length >= window || parts.length === 1) return last.subarray(Math.max(0, last.length - window));
  const tail: Buffer[] = [];
  let n = 0;
  for (let i = parts.length - 1; i >= 0 && n < window; i--) {
    tail.unshift(parts[i]!);
    n += parts[i]!.length;
  }
  const joined = Buffer.concat(tail, n);
  return joined.subarray(Math.max(0, n - window));
}

const { DCtx, dStreamOutSize, findFrameCompressedSize, getFrameContentSize } = zstdBinding;
let zstdContext: InstanceType<typeof DCtx> | undefined;
const ZSTD_STREAM_OUT = dStreamOutSize();

/**
 * zstd decompression that never trusts the frame header for allocation beyond `maxBytes`: frames that
 * declare their size are decoded in one pass after the check; others are streamed with a running limit.
 */
function zstdBounded(data: Buffer, maxBytes: number): Buffer {
  let declared = 0;
  let known = true;
  for (let frame = data; frame.length > 0;) {
    const size = getFrameContentSize(frame);
    if (size === null) {
      known = false;
      break;
    }
    declared += size;
    if (declared > maxBytes) throw new Error(`zstd frames declare ${declared} bytes, more than ${maxBytes}`);
    frame = frame.subarray(findFrameCompressedSize(frame));
  }
  zstdContext ??= new DCtx();
  if (known) {
    const out = Buffer.allocUnsafe(declared);
    const n = zstdContext.decompress(out, data);
    if (n !== declared) throw new Error(`zstd produced ${n} bytes, frames declared ${declared}`);
    return out;
  }
  const ctx = new DCtx();
  const chunks: Buffer[] = [];
  let total = 0;
  let input = data;
  let hint = 1;
  while (input.length > 0) {
    const chunk = Buffer.allocUnsafe(Math.min(Math.max(ZSTD_STREAM_OUT, input.length), maxBytes - total + 1));
    const [next, produced, consumed] = ctx.decompressStream(chunk, input);
    hint = next;
    total += produced;
    if (total > maxBytes) throw new Error(`decompressed size exceeds ${maxBytes} bytes`);
    if (produced === 0 && consumed === 0) throw new Error('zstd stream made no progress');
    chunks.push(chunk.subarray(0, produced));
    input = input.subarray(consumed);
  }
  if (hint !== 0) throw new Error('truncated zstd frame');
  return Buffer.concat(chunks, total);
}

function decodeXerial(data: Buffer, maxBytes: number): Buffer {
  const parts: Buffer[] = [];
  let total = 0;
  let pos = XERIAL_HEADER_SIZE;
  while (pos < data.length) {
    if (pos + 4 > data.length) throw new Error('truncated xerial block length');
    const len = data.readInt32BE(pos);
    pos += 4;
    if (len < 0 || pos + len > data.length) throw new Error(`invalid xerial block length ${len}`);
    const block = snappyBlock(data.subarray(pos, pos + len), maxBytes - total);
    pos += len;
    total += block.length;
    if (total > maxBytes) throw new Error(`decompressed size exceeds ${maxBytes} bytes`);
    parts.push(block);
  }
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts, total);
}

function encodeXerial(data: Buffer): Buffer {
  const parts: Buffer[] = [];
  const header = Buffer.alloc(XERIAL_HEADER_SIZE);
  XERIAL_MAGIC.copy(header, 0);
  header.writeInt32BE(1, 8);
  header.writeInt32BE(1, 12);
  parts.push(header);
  for (let pos = 0; pos < data.length; pos += XERIAL_BLOCK_SIZE) {
    const block = snappyCompress(data.subarray(pos, Math.min(data.length, pos + XERIAL_BLOCK_SIZE)));
    const len = Buffer.alloc(4);
    len.writeInt32BE(block.length, 0);
    parts.push(len, block);
  }
  return Buffer.concat(parts);
}

/** Compresses a records payload for the given codec. */
export function compress(type: CompressionType, data: Buffer, options: CompressOptions = {}): Buffer {
  switch (type) {
    case CompressionType.NONE:
      return data;
    case CompressionType.GZIP:
      return gzipSync(data, { level: options.gzipLevel ?? 6 });
    case CompressionType.SNAPPY:
      return options.snappyFraming === 'raw' ? snappyCompress(data) : encodeXerial(data);
    case CompressionType.LZ4:
      return lz4CompressFrame(data);
    case CompressionType.ZSTD:
      return zstdCompress(data, { compressionLevel: options.zstdLevel ?? 3 });
    default:
      throw new KafkaError(76, `Unknown compression type ${String(type)}`);
  }
}

/** Decompresses a records payload. Throws KafkaError CORRUPT_MESSAGE on malformed input. */
export function decompress(type: number, data: Buffer, options: DecompressOptions = {}): Buffer {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_DECOMPRESSED_BYTES;
  let out: Buffer;
  try {
    switch (type) {
      case CompressionType.NONE:
        return data;
      case CompressionType.GZIP:
        out = gunzipSync(data, { maxOutputLength: Math.min(maxBytes, buffer.constants.MAX_LENGTH) });
        break;
      case CompressionType.SNAPPY:
        out = isXerialSnappy(data) ? decodeXerial(data, maxBytes) : snappyBlock(data, maxBytes);
        break;
      case CompressionType.LZ4:
        out = lz4Frame(data, maxBytes);
        break;
      case CompressionType.ZSTD:
        out = zstdBounded(data, maxBytes);
        break;
      default:
        throw new KafkaError(2, `Unknown compression type id ${type}`);
    }
  } catch (e) {
    if (e instanceof KafkaError) throw e;
    corrupt(type, e);
  }
  if (out.length > maxBytes) {
    throw new KafkaError(2, `Decompressed ${compressionName(type)} payload exceeds ${maxBytes} bytes`);
  }
  return out;
}
