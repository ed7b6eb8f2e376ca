/**
 * A zombie controller (RF=3, min.insync.replicas=2, acks=all): the controller is SIGSTOPped past
 * zookeeper.session.timeout.ms while it has topic creations to work through, another broker is
 * elected with controller epoch + 1, then the old one gets SIGCONT. It must be fenced on both paths:
 * brokers answer its LeaderAndIsr / UpdateMetadata with STALE_CONTROLLER_EPOCH, and its ZooKeeper
 * writes fail the multi's check of /controller_epoch. It resigns, no partition state is written with
 * its epoch after the takeover (the znodes' controller_epoch fields), and nothing acknowledged is
 * lost. Full set only (CHAOS_FULL=1): test-e2e/controller.test.ts covers the bare fencing in e2e.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sendControlRequest } from '@samsa/broker';
import type { BrokerProcess } from '@samsa/local-cluster';
import { ControlMessageType, ErrorCode, type ControlMessage } from '@samsa/protocol';
import { ControllerMovedError, TopicPartitionStateZNode, newTopicId, type LeaderIsrAndControllerEpoch } from '@samsa/zk-paths';
import { describeCluster, TestCluster, until } from '../harness.js';
import { rawRequest } from '../clients/wire.js';
import { CHAOS_FULL, baseSeed, chaosAssignment, moreAcks, scaledTimeout, seededRandom, waitForFullIsr } from './scenario.js';
import { logLines, logOf, PARTITION_OVERRIDES, SESSION_TIMEOUT_MS, controllerOf, pick, runPartitionScenario, statesOf } from './netns-cluster.js';

const STALE_MSG = 'rejecting a control request from a controller with an old epoch (STALE_CONTROLLER_EPOCH)';

const controlErrorCode = (m: ControlMessage): number => (m.body as { errorCode: number }).errorCode;

describeCluster(
  'chaos – zombie controller (SIGSTOP past its session)',
  () => {
    let c: TestCluster | undefined;
    beforeAll(async () => {
      c = await TestCluster.start({ brokers: 3, overrides: { ...PARTITION_OVERRIDES } });
    });
    afterAll(async () => {
      for (const b of c?.brokers ?? []) b.resume();
      await c?.stop();
    });

    it.skipIf(!CHAOS_FULL)(
      'zombie – a controller paused past its session is replaced (epoch + 1); after SIGCONT brokers and ZooKeeper fence it, it resigns, writes nothing with its epoch; 0 lost',
      async () => {
        const cl = c!;
        const seed = baseSeed + 31;
        const rng = seededRandom(seed);
        const old = await controllerOf(cl);
        const [a, b] = pick(
          rng,
          [0, 1, 2].filter((x) => x !== old),
        ) as [number, number];
        const topic = 'zombie-acks';
        // one partition led by each broker, the controller's included
        const assignment = chaosAssignment([
          [old, a, b],
          [a, b, old],
          [b, old, a],
        ]);
        const burst = Array.from({ length: 6 }, (_, i) => `zombie-burst-${i}`);
        const burstPartitions = 8;
        const report: string[] = [];
        await runPartitionScenario({
          name: `zombie controller ${old}`,
          c: cl,
          topic,
          assignment,
          seed,
          producerConfig: { 'request.timeout.ms': 8000 },
          fault: async (w) => {
            const before = (await cl.admin.getControllerEpoch())!;
            // work for the controller: topics created in ZooKeeper; pause it as soon as it is at them
            await Promise.all(
              burst.map((t, i) =>
                cl.admin.createTopic(
                  t,
                  newTopicId(),
                  new Map(Array.from({ length: burstPartitions }, (_, p) => [p, pick(seededRandom(seed + i * 100 + p), [0, 1, 2])])),
                  {},
                ),
              ),
            );
            const burstTps = burst.flatMap((topic) => Array.from({ length: burstPartitions }, (_, partition) => ({ topic, partition })));
            const firsts = burst.map((t) => ({ topic: t, partition: 0 }));
            await until(async () => (await cl.admin.getPartitionStates(firsts)).size > 0, 'the controller at the new topics', 30_000, 10);
            cl.broker(old).pause();
            const pausedAt = Date.now();
            const doneWhenPaused = (await cl.admin.getPartitionStates(burstTps)).size;
            report.push(`paused with ${doneWhenPaused}/${burstTps.length} new partitions done`);

            // a new controller, with the epoch bumped once
            const now = await until(
              async () => {
                const id = await cl.controllerId();
                return id !== null && id !== old ? { id } : null;
              },
              'a new controller',
              SESSION_TIMEOUT_MS + 20_000,
              50,
            ).then((r) => r.id);
            const fence = await until(
              async () => {
                const e = await cl.admin.getControllerEpoch();
                return e && e.epoch > before.epoch ? e : null;
              },
              'the controller epoch bumped',
              10_000,
              50,
            );
            expect(fence.epoch).toBe(before.epoch + 1);
            report.push(`controller ${now} elected ${Date.now() - pausedAt} ms after SIGSTOP, epoch ${before.epoch} → ${fence.epoch}`);

            // the new controller finishes the work: every partition led by a live broker
            const all = [{ topic, n: assignment.length }, ...burst.map((t) => ({ topic: t, n: burstPartitions }))];
            await until(
              async () => {
                for (const t of all) {
                  const ss = await cl.admin.getPartitionStates(Array.from({ length: t.n }, (_, partition) => ({ topic: t.topic, partition })));
                  if (ss.size < t.n || [...ss.values()].some((s) => s.state.leader < 0 || s.state.leader === old)) return false;
                }
                return true;
              },
              'every partition led by a live broker',
              scaledTimeout(60_000),
              100,
            );
            await moreAcks(w, 100, 'while the old controller is stopped');
            // every live broker has the new controller's metadata (and so its epoch)
            const live = [a, b];
            await until(
              async () => {
                for (const id of live) {
                  const md = await rawRequest(cl.broker(id).address, 3, 12, {
                    topics: [],
                    allowAutoTopicCreation: false,
                    includeClusterAuthorizedOperations: false,
                    includeTopicAuthorizedOperations: false,
                  });
                  if (md.controllerId !== now) return false;
                }
                return true;
              },
              "the new controller in every live broker's metadata",
              30_000,
              100,
            );

            // what a zombie would send, sent by hand: brokers reject the old epoch
            const target = cl.broker(live[Math.floor(rng() * live.length)]!) as BrokerProcess;
            const [s0] = await statesOf(cl, topic, 1);
            const zombieState = {
              topic,
              topicId: '',
              partition: 0,
              controllerEpoch: before.epoch,
              leader: old,
              leaderEpoch: s0!.leaderEpoch + 10,
              isr: [old],
              zkVersion: 1000,
              replicas: assignment[0]!,
              addingReplicas: [],
              removingReplicas: [],
              isNew: false,
              offlineReplicas: [],
              leaderRecoveryState: 0,
            };
            const targetLogFrom = (await logOf(cl, target.id)).length;
            const lai = await sendControlRequest(
              target.host,
              target.o.controlPort,
              ControlMessageType.LEADER_AND_ISR_REQUEST,
              { controllerId: old, controllerEpoch: before.epoch, brokerEpoch: -1n, type: 0, partitionStates: [zombieState], liveLeaders: [] },
              10_000,
            );
            expect(controlErrorCode(lai)).toBe(ErrorCode.STALE_CONTROLLER_EPOCH);
            const um = await sendControlRequest(
              target.host,
              target.o.controlPort,
              ControlMessageType.UPDATE_METADATA_REQUEST,
              { controllerId: old, controllerEpoch: before.epoch, brokerEpoch: -1n, partitionStates: [zombieState], liveBrokers: [] },
              10_000,
            );
            expect(controlErrorCode(um)).toBe(ErrorCode.STALE_CONTROLLER_EPOCH);
            expect((await logLines(cl, target.id, targetLogFrom)).filter((m) => m['msg'] === STALE_MSG).length).toBeGreaterThanOrEqual(2);
            // ...and ZooKeeper rejects a write fenced with the old epoch's zkVersion
            const st0 = (await cl.admin.getPartitionState({ topic, partition: 0 }))!;
            await expect(
              cl.admin.updateLeaderAndIsr(
                [
                  {
                    tp: { topic, partition: 0 },
                    state: { leader: old, leaderEpoch: s0!.leaderEpoch + 10, isr: [old], controllerEpoch: before.epoch },
                    expectedZkVersion: st0.zkVersion,
                  },
                ],
                before.stat.version,
              ),
            ).rejects.toBeInstanceOf(ControllerMovedError);
            expect((await cl.admin.getPartitionState({ topic, partition: 0 }))!.state.leader).not.toBe(old);

            // partition states as the new controller left them
            const snapshot = new Map<string, { mzxid: bigint; state: LeaderIsrAndControllerEpoch }>();
            for (const t of all) {
              for (let p = 0; p < t.n; p++) {
                const path = TopicPartitionStateZNode.path(t.topic, p);
                const n = await cl.admin.zk.get(path);
                snapshot.set(path, { mzxid: n.stat.mzxid, state: TopicPartitionStateZNode.decode(n.data, path) });
              }
            }
            const logFrom = new Map<number, number>();
            for (const id of [0, 1, 2]) logFrom.set(id, (await logOf(cl, id)).length);

            cl.broker(old).resume();
            const resigned = await until(
              async () => (await logLines(cl, old, logFrom.get(old))).find((m) => m['msg'] === 'resigned as controller'),
              'the zombie resigns',
              30_000,
              100,
            );
            expect(resigned['brokerId']).toBe(old);
            await until(async () => (await cl.admin.getBrokerIds()).includes(old), 'the old controller registered again', 60_000, 100);
            for (const t of all) await waitForFullIsr(cl, t.topic, t.n, 60_000);
            await moreAcks(w, 100, 'after the zombie is back');

            expect(await cl.controllerId()).toBe(now);
            expect((await cl.admin.getControllerEpoch())!.epoch).toBe(fence.epoch);
            let changed = 0;
            for (const [path, prev] of snapshot) {
              const n = await cl.admin.zk.get(path);
              const s = TopicPartitionStateZNode.decode(n.data, path);
              if (n.stat.mzxid === prev.mzxid) continue;
              changed++;
              // written after SIGCONT: by the new controller (its epoch) or a leader's ISR change (same
              // leader and leader epoch); the zombie would write its own epoch and a new leader epoch
              const leaderOnly = s.leader === prev.state.leader && s.leaderEpoch === prev.state.leaderEpoch;
              expect(s.controllerEpoch >= fence.epoch || leaderOnly, `${path}: ${JSON.stringify(s)} (before ${JSON.stringify(prev.state)})`).toBe(true);
            }
            // what the zombie tried after SIGCONT, and what the brokers rejected
            const zombieLog = (await logLines(cl, old, logFrom.get(old))).filter(
              (m) => m['component'] === 'controller' || m['component'] === 'controller-channel',
            );
            let rejected = 0;
            for (const id of live)
              rejected += (await logLines(cl, id, logFrom.get(id))).filter((m) => m['msg'] === STALE_MSG && m['controllerId'] === old).length;
            report.push(
              `${changed}/${snapshot.size} partition states changed after SIGCONT, none by the zombie; brokers rejected ${rejected} of its requests (stale epoch); zombie log: ${zombieLog
                .map(
                  (m) =>
                    `${String(m['msg'])}${m['event'] ? ` [${String(m['event'])}: ${String((m['err'] as { message?: string } | undefined)?.message ?? '')}]` : ''}`,
                )
                .slice(0, 8)
                .join(' | ')}`,
            );
          },
        });
        console.log(`[zombie] ${report.join('; ')}`);
      },
    );
  },
  { processesOnly: 'pauses broker processes and reads their log files' },
);
