import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { FakeZkClient, KafkaZk, TopicPartitionStateZNode, TopicZNode, ZkSessionEvent, type LeaderIsrAndControllerEpoch } from '@samsa/zk-paths';
import type { PartitionState as ControlPartitionState } from '@samsa/protocol';
import { ControllerContext } from './context.js';
import { loadPartitionStates } from './failover-load.js';
import { HotStandby, type WarmView } from './hot-standby.js';
import { until } from './test-support.js';

const log = pino({ level: 'silent' });
const TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAA';

async function createTopic(zk: FakeZkClient, topic: string, partitions: number): Promise<void> {
  const assignment = new Map<number, number[]>();
  for (let p = 0; p < partitions; p++) assignment.set(p, [0, 1, 2]);
  await zk.create(
    TopicZNode.path(topic),
    TopicZNode.encode({ topicId: TOPIC_ID, partitions: assignment, addingReplicas: new Map(), removingReplicas: new Map(), version: 3 }),
    { mkdirp: true },
  );
  for (let p = 0; p < partitions; p++) {
    await zk.create(
      TopicPartitionStateZNode.path(topic, p),
      TopicPartitionStateZNode.encode({ leader: p % 3, leaderEpoch: 0, isr: [0, 1, 2], controllerEpoch: 1 }),
      { mkdirp: true },
    );
  }
}

/** A fake ZooKeeper whose state-znode reads and exists calls are counted. */
function setup(maxPartitions = 100) {
  const zk = new FakeZkClient();
  const reads: string[] = [];
  const exists: string[] = [];
  const getWithWatch = zk.getWithWatch.bind(zk);
  const existsWithWatch = zk.existsWithWatch.bind(zk);
  zk.getWithWatch = (path, onEvent) => {
    if (path.endsWith('/state')) reads.push(path);
    return getWithWatch(path, onEvent);
  };
  zk.existsWithWatch = (path, onEvent) => {
    if (path.endsWith('/state')) exists.push(path);
    return existsWithWatch(path, onEvent);
  };
  const kzk = new KafkaZk(zk);
  const standby = new HotStandby({ kzk, log, maxPartitions, recheckDelayMs: 5 });
  return { zk, kzk, standby, reads, exists };
}

const clean = (s: HotStandby, n: number) => until(() => s.stats().clean === n && s.stats().dirty === 0, `${n} clean partition states`);

function umState(topic: string, partition: number, s: LeaderIsrAndControllerEpoch, zkVersion: number): ControlPartitionState {
  return {
    topic,
    topicId: TOPIC_ID,
    partition,
    ...s,
    zkVersion,
    replicas: [0, 1, 2],
    addingReplicas: [],
    removingReplicas: [],
    isNew: false,
    offlineReplicas: [],
    leaderRecoveryState: 0,
  };
}

