import { describe, expect, it } from 'vitest';
import {
  DescribeOptions,
  formatPartitionLine,
  formatTopicLine,
  parseReplicaAssignment,
  parseTopicConfigs,
  replicationFactorOf,
  selectTopics,
  topicMatcher,
  topicsCollide,
  validateTopicName,
  type PartitionSummary,
} from './topics-format.js';
import { validateTopicsOptions, type RawTopicsOptions } from './topics-options.js';

const part = (p: Partial<PartitionSummary>): PartitionSummary => ({
  topic: 't',
  partition: 0,
  leader: 1,
  replicas: [1, 0, 2],
  isr: [1, 0, 2],
  offline: [],
  markedForDeletion: false,
  ...p,
});

describe('describe output (Kafka 3.x TopicCommand)', () => {
  it('topic line', () => {
    expect(
      formatTopicLine({
        topic: 'orders',
        topicId: 'kzxIyXZ8QyWuRfTMUxFjTw',
        partitionCount: 3,
        replicationFactor: 2,
        configs: [
          ['retention.ms', '1000'],
          ['cleanup.policy', 'compact'],
        ],
        markedForDeletion: false,
      }),
    ).toBe('Topic: orders\tTopicId: kzxIyXZ8QyWuRfTMUxFjTw\tPartitionCount: 3\tReplicationFactor: 2\tConfigs: retention.ms=1000,cleanup.policy=compact');
    // no id (zero or unknown), no configs, marked for deletion
    expect(
      formatTopicLine({ topic: 'x', topicId: 'AAAAAAAAAAAAAAAAAAAAAA', partitionCount: 1, replicationFactor: 1, configs: [], markedForDeletion: true }),
    ).toBe('Topic: x\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: \tMarkedForDeletion: true');
    expect(formatTopicLine({ topic: 'x', topicId: null, partitionCount: 1, replicationFactor: 1, configs: [], markedForDeletion: false })).toBe(
      'Topic: x\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: ',
    );
  });

  it('partition line: leader none, offline column only when needed, reassignment columns', () => {
    expect(formatPartitionLine(part({ isr: [0, 1, 2] }))).toBe('\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1,0,2\tIsr: 0,1,2');
    expect(formatPartitionLine(part({ partition: 7, leader: null, isr: [], offline: [2] }))).toBe(
      '\tTopic: t\tPartition: 7\tLeader: none\tReplicas: 1,0,2\tIsr: \tOffline: 2',
    );
    expect(
      formatPartitionLine(
        part({ replicas: [1, 0, 2, 3], reassignment: { replicas: [1, 0, 2, 3], addingReplicas: [3], removingReplicas: [2] }, markedForDeletion: true }),
      ),
    ).toBe('\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1,0,2,3\tIsr: 1,0,2\tAdding Replicas: 3\tRemoving Replicas: 2\tMarkedForDeletion: true');
  });

  it('replication factor during a reassignment excludes the replicas being added', () => {
    expect(replicationFactorOf([1, 2, 3])).toBe(3);
    expect(replicationFactorOf([1, 2, 3, 4], { replicas: [1, 2, 3, 4], addingReplicas: [4], removingReplicas: [1] })).toBe(3);
    // finished meanwhile: the partition no longer has any of the changing replicas
    expect(replicationFactorOf([2, 3], { replicas: [2, 3, 4], addingReplicas: [4], removingReplicas: [1] })).toBe(2);
  });

  it('partition report filters', () => {
    const live = new Set([0, 1]);
    const all = new DescribeOptions({}, live);
    expect(all.describeConfigs && all.describePartitions).toBe(true);
    const healthy = part({ replicas: [0, 1], isr: [0, 1], leader: 0, minIsr: 2 });
    const under = part({ replicas: [0, 1], isr: [0], leader: 0, minIsr: 2 });
    const deadLeader = part({ replicas: [2, 1], isr: [2, 1], leader: 2, minIsr: 1 });
    const leaderless = part({ replicas: [0], isr: [], leader: null });
    const check = (f: ConstructorParameters<typeof DescribeOptions>[0]) => {
      const d = new DescribeOptions(f, live);
      expect(d.describeConfigs).toBe(false);
      return [healthy, under, deadLeader, leaderless].map((p) => d.shouldPrintPartition(p));
    };
    expect(check({ underReplicatedPartitions: true })).toEqual([false, true, false, true]);
    expect(check({ unavailablePartitions: true })).toEqual([false, false, true, true]);
    expect(check({ underMinIsrPartitions: true })).toEqual([false, true, false, true]);
    expect(check({ atMinIsrPartitions: true })).toEqual([true, false, false, false]);
    const overrides = new DescribeOptions({ topicsWithOverrides: true }, live);
    expect([overrides.describeConfigs, overrides.describePartitions]).toEqual([true, false]);
  });
});

