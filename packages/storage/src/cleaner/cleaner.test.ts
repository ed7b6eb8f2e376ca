import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { CompressionType } from '@samsa/protocol';
import { logConfig, type LogConfig } from '../config.js';
import { Log } from '../log.js';
import { ManualClock, makeTempDir } from '../test-support.js';
import { groupSegmentsBySize } from './cleaner.js';
import { LogCleaningAbortedError } from './cleaner-types.js';
import { cleanLog, keyedBatch, makeCleaner, readLog, type KeyedBatchOptions, type KeyedRecord, type ReadRecord } from './test-support.js';

let dir: string;
let cleanup: () => Promise<void>;
let clock: ManualClock;
const open: Log[] = [];
beforeEach(async () => {
  ({ dir, cleanup } = await makeTempDir('samsa-cleaner-'));
  clock = new ManualClock(1_700_000_000_000);
});
afterEach(async () => {
  for (const l of open.splice(0)) await l.close();
  await cleanup();
});

async function openLog(over: Partial<LogConfig> = {}): Promise<Log> {
  const log = await Log.open({
    dir: join(dir, 'compacted-0'),
    topicPartition: { topic: 'compacted', partition: 0 },
    config: logConfig({ compact: true, segmentBytes: 2048, indexIntervalBytes: 256, fileDeleteDelayMs: 0, retentionMs: -1, ...over }),
    clock,
  });
  open.push(log);
  return log;
}

/** Appends one batch and returns the offsets given to its records; the high watermark follows. */
async function append(log: Log, records: readonly KeyedRecord[], o: KeyedBatchOptions = {}): Promise<bigint[]> {
  const info = await log.appendAsLeader(keyedBatch(records, { timestamp: clock.now(), ...o }), 0);
  log.updateHighWatermark(log.logEndOffset);
  return records.map((_, i) => info.firstOffset + BigInt(i));
}

/** `rounds` rounds of one batch with a value for each of `keys` keys. */
async function writeRounds(log: Log, rounds: number, keys: number, o: KeyedBatchOptions = {}): Promise<Map<bigint, KeyedRecord>> {
  const written = new Map<bigint, KeyedRecord>();
  for (let r = 0; r < rounds; r++) {
    const recs = Array.from({ length: keys }, (_, k) => ({ key: `k${k}`, value: `v${r}-${k}` }));
    const offsets = await append(log, recs, o);
    offsets.forEach((off, i) => written.set(off, recs[i] as KeyedRecord));
  }
  return written;
}

/**
 * What a consumer must see after cleaning up to `cleanedUpTo`: below it, only the latest record of
 * each key (tombstones included while kept); from it on, everything.
 */
function expectedAfterClean(written: Map<bigint, KeyedRecord>, cleanedUpTo: bigint): Array<[bigint, string | null, string | null]> {
  const latest = new Map<string, bigint>();
  for (const [off, r] of written) if (off < cleanedUpTo && r.key !== null) latest.set(r.key, off);
  return [...written.entries()]
    .filter(([off, r]) => off >= cleanedUpTo || (r.key !== null && latest.get(r.key) === off))
    .sort((a, b) => (a[0] < b[0] ? -1 : 1))
    .map(([off, r]) => [off, r.key, r.value]);
}

const triples = (rs: readonly ReadRecord[]): Array<[bigint, string | null, string | null]> => rs.map((r) => [r.offset, r.key, r.value]);

