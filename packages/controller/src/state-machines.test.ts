import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { ControllerEpochZNode, FakeZkClient, KafkaZk, TopicPartitionStateZNode, type BrokerInfo } from '@samsa/zk-paths';
import { ControllerContext } from './context.js';
import { FAILED_ELECTION_EXAMPLES, PER_PARTITION_INFO_LIMIT, PartitionStateMachine } from './partition-state-machine.js';
import { ReplicaStateMachine } from './replica-state-machine.js';
import { RequestBatch } from './request-batch.js';
import type { BrokerChannel, ControlRequest } from './requests.js';
import { PARTITION_TRANSITIONS, PartitionState, REPLICA_TRANSITIONS, ReplicaState } from './states.js';
import { testBroker } from './test-support.js';

const log = pino({ level: 'silent' });
const tp = { topic: 't', partition: 0 };

const broker = (id: number): BrokerInfo => testBroker(id, BigInt(100 + id));

/** A state-change logger at info whose lines are kept, parsed. */
function capturingLog() {
  const lines: Array<Record<string, unknown>> = [];
  const captured = pino({ level: 'info' }, { write: (l: string) => lines.push(JSON.parse(l) as Record<string, unknown>) });
  return { lines, captured };
}

async function setup() {
  const zk = new FakeZkClient();
  const kzk = new KafkaZk(zk);
  await kzk.createPersistentPaths();
  await zk.create(ControllerEpochZNode.path, ControllerEpochZNode.encode(1));
  const ctx = new ControllerContext();
  ctx.epoch = 1;
  ctx.epochZkVersion = 0;
  for (const id of [0, 1, 2]) ctx.liveBrokers.set(id, broker(id));
  ctx.addTopic('t', 'AAAAAAAAAAAAAAAAAAAAAA');
  ctx.setAssignment(tp, { replicas: [0, 1, 2], addingReplicas: [], removingReplicas: [] });
  const sent: Array<{ brokerId: number; request: ControlRequest }> = [];
  const channel: BrokerChannel = {
    addBroker: () => undefined,
    removeBroker: () => undefined,
    send: (brokerId, request) => sent.push({ brokerId, request }),
    close: async () => undefined,
  };
  const batch = new RequestBatch(ctx, 0, channel, log);
  const deps = { ctx, kzk, batch, stateChangeLog: log };
  const psm = new PartitionStateMachine({ ...deps, uncleanLeaderElectionEnabled: async () => false });
  const rsm = new ReplicaStateMachine(deps);
  return { zk, kzk, ctx, psm, rsm, batch, sent };
}

/** Makes the partition's ZooKeeper state consistent with `from` so a legal move to Online can succeed. */
async function prepare(env: Awaited<ReturnType<typeof setup>>, from: PartitionState) {
  if (from === 'NewPartition' || from === 'NonExistentPartition') return;
  await env.zk.mkdirp('/brokers/topics/t/partitions/0');
  const state = { leader: 0, leaderEpoch: 3, isr: [0, 1, 2], controllerEpoch: 1 };
  await env.zk.create(TopicPartitionStateZNode.path('t', 0), TopicPartitionStateZNode.encode(state));
  env.ctx.setLeadership(tp, { state, zkVersion: 0 });
}

