/**
 * The group API handlers at every version they advertise, through the request dispatcher: requests
 * encoded with @samsa/protocol, answered by a real coordinator (in-memory `__consumer_offsets`,
 * no initial rebalance delay), responses encoded and decoded again. Catches fields a version cannot
 * carry, version-specific semantics (MEMBER_ID_REQUIRED from v4, v0 offsets in ZooKeeper, batched
 * LeaveGroup/OffsetFetch/FindCoordinator) and error responses that would not encode.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import {
  decodeRequest,
  decodeResponse,
  encodeRequest,
  encodeResponse,
  ErrorCode,
  getApi,
  topicPartitionKey,
  type ApiKey,
  type ApiRequestMap,
  type ApiResponseMap,
} from '@samsa/protocol';
import { FakeZkClient } from '@samsa/zk-paths';
import { deleteGroupsHandler } from '../handlers/delete-groups.js';
import { describeGroupsHandler } from '../handlers/describe-groups.js';
import { findCoordinatorHandler } from '../handlers/find-coordinator.js';
import { heartbeatHandler } from '../handlers/heartbeat.js';
import { joinGroupHandler } from '../handlers/join-group.js';
import { leaveGroupHandler } from '../handlers/leave-group.js';
import { listGroupsHandler } from '../handlers/list-groups.js';
import { offsetCommitHandler } from '../handlers/offset-commit.js';
import { offsetDeleteHandler } from '../handlers/offset-delete.js';
import { offsetFetchHandler } from '../handlers/offset-fetch.js';
import { syncGroupHandler } from '../handlers/sync-group.js';
import { MetadataCache } from '../metadata/metadata-cache.js';
import type { ConnectionInfo } from '../network/socket-server.js';
import type { AnyApiHandler } from '../api/api-handler.js';
import { RequestHandler } from '../server/request-handler.js';
import type { BrokerServices } from '../handlers/services.js';
import { GROUP_METADATA_TOPIC_NAME, GroupCoordinator } from '@samsa/group-coordinator';
import { MemoryOffsetsLog, subscription } from '@samsa/group-coordinator/testing';
import { parseMetadataVersion, type MetadataVersion } from '@samsa/server-common';

const E = ErrorCode;
const SUB = subscription(['t']);
const HANDLERS: Array<AnyApiHandler<BrokerServices>> = [
  findCoordinatorHandler,
  joinGroupHandler,
  syncGroupHandler,
  heartbeatHandler,
  leaveGroupHandler,
  offsetCommitHandler,
  offsetFetchHandler,
  describeGroupsHandler,
  listGroupsHandler,
  deleteGroupsHandler,
  offsetDeleteHandler,
];
const conn: ConnectionInfo = { id: 1, remote: '::ffff:127.0.0.1:40000', listener: 'PLAINTEXT' };

let coord: GroupCoordinator;
/** What the handlers read of the broker config; inter.broker.protocol.version is set per test. */
const brokerConfig: { get: (k: string) => unknown; interBrokerProtocolVersion?: MetadataVersion } = {
  get: (k: string) => ({ 'offset.metadata.max.bytes': 4096 })[k],
};
let rh: RequestHandler<BrokerServices>;
let corr = 0;

const versions = (key: number) => {
  const api = getApi(key)!;
  return Array.from({ length: api.maxVersion - api.minVersion + 1 }, (_, i) => api.minVersion + i);
};

async function call<K extends ApiKey>(key: K, version: number, body: ApiRequestMap[K]): Promise<ApiResponseMap[K]> {
  const id = ++corr;
  const frame = encodeRequest(key, version, id, 'client', body).subarray(4);
  const out = await rh.handle(frame, conn);
  if (!Buffer.isBuffer(out)) throw new Error('expected one response frame');
  const d = decodeResponse(key, version, out.subarray(4));
  expect(d.header.correlationId).toBe(id);
  return d.body;
}

