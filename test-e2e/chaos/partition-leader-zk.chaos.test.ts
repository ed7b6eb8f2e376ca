/**
 * A leader partitioned from ZooKeeper (RF=3, min.insync.replicas=2, acks=all), brokers in their own
 * network namespaces. The leader still reaches its followers and the clients, but its ZooKeeper
 * session expires: the controller fails it and elects new leaders from the ISR, the followers follow
 * those, and the old leader (which cannot shrink the ISR without ZooKeeper) must never acknowledge an
 * acks=all write again: its high watermark cannot move. After healing it registers again, truncates
 * to the new leader's log and rejoins the ISR; nothing acknowledged is lost. Quick subset.
 */
import { topicPartitionKey } from '@samsa/protocol';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readReplicaLog } from '@samsa/client/verify';
import { until } from '../harness.js';
import { describeNetns } from '../netns.js';
import { baseSeed, chaosAssignment, moreAcks, scaledTimeout, seededRandom, waitForFullIsr } from './scenario.js';
import {
  produceAll,
  SESSION_TIMEOUT_MS,
  controllerOf,
  metadataOf,
  pick,
  runPartitionScenario,
  startNetnsCluster,
  statesOf,
  type NetnsCluster,
} from './netns-cluster.js';

describeNetns('chaos – leader partitioned from ZooKeeper (network namespaces)', () => {
  let k: NetnsCluster | undefined;
  beforeAll(async () => {
    k = await startNetnsCluster({ brokers: 3 });
  });
  afterAll(async () => {
    await k?.stop();
  });

  it("partition – a leader cut off from ZooKeeper stops acknowledging acks=all writes once it is failed; the new leader's log wins; 0 lost", async () => {
    const { c, net } = k!;
    const seed = baseSeed + 21;
    const ctrl = await controllerOf(c);
    const [old, other] = pick(
      seededRandom(seed),
      [0, 1, 2].filter((b) => b !== ctrl),
    ) as [number, number];
    const topic = 'leader-zk-cut';
    const assignment = chaosAssignment([
      [old, other, ctrl],
      [old, ctrl, other],
    ]);
    const probes: Array<{ value: string; code: number }> = [];
    let failedOverAfter = 0;
    await runPartitionScenario({
      name: `leader ${old} partitioned from ZooKeeper`,
      c,
      topic,
      assignment,
      seed,
      // the producers give up on the stuck old leader sooner than Kafka's 30 s
      producerConfig: { 'request.timeout.ms': 8000 },
      fault: async (w) => {
        const before = await statesOf(c, topic, assignment.length);
        expect(before.map((s) => s.leader)).toEqual(assignment.map(() => old));
        const t0 = Date.now();
        await net.isolate(old, 'zookeeper');
        // the controller fails the broker once ZooKeeper expires its session, and elects from the ISR
        await until(
          async () => {
            const now = await statesOf(c, topic, assignment.length);
            return now.every((s, p) => s.leader >= 0 && s.leader !== old && s.leaderEpoch > before[p]!.leaderEpoch);
          },
          'new leaders elected',
          scaledTimeout(SESSION_TIMEOUT_MS + 30_000),
          100,
        );
        failedOverAfter = Date.now() - t0;
        const after = await statesOf(c, topic, assignment.length);
        // the new leaders serve (their LeaderAndIsr arrived; the followers now fetch from them):
        // each new leader's Metadata names it for every partition it was elected for
        for (const l of new Set(after.map((s) => s.leader))) {
          const mine = after.flatMap((s, p) => (s.leader === l ? [p] : []));
          await until(
            async () => {
              const md = await metadataOf(c, c.broker(l).address, topic);
              return mine.every((p) => md.find((x) => x.partition === p)?.leader === l);
            },
            `broker ${l} leading ${mine.length === 1 ? topicPartitionKey(topic, mine[0]!) : `${mine.length} partitions of ${topic}`}`,
            scaledTimeout(30_000),
            200,
          );
        }
        // the old leader still takes writes (it believes it leads) but acknowledges none of them
        for (let i = 0; i < 3; i++) {
          const value = `leader-zk-probe-${i}`;
          const code = await produceAll(c, c.broker(old).address, topic, 0, value, 3000);
          probes.push({ value, code });
          expect(code, `acks=all Produce to the cut-off old leader answered ${code}`).not.toBe(0);
        }
        // its own log holds them (a tail the new leader lacks)...
        const oldLog = await readReplicaLog(c.logDirs()[old]!, topic, 0);
        const appended = probes.filter((p) => oldLog.records.some((r) => r.value === p.value)).length;
        // the producers moved to the new leaders: acks=all writes go on
        await moreAcks(w, 200, 'with the old leader cut off from ZooKeeper');
        await net.heal(old);
        await until(async () => (await c.admin.getBrokerIds()).includes(old), 'the old leader registered again', 60_000, 100);
        await waitForFullIsr(c, topic, assignment.length, 60_000);
        // ...which it dropped when it became a follower of the new leader: the new leader's log wins
        const healed = await readReplicaLog(c.logDirs()[old]!, topic, 0);
        const newLeader = after[0]!.leader;
        const winner = await readReplicaLog(c.logDirs()[newLeader]!, topic, 0);
        for (const p of probes) {
          expect(
            healed.records.some((r) => r.value === p.value),
            `${p.value} still in the old leader's log`,
          ).toBe(false);
          expect(winner.records.some((r) => r.value === p.value)).toBe(false);
        }
        console.log(
          `[partition] leader ${old} cut off from ZooKeeper: leaders moved after ${failedOverAfter} ms (to ${after.length <= 10 ? after.map((s) => s.leader).join(',') : [...new Set(after.map((s) => s.leader))].map((l) => `${l}: ${after.filter((s) => s.leader === l).length}`).join(', ')}); probes to it answered ${probes.map((p) => p.code).join(',')}, ${appended} of them in its log before healing, none after`,
        );
      },
    });
  });
});
