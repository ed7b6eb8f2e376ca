import { describe, expect, it } from 'vitest';
import { TopicPartitionMap, topicPartitionKey } from '@samsa/client';
import { FakeZkClient, KafkaZk, ReassignPartitionsZNode, newTopicId, ConfigType } from '@samsa/zk-paths';
import { ZkReassignBackend, type OngoingReassignment, type ReassignBackend, type TP } from './reassign-backend.js';
import {
  executeReassignCommand,
  formatReassignmentJson,
  parseReassignmentJson,
  progressBar,
  throttleLists,
  type RawReassignOptions,
} from './reassign-partitions.js';

/** An in-memory cluster behind the backend interface, recording what the command did. */
class FakeBackend implements ReassignBackend {
  assignment = new TopicPartitionMap<number[]>().set('t', 0, [0, 1, 2]).set('t', 1, [1, 2, 0]).set('u', 0, [0, 1]);
  running: OngoingReassignment[] = [];
  calls: string[] = [];
  errors = new Map<string, string>();
  async brokers() {
    return [0, 1, 2, 3].map((id) => ({ id, rack: null }));
  }
  async topicAssignments(topics: string[]) {
    const out = new Map<string, { tp: TP; replicas: number[] }>();
    for (const [tp, replicas] of this.assignment) if (topics.includes(tp.topic)) out.set(topicPartitionKey(tp), { tp, replicas });
    return out;
  }
  async ongoing(tps: TP[] | null) {
    return this.running.filter((r) => !tps || tps.some((t) => t.topic === r.topic && t.partition === r.partition));
  }
  async alter(rs: Array<TP & { replicas: number[] | null }>) {
    this.calls.push(`alter ${JSON.stringify(rs)}`);
    return this.errors;
  }
  async setTopicThrottles(topic: string, leader: string, follower: string) {
    this.calls.push(`topic ${topic} leader=${leader} follower=${follower}`);
  }
  async setBrokerThrottle(ids: number[], rate: number) {
    this.calls.push(`brokers ${ids.join(',')} rate=${rate}`);
  }
  async clearBrokerThrottles(ids: number[]) {
    this.calls.push(`clear brokers ${ids.join(',')}`);
  }
  async clearTopicThrottles(topics: string[]) {
    this.calls.push(`clear topics ${topics.join(',')}`);
  }
  async close() {}
}

async function run(b: ReassignBackend, o: RawReassignOptions, files: Record<string, string> = {}) {
  let out = '';
  let err = '';
  const code = await executeReassignCommand(
    { zookeeper: 'zk:2181', ...o },
    { out: (s) => (out += s), err: (s) => (err += s) },
    { openZk: async () => b, readFile: (p) => files[p] ?? '', random: () => 0, waitIntervalMs: 1 },
  );
  return { code, out, err };
}

const plan = (parts: Array<[string, number, number[]]>) =>
  JSON.stringify({ version: 1, partitions: parts.map(([topic, partition, replicas]) => ({ topic, partition, replicas })) });

