import { readFile, readdir, stat, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { logConfig, type LogConfig } from './config.js';
import { Log } from './log.js';
import { segmentFilePaths } from './segment.js';
import { encodeAbortedTxn } from './transaction-index.js';
import { ManualClock, batchOf, batchesIn, capturingLogger, makeTempDir } from './test-support.js';

let root: string;
let dir: string;
let cleanup: () => Promise<void>;
const clock = new ManualClock();
const opened: Log[] = [];

beforeEach(async () => {
  ({ dir: root, cleanup } = await makeTempDir());
  dir = join(root, 'events-3');
});
afterEach(async () => {
  for (const l of opened.splice(0)) if (!l.isClosed) await l.close();
  await cleanup();
});

const config = (over: Partial<LogConfig> = {}): LogConfig => logConfig({ segmentBytes: 1000, indexIntervalBytes: 100, fileDeleteDelayMs: 0, ...over });

async function openLog(extra: Partial<Parameters<typeof Log.open>[0]> = {}): Promise<Log> {
  const log = await Log.open({ dir, topicPartition: { topic: 'events', partition: 3 }, config: config(), clock, ...extra });
  opened.push(log);
  return log;
}

/** Writes `n` 2-record batches with epochs, closes the log; returns the segment base offsets. */
async function writeAndClose(n: number, epochOf = (_i: number) => 1): Promise<bigint[]> {
  const log = await openLog();
  for (let i = 0; i < n; i++) await log.appendAsLeader(batchOf(2, 40), epochOf(i));
  await log.flush();
  const bases = log.segments.map((s) => s.baseOffset);
  await log.close();
  return bases;
}

async function lastBatchesOf(log: Log): Promise<bigint[]> {
  const out: bigint[] = [];
  let next = log.logStartOffset;
  for (;;) {
    const got = batchesIn(await (await log.read(next, 1 << 20)).records.read());
    if (!got.length) return out;
    out.push(...got.map((b) => b.baseOffset));
    next = got.at(-1)!.lastOffset + 1n;
  }
}

describe('log loader', () => {
  test('log – recovery after a torn tail: truncated to the last valid batch, structured warn logged', async () => {
    const bases = await writeAndClose(10);
    expect(bases.length).toBe(2);
    const last = segmentFilePaths(dir, bases[1]!);
    const size = (await stat(last.log)).size;
    await truncate(last.log, size - 17); // cut mid-batch
    const { logger, lines } = capturingLogger();
    const log = await openLog({ logger, hadCleanShutdown: false, recoveryPoint: 0n });
    const batchSize = batchOf(2, 40).length;
    expect(log.logEndOffset).toBe(18n);
    expect(log.activeSegment.size).toBe(size - batchSize);
    const warn = lines.find((l) => l.level === 40 && l.msg === 'corruption found in log segment; truncated it to the last valid batch');
    expect(warn).toMatchObject({ topic: 'events', partition: 3, segment: last.log, bytesTruncated: batchSize - 17 });
    expect(await lastBatchesOf(log)).toEqual(Array.from({ length: 9 }, (_, i) => BigInt(i * 2)));
    expect((await log.appendAsLeader(batchOf(1, 5), 1)).firstOffset).toBe(18n);
  });

  test('log – a CRC-corrupt batch at the tail is truncated; later segments are dropped', async () => {
    const bases = await writeAndClose(20);
    expect(bases.length).toBeGreaterThan(2);
    const second = segmentFilePaths(dir, bases[1]!);
    const raw = await readFile(second.log);
    const batchSize = batchOf(2, 40).length;
    const at = raw.length - batchSize + 70; // inside the last batch's records
    raw.writeUInt8(raw.readUInt8(at) ^ 0xff, at);
    await writeFile(second.log, raw);
    const { logger, lines } = capturingLogger();
    const log = await openLog({ logger, recoveryPoint: 0n });
    expect(log.numberOfSegments).toBe(2);
    expect(log.activeSegment.baseOffset).toBe(bases[1]);
    expect(log.activeSegment.size).toBe(raw.length - batchSize);
    expect(log.logEndOffset).toBe(bases[1]! + BigInt((raw.length - batchSize) / batchSize) * 2n);
    expect(lines.some((l) => l.bytesTruncated === batchSize)).toBe(true);
    const files = await readdir(dir);
    expect(files.filter((f) => f.endsWith('.log')).length).toBe(2);
  });

  test('log – reopen after a clean shutdown skips re-validation', async () => {
    const bases = await writeAndClose(6);
    const p = segmentFilePaths(dir, bases[0]!);
    const raw = await readFile(p.log);
    raw.writeUInt8(raw.readUInt8(raw.length - 3) ^ 0xff, raw.length - 3); // a CRC failure nobody checks
    await writeFile(p.log, raw);
    const { logger, lines } = capturingLogger();
    const log = await openLog({ logger, hadCleanShutdown: true, recoveryPoint: 0n });
    expect(log.logEndOffset).toBe(12n);
    expect(log.recoveryPoint).toBe(12n);
    expect(lines.find((l) => l.msg === 'loaded log')).toMatchObject({ recoveredSegments: 0, truncatedBytes: 0 });
    await log.close();
    // The same files after an unclean shutdown are re-validated and truncated.
    const log2 = await openLog({ hadCleanShutdown: false, recoveryPoint: 0n });
    expect(log2.logEndOffset).toBe(10n);
  });

  test('log – only segments from the recovery point on are recovered', async () => {
    const bases = await writeAndClose(20);
    const first = segmentFilePaths(dir, bases[0]!);
    const raw = await readFile(first.log);
    raw.writeUInt8(raw.readUInt8(raw.length - 3) ^ 0xff, raw.length - 3);
    await writeFile(first.log, raw);
    const { logger, lines } = capturingLogger();
    const log = await openLog({ logger, hadCleanShutdown: false, recoveryPoint: bases[1]! });
    expect(log.logEndOffset).toBe(40n);
    expect(lines.find((l) => l.msg === 'loaded log')).toMatchObject({ recoveredSegments: bases.length - 1 });
    expect(log.recoveryPoint).toBe(bases[1]);
  });

  test('log – a preallocated (untrimmed) index from a crash is rebuilt; the epoch cache is re-learned', async () => {
    const bases = await writeAndClose(12, (i) => (i < 4 ? 2 : 5));
    expect(bases.length).toBe(2);
    const p = segmentFilePaths(dir, bases.at(-1)!);
    const entries = (await stat(p.index)).size / 8;
    await truncate(p.index, 4096); // zero tail, as after a crash
    await truncate(p.timeIndex, 4096);
    await writeFile(join(dir, 'leader-epoch-checkpoint'), '0\n0\n');
    const log = await openLog({ hadCleanShutdown: false, recoveryPoint: 0n });
    expect(log.activeSegment.offsetIndex.entries).toBe(entries);
    expect(log.epochs.epochEntries()).toEqual([
      { epoch: 2, startOffset: 0n },
      { epoch: 5, startOffset: 8n },
    ]);
    expect(await readFile(join(dir, 'leader-epoch-checkpoint'), 'utf8')).toBe('0\n2\n2 0\n5 8\n');
    // An inactive segment's corrupt index found after a clean shutdown is rebuilt lazily.
    await log.close();
    const q = segmentFilePaths(dir, bases[0]!);
    const goodEntries = (await stat(q.index)).size / 8;
    await truncate(q.index, 4096);
    const { logger, lines } = capturingLogger();
    const log2 = await openLog({ hadCleanShutdown: true, logger });
    expect(await lastBatchesOf(log2)).toEqual(Array.from({ length: 12 }, (_, i) => BigInt(i * 2)));
    expect(log2.segments[0]!.offsetIndex.entries).toBe(goodEntries);
    expect(lines.some((l) => l.msg === 'corrupt index found; rebuilding indexes')).toBe(true);
    expect((await stat(q.index)).size).toBe(goodEntries * 8);
  });

  test('log – leftovers: .deleted and .cleaned removed, orphan indexes removed, swap files completed', async () => {
    const bases = await writeAndClose(10);
    expect(bases.length).toBe(2);
    await writeFile(join(dir, '00000000000000000100.log.deleted'), 'x');
    await writeFile(join(dir, '00000000000000000200.log.cleaned'), 'x');
    await writeFile(join(dir, '00000000000000000300.log.swap'), 'x'); // >= min cleaned offset: incomplete split
    await writeFile(join(dir, '00000000000000000500.index'), Buffer.alloc(8)); // orphan
    // A completed compaction of segment 0 left as a swap file (its content = the old segment 0).
    const seg0 = segmentFilePaths(dir, 0n);
    await writeFile(`${seg0.log}.swap`, await readFile(seg0.log));
    await writeFile(`${seg0.index}.swap`, Buffer.alloc(0));
    const log = await openLog({ hadCleanShutdown: true });
    const files = (await readdir(dir)).sort();
    expect(files.filter((f) => /\.(deleted|cleaned|swap)$/.test(f))).toEqual([]);
    expect(files).not.toContain('00000000000000000500.index');
    expect(files).toContain('00000000000000000000.log');
    expect(log.logEndOffset).toBe(20n);
    expect(await lastBatchesOf(log)).toEqual(Array.from({ length: 10 }, (_, i) => BigInt(i * 2)));
  });

  test('log – a .txnindex swap file is renamed into place (it cannot be rebuilt from the log); an orphan .txnindex is removed', async () => {
    await writeAndClose(10);
    const seg0 = segmentFilePaths(dir, 0n);
    const entry = encodeAbortedTxn({ producerId: 9n, firstOffset: 0n, lastOffset: 3n, lastStableOffset: 4n });
    await writeFile(seg0.txnIndex, Buffer.alloc(0)); // the replaced segment's (empty) index
    await writeFile(`${seg0.log}.swap`, await readFile(seg0.log));
    await writeFile(`${seg0.txnIndex}.swap`, entry);
    await writeFile(join(dir, '00000000000000000500.txnindex'), entry); // orphan
    const log = await openLog({ hadCleanShutdown: true });
    const files = await readdir(dir);
    expect(files).not.toContain('00000000000000000500.txnindex');
    expect(files.filter((f) => f.endsWith('.swap'))).toEqual([]);
    expect(await readFile(seg0.txnIndex)).toEqual(entry);
    expect(await log.collectAbortedTransactions(0n, 100n)).toEqual([{ producerId: 9n, firstOffset: 0n, lastOffset: 3n, lastStableOffset: 4n }]);
  });

  test('log – a checkpointed log start offset beyond the log end starts the log afresh there', async () => {
    await writeAndClose(4);
    const log = await openLog({ hadCleanShutdown: true, logStartOffset: 100n });
    expect(log.logStartOffset).toBe(100n);
    expect(log.logEndOffset).toBe(100n);
    expect(log.numberOfSegments).toBe(1);
    expect(log.activeSegment.baseOffset).toBe(100n);
  });
});
