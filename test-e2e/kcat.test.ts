import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newTopicId } from '@samsa/zk-paths';
import { describeCluster, TestCluster, kcatConsume } from './harness.js';

const run = promisify(execFile);
const N = 100_000;
const KEYS = 997;

describeCluster('kcat (librdkafka 2.0.2) against a 3-broker cluster', () => {
  let c: TestCluster;
  let input = '';

  beforeAll(async () => {
    c = await TestCluster.start({ brokers: 3 });
    const lines: string[] = [];
    for (let i = 0; i < N; i++) lines.push(`key-${i % KEYS}:value-${i}`);
    input = join(c.dir, 'messages.txt');
    await writeFile(input, lines.join('\n') + '\n');
  });
  afterAll(async () => {
    await c?.stop();
  });

  it('kcat – metadata lists 3 brokers and the controller', async () => {
    const { stdout } = await run('kcat', ['-L', '-b', c.bootstrap], { timeout: 20_000 });
    expect(stdout).toContain(' 3 brokers:');
    const controller = await c.controllerId();
    expect(stdout).toMatch(new RegExp(`broker ${controller} at [^\\n]*\\(controller\\)`));
  });

  for (const codec of ['none', 'gzip', 'snappy', 'lz4', 'zstd']) {
    it(`kcat – ${N} keyed messages with acks=all and ${codec} come back complete, in order per partition, each key on one partition`, async () => {
      const topic = `kcat-${codec}`;
      await c.admin.createTopic(topic, newTopicId(), new Map([0, 1, 2, 3, 4, 5].map((p) => [p, [p % 3]])), {});
      await c.waitForLeaders(topic, 6);
      await run('kcat', ['-P', '-b', c.bootstrap, '-t', topic, '-K:', '-z', codec, '-X', 'acks=all', '-X', 'partitioner=murmur2_random', '-l', input], {
        timeout: 120_000,
        maxBuffer: 16 * 1024 * 1024,
      });
      const out = await kcatConsume(c.bootstrap, topic, '%p\t%o\t%k\t%s\n');
      const rows = out.split('\n').filter(Boolean);
      expect(rows).toHaveLength(N);
      const keyPartition = new Map<string, number>();
      const lastOffset = new Map<number, number>();
      const lastValueOfKey = new Map<string, number>();
      const seen = new Set<number>();
      const violations: string[] = [];
      for (const row of rows) {
        const [p, o, k, v] = row.split('\t') as [string, string, string, string];
        const partition = Number(p);
        const offset = Number(o);
        const value = Number(v.slice('value-'.length));
        // each key always lands on the same partition (murmur2, as the Java client)
        const kp = keyPartition.get(k);
        if (kp === undefined) keyPartition.set(k, partition);
        else if (kp !== partition) violations.push(`${k} on partitions ${kp} and ${partition}`);
        // offsets strictly increase within a partition
        if (offset <= (lastOffset.get(partition) ?? -1)) violations.push(`partition ${partition}: offset ${offset} after ${lastOffset.get(partition)}`);
        lastOffset.set(partition, offset);
        // the producer's order is kept per key
        if (value <= (lastValueOfKey.get(k) ?? -1)) violations.push(`${k}: value ${value} after ${lastValueOfKey.get(k)}`);
        lastValueOfKey.set(k, value);
        seen.add(value);
      }
      expect(violations.slice(0, 10)).toEqual([]);
      expect(seen.size).toBe(N);
      expect(keyPartition.size).toBe(KEYS);
      expect(new Set(keyPartition.values()).size).toBe(6);
    });
  }
});
