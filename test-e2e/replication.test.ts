import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newTopicId } from '@samsa/zk-paths';
import { describeCluster, TestCluster, kcatConsume, onContainers, until } from './harness.js';

const run = promisify(execFile);

describeCluster('replication (RF=3, min.insync.replicas=2, acks=all)', () => {
  let c: TestCluster;
  const N = 20_000;
  let input = '';

  beforeAll(async () => {
    c = await TestCluster.start({
      brokers: 3,
      overrides: {
        'replica.high.watermark.checkpoint.interval.ms': '1000',
        'replica.lag.time.max.ms': '4000',
        'min.insync.replicas': '2',
        'default.replication.factor': '3',
      },
    });
    input = join(c.dir, 'in.txt');
    await writeFile(input, Array.from({ length: N }, (_, i) => `m-${i}`).join('\n') + '\n');
  });
  afterAll(async () => {
    await c?.stop();
  });

  it('replication – followers catch up and stay in the ISR; a killed leader loses no acknowledged record', async () => {
    const topic = 'r3';
    await c.admin.createTopic(
      topic,
      newTopicId(),
      new Map([
        [0, [0, 1, 2]],
        [1, [1, 2, 0]],
        [2, [2, 0, 1]],
      ]),
      {},
    );
    await c.waitForLeaders(topic, 3);
    await run('kcat', ['-P', '-b', c.bootstrap, '-t', topic, '-X', 'acks=all', '-l', input], { timeout: 120_000 });
    // every partition keeps a full ISR while followers fetch
    for (let p = 0; p < 3; p++) {
      const st = await c.admin.getPartitionState({ topic, partition: p });
      expect(st?.state.isr.slice().sort()).toEqual([0, 1, 2]);
    }
    const leader0 = await c.leaderOf(topic, 0);
    await c.broker(leader0).kill();
    // a new leader from the ISR, and the dead broker leaves the ISR of the partitions it followed
    await until(
      async () => {
        for (let p = 0; p < 3; p++) {
          const st = await c.admin.getPartitionState({ topic, partition: p });
          if (!st || st.state.leader === leader0 || st.state.leader < 0 || st.state.isr.includes(leader0)) return false;
        }
        return true;
      },
      'new leaders and shrunk ISRs',
      30_000,
    );
    const alive = c.brokers
      .filter((b) => b.id !== leader0)
      .map((b) => b.address)
      .join(',');
    // a new leader's high watermark catches up once the remaining follower fetches from it, so
    // read until every acknowledged record is visible (a lost record makes this time out)
    let got: string[] = [];
    await until(
      async () => {
        got = (await kcatConsume(alive, topic, '%s\n')).split('\n').filter(Boolean);
        return got.length >= N;
      },
      `all ${N} acknowledged records readable from the new leaders`,
      30_000,
      250,
    );
    expect(got.length).toBe(N);
    expect(new Set(got).size).toBe(N);
    // the restarted broker truncates, catches up and rejoins every ISR
    await c.broker(leader0).launch();
    await c.broker(leader0).waitReady();
    await until(
      async () => {
        for (let p = 0; p < 3; p++) {
          const st = await c.admin.getPartitionState({ topic, partition: p });
          if (!st?.state.isr.includes(leader0)) return false;
        }
        return true;
      },
      'restarted broker back in the ISRs',
      60_000,
    );
  });

  // the checkpoint file is inside the broker's container on the containers backend
  it.skipIf(onContainers)('replication – every replica checkpoints the high watermarks to replication-offset-checkpoint', async () => {
    // the previous test wrote N records to r3 (3 partitions, RF=3): every broker holds every partition
    for (const b of c.brokers) {
      const file = join(b.o.dir, 'logs', 'replication-offset-checkpoint');
      await until(
        async () => {
          const text = await readFile(file, 'utf8').catch(() => '');
          const [version, count, ...rows] = text.trim().split('\n');
          if (version !== '0') return false;
          const hws = rows.filter((r) => r.startsWith('r3 ')).map((r) => Number(r.split(' ')[2]));
          return Number(count) === rows.length && hws.length === 3 && hws.reduce((a, x) => a + x, 0) === N;
        },
        `broker ${b.id} high watermark checkpoint`,
        20_000,
      );
    }
  });
});
