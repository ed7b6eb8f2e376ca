import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ZooKeeperEnsemble } from '@samsa/local-cluster';
import { KafkaZk, ZkClient, newTopicId, type BrokerInfo } from '@samsa/zk-paths';
import { topicPartitionKey } from '@samsa/protocol';
import { KafkaController } from './controller.js';
import { RecordingChannel, until } from './test-support.js';

const logger = pino({ level: process.env['SAMSA_TEST_LOG'] ?? 'silent' });

const brokerInfo = (id: number): BrokerInfo => ({
  id,
  endpoints: [
    { listenerName: 'PLAINTEXT', host: '127.0.0.1', port: 9092 + id, securityProtocol: 'PLAINTEXT' },
    { listenerName: 'CONTROLLER', host: '127.0.0.1', port: 19092 + id, securityProtocol: 'PLAINTEXT' },
  ],
  rack: null,
  jmxPort: -1,
  timestamp: String(Date.now()),
  features: {},
  version: 5,
});

describe('controller against real ZooKeeper', () => {
  let dir: string;
  let ens: ZooKeeperEnsemble;
  const clients: ZkClient[] = [];
  const controllers: KafkaController[] = [];
  let chroot = 0;
  let cs = '';

  const zkClient = async () => {
    const c = await ZkClient.connect({ connectString: cs, sessionTimeoutMs: 4000 });
    clients.push(c);
    return c;
  };
  /** A "broker": a session with its registration, plus a controller candidate. */
  const startBroker = async (id: number) => {
    const zk = await zkClient();
    const kzk = new KafkaZk(zk);
    await kzk.createPersistentPaths();
    await kzk.registerBroker(brokerInfo(id));
    const channel = new RecordingChannel();
    const controller = new KafkaController({ brokerId: id, kzk, channel, logger, stateChangeLogger: logger, uncleanLeaderElectionEnable: false });
    controllers.push(controller);
    controller.startup();
    return { id, zk, kzk, channel, controller };
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'samsa-ctl-'));
    ens = await ZooKeeperEnsemble.start({ size: 1, baseDir: dir });
  });
  afterEach(async () => {
    for (const c of controllers.splice(0)) await c.shutdown().catch(() => undefined);
    for (const c of clients.splice(0)) await c.close();
  });
  afterAll(async () => {
    await ens?.stop();
    await rm(dir, { recursive: true, force: true });
  });
  const fresh = () => {
    cs = ens.connectString(`/ctl-${++chroot}`);
  };

  it('controller – exactly one broker wins the election and bumps the controller epoch', async () => {
    fresh();
    const brokers = await Promise.all([0, 1, 2].map(startBroker));
    const active = await until(() => {
      const a = brokers.filter((b) => b.controller.isActive);
      return a.length === 1 ? a[0] : undefined;
    }, 'one active controller');
    expect(active.controller.epoch).toBe(1);
    const kzk = brokers[0]!.kzk;
    expect(await kzk.getControllerId()).toBe(active.id);
    await until(() => brokers.every((b) => b.controller.activeControllerId === active.id), 'everyone knows the controller');
  });

  it('controller – a new topic gets leaders (first live replica) and ISRs, and LeaderAndIsr goes to its replicas', async () => {
    fresh();
    const brokers = await Promise.all([0, 1, 2].map(startBroker));
    const active = await until(() => brokers.find((b) => b.controller.isActive), 'active controller');
    const admin = new KafkaZk(await zkClient());
    await admin.createTopic(
      'orders',
      newTopicId(),
      new Map([
        [0, [1, 0, 2]],
        [1, [2, 1, 0]],
      ]),
      {},
    );
    const s0 = await until(() => admin.getPartitionState({ topic: 'orders', partition: 0 }), 'partition 0 state');
    const s1 = await until(() => admin.getPartitionState({ topic: 'orders', partition: 1 }), 'partition 1 state');
    expect(s0.state).toEqual({ leader: 1, leaderEpoch: 0, isr: [1, 0, 2], controllerEpoch: 1 });
    expect(s1.state.leader).toBe(2);
    await until(
      () => active.channel.sent.some((s) => s.request.kind === 'LeaderAndIsr' && s.request.partitions.some((p) => p.topic === 'orders')),
      'LeaderAndIsr',
    );
    const lai = active.channel.sent.filter((s) => s.request.kind === 'LeaderAndIsr');
    expect(new Set(lai.map((s) => s.brokerId))).toEqual(new Set([0, 1, 2]));
    const first = lai.find((s) => s.brokerId === 0)!.request;
    if (first.kind !== 'LeaderAndIsr') throw new Error('unreachable');
    const p0 = first.partitions.find((p) => p.partition === 0)!;
    expect(p0).toMatchObject({ leader: 1, leaderEpoch: 0, isr: [1, 0, 2], replicas: [1, 0, 2], isNew: true, controllerEpoch: 1 });
    expect(p0.topicId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(first.liveLeaders.map((b) => b.id).sort()).toEqual([1, 2]);
    // UpdateMetadata reaches every broker
    const um = active.channel.sent.filter((s) => s.request.kind === 'UpdateMetadata' && s.request.partitions.some((p) => p.topic === 'orders'));
    expect(new Set(um.map((s) => s.brokerId))).toEqual(new Set([0, 1, 2]));
  });

  it('controller – a dead leader is replaced by the next live ISR replica in AR order and leaves the ISR', async () => {
    fresh();
    const brokers = await Promise.all([0, 1, 2].map(startBroker));
    const active = await until(() => brokers.find((b) => b.controller.isActive), 'active controller');
    const admin = new KafkaZk(await zkClient());
    // a partition led by a broker that is not the controller
    const victim = brokers.find((b) => b.id !== active.id)!;
    const others = [0, 1, 2].filter((id) => id !== victim.id);
    await admin.createTopic('t', newTopicId(), new Map([[0, [victim.id, ...others]]]), {});
    await until(async () => (await admin.getPartitionState({ topic: 't', partition: 0 }))?.state.leader === victim.id, 'initial leader');
    await victim.controller.shutdown();
    await victim.zk.close(); // its registration vanishes
    const after = await until(async () => {
      const s = await admin.getPartitionState({ topic: 't', partition: 0 });
      return s && s.state.leader !== victim.id ? s : undefined;
    }, 'new leader');
    expect(after.state.leader).toBe(others[0]);
    expect(after.state.isr).toEqual(others);
    expect(after.state.leaderEpoch).toBe(1);
  });

  it('controller – losing the only ISR member leaves the partition leaderless unless unclean election is enabled', async () => {
    fresh();
    const brokers = await Promise.all([0, 1].map(startBroker));
    const active = await until(() => brokers.find((b) => b.controller.isActive), 'active controller');
    const victim = brokers.find((b) => b.id !== active.id)!;
    const admin = new KafkaZk(await zkClient());
    await admin.createTopic('solo', newTopicId(), new Map([[0, [victim.id, active.id]]]), {});
    await until(async () => (await admin.getPartitionState({ topic: 'solo', partition: 0 }))?.state.leader === victim.id, 'initial leader');
    // the ISR shrinks to the leader alone (as a leader would write it), then the leader dies
    const st = (await admin.getPartitionState({ topic: 'solo', partition: 0 }))!;
    await admin.conditionalUpdatePartitionState({ topic: 'solo', partition: 0 }, { ...st.state, isr: [victim.id] }, st.zkVersion);
    await victim.controller.shutdown();
    await victim.zk.close();
    const after = await until(async () => {
      const s = await admin.getPartitionState({ topic: 'solo', partition: 0 });
      return s && s.state.leader === -1 ? s : undefined;
    }, 'leaderless partition');
    expect(after.state.isr).toEqual([victim.id]);
  });

  it('controller – when the controller dies another broker takes over with a higher epoch', async () => {
    fresh();
    const brokers = await Promise.all([0, 1, 2].map(startBroker));
    const first = await until(() => brokers.find((b) => b.controller.isActive), 'active controller');
    const epoch = first.controller.epoch;
    await first.controller.shutdown();
    await first.zk.close();
    const rest = brokers.filter((b) => b !== first);
    const next = await until(() => rest.find((b) => b.controller.isActive), 'new controller');
    expect(next.controller.epoch).toBe(epoch + 1);
    await until(() => rest.every((b) => b.controller.activeControllerId === next.id), 'everyone follows');
  });

  it('controller – a hot-standby broker takes over from its warm context, reading only what changed, and ends up with the states ZooKeeper holds', async () => {
    fresh();
    const brokers = await Promise.all([0, 1, 2].map(startBroker));
    const first = await until(() => brokers.find((b) => b.controller.isActive), 'active controller');
    const admin = new KafkaZk(await zkClient());
    const assignment = new Map<number, number[]>();
    for (let p = 0; p < 200; p++) assignment.set(p, [p % 3, (p + 1) % 3, (p + 2) % 3]);
    await admin.createTopic('hot', newTopicId(), assignment, {});
    const rest = brokers.filter((b) => b !== first);
    await until(() => rest.every((b) => b.controller.standby?.stats()?.clean === 200 && b.controller.standby?.stats()?.dirty === 0), 'standbys warm');
    // a leader's ISR change the controller has not heard of yet, just before the controller dies
    const tp = { topic: 'hot', partition: 7 };
    const before = (await admin.getPartitionState(tp))!;
    await admin.zk.set(
      `/brokers/topics/hot/partitions/7/state`,
      Buffer.from(
        JSON.stringify({
          controller_epoch: before.state.controllerEpoch,
          leader: before.state.leader,
          version: 1,
          leader_epoch: before.state.leaderEpoch,
          isr: [before.state.leader],
        }),
      ),
      before.zkVersion,
    );
    await first.controller.shutdown();
    await first.zk.close();
    const next = await until(() => rest.find((b) => b.controller.isActive && b.controller.lastFailoverLoad), 'new controller');
    const load = next.controller.lastFailoverLoad!;
    expect(load['warmStates']! + load['readStates']!).toBe(200);
    expect(load['warmStates']).toBeGreaterThanOrEqual(150);
    expect(load['warmTopics']).toBe(1);
    // the context the new controller works from is ZooKeeper's, partition 7's unannounced ISR change included
    await until(async () => {
      const tps = next.controller.ctx.allPartitions();
      const zkStates = await admin.getPartitionStates(tps);
      const brief = (s: { state: { leader: number; leaderEpoch: number; isr: number[] }; zkVersion: number } | undefined) =>
        s ? `${s.state.leader}/${s.state.leaderEpoch}/${s.state.isr.join(',')}@${s.zkVersion}` : 'none';
      return tps.length === 200 && tps.every((p) => brief(next.controller.ctx.leadershipOf(p)) === brief(zkStates.get(topicPartitionKey(p))));
    }, 'context equal to ZooKeeper');
    expect(next.controller.ctx.leadershipOf(tp)?.zkVersion).toBeGreaterThan(before.zkVersion);
  });

  it('controller – a broker shutting down retires its hot standby, and a controller change does not start it again', async () => {
    fresh();
    const brokers = await Promise.all([0, 1, 2].map(startBroker));
    const first = await until(() => brokers.find((b) => b.controller.isActive), 'active controller');
    const [retiring, other] = brokers.filter((b) => b !== first);
    await until(() => retiring!.controller.standby?.isRunning === true && other!.controller.standby?.isRunning === true, 'standbys running');
    retiring!.controller.retireStandby();
    expect(retiring!.controller.standby?.isRunning).toBe(false);
    // the controller moves: the other standby is the new controller or restarts; the retired one stays off
    await first.controller.shutdown();
    await first.zk.close();
    await until(() => [retiring, other].some((b) => b!.controller.isActive), 'new controller');
    await until(
      () => [retiring, other].every((b) => b!.controller.activeControllerId >= 0 && b!.controller.activeControllerId !== first.id),
      'everyone follows',
    );
    // (a new controller stops its standby too: either way it is not running)
    expect(retiring!.controller.standby?.isRunning).toBe(false);
  });

  it('controller – deleting /controller by hand triggers a re-election', async () => {
    fresh();
    const brokers = await Promise.all([0, 1].map(startBroker));
    const first = await until(() => brokers.find((b) => b.controller.isActive), 'active controller');
    const firstEpoch = first.controller.epoch;
    const admin = await zkClient();
    await admin.delete('/controller');
    const now = await until(() => brokers.find((b) => b.controller.isActive && b.controller.epoch > firstEpoch), 're-election');
    expect(now.controller.epoch).toBe(firstEpoch + 1);
    expect(brokers.filter((b) => b.controller.isActive)).toHaveLength(1);
  });

  it('controller – a topic in /admin/delete_topics is stopped, deleted on every replica and its znodes removed', async () => {
    fresh();
    const brokers = await Promise.all([0, 1, 2].map(startBroker));
    const active = await until(() => brokers.find((b) => b.controller.isActive), 'active controller');
    const admin = new KafkaZk(await zkClient());
    await admin.createTopic(
      'doomed',
      newTopicId(),
      new Map([
        [0, [0, 1, 2]],
        [1, [1, 2, 0]],
      ]),
      { 'retention.ms': '1000' },
    );
    await until(() => admin.getPartitionState({ topic: 'doomed', partition: 1 }), 'partition state');
    await admin.zk.create('/admin/delete_topics/doomed', null, { mkdirp: true });
    await until(async () => !(await admin.topicExists('doomed')), 'topic znode removed');
    // as Kafka's completeDeleteTopic: the topic znode, then its config, then the marker (separate writes)
    await until(async () => (await admin.zk.exists('/config/topics/doomed')) === null, 'topic config removed');
    await until(async () => (await admin.zk.exists('/admin/delete_topics/doomed')) === null, 'deletion marker removed');
    const stops = active.channel.sent.filter((x) => x.request.kind === 'StopReplica');
    const deletes = new Set(
      stops.filter((x) => x.request.kind === 'StopReplica' && x.request.partitions.some((p) => p.deletePartition)).map((x) => x.brokerId),
    );
    expect(deletes).toEqual(new Set([0, 1, 2]));
    // brokers were told the topic is going (leader -2) before the replicas were deleted
    const um = active.channel.sent.find(
      (x) => x.request.kind === 'UpdateMetadata' && x.request.partitions.some((p) => p.topic === 'doomed' && p.leader === -2),
    );
    expect(um).toBeDefined();
    // the controller forgets the topic after it removed the marker (Kafka's completeDeleteTopic order)
    await until(() => !active.controller.ctx.hasTopic('doomed'), 'topic removed from the controller context');
  });
});
