/**
 * The controller partitioned from ZooKeeper by the network (not paused: it keeps running and still
 * reaches the other brokers and the clients), while it leads a partition. Its ZooKeeper session
 * expires: it must notice by itself (its ZkClient's liveness timer) and resign before healing, a
 * new controller takes over with epoch + 1 and moves its leadership, brokers reject anything it
 * sends with the old epoch, no partition state carries its epoch after the takeover, and acks=all
 * writes to it as a leader are never acknowledged. Full set only (CHAOS_FULL=1).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { TopicPartitionStateZNode, type LeaderIsrAndControllerEpoch } from '@samsa/zk-paths';
import { until } from '../harness.js';
import { describeNetns } from '../netns.js';
import { CHAOS_FULL, baseSeed, chaosAssignment, moreAcks, scaledTimeout, seededRandom, waitForFullIsr } from './scenario.js';
import {
  logLines,
  logOf,
  metadataOf,
  produceAll,
  SESSION_TIMEOUT_MS,
  controllerOf,
  pick,
  runPartitionScenario,
  startNetnsCluster,
  statesOf,
  type NetnsCluster,
} from './netns-cluster.js';

describeNetns('chaos – controller partitioned from ZooKeeper (network namespaces)', () => {
  let k: NetnsCluster | undefined;
  beforeAll(async () => {
    k = await startNetnsCluster({ brokers: 3 });
  });
  afterAll(async () => {
    await k?.stop();
  });

  it.skipIf(!CHAOS_FULL)(
    'partition – a controller cut off from ZooKeeper resigns by itself, is replaced with epoch + 1, writes nothing with its epoch and acknowledges nothing as a leader; 0 lost',
    async () => {
      const { c, net } = k!;
      const seed = baseSeed + 51;
      const old = await controllerOf(c);
      const [a, b] = pick(
        seededRandom(seed),
        [0, 1, 2].filter((x) => x !== old),
      ) as [number, number];
      const topic = 'controller-zk-cut';
      const assignment = chaosAssignment([
        [old, a, b],
        [a, b, old],
      ]);
      const notes: string[] = [];
      await runPartitionScenario({
        name: `controller ${old} partitioned from ZooKeeper`,
        c,
        topic,
        assignment,
        seed,
        producerConfig: { 'request.timeout.ms': 8000 },
        fault: async (w) => {
          const before = (await c.admin.getControllerEpoch())!;
          const prev = await statesOf(c, topic, assignment.length);
          const logFrom = (await logOf(c, old)).length;
          const t0 = Date.now();
          await net.isolate(old, 'zookeeper');
          // it notices the lost session by itself and steps down, while still cut off
          const resigned = await until(
            async () => (await logLines(c, old, logFrom)).find((m) => m['msg'] === 'resigned as controller'),
            'the cut-off controller resigns',
            SESSION_TIMEOUT_MS + 30_000,
            100,
          );
          const resignedAfter = Date.now() - t0;
          expect(resigned['brokerId']).toBe(old);
          const now = await until(
            async () => {
              const id = await c.controllerId();
              return id !== null && id !== old ? { id } : null;
            },
            'a new controller',
            SESSION_TIMEOUT_MS + 30_000,
            50,
          ).then((r) => r.id);
          const fence = await until(
            async () => {
              const e = await c.admin.getControllerEpoch();
              return e && e.epoch > before.epoch ? e : null;
            },
            'the controller epoch bumped',
            10_000,
            50,
          );
          expect(fence.epoch).toBe(before.epoch + 1);
          // its leadership moves to the ISR; as a stale leader it acknowledges no acks=all write
          await until(async () => (await statesOf(c, topic, 1))[0]!.leader !== old, `${topic}-0 led by another broker`, scaledTimeout(30_000), 100);
          const [s0] = await statesOf(c, topic, 1);
          expect(s0!.leaderEpoch).toBeGreaterThan(prev[0]!.leaderEpoch);
          expect(s0!.controllerEpoch).toBe(fence.epoch);
          // both followers name the new leader: the controller's LeaderAndIsr, which moves their
          // fetchers off the old leader, came before this UpdateMetadata on the same connection
          for (const id of [a, b]) {
            await until(
              async () => (await metadataOf(c, c.broker(id).address, topic))[0]?.leader === s0!.leader,
              `broker ${id} following ${s0!.leader} for ${topic}-0`,
              30_000,
              100,
            );
          }
          const code = await produceAll(c, c.broker(old).address, topic, 0, 'controller-zk-probe', 3000);
          expect(code).not.toBe(0);
          await moreAcks(w, 150, 'with the old controller cut off');

          const snapshot = new Map<string, { mzxid: bigint; state: LeaderIsrAndControllerEpoch }>();
          for (let p = 0; p < assignment.length; p++) {
            const path = TopicPartitionStateZNode.path(topic, p);
            const n = await c.admin.zk.get(path);
            snapshot.set(path, { mzxid: n.stat.mzxid, state: TopicPartitionStateZNode.decode(n.data, path) });
          }
          const staleFrom = new Map<number, number>();
          for (const id of [a, b]) staleFrom.set(id, (await logOf(c, id)).length);
          await net.heal(old);
          await until(async () => (await c.admin.getBrokerIds()).includes(old), 'the old controller registered again', 60_000, 100);
          await waitForFullIsr(c, topic, assignment.length, 60_000);
          expect(await c.controllerId()).toBe(now);
          expect((await c.admin.getControllerEpoch())!.epoch).toBe(fence.epoch);
          for (const [path, p] of snapshot) {
            const n = await c.admin.zk.get(path);
            const s = TopicPartitionStateZNode.decode(n.data, path);
            if (n.stat.mzxid === p.mzxid) continue;
            const leaderOnly = s.leader === p.state.leader && s.leaderEpoch === p.state.leaderEpoch;
            expect(s.controllerEpoch >= fence.epoch || leaderOnly, `${path}: ${JSON.stringify(s)} (before ${JSON.stringify(p.state)})`).toBe(true);
          }
          let rejected = 0;
          for (const id of [a, b])
            rejected += (await logLines(c, id, staleFrom.get(id))).filter(
              (m) => String(m['msg']).includes('STALE_CONTROLLER_EPOCH') && m['controllerId'] === old,
            ).length;
          notes.push(
            `resigned ${resignedAfter} ms after the cut; controller ${now} with epoch ${fence.epoch}; acks=all to it as a stale leader answered ${code}; ${rejected} stale-epoch requests of it rejected`,
          );
        },
      });
      console.log(`[partition] controller ${old} cut off from ZooKeeper: ${notes.join('; ')}`);
    },
  );
});
