/**
 * Proof that the checker can fail: brokers started with the test-only SAMSA_TEST_UNSAFE_ACK_BEFORE_HW
 * switch acknowledge acks=all writes before the high watermark covers them. The followers are
 * paused (SIGSTOP) so nothing replicates, the leader keeps acknowledging, then it is killed
 * (SIGKILL) and a follower that never got those writes becomes leader: verify must report lost
 * acknowledged writes. The same faults against honest brokers lose nothing (acks wait for the HW).
 */
import { afterEach, expect, it } from 'vitest';
import type { Workload } from '@samsa/client/verify';
import { until, type TestCluster } from '../harness.js';
import { describeChaos, runScenario, startChaosCluster } from './scenario.js';

async function pauseFollowersThenKillLeader(c: TestCluster, topic: string, w: Workload): Promise<void> {
  const leader = await c.leaderOf(topic, 0);
  const followers = c.brokers.map((b) => b.id).filter((id) => id !== leader);
  for (const f of followers) c.broker(f).pause();
  try {
    // a broken leader acknowledges what it alone holds; an honest one acknowledges nothing now
    const from = w.stats().acknowledged;
    await until(() => w.stats().acknowledged >= from + 50 || null, 'acks while the followers are paused', 2500, 50).catch(() => undefined);
    await c.shutdownBroker(leader, 'hard');
  } finally {
    for (const f of followers) c.broker(f).resume();
  }
  await until(
    async () => {
      const l = await c.leaderOf(topic, 0);
      return l >= 0 && l !== leader;
    },
    'a new leader',
    60_000,
  );
  await c.startBroker(leader);
}

describeChaos(
  'chaos – broken broker',
  () => {
    let c: TestCluster | undefined;
    afterEach(async () => {
      await c?.stop();
      c = undefined;
    });

    it('chaos – verify reports lost acknowledged writes when the leader acknowledges acks=all before the HW', async () => {
      c = await startChaosCluster({ brokers: 3, env: { SAMSA_TEST_UNSAFE_ACK_BEFORE_HW: 'true' } });
      const cluster = c;
      const topic = 'broken-acks';
      const report = await runScenario({
        name: 'broken broker (unsafe ack before HW)',
        cluster,
        topic,
        partitions: 1,
        idempotent: false,
        fault: (w) => pauseFollowersThenKillLeader(cluster, topic, w),
        expectOk: false,
      });
      expect(report.lost).toBeGreaterThan(0);
      expect(report.ok).toBe(false);
    });

    it('chaos – the same faults against honest brokers lose no acknowledged write', async () => {
      c = await startChaosCluster({ brokers: 3 });
      const cluster = c;
      const topic = 'honest-acks';
      await runScenario({
        name: 'honest broker (same faults)',
        cluster,
        topic,
        partitions: 1,
        idempotent: false,
        fault: (w) => pauseFollowersThenKillLeader(cluster, topic, w),
      });
    });
  },
  { processesOnly: 'pauses and kills broker processes, reads their log files' },
);