describe('partition state machine', () => {
  const all = Object.values(PartitionState);
  for (const from of all) {
    for (const to of all) {
      const legal = PARTITION_TRANSITIONS[to].includes(from);
      it(`partition state machine – ${from} → ${to} is ${legal ? 'applied' : 'refused and skipped'}`, async () => {
        const env = await setup();
        await prepare(env, from);
        env.ctx.putPartitionState(tp, from);
        const results = await env.psm.handleStateChanges([tp], to, { kind: 'offline', allowUnclean: false });
        if (!legal) {
          expect(env.ctx.partitionState(tp)).toBe(from);
          expect(results.get('t-0')).toMatchObject({ ok: false });
          return;
        }
        expect(env.ctx.partitionState(tp)).toBe(to);
        if (to === 'OnlinePartition') {
          const st = await env.kzk.getPartitionState(tp);
          expect(st?.state.leader).toBe(0);
          // a new partition starts at epoch 0; an election bumps the epoch
          expect(st?.state.leaderEpoch).toBe(from === 'NewPartition' ? 0 : 4);
          env.batch.send();
          expect(new Set(env.sent.filter((s) => s.request.kind === 'LeaderAndIsr').map((s) => s.brokerId))).toEqual(new Set([0, 1, 2]));
        }
      });
    }
  }

  it('partition state machine – election with no live ISR member leaves the partition offline', async () => {
    const env = await setup();
    await prepare(env, 'OfflinePartition');
    env.ctx.putPartitionState(tp, 'OfflinePartition');
    env.ctx.liveBrokers.delete(0);
    env.ctx.liveBrokers.delete(1);
    env.ctx.liveBrokers.delete(2);
    const r = await env.psm.handleStateChanges([tp], 'OnlinePartition', { kind: 'offline', allowUnclean: false });
    expect(r.get('t-0')).toMatchObject({ ok: false });
    expect(env.ctx.partitionState(tp)).toBe('OfflinePartition');
  });

  it('partition state machine – a batch of N failed elections is one state-change ERROR with count N and a few examples', async () => {
    const { lines, captured } = capturingLog();
    const env = await setup();
    const psm = new PartitionStateMachine({
      ctx: env.ctx,
      kzk: env.kzk,
      batch: env.batch,
      stateChangeLog: captured,
      uncleanLeaderElectionEnabled: async () => false,
    });
    // the cluster going down: 40 single-replica partitions whose only broker (2) is gone
    const n = 40;
    const tps = Array.from({ length: n }, (_, partition) => ({ topic: 'single', partition }));
    env.ctx.addTopic('single', 'BBBBBBBBBBBBBBBBBBBBBB');
    await env.zk.mkdirp('/brokers/topics/single/partitions');
    for (const p of tps) {
      const state = { leader: 2, leaderEpoch: 0, isr: [2], controllerEpoch: 1 };
      env.ctx.setAssignment(p, { replicas: [2], addingReplicas: [], removingReplicas: [] });
      await env.zk.mkdirp(`/brokers/topics/single/partitions/${p.partition}`);
      await env.zk.create(TopicPartitionStateZNode.path('single', p.partition), TopicPartitionStateZNode.encode(state));
      env.ctx.setLeadership(p, { state, zkVersion: 0 });
      env.ctx.putPartitionState(p, 'OfflinePartition');
    }
    env.ctx.liveBrokers.delete(2);
    const r = await psm.handleStateChanges(tps, 'OnlinePartition', { kind: 'offline', allowUnclean: false });
    expect([...r.values()].filter((x) => !x.ok)).toHaveLength(n);
    const failed = lines.filter((l) => String(l['msg']).includes('no eligible replica'));
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ level: 50, count: n, strategy: 'offline', msg: `leader election failed for ${n} partition(s): no eligible replica` });
    expect(failed[0]!['examples']).toEqual(
      tps.slice(0, FAILED_ELECTION_EXAMPLES).map((p) => ({ partition: `single-${p.partition}`, replicas: [2], isr: [2], live: [] })),
    );
  });

  for (const n of [3, PER_PARTITION_INFO_LIMIT + 1]) {
    it(`partition state machine – a batch of ${n} elections: ${n <= PER_PARTITION_INFO_LIMIT ? 'one info line per partition (the console reads them)' : 'per-partition lines at debug'} and one summary line`, async () => {
      const { lines, captured } = capturingLog();
      const env = await setup();
      const psm = new PartitionStateMachine({
        ctx: env.ctx,
        kzk: env.kzk,
        batch: env.batch,
        stateChangeLog: captured,
        uncleanLeaderElectionEnabled: async () => false,
      });
      const tps = Array.from({ length: n }, (_, partition) => ({ topic: 'many', partition }));
      env.ctx.addTopic('many', 'CCCCCCCCCCCCCCCCCCCCCC');
      await env.zk.mkdirp('/brokers/topics/many/partitions');
      await env.kzk.createPartitionStates(
        tps.map((tp) => ({ tp, state: { leader: 0, leaderEpoch: 0, isr: [0, 1], controllerEpoch: 1 } })),
        0,
      );
      for (const tp of tps) {
        env.ctx.setAssignment(tp, { replicas: [0, 1], addingReplicas: [], removingReplicas: [] });
        env.ctx.setLeadership(tp, { state: { leader: 0, leaderEpoch: 0, isr: [0, 1], controllerEpoch: 1 }, zkVersion: 0 });
        env.ctx.putPartitionState(tp, 'OfflinePartition');
      }
      env.ctx.liveBrokers.delete(0);
      await psm.handleStateChanges(tps, 'OnlinePartition', { kind: 'offline', allowUnclean: false });
      expect(lines.filter((l) => l['msg'] === 'elected leader')).toHaveLength(n <= PER_PARTITION_INFO_LIMIT ? n : 0);
      expect(lines.filter((l) => l['msg'] === 'elected leaders')).toEqual([expect.objectContaining({ partitions: n, strategy: 'offline' })]);
    });
  }

  it('partition state machine – elections that all succeed log no failure line', async () => {
    const { lines, captured } = capturingLog();
    const env = await setup();
    const psm = new PartitionStateMachine({
      ctx: env.ctx,
      kzk: env.kzk,
      batch: env.batch,
      stateChangeLog: captured,
      uncleanLeaderElectionEnabled: async () => false,
    });
    await prepare(env, 'OfflinePartition');
    env.ctx.putPartitionState(tp, 'OfflinePartition');
    env.ctx.liveBrokers.delete(0);
    const r = await psm.handleStateChanges([tp], 'OnlinePartition', { kind: 'offline', allowUnclean: false });
    expect(r.get('t-0')).toEqual({ ok: true, leader: 1 });
    expect(lines.filter((l) => String(l['msg']).includes('no eligible replica'))).toHaveLength(0);
  });

  it('partition state machine – a write from a newer controller epoch is never overwritten', async () => {
    const env = await setup();
    await env.zk.mkdirp('/brokers/topics/t/partitions/0');
    await env.zk.create(TopicPartitionStateZNode.path('t', 0), TopicPartitionStateZNode.encode({ leader: 1, leaderEpoch: 9, isr: [1], controllerEpoch: 2 }));
    env.ctx.putPartitionState(tp, 'OfflinePartition');
    const r = await env.psm.handleStateChanges([tp], 'OnlinePartition', { kind: 'offline', allowUnclean: false });
    expect(r.get('t-0')).toMatchObject({ ok: false });
    expect((await env.kzk.getPartitionState(tp))?.state.leaderEpoch).toBe(9);
  });

  /** ZooKeeper moved on from the context's view (a leader wrote an ISR change not yet announced): ISR [0] at version 1. */
  async function withStaleView() {
    const env = await setup();
    await prepare(env, 'OnlinePartition'); // context and ZooKeeper: leader 0, ISR [0,1,2], version 0
    await env.kzk.zk.set(
      TopicPartitionStateZNode.path('t', 0),
      TopicPartitionStateZNode.encode({ leader: 0, leaderEpoch: 3, isr: [0], controllerEpoch: 1 }),
      0,
    );
    return env;
  }

  it('partition state machine – an election from a stale view fails its conditional write and is redone from ZooKeeper', async () => {
    const env = await withStaleView();
    env.ctx.liveBrokers.delete(0);
    env.ctx.putPartitionState(tp, 'OfflinePartition');
    const r = await env.psm.handleStateChanges([tp], 'OnlinePartition', { kind: 'offline', allowUnclean: false });
    // by the stale view broker 1 was in the ISR; ZooKeeper's ISR is [0] only, so no clean leader exists
    expect(r.get('t-0')).toMatchObject({ ok: false });
    const st = await env.kzk.getPartitionState(tp);
    expect(st).toEqual({ state: { leader: 0, leaderEpoch: 3, isr: [0], controllerEpoch: 1 }, zkVersion: 1 });
  });

  it('partition state machine – an election from a current view writes without reading the state first', async () => {
    const env = await setup();
    await prepare(env, 'OnlinePartition');
    env.ctx.liveBrokers.delete(0);
    env.ctx.putPartitionState(tp, 'OfflinePartition');
    let reads = 0;
    const get = env.kzk.zk.getOrNull.bind(env.kzk.zk);
    env.kzk.zk.getOrNull = async (path: string) => {
      if (path === TopicPartitionStateZNode.path('t', 0)) reads++;
      return get(path);
    };
    const r = await env.psm.handleStateChanges([tp], 'OnlinePartition', { kind: 'offline', allowUnclean: false });
    expect(r.get('t-0')).toEqual({ ok: true, leader: 1 });
    expect(reads).toBe(0);
    expect((await env.kzk.getPartitionState(tp))?.state).toEqual({ leader: 1, leaderEpoch: 4, isr: [1, 2], controllerEpoch: 1 });
  });
});

