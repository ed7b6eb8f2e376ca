import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode, KafkaError, type ApiRequestMap } from '@samsa/protocol';
import { Admin } from './admin.js';
import { decodeConsumerAssignment, decodeConsumerSubscription, encodeConsumerAssignment, encodeConsumerSubscription } from './consumer-protocol.js';
import { BatchError } from './errors.js';
import { FakeCluster } from './testing/fake-cluster.js';

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function setup(): Promise<{ fc: FakeCluster; admin: Admin }> {
  const fc = await FakeCluster.start({ brokers: 3 });
  cleanup.push(() => fc.close());
  const admin = new Admin({ bootstrapServers: fc.bootstrapServers, retryBackoffMs: 10, retryBackoffMaxMs: 50, defaultApiTimeoutMs: 5_000 });
  cleanup.push(() => admin.close());
  return { fc, admin };
}

/** Every broker names broker `id` as the coordinator of every group. */
function coordinatorIs(fc: FakeCluster, id: number): void {
  const b = fc.broker(id);
  for (const x of fc.brokers) {
    x.on(10, (req, ctx) =>
      ctx.version >= 4
        ? {
            throttleTimeMs: 0,
            errorCode: 0,
            errorMessage: null,
            nodeId: 0,
            host: '',
            port: 0,
            coordinators: req.coordinatorKeys.map((key) => ({ key, nodeId: id, host: b.host, port: b.port, errorCode: 0, errorMessage: null })),
          }
        : { throttleTimeMs: 0, errorCode: 0, errorMessage: null, nodeId: id, host: b.host, port: b.port, coordinators: [] },
    );
  }
}

describe('consumer protocol', () => {
  it('consumer protocol – subscription and assignment round-trip; later versions’ trailing fields are ignored; empty assignment', () => {
    expect(decodeConsumerSubscription(encodeConsumerSubscription(['a', 'b'], Buffer.from('u')))).toEqual({
      version: 0,
      topics: ['a', 'b'],
      userData: Buffer.from('u'),
    });
    const bytes = encodeConsumerAssignment([
      { topic: 'z', partitions: [3, 1] },
      { topic: 'a', partitions: [0] },
    ]);
    // a v1+ assignment carries more after user data: still readable
    const v1 = Buffer.concat([bytes, Buffer.from([0, 0, 0, 0])]);
    v1.writeInt16BE(1, 0);
    expect(decodeConsumerAssignment(v1)).toEqual({
      version: 1,
      partitions: [
        { topic: 'a', partitions: [0] },
        { topic: 'z', partitions: [1, 3] },
      ],
      userData: null,
    });
    expect(decodeConsumerAssignment(Buffer.alloc(0)).partitions).toEqual([]);
    expect(() => decodeConsumerAssignment(Buffer.from([0, 0, 0, 0, 0, 1]))).toThrow();
  });
});