beforeAll(async () => {
  const storage = new MemoryOffsetsLog();
  storage.leaders.add(0);
  coord = new GroupCoordinator({
    brokerId: 0,
    groupConfig: { groupMinSessionTimeoutMs: 1000, groupMaxSessionTimeoutMs: 60_000, groupMaxSize: 100, groupInitialRebalanceDelayMs: 0 },
    offsetConfig: {
      maxMetadataSize: 4096,
      loadBufferSize: 1 << 20,
      offsetsRetentionMs: 3600_000,
      offsetsRetentionCheckIntervalMs: 600_000,
      offsetCommitTimeoutMs: 5000,
      compression: 0,
    },
    storage,
    logger: pino({ enabled: false }),
    partitionCount: 1,
  });
  coord.startup(1, false);
  await coord.onElection(0, 0);
  const metadata = new MetadataCache();
  const p = (topic: string, partition: number) => ({
    topic,
    topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
    partition,
    leader: 0,
    leaderEpoch: 0,
    isr: [0],
    replicas: [0],
    offlineReplicas: [],
    zkVersion: 0,
    controllerEpoch: 1,
  });
  metadata.update({
    controllerId: 0,
    controllerEpoch: 1,
    brokers: [{ id: 0, endpoints: [{ listener: 'PLAINTEXT', host: 'localhost', port: 9092, securityProtocol: 'PLAINTEXT' }], rack: null }],
    partitions: [p('t', 0), p('t', 1), p('u', 0), p(GROUP_METADATA_TOPIC_NAME, 0)],
  });
  const services = {
    brokerId: 0,
    metadata,
    config: brokerConfig,
    kzk: { zk: new FakeZkClient() },
    groupCoordinator: coord,
    log: pino({ enabled: false }),
  } as unknown as BrokerServices;
  rh = new RequestHandler(HANDLERS, services, pino({ enabled: false }));
});

afterAll(async () => {
  await coord.shutdown();
});

const joinBody = (groupId: string, v: number, memberId = '') => ({
  groupId,
  sessionTimeoutMs: 10_000,
  rebalanceTimeoutMs: v >= 1 ? 10_000 : -1,
  memberId,
  groupInstanceId: null,
  protocolType: 'consumer',
  protocols: [{ name: 'range', metadata: SUB }],
  reason: v >= 8 ? 'test' : null,
});

/** A one-member Stable group `groupId` (JoinGroup v3 and SyncGroup v3); its member id. */
async function stable(groupId: string, protocolType = 'consumer'): Promise<string> {
  const j = await call(11, 3, { ...joinBody(groupId, 3), protocolType });
  expect(j.errorCode).toBe(E.NONE);
  const s = await call(14, 3, {
    groupId,
    generationId: j.generationId,
    memberId: j.memberId,
    groupInstanceId: null,
    protocolType: null,
    protocolName: null,
    assignments: [{ memberId: j.memberId, assignment: Buffer.from('a') }],
  });
  expect(s.errorCode).toBe(E.NONE);
  return j.memberId;
}

