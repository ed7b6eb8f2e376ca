import { describe, expect, it } from 'vitest';
import { topicPartitionKey } from '@samsa/client';
import type { LeaderIsrAndControllerEpoch, TopicAssignment } from '@samsa/zk-paths';
import { runTopicsCommand } from './topics.js';
import { TopicExistsError, type ZkTopicStore } from './topics-zk.js';

/** ZooKeeper as the tool sees it, in memory. */
class MemoryZk implements ZkTopicStore {
  brokers: Array<{ id: number; rack: string | null }> = [];
  topics = new Map<string, { assignment: TopicAssignment; version: number }>();
  states = new Map<string, LeaderIsrAndControllerEpoch>();
  configs = new Map<string, Record<string, string>>();
  deletions = new Set<string>();
  closed = 0;

  addTopic(
    name: string,
    assignment: number[][],
    opts: { topicId?: string | null; configs?: Record<string, string>; leaders?: Array<number | null>; isr?: number[][] } = {},
  ): void {
    this.topics.set(name, {
      version: 0,
      assignment: {
        version: 3,
        topicId: opts.topicId === undefined ? 'kzxIyXZ8QyWuRfTMUxFjTw' : opts.topicId,
        partitions: new Map(assignment.map((r, p) => [p, r])),
        addingReplicas: new Map(),
        removingReplicas: new Map(),
      },
    });
    assignment.forEach((replicas, p) => {
      const leader = opts.leaders ? opts.leaders[p] : replicas[0];
      if (leader === null) return; // no state znode
      this.states.set(topicPartitionKey(name, p), { leader: leader ?? -1, leaderEpoch: 0, isr: opts.isr?.[p] ?? replicas, controllerEpoch: 1 });
    });
    if (opts.configs) this.configs.set(name, opts.configs);
  }

  async getBrokers() {
    return [...this.brokers].sort((a, b) => a.id - b.id);
  }
  async getAllTopics() {
    return [...this.topics.keys()];
  }
  async getTopicAssignment(topic: string) {
    return this.topics.get(topic) ?? null;
  }
  async getPartitionStates(topic: string, partitions: readonly number[]) {
    const out = new Map<number, LeaderIsrAndControllerEpoch>();
    for (const p of partitions) {
      const s = this.states.get(topicPartitionKey(topic, p));
      if (s) out.set(p, s);
    }
    return out;
  }
  async getTopicConfig(topic: string) {
    return this.configs.get(topic) ?? {};
  }
  async isMarkedForDeletion(topic: string) {
    return this.deletions.has(topic);
  }
  async createTopic(topic: string, topicId: string, assignment: Map<number, number[]>, config: Record<string, string>) {
    this.configs.set(topic, config);
    if (this.topics.has(topic)) throw new TopicExistsError(`Topic '${topic}' already exists.`);
    this.topics.set(topic, { version: 0, assignment: { version: 3, topicId, partitions: assignment, addingReplicas: new Map(), removingReplicas: new Map() } });
  }
  async markForDeletion(topic: string) {
    if (this.deletions.has(topic)) return false;
    this.deletions.add(topic);
    return true;
  }
  async setTopicAssignment(topic: string, assignment: TopicAssignment, expectedVersion: number) {
    const cur = this.topics.get(topic)!;
    if (cur.version !== expectedVersion) throw new Error('BAD_VERSION');
    this.topics.set(topic, { assignment, version: cur.version + 1 });
  }
  async close() {
    this.closed++;
  }
}

async function run(zk: MemoryZk, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const connects: string[] = [];
  const code = await runTopicsCommand(
    ['--zookeeper', 'zk1:2181,zk2:2181/kafka', ...args],
    { out: (s) => (out += s), err: (s) => (err += s) },
    {
      openZk: async (c) => {
        connects.push(c);
        return zk;
      },
      random: () => 0,
    },
  );
  for (const c of connects) expect(c).toBe('zk1:2181,zk2:2181/kafka');
  return { code, out, err };
}

const threeBrokers = () => {
  const zk = new MemoryZk();
  zk.brokers = [
    { id: 2, rack: null },
    { id: 0, rack: null },
    { id: 1, rack: null },
  ];
  return zk;
};

