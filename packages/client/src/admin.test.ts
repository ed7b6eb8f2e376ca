import { afterEach, describe, expect, it } from 'vitest';
import { API_KEYS, ErrorCode, KafkaError, supportedApiVersions, uuidToBase64, type CreateTopicsRequest, type DeleteTopicsRequest } from '@samsa/protocol';
import { Admin, ConfigResourceType, ConfigSource, ElectionType, ZERO_TOPIC_ID, configSourceName } from './admin.js';
import { BatchError, UnsupportedApiError } from './errors.js';
import { FakeCluster } from './testing/fake-cluster.js';

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function setup(opts: Parameters<typeof FakeCluster.start>[0] = { brokers: 3 }): Promise<{ fc: FakeCluster; admin: Admin }> {
  const fc = await FakeCluster.start(opts);
  cleanup.push(() => fc.close());
  const admin = new Admin({ bootstrapServers: fc.bootstrapServers, retryBackoffMs: 10, retryBackoffMaxMs: 50 });
  cleanup.push(() => admin.close());
  return { fc, admin };
}

const errorsOf = (e: unknown) => Object.fromEntries([...(e as BatchError).errors].map(([k, v]) => [k, [v.errorName, v.message]]));

describe('Admin: topics', () => {
  it('listTopics: sorted, internal topics only when asked', async () => {
    const { fc, admin } = await setup();
    fc.addTopic('b', [[0]]);
    fc.addTopic('a', [[1]]);
    fc.addTopic('__consumer_offsets', [[0]], { isInternal: true });
    expect(await admin.listTopics()).toEqual(['a', 'b']);
    expect(await admin.listTopics({ listInternal: true })).toEqual(['__consumer_offsets', 'a', 'b']);
  });

  it('listTopics and describeTopics work with a Metadata v0 broker', async () => {
    const { fc, admin } = await setup({
      brokers: 1,
      brokerOptions: { apiVersions: supportedApiVersions().map((k) => (k.apiKey === 3 ? { ...k, maxVersion: 0 } : k)) },
    });
    fc.addTopic('t', [[0]]);
    fc.addTopic('__consumer_offsets', [[0]]);
    expect(await admin.listTopics()).toEqual(['t']);
    const [d] = await admin.describeTopics(['t']);
    expect(d).toMatchObject({
      name: 't',
      topicId: ZERO_TOPIC_ID,
      partitions: [{ partition: 0, leader: 0, leaderEpoch: -1, replicas: [0], isr: [0], offline: [] }],
    });
    expect(
      fc
        .broker(0)
        .requestsFor(3)
        .every((r) => r.version === 0),
    ).toBe(true);
  });

  it('describeTopics: partitions sorted, leader none when dead, offline replicas, topic id; unknown topics as errors', async () => {
    const { fc, admin } = await setup();
    const t = fc.addTopic('t', [
      [1, 0, 2],
      [2, 1, 0],
    ]);
    t.partitions.reverse();
    t.partitions[0]!.isr = [2, 1];
    fc.live.delete(2);
    const [d] = await admin.describeTopics(['t']);
    expect(d).toEqual({
      name: 't',
      topicId: uuidToBase64(t.topicId),
      isInternal: false,
      partitions: [
        { partition: 0, leader: 1, leaderEpoch: 0, replicas: [1, 0, 2], isr: [1, 0, 2], offline: [2] },
        { partition: 1, leader: null, leaderEpoch: 0, replicas: [2, 1, 0], isr: [2, 1], offline: [2] },
      ],
    });
    const err = await admin.describeTopics(['t', 'nope']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BatchError);
    expect((err as BatchError).succeeded).toEqual(['t']);
    expect(errorsOf(err)).toEqual({ nope: ['UNKNOWN_TOPIC_OR_PARTITION', "Topic 'nope' does not exist (UNKNOWN_TOPIC_OR_PARTITION)"] });
    expect((err as Error).message).toBe("Topic 'nope' does not exist (UNKNOWN_TOPIC_OR_PARTITION)");
  });

  it('createTopics: results with topic ids; per-topic errors as KafkaErrors with the broker messages', async () => {
    const { fc, admin } = await setup();
    fc.addTopic('taken', [[0]]);
    const [created] = await admin.createTopics([{ name: 'fresh', numPartitions: 3, replicationFactor: 2, configs: { 'retention.ms': '1000' } }]);
    expect(created).toMatchObject({ name: 'fresh', numPartitions: 3, replicationFactor: 2 });
    expect(created!.topicId).toBe(uuidToBase64(fc.topics.get('fresh')!.topicId));
    expect(fc.topics.get('fresh')!.configs).toEqual({ 'retention.ms': '1000' });
    expect(fc.broker(0).requestsFor(API_KEYS.CreateTopics)[0]!.version).toBe(7);

    const err = await admin
      .createTopics([
        { name: 'taken', numPartitions: 1, replicationFactor: 1 },
        { name: 'too-wide', numPartitions: 1, replicationFactor: 4 },
        { name: 'ok', numPartitions: 1, replicationFactor: 1 },
      ])
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BatchError);
    expect(errorsOf(err)).toEqual({
      taken: ['TOPIC_ALREADY_EXISTS', "Topic 'taken' already exists."],
      'too-wide': ['INVALID_REPLICATION_FACTOR', 'Replication factor: 4 larger than available brokers: 3.'],
    });
    expect((err as BatchError).errorFor('taken')).toBeInstanceOf(KafkaError);
    expect((err as BatchError).succeeded).toEqual(['ok']);
    expect((err as Error).message).toMatch(/^createTopics failed for 2 items: taken: TOPIC_ALREADY_EXISTS/);
  });

  it('createTopics: replica assignment, broker defaults, validateOnly', async () => {
    const { fc, admin } = await setup();
    await admin.createTopics([
      {
        name: 'assigned',
        replicaAssignment: [
          [2, 1],
          [1, 0],
        ],
      },
    ]);
    const req = fc.broker(0).requestsFor(API_KEYS.CreateTopics)[0]!.body as CreateTopicsRequest;
    expect(req.topics[0]).toMatchObject({
      numPartitions: -1,
      replicationFactor: -1,
      assignments: [
        { partitionIndex: 0, brokerIds: [2, 1] },
        { partitionIndex: 1, brokerIds: [1, 0] },
      ],
    });
    expect(fc.topics.get('assigned')!.partitions.map((p) => p.replicas)).toEqual([
      [2, 1],
      [1, 0],
    ]);
    await admin.createTopics([{ name: 'map-assigned', replicaAssignment: new Map([[0, [1]]]) }]);
    expect(fc.topics.get('map-assigned')!.partitions.map((p) => p.replicas)).toEqual([[1]]);

    fc.defaultPartitions = 2;
    const [d] = await admin.createTopics([{ name: 'defaults' }]);
    expect(d).toMatchObject({ numPartitions: 2, replicationFactor: 1 });

    await admin.createTopics([{ name: 'dry', numPartitions: 1, replicationFactor: 1 }], { validateOnly: true });
    expect(fc.topics.has('dry')).toBe(false);
    await expect(admin.createTopics([{ name: 'x' }, { name: 'x' }])).rejects.toThrow(/Duplicate topic name/);
  });

  it('createTopics: refuses what the broker version cannot express, and missing APIs', async () => {
    const { admin } = await setup({
      brokers: 1,
      brokerOptions: { apiVersions: supportedApiVersions((k) => k !== API_KEYS.DeleteTopics).map((k) => (k.apiKey === 19 ? { ...k, maxVersion: 3 } : k)) },
    });
    await expect(admin.createTopics([{ name: 'd' }])).rejects.toThrow(/No usable CreateTopics version >= 4/);
    await expect(admin.createTopics([{ name: 'd', numPartitions: 1, replicationFactor: 1 }])).resolves.toHaveLength(1);
    const err = await admin.deleteTopics(['d']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnsupportedApiError);
    expect((err as Error).message).toMatch(/does not support DeleteTopics \(api key 20\)/);
  });

  it('deleteTopics: by name (v6 topics, older versions topicNames), unknown topics as errors', async () => {
    const { fc, admin } = await setup({
      brokers: 1,
      brokerOptions: { apiVersions: supportedApiVersions().map((k) => (k.apiKey === 20 ? { ...k, maxVersion: 5 } : k)) },
    });
    fc.addTopic('a', [[0]]);
    fc.addTopic('b', [[0]]);
    await admin.deleteTopics(['a']);
    const sent = fc.broker(0).requestsFor(API_KEYS.DeleteTopics)[0]!;
    expect(sent.version).toBe(5);
    expect((sent.body as DeleteTopicsRequest).topicNames).toEqual(['a']);
    const err = await admin.deleteTopics(['b', 'zz']).catch((e: unknown) => e);
    expect(errorsOf(err)).toEqual({ zz: ['UNKNOWN_TOPIC_OR_PARTITION', "Topic 'zz' does not exist (UNKNOWN_TOPIC_OR_PARTITION)"] });
    expect([...fc.topics.keys()]).toEqual([]);

    const { fc: fc6, admin: admin6 } = await setup({ brokers: 1 });
    fc6.addTopic('c', [[0]]);
    await admin6.deleteTopics(['c']);
    const sent6 = fc6.broker(0).requestsFor(API_KEYS.DeleteTopics)[0]!;
    expect(sent6.version).toBe(6);
    expect((sent6.body as DeleteTopicsRequest).topics.map((t) => t.name)).toEqual(['c']);
  });

  it('createPartitions: increases, with or without assignments; errors per topic', async () => {
    const { fc, admin } = await setup();
    fc.addTopic('t', [[0, 1]]);
    await admin.createPartitions([
      {
        topic: 't',
        count: 3,
        assignments: [
          [2, 0],
          [1, 2],
        ],
      },
    ]);
    expect(fc.topics.get('t')!.partitions.map((p) => p.replicas)).toEqual([
      [0, 1],
      [2, 0],
      [1, 2],
    ]);
    await admin.createPartitions([{ topic: 't', count: 4 }]);
    expect(fc.topics.get('t')!.partitions).toHaveLength(4);
    const err = await admin
      .createPartitions([
        { topic: 't', count: 2 },
        { topic: 'nope', count: 2 },
      ])
      .catch((e: unknown) => e);
    expect(errorsOf(err)).toEqual({
      t: ['INVALID_PARTITIONS', 'Topic currently has 4 partitions, which is higher than the requested 2.'],
      nope: ['UNKNOWN_TOPIC_OR_PARTITION', "The topic 'nope' does not exist."],
    });
  });
});