describe('cleaner', () => {
  test('cleaner – keeps the latest record per key at its original offset and never touches the active segment', async () => {
    const log = await openLog({ segmentBytes: 1024 });
    const written = await writeRounds(log, 30, 10);
    expect(log.numberOfSegments).toBeGreaterThan(5);
    const active = log.activeSegment;
    const activeBytes = await readFile(active.log.path);
    const before = await readLog(log);

    const r = await cleanLog(makeCleaner(clock), log, clock);
    expect(r.endOffset).toBe(active.baseOffset);
    const after = await readLog(log);
    expect(triples(after.records)).toEqual(expectedAfterClean(written, active.baseOffset));
    expect(after.records.length).toBeLessThan(before.records.length / 2);
    // offsets only go up and every record kept is the one written at that offset
    for (let i = 1; i < after.records.length; i++) expect(after.records[i]!.offset).toBeGreaterThan(after.records[i - 1]!.offset);
    for (const rec of after.records) expect(rec.headers).toEqual([`h=${rec.key}`]);
    expect(after.batches.every((b) => b.crcValid)).toBe(true);
    // the active segment is the same object with the same bytes; the log end did not move
    expect(log.activeSegment).toBe(active);
    expect(await readFile(active.log.path)).toEqual(activeBytes);
    expect(log.logEndOffset).toBe(300n);
    // cleaned segments were swapped in under their final names; nothing .cleaned/.swap is left
    const files = await readdir(log.dir);
    expect(files.filter((f) => f.endsWith('.cleaned') || f.endsWith('.swap'))).toEqual([]);
    expect(r.stats.messagesRead).toBeGreaterThan(r.stats.messagesWritten);
  });

  test('cleaner – the log reloads from disk after a clean with the same records', async () => {
    const log = await openLog();
    await writeRounds(log, 20, 8);
    await cleanLog(makeCleaner(clock), log, clock);
    const cleaned = await readLog(log);
    await log.flush();
    await log.close();
    open.splice(open.indexOf(log), 1);
    const reopened = await openLog();
    expect(reopened.logEndOffset).toBe(160n);
    expect(triples((await readLog(reopened)).records)).toEqual(triples(cleaned.records));
  });

  test('cleaner – a second clean only maps the new dirty section and keeps what the first kept', async () => {
    const log = await openLog();
    const written = await writeRounds(log, 20, 10);
    const cleaner = makeCleaner(clock);
    const first = await cleanLog(cleaner, log, clock);
    for (const [off, rec] of await writeRounds(log, 20, 10)) written.set(off, rec);
    const second = await cleanLog(cleaner, log, clock, first.endOffset);
    expect(second.endOffset).toBe(log.activeSegment.baseOffset);
    expect(second.stats.mapMessagesRead).toBeLessThan(250);
    expect(triples((await readLog(log)).records)).toEqual(expectedAfterClean(written, second.endOffset));
  });

  test('cleaner – a tombstone followed by a newer value of its key goes with the older values', async () => {
    const log = await openLog({ deleteRetentionMs: 60_000 });
    const written = await writeRounds(log, 5, 6);
    const [tombOffset] = await append(log, [{ key: 'k2', value: null }]);
    written.set(tombOffset as bigint, { key: 'k2', value: null });
    for (const [off, rec] of await writeRounds(log, 10, 6)) written.set(off, rec);
    const r = await cleanLog(makeCleaner(clock), log, clock);
    const view = await readLog(log);
    expect(triples(view.records)).toEqual(expectedAfterClean(written, r.endOffset));
    const k2 = view.records.filter((rec) => rec.key === 'k2');
    expect(k2.length).toBeGreaterThan(0);
    expect(k2.every((rec) => rec.offset > (tombOffset as bigint) && rec.value !== null)).toBe(true);
  });

  test('cleaner – a tombstone is kept with a delete horizon, then dropped once the horizon has passed', async () => {
    const log = await openLog({ deleteRetentionMs: 60_000 });
    const written = await writeRounds(log, 5, 6);
    const [tombOffset] = await append(log, [{ key: 'k2', value: null }]);
    written.set(tombOffset as bigint, { key: 'k2', value: null });
    const rest = async (rounds: number): Promise<void> => {
      for (let r = 0; r < rounds; r++) {
        const recs = [0, 1, 3, 4, 5].map((k) => ({ key: `k${k}`, value: `w${r}-${k}` }));
        (await append(log, recs)).forEach((off, i) => written.set(off, recs[i] as KeyedRecord));
      }
    };
    await rest(12);
    const cleaner = makeCleaner(clock);

    const first = await cleanLog(cleaner, log, clock);
    expect(tombOffset).toBeLessThan(first.endOffset);
    let view = await readLog(log);
    expect(triples(view.records)).toEqual(expectedAfterClean(written, first.endOffset));
    const tombBatch = view.batches.find((b) => b.baseOffset <= tombOffset! && b.lastOffset >= tombOffset!);
    expect(tombBatch?.hasDeleteHorizon).toBe(true);
    expect(view.records.filter((r) => r.key === 'k2')).toEqual([expect.objectContaining({ offset: tombOffset, value: null })]);

    // before the horizon: another clean keeps it
    clock.advance(59_000);
    await rest(12);
    const second = await cleanLog(cleaner, log, clock, first.endOffset);
    view = await readLog(log);
    expect(view.records.filter((r) => r.key === 'k2').map((r) => r.offset)).toEqual([tombOffset]);

    // past the horizon: the next clean drops it; no record of k2 is left
    clock.advance(2_000);
    await rest(12);
    const third = await cleanLog(cleaner, log, clock, second.endOffset);
    view = await readLog(log);
    expect(view.records.filter((r) => r.key === 'k2')).toEqual([]);
    written.delete(tombOffset as bigint);
    expect(triples(view.records)).toEqual(expectedAfterClean(written, third.endOffset).filter(([, key]) => key !== 'k2'));
  });

  test('cleaner – delete.retention.ms=0 drops a tombstone at the second clean', async () => {
    const log = await openLog({ deleteRetentionMs: 0, segmentBytes: 512 });
    await writeRounds(log, 3, 4);
    const [tomb] = await append(log, [{ key: 'k1', value: null }]);
    const more = async (): Promise<void> => {
      for (let r = 0; r < 10; r++)
        await append(
          log,
          [0, 2, 3].map((k) => ({ key: `k${k}`, value: `x${r}` })),
        );
    };
    await more();
    const cleaner = makeCleaner(clock);
    const first = await cleanLog(cleaner, log, clock);
    expect(first.endOffset).toBeGreaterThan(tomb as bigint);
    expect((await readLog(log)).records.filter((r) => r.key === 'k1').map((r) => r.value)).toEqual([null]);
    clock.advance(1);
    await more();
    await cleanLog(cleaner, log, clock, first.endOffset);
    expect((await readLog(log)).records.filter((r) => r.key === 'k1')).toEqual([]);
  });

  test.each([
    ['gzip', CompressionType.GZIP],
    ['snappy', CompressionType.SNAPPY],
    ['lz4', CompressionType.LZ4],
    ['zstd', CompressionType.ZSTD],
  ] as const)('cleaner – %s batches are filtered and recompressed with the same codec', async (_name, codec) => {
    const log = await openLog({ segmentBytes: 1024 });
    const written = await writeRounds(log, 40, 10, { compression: codec });
    const before = (await readLog(log)).batches;
    expect(before.every((b) => b.compression === codec)).toBe(true);
    const r = await cleanLog(makeCleaner(clock), log, clock);
    const after = await readLog(log);
    expect(triples(after.records)).toEqual(expectedAfterClean(written, r.endOffset));
    const rewritten = after.batches.filter((b) => b.recordCount > 0);
    expect(rewritten.every((b) => b.compression === codec && b.crcValid)).toBe(true);
    // batches keep their offset range even when records were removed from them
    for (const b of after.batches) expect((b.lastOffset - b.baseOffset + 1n) % 10n).toBe(0n);
  });

  test('cleaner – the last batch of an active producer stays as an empty batch, older emptied batches go', async () => {
    const log = await openLog();
    const pid = 7n;
    for (let i = 0; i < 6; i++) await append(log, [{ key: 'a', value: `p${i}` }], { producerId: pid, producerEpoch: 0, baseSequence: i });
    // another producer overwrites the key, so every batch of producer 7 is emptied
    for (let i = 0; i < 40; i++)
      await append(log, [
        { key: 'a', value: `q${i}` },
        { key: `b${i % 4}`, value: 'x' },
      ]);
    const r = await cleanLog(makeCleaner(clock), log, clock);
    const view = await readLog(log);
    const ofProducer = view.batches.filter((b) => b.producerId === pid);
    expect(ofProducer).toEqual([expect.objectContaining({ baseOffset: 5n, lastOffset: 5n, recordCount: 0, crcValid: true })]);
    expect(log.producerState.lastEntry(pid)?.lastSeq).toBe(5);
    // the batch ending where this round stopped is kept (maybe empty) so the last offset survives
    expect(view.batches.some((b) => b.lastOffset === r.endOffset - 1n)).toBe(true);
  });

  test('cleaner – keyless records are dropped', async () => {
    const log = await openLog();
    await append(log, [{ key: null, value: 'no-key' }]);
    const [kept] = await append(log, [{ key: 'k0', value: 'kept' }]);
    await log.roll();
    await cleanLog(makeCleaner(clock), log, clock);
    const view = await readLog(log);
    expect(triples(view.records)).toEqual([[kept, 'k0', 'kept']]);
  });

  test('cleaner – a truncation while cleaning makes the swap refuse and the cleaned files are removed', async () => {
    const log = await openLog();
    await writeRounds(log, 30, 10);
    const before = await readLog(log);
    let checks = 0;
    const cleaner = makeCleaner(clock, {
      checkDone: () => {
        // truncate the log while the offset map is built
        if (++checks === 5) void log.truncateTo(log.activeSegment.baseOffset - 5n);
      },
    });
    await expect(cleanLog(cleaner, log, clock)).rejects.toBeInstanceOf(LogCleaningAbortedError);
    const files = await readdir(log.dir);
    expect(files.filter((f) => f.endsWith('.cleaned') || f.endsWith('.swap'))).toEqual([]);
    const after = await readLog(log);
    // the truncation happened, nothing was compacted
    expect(triples(after.records)).toEqual(triples(before.records.filter((r) => r.offset < log.logEndOffset)));
  });

  test('cleaner – a reader holding a slice of a replaced segment can still read it', async () => {
    const log = await openLog({ fileDeleteDelayMs: 60_000 });
    await writeRounds(log, 30, 10);
    const slice = (await log.read(0n, 1 << 16, undefined, true)).records;
    const expected = await slice.read();
    await cleanLog(makeCleaner(clock), log, clock);
    expect((await readLog(log)).records[0]?.offset).not.toBe(0n);
    expect(await slice.read()).toEqual(expected);
    const files = await readdir(log.dir);
    expect(files.some((f) => f.endsWith('.log.deleted'))).toBe(true);
  });

  test('cleaner – a swap interrupted after .cleaned became .swap is completed when the log loads', async () => {
    const log = await openLog();
    const written = await writeRounds(log, 30, 10);
    const r = await cleanLog(makeCleaner(clock), log, clock);
    const cleaned = triples((await readLog(log)).records);
    await log.flush();
    await log.close();
    open.splice(open.indexOf(log), 1);
    // simulate a crash between the renames: the first cleaned segment is back to .swap and the
    // files it replaced are back in place (their content does not matter: the swap wins)
    const files = (await readdir(join(dir, 'compacted-0'))).filter((f) => f.endsWith('.log')).sort();
    const firstLog = files[0] as string;
    const p = join(dir, 'compacted-0', firstLog);
    await writeFile(`${p}.swap`, await readFile(p));
    await writeFile(p, Buffer.alloc(0));
    const reopened = await openLog();
    expect(triples((await readLog(reopened)).records)).toEqual(cleaned);
    expect(triples((await readLog(reopened)).records)).toEqual(expectedAfterClean(written, r.endOffset));
  });

  test('cleaner – groups consecutive segments up to segment.bytes', async () => {
    const log = await openLog({ segmentBytes: 1024 });
    await writeRounds(log, 40, 5);
    const segs = log.segments.slice(0, -1);
    const groups = groupSegmentsBySize(segs, 2048, 1 << 20, log.activeSegment.baseOffset);
    expect(groups.flat()).toEqual(segs);
    for (const g of groups) expect(g.reduce((n, s) => n + s.size, 0)).toBeLessThanOrEqual(2048);
    expect(groups.length).toBeLessThan(segs.length);
    expect(groupSegmentsBySize(segs, 1, 1 << 20, log.activeSegment.baseOffset).length).toBe(segs.length);
  });
});
