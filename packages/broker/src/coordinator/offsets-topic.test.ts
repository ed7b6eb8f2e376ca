import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { ErrorCode, type DecodedRequestOf } from '@samsa/protocol';
import { javaStringHashCode, kafkaAbs } from '@samsa/server-common';
import { partitionForTransactionalId, TRANSACTION_STATE_TOPIC_NAME } from '@samsa/transaction-coordinator';
import { findCoordinatorHandler } from '../handlers/find-coordinator.js';
import { MetadataCache } from '../metadata/metadata-cache.js';
import type { RequestContext } from '../api/api-handler.js';
import type { BrokerServices } from '../handlers/services.js';
import {
  GROUP_METADATA_TOPIC_NAME,
  decodeGroupMetadataValue,
  decodeKey,
  decodeOffsetCommitValue,
  encodeGroupMetadataKey,
  encodeGroupMetadataValue,
  encodeOffsetCommitKey,
  encodeOffsetCommitValue,
  offsetsTopicReplicationFactor,
  partitionForGroup,
  subscriptionTopics,
} from '@samsa/group-coordinator';

describe('offsets topic partitioning', () => {
  it('partitionFor is Utils.abs(hashCode) % partitions (Integer.MIN_VALUE → 0)', () => {
    expect(kafkaAbs(-2147483648)).toBe(0);
    expect(kafkaAbs(-5)).toBe(5);
    expect(partitionForGroup('polygenelubricants', 50)).toBe(0);
    expect(partitionForGroup('hello', 50)).toBe(99162322 % 50);
    const negative = 'my-group-with-a-negative-hash-1';
    const h = javaStringHashCode(negative);
    expect(partitionForGroup(negative, 50)).toBe(Math.abs(h) % 50);
  });

  it('replication factor is capped at the live brokers', () => {
    expect(offsetsTopicReplicationFactor(3, 3)).toBe(3);
    expect(offsetsTopicReplicationFactor(3, 1)).toBe(1);
    expect(offsetsTopicReplicationFactor(1, 3)).toBe(1);
  });
});