describe('group API handlers at every version', () => {
  it('FindCoordinator v0–v6 (batched keys v4+)', async () => {
    for (const v of versions(10)) {
      const r = await call(10, v, { key: v < 4 ? 'g' : '', keyType: 0, coordinatorKeys: v >= 4 ? ['g', 'h'] : [] });
      if (v < 4) expect(r).toMatchObject({ errorCode: 0, nodeId: 0, host: 'localhost', port: 9092 });
      else
        expect(r.coordinators.map((c) => [c.key, c.errorCode, c.nodeId, c.port])).toEqual([
          ['g', 0, 0, 9092],
          ['h', 0, 0, 9092],
        ]);
    }
  });

  it('JoinGroup v0–v9: new members join at once before v4, get MEMBER_ID_REQUIRED from v4; v7+ answers the protocol type', async () => {
    for (const v of versions(11)) {
      const g = `join-v${v}`;
      const first = await call(11, v, joinBody(g, v));
      if (v < 4) {
        expect(first).toMatchObject({ errorCode: E.NONE, generationId: 1, protocolName: 'range', leader: first.memberId });
        expect(first.memberId).toMatch(/^client-/);
        expect(first.members).toHaveLength(1);
        continue;
      }
      expect(first).toMatchObject({ errorCode: E.MEMBER_ID_REQUIRED, generationId: -1, protocolName: v >= 7 ? null : '', leader: '' });
      const second = await call(11, v, joinBody(g, v, first.memberId));
      expect(second).toMatchObject({
        errorCode: E.NONE,
        generationId: 1,
        memberId: first.memberId,
        leader: first.memberId,
        protocolName: 'range',
        protocolType: v >= 7 ? 'consumer' : null,
        skipAssignment: false,
      });
      expect(second.members[0]).toMatchObject({ memberId: first.memberId, metadata: SUB });
    }
    // clientHost as Kafka prints it
    expect(coord.handleDescribeGroup('join-v0').summary.members[0]!.clientHost).toBe('/127.0.0.1');
  });

  it('SyncGroup v0–v5 (v5 needs protocol type and name), Heartbeat v0–v4', async () => {
    for (const v of versions(14)) {
      const g = `sync-v${v}`;
      const j = await call(11, 3, joinBody(g, 3));
      if (v >= 5) {
        const missing = await call(14, v, {
          groupId: g,
          generationId: 1,
          memberId: j.memberId,
          groupInstanceId: null,
          protocolType: null,
          protocolName: 'range',
          assignments: [],
        });
        expect(missing.errorCode).toBe(E.INCONSISTENT_GROUP_PROTOCOL);
      }
      const s = await call(14, v, {
        groupId: g,
        generationId: 1,
        memberId: j.memberId,
        groupInstanceId: null,
        protocolType: v >= 5 ? 'consumer' : null,
        protocolName: v >= 5 ? 'range' : null,
        assignments: [{ memberId: j.memberId, assignment: Buffer.from(`assignment-${v}`) }],
      });
      expect(s).toMatchObject({ errorCode: E.NONE, assignment: Buffer.from(`assignment-${v}`), protocolName: v >= 5 ? 'range' : null });
    }
    const id = await stable('hb');
    for (const v of versions(12)) {
      expect((await call(12, v, { groupId: 'hb', generationId: 1, memberId: id, groupInstanceId: null })).errorCode).toBe(E.NONE);
      expect((await call(12, v, { groupId: 'hb', generationId: 9, memberId: id, groupInstanceId: null })).errorCode).toBe(E.ILLEGAL_GENERATION);
    }
  });

  it('OffsetCommit v0–v9 and OffsetFetch v0–v9: v0 in ZooKeeper, v1+ in the coordinator; unknown topics; batched groups from v8', async () => {
    for (const v of versions(8)) {
      const r = await call(8, v, {
        groupId: 'oc',
        generationIdOrMemberEpoch: -1,
        memberId: '',
        groupInstanceId: null,
        retentionTimeMs: -1n,
        topics: [
          {
            name: 't',
            partitions: [
              { partitionIndex: 0, committedOffset: BigInt(100 + v), committedLeaderEpoch: v >= 6 ? 3 : -1, commitTimestamp: -1n, committedMetadata: `m${v}` },
            ],
          },
          { name: 'nope', partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: null }] },
        ],
      });
      expect(r.topics.map((t) => [t.name, t.partitions.map((p) => [p.partitionIndex, p.errorCode])])).toEqual([
        ['t', [[0, E.NONE]]],
        ['nope', [[0, E.UNKNOWN_TOPIC_OR_PARTITION]]],
      ]);
    }
    for (const v of versions(9)) {
      const r =
        v < 8
          ? await call(9, v, { groupId: 'oc', topics: [{ name: 't', partitionIndexes: [0, 1] }], groups: [], requireStable: v >= 7 })
          : await call(9, v, {
              groupId: '',
              topics: [],
              groups: [
                { groupId: 'oc', memberId: null, memberEpoch: -1, topics: [{ name: 't', partitionIndexes: [0, 1] }] },
                { groupId: 'none', memberId: null, memberEpoch: -1, topics: null },
              ],
              requireStable: true,
            });
      const topics = v < 8 ? r.topics : r.groups[0]!.topics;
      const parts = topics[0]!.partitions;
      if (v === 0) {
        // v0 reads ZooKeeper: the v0 commit; no offset there answers UNKNOWN_TOPIC_OR_PARTITION, as Kafka
        expect(parts.map((p) => [p.committedOffset, p.errorCode])).toEqual([
          [100n, E.NONE],
          [-1n, E.UNKNOWN_TOPIC_OR_PARTITION],
        ]);
        continue;
      }
      expect(parts[0]).toMatchObject({ partitionIndex: 0, committedOffset: BigInt(100 + 9), metadata: 'm9', errorCode: E.NONE });
      if (v >= 5) expect(parts[0]!.committedLeaderEpoch).toBe(3);
      expect(parts[1]).toMatchObject({ partitionIndex: 1, committedOffset: -1n, errorCode: E.NONE });
      if (v >= 8) expect(r.groups[1]).toEqual({ groupId: 'none', topics: [], errorCode: E.NONE });
    }
  });

  it('DescribeGroups v0–v5, ListGroups v0–v5, LeaveGroup v0–v5, DeleteGroups v0–v2', async () => {
    const id = await stable('dg');
    for (const v of versions(15)) {
      const r = await call(15, v, { groups: ['dg', 'nope'], includeAuthorizedOperations: v >= 3 });
      expect(r.groups[0]).toMatchObject({
        errorCode: 0,
        groupId: 'dg',
        groupState: 'Stable',
        protocolType: 'consumer',
        protocolData: 'range',
        authorizedOperations: v >= 3 ? 328 : -2147483648,
      });
      expect(r.groups[0]!.members[0]).toMatchObject({
        memberId: id,
        clientId: 'client',
        clientHost: '/127.0.0.1',
        memberMetadata: SUB,
        memberAssignment: Buffer.from('a'),
      });
      expect(r.groups[1]).toMatchObject({ groupId: 'nope', groupState: 'Dead', members: [] });
    }
    for (const v of versions(16)) {
      const r = await call(16, v, { statesFilter: v >= 4 ? ['stable'] : [], typesFilter: v >= 5 ? ['classic'] : [] });
      expect(r.errorCode).toBe(0);
      const dg = r.groups.find((g) => g.groupId === 'dg');
      expect(dg).toMatchObject({ protocolType: 'consumer', groupState: v >= 4 ? 'Stable' : '', groupType: v >= 5 ? 'classic' : '' });
      if (v >= 4) expect(r.groups.every((g) => g.groupState === 'Stable')).toBe(true);
    }
    for (const v of versions(13)) {
      const g = `leave-v${v}`;
      const m = await stable(g);
      const r =
        v < 3
          ? await call(13, v, { groupId: g, memberId: m, members: [] })
          : await call(13, v, {
              groupId: g,
              memberId: '',
              members: [
                { memberId: m, groupInstanceId: null, reason: v >= 5 ? 'bye' : null },
                { memberId: 'ghost', groupInstanceId: null, reason: null },
              ],
            });
      expect(r.errorCode).toBe(E.NONE);
      if (v >= 3)
        expect(r.members.map((x) => [x.memberId, x.errorCode])).toEqual([
          [m, E.NONE],
          ['ghost', E.UNKNOWN_MEMBER_ID],
        ]);
      else expect((await call(13, v, { groupId: g, memberId: 'ghost', members: [] })).errorCode).toBe(E.UNKNOWN_MEMBER_ID);
      expect(coord.handleDescribeGroup(g).summary.state).toBe('Empty');
    }
    for (const v of versions(42)) {
      const r = await call(42, v, { groupNames: [`leave-v${v}`, 'dg', 'missing'] });
      expect(r.results.map((x) => [x.groupId, x.errorCode])).toEqual([
        [`leave-v${v}`, E.NONE],
        ['dg', E.NON_EMPTY_GROUP],
        ['missing', E.GROUP_ID_NOT_FOUND],
      ]);
    }
  });

  it('OffsetDelete v0: Empty groups lose the offsets asked for; unknown partitions, subscribed topics of an active consumer group, non-consumer groups and unknown groups are refused', async () => {
    const commitBody = (groupId: string, memberId: string, generation: number, parts: Array<[string, number]>) => ({
      groupId,
      generationIdOrMemberEpoch: generation,
      memberId,
      groupInstanceId: null,
      retentionTimeMs: -1n,
      topics: [...new Set(parts.map(([t]) => t))].map((name) => ({
        name,
        partitions: parts
          .filter(([t]) => t === name)
          .map(([, partitionIndex]) => ({ partitionIndex, committedOffset: 5n, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: null })),
      })),
    });
    const committed = async (groupId: string) =>
      (await call(9, 7, { groupId, topics: null, groups: [], requireStable: false })).topics
        .flatMap((t) => t.partitions.map((p) => topicPartitionKey(t.name, p.partitionIndex)))
        .sort();
    const outcome = (r: ApiResponseMap[47]) => [
      r.errorCode,
      r.topics.flatMap((t) => t.partitions.map((p) => [topicPartitionKey(t.name, p.partitionIndex), p.errorCode])),
    ];

    expect(
      (
        await call(
          8,
          8,
          commitBody('od-empty', '', -1, [
            ['t', 0],
            ['t', 1],
            ['u', 0],
          ]),
        )
      ).topics.every((t) => t.partitions.every((p) => p.errorCode === E.NONE)),
    ).toBe(true);
    const r = await call(47, 0, {
      groupId: 'od-empty',
      topics: [
        { name: 't', partitions: [{ partitionIndex: 0 }] },
        { name: 'nope', partitions: [{ partitionIndex: 0 }] },
      ],
    });
    expect(outcome(r)).toEqual([
      E.NONE,
      [
        ['nope-0', E.UNKNOWN_TOPIC_OR_PARTITION],
        ['t-0', E.NONE],
      ],
    ]);
    expect(await committed('od-empty')).toEqual(['t-1', 'u-0']);

    // a Stable consumer group subscribed to t: t refused, u (not subscribed) deleted
    const m = await stable('od-active');
    expect(
      (
        await call(
          8,
          8,
          commitBody('od-active', m, 1, [
            ['t', 0],
            ['u', 0],
          ]),
        )
      ).topics.flatMap((t) => t.partitions.map((p) => p.errorCode)),
    ).toEqual([E.NONE, E.NONE]);
    const active = await call(47, 0, {
      groupId: 'od-active',
      topics: [
        { name: 't', partitions: [{ partitionIndex: 0 }] },
        { name: 'u', partitions: [{ partitionIndex: 0 }] },
      ],
    });
    expect(outcome(active)).toEqual([
      E.NONE,
      [
        ['t-0', E.GROUP_SUBSCRIBED_TO_TOPIC],
        ['u-0', E.NONE],
      ],
    ]);
    expect(await committed('od-active')).toEqual(['t-0']);

    await stable('od-connect', 'connect');
    expect(outcome(await call(47, 0, { groupId: 'od-connect', topics: [{ name: 'u', partitions: [{ partitionIndex: 0 }] }] }))).toEqual([
      E.NON_EMPTY_GROUP,
      [],
    ]);
    expect(outcome(await call(47, 0, { groupId: 'od-missing', topics: [{ name: 't', partitions: [{ partitionIndex: 0 }] }] }))).toEqual([
      E.GROUP_ID_NOT_FOUND,
      [],
    ]);
    // deleting an Empty group's last offsets removes the group
    await call(47, 0, {
      groupId: 'od-empty',
      topics: [
        { name: 't', partitions: [{ partitionIndex: 1 }] },
        { name: 'u', partitions: [{ partitionIndex: 0 }] },
      ],
    });
    expect(coord.handleDescribeGroup('od-empty').summary.state).toBe('Dead');
  });

  it('every handler’s error response encodes at every version', () => {
    const bodies: { [K in 8 | 9 | 10 | 11 | 12 | 13 | 14 | 15 | 16 | 42 | 47]: (v: number) => ApiRequestMap[K] } = {
      8: () => ({
        groupId: 'g',
        generationIdOrMemberEpoch: -1,
        memberId: '',
        groupInstanceId: null,
        retentionTimeMs: -1n,
        topics: [
          { name: 't', partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: null }] },
        ],
      }),
      9: (v) =>
        v < 8
          ? { groupId: 'g', topics: [{ name: 't', partitionIndexes: [0] }], groups: [], requireStable: false }
          : { groupId: '', topics: [], groups: [{ groupId: 'g', memberId: null, memberEpoch: -1, topics: null }], requireStable: false },
      10: (v) => ({ key: v < 4 ? 'g' : '', keyType: 0, coordinatorKeys: v >= 4 ? ['g'] : [] }),
      11: (v) => joinBody('g', v),
      12: () => ({ groupId: 'g', generationId: 1, memberId: 'm', groupInstanceId: null }),
      13: (v) =>
        v < 3
          ? { groupId: 'g', memberId: 'm', members: [] }
          : { groupId: 'g', memberId: '', members: [{ memberId: 'm', groupInstanceId: null, reason: null }] },
      14: () => ({ groupId: 'g', generationId: 1, memberId: 'm', groupInstanceId: null, protocolType: null, protocolName: null, assignments: [] }),
      15: () => ({ groups: ['g'], includeAuthorizedOperations: false }),
      16: () => ({ statesFilter: [], typesFilter: [] }),
      42: () => ({ groupNames: ['g'] }),
      47: () => ({ groupId: 'g', topics: [{ name: 't', partitions: [{ partitionIndex: 0 }] }] }),
    };
    let checked = 0;
    for (const h of HANDLERS) {
      const key = h.apiKey as keyof typeof bodies;
      for (const v of versions(key)) {
        const d = decodeRequest(encodeRequest(key, v, 7, 'c', bodies[key](v) as never).subarray(4));
        if (!d.ok) throw new Error(`request ${key} v${v} does not decode`);
        for (const code of [E.NOT_COORDINATOR, E.COORDINATOR_LOAD_IN_PROGRESS]) {
          const body = h.errorResponse(d as never, code) as ApiResponseMap[typeof key];
          const frame = encodeResponse(key, v, 7, body as never);
          expect(decodeResponse(key, v, frame.subarray(4)).header.correlationId).toBe(7);
          checked++;
        }
      }
    }
    expect(checked).toBe(2 * [8, 9, 10, 11, 12, 13, 14, 15, 16, 42, 47].reduce((n, k) => n + versions(k).length, 0));
  });
  it('group APIs – static membership is UNSUPPORTED_VERSION below inter.broker.protocol.version 2.3 (group metadata v2 cannot store it), as Kafka', async () => {
    brokerConfig.interBrokerProtocolVersion = parseMetadataVersion('2.2')!;
    try {
      const join = (groupInstanceId: string | null) => call(11, 5, { ...joinBody('static-old', 5), groupInstanceId });
      expect((await join('i1')).errorCode).toBe(E.UNSUPPORTED_VERSION);
      expect(
        (
          await call(14, 3, {
            groupId: 'static-old',
            generationId: 1,
            memberId: 'm',
            groupInstanceId: 'i1',
            protocolType: null,
            protocolName: null,
            assignments: [],
          })
        ).errorCode,
      ).toBe(E.UNSUPPORTED_VERSION);
      expect((await call(12, 3, { groupId: 'static-old', generationId: 1, memberId: 'm', groupInstanceId: 'i1' })).errorCode).toBe(E.UNSUPPORTED_VERSION);
      const commit = await call(8, 7, {
        groupId: 'static-old',
        generationIdOrMemberEpoch: 1,
        memberId: 'm',
        groupInstanceId: 'i1',
        retentionTimeMs: -1n,
        topics: [
          { name: 't', partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: null }] },
        ],
      });
      expect(commit.topics[0]!.partitions[0]!.errorCode).toBe(E.UNSUPPORTED_VERSION);
      // dynamic members are unaffected
      expect((await join(null)).errorCode).toBe(E.MEMBER_ID_REQUIRED);
      // from 2.3 on static members join
      brokerConfig.interBrokerProtocolVersion = parseMetadataVersion('2.3')!;
      expect((await join('i1')).errorCode).toBe(E.NONE);
    } finally {
      delete brokerConfig.interBrokerProtocolVersion;
    }
  });
});