describe('replica state machine', () => {
  const all = Object.values(ReplicaState);
  for (const from of all) {
    for (const to of all) {
      const legal = REPLICA_TRANSITIONS[to].includes(from);
      it(`replica state machine – ${from} → ${to} is ${legal ? 'applied' : 'refused and skipped'}`, async () => {
        const env = await setup();
        await prepare(env, 'OnlinePartition');
        const replica = 2; // a follower, never the leader
        env.ctx.putReplicaState(tp, replica, from);
        await env.rsm.handleStateChanges([{ tp, replica }], to);
        if (!legal) {
          expect(env.ctx.replicaState(tp, replica)).toBe(from);
          return;
        }
        if (to === 'NonExistentReplica') {
          expect(env.ctx.replicas(tp)).not.toContain(replica);
          return;
        }
        expect(env.ctx.replicaState(tp, replica)).toBe(to);
        if (to === 'OfflineReplica') {
          // the offline follower leaves the ISR in ZooKeeper, conditionally and with a new leader epoch
          const st = await env.kzk.getPartitionState(tp);
          expect(st?.state.isr).toEqual([0, 1]);
          expect(st?.state.leaderEpoch).toBe(4);
        }
      });
    }
  }

  /** t-0 led by 0 with ISR [0, 1] in ZooKeeper and the context; replica 2 online. */
  async function withReplica2OutOfIsr() {
    const env = await setup();
    await env.zk.mkdirp('/brokers/topics/t/partitions/0');
    const state = { leader: 0, leaderEpoch: 5, isr: [0, 1], controllerEpoch: 1 };
    await env.zk.create(TopicPartitionStateZNode.path('t', 0), TopicPartitionStateZNode.encode(state));
    env.ctx.setLeadership(tp, { state, zkVersion: 0 });
    env.ctx.putReplicaState(tp, 2, 'OnlineReplica');
    return { env, state };
  }

  it('replica state machine – OfflineReplica of a replica already out of the ISR sends no LeaderAndIsr, only UpdateMetadata', async () => {
    // a controlled shutdown already took broker 2 out of the ISR
    const { env, state } = await withReplica2OutOfIsr();
    env.ctx.liveBrokers.delete(2);
    await env.rsm.handleStateChanges([{ tp, replica: 2 }], 'OfflineReplica');
    env.batch.send();
    expect(env.ctx.replicaState(tp, 2)).toBe('OfflineReplica');
    expect((await env.kzk.getPartitionState(tp))?.state).toEqual(state);
    expect(env.sent.filter((x) => x.request.kind === 'LeaderAndIsr')).toEqual([]);
    const updates = env.sent.filter((x) => x.request.kind === 'UpdateMetadata');
    expect(updates.map((x) => x.brokerId).sort()).toEqual([0, 1]);
    expect(updates.every((x) => x.request.kind === 'UpdateMetadata' && x.request.partitions.some((p) => p.topic === 't' && p.partition === 0))).toBe(true);
  });

  it('replica state machine – a replica out of the ISR only by a stale view is checked in ZooKeeper and removed there', async () => {
    const { env } = await withReplica2OutOfIsr();
    // the leader took broker 2 back into the ISR (version 1) and the controller has not heard yet
    await env.zk.set(
      TopicPartitionStateZNode.path('t', 0),
      TopicPartitionStateZNode.encode({ leader: 0, leaderEpoch: 5, isr: [0, 1, 2], controllerEpoch: 1 }),
      0,
    );
    env.ctx.liveBrokers.delete(2);
    await env.rsm.handleStateChanges([{ tp, replica: 2 }], 'OfflineReplica');
    const st = await env.kzk.getPartitionState(tp);
    expect(st?.state).toEqual({ leader: 0, leaderEpoch: 6, isr: [0, 1], controllerEpoch: 1 });
    expect(env.ctx.leadershipOf(tp)).toEqual(st);
  });

  it('replica state machine – OfflineReplica of a replica already out of the ISR of a topic being deleted sends nothing (brokers dropped the topic)', async () => {
    const { env } = await withReplica2OutOfIsr();
    env.ctx.topicsToBeDeleted.add('t');
    await env.rsm.handleStateChanges([{ tp, replica: 2 }], 'OfflineReplica');
    env.batch.send();
    expect(env.sent.filter((x) => x.request.kind === 'LeaderAndIsr' || x.request.kind === 'UpdateMetadata')).toEqual([]);
  });
});