describe('Admin: cluster and configs', () => {
  it('describeCluster: DescribeCluster when advertised', async () => {
    const { fc, admin } = await setup({ brokers: [{ nodeId: 5, rack: 'a' }, { nodeId: 7 }], controllerId: 7, clusterId: 'cid' });
    const d = await admin.describeCluster();
    expect(d.clusterId).toBe('cid');
    expect(d.controllerId).toBe(7);
    expect(d.controller).toMatchObject({ nodeId: 7, port: fc.broker(7).port });
    expect(d.brokers.map((b) => [b.nodeId, b.rack])).toEqual([
      [5, 'a'],
      [7, null],
    ]);
    expect(fc.brokers.flatMap((b) => b.requestsFor(API_KEYS.DescribeCluster))).toHaveLength(1);
  });

  it('describeCluster: falls back to Metadata when DescribeCluster is not advertised', async () => {
    const { fc, admin } = await setup({
      brokers: 2,
      controllerId: 1,
      brokerOptions: { apiVersions: supportedApiVersions((k) => k !== API_KEYS.DescribeCluster) },
    });
    const d = await admin.describeCluster();
    expect(d).toMatchObject({ clusterId: 'fake-cluster-id-0000000', controllerId: 1, controller: { nodeId: 1 } });
    expect(d.brokers.map((b) => b.nodeId)).toEqual([0, 1]);
    expect(fc.brokers.flatMap((b) => b.requestsFor(API_KEYS.DescribeCluster))).toHaveLength(0);
  });

  it('describeConfigs: topic entries with sources, broker resources sent to that broker, errors per resource', async () => {
    const { fc, admin } = await setup();
    fc.addTopic('t', [[0]], { configs: { 'retention.ms': '1000' } });
    const [topic, broker] = await admin.describeConfigs([
      { type: ConfigResourceType.Topic, name: 't' },
      { type: ConfigResourceType.Broker, name: '2' },
    ]);
    const retention = topic!.entries.find((e) => e.name === 'retention.ms')!;
    expect(retention).toMatchObject({ value: '1000', source: ConfigSource.DynamicTopicConfig, isDefault: false });
    expect(configSourceName(retention.source)).toBe('DYNAMIC_TOPIC_CONFIG');
    expect(topic!.entries.find((e) => e.name === 'cleanup.policy')).toMatchObject({ value: 'delete', isDefault: true });
    expect(broker!.entries.find((e) => e.name === 'broker.id')).toMatchObject({ value: '2', source: ConfigSource.StaticBrokerConfig });
    expect(fc.broker(2).requestsFor(API_KEYS.DescribeConfigs)).toHaveLength(1);

    const only = await admin.describeConfigs([{ type: ConfigResourceType.Topic, name: 't', configNames: ['min.insync.replicas'] }]);
    expect(only[0]!.entries.map((e) => e.name)).toEqual(['min.insync.replicas']);

    const err = await admin.describeConfigs([{ type: ConfigResourceType.Topic, name: 'nope' }]).catch((e: unknown) => e);
    expect(errorsOf(err)).toEqual({ nope: ['UNKNOWN_TOPIC_OR_PARTITION', 'Topic nope does not exist.'] });
    await expect(admin.describeConfigs([{ type: ConfigResourceType.Broker, name: 'x' }])).rejects.toThrow(/must be a broker id/);
    // an unknown broker fails fast instead of retrying until the deadline
    await expect(admin.describeConfigs([{ type: ConfigResourceType.Broker, name: '9' }])).rejects.toMatchObject({
      errorName: 'BROKER_NOT_AVAILABLE',
      message: 'Broker 9 is not in the cluster metadata (brokers: 0,1,2)',
    });
  });

  it('describeConfigs v0 derives sources from isDefault', async () => {
    const { fc, admin } = await setup({
      brokers: 1,
      brokerOptions: { apiVersions: supportedApiVersions().map((k) => (k.apiKey === 32 ? { ...k, maxVersion: 0 } : k)) },
    });
    fc.addTopic('t', [[0]], { configs: { 'retention.ms': '5' } });
    const [r] = await admin.describeConfigs([{ type: ConfigResourceType.Topic, name: 't' }]);
    expect(r!.entries.find((e) => e.name === 'retention.ms')!.source).toBe(ConfigSource.DynamicTopicConfig);
    expect(r!.entries.find((e) => e.name === 'cleanup.policy')!.source).toBe(ConfigSource.DefaultConfig);
  });

  it('listPartitionReassignments from the controller', async () => {
    const { fc, admin } = await setup({ brokers: 2, controllerId: 1 });
    fc.reassignments = [{ topic: 't', partition: 0, replicas: [0, 1], addingReplicas: [1], removingReplicas: [] }];
    expect(await admin.listPartitionReassignments()).toEqual(fc.reassignments);
    expect(await admin.listPartitionReassignments([{ topic: 't', partitions: [1] }])).toEqual([]);
    expect(fc.broker(1).requestsFor(API_KEYS.ListPartitionReassignments)).toHaveLength(2);
  });
});