describe('hot standby', () => {
  it('hot standby – warms every partition state of every topic and hands them over with their zkVersions', async () => {
    const { zk, standby } = setup();
    await createTopic(zk, 't', 3);
    await createTopic(zk, 'u', 2);
    standby.start();
    await clean(standby, 5);
    const view = standby.view();
    expect([...view.topics.keys()].sort()).toEqual(['t', 'u']);
    expect(view.topics.get('t')?.partitions.size).toBe(3);
    expect(view.partitions.get('t-1')).toEqual({ state: { leader: 1, leaderEpoch: 0, isr: [0, 1, 2], controllerEpoch: 1 }, zkVersion: 0 });
    standby.stop();
  });

  it('hot standby – a written state znode leaves the view at once and comes back with the new state after the re-check', async () => {
    const { zk, standby, reads } = setup();
    await createTopic(zk, 't', 2);
    standby.start();
    await clean(standby, 2);
    reads.length = 0;
    await zk.set(TopicPartitionStateZNode.path('t', 0), TopicPartitionStateZNode.encode({ leader: 2, leaderEpoch: 1, isr: [2], controllerEpoch: 1 }), 0);
    expect(standby.view().partitions.has('t-0')).toBe(false);
    expect(standby.view().partitions.has('t-1')).toBe(true);
    await clean(standby, 2);
    expect(standby.view().partitions.get('t-0')).toEqual({ state: { leader: 2, leaderEpoch: 1, isr: [2], controllerEpoch: 1 }, zkVersion: 1 });
    expect(reads).toEqual([TopicPartitionStateZNode.path('t', 0)]);
    standby.stop();
  });

  it('hot standby – an UpdateMetadata naming the new zkVersion lets the re-check confirm it with exists instead of a read', async () => {
    const { zk, standby, reads, exists } = setup();
    await createTopic(zk, 't', 1);
    standby.start();
    await clean(standby, 1);
    reads.length = 0;
    const next = { leader: 1, leaderEpoch: 1, isr: [1, 2], controllerEpoch: 1 };
    await zk.set(TopicPartitionStateZNode.path('t', 0), TopicPartitionStateZNode.encode(next), 0);
    standby.observeUpdateMetadata([umState('t', 0, next, 1)]);
    await clean(standby, 1);
    expect(exists).toEqual([TopicPartitionStateZNode.path('t', 0)]);
    expect(reads).toEqual([]);
    expect(standby.view().partitions.get('t-0')).toEqual({ state: next, zkVersion: 1 });
    standby.stop();
  });

  it('hot standby – a hint ZooKeeper does not confirm is never adopted: the state znode is read', async () => {
    const { zk, standby, reads } = setup();
    await createTopic(zk, 't', 1);
    standby.start();
    await clean(standby, 1);
    reads.length = 0;
    const written = { leader: 2, leaderEpoch: 1, isr: [2], controllerEpoch: 1 };
    await zk.set(TopicPartitionStateZNode.path('t', 0), TopicPartitionStateZNode.encode(written), 0);
    // a hint for a later version than ZooKeeper holds (the broker heard of a write the standby has not seen)
    standby.observeUpdateMetadata([umState('t', 0, { leader: 0, leaderEpoch: 2, isr: [0], controllerEpoch: 1 }, 2)]);
    await clean(standby, 1);
    expect(reads).toEqual([TopicPartitionStateZNode.path('t', 0)]);
    expect(standby.view().partitions.get('t-0')).toEqual({ state: written, zkVersion: 1 });
    standby.stop();
  });

  it('hot standby – a lost session makes every entry dirty until the new session re-checks it', async () => {
    const { zk, standby } = setup();
    await createTopic(zk, 't', 3);
    standby.start();
    await clean(standby, 3);
    zk.emit('state', ZkSessionEvent.Expired);
    expect(standby.view()).toMatchObject({ topics: new Map(), partitions: new Map() });
    zk.emit('state', ZkSessionEvent.NewSession);
    await clean(standby, 3);
    expect(standby.view().partitions.size).toBe(3);
    standby.stop();
  });

  it('hot standby – follows topics created, grown and deleted', async () => {
    const { zk, standby } = setup();
    await createTopic(zk, 't', 1);
    standby.start();
    await clean(standby, 1);
    await createTopic(zk, 'u', 2);
    await clean(standby, 3);
    const grown = new Map([
      [0, [0, 1, 2]],
      [1, [1, 2, 0]],
    ]);
    await zk.set(
      TopicZNode.path('t'),
      TopicZNode.encode({ topicId: TOPIC_ID, partitions: grown, addingReplicas: new Map(), removingReplicas: new Map(), version: 3 }),
    );
    await zk.create(TopicPartitionStateZNode.path('t', 1), TopicPartitionStateZNode.encode({ leader: 1, leaderEpoch: 0, isr: [1, 2, 0], controllerEpoch: 1 }), {
      mkdirp: true,
    });
    await clean(standby, 4);
    await zk.deleteRecursive(TopicZNode.path('u'));
    await until(() => standby.stats().partitions === 2, 'u forgotten');
    expect([...standby.view().partitions.keys()].sort()).toEqual(['t-0', 't-1']);
    standby.stop();
  });

  it('hot standby – beyond controller.hot.standby.max.partitions partitions are left to the failover read', async () => {
    const { zk, standby } = setup(2);
    await createTopic(zk, 't', 5);
    standby.start();
    await clean(standby, 2);
    expect(standby.stats().partitions).toBe(2);
    standby.stop();
  });
});