describe('__consumer_offsets record schemas (Kafka byte layouts)', () => {
  it('OffsetCommitKey v1 and OffsetCommitValue v3', () => {
    const key = encodeOffsetCommitKey('g', 't', 7);
    expect(key.toString('hex')).toBe('0001' + '000167' + '000174' + '00000007');
    expect(decodeKey(key)).toEqual({ type: 'offset', version: 1, group: 'g', topic: 't', partition: 7 });
    const value = encodeOffsetCommitValue({ committedOffset: 5n, leaderEpoch: -1, metadata: '', commitTimestampMs: 1000, expireTimestampMs: null });
    expect(value.toString('hex')).toBe('0003' + '0000000000000005' + 'ffffffff' + '0000' + '00000000000003e8');
    expect(decodeOffsetCommitValue(value)).toEqual({ committedOffset: 5n, leaderEpoch: -1, metadata: '', commitTimestampMs: 1000, expireTimestampMs: null });
  });

  it('OffsetCommitValue v1 when an expire timestamp is set; v0 and v4 decode', () => {
    const v1 = encodeOffsetCommitValue({ committedOffset: 9n, leaderEpoch: 3, metadata: 'm', commitTimestampMs: 10, expireTimestampMs: 20 });
    expect(v1.toString('hex')).toBe('0001' + '0000000000000009' + '00016d' + '000000000000000a' + '0000000000000014');
    expect(decodeOffsetCommitValue(v1)).toEqual({ committedOffset: 9n, leaderEpoch: -1, metadata: 'm', commitTimestampMs: 10, expireTimestampMs: 20 });
    const v0 = Buffer.from('0000' + '0000000000000002' + '0000' + '0000000000000001', 'hex');
    expect(decodeOffsetCommitValue(v0)).toEqual({ committedOffset: 2n, leaderEpoch: -1, metadata: '', commitTimestampMs: 1, expireTimestampMs: null });
    // v4: flexible (compact string, tagged fields)
    const v4 = Buffer.from('0004' + '0000000000000002' + '00000001' + '026d' + '0000000000000001' + '00', 'hex');
    expect(decodeOffsetCommitValue(v4)).toEqual({ committedOffset: 2n, leaderEpoch: 1, metadata: 'm', commitTimestampMs: 1, expireTimestampMs: null });
  });

  it('GroupMetadataKey v2 and GroupMetadataValue v3 round trip', () => {
    const key = encodeGroupMetadataKey('grp');
    expect(key.toString('hex')).toBe('0002' + '0003677270');
    expect(decodeKey(key)).toEqual({ type: 'group', version: 2, group: 'grp' });
    const g = {
      protocolType: 'consumer',
      generation: 4,
      protocol: 'range',
      leader: 'm1',
      currentStateTimestamp: 1234,
      members: [
        {
          memberId: 'm1',
          groupInstanceId: null,
          clientId: 'c',
          clientHost: '/127.0.0.1',
          rebalanceTimeoutMs: 300000,
          sessionTimeoutMs: 10000,
          subscription: Buffer.from([0, 0, 0, 0, 0, 0]),
          assignment: Buffer.from([1, 2]),
        },
        {
          memberId: 'm2',
          groupInstanceId: 'i2',
          clientId: 'c',
          clientHost: '/127.0.0.1',
          rebalanceTimeoutMs: 1,
          sessionTimeoutMs: 2,
          subscription: Buffer.alloc(0),
          assignment: Buffer.alloc(0),
        },
      ],
    };
    const v = encodeGroupMetadataValue(g);
    expect(v.subarray(0, 2).toString('hex')).toBe('0003');
    // protocolType, generation, protocol, leader, currentStateTimestamp, members count
    expect(v.subarray(2, 2 + 10 + 4 + 7 + 4 + 8 + 4).toString('hex')).toBe(
      '0008' +
        Buffer.from('consumer').toString('hex') +
        '00000004' +
        '0005' +
        Buffer.from('range').toString('hex') +
        '0002' +
        Buffer.from('m1').toString('hex') +
        '00000000000004d2' +
        '00000002',
    );
    expect(decodeGroupMetadataValue(v)).toEqual(g);
  });

  it('a v0 GroupMetadataValue uses the session timeout as rebalance timeout', () => {
    const v0 = Buffer.concat([
      Buffer.from('0000' + '0000' + '00000001' + 'ffff' + 'ffff' + '00000001', 'hex'),
      Buffer.from('0001' + '6d' + '0001' + '63' + '0001' + '68' + '00001388' + '00000000' + '00000000', 'hex'),
    ]);
    expect(decodeGroupMetadataValue(v0)).toEqual({
      protocolType: '',
      generation: 1,
      protocol: null,
      leader: null,
      currentStateTimestamp: -1,
      members: [
        {
          memberId: 'm',
          groupInstanceId: null,
          clientId: 'c',
          clientHost: 'h',
          rebalanceTimeoutMs: 5000,
          sessionTimeoutMs: 5000,
          subscription: Buffer.alloc(0),
          assignment: Buffer.alloc(0),
        },
      ],
    });
  });

  it('consumer protocol subscription topics (v0 prefix)', () => {
    const sub = Buffer.from('0001' + '00000002' + '0001' + '61' + '0001' + '62' + 'ffffffff', 'hex');
    expect(subscriptionTopics(sub)).toEqual(['a', 'b']);
    expect(subscriptionTopics(Buffer.from([1]))).toBeNull();
  });
});