describe('Admin: electLeaders', () => {
  it('per-partition outcomes sorted by topic and partition; preferred by default over v0+, unclean needs v1', async () => {
    const { fc, admin } = await setup({ brokers: 3, controllerId: 1 });
    const t = fc.addTopic('t', [
      [0, 1],
      [1, 2],
      [2, 0],
    ]);
    t.partitions[0]!.leader = 1;
    t.partitions[2]!.leader = 0;
    t.partitions[2]!.isr = [0];
    const results = await admin.electLeaders(
      [
        { topic: 't', partition: 2 },
        { topic: 'gone', partition: 0 },
        { topic: 't', partition: 1 },
        { topic: 't', partition: 0 },
      ],
      ElectionType.PREFERRED,
    );
    expect(results.map((r) => [r.topic, r.partition, r.error?.errorName ?? null])).toEqual([
      ['gone', 0, 'UNKNOWN_TOPIC_OR_PARTITION'],
      ['t', 0, null],
      ['t', 1, 'ELECTION_NOT_NEEDED'],
      ['t', 2, 'PREFERRED_LEADER_NOT_AVAILABLE'],
    ]);
    expect(results[3]!.error!.message).toBe('Failed to elect leader for partition t-2 under strategy PreferredReplicaPartitionLeaderElectionStrategy');
    const sent = fc.broker(1).requestsFor(API_KEYS.ElectLeaders);
    expect(sent[0]!.body).toMatchObject({
      electionType: 0,
      topicPartitions: [
        { topic: 't', partitions: [2, 1, 0] },
        { topic: 'gone', partitions: [0] },
      ],
    });

    // every partition: only those acted on come back
    fc.live.delete(2);
    t.partitions[1]!.isr = [1];
    t.partitions[1]!.leader = 2;
    expect(await admin.electLeaders(null, ElectionType.UNCLEAN)).toEqual([{ topic: 't', partition: 1, error: null }]);
    expect(t.partitions[1]!.leader).toBe(1);
    expect(fc.broker(1).requestsFor(API_KEYS.ElectLeaders).at(-1)!.version).toBeGreaterThanOrEqual(1);
  });

  it('follows the controller on NOT_CONTROLLER; a request-level error rejects', async () => {
    const { fc, admin } = await setup({ brokers: 3, controllerId: 0 });
    fc.addTopic('t', [[2, 0]]).partitions[0]!.leader = 0;
    const original = fc.broker(0).handlers[API_KEYS.ElectLeaders]!;
    let first = true;
    fc.broker(0).on(API_KEYS.ElectLeaders, (req, ctx) => {
      if (first) {
        first = false;
        fc.controllerId = 2; // the controller moved after the client found it
      }
      return original(req, ctx);
    });
    expect(await admin.electLeaders([{ topic: 't', partition: 0 }], ElectionType.PREFERRED)).toEqual([{ topic: 't', partition: 0, error: null }]);
    expect(fc.broker(0).requestsFor(API_KEYS.ElectLeaders)).toHaveLength(1);
    expect(fc.broker(2).requestsFor(API_KEYS.ElectLeaders)).toHaveLength(1);

    fc.broker(2).on(API_KEYS.ElectLeaders, () => ({ throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, replicaElectionResults: [] }));
    await expect(admin.electLeaders(null, ElectionType.PREFERRED)).rejects.toMatchObject({ errorName: 'CLUSTER_AUTHORIZATION_FAILED' });
    await expect(admin.electLeaders(null, 7 as ElectionType)).rejects.toThrow('Unknown election type 7');
  });
});