describe('failover load', () => {
  async function contextFor(zk: FakeZkClient, topic: string, partitions: number): Promise<ControllerContext> {
    const ctx = new ControllerContext();
    ctx.addTopic(topic, TOPIC_ID);
    for (let p = 0; p < partitions; p++) ctx.setAssignment({ topic, partition: p }, { replicas: [0, 1, 2], addingReplicas: [], removingReplicas: [] });
    void zk;
    return ctx;
  }

  it('failover load – adopts the warm states and reads only the partitions the standby does not hold', async () => {
    const { zk, kzk, standby } = setup();
    await createTopic(zk, 't', 4);
    standby.start();
    await clean(standby, 4);
    const view = standby.view();
    view.partitions.delete('t-3');
    const ctx = await contextFor(zk, 't', 4);
    const load = await loadPartitionStates(ctx, kzk, log, view, 2);
    expect(load).toEqual({ warm: 3, read: 1, sampled: 2, disagreed: [] });
    for (let p = 0; p < 4; p++) expect(ctx.leadershipOf({ topic: 't', partition: p })).toEqual(await kzk.getPartitionState({ topic: 't', partition: p }));
    standby.stop();
  });

  it('failover load – a warm state written after the view is read again, and a sampled one is no disagreement', async () => {
    const { zk, kzk, standby } = setup();
    await createTopic(zk, 't', 4);
    standby.start();
    await clean(standby, 4);
    const view = standby.view();
    // a leader's ISR write lands between the view and the controller's reads
    const next = { leader: 1, leaderEpoch: 0, isr: [1], controllerEpoch: 1 };
    await zk.set(TopicPartitionStateZNode.path('t', 1), TopicPartitionStateZNode.encode(next), 0);
    await zk.set(TopicPartitionStateZNode.path('t', 2), TopicPartitionStateZNode.encode(next), 0);
    const ctx = await contextFor(zk, 't', 4);
    // sample of 1: whichever partition is sampled, nothing disagrees; both moved partitions are read
    const load = await loadPartitionStates(ctx, kzk, log, view, 1);
    expect(load).toEqual({ warm: 2, read: 2, sampled: 1, disagreed: [] });
    expect(ctx.leadershipOf({ topic: 't', partition: 1 })).toEqual({ state: next, zkVersion: 1 });
    expect(ctx.leadershipOf({ topic: 't', partition: 2 })).toEqual({ state: next, zkVersion: 1 });
    expect(ctx.leadershipOf({ topic: 't', partition: 3 })?.zkVersion).toBe(0);
    standby.stop();
  });

  it('failover load – a sampled warm state that disagrees with ZooKeeper throws the view away and every state is read', async () => {
    const { zk, kzk } = setup();
    await createTopic(zk, 't', 3);
    const wrong = { state: { leader: 0, leaderEpoch: 0, isr: [0, 1, 2], controllerEpoch: 1 }, zkVersion: 7 };
    const view: WarmView = {
      topics: new Map(),
      partitions: new Map([
        ['t-0', wrong],
        ['t-1', wrong],
        ['t-2', wrong],
      ]),
    };
    const ctx = await contextFor(zk, 't', 3);
    const load = await loadPartitionStates(ctx, kzk, log, view, 32);
    expect(load.disagreed.sort()).toEqual(['t-0', 't-1', 't-2']);
    expect(load).toMatchObject({ warm: 0, read: 3 });
    for (let p = 0; p < 3; p++) expect(ctx.leadershipOf({ topic: 't', partition: p })?.zkVersion).toBe(0);
  });

  it('failover load – without a hot standby every partition state is read', async () => {
    const { zk, kzk } = setup();
    await createTopic(zk, 't', 3);
    const ctx = await contextFor(zk, 't', 3);
    expect(await loadPartitionStates(ctx, kzk, log, undefined)).toEqual({ warm: 0, read: 3, sampled: 0, disagreed: [] });
    expect(ctx.leadershipOf({ topic: 't', partition: 2 })?.state.leader).toBe(2);
  });
});
