/**
 * The @samsa/client Producer against 3 real brokers: murmur2 placement identical to librdkafka's
 * murmur2_random, no duplicate and no gap with the idempotent producer across a leader kill -9 and
 * restart, `samsa console-producer` with parse.key, and `samsa producer-perf-test` against kcat -P.
 */
import { execFile, spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Producer } from '@samsa/client';
import { newTopicId } from '@samsa/zk-paths';
import { TestCluster, kcatConsume, until, describeCluster } from './harness.js';

const run = promisify(execFile);
const SAMSA = join(import.meta.dirname, '..', 'packages', 'cli', 'bin', 'samsa.js');

function runWithInput(cmd: string, args: string[], input: string, timeoutMs = 120_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(cmd, args);
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    p.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => p.kill('SIGKILL'), timeoutMs);
    p.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    p.stdin.end(input);
  });
}

describeCluster(
  'producer e2e (3 brokers)',
  () => {
    let c: TestCluster;

    beforeAll(async () => {
      c = await TestCluster.start({ brokers: 3, overrides: { 'min.insync.replicas': '2', 'auto.create.topics.enable': 'false' } });
    }, 120_000);
    afterAll(async () => {
      await c?.stop();
    });

    async function createTopic(topic: string, partitions: number, rf: number): Promise<void> {
      await c.admin.createTopic(
        topic,
        newTopicId(),
        new Map(Array.from({ length: partitions }, (_, p) => [p, Array.from({ length: rf }, (_, r) => (p + r) % 3)])),
        {},
      );
      await c.waitForLeaders(topic, partitions);
    }

    it('producer – murmur2 placement of 10,000 keys matches kcat -X partitioner=murmur2_random', async () => {
      await createTopic('placement-kcat', 7, 3);
      await createTopic('placement-samsa', 7, 3);
      const keys = Array.from({ length: 10_000 }, (_, i) => `key-${i}-${(i * 7919) % 10007}`);
      const file = join(c.dir, 'keys.txt');
      await writeFile(file, keys.map((k) => `${k}:v`).join('\n') + '\n');
      await run('kcat', ['-P', '-b', c.bootstrap, '-t', 'placement-kcat', '-K:', '-X', 'partitioner=murmur2_random', '-l', file], { timeout: 120_000 });
      const producer = new Producer({ 'bootstrap.servers': c.bootstrap, 'linger.ms': 5 });
      const metas = await Promise.all(keys.map((k) => producer.send({ topic: 'placement-samsa', key: k, value: 'v' })));
      await producer.close();
      const ours = new Map(keys.map((k, i) => [k, metas[i]!.partition]));
      const out = await kcatConsume(c.bootstrap, 'placement-kcat', '%p\t%k\n');
      const theirs = new Map(
        out
          .trim()
          .split('\n')
          .map((l) => [l.split('\t')[1]!, Number(l.split('\t')[0])]),
      );
      expect(theirs.size).toBe(10_000);
      const mismatches = keys.filter((k) => theirs.get(k) !== ours.get(k));
      expect(mismatches).toEqual([]);
      // and the records really are where the acks said
      const back = await kcatConsume(c.bootstrap, 'placement-samsa', '%p\t%k\n');
      const stored = new Map(
        back
          .trim()
          .split('\n')
          .map((l) => [l.split('\t')[1]!, Number(l.split('\t')[0])]),
      );
      expect(keys.filter((k) => stored.get(k) !== ours.get(k))).toEqual([]);
      expect(new Set(ours.values()).size).toBe(7);
    }, 240_000);

    it('producer – idempotent producer: leader kill -9 and restart during 100,000 records gives no duplicate and no gap', async () => {
      const topic = 'idem-kill';
      await createTopic(topic, 3, 3);
      const N = 100_000;
      const producer = new Producer<string, string>({
        'bootstrap.servers': c.bootstrap,
        'linger.ms': 5,
        'request.timeout.ms': 10_000,
        'metadata.max.age.ms': 5000,
      });
      const acked = new Map<number, bigint>();
      const failures: string[] = [];
      const victim = await c.leaderOf(topic, 0);
      let killed = false;
      const sends: Promise<void>[] = [];
      for (let i = 0; i < N; i++) {
        sends.push(
          producer.send({ topic, value: String(i), partition: i % 3 }).then(
            (m) => void acked.set(i, m.offset),
            (e: Error) => void failures.push(`${i}: ${e.message}`),
          ),
        );
        if (i % 1000 === 999) {
          await new Promise((r) => setImmediate(r));
          while (sends.length - acked.size - failures.length > 20_000) await new Promise((r) => setTimeout(r, 5));
        }
        if (i === 30_000) {
          await until(() => acked.size > 20_000, 'some records acknowledged before the kill', 60_000);
          await c.broker(victim).kill();
          killed = true;
        }
        if (i === 60_000) {
          await until(async () => !(await c.admin.getBrokerIds()).includes(victim), 'the killed broker deregistered', 30_000, 200);
          await c.broker(victim).launch();
          await c.broker(victim).waitReady();
        }
      }
      await Promise.all(sends);
      await producer.close();
      expect(killed).toBe(true);
      expect(failures.slice(0, 5)).toEqual([]);
      expect(acked.size).toBe(N);
      const out = await kcatConsume(c.bootstrap, topic, '%p\t%o\t%s\n', 180_000);
      const seen = new Map<number, number>();
      const perPartition = new Map<number, number[]>();
      for (const line of out.trim().split('\n')) {
        const [p, , v] = line.split('\t');
        const n = Number(v);
        seen.set(n, (seen.get(n) ?? 0) + 1);
        const list = perPartition.get(Number(p)) ?? [];
        list.push(n);
        perPartition.set(Number(p), list);
      }
      const duplicates = [...seen].filter(([, n]) => n > 1).map(([v]) => v);
      const missing = Array.from({ length: N }, (_, i) => i).filter((i) => !seen.has(i));
      expect(duplicates.slice(0, 10)).toEqual([]);
      expect(missing.slice(0, 10)).toEqual([]);
      // order per partition follows send order
      const disorder = [...perPartition].flatMap(([p, list]) =>
        list.flatMap((v, i) => (i > 0 && v < list[i - 1]! ? [`p${p}: ${list[i - 1]} before ${v}`] : [])),
      );
      expect(disorder.slice(0, 5)).toEqual([]);
    }, 600_000);

    it('producer – samsa console-producer round trip with parse.key', async () => {
      await createTopic('console', 2, 3);
      const lines = Array.from({ length: 50 }, (_, i) => `k${i % 5}:value ${i}`);
      const r = await runWithInput(
        'node',
        [
          SAMSA,
          'console-producer',
          '--bootstrap-server',
          c.bootstrap,
          '--topic',
          'console',
          '--property',
          'parse.key=true',
          '--property',
          'key.separator=:',
          '--producer-property',
          'linger.ms=10',
          '--sync',
        ],
        lines.join('\n') + '\n',
      );
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const out = await kcatConsume(c.bootstrap, 'console', '%k=%s\n');
      expect(out.trim().split('\n').sort()).toEqual(lines.map((l) => l.replace(':', '=')).sort());
    }, 120_000);

    it("producer – samsa producer-perf-test sends 50,000 1 KiB records with acks=all and prints Kafka's summary (rate beside kcat -P printed)", async () => {
      await createTopic('perf', 3, 3);
      const N = 50_000;
      const payload = 'x'.repeat(1024);
      const file = join(c.dir, 'perf.txt');
      await writeFile(file, Array.from({ length: N }, () => payload).join('\n') + '\n');
      const t0 = Date.now();
      await run('kcat', ['-P', '-b', c.bootstrap, '-t', 'perf', '-X', 'acks=all', '-l', file], { timeout: 300_000, maxBuffer: 1 << 24 });
      const kcatRate = (N * 1000) / (Date.now() - t0);
      const { stdout } = await run(
        'node',
        [
          SAMSA,
          'producer-perf-test',
          '--topic',
          'perf',
          '--num-records',
          String(N),
          '--record-size',
          '1024',
          '--throughput',
          '-1',
          '--producer-props',
          `bootstrap.servers=${c.bootstrap}`,
          'acks=all',
        ],
        {
          timeout: 300_000,
        },
      );
      const last = stdout.trim().split('\n').pop()!;
      expect(last).toMatch(
        /^50000 records sent, [\d.]+ records\/sec \([\d.]+ MB\/sec\), [\d.]+ ms avg latency, [\d.]+ ms max latency, \d+ ms 50th, \d+ ms 95th, \d+ ms 99th, \d+ ms 99.9th\.$/,
      );
      const ourRate = Number(/records sent, ([\d.]+) records\/sec/.exec(last)![1]);
      const ratio = ourRate / kcatRate;
      // Speed is judged by the benchmark (`npm run bench -- producer-vs-kcat`), not by a timed test: on a
      // shared 2-core box one run's ratio moves 3x with the load. Printed here for the record.
      process.stdout.write(
        `producer-perf-test: ${ourRate.toFixed(0)} records/sec, kcat -P: ${kcatRate.toFixed(0)} records/sec, ratio ${(ratio * 100).toFixed(0)}%\n`,
      );
      expect(ourRate).toBeGreaterThan(0);
    }, 600_000);
  },
  { processesOnly: 'kills and restarts broker processes; not yet run on containers' },
);
