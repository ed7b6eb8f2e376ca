import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { logConfig, type LogConfig } from '../config.js';
import type { Log } from '../log.js';
import { LogManager, type LogManagerOptions } from '../manager/manager.js';
import { ManualClock, makeTempDir } from '../test-support.js';
import { DEFAULT_CLEANER_CONFIG } from './cleaner-types.js';
import type { LogCleaner } from './log-cleaner.js';
import { keyedBatch, readLog, silent } from './test-support.js';

let root: string;
let cleanup: () => Promise<void>;
const managers: LogManager[] = [];
let clock: ManualClock;
const tp = { topic: 'compacted', partition: 0 };

beforeEach(async () => {
  ({ dir: root, cleanup } = await makeTempDir('samsa-log-cleaner-'));
  clock = new ManualClock(1_700_000_000_000);
});
afterEach(async () => {
  for (const m of managers.splice(0)) await m.shutdown();
  await cleanup();
});

const compacted: Partial<LogConfig> = { compact: true, segmentBytes: 1024, fileDeleteDelayMs: 0, retentionMs: -1, minCleanableRatio: 0.5 };

async function openManager(topicConfig: Partial<LogConfig> = compacted, over: Partial<LogManagerOptions> = {}): Promise<LogManager> {
  const m = await LogManager.open({
    logDirs: [join(root, 'data')],
    brokerId: 1,
    defaultConfig: logConfig({ segmentBytes: 1024, fileDeleteDelayMs: 0, retentionMs: -1 }),
    configFor: (topic) => logConfig(topic === tp.topic ? topicConfig : { segmentBytes: 1024, fileDeleteDelayMs: 0 }),
    clock,
    logger: silent,
    cleanerConfig: { ...DEFAULT_CLEANER_CONFIG, dedupeBufferSize: 2 * 1024 * 1024, backoffMs: 20 },
    ...over,
  });
  managers.push(m);
  return m;
}

async function writeRounds(log: Log, rounds: number, keys: number, tag = 'v'): Promise<void> {
  for (let r = 0; r < rounds; r++) {
    await log.appendAsLeader(
      keyedBatch(
        Array.from({ length: keys }, (_, k) => ({ key: `k${k}`, value: `${tag}${r}-${k}` })),
        { timestamp: clock.now() },
      ),
      0,
    );
    log.updateHighWatermark(log.logEndOffset);
  }
}

async function checkpointText(m: LogManager): Promise<string> {
  return readFile(join(m.logDirs[0] as string, 'cleaner-offset-checkpoint'), 'utf8');
}

function cleanerOf(m: LogManager): LogCleaner {
  const c = m.cleaner;
  if (!c) throw new Error('no cleaner');
  return c;
}

