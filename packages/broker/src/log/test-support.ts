/**
 * Test-only helpers for the log layer: a minimal magic v2 batch builder (uncompressed records, or a
 * payload passed through as "compressed") and temp directories. Not exported from the package.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import { computeBatchCrc, writeInt64FromNumber } from './batch-header.js';
import type { Clock } from './config.js';

export interface TestRecord {
  key?: string | Buffer | null;
  value?: string | Buffer | null;
  /** Absolute timestamp; default the batch's baseTimestamp. */
  timestamp?: number;
}

export interface TestBatch {
  records: TestRecord[];
  baseOffset?: bigint;
  partitionLeaderEpoch?: number;
  baseTimestamp?: number;
  /** Sets attributes bits 0-2 (the payload is not actually compressed). */
  codec?: number;
  logAppendTime?: boolean;
  /** Pads the batch with a record whose value has this many bytes (to reach a size). */
  lastOffsetDelta?: number;
}

function zigzag(n: number): number {
  return n >= 0 ? n * 2 : -n * 2 - 1;
}

function varint(n: number, out: number[]): void {
  let v = zigzag(n);
  while (v >= 0x80) {
    out.push((v % 128) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
}

function bytes(v: string | Buffer | null | undefined): Buffer | null {
  if (v === null || v === undefined) return null;
  return typeof v === 'string' ? Buffer.from(v) : v;
}

/** Encodes one v2 batch with a valid CRC. */
export function buildBatch(b: TestBatch): Buffer {
  const baseTs = b.baseTimestamp ?? b.records[0]?.timestamp ?? 1_700_000_000_000;
  const recs: Buffer[] = [];
  let maxTs = baseTs;
  b.records.forEach((r, i) => {
    const ts = r.timestamp ?? baseTs;
    if (ts > maxTs) maxTs = ts;
    const body: number[] = [0];
    varint(ts - baseTs, body);
    varint(i, body);
    const k = bytes(r.key);
    const v = bytes(r.value);
    const parts: Buffer[] = [];
    varint(k ? k.length : -1, body);
    parts.push(Buffer.from(body));
    if (k) parts.push(k);
    const mid: number[] = [];
    varint(v ? v.length : -1, mid);
    parts.push(Buffer.from(mid));
    if (v) parts.push(v);
    parts.push(Buffer.from([0])); // no headers
    const rec = Buffer.concat(parts);
    const len: number[] = [];
    varint(rec.length, len);
    recs.push(Buffer.from(len), rec);
  });
  const payload = Buffer.concat(recs);
  const buf = Buffer.alloc(61 + payload.length);
  buf.writeBigInt64BE(b.baseOffset ?? 0n, 0);
  buf.writeInt32BE(buf.length - 12, 8);
  buf.writeInt32BE(b.partitionLeaderEpoch ?? -1, 12);
  buf.writeInt8(2, 16);
  buf.writeInt16BE((b.codec ?? 0) | (b.logAppendTime ? 0x08 : 0), 21);
  buf.writeInt32BE(b.lastOffsetDelta ?? Math.max(0, b.records.length - 1), 23);
  writeInt64FromNumber(buf, baseTs, 27);
  writeInt64FromNumber(buf, maxTs, 35);
  buf.writeBigInt64BE(-1n, 43);
  buf.writeInt16BE(-1, 51);
  buf.writeInt32BE(-1, 53);
  buf.writeInt32BE(b.records.length, 57);
  payload.copy(buf, 61);
  buf.writeUInt32BE(computeBatchCrc(buf, 0, buf.length), 17);
  return buf;
}

/** A batch of `count` records whose values are `valueSize` bytes each. */
export function batchOf(count: number, valueSize = 10, opts: Omit<TestBatch, 'records'> & { timestamp?: number } = {}): Buffer {
  const records: TestRecord[] = [];
  for (let i = 0; i < count; i++) {
    const r: TestRecord = { key: `k${i}`, value: Buffer.alloc(valueSize, 97 + (i % 26)) };
    if (opts.timestamp !== undefined) r.timestamp = opts.timestamp;
    records.push(r);
  }
  return buildBatch({ ...opts, records });
}

/** Splits a records buffer into its batches' (baseOffset, lastOffset, size). */
export function batchesIn(buf: Buffer): { baseOffset: bigint; lastOffset: bigint; epoch: number; size: number }[] {
  const out: { baseOffset: bigint; lastOffset: bigint; epoch: number; size: number }[] = [];
  for (let pos = 0; pos + 61 <= buf.length; ) {
    const size = buf.readInt32BE(pos + 8) + 12;
    if (pos + size > buf.length) break;
    const base = buf.readBigInt64BE(pos);
    out.push({ baseOffset: base, lastOffset: base + BigInt(buf.readInt32BE(pos + 23)), epoch: buf.readInt32BE(pos + 12), size });
    pos += size;
  }
  return out;
}

export async function makeTempDir(prefix = 'samsa-log-'): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export class ManualClock implements Clock {
  constructor(public time = 1_700_000_000_000) {}
  now(): number {
    return this.time;
  }
  advance(ms: number): void {
    this.time += ms;
  }
}

/** A pino logger that keeps parsed log lines. */
export function capturingLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const stream = {
    write(chunk: string): void {
      for (const l of chunk.split('\n')) if (l.trim()) lines.push(JSON.parse(l) as Record<string, unknown>);
    },
  };
  return { logger: pino({ level: 'debug' }, stream), lines };
}