describe('topic selection and names', () => {
  it('--topic is an anchored regex list (IncludeList)', () => {
    const all = ['b', 'a', 'a.b', 'axb', '__consumer_offsets', 'orders-1', 'orders-2'];
    expect(selectTopics(all, undefined, false)).toEqual(['__consumer_offsets', 'a', 'a.b', 'axb', 'b', 'orders-1', 'orders-2']);
    expect(selectTopics(all, undefined, true)).toEqual(['a', 'a.b', 'axb', 'b', 'orders-1', 'orders-2']);
    expect(selectTopics(all, 'a', false)).toEqual(['a']);
    expect(selectTopics(all, 'a,b', false)).toEqual(['a', 'b']);
    expect(selectTopics(all, ' "orders-.*" ', false)).toEqual(['orders-1', 'orders-2']);
    expect(selectTopics(all, 'a.b', false)).toEqual(['a.b', 'axb']); // '.' is a regex dot, as in Kafka
    expect(selectTopics(all, '__.*', true)).toEqual([]);
    expect(() => topicMatcher('(')).toThrow(/Invalid topic regular expression/);
  });

  it('validates topic names with Kafka messages', () => {
    expect(() => validateTopicName('ok.topic_-1')).not.toThrow();
    expect(() => validateTopicName('')).toThrow("Topic name is illegal, it can't be empty");
    expect(() => validateTopicName('..')).toThrow('Topic name cannot be "." or ".."');
    expect(() => validateTopicName('a'.repeat(250))).toThrow(/can't be longer than 249 characters/);
    expect(() => validateTopicName('a b')).toThrow(`Topic name "a b" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'`);
    expect(topicsCollide('a.b', 'a_b')).toBe(true);
    expect(topicsCollide('a.b', 'a-b')).toBe(false);
  });
});

describe('option values', () => {
  it('--config key=value', () => {
    expect(parseTopicConfigs(['retention.ms=1000', 'cleanup.policy = compact'])).toEqual({ 'retention.ms': '1000', 'cleanup.policy': 'compact' });
    for (const bad of ['nokey', 'a=', 'a=b=c']) {
      expect(() => parseTopicConfigs([bad])).toThrow('requirement failed: Invalid topic config: all configs to be added must be in the format "key=val".');
    }
  });

  it('--replica-assignment: partitions by commas, replicas by colons', () => {
    expect(parseReplicaAssignment('0:1,1:2,2:0')).toEqual(
      new Map([
        [0, [0, 1]],
        [1, [1, 2]],
        [2, [2, 0]],
      ]),
    );
    expect(parseReplicaAssignment(' 3 ')).toEqual(new Map([[0, [3]]]));
    expect(() => parseReplicaAssignment('0:1,1')).toThrow('Partition 1 has different replication factor: 1');
    expect(() => parseReplicaAssignment('0:0')).toThrow('Partition replica lists may not contain duplicate entries: 0');
    expect(() => parseReplicaAssignment('0:x')).toThrow('For input string: "x"');
  });
});

describe('option checks (TopicCommandOptions.checkArgs)', () => {
  const bs = { bootstrapServer: 'localhost:9092' };
  const bad = (o: RawTopicsOptions) => () => validateTopicsOptions(o);

  it('accepts the usual command lines', () => {
    expect(validateTopicsOptions({ ...bs, create: true, topic: 't', partitions: '3', replicationFactor: '2', config: ['a=b'] })).toMatchObject({
      action: 'create',
      topic: 't',
      partitions: 3,
      replicationFactor: 2,
      configs: ['a=b'],
    });
    expect(validateTopicsOptions({ ...bs, list: true, excludeInternal: true })).toMatchObject({ action: 'list', excludeInternal: true });
    expect(validateTopicsOptions({ zookeeper: 'zk:2181/kafka', describe: true, underReplicatedPartitions: true }).filters.underReplicatedPartitions).toBe(true);
    expect(validateTopicsOptions({ ...bs, alter: true, topic: 't', partitions: '5', replicaAssignment: '0,1,2,0,1' }).partitions).toBe(5);
  });

  it('rejects bad combinations with joptsimple-style messages', () => {
    expect(bad({})).toThrow('Create, delete, describe, or change a topic.');
    expect(bad({ ...bs })).toThrow('Command must include exactly one action: --list, --describe, --create, --alter or --delete');
    expect(bad({ ...bs, list: true, describe: true })).toThrow(/exactly one action/);
    expect(bad({ list: true })).toThrow('One of --bootstrap-server or --zookeeper must be specified');
    expect(bad({ ...bs, zookeeper: 'z:1', list: true })).toThrow('Only one of --bootstrap-server or --zookeeper must be specified');
    expect(bad({ ...bs, create: true })).toThrow('Missing required argument "[topic]"');
    expect(bad({ ...bs, delete: true })).toThrow('Missing required argument "[topic]"');
    expect(bad({ ...bs, alter: true, topic: 't' })).toThrow('Missing required argument "[partitions]"');
    expect(bad({ ...bs, describe: true, ifExists: true })).toThrow('--topic or --topic-id is required to describe a topic');
    expect(bad({ ...bs, alter: true, topic: 't', partitions: '2', config: ['a=b'] })).toThrow(
      /^Option combination "\[bootstrap-server\],\[config\]" can't be used with option "\[alter\]"/,
    );
    expect(bad({ zookeeper: 'z:1', create: true, topic: 't', partitions: '1' })).toThrow('Missing required argument "[replication-factor]"');
    expect(bad({ ...bs, list: true, partitions: '1' })).toThrow('Option "[partitions]" can\'t be used with option "[list]"');
    expect(bad({ ...bs, alter: true, topic: 't', partitions: '1', replicationFactor: '1' })).toThrow(
      'Option "[replication-factor]" can\'t be used with option "[alter]"',
    );
    expect(bad({ ...bs, create: true, topic: 't', replicaAssignment: '0', partitions: '1' })).toThrow(
      'Option "[replica-assignment]" can\'t be used with option "[partitions]"',
    );
    expect(bad({ ...bs, create: true, topic: 't', ifExists: true })).toThrow('Option "[if-exists]" can\'t be used with option "[create]"');
    expect(bad({ ...bs, delete: true, topic: 't', ifNotExists: true })).toThrow('Option "[if-not-exists]" can\'t be used with option "[delete]"');
    expect(bad({ ...bs, delete: true, topic: 't', excludeInternal: true })).toThrow('Option "[exclude-internal]" can\'t be used with option "[delete]"');
    expect(bad({ ...bs, list: true, unavailablePartitions: true })).toThrow('Option "[unavailable-partitions]" can\'t be used with option "[list]"');
    expect(bad({ ...bs, describe: true, underReplicatedPartitions: true, unavailablePartitions: true })).toThrow(
      'Option "[under-replicated-partitions]" can\'t be used with option "[unavailable-partitions]"',
    );
    expect(bad({ ...bs, create: true, topic: 't', partitions: 'abc' })).toThrow("Cannot parse argument 'abc' of option partitions");
  });
});