describe('Admin: alterConfigs', () => {
  it('alterConfigs: the legacy AlterConfigs API, broker resources to that broker, topic resources anywhere, errors per resource', async () => {
    const { fc, admin } = await setup({ brokers: 2 });
    const seen: Array<{ broker: number; resources: string[]; validateOnly: boolean }> = [];
    for (const b of fc.brokers) {
      b.on(API_KEYS.AlterConfigs, (req) => {
        seen.push({
          broker: b.nodeId,
          resources: req.resources.map((r) => `${r.resourceType}:${r.resourceName}:${r.configs.map((c) => `${c.name}=${c.value}`).join(',')}`),
          validateOnly: req.validateOnly,
        });
        return {
          throttleTimeMs: 0,
          responses: req.resources.map((r) => ({
            errorCode: r.resourceName === 'bad' ? ErrorCode.INVALID_CONFIG : 0,
            errorMessage: r.resourceName === 'bad' ? 'nope' : null,
            resourceType: r.resourceType,
            resourceName: r.resourceName,
          })),
        };
      });
    }
    await admin.alterConfigs([
      { type: ConfigResourceType.Broker, name: '1', configs: [{ name: 'log.cleaner.threads', value: '2' }] },
      { type: ConfigResourceType.Topic, name: 't', configs: [{ name: 'retention.ms', value: '1000' }] },
    ]);
    expect(seen.find((s) => s.resources[0]!.startsWith('4:1'))?.broker).toBe(1);
    expect(seen.flatMap((s) => s.resources).sort()).toEqual(['2:t:retention.ms=1000', '4:1:log.cleaner.threads=2']);
    const err = await admin.alterConfigs([{ type: ConfigResourceType.Topic, name: 'bad', configs: [] }], { validateOnly: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BatchError);
    expect(errorsOf(err)).toEqual({ bad: ['INVALID_CONFIG', 'nope'] });
    expect(seen.at(-1)!.validateOnly).toBe(true);
  });
});