describe('FindCoordinator handler', () => {
  const metadata = new MetadataCache();
  const created: string[] = [];
  const services = {
    metadata,
    config: {
      get: (k: string) =>
        ({
          'offsets.topic.num.partitions': 50,
          'offsets.topic.replication.factor': 3,
          'offsets.topic.segment.bytes': 104857600,
          'transaction.state.log.num.partitions': 5,
          'transaction.state.log.replication.factor': 3,
        })[k],
    },
    topicAdmin: {
      createTopic: async (spec: { name: string; replicationFactor: number; configs: Record<string, string> }) =>
        void created.push(`${spec.name}/${spec.replicationFactor}/${spec.configs['cleanup.policy']}`),
    },
    groupCoordinator: { partitionFor: (g: string) => partitionForGroup(g, 50) },
    transactionCoordinator: {
      partitionFor: (id: string) => partitionForTransactionalId(id, 5),
      transactionTopicConfigs: () => ({ 'cleanup.policy': 'compact', 'min.insync.replicas': '2' }),
    },
    log: pino({ enabled: false }),
  } as unknown as BrokerServices;
  const ctx = { listener: 'PLAINTEXT' } as RequestContext;
  const req = (apiVersion: number, body: Partial<DecodedRequestOf<10>['body']>) =>
    ({ apiKey: 10, apiVersion, body: { key: '', keyType: 0, coordinatorKeys: [], ...body } }) as unknown as DecodedRequestOf<10>;
  const endpoints = (id: number) => [
    { listener: 'PLAINTEXT', host: `h${id}`, port: 9000 + id, securityProtocol: 'PLAINTEXT' },
    { listener: 'OTHER', host: `o${id}`, port: 8000 + id, securityProtocol: 'PLAINTEXT' },
  ];

  it('creates __consumer_offsets on first use and answers COORDINATOR_NOT_AVAILABLE meanwhile', async () => {
    metadata.update({ controllerId: 0, controllerEpoch: 1, brokers: [0].map((id) => ({ id, endpoints: endpoints(id), rack: null })), partitions: [] });
    const r = await findCoordinatorHandler.handle(req(3, { key: 'g' }), ctx, services);
    expect(r).toMatchObject({
      errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE,
      nodeId: -1,
      host: '',
      port: -1,
      errorMessage: 'The coordinator is not available.',
    });
    await new Promise((res) => setTimeout(res, 0));
    // 1 live broker: replication factor 3 capped to 1
    expect(created).toEqual(['__consumer_offsets/1/compact']);
  });

  it('answers the leader of partition abs(hash) % 50 on the listener used, batched from v4', async () => {
    const brokers = [0, 1, 2].map((id) => ({ id, endpoints: endpoints(id), rack: null }));
    const partitions = Array.from({ length: 50 }, (_, p) => ({
      topic: GROUP_METADATA_TOPIC_NAME,
      topicId: 'x',
      partition: p,
      leader: p === 7 ? -1 : p % 3,
      leaderEpoch: 0,
      isr: [p % 3],
      replicas: [p % 3],
      offlineReplicas: [],
      zkVersion: 0,
      controllerEpoch: 1,
    }));
    metadata.update({ controllerId: 0, controllerEpoch: 1, brokers, partitions });
    const g = 'hello'; // partition 22 → broker 1
    expect(partitionForGroup(g, 50)).toBe(22);
    expect(await findCoordinatorHandler.handle(req(2, { key: g }), ctx, services)).toMatchObject({
      errorCode: 0,
      errorMessage: 'NONE',
      nodeId: 1,
      host: 'h1',
      port: 9001,
    });
    expect(await findCoordinatorHandler.handle(req(0, { key: g }), { listener: 'OTHER' } as RequestContext, services)).toMatchObject({
      errorCode: 0,
      errorMessage: null,
      nodeId: 1,
      host: 'o1',
      port: 8001,
    });
    const leaderless = Array.from({ length: 1000 }, (_, i) => `g${i}`).find((x) => partitionForGroup(x, 50) === 7)!;
    const r = await findCoordinatorHandler.handle(req(4, { coordinatorKeys: [g, leaderless] }), ctx, services);
    expect(r!.coordinators).toEqual([
      { key: g, nodeId: 1, host: 'h1', port: 9001, errorCode: 0, errorMessage: null },
      { key: leaderless, nodeId: -1, host: '', port: -1, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, errorMessage: null },
    ]);
    // unknown key types: INVALID_REQUEST
    expect(await findCoordinatorHandler.handle(req(3, { key: 'x', keyType: 9 }), ctx, services)).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST });
  });

  it('transactional ids (key type 1): __transaction_state created on first use with the coordinator’s configs, then the leader of abs(hash) % its partitions', async () => {
    const brokers = [0, 1, 2].map((id) => ({ id, endpoints: endpoints(id), rack: null }));
    metadata.update({ controllerId: 0, controllerEpoch: 1, brokers, partitions: [] });
    created.length = 0;
    expect(await findCoordinatorHandler.handle(req(3, { key: 'tx', keyType: 1 }), ctx, services)).toMatchObject({
      errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    });
    await new Promise((res) => setTimeout(res, 0));
    expect(created).toEqual(['__transaction_state/3/compact']);
    const partitions = Array.from({ length: 5 }, (_, p) => ({
      topic: TRANSACTION_STATE_TOPIC_NAME,
      topicId: 'y',
      partition: p,
      leader: p % 3,
      leaderEpoch: 0,
      isr: [p % 3],
      replicas: [p % 3],
      offlineReplicas: [],
      zkVersion: 0,
      controllerEpoch: 1,
    }));
    metadata.update({ controllerId: 0, controllerEpoch: 1, brokers, partitions });
    const leader = partitionForTransactionalId('tx', 5) % 3;
    expect(await findCoordinatorHandler.handle(req(3, { key: 'tx', keyType: 1 }), ctx, services)).toMatchObject({
      errorCode: 0,
      nodeId: leader,
      port: 9000 + leader,
    });
    const r = await findCoordinatorHandler.handle(req(4, { keyType: 1, coordinatorKeys: ['tx'] }), ctx, services);
    expect(r!.coordinators).toEqual([{ key: 'tx', nodeId: leader, host: `h${leader}`, port: 9000 + leader, errorCode: 0, errorMessage: null }]);
  });
});
