import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ControllerEpochZNode,
  ControllerZNode,
  FakeZkClient,
  FakeZkServer,
  KafkaZk,
  ReassignPartitionsZNode,
  TopicPartitionStateZNode,
  newTopicId,
  type BrokerInfo,
  type TopicAssignment,
} from '@samsa/zk-paths';
import { KafkaController } from './controller.js';
import type { BrokerChannel, ControlRequest, LeaderAndIsrRequest, StopReplicaRequest } from './requests.js';
import { originReplicas, reassignTo, targetReplicas } from './replica-assignment.js';
import { testBroker } from './test-support.js';

const log = pino({ level: 'silent' });
const tp = { topic: 't', partition: 0 };

const broker = (id: number): BrokerInfo => testBroker(id);

async function until<T>(f: () => T | Promise<T>, what: string, timeoutMs = 3000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (v !== undefined && v !== null && v !== false) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

interface Env {
  server: FakeZkServer;
  kzk: KafkaZk;
  sent: Array<{ brokerId: number; request: ControlRequest }>;
  controller: KafkaController;
}

const controllers: KafkaController[] = [];
afterEach(async () => {
  for (const c of controllers.splice(0)) await c.shutdown();
});

/** Brokers 0–3 registered (one session each), topic t with partition 0 on `replicas`. */
async function cluster(replicas = [0, 1, 2]): Promise<{ server: FakeZkServer; kzk: KafkaZk }> {
  const server = new FakeZkServer();
  const kzk = new KafkaZk(new FakeZkClient(server));
  await kzk.createPersistentPaths();
  for (const id of [0, 1, 2, 3]) await new KafkaZk(new FakeZkClient(server)).registerBroker(broker(id));
  await kzk.createTopic('t', newTopicId(), new Map([[0, replicas]]), {});
  return { server, kzk };
}

async function startController(server: FakeZkServer, brokerId = 0): Promise<Env> {
  const kzk = new KafkaZk(new FakeZkClient(server));
  const sent: Env['sent'] = [];
  const channel: BrokerChannel = {
    addBroker: () => undefined,
    removeBroker: () => undefined,
    send: (id, request) => sent.push({ brokerId: id, request }),
    close: async () => undefined,
  };
  const controller = new KafkaController({
    brokerId,
    kzk,
    channel,
    logger: log,
    stateChangeLogger: log,
    uncleanLeaderElectionEnable: false,
    autoLeaderRebalanceEnable: false,
  });
  controllers.push(controller);
  controller.startup();
  await until(async () => controller.isActive && (await kzk.getPartitionState(tp)) !== null, 'an active controller with partition state');
  return { server, kzk, sent, controller };
}

const topicZnode = (kzk: KafkaZk) => kzk.getTopicAssignment('t') as Promise<TopicAssignment>;
const leaderAndIsr = (env: Env) => env.sent.filter((s): s is { brokerId: number; request: LeaderAndIsrRequest } => s.request.kind === 'LeaderAndIsr');
const stopReplica = (env: Env) => env.sent.filter((s): s is { brokerId: number; request: StopReplicaRequest } => s.request.kind === 'StopReplica');

/** What the partition leader does once followers catch up: a conditional write of a bigger ISR. */
async function leaderExpandsIsr(kzk: KafkaZk, isr: number[]): Promise<void> {
  const cur = (await kzk.getPartitionState(tp))!;
  expect(await kzk.conditionalUpdatePartitionState(tp, { ...cur.state, isr }, cur.zkVersion)).not.toBeNull();
}

describe('replica assignment arithmetic (KIP-455)', () => {
  it('reassignment – RS = TRS ++ ORS, AR = RS − ORS, RR = RS − TRS; reassigning to ORS cancels', () => {
    const a = reassignTo({ replicas: [0, 1, 2], addingReplicas: [], removingReplicas: [] }, [1, 2, 3]);
    expect(a).toEqual({ replicas: [1, 2, 3, 0], addingReplicas: [3], removingReplicas: [0] });
    expect(originReplicas(a)).toEqual([1, 2, 0]);
    expect(targetReplicas(a)).toEqual([1, 2, 3]);
    // a new target replaces the old one from the same origin
    expect(reassignTo(a, [3, 4, 5])).toEqual({ replicas: [3, 4, 5, 1, 2, 0], addingReplicas: [3, 4, 5], removingReplicas: [1, 2, 0] });
    expect(reassignTo(a, originReplicas(a))).toEqual({ replicas: [1, 2, 0], addingReplicas: [], removingReplicas: [] });
  });
});

describe('partition reassignment on the controller (in-memory ZooKeeper)', () => {
  it('reassignment – AR = OAR + RAR written first, LeaderAndIsr under a new epoch to all four replicas; completes when RAR ⊆ ISR: leader moved into RAR, old replica out of the ISR and deleted, AR = RAR written last', async () => {
    const { server } = await cluster([0, 1, 2]);
    const env = await startController(server);
    const before = (await env.kzk.getPartitionState(tp))!.state;
    expect(before.leader).toBe(0);
    env.sent.length = 0;

    const r = await env.controller.alterPartitionReassignments([{ ...tp, replicas: [1, 2, 3] }]);
    expect(r.errorCode).toBe(0);
    expect(r.results.get('t-0')).toEqual({ errorCode: 0, message: null });
    // U1: the topic znode holds ORS + TRS with adding/removing, so a new controller can resume
    const mid = await topicZnode(env.kzk);
    expect(mid.partitions.get(0)).toEqual([1, 2, 3, 0]);
    expect(mid.addingReplicas.get(0)).toEqual([3]);
    expect(mid.removingReplicas.get(0)).toEqual([0]);
    // A1: same leader and ISR, new epoch, LeaderAndIsr with the big replica set to every replica
    const midState = (await env.kzk.getPartitionState(tp))!.state;
    expect(midState).toMatchObject({ leader: 0, isr: [0, 1, 2], leaderEpoch: before.leaderEpoch + 1 });
    const lai = leaderAndIsr(env);
    expect(new Set(lai.map((s) => s.brokerId))).toEqual(new Set([0, 1, 2, 3]));
    for (const s of lai)
      expect(s.request.partitions[0]).toMatchObject({
        replicas: [1, 2, 3, 0],
        addingReplicas: [3],
        removingReplicas: [0],
        leaderEpoch: before.leaderEpoch + 1,
      });
    expect(lai.find((s) => s.brokerId === 3)!.request.partitions[0]!.isNew).toBe(true);
    expect(stopReplica(env)).toEqual([]);
    const listed = await env.controller.listPartitionReassignments(null);
    expect(listed.reassignments).toEqual([{ topic: 't', partition: 0, replicas: [1, 2, 3, 0], addingReplicas: [3], removingReplicas: [0] }]);

    // not done while 3 is outside the ISR (an unrelated ISR change does not complete it)
    await leaderExpandsIsr(env.kzk, [0, 1]);
    await new Promise((r) => setTimeout(r, 50));
    expect((await topicZnode(env.kzk)).partitions.get(0)).toEqual([1, 2, 3, 0]);

    env.sent.length = 0;
    await leaderExpandsIsr(env.kzk, [0, 1, 2, 3]);
    await until(async () => (await topicZnode(env.kzk)).partitions.get(0)?.length === 3, 'AR = RAR in the topic znode');
    const done = await topicZnode(env.kzk);
    expect(done.partitions.get(0)).toEqual([1, 2, 3]);
    expect(done.addingReplicas.size + done.removingReplicas.size).toBe(0);
    const st = (await env.kzk.getPartitionState(tp))!.state;
    expect(st.leader).toBe(1); // first target replica in the ISR
    expect(st.isr.sort()).toEqual([1, 2, 3]);
    const stops = stopReplica(env).filter((s) => s.brokerId === 0);
    expect(stops.some((s) => s.request.partitions.some((p) => p.deletePartition))).toBe(true);
    expect(stopReplica(env).every((s) => s.brokerId === 0)).toBe(true);
    expect(env.sent.some((s) => s.request.kind === 'UpdateMetadata' && s.brokerId === 3)).toBe(true);
    expect((await env.controller.listPartitionReassignments(null)).reassignments).toEqual([]);
  });

  it('reassignment – a reassignment stays listed until AR = RAR is in the topic znode: a failed completion write leaves it listed (never "not reassigning" with the removing replica still assigned) and the next ISR change completes it', async () => {
    const { server } = await cluster([0, 1, 2]);
    const env = await startController(server);
    await env.controller.alterPartitionReassignments([{ ...tp, replicas: [1, 2, 3] }]);
    // the completion's topic-znode write (AR = RAR, no adding/removing) fails while `broken`
    const write = env.kzk.setTopicAssignment.bind(env.kzk);
    let failed = 0;
    let broken = true;
    env.kzk.setTopicAssignment = async (topic, t, v) => {
      if (broken && t.addingReplicas.size + t.removingReplicas.size === 0) {
        failed++;
        throw new Error('injected: connection loss while writing the topic znode');
      }
      return write(topic, t, v);
    };
    await leaderExpandsIsr(env.kzk, [0, 1, 2, 3]);
    // the controller's own state-znode writes (leader moved, 0 out of the ISR) re-trigger the
    // completion through the ISR watch: every attempt fails while ZooKeeper is broken
    await until(() => failed >= 2, 'the completion write attempted (and retried)');
    // between steps the controller answers from memory: still listed, with ORS + TRS, as the znode says
    const listed = await env.controller.listPartitionReassignments(null);
    expect(listed.reassignments).toEqual([{ topic: 't', partition: 0, replicas: [1, 2, 3, 0], addingReplicas: [3], removingReplicas: [0] }]);
    expect((await topicZnode(env.kzk)).partitions.get(0)).toEqual([1, 2, 3, 0]);
    // the next ISR change of the partition retries the completion
    broken = false;
    await leaderExpandsIsr(env.kzk, (await env.kzk.getPartitionState(tp))!.state.isr);
    await until(async () => (await topicZnode(env.kzk)).partitions.get(0)?.join() === '1,2,3', 'AR = RAR written on the retry');
    expect((await topicZnode(env.kzk)).removingReplicas.size).toBe(0);
    expect((await env.controller.listPartitionReassignments(null)).reassignments).toEqual([]);
  });

  it('reassignment – /admin/reassign_partitions starts it; the znode is deleted when its last partition completes', async () => {
    const { server, kzk } = await cluster([0, 1, 2]);
    const env = await startController(server);
    await kzk.createPartitionReassignment([{ ...tp, replicas: [3, 1, 2] }]);
    await until(async () => (await topicZnode(env.kzk)).addingReplicas.get(0)?.[0] === 3, 'reassignment started from the admin znode');
    expect(await kzk.zk.exists(ReassignPartitionsZNode.path)).not.toBeNull();
    await leaderExpandsIsr(kzk, [0, 1, 2, 3]);
    await until(async () => (await kzk.zk.exists(ReassignPartitionsZNode.path)) === null, '/admin/reassign_partitions deleted');
    expect((await topicZnode(kzk)).partitions.get(0)).toEqual([3, 1, 2]);
    expect((await kzk.getPartitionState(tp))!.state.leader).toBe(3);
  });

  it('reassignment – a new controller resumes from the topic znode (adding/removing replicas) and completes it', async () => {
    const { server, kzk } = await cluster([0, 1, 2]);
    const first = await startController(server, 0);
    await first.controller.alterPartitionReassignments([{ ...tp, replicas: [1, 2, 3] }]);
    await first.controller.shutdown();
    controllers.splice(controllers.indexOf(first.controller), 1);
    expect((await topicZnode(kzk)).addingReplicas.get(0)).toEqual([3]);

    const second = await startController(server, 1);
    expect(second.controller.epoch).toBeGreaterThan(first.controller.epoch);
    await until(
      () => leaderAndIsr(second).some((s) => s.brokerId === 3 && s.request.partitions.some((p) => p.addingReplicas.includes(3))),
      'LeaderAndIsr to the adding replica from the new controller',
    );
    expect((await second.controller.listPartitionReassignments(null)).reassignments).toHaveLength(1);
    await leaderExpandsIsr(kzk, [0, 1, 2, 3]);
    await until(async () => (await topicZnode(kzk)).partitions.get(0)?.join() === '1,2,3', 'completed by the new controller');
  });

  it('reassignment – cancelling (null replicas) returns to the original replica set and deletes the replica being added; nothing to cancel answers NO_REASSIGNMENT_IN_PROGRESS', async () => {
    const { server, kzk } = await cluster([0, 1, 2]);
    const env = await startController(server);
    const none = await env.controller.alterPartitionReassignments([{ ...tp, replicas: null }]);
    expect(none.results.get('t-0')!.errorCode).toBe(85);
    await env.controller.alterPartitionReassignments([{ ...tp, replicas: [1, 2, 3] }]);
    env.sent.length = 0;
    const r = await env.controller.alterPartitionReassignments([{ ...tp, replicas: null }]);
    expect(r.results.get('t-0')).toEqual({ errorCode: 0, message: null });
    const t = await topicZnode(kzk);
    // Kafka's ORS = RS − AR, in RS order (the target came first): the replica set is the original one
    expect(t.partitions.get(0)).toEqual([1, 2, 0]);
    expect(t.addingReplicas.size + t.removingReplicas.size).toBe(0);
    expect(
      stopReplica(env)
        .filter((s) => s.request.partitions.some((p) => p.deletePartition))
        .map((s) => s.brokerId),
    ).toEqual([3]);
    expect((await kzk.getPartitionState(tp))!.state.leader).toBe(0);
    expect((await env.controller.listPartitionReassignments(null)).reassignments).toEqual([]);
  });

  it('reassignment – reordering the same replicas rewrites the preferred replica only: same leader, ISR and leader epoch, no replica started or stopped', async () => {
    const { server, kzk } = await cluster([0, 1, 2]);
    const env = await startController(server);
    const before = (await kzk.getPartitionState(tp))!.state;
    env.sent.length = 0;
    const r = await env.controller.alterPartitionReassignments([{ ...tp, replicas: [2, 1, 0] }]);
    expect(r.results.get('t-0')!.errorCode).toBe(0);
    expect((await topicZnode(kzk)).partitions.get(0)).toEqual([2, 1, 0]);
    expect((await kzk.getPartitionState(tp))!.state).toEqual(before);
    expect(leaderAndIsr(env)).toEqual([]);
    expect(stopReplica(env)).toEqual([]);
    const um = env.sent.filter((s) => s.request.kind === 'UpdateMetadata');
    expect(um.map((s) => s.brokerId).sort()).toEqual([0, 1, 2, 3]);
    expect(um[0]!.request.kind === 'UpdateMetadata' && um[0]!.request.partitions[0]!.replicas).toEqual([2, 1, 0]);
  });

  it('reassignment – invalid targets are refused per partition (empty, duplicates, negative ids, dead brokers, unknown partitions)', async () => {
    const { server } = await cluster([0, 1, 2]);
    const env = await startController(server);
    const r = await env.controller.alterPartitionReassignments([
      { topic: 't', partition: 0, replicas: [] },
      { topic: 't', partition: 1, replicas: [1, 2] },
      { topic: 'u', partition: 0, replicas: [1, 1] },
      { topic: 'v', partition: 0, replicas: [-1, 2] },
      { topic: 'w', partition: 0, replicas: [1, 9] },
    ]);
    expect(r.results.get('t-0')!.errorCode).toBe(39);
    expect(r.results.get('t-1')!.errorCode).toBe(3);
    expect(r.results.get('u-0')!.errorCode).toBe(39);
    expect(r.results.get('v-0')!.errorCode).toBe(39);
    expect(r.results.get('w-0')).toMatchObject({ errorCode: 39, message: expect.stringMatching(/not alive/) });
  });

  it('reassignment – every controller write is fenced: after another controller bumps the epoch the reassignment answers NOT_CONTROLLER and writes nothing', async () => {
    const { server, kzk } = await cluster([0, 1, 2]);
    const env = await startController(server);
    // another broker won an election: /controller replaced and /controller_epoch bumped
    const other = new KafkaZk(new FakeZkClient(server));
    await other.zk.delete(ControllerZNode.path);
    await other.zk.create(ControllerZNode.path, ControllerZNode.encode({ version: 1, brokerId: 3, timestamp: '0' }));
    const epoch = (await other.getControllerEpoch())!;
    await other.zk.set(ControllerEpochZNode.path, ControllerEpochZNode.encode(epoch.epoch + 1), epoch.stat.version);
    const before = await kzk.zk.get('/brokers/topics/t');
    const r = await env.controller.alterPartitionReassignments([{ ...tp, replicas: [1, 2, 3] }]);
    expect(r.errorCode).toBe(41);
    expect((await kzk.zk.get('/brokers/topics/t')).stat.version).toBe(before.stat.version);
    const st = await kzk.zk.get(TopicPartitionStateZNode.path('t', 0));
    expect(TopicPartitionStateZNode.decode(st.data, 't').controllerEpoch).toBe(epoch.epoch);
  });

  it('reassignment – a topic marked for deletion while one of its partitions is being reassigned is deleted only after the reassignment completes; new reassignments of it are refused', async () => {
    const { server, kzk } = await cluster([0, 1, 2]);
    const env = await startController(server);
    await env.controller.alterPartitionReassignments([{ ...tp, replicas: [1, 2, 3] }]);
    env.sent.length = 0;
    await kzk.zk.create('/admin/delete_topics/t');
    await new Promise((r) => setTimeout(r, 100));
    const deleting = () =>
      stopReplica(env)
        .filter((s) => s.request.partitions.some((p) => p.deletePartition))
        .map((s) => s.brokerId)
        .sort();
    expect(deleting()).toEqual([]);
    const refused = await env.controller.alterPartitionReassignments([{ ...tp, replicas: [3, 2, 1] }]);
    expect(refused.results.get('t-0')!.errorCode).toBe(3);
    await leaderExpandsIsr(kzk, [0, 1, 2, 3]);
    await until(() => deleting().join() === '0,1,2,3', 'the removed replica deleted by the reassignment, then every target replica by the topic deletion');
    expect((await topicZnode(kzk)).partitions.get(0)).toEqual([1, 2, 3]);
  });
});