describe('log cleaner', () => {
  test("log cleaner – cleans the filthiest compacted log and writes cleaner-offset-checkpoint in Kafka's format", async () => {
    const m = await openManager();
    const log = await m.getOrCreateLog(tp);
    const other = await m.getOrCreateLog({ topic: 'plain', partition: 0 });
    await writeRounds(log, 30, 10);
    await writeRounds(other, 30, 10);
    expect(await cleanerOf(m).cleanFilthiestLog()).toBe(true);
    const end = log.activeSegment.baseOffset;
    expect(await checkpointText(m)).toBe(`0\n1\ncompacted 0 ${end}\n`);
    const view = await readLog(log);
    expect(new Set(view.records.filter((r) => r.offset < end).map((r) => r.key)).size).toBe(view.records.filter((r) => r.offset < end).length);
    // the non-compacted log is never cleaned
    expect((await readLog(other)).records.length).toBe(300);
    // nothing dirty is left: the next pass has nothing to do
    expect(await cleanerOf(m).cleanFilthiestLog()).toBe(false);
  });

  test('log cleaner – min.cleanable.dirty.ratio decides whether a log is dirty enough', async () => {
    const m = await openManager({ ...compacted, minCleanableRatio: 0.99 });
    const log = await m.getOrCreateLog(tp);
    await writeRounds(log, 30, 10);
    const c = cleanerOf(m);
    // everything is dirty (ratio 1) but the ratio must be above 0.99
    expect(await c.cleanFilthiestLog()).toBe(true);
    const size = log.size;
    // a little more dirt: 1 new segment of many is far below 0.99
    await writeRounds(log, 4, 10);
    expect(await c.cleanFilthiestLog()).toBe(false);
    expect(log.size).toBeGreaterThan(size);
    await m.updateTopicConfig(tp.topic, logConfig({ ...compacted, minCleanableRatio: 0.01 }));
    expect(await c.cleanFilthiestLog()).toBe(true);
    expect(c.manager.dirtiestLogCleanableRatio).toBeGreaterThan(0.01);
  });

  test('log cleaner – min.compaction.lag.ms keeps records younger than the lag out of the cleaning', async () => {
    const m = await openManager({ ...compacted, minCompactionLagMs: 60_000 });
    const log = await m.getOrCreateLog(tp);
    await writeRounds(log, 30, 10);
    const c = cleanerOf(m);
    expect(await c.cleanFilthiestLog()).toBe(false);
    expect((await readLog(log)).records.length).toBe(300);
    clock.advance(60_001);
    expect(await c.cleanFilthiestLog()).toBe(true);
    expect((await readLog(log)).records.length).toBeLessThan(300);
  });

  test('log cleaner – max.compaction.lag.ms forces a clean below min.cleanable.dirty.ratio', async () => {
    const m = await openManager({ ...compacted, minCleanableRatio: 0.99, maxCompactionLagMs: 10_000 });
    const log = await m.getOrCreateLog(tp);
    await writeRounds(log, 30, 10);
    const c = cleanerOf(m);
    expect(await c.cleanFilthiestLog()).toBe(true);
    await writeRounds(log, 8, 10, 'w');
    expect(await c.cleanFilthiestLog()).toBe(false);
    clock.advance(10_001);
    expect(await c.cleanFilthiestLog()).toBe(true);
    expect(c.manager.allCleanerCheckpoints().get('compacted-0')).toBe(log.activeSegment.baseOffset);
  });

  test('log cleaner – the checkpoint survives a restart and cleaning resumes from it', async () => {
    const m = await openManager();
    let log = await m.getOrCreateLog(tp);
    await writeRounds(log, 30, 10);
    await cleanerOf(m).cleanFilthiestLog();
    const checkpoint = log.activeSegment.baseOffset;
    const before = await readLog(log);
    await m.shutdown();
    managers.splice(0);

    const m2 = await openManager();
    log = m2.getLog(tp) as Log;
    log.updateHighWatermark(log.logEndOffset);
    expect(cleanerOf(m2).manager.allCleanerCheckpoints().get('compacted-0')).toBe(checkpoint);
    // nothing new: no cleaning (it would if the checkpoint were lost: the whole log would be dirty)
    expect(await cleanerOf(m2).cleanFilthiestLog()).toBe(false);
    expect(await readLog(log)).toEqual(before);
    await writeRounds(log, 30, 10, 'w');
    const ltc = await cleanerOf(m2).manager.grabFilthiestCompactedLog(clock.now());
    expect(ltc?.firstDirtyOffset).toBe(checkpoint);
    await cleanerOf(m2).manager.doneCleaning(log, checkpoint);
    expect(await cleanerOf(m2).cleanFilthiestLog()).toBe(true);
    expect(cleanerOf(m2).manager.allCleanerCheckpoints().get('compacted-0')).toBe(log.activeSegment.baseOffset);
    const values = (await readLog(log)).records.filter((r) => r.offset < log.activeSegment.baseOffset).map((r) => r.value);
    expect(values.every((v) => v?.startsWith('w'))).toBe(true);
  });

  test('log cleaner – a truncation below the checkpoint lowers it; cleaning is paused during the truncation', async () => {
    const m = await openManager();
    const log = await m.getOrCreateLog(tp);
    await writeRounds(log, 30, 10);
    const manager = cleanerOf(m).manager;
    await cleanerOf(m).cleanFilthiestLog();
    expect(manager.allCleanerCheckpoints().get('compacted-0')).toBe(log.activeSegment.baseOffset);
    const states: string[] = [];
    const target = log.segments[1]!.baseOffset + 1n;
    const truncating = log.truncateTo(target);
    states.push(manager.cleaningState(tp));
    await truncating;
    states.push(manager.cleaningState(tp));
    expect(states).toEqual(['paused(1)', 'none']);
    expect(log.logEndOffset).toBeLessThanOrEqual(target);
    expect(manager.allCleanerCheckpoints().get('compacted-0')).toBe(log.activeSegment.baseOffset);
    expect(await checkpointText(m)).toBe(`0\n1\ncompacted 0 ${log.activeSegment.baseOffset}\n`);
  });

  test('log cleaner – a truncation waits for a cleaning in progress to abort, which leaves the checkpoint alone', async () => {
    const m = await openManager();
    const log = await m.getOrCreateLog(tp);
    await writeRounds(log, 60, 10);
    const c = cleanerOf(m);
    const cleaning = c.cleanFilthiestLog();
    // let the cleaning get going, then truncate
    while (c.manager.cleaningState(tp) !== 'in-progress') await new Promise((r) => setImmediate(r));
    await log.truncateTo(log.logEndOffset - 3n);
    expect(c.manager.cleaningState(tp)).toBe('none');
    expect(await cleaning).toBe(true);
    expect(c.manager.allCleanerCheckpoints().has('compacted-0')).toBe(false);
    expect(c.manager.isUncleanable(log)).toBe(false);
    // the next pass cleans it
    expect(await c.cleanFilthiestLog()).toBe(true);
    expect(c.manager.allCleanerCheckpoints().get('compacted-0')).toBe(log.activeSegment.baseOffset);
  });

  test('log cleaner – appends go on while a log is cleaned', async () => {
    const m = await openManager();
    const log = await m.getOrCreateLog(tp);
    await writeRounds(log, 60, 10);
    let done = false;
    const cleaning = cleanerOf(m)
      .cleanFilthiestLog()
      .then(() => (done = true));
    while (cleanerOf(m).manager.cleaningState(tp) !== 'in-progress') await new Promise((r) => setImmediate(r));
    const leo = log.logEndOffset;
    await writeRounds(log, 3, 10, 'during');
    expect(done).toBe(false);
    await cleaning;
    expect(log.logEndOffset).toBe(leo + 30n);
    const tail = (await readLog(log)).records.filter((r) => r.offset >= leo);
    expect(tail.map((r) => r.value)).toEqual(Array.from({ length: 30 }, (_, i) => `during${Math.floor(i / 10)}-${i % 10}`));
  });

  test('log cleaner – deleting a compacted partition aborts its cleaning and drops its checkpoint', async () => {
    const m = await openManager();
    const log = await m.getOrCreateLog(tp);
    await writeRounds(log, 30, 10);
    const c = cleanerOf(m);
    await c.cleanFilthiestLog();
    await writeRounds(log, 30, 10);
    const cleaning = c.cleanFilthiestLog();
    while (c.manager.cleaningState(tp) !== 'in-progress') await new Promise((r) => setImmediate(r));
    await m.asyncDelete(tp);
    await cleaning;
    expect(c.manager.cleaningState(tp)).toBe('none');
    expect(c.manager.isUncleanable(log)).toBe(false);
    expect(await checkpointText(m)).toBe('0\n0\n');
  });

  test('log cleaner – retention of a compact,delete log runs in the cleaner pass, not in the log manager pass', async () => {
    // wall-clock time: emptied cleaned segments fall back to their file's mtime for retention
    clock.time = Date.now();
    const m = await openManager({ ...compacted, retentionMs: 1000, minCleanableRatio: 0.99 });
    const log = await m.getOrCreateLog(tp);
    await writeRounds(log, 30, 10);
    m.startup();
    clock.advance(10_000);
    await writeRounds(log, 1, 10);
    const segments = log.numberOfSegments;
    expect(await m.cleanupLogs()).toBe(0);
    expect(log.numberOfSegments).toBe(segments);
    // the cleaner loop (backoff 20 ms) deletes them
    for (let i = 0; i < 500 && log.numberOfSegments > 1; i++) await new Promise((r) => setTimeout(r, 10));
    expect(log.numberOfSegments).toBe(1);
  });

  test('log cleaner – the cleaning loop started by the log manager compacts a log on its own and stops at shutdown', async () => {
    const m = await openManager();
    const log = await m.getOrCreateLog(tp);
    await writeRounds(log, 30, 10);
    m.startup();
    const c = cleanerOf(m);
    expect(await c.awaitCleaned(tp, log.activeSegment.baseOffset, 10_000)).toBe(true);
    expect(dirname(log.dir)).toBe(m.logDirs[0]);
    await m.shutdown();
    managers.splice(0);
    expect(c.isActive).toBe(false);
  });
});
