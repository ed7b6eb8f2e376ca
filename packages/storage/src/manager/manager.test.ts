import { mkdir, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { logConfig } from '../config.js';
import { InconsistentBrokerIdError, InconsistentClusterIdError, InconsistentTopicIdError } from '../errors.js';
import { CLEAN_SHUTDOWN_FILE, LogManager, parseMetaProperties, type LogManagerOptions } from './manager.js';
import { ManualClock, batchOf, capturingLogger, makeTempDir, openFilesUnder } from '../test-support.js';

let root: string;
let cleanup: () => Promise<void>;
let dirs: string[];
const managers: LogManager[] = [];
const clock = new ManualClock();

beforeEach(async () => {
  ({ dir: root, cleanup } = await makeTempDir());
  dirs = [join(root, 'a'), join(root, 'b')];
});
afterEach(async () => {
  for (const m of managers.splice(0)) await m.shutdown();
  await cleanup();
});

async function openManager(over: Partial<LogManagerOptions> = {}): Promise<LogManager> {
  const m = await LogManager.open({
    logDirs: dirs,
    brokerId: 1,
    defaultConfig: logConfig({ segmentBytes: 600, fileDeleteDelayMs: 0, retentionMs: -1 }),
    clock,
    ...over,
  });
  managers.push(m);
  return m;
}

describe('log manager', () => {
  test('log – log dirs get meta.properties; a dir of another broker id or cluster id is refused', async () => {
    const m = await openManager({ clusterId: 'abc' });
    for (const d of dirs) {
      const props = parseMetaProperties(await readFile(join(d, 'meta.properties'), 'utf8'));
      expect(Object.fromEntries(props)).toEqual({ version: '0', 'broker.id': '1', 'cluster.id': 'abc' });
    }
    await m.shutdown();
    managers.splice(0);
    await expect(LogManager.open({ logDirs: dirs, brokerId: 2, defaultConfig: logConfig() })).rejects.toBeInstanceOf(InconsistentBrokerIdError);
    await expect(LogManager.open({ logDirs: dirs, brokerId: 1, clusterId: 'other', defaultConfig: logConfig() })).rejects.toBeInstanceOf(
      InconsistentClusterIdError,
    );
    const m2 = await openManager();
    expect(m2.clusterId).toBe('abc');
  });

  test('log – cluster id learned later is written to every dir', async () => {
    const m = await openManager();
    expect(parseMetaProperties(await readFile(join(dirs[0]!, 'meta.properties'), 'utf8')).has('cluster.id')).toBe(false);
    await m.setClusterId('zk-cluster');
    for (const d of dirs) expect(parseMetaProperties(await readFile(join(d, 'meta.properties'), 'utf8')).get('cluster.id')).toBe('zk-cluster');
    await expect(m.setClusterId('another')).rejects.toBeInstanceOf(InconsistentClusterIdError);
  });

  test('log – creates logs spread over the dirs, checkpoints them, and reloads them after a clean shutdown', async () => {
    const m = await openManager();
    const logs = await Promise.all([0, 1, 2, 3].map((p) => m.getOrCreateLog({ topic: 'orders', partition: p })));
    expect(await m.getOrCreateLog({ topic: 'orders', partition: 0 })).toBe(logs[0]);
    expect(new Set(logs.map((l) => l.dir.split('/').at(-2)))).toEqual(new Set(['a', 'b']));
    for (const l of logs) for (let i = 0; i < 12; i++) await l.appendAsLeader(batchOf(2, 40), 0);
    logs[1]!.updateHighWatermark(24n);
    await logs[1]!.maybeIncrementLogStartOffset(10n);
    await m.shutdown();
    managers.splice(0);
    for (const d of dirs) {
      expect(await readdir(d)).toContain(CLEAN_SHUTDOWN_FILE);
      const rp = await readFile(join(d, 'recovery-point-offset-checkpoint'), 'utf8');
      expect(rp.split('\n')[0]).toBe('0');
      expect(rp.split('\n')[1]).toBe('2');
      for (const line of rp.trim().split('\n').slice(2)) expect(line).toMatch(/^orders [0-3] 24$/);
    }
    const lso = (await Promise.all(dirs.map((d) => readFile(join(d, 'log-start-offset-checkpoint'), 'utf8')))).join('');
    expect(lso).toContain('orders 1 10\n');

    const { logger, lines } = capturingLogger();
    const m2 = await openManager({ logger });
    expect(m2.allLogs().length).toBe(4);
    for (const d of dirs) {
      expect(m2.hadCleanShutdown(d)).toBe(true);
      expect(await readdir(d)).not.toContain(CLEAN_SHUTDOWN_FILE);
    }
    expect(m2.getLog({ topic: 'orders', partition: 2 })?.logEndOffset).toBe(24n);
    expect(m2.getLog({ topic: 'orders', partition: 1 })?.logStartOffset).toBe(10n);
    expect(lines.filter((l) => l.msg === 'loaded log').every((l) => l.recoveredSegments === 0)).toBe(true);
  });

  test('log – a new partition directory is not listed nor read: its .log is created, its index files wait for their first entry', async () => {
    const { logger, lines } = capturingLogger();
    const m = await openManager({ logger });
    const id = 'AAAAAAAAAAAAAAAAAAAAAQ';
    const quiet = await m.getOrCreateLog({ topic: 'fresh', partition: 0 }, undefined, id);
    const busy = await m.getOrCreateLog({ topic: 'fresh', partition: 1 }, logConfig({ segmentBytes: 1 << 20, indexIntervalBytes: 100 }), id);
    const idle = await m.getOrCreateLog({ topic: 'fresh', partition: 2 }, undefined, id);
    expect((await readdir(quiet.dir)).sort()).toEqual(['00000000000000000000.log']);
    await quiet.appendAsLeader(batchOf(1, 10), 0);
    expect(await readdir(quiet.dir)).toContain('partition.metadata');
    for (let i = 0; i < 5; i++) await busy.appendAsLeader(batchOf(2, 60), 0);
    await busy.flush();
    // past index.interval.bytes: the index entries created the files
    expect(await readdir(busy.dir)).toEqual(expect.arrayContaining(['00000000000000000000.index', '00000000000000000000.timeindex']));
    await m.shutdown();
    managers.splice(0);
    const m2 = await openManager({ logger });
    expect(m2.getLog({ topic: 'fresh', partition: 0 })?.logEndOffset).toBe(1n);
    expect(m2.getLog({ topic: 'fresh', partition: 1 })?.logEndOffset).toBe(10n);
    expect(await m2.topicIdOf({ topic: 'fresh', partition: 0 })).toBe(id);
    // a segment too small for an index entry without index files is expected: no warning
    expect(lines.filter((l) => l.level === 40)).toEqual([]);
    // an empty one loads its missing index files as empty indexes: a restart creates no files either
    expect(m2.getLog({ topic: 'fresh', partition: 2 })?.logEndOffset).toBe(0n);
    expect((await readdir(idle.dir)).filter((n) => n.endsWith('index'))).toEqual([]);
  });

  test('log – a partition directory that already exists (left by a crash mid-creation) is loaded, not taken as new', async () => {
    const m = await openManager({ logDirs: [dirs[0]!] });
    const dir = join(dirs[0]!, 'left-0');
    await mkdir(dir);
    await writeFile(join(dir, 'leader-epoch-checkpoint.1.1.tmp'), 'half');
    await writeFile(join(dir, 'partition.metadata'), 'version: 0\ntopic_id: BBBBBBBBBBBBBBBBBBBBBQ\n');
    await expect(m.getOrCreateLog({ topic: 'left', partition: 0 }, undefined, 'AAAAAAAAAAAAAAAAAAAAAQ')).rejects.toBeInstanceOf(InconsistentTopicIdError);
    // the loader ran: its stray temp file is gone
    expect(await readdir(dir)).not.toContain('leader-epoch-checkpoint.1.1.tmp');
  });

  test('log – maxOpenIndexFiles caps the index files open across all logs; none are open after a clean reload', async () => {
    const m = await openManager({ maxOpenIndexFiles: 3, defaultConfig: logConfig({ segmentBytes: 100_000, indexIntervalBytes: 100, retentionMs: -1 }) });
    expect(m.indexFiles.maxOpen).toBe(3);
    const logs = await Promise.all([0, 1, 2, 3, 4].map((p) => m.getOrCreateLog({ topic: 'wide', partition: p })));
    expect(await openFilesUnder(root)).toEqual([]);
    for (const l of logs) {
      for (let i = 0; i < 6; i++) await l.appendAsLeader(batchOf(2, 40), 0);
      await l.flush();
      expect((await openFilesUnder(root)).length).toBeLessThanOrEqual(3);
    }
    expect(m.indexFiles.evictions).toBeGreaterThan(0);
    await m.shutdown();
    managers.splice(0);
    expect(await openFilesUnder(root)).toEqual([]);
    const m2 = await openManager({ maxOpenIndexFiles: 3 });
    expect(m2.allLogs().length).toBe(5);
    expect(await openFilesUnder(root)).toEqual([]);
    expect(m2.getLog({ topic: 'wide', partition: 4 })?.logEndOffset).toBe(12n);
  });

  test('log – after an unclean shutdown, logs are recovered from the checkpointed recovery points', async () => {
    const m = await openManager();
    const log = await m.getOrCreateLog({ topic: 't', partition: 0 });
    for (let i = 0; i < 12; i++) await log.appendAsLeader(batchOf(2, 40), 0);
    await log.flush(10n);
    await m.checkpointRecoveryOffsets();
    // "Crash": close files without the shutdown sequence (no marker written).
    await log.close();
    managers.splice(0);
    const { logger, lines } = capturingLogger();
    const m2 = await openManager({ logger });
    expect(m2.hadCleanShutdown(dirs[0]!)).toBe(false);
    const loaded = lines.find((l) => l.msg === 'loaded log' && l.topic === 't');
    expect(loaded?.recoveredSegments).toBeGreaterThan(0);
    expect(m2.getLog({ topic: 't', partition: 0 })?.logEndOffset).toBe(24n);
  });

  test('log – asyncDelete renames the dir to <topic>-<p>.<uuid>-delete and removes it', async () => {
    const m = await openManager();
    const log = await m.getOrCreateLog({ topic: 'gone', partition: 5 });
    await log.appendAsLeader(batchOf(1, 10), 0);
    const parent = join(log.dir, '..');
    expect(await m.asyncDelete({ topic: 'gone', partition: 5 })).toBe(true);
    expect(m.getLog({ topic: 'gone', partition: 5 })).toBeUndefined();
    const names = await readdir(parent);
    expect(names.some((n) => /^gone-5\.[0-9a-f]{32}-delete$/.test(n)) || names.every((n) => !n.startsWith('gone-5'))).toBe(true);
    await m.awaitPendingDeletes();
    expect((await readdir(parent)).filter((n) => n.startsWith('gone-5'))).toEqual([]);
    expect(await m.asyncDelete({ topic: 'gone', partition: 5 })).toBe(false);
    // Leftover -delete dirs from a previous run are removed at startup.
    await mkdir(join(dirs[0]!, 'old-1.0123456789abcdef0123456789abcdef-delete'));
    await m.shutdown();
    managers.splice(0);
    const m2 = await openManager();
    await m2.awaitPendingDeletes();
    expect(await readdir(dirs[0]!)).not.toContain('old-1.0123456789abcdef0123456789abcdef-delete');
  });

  test('log – retention task deletes old segments', async () => {
    const m = await openManager({ defaultConfig: logConfig({ segmentBytes: 600, retentionBytes: 700, retentionMs: -1, fileDeleteDelayMs: 0 }) });
    const log = await m.getOrCreateLog({ topic: 'r', partition: 0 });
    for (let i = 0; i < 20; i++) await log.appendAsLeader(batchOf(2, 40), 0);
    log.updateHighWatermark(log.logEndOffset);
    const before = log.numberOfSegments;
    expect(await m.cleanupLogs()).toBeGreaterThan(0);
    expect(log.numberOfSegments).toBeLessThan(before);
  });

  test('log – partition.metadata records the topic id and rejects another', async () => {
    const m = await openManager();
    const log = await m.getOrCreateLog({ topic: 'ids', partition: 0 }, undefined, 'AAAAAAAAAAAAAAAAAAAAAQ');
    await log.appendAsLeader(batchOf(1, 10), 0);
    expect(await readFile(join(log.dir, 'partition.metadata'), 'utf8')).toBe('version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ\n');
    expect(await m.topicIdOf({ topic: 'ids', partition: 0 })).toBe('AAAAAAAAAAAAAAAAAAAAAQ');
    await expect(m.getOrCreateLog({ topic: 'ids', partition: 0 }, undefined, 'BBBBBBBBBBBBBBBBBBBBBQ')).rejects.toBeInstanceOf(InconsistentTopicIdError);
    await expect(m.getOrCreateLog({ topic: '../x', partition: 0 })).rejects.toThrow(/Illegal topic/);
  });

  test('log – a new partition goes to the log dir with the fewest partitions, counting creations in flight and deletions', async () => {
    const two = [join(dirs[0]!, 'a'), join(dirs[0]!, 'b')];
    const m = await openManager({ logDirs: two });
    const where = (log: { dir: string }) => (log.dir.startsWith(`${two[0]}/`) ? 'a' : 'b');
    // created at once: the in-flight ones count, so they spread evenly
    const first = await Promise.all([0, 1, 2, 3].map((p) => m.getOrCreateLog({ topic: 'spread', partition: p })));
    expect(first.map(where).sort()).toEqual(['a', 'a', 'b', 'b']);
    for (const log of first.filter((l) => where(l) === 'a')) await m.asyncDelete(log.topicPartition);
    // dir a now has none: the next two go there
    const next = [await m.getOrCreateLog({ topic: 'spread', partition: 4 }), await m.getOrCreateLog({ topic: 'spread', partition: 5 })];
    expect(next.map(where)).toEqual(['a', 'a']);
    expect(where(await m.getOrCreateLog({ topic: 'spread', partition: 6 }))).toBe('a');
  });

  test('log – a topic id once read or written is checked in memory, a different one still rejected', async () => {
    const m = await openManager();
    const tp = { topic: 'known', partition: 0 };
    const log = await m.getOrCreateLog(tp, undefined, 'AAAAAAAAAAAAAAAAAAAAAQ');
    await log.appendAsLeader(batchOf(1, 10), 0);
    // the file is not read (nor rewritten) for the next LeaderAndIsr of the partition
    await rm(join(log.dir, 'partition.metadata'));
    expect(await m.getOrCreateLog(tp, undefined, 'AAAAAAAAAAAAAAAAAAAAAQ')).toBe(log);
    expect(await readdir(log.dir)).not.toContain('partition.metadata');
    await expect(m.getOrCreateLog(tp, undefined, 'BBBBBBBBBBBBBBBBBBBBBQ')).rejects.toBeInstanceOf(InconsistentTopicIdError);
  });

  test("log – partition.metadata is written (fsynced) before a log's first record, not at creation; a log that never holds one has none", async () => {
    const m = await openManager({ logDirs: [dirs[0]!] });
    const id = 'AAAAAAAAAAAAAAAAAAAAAQ';
    const used = await m.getOrCreateLog({ topic: 'lazy', partition: 0 }, undefined, id);
    const unused = await m.getOrCreateLog({ topic: 'lazy', partition: 1 }, undefined, id);
    expect(await readdir(used.dir)).not.toContain('partition.metadata');
    await used.appendAsFollower(batchOf(1, 10, { baseOffset: 0n, partitionLeaderEpoch: 0 }));
    expect(await readFile(join(used.dir, 'partition.metadata'), 'utf8')).toBe(`version: 0\ntopic_id: ${id}\n`);
    // the id is still checked in memory before the file exists
    await expect(m.getOrCreateLog({ topic: 'lazy', partition: 1 }, undefined, 'BBBBBBBBBBBBBBBBBBBBBQ')).rejects.toBeInstanceOf(InconsistentTopicIdError);
    await m.shutdown();
    managers.splice(0);
    expect(await readdir(unused.dir)).not.toContain('partition.metadata');
    // after a restart: the used log's id is on disk, the empty one takes the id it is given next
    const m2 = await openManager({ logDirs: [dirs[0]!] });
    await expect(m2.getOrCreateLog({ topic: 'lazy', partition: 0 }, undefined, 'BBBBBBBBBBBBBBBBBBBBBQ')).rejects.toBeInstanceOf(InconsistentTopicIdError);
    const again = await m2.getOrCreateLog({ topic: 'lazy', partition: 1 }, undefined, 'BBBBBBBBBBBBBBBBBBBBBQ');
    await again.appendAsLeader(batchOf(1, 10), 0);
    expect(await m2.topicIdOf({ topic: 'lazy', partition: 1 })).toBe('BBBBBBBBBBBBBBBBBBBBBQ');
  });

  test('log – an empty partition.metadata (what a crash can leave of an unsynced write) counts as none', async () => {
    const m = await openManager({ logDirs: [dirs[0]!] });
    const id = 'AAAAAAAAAAAAAAAAAAAAAQ';
    const torn = join(dirs[0]!, 'torn-0');
    await mkdir(torn);
    await writeFile(join(torn, 'partition.metadata'), '');
    const log = await m.getOrCreateLog({ topic: 'torn', partition: 0 }, undefined, id);
    expect(log.dir).toBe(torn);
    await log.appendAsLeader(batchOf(1, 10), 0);
    expect(await readFile(join(torn, 'partition.metadata'), 'utf8')).toBe(`version: 0\ntopic_id: ${id}\n`);
  });

  test('log – concurrent LeaderAndIsr for a new partition write partition.metadata safely', async () => {
    const m = await openManager();
    const tp = { topic: 'racy', partition: 0 };
    const id = 'AAAAAAAAAAAAAAAAAAAAAQ';
    const logs = await Promise.all(Array.from({ length: 16 }, () => m.getOrCreateLog(tp, undefined, id)));
    expect(new Set(logs).size).toBe(1);
    await Promise.all([logs[0]!.appendAsLeader(batchOf(1, 10), 0), logs[1]!.appendAsLeader(batchOf(1, 10), 0)]);
    expect(await readFile(join(logs[0]!.dir, 'partition.metadata'), 'utf8')).toBe(`version: 0\ntopic_id: ${id}\n`);
    expect((await readdir(logs[0]!.dir)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  test('log – stray checkpoint temp files in a log dir and a partition dir are deleted at startup', async () => {
    const m = await openManager();
    const log = await m.getOrCreateLog({ topic: 'st', partition: 0 });
    const partitionDir = log.dir;
    const logDir = join(partitionDir, '..');
    await m.shutdown();
    managers.splice(0);
    await writeFile(join(logDir, 'recovery-point-offset-checkpoint.4242.7.tmp'), 'partial');
    await writeFile(join(logDir, 'meta.properties.4242.8.tmp'), 'partial');
    await writeFile(join(partitionDir, 'partition.metadata.4242.9.tmp'), 'partial');
    await writeFile(join(partitionDir, 'leader-epoch-checkpoint.4242.10.tmp'), 'partial');
    await openManager();
    expect((await readdir(logDir)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    expect((await readdir(partitionDir)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  test('log – directories that are not partitions are ignored; unreadable checkpoints fall back to full recovery', async () => {
    await mkdir(join(dirs[0]!, 'not_a_partition'), { recursive: true });
    await writeFile(join(dirs[0]!, 'recovery-point-offset-checkpoint'), 'garbage');
    const { logger, lines } = capturingLogger();
    const m = await openManager({ logger });
    expect(m.allLogs()).toEqual([]);
    expect(lines.some((l) => l.level === 40 && String(l.msg).includes('recovery-point-offset-checkpoint'))).toBe(true);
    expect((await stat(join(dirs[0]!, 'meta.properties'))).isFile()).toBe(true);
  });
});
