/**
 * Test-only helpers for the log layer: v2 batches built with `@samsa/protocol`'s encoder, temp
 * directories, a manual clock and a capturing pino logger. Not in the package's main entry: tests
 * of other packages reach them through `@samsa/storage/testing`.
 */
import { mkdtemp, readdir, readlink, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import { CompressionType, TimestampType, encodeRecordBatch } from '@samsa/protocol';
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
  compression?: CompressionType;
  logAppendTime?: boolean;
}

/** Encodes one v2 batch with `@samsa/protocol`'s encoder (valid CRC). */
export function buildBatch(b: TestBatch): Buffer {
  return encodeRecordBatch({
    records: b.records.map((r) => ({ key: r.key ?? null, value: r.value ?? null, ...(r.timestamp !== undefined ? { timestamp: r.timestamp } : {}) })),
    baseOffset: b.baseOffset ?? 0n,
    partitionLeaderEpoch: b.partitionLeaderEpoch ?? -1,
    baseTimestamp: b.baseTimestamp ?? b.records[0]?.timestamp ?? 1_700_000_000_000,
    compression: b.compression ?? CompressionType.NONE,
    timestampType: b.logAppendTime ? TimestampType.LOG_APPEND_TIME : TimestampType.CREATE_TIME,
  });
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
  for (let pos = 0; pos + 61 <= buf.length;) {
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

/** Files under `dir` this process holds a descriptor of (from /proc/self/fd, Linux), sorted. */
export async function openFilesUnder(dir: string, suffixes: readonly string[] = ['.index', '.timeindex']): Promise<string[]> {
  const real = await realpath(dir);
  const out: string[] = [];
  for (const fd of await readdir('/proc/self/fd')) {
    const target = await readlink(`/proc/self/fd/${fd}`).catch(() => '');
    if (target.startsWith(`${real}/`) && suffixes.some((s) => target.endsWith(s))) out.push(target);
  }
  return out.sort();
}
