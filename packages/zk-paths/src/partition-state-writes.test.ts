import { describe, expect, it } from 'vitest';
import { FakeZkClient } from './fake-zk-client.js';
import { PARTITIONS_PER_MULTI, createPartitionStates, deletePartitionZNodes, setPartitionStates } from './partition-state-writes.js';
import { ControllerMovedError } from './zk-errors.js';
import { ControllerEpochZNode, TopicPartitionStateZNode, TopicPartitionZNode, TopicPartitionsZNode } from './znodes.js';

const state = (leader: number) => ({ leader, leaderEpoch: 1, isr: [leader], controllerEpoch: 1 });
const tps = (n: number) => Array.from({ length: n }, (_, partition) => ({ topic: 't', partition }));

async function setup() {
  const zk = new FakeZkClient();
  await zk.create(ControllerEpochZNode.path, ControllerEpochZNode.encode(1));
  await zk.mkdirp(TopicPartitionsZNode.path('t'));
  let multis = 0;
  const multi = zk.multi.bind(zk);
  zk.multi = (ops) => {
    multis++;
    return multi(ops);
  };
  return { zk, multis: () => multis };
}

describe('partition state writes', () => {
  it('partition state writes – new partitions are created many per multi; a leftover partitions/<p> is skipped and an existing state reported', async () => {
    const { zk, multis } = await setup();
    await zk.create(TopicPartitionZNode.path('t', 3));
    await zk.create(TopicPartitionZNode.path('t', 7));
    await zk.create(TopicPartitionStateZNode.path('t', 7), TopicPartitionStateZNode.encode(state(9)));
    const all = tps(250);
    const r = await createPartitionStates(
      zk,
      all.map((tp) => ({ tp, state: state(tp.partition % 3) })),
      0,
    );
    expect(r.existed).toEqual([{ topic: 't', partition: 7 }]);
    expect(r.created).toHaveLength(249);
    for (const tp of all.filter((p) => p.partition !== 7)) {
      expect(TopicPartitionStateZNode.decode((await zk.get(TopicPartitionStateZNode.path('t', tp.partition))).data, '')).toEqual(state(tp.partition % 3));
    }
    // the state that existed is untouched
    expect(TopicPartitionStateZNode.decode((await zk.get(TopicPartitionStateZNode.path('t', 7))).data, '').leader).toBe(9);
    // 3 batches, plus one retry for each surprise in the first: partitions/3, partitions/7, then 7's state
    expect(multis()).toBe(Math.ceil(250 / PARTITIONS_PER_MULTI) + 3);
  });

  it('partition state writes – conditional sets go many per multi; a partition whose version moved is reported stale and the rest written', async () => {
    const { zk, multis } = await setup();
    const all = tps(250);
    await createPartitionStates(
      zk,
      all.map((tp) => ({ tp, state: state(0) })),
      0,
    );
    // a leader moved partition 120 on (version 1)
    await zk.set(TopicPartitionStateZNode.path('t', 120), TopicPartitionStateZNode.encode(state(2)), 0);
    const before = multis();
    const r = await setPartitionStates(
      zk,
      all.map((tp) => ({ tp, state: state(1), expectedZkVersion: 0 })),
      0,
    );
    expect(r.stale).toEqual([{ topic: 't', partition: 120 }]);
    expect(r.updated.size).toBe(249);
    expect(r.updated.get('t-0')).toBe(1);
    expect(TopicPartitionStateZNode.decode((await zk.get(TopicPartitionStateZNode.path('t', 120))).data, '').leader).toBe(2);
    expect(TopicPartitionStateZNode.decode((await zk.get(TopicPartitionStateZNode.path('t', 121))).data, '').leader).toBe(1);
    expect(multis() - before).toBe(Math.ceil(250 / PARTITIONS_PER_MULTI) + 1);
  });

  it('partition state writes – a moved controller epoch writes nothing and throws ControllerMovedError', async () => {
    const { zk } = await setup();
    await createPartitionStates(
      zk,
      tps(5).map((tp) => ({ tp, state: state(0) })),
      0,
    );
    await zk.set(ControllerEpochZNode.path, ControllerEpochZNode.encode(2), 0);
    await expect(
      setPartitionStates(
        zk,
        tps(5).map((tp) => ({ tp, state: state(1), expectedZkVersion: 0 })),
        0,
      ),
    ).rejects.toBeInstanceOf(ControllerMovedError);
    expect((await zk.get(TopicPartitionStateZNode.path('t', 4))).stat.version).toBe(0);
  });

  it('partition state writes – a topic’s partition znodes are deleted many per multi; one already gone or with a stray child does not stop the rest', async () => {
    const { zk, multis } = await setup();
    await createPartitionStates(
      zk,
      tps(150).map((tp) => ({ tp, state: state(0) })),
      0,
    );
    await zk.delete(TopicPartitionStateZNode.path('t', 10));
    await zk.create(`${TopicPartitionZNode.path('t', 20)}/stray`);
    const before = multis();
    await deletePartitionZNodes(
      zk,
      't',
      tps(150).map((tp) => tp.partition),
      0,
    );
    expect(await zk.getChildren(TopicPartitionsZNode.path('t'))).toEqual(['20']);
    expect(await zk.getChildren(TopicPartitionZNode.path('t', 20))).toEqual(['stray']);
    // 2 batches, plus one retry each for the missing state and the partition znode with a child
    expect(multis() - before).toBe(2 + 2);
  });
});
