/**
 * DeleteRecords and retention on a real 3-broker cluster, with KafkaJS producing and listing offsets:
 *  - `samsa delete-records` moves the log start offset of an RF=3 partition: the low watermark it
 *    prints is reached on every replica (each broker's log-start-offset-checkpoint says so), whole
 *    segments below it are deleted on every replica, ListOffsets(earliest) reports it, and after
 *    the leader is stopped the new leader (a former follower) reports it too;
 *  - offsets beyond the high watermark fail with OFFSET_OUT_OF_RANGE, compact-only topics with
 *    POLICY_VIOLATION;
 *  - retention deletes whole old segments by size (retention.bytes) and, after retention.ms is
 *    lowered dynamically, by time, on log.retention.check.interval.ms.
 */
import { execFile } from 'node:child_process';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import kafkajs from 'kafkajs';
import type { Admin, Producer } from 'kafkajs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { TestCluster, until, describeCluster } from './harness.js';

const { Kafka, logLevel } = kafkajs;
const exec = promisify(execFile);
const bin = fileURLToPath(new URL('../packages/cli/bin/samsa.js', import.meta.url));

async function samsa(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await exec(process.execPath, [bin, ...args], { timeout: 120_000 });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

describeCluster(
  'DeleteRecords and retention (3 brokers)',
  () => {
    let c: TestCluster;
    let admin: Admin;
    let producer: Producer;

    beforeAll(async () => {
      c = await TestCluster.start({
        brokers: 3,
        overrides: {
          'log.retention.check.interval.ms': '1000',
          'log.segment.delete.delay.ms': '200',
          'log.flush.start.offset.checkpoint.interval.ms': '500',
          'auto.leader.rebalance.enable': 'false',
          'replica.lag.time.max.ms': '5000',
        },
      });
      const kafka = new Kafka({ clientId: 'e2e-delete-records', brokers: c.bootstrap.split(','), logLevel: logLevel.NOTHING, retry: { retries: 10 } });
      admin = kafka.admin();
      producer = kafka.producer({ allowAutoTopicCreation: false });
      await admin.connect();
      await producer.connect();
    }, 120_000);

    afterAll(async () => {
      await producer?.disconnect();
      await admin?.disconnect();
      await c?.stop();
    });

    /** `count` records of ~100 bytes, 5 per batch, acks=all. */
    async function produce(topic: string, count: number): Promise<void> {
      for (let i = 0; i < count; i += 5) {
        const messages = Array.from({ length: Math.min(5, count - i) }, (_, j) => ({ key: `k${i + j}`, value: `value-${i + j}-`.padEnd(100, 'x') }));
        await producer.send({ topic, acks: -1, messages });
      }
    }

    const partitionDir = (broker: number, topic: string) => join(c.dir, `broker-${broker}`, 'logs', `${topic}-0`);
    const segmentBases = async (broker: number, topic: string) =>
      (await readdir(partitionDir(broker, topic)))
        .filter((f) => f.endsWith('.log'))
        .map((f) => Number(f.slice(0, -4)))
        .sort((a, b) => a - b);
    const checkpointed = async (broker: number, topic: string): Promise<number | null> => {
      const text = await readFile(join(c.dir, `broker-${broker}`, 'logs', 'log-start-offset-checkpoint'), 'utf8').catch(() => '');
      const line = text.split('\n').find((l) => l.startsWith(`${topic} 0 `));
      return line ? Number(line.split(' ')[2]) : null;
    };
    const earliest = async (topic: string) => Number((await admin.fetchTopicOffsets(topic)).find((p) => p.partition === 0)!.low);

    it('delete-records – samsa delete-records moves the log start offset on every replica; segments below it go; ListOffsets(earliest) reports it, also from a new leader', async () => {
      const topic = 'dr-main';
      await admin.createTopics({
        topics: [{ topic, numPartitions: 1, replicationFactor: 3, configEntries: [{ name: 'segment.bytes', value: '2048' }] }],
        waitForLeaders: true,
      });
      await produce(topic, 200);
      expect(await earliest(topic)).toBe(0);
      for (const b of [0, 1, 2]) await until(async () => (await segmentBases(b, topic)).length > 5, `segments on broker ${b}`);

      const file = join(c.dir, 'offsets.json');
      await writeFile(file, JSON.stringify({ partitions: [{ topic, partition: 0, offset: 120 }], version: 1 }));
      const r = await samsa('delete-records', '--bootstrap-server', c.bootstrap, '--offset-json-file', file);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(`Executing records delete operation\nRecords delete operation completed:\npartition: ${topic}-0\tlow_watermark: 120\n`);

      expect(await earliest(topic)).toBe(120);
      for (const b of [0, 1, 2]) {
        // followers learnt it from their fetches and checkpointed it (Kafka's file lists only log start
        // offsets above the first segment's base offset: a replica whose segment starts at 120 needs no line)
        await until(async () => (await checkpointed(b, topic)) === 120 || (await segmentBases(b, topic))[0] === 120, `log start offset 120 on broker ${b}`);
        await until(async () => {
          const bases = await segmentBases(b, topic);
          return bases[0]! > 0 && bases[0]! <= 120 && (bases[1] === undefined || bases[1] > 120);
        }, `segments below 120 deleted on broker ${b}`);
      }

      // a former follower becomes leader and reports the same log start offset
      const leader = await c.leaderOf(topic, 0);
      await c.broker(leader).stop(10_000);
      await until(async () => {
        const l = await c.leaderOf(topic, 0);
        return l >= 0 && l !== leader;
      }, 'a new leader');
      await until(async () => (await earliest(topic).catch(() => -1)) === 120, 'earliest offset 120 from the new leader');
      await c.broker(leader).launch();
      await c.broker(leader).waitReady();
    });

    it('delete-records – beyond the high watermark: OFFSET_OUT_OF_RANGE; compact-only topic: POLICY_VIOLATION', async () => {
      const topic = 'dr-errors';
      const compact = 'dr-compact';
      await admin.createTopics({
        topics: [
          { topic, numPartitions: 1, replicationFactor: 1 },
          { topic: compact, numPartitions: 1, replicationFactor: 1, configEntries: [{ name: 'cleanup.policy', value: 'compact' }] },
        ],
        waitForLeaders: true,
      });
      await produce(topic, 10);
      await produce(compact, 10);
      const file = join(c.dir, 'bad.json');
      await writeFile(
        file,
        JSON.stringify({
          partitions: [
            { topic, partition: 0, offset: 11 },
            { topic: compact, partition: 0, offset: 5 },
          ],
          version: 1,
        }),
      );
      const r = await samsa('delete-records', '--bootstrap-server', c.bootstrap, '--offset-json-file', file);
      const lines = r.stdout.split('\n');
      expect(lines[2]).toMatch(new RegExp(`^partition: ${topic}-0\\terror: org\\.apache\\.kafka\\.common\\.errors\\.OffsetOutOfRangeException: `));
      expect(lines[3]).toMatch(new RegExp(`^partition: ${compact}-0\\terror: org\\.apache\\.kafka\\.common\\.errors\\.PolicyViolationException: `));
      expect(await earliest(topic)).toBe(0);
    });

    it('retention – whole old segments are deleted by retention.bytes, and by retention.ms once it is lowered dynamically', async () => {
      const bySize = 'ret-bytes';
      const byTime = 'ret-ms';
      await admin.createTopics({
        topics: [
          {
            topic: bySize,
            numPartitions: 1,
            replicationFactor: 1,
            configEntries: [
              { name: 'segment.bytes', value: '2048' },
              { name: 'retention.bytes', value: '6000' },
            ],
          },
          { topic: byTime, numPartitions: 1, replicationFactor: 1, configEntries: [{ name: 'segment.bytes', value: '2048' }] },
        ],
        waitForLeaders: true,
      });
      await produce(bySize, 150);
      await produce(byTime, 150);
      const sizeLeader = await c.leaderOf(bySize, 0);
      await until(async () => {
        const files = (await readdir(partitionDir(sizeLeader, bySize))).filter((f) => f.endsWith('.log'));
        return files.length <= 5 && (await earliest(bySize)) > 0;
      }, 'retention.bytes deleting old segments');
      // nothing by time yet (the default 7 days)
      expect(await earliest(byTime)).toBe(0);
      await admin.alterConfigs({
        validateOnly: false,
        resources: [
          {
            type: 2,
            name: byTime,
            configEntries: [
              { name: 'segment.bytes', value: '2048' },
              { name: 'retention.ms', value: '1000' },
            ],
          },
        ],
      });
      // all closed segments expire; the active one stays
      const timeLeader = await c.leaderOf(byTime, 0);
      await until(
        async () => (await segmentBases(timeLeader, byTime)).length === 1 && (await earliest(byTime)) > 0,
        'retention.ms deleting old segments',
        30_000,
      );
    });
  },
  { processesOnly: 'reads broker files or starts broker processes; not yet run on containers' },
);