describe('Admin: consumer groups', () => {
  it('Admin groups – describeGroups finds the coordinator again after NOT_COORDINATOR and decodes member assignments', async () => {
    const { fc, admin } = await setup();
    coordinatorIs(fc, 2);
    let calls = 0;
    fc.broker(2).on(15, (req) => ({
      throttleTimeMs: 0,
      groups: req.groups.map((groupId) => ({
        errorCode: ++calls === 1 ? ErrorCode.NOT_COORDINATOR : 0,
        groupId,
        groupState: 'Stable',
        protocolType: 'consumer',
        protocolData: 'range',
        members: [
          {
            memberId: 'm-1',
            groupInstanceId: null,
            clientId: 'c',
            clientHost: '/127.0.0.1',
            memberMetadata: encodeConsumerSubscription(['t']),
            memberAssignment: encodeConsumerAssignment([{ topic: 't', partitions: [2, 0] }]),
          },
        ],
        authorizedOperations: -2147483648,
      })),
    }));
    const [g] = await admin.describeGroups(['g']);
    expect(calls).toBe(2);
    expect(g).toMatchObject({
      groupId: 'g',
      state: 'Stable',
      partitionAssignor: 'range',
      isSimpleConsumerGroup: false,
      coordinator: { nodeId: 2, port: fc.broker(2).port },
    });
    expect(g!.members).toEqual([
      { memberId: 'm-1', groupInstanceId: null, clientId: 'c', host: '/127.0.0.1', assignment: [{ topic: 't', partitions: [0, 2] }], subscription: ['t'] },
    ]);
  });

  it('Admin groups – listGroups asks every broker and merges; a states filter needs ListGroups v4', async () => {
    const { fc, admin } = await setup();
    for (const b of fc.brokers) {
      b.on(16, () => ({
        throttleTimeMs: 0,
        errorCode: 0,
        groups: [{ groupId: `g${2 - b.nodeId}`, protocolType: b.nodeId === 0 ? '' : 'consumer', groupState: 'Empty', groupType: 'classic' }],
      }));
    }
    const all = await admin.listGroups();
    expect(all).toEqual([
      { groupId: 'g0', protocolType: 'consumer', state: 'Empty' },
      { groupId: 'g1', protocolType: 'consumer', state: 'Empty' },
      { groupId: 'g2', protocolType: '', state: 'Empty' },
    ]);
    await admin.listGroups({ states: ['Empty'] });
    const last = fc.broker(1).requestsFor(16).at(-1)!;
    expect(last.version).toBeGreaterThanOrEqual(4);
    expect((last.body as ApiRequestMap[16]).statesFilter).toEqual(['Empty']);
  });

  it('Admin groups – alterGroupOffsets commits with generation -1 and no member id; per-partition errors as BatchError', async () => {
    const { fc, admin } = await setup();
    coordinatorIs(fc, 1);
    fc.broker(1).on(8, (req) => ({
      throttleTimeMs: 0,
      topics: req.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: p.partitionIndex === 1 ? ErrorCode.UNKNOWN_MEMBER_ID : 0 })),
      })),
    }));
    await admin.alterGroupOffsets('g', [{ topic: 't', partition: 0, offset: 5n }]);
    const sent = fc.broker(1).requestsFor(8)[0]!;
    expect(sent.version).toBeGreaterThanOrEqual(2);
    expect(sent.body).toMatchObject({
      groupId: 'g',
      generationIdOrMemberEpoch: -1,
      memberId: '',
      topics: [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: 5n }] }],
    });
    const err = await admin
      .alterGroupOffsets('g', [
        { topic: 't', partition: 0, offset: 1n },
        { topic: 't', partition: 1, offset: 1n },
      ])
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BatchError);
    expect([...(err as BatchError).errors].map(([k, e]) => [k, e.errorName])).toEqual([['t-1', 'UNKNOWN_MEMBER_ID']]);
  });

  it('Admin groups – deleteGroupOffsets: group errors reject, partition errors are results; deleteGroups collects failures', async () => {
    const { fc, admin } = await setup();
    coordinatorIs(fc, 0);
    fc.broker(0).on(47, (req) =>
      req.groupId === 'missing'
        ? { errorCode: ErrorCode.GROUP_ID_NOT_FOUND, throttleTimeMs: 0, topics: [] }
        : {
            errorCode: 0,
            throttleTimeMs: 0,
            topics: req.topics.map((t) => ({
              name: t.name,
              partitions: t.partitions.map((p) => ({
                partitionIndex: p.partitionIndex,
                errorCode: t.name === 'sub' ? ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC : 0,
              })),
            })),
          },
    );
    const r = await admin.deleteGroupOffsets('g', [
      { topic: 'sub', partition: 0 },
      { topic: 'free', partition: 1 },
      { topic: 'free', partition: 0 },
    ]);
    expect(r.map((x) => [x.topic, x.partition, x.error?.errorName ?? null])).toEqual([
      ['free', 0, null],
      ['free', 1, null],
      ['sub', 0, 'GROUP_SUBSCRIBED_TO_TOPIC'],
    ]);
    const e = await admin.deleteGroupOffsets('missing', [{ topic: 't', partition: 0 }]).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(KafkaError);
    expect((e as KafkaError).errorName).toBe('GROUP_ID_NOT_FOUND');
    fc.broker(0).on(42, (req) => ({
      throttleTimeMs: 0,
      results: req.groupNames.map((groupId) => ({ groupId, errorCode: groupId === 'busy' ? ErrorCode.NON_EMPTY_GROUP : 0 })),
    }));
    const d = await admin.deleteGroups(['ok', 'busy']).catch((x: unknown) => x);
    expect((d as BatchError).succeeded).toEqual(['ok']);
    expect((d as BatchError).errorFor('busy')!.errorName).toBe('NON_EMPTY_GROUP');
  });

  it('Admin groups – listOffsets asks each partition leader (earliest -2, latest -1, timestamps) and retries NOT_LEADER_OR_FOLLOWER', async () => {
    const { fc, admin } = await setup();
    fc.addTopic('t', [[0], [1], [2]]);
    let refused = false;
    for (const b of fc.brokers) {
      b.on(2, (req) => ({
        throttleTimeMs: 0,
        topics: req.topics.map((t) => ({
          name: t.name,
          partitions: t.partitions.map((p) => {
            const notLeader = b.nodeId === 1 && !refused;
            if (notLeader) refused = true;
            const offset = p.timestamp === -2n ? 10n : p.timestamp === -1n ? 100n : p.timestamp / 1000n;
            return {
              partitionIndex: p.partitionIndex,
              errorCode: notLeader ? ErrorCode.NOT_LEADER_OR_FOLLOWER : 0,
              oldStyleOffsets: [],
              timestamp: -1n,
              offset: offset + BigInt(b.nodeId),
              leaderEpoch: 0,
            };
          }),
        })),
      }));
    }
    const r = await admin.listOffsets([
      { topic: 't', partition: 0, spec: 'earliest' },
      { topic: 't', partition: 1, spec: 'latest' },
      { topic: 't', partition: 2, spec: { timestamp: 5000 } },
    ]);
    expect(r.map((x) => [x.partition, x.offset])).toEqual([
      [0, 10n],
      [1, 101n],
      [2, 7n],
    ]);
    expect(refused).toBe(true);
    const bad = await admin.listOffsets([{ topic: 't', partition: 9, spec: 'latest' }]).catch((x: unknown) => x);
    expect((bad as BatchError).errorFor('t-9')!.errorName).toBe('UNKNOWN_TOPIC_OR_PARTITION');
  });
});