describe('samsa reassign-partitions', () => {
  it('reassign-partitions – JSON: Kafka\'s reassignment format with log_dirs "any", sorted; invalid files are refused with Kafka\'s messages', () => {
    expect(
      formatReassignmentJson([
        { topic: 'b', partition: 0, replicas: [1] },
        { topic: 'a', partition: 1, replicas: [2, 3] },
      ]),
    ).toBe(
      '{"version":1,"partitions":[{"topic":"a","partition":1,"replicas":[2,3],"log_dirs":["any","any"]},{"topic":"b","partition":0,"replicas":[1],"log_dirs":["any"]}]}',
    );
    expect(parseReassignmentJson(plan([['t', 0, [1, 2]]]))).toEqual([{ topic: 't', partition: 0, replicas: [1, 2] }]);
    expect(() => parseReassignmentJson('{"version":1,"partitions":[]}')).toThrow('Partition reassignment list cannot be empty');
    expect(() => parseReassignmentJson(plan([['t', 0, [1, 1]]]))).toThrow('Partition replica lists may not contain duplicate entries');
    expect(() =>
      parseReassignmentJson(
        plan([
          ['t', 0, [1]],
          ['t', 0, [2]],
        ]),
      ),
    ).toThrow('Reassignment JSON file contains duplicate topic partitions: t-0');
    expect(() => parseReassignmentJson('{"partitions":[{"topic":"t","partition":0,"replicas":[1],"log_dirs":["any","any"]}]}')).toThrow(
      /different from size of log dirs/,
    );
    expect(() => parseReassignmentJson('nope')).toThrow('The input string is not a valid JSON');
  });

  it('reassign-partitions – throttles: leader throttle on the current replicas, follower throttle on the new ones (an ongoing reassignment counts from its origin)', () => {
    const lists = throttleLists(
      [
        { topic: 't', partition: 0, replicas: [1, 2, 3] },
        { topic: 't', partition: 1, replicas: [3, 1] },
      ],
      new Map([
        ['t-0', [0, 1, 2]],
        ['t-1', [1, 3, 2]],
      ]),
      new Map([['t-1', [1, 2]]]),
    );
    expect(lists.get('t')).toEqual({ leader: '0:0,0:1,0:2,1:1,1:2', follower: '0:3,1:3' });
  });

  it('reassign-partitions – --generate prints the current and the proposed assignment on the given brokers', async () => {
    const b = new FakeBackend();
    const r = await run(b, { generate: true, topicsToMoveJsonFile: 'topics', brokerList: '1,2,3' }, { topics: '{"topics":[{"topic":"t"}],"version":1}' });
    expect(r.code, r.out + r.err).toBe(0);
    const [head, current, blank, head2, proposed] = r.out.split('\n');
    expect(head).toBe('Current partition replica assignment');
    expect(current).toBe(
      formatReassignmentJson([
        { topic: 't', partition: 0, replicas: [0, 1, 2] },
        { topic: 't', partition: 1, replicas: [1, 2, 0] },
      ]),
    );
    expect(blank).toBe('');
    expect(head2).toBe('Proposed partition reassignment configuration');
    const p = JSON.parse(proposed!) as { partitions: Array<{ replicas: number[] }> };
    expect(p.partitions).toHaveLength(2);
    for (const x of p.partitions) expect([...x.replicas].sort()).toEqual([1, 2, 3]);
    const bad = await run(b, { generate: true, topicsToMoveJsonFile: 'topics', brokerList: '1,9' }, { topics: '{"topics":[{"topic":"t"}]}' });
    expect(bad.code).toBe(1);
    expect(bad.out).toContain('not in the cluster: 9');
  });

  it('reassign-partitions – --execute prints the rollback JSON, sets throttles, starts the reassignment; refuses while another runs unless --additional', async () => {
    const b = new FakeBackend();
    const files = {
      plan: plan([
        ['t', 0, [1, 2, 3]],
        ['t', 1, [2, 3, 1]],
      ]),
    };
    const r = await run(b, { execute: true, reassignmentJsonFile: 'plan', throttle: '1000' }, files);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toBe(
      [
        'Current partition replica assignment',
        '',
        formatReassignmentJson([
          { topic: 't', partition: 0, replicas: [0, 1, 2] },
          { topic: 't', partition: 1, replicas: [1, 2, 0] },
        ]),
        '',
        'Save this to use as the --reassignment-json-file option during rollback',
        'Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is removed.',
        'The inter-broker throttle limit was set to 1000 B/s',
        'Successfully started partition reassignments for t-0,t-1',
        '',
      ].join('\n'),
    );
    expect(b.calls).toEqual([
      'topic t leader=0:0,0:1,0:2,1:0,1:1,1:2 follower=0:3,1:3',
      'brokers 0,1,2,3 rate=1000',
      'alter [{"topic":"t","partition":0,"replicas":[1,2,3]},{"topic":"t","partition":1,"replicas":[2,3,1]}]',
    ]);
    b.running = [{ topic: 'u', partition: 0, replicas: [0, 1, 2], addingReplicas: [2], removingReplicas: [] }];
    const busy = await run(b, { execute: true, reassignmentJsonFile: 'plan' }, files);
    expect(busy.code).toBe(1);
    expect(busy.out).toMatch(/^Cannot execute because there is an existing partition assignment\./);
    expect((await run(b, { execute: true, reassignmentJsonFile: 'plan', additional: true }, files)).code).toBe(0);
    b.errors = new Map([['t-1', 'Replica assignment has brokers that are not alive.']]);
    const failed = await run(b, { execute: true, reassignmentJsonFile: 'plan', additional: true }, files);
    expect(failed.code).toBe(1);
    expect(failed.out).toContain('Error reassigning partition(s):\nt-1: Replica assignment has brokers that are not alive.\n');
    const unknown = await run(b, { execute: true, reassignmentJsonFile: 'x', additional: true }, { x: plan([['t', 0, [7]]]) });
    expect(unknown.out).toContain('Unknown broker id(s) in the proposed assignment: 7');
  });

  it('reassign-partitions – --verify: completed only when no reassignment is listed AND the replicas equal the target; throttles cleared only once all are completed; --wait polls with a progress bar', async () => {
    const b = new FakeBackend();
    const files = {
      plan: plan([
        ['t', 0, [0, 1, 2]],
        ['t', 1, [2, 3, 1]],
      ]),
    };
    b.running = [{ topic: 't', partition: 1, replicas: [2, 3, 1, 0], addingReplicas: [3], removingReplicas: [0] }];
    const r = await run(b, { verify: true, reassignmentJsonFile: 'plan' }, files);
    expect(r.out).toBe('Status of partition reassignment:\nReassignment of partition t-0 is completed.\nReassignment of partition t-1 is still in progress.\n');
    expect(b.calls).toEqual([]);
    // no longer listed, but Metadata still shows other replicas (a stale broker, or a replaced reassignment): not completed
    b.running = [];
    const stale = await run(b, { verify: true, reassignmentJsonFile: 'plan' }, files);
    expect(stale.out).toBe(
      'Status of partition reassignment:\nReassignment of partition t-0 is completed.\nThere is no active reassignment of partition t-1, but replica set is 1,2,0 rather than 2,3,1.\n',
    );
    expect(b.calls).toEqual([]);
    b.assignment.set('t', 1, [2, 3, 1]);
    const done = await run(b, { verify: true, reassignmentJsonFile: 'plan' }, files);
    expect(done.out).toBe(
      'Status of partition reassignment:\nReassignment of partition t-0 is completed.\nReassignment of partition t-1 is completed.\nClearing broker-level throttles on brokers 0,1,2,3\nClearing topic-level throttle on topic t\n',
    );
    expect(b.calls).toEqual(['clear brokers 0,1,2,3', 'clear topics t']);
    b.calls = [];
    expect((await run(b, { verify: true, reassignmentJsonFile: 'plan', preserveThrottles: true }, files)).code).toBe(0);
    expect(b.calls).toEqual([]);

    // --wait: the controller stops listing t-1 at the 3rd poll, but Metadata catches up only at the 5th
    let polls = 0;
    b.assignment.set('t', 1, [2, 3, 1, 0]);
    b.running = [{ topic: 't', partition: 1, replicas: [2, 3, 1, 0], addingReplicas: [3], removingReplicas: [0] }];
    const ongoing = b.ongoing.bind(b);
    b.ongoing = async (tps) => {
      polls++;
      if (polls === 3) b.running = [];
      if (polls === 5) b.assignment.set('t', 1, [2, 3, 1]);
      return ongoing(tps);
    };
    const waited = await run(b, { verify: true, wait: true, reassignmentJsonFile: 'plan' }, files);
    expect(polls).toBe(5);
    expect(waited.out).toBe(
      `${progressBar(1, 2)}\n${progressBar(2, 2)}\nStatus of partition reassignment:\nReassignment of partition t-0 is completed.\nReassignment of partition t-1 is completed.\nClearing broker-level throttles on brokers 0,1,2,3\nClearing topic-level throttle on topic t\n`,
    );
    expect(progressBar(1, 2, 10)).toBe('[#####.....] 1/2 partitions reassigned');
  });

  it("reassign-partitions – --cancel cancels the active ones (null replicas) and clears throttles; --list prints Kafka's lines", async () => {
    const b = new FakeBackend();
    b.running = [{ topic: 't', partition: 1, replicas: [2, 3, 1, 0], addingReplicas: [3], removingReplicas: [0] }];
    const l = await run(b, { list: true });
    expect(l.out).toBe('Current partition reassignments:\nt-1: replicas: 2,3,1,0. adding: 3. removing: 0.\n');
    const files = {
      plan: plan([
        ['t', 0, [0, 1, 2]],
        ['t', 1, [2, 3, 1]],
      ]),
    };
    const r = await run(b, { cancel: true, reassignmentJsonFile: 'plan' }, files);
    expect(r.code).toBe(0);
    expect(b.calls[0]).toBe('alter [{"topic":"t","partition":1,"replicas":null}]');
    expect(r.out).toBe(
      'Clearing broker-level throttles on brokers 0,1,2,3\nClearing topic-level throttle on topic t\nSuccessfully cancelled partition reassignment for: t-1\n',
    );
    b.running = [];
    expect((await run(b, { cancel: true, reassignmentJsonFile: 'plan', preserveThrottles: true }, files)).out).toBe(
      'None of the specified partition reassignments are active.\n',
    );
    expect((await run(b, { list: true })).out).toBe('No partition reassignments found.\n');
  });

  it('reassign-partitions – usage: exactly one action, a connection, the files each action needs', async () => {
    const b = new FakeBackend();
    expect((await run(b, {})).err).toContain('Command must include exactly one action: --generate, --execute, --verify, --cancel, or --list');
    expect((await run(b, { list: true, verify: true })).code).toBe(1);
    expect((await run(b, { execute: true })).err).toContain('Missing required argument "[reassignment-json-file]"');
    expect((await run(b, { generate: true, topicsToMoveJsonFile: 'x' })).err).toContain('Missing required argument "[broker-list]"');
    expect((await run(b, { list: true, bootstrapServer: 'x:1' })).err).toContain('Please specify --bootstrap-server');
    expect((await run(b, { verify: true, reassignmentJsonFile: 'p', throttle: '5' })).err).toContain('throttle');
  });

  it('reassign-partitions – --zookeeper writes /admin/reassign_partitions (refused while one is pending), throttles with config change notifications, and sees in-progress partitions in topic znodes', async () => {
    const kzk = new KafkaZk(new FakeZkClient());
    await kzk.createPersistentPaths();
    await kzk.createTopic('t', newTopicId(), new Map([[0, [0, 1]]]), {});
    const b = new ZkReassignBackend(kzk);
    expect(await b.alter([{ topic: 't', partition: 0, replicas: [1, 2] }])).toEqual(new Map());
    expect(ReassignPartitionsZNode.decode((await kzk.zk.get(ReassignPartitionsZNode.path)).data)).toEqual([{ topic: 't', partition: 0, replicas: [1, 2] }]);
    expect(await b.ongoing(null)).toEqual([{ topic: 't', partition: 0, replicas: [1, 2], addingReplicas: [], removingReplicas: [] }]);
    await expect(b.alter([{ topic: 't', partition: 0, replicas: [2, 1] }])).rejects.toThrow('There is an existing assignment running');
    await expect(b.alter([{ topic: 't', partition: 0, replicas: null }])).rejects.toThrow('needs --bootstrap-server');
    await b.setTopicThrottles('t', '0:0,0:1', '0:2');
    await b.setBrokerThrottle([0, 2], 100);
    expect(await kzk.getEntityConfig(ConfigType.Topic, 't')).toEqual({
      'leader.replication.throttled.replicas': '0:0,0:1',
      'follower.replication.throttled.replicas': '0:2',
    });
    expect(await kzk.getEntityConfig(ConfigType.Broker, '2')).toEqual({
      'leader.replication.throttled.rate': '100',
      'follower.replication.throttled.rate': '100',
    });
    expect(await kzk.zk.getChildren('/config/changes')).toHaveLength(3);
    await b.clearBrokerThrottles([0, 2]);
    await b.clearTopicThrottles(['t']);
    expect(await kzk.getEntityConfig(ConfigType.Broker, '2')).toEqual({});
    expect(await kzk.getEntityConfig(ConfigType.Topic, 't')).toEqual({});
  });
});