describe('samsa topics --zookeeper', () => {
  it("--create computes Kafka's assignment over the registered brokers and writes the topic", async () => {
    const zk = threeBrokers();
    const r = await run(zk, '--create', '--topic', 'orders', '--partitions', '4', '--replication-factor', '2', '--config', 'retention.ms=1000');
    expect(r).toEqual({ code: 0, out: 'Created topic orders.\n', err: '' });
    const { assignment } = zk.topics.get('orders')!;
    // AdminUtils.assignReplicasToBrokers with start index 0 and shift 0 over brokers 0,1,2
    expect([...assignment.partitions]).toEqual([
      [0, [0, 1]],
      [1, [1, 2]],
      [2, [2, 0]],
      [3, [0, 2]],
    ]);
    expect(assignment.topicId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(zk.configs.get('orders')).toEqual({ 'retention.ms': '1000' });
    expect(zk.closed).toBe(1);
  });

  it('--create validates names, replication factor, configs, existing and colliding topics', async () => {
    const zk = new MemoryZk();
    zk.brokers = [{ id: 1, rack: null }];
    const err = async (...a: string[]) => (await run(zk, ...a)).out;
    expect(await err('--create', '--topic', 't', '--partitions', '1', '--replication-factor', '3')).toBe(
      'Error while executing topic command : Replication factor: 3 larger than available brokers: 1.\n',
    );
    expect(await err('--create', '--topic', 'bad name', '--partitions', '1', '--replication-factor', '1')).toBe(
      `Error while executing topic command : Topic name "bad name" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'\n`,
    );
    expect(await err('--create', '--topic', 't', '--partitions', '0', '--replication-factor', '1')).toBe(
      'Error while executing topic command : Number of partitions must be larger than 0.\n',
    );
    expect(await err('--create', '--topic', 't', '--partitions', '1', '--replication-factor', '1', '--config', 'no.such=1')).toBe(
      'Error while executing topic command : Unknown topic config name: no.such\n',
    );
    zk.addTopic('a_b', [[1]]);
    expect(await err('--create', '--topic', 'a_b', '--partitions', '1', '--replication-factor', '1')).toBe(
      "WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') could collide. To avoid issues it is best to use either, but not both.\n" +
        "Error while executing topic command : Topic 'a_b' already exists.\n",
    );
    expect(await err('--create', '--topic', 'a.b', '--partitions', '1', '--replication-factor', '1')).toMatch(
      /Error while executing topic command : Topic 'a\.b' collides with existing topics: a_b\n$/,
    );
    expect((await run(zk, '--create', '--topic', 'a_b', '--partitions', '1', '--replication-factor', '1', '--if-not-exists')).code).toBe(0);
    zk.deletions.add('gone');
    expect(await err('--create', '--topic', 'gone', '--partitions', '1', '--replication-factor', '1')).toBe(
      "Error while executing topic command : Topic 'gone' is marked for deletion.\n",
    );
    expect((await run(zk, '--create', '--topic', 'x', '--partitions', '1')).err).toMatch(/^Missing required argument "\[replication-factor\]"/);
  });

  it('--create with --replica-assignment and rack-aware assignment', async () => {
    const zk = threeBrokers();
    expect((await run(zk, '--create', '--topic', 'm', '--replica-assignment', '2:1,1:0')).out).toBe('Created topic m.\n');
    expect([...zk.topics.get('m')!.assignment.partitions]).toEqual([
      [0, [2, 1]],
      [1, [1, 0]],
    ]);
    zk.brokers = [
      { id: 0, rack: 'a' },
      { id: 1, rack: 'a' },
      { id: 2, rack: 'b' },
      { id: 3, rack: 'b' },
    ];
    await run(zk, '--create', '--topic', 'racks', '--partitions', '2', '--replication-factor', '2');
    const racks = (ids: number[]) => ids.map((i) => zk.brokers.find((b) => b.id === i)!.rack);
    for (const replicas of zk.topics.get('racks')!.assignment.partitions.values()) expect(new Set(racks(replicas)).size).toBe(2);
    zk.brokers = [
      { id: 0, rack: 'a' },
      { id: 1, rack: null },
    ];
    expect((await run(zk, '--create', '--topic', 'mixed', '--partitions', '1', '--replication-factor', '1')).out).toBe(
      'Error while executing topic command : Not all brokers have rack information for replica rack aware assignment.\n',
    );
    expect((await run(zk, '--create', '--topic', 'mixed', '--partitions', '1', '--replication-factor', '1', '--disable-rack-aware')).code).toBe(0);
  });

  it('--list reads /brokers/topics, marking topics being deleted', async () => {
    const zk = threeBrokers();
    expect(await run(zk, '--list')).toEqual({ code: 0, out: '', err: '' });
    zk.addTopic('b', [[0]]);
    zk.addTopic('a', [[0]]);
    zk.addTopic('__consumer_offsets', [[0]]);
    zk.deletions.add('b');
    expect((await run(zk, '--list')).out).toBe('__consumer_offsets\na\nb - marked for deletion\n');
    expect((await run(zk, '--list', '--exclude-internal')).out).toBe('a\nb - marked for deletion\n');
  });

  it('--describe reads assignments, partition states and config overrides', async () => {
    const zk = threeBrokers();
    zk.brokers = zk.brokers.filter((b) => b.id !== 2); // broker 2 is down
    zk.addTopic(
      't',
      [
        [1, 0, 2],
        [2, 1, 0],
        [0, 1, 2],
      ],
      {
        configs: { 'retention.ms': '1000', 'min.insync.replicas': '2' },
        leaders: [1, -1, null],
        isr: [[0, 1], [2], [0, 1, 2]],
      },
    );
    zk.addTopic('old', [[0]], { topicId: null });
    const r = await run(zk, '--describe');
    expect(r.out).toBe(
      [
        'Topic: old\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: ',
        '\tTopic: old\tPartition: 0\tLeader: 0\tReplicas: 0\tIsr: 0',
        'Topic: t\tTopicId: kzxIyXZ8QyWuRfTMUxFjTw\tPartitionCount: 3\tReplicationFactor: 3\tConfigs: retention.ms=1000,min.insync.replicas=2',
        '\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1,0,2\tIsr: 0,1\tOffline: 2',
        '\tTopic: t\tPartition: 1\tLeader: none\tReplicas: 2,1,0\tIsr: 2\tOffline: 2',
        '\tTopic: t\tPartition: 2\tLeader: none\tReplicas: 0,1,2\tIsr: \tOffline: 2',
        '',
      ].join('\n'),
    );
    expect((await run(zk, '--describe', '--topic', 't', '--under-replicated-partitions')).out.split('\n')).toHaveLength(4);
    expect((await run(zk, '--describe', '--topic', 't', '--unavailable-partitions')).out).toBe(
      '\tTopic: t\tPartition: 1\tLeader: none\tReplicas: 2,1,0\tIsr: 2\tOffline: 2\n\tTopic: t\tPartition: 2\tLeader: none\tReplicas: 0,1,2\tIsr: \tOffline: 2\n',
    );
    expect((await run(zk, '--describe', '--topics-with-overrides')).out).toMatch(/^Topic: t\t[^\n]*\n$/);
    zk.deletions.add('old');
    expect((await run(zk, '--describe', '--topic', 'old')).out).toBe(
      'Topic: old\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: \tMarkedForDeletion: true\n\tTopic: old\tPartition: 0\tLeader: 0\tReplicas: 0\tIsr: 0\tMarkedForDeletion: true\n',
    );
    expect((await run(zk, '--describe', '--topic', 'zz')).out).toBe("Error while executing topic command : Topic 'zz' does not exist as expected\n");
  });

  it('--delete creates /admin/delete_topics/T', async () => {
    const zk = threeBrokers();
    zk.addTopic('a', [[0]]);
    zk.addTopic('__consumer_offsets', [[0]]);
    expect((await run(zk, '--delete', '--topic', 'a')).out).toBe(
      'Topic a is marked for deletion.\nNote: This will have no impact if delete.topic.enable is not set to true.\n',
    );
    expect([...zk.deletions]).toEqual(['a']);
    expect((await run(zk, '--delete', '--topic', 'a')).out).toBe('Topic a is already marked for deletion.\n');
    expect((await run(zk, '--delete', '--topic', '__consumer_offsets')).out).toBe(
      'Error while executing topic command : Topic __consumer_offsets is a kafka internal topic and is not allowed to be marked for deletion.\n',
    );
    expect((await run(zk, '--delete', '--topic', 'nope')).code).toBe(1);
  });

  it("--alter --partitions extends the assignment from partition 0's leader", async () => {
    const zk = threeBrokers();
    zk.addTopic('t', [[1, 2]]);
    const r = await run(zk, '--alter', '--topic', 't', '--partitions', '3');
    expect(r.out).toBe(
      'WARNING: If partitions are increased for a topic that has a key, the partition logic or ordering of the messages will be affected\nAdding partitions succeeded!\n',
    );
    const { assignment, version } = zk.topics.get('t')!;
    expect(version).toBe(1);
    expect(assignment.topicId).toBe('kzxIyXZ8QyWuRfTMUxFjTw');
    expect([...assignment.partitions]).toEqual([
      [0, [1, 2]],
      // AdminUtils.assignReplicasToBrokers(brokers, 2, 2, fixedStartIndex = 1 (partition 0's leader), startPartitionId = 1)
      [1, [2, 1]],
      [2, [0, 2]],
    ]);
    expect((await run(zk, '--alter', '--topic', 't', '--partitions', '4', '--replica-assignment', '1:2,2:0,0:1,2:1')).code).toBe(0);
    expect(zk.topics.get('t')!.assignment.partitions.get(3)).toEqual([2, 1]);
    expect((await run(zk, '--alter', '--topic', 't', '--partitions', '5', '--replica-assignment', '1:2,2:0,0:1,2:1,7:1')).out).toMatch(
      /Some brokers specified for partition id 4 are not available. Specified brokers: 7, 1, available brokers: 0, 1, 2\.\n$/,
    );
    expect((await run(zk, '--alter', '--topic', 't', '--partitions', '2')).out).toMatch(
      /The number of partitions for a topic can only be increased. Topic t currently has 4 partitions, 2 would not be an increase\.\n$/,
    );
  });
});
