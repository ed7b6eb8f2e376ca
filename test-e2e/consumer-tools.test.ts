/**
 * The consumer tools against 3 real brokers: `samsa console-consumer` prints what kcat produced
 * (compared with kcat -C's own rendering), honours --partition/--offset, --include, --group
 * commits and --timeout-ms; `samsa consumer-perf-test` prints Kafka's CSV; `samsa
 * end-to-end-latency` prints Kafka's progress, average and percentiles.
 */
import { execFile, spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Admin } from '@samsa/client';
import { newTopicId } from '@samsa/zk-paths';
import { TestCluster, describeCluster, kcatConsume } from './harness.js';

const run = promisify(execFile);
const SAMSA = join(import.meta.dirname, '..', 'packages', 'cli', 'bin', 'samsa.js');

function samsa(args: string[], timeoutMs = 120_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [SAMSA, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    p.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => p.kill('SIGKILL'), timeoutMs);
    p.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describeCluster('consumer tools e2e (3 brokers)', () => {
  let c: TestCluster;
  let admin: Admin;

  beforeAll(async () => {
    c = await TestCluster.start({ brokers: 3, overrides: { 'group.initial.rebalance.delay.ms': '0' } });
    admin = new Admin({ bootstrapServers: c.bootstrap });
  }, 120_000);
  afterAll(async () => {
    await admin?.close();
    await c?.stop();
  });

  async function createTopic(topic: string, partitions: number): Promise<void> {
    await c.admin.createTopic(topic, newTopicId(), new Map(Array.from({ length: partitions }, (_, p) => [p, [p % 3, (p + 1) % 3]])), {});
    await c.waitForLeaders(topic, partitions);
  }

  async function kcatProduce(topic: string, lines: string[]): Promise<void> {
    const input = join(c.dir, `${topic}-${Date.now()}.txt`);
    await writeFile(input, lines.join('\n') + '\n');
    await run('kcat', ['-P', '-b', c.bootstrap, '-t', topic, '-K:', '-z', 'lz4', '-X', 'acks=all', '-l', input], { timeout: 60_000 });
  }

  it('console-consumer – --from-beginning --property print.key=true --max-messages prints what kcat -C prints; --group commits; "Processed a total of N messages"', async () => {
    const topic = 'cc-keys';
    await createTopic(topic, 3);
    await kcatProduce(
      topic,
      Array.from({ length: 300 }, (_, i) => `key${i}:value-${i}`),
    );
    const r = await samsa([
      'console-consumer',
      '--bootstrap-server',
      c.bootstrap,
      '--topic',
      topic,
      '--from-beginning',
      '--property',
      'print.key=true',
      '--property',
      'key.separator=|',
      '--max-messages',
      '300',
      '--group',
      'cc-group',
    ]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('Processed a total of 300 messages');
    const theirs = await kcatConsume(c.bootstrap, topic, '%k|%s\n');
    expect(r.stdout.split('\n').filter(Boolean).sort()).toEqual(theirs.split('\n').filter(Boolean).sort());
    const committed = await admin.listGroupOffsets('cc-group');
    expect(committed.reduce((n, o) => n + Number(o.offset), 0)).toBe(300);
  }, 180_000);

  it('console-consumer – --partition --offset with print.partition/print.offset; --include regex; --timeout-ms exits with Kafka’s TimeoutException line', async () => {
    const topic = 'cc-part';
    await createTopic(topic, 2);
    await kcatProduce(
      topic,
      Array.from({ length: 100 }, (_, i) => `k${i}:v${i}`),
    );
    const p1 = await kcatConsume(c.bootstrap, topic, '%p %o %s\n');
    const expected = p1
      .split('\n')
      .filter((l) => l.startsWith('1 '))
      .map((l) => l.split(' '))
      .filter(([, o]) => Number(o) >= 5)
      .map(([p, o, v]) => `Partition:${p}\tOffset:${o}\t${v}`);
    const r = await samsa([
      'console-consumer',
      '--bootstrap-server',
      c.bootstrap,
      '--topic',
      topic,
      '--partition',
      '1',
      '--offset',
      '5',
      '--property',
      'print.partition=true',
      '--property',
      'print.offset=true',
      '--timeout-ms',
      '3000',
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n').filter(Boolean)).toEqual(expected);
    expect(r.stderr).toMatch(/ERROR Error processing message, terminating consumer process: .*\norg.apache.kafka.common.errors.TimeoutException/);
    expect(r.stderr).toContain(`Processed a total of ${expected.length} messages`);
    const inc = await samsa([
      'console-consumer',
      '--bootstrap-server',
      c.bootstrap,
      '--include',
      'cc-p.*',
      '--from-beginning',
      '--max-messages',
      '100',
      '--timeout-ms',
      '20000',
    ]);
    expect(inc.stdout.split('\n').filter(Boolean).sort()).toEqual(Array.from({ length: 100 }, (_, i) => `v${i}`).sort());
  }, 180_000);

  it('consumer-perf-test – Kafka’s CSV header and a summary row for --messages records; --show-detailed-stats rows', async () => {
    const topic = 'cperf';
    await createTopic(topic, 3);
    await run(
      'kcat',
      [
        '-P',
        '-b',
        c.bootstrap,
        '-t',
        topic,
        '-X',
        'acks=1',
        '-l',
        await (async () => {
          const f = join(c.dir, 'perf.txt');
          await writeFile(f, Array.from({ length: 5000 }, (_, i) => `m${i}-${'x'.repeat(90)}`).join('\n') + '\n');
          return f;
        })(),
      ],
      { timeout: 60_000 },
    );
    const r = await samsa([
      'consumer-perf-test',
      '--bootstrap-server',
      c.bootstrap,
      '--topic',
      topic,
      '--messages',
      '5000',
      '--group',
      'perf-g',
      '--timeout',
      '20000',
    ]);
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toBe(
      'start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec',
    );
    const f = lines[1]!.split(', ');
    expect(f).toHaveLength(10);
    expect(f[0]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3}$/);
    expect(f[4]).toBe('5000');
    expect(Number(f[2])).toBeCloseTo(Array.from({ length: 5000 }, (_, i) => `m${i}-`.length + 90).reduce((a, b) => a + b, 0) / 1048576, 3);
    const d = await samsa([
      'consumer-perf-test',
      '--bootstrap-server',
      c.bootstrap,
      '--topic',
      topic,
      '--messages',
      '5000',
      '--show-detailed-stats',
      '--reporting-interval',
      '1',
      '--timeout',
      '20000',
    ]);
    const dl = d.stdout.trim().split('\n');
    expect(dl[0]).toBe(
      'time, threadId, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec',
    );
    expect(dl.length).toBeGreaterThan(1);
    for (const l of dl.slice(1)) expect(l.split(', ')[1]).toBe('0');
    // as Kafka's tool: a row per elapsed interval with the running total, no summary row at the end
    expect(d.code).toBe(0);
    const totals = dl.slice(1).map((l) => Number(l.split(', ')[4]));
    expect(totals.every((t, i) => t > 0 && t <= 5000 && (i === 0 || t >= totals[i - 1]!))).toBe(true);
  }, 180_000);

  it('end-to-end-latency – positional arguments; progress every 1000, Avg latency and percentiles like Kafka', async () => {
    const r = await samsa(['end-to-end-latency', c.bootstrap, 'e2e-lat', '1200', 'all', '100']);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.split('\n').filter(Boolean);
    expect(lines[0]).toMatch(/^0\t\d+(\.\d+)?$/);
    expect(lines[1]).toMatch(/^1000\t\d+(\.\d+)?$/);
    expect(lines[2]).toMatch(/^Avg latency: \d+\.\d{4} ms$/);
    expect(lines[3]).toMatch(/^Percentiles: 50th = \d+, 99th = \d+, 99\.9th = \d+$/);
    expect(r.stderr).toContain('Topic "e2e-lat" does not exist. Will create topic with 1 partition(s) and replication factor = 1');
    const back = await kcatConsume(c.bootstrap, 'e2e-lat', '%s\n');
    expect(back.split('\n').filter(Boolean)).toHaveLength(1200);
    const bad = await samsa(['end-to-end-latency', c.bootstrap, 'e2e-lat', '10', '0', '100']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('Latency testing requires synchronous acknowledgement. Please use 1 or all');
  }, 180_000);
});
