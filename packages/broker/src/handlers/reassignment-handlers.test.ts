/**
 * AlterPartitionReassignments (45), ListPartitionReassignments (46) and IncrementalAlterConfigs (44)
 * through the request dispatcher at every advertised version: requests encoded with
 * @samsa/protocol, a stub controller, the in-memory ZooKeeper for configs.
 */
import pino from 'pino';
import { beforeEach, describe, expect, it } from 'vitest';
import { decodeResponse, encodeRequest, ErrorCode, getApi, topicPartitionKey, type ApiKey, type ApiRequestMap, type ApiResponseMap } from '@samsa/protocol';
import { ConfigType, FakeZkClient, KafkaZk, newTopicId } from '@samsa/zk-paths';
import type { KafkaController } from '@samsa/controller';
import { buildBrokerConfig } from '../config/broker-config.js';
import { MetadataCache } from '../metadata/metadata-cache.js';
import type { ConnectionInfo } from '../network/socket-server.js';
import { RequestHandler } from '../server/request-handler.js';
import type { BrokerServices } from './services.js';
import { alterPartitionReassignmentsHandler } from './alter-partition-reassignments.js';
import { incrementalAlterConfigsHandler } from './incremental-alter-configs.js';
import { listPartitionReassignmentsHandler } from './list-partition-reassignments.js';

const conn: ConnectionInfo = { id: 1, remote: '127.0.0.1:1', listener: 'PLAINTEXT' };
const versions = (key: number) => {
  const api = getApi(key)!;
  return Array.from({ length: api.maxVersion - api.minVersion + 1 }, (_, i) => api.minVersion + i);
};

let kzk: KafkaZk;
let rh: RequestHandler<BrokerServices>;
let active: boolean;
let altered: Array<{ topic: string; partition: number; replicas: number[] | null }>;

async function call<K extends ApiKey>(key: K, version: number, body: ApiRequestMap[K]): Promise<ApiResponseMap[K]> {
  const out = await rh.handle(encodeRequest(key, version, 7, 'test', body).subarray(4), conn);
  if (!Buffer.isBuffer(out)) throw new Error('expected one frame');
  return decodeResponse(key, version, out.subarray(4)).body;
}

beforeEach(async () => {
  kzk = new KafkaZk(new FakeZkClient());
  await kzk.createPersistentPaths();
  await kzk.createTopic('t', newTopicId(), new Map([[0, [0, 1, 2]]]), {});
  active = true;
  altered = [];
  const metadata = new MetadataCache();
  metadata.update({
    controllerId: 0,
    controllerEpoch: 1,
    brokers: [],
    partitions: [
      {
        topic: 't',
        topicId: newTopicId(),
        partition: 0,
        leader: 0,
        leaderEpoch: 0,
        isr: [0, 1, 2],
        replicas: [0, 1, 2],
        offlineReplicas: [],
        zkVersion: 0,
        controllerEpoch: 1,
      },
    ],
  });
  const controller = {
    get isActive() {
      return active;
    },
    alterPartitionReassignments: async (rs: typeof altered) => {
      altered.push(...rs);
      return {
        errorCode: 0,
        results: new Map(
          rs.map((r) => [topicPartitionKey(r), r.topic === 't' ? { errorCode: 0, message: null } : { errorCode: 3, message: 'The partition does not exist.' }]),
        ),
      };
    },
    listPartitionReassignments: async () => ({
      errorCode: 0,
      reassignments: [{ topic: 't', partition: 0, replicas: [1, 2, 3, 0], addingReplicas: [3], removingReplicas: [0] }],
    }),
  } as unknown as KafkaController;
  const services = {
    brokerId: 1,
    config: buildBrokerConfig({ properties: { 'zookeeper.connect': '127.0.0.1:2181' } }),
    metadata,
    controller,
    kzk,
    log: pino({ level: 'silent' }),
  } as unknown as BrokerServices;
  rh = new RequestHandler(
    [alterPartitionReassignmentsHandler, listPartitionReassignmentsHandler, incrementalAlterConfigsHandler],
    services,
    pino({ level: 'silent' }),
  );
});

describe('reassignment and config handlers', () => {
  it('AlterPartitionReassignments – every version: per-partition results from the controller, NOT_CONTROLLER elsewhere, v1 refuses a replication factor change when asked to', async () => {
    for (const v of versions(45)) {
      altered = [];
      const r = await call(45, v, {
        timeoutMs: 1000,
        allowReplicationFactorChange: true,
        topics: [
          { name: 't', partitions: [{ partitionIndex: 0, replicas: [1, 2, 3] }] },
          { name: 'x', partitions: [{ partitionIndex: 0, replicas: null }] },
        ],
      });
      expect(r.errorCode).toBe(0);
      expect(r.responses).toEqual([
        { name: 't', partitions: [{ partitionIndex: 0, errorCode: 0, errorMessage: null }] },
        { name: 'x', partitions: [{ partitionIndex: 0, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: 'The partition does not exist.' }] },
      ]);
      expect(altered).toEqual([
        { topic: 't', partition: 0, replicas: [1, 2, 3] },
        { topic: 'x', partition: 0, replicas: null },
      ]);
    }
    const rf = await call(45, 1, {
      timeoutMs: 1000,
      allowReplicationFactorChange: false,
      topics: [{ name: 't', partitions: [{ partitionIndex: 0, replicas: [1, 2] }] }],
    });
    expect(rf.responses[0]!.partitions[0]!.errorCode).toBe(ErrorCode.INVALID_REPLICATION_FACTOR);
    active = false;
    expect((await call(45, 0, { timeoutMs: 1000, allowReplicationFactorChange: true, topics: [] })).errorCode).toBe(ErrorCode.NOT_CONTROLLER);
  });

  it("ListPartitionReassignments – every version: the controller's ongoing reassignments by topic; NOT_CONTROLLER elsewhere", async () => {
    for (const v of versions(46)) {
      const r = await call(46, v, { timeoutMs: 1000, topics: null });
      expect(r).toMatchObject({
        errorCode: 0,
        topics: [{ name: 't', partitions: [{ partitionIndex: 0, replicas: [1, 2, 3, 0], addingReplicas: [3], removingReplicas: [0] }] }],
      });
    }
    active = false;
    expect((await call(46, 0, { timeoutMs: 1000, topics: null })).errorCode).toBe(ErrorCode.NOT_CONTROLLER);
  });

  it('IncrementalAlterConfigs – every version: topic SET/DELETE/APPEND/SUBTRACT written with a change notification; broker throttle rates on this broker or the default; invalid names, values and other brokers refused', async () => {
    for (const v of versions(44)) {
      const r = await call(44, v, {
        resources: [
          {
            resourceType: 2,
            resourceName: 't',
            configs: [
              { name: 'retention.ms', configOperation: 0, value: '1000' },
              { name: 'follower.replication.throttled.replicas', configOperation: 2, value: '0:3,0:4' },
            ],
          },
          { resourceType: 4, resourceName: '1', configs: [{ name: 'leader.replication.throttled.rate', configOperation: 0, value: '500' }] },
          { resourceType: 4, resourceName: '', configs: [{ name: 'follower.replication.throttled.rate', configOperation: 0, value: '700' }] },
        ],
        validateOnly: false,
      });
      expect(r.responses.map((x) => x.errorCode)).toEqual([0, 0, 0]);
    }
    expect(await kzk.getEntityConfig(ConfigType.Topic, 't')).toEqual({ 'retention.ms': '1000', 'follower.replication.throttled.replicas': '0:3,0:4' });
    expect(await kzk.getEntityConfig(ConfigType.Broker, '1')).toEqual({ 'leader.replication.throttled.rate': '500' });
    expect(await kzk.getEntityConfig(ConfigType.Broker, '<default>')).toEqual({ 'follower.replication.throttled.rate': '700' });
    const changes = await kzk.zk.getChildren('/config/changes');
    expect(changes.length).toBe(3 * versions(44).length); // one notification per changed entity
    await call(44, 1, {
      resources: [
        {
          resourceType: 2,
          resourceName: 't',
          configs: [
            { name: 'follower.replication.throttled.replicas', configOperation: 3, value: '0:3' },
            { name: 'retention.ms', configOperation: 1, value: null },
          ],
        },
      ],
      validateOnly: false,
    });
    expect(await kzk.getEntityConfig(ConfigType.Topic, 't')).toEqual({ 'follower.replication.throttled.replicas': '0:4' });

    const bad = await call(44, 1, {
      resources: [
        { resourceType: 2, resourceName: 'nope', configs: [{ name: 'retention.ms', configOperation: 0, value: '1' }] },
        { resourceType: 2, resourceName: 't', configs: [{ name: 'retention.ms', configOperation: 0, value: 'soon' }] },
        { resourceType: 2, resourceName: 't', configs: [{ name: 'no.such.config', configOperation: 0, value: '1' }] },
        { resourceType: 4, resourceName: '2', configs: [{ name: 'leader.replication.throttled.rate', configOperation: 0, value: '1' }] },
        { resourceType: 4, resourceName: '1', configs: [{ name: 'log.dirs', configOperation: 0, value: '/x' }] },
        { resourceType: 4, resourceName: '1', configs: [{ name: 'leader.replication.throttled.rate', configOperation: 0, value: '-5' }] },
        { resourceType: 4, resourceName: '', configs: [{ name: 'log.retention.ms', configOperation: 0, value: 'soon' }] },
        { resourceType: 2, resourceName: 't', configs: [{ name: 'retention.ms', configOperation: 2, value: '1' }] },
      ],
      validateOnly: false,
    });
    expect(bad.responses.map((x) => x.errorCode)).toEqual([
      ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
      ErrorCode.INVALID_CONFIG,
      ErrorCode.INVALID_CONFIG,
      ErrorCode.INVALID_REQUEST,
      ErrorCode.INVALID_REQUEST,
      ErrorCode.INVALID_CONFIG,
      ErrorCode.INVALID_CONFIG,
      ErrorCode.INVALID_CONFIG,
    ]);
    expect(bad.responses[3]!.errorMessage).toBe('Unexpected broker id, expected 1 or empty string, but received 2');
    expect(bad.responses[4]!.errorMessage).toBe(
      "Invalid config value for resource ConfigResource(type=BROKER, name='1'): Cannot update these configs dynamically: Set(log.dirs)",
    );
    expect(bad.responses[6]!.errorMessage).toMatch(/log\.retention\.ms/);
    const validateOnly = await call(44, 0, {
      resources: [{ resourceType: 2, resourceName: 't', configs: [{ name: 'retention.ms', configOperation: 0, value: '5' }] }],
      validateOnly: true,
    });
    expect(validateOnly.responses[0]!.errorCode).toBe(0);
    expect((await kzk.getEntityConfig(ConfigType.Topic, 't'))['retention.ms']).toBeUndefined();
  });
});
