import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode, type ApiRequestMap, type DescribeProducersResponseProducerState } from '@samsa/protocol';
import { Admin } from './admin.js';
import { BatchError } from './errors.js';
import { FakeCluster } from './testing/fake-cluster.js';

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function setup(): Promise<{ fc: FakeCluster; admin: Admin }> {
  const fc = await FakeCluster.start({ brokers: 3 });
  cleanup.push(() => fc.close());
  const admin = new Admin({ bootstrapServers: fc.bootstrapServers, retryBackoffMs: 10, retryBackoffMaxMs: 50, defaultApiTimeoutMs: 3_000 });
  cleanup.push(() => admin.close());
  return { fc, admin };
}

const producer = (over: Partial<DescribeProducersResponseProducerState> = {}): DescribeProducersResponseProducerState => ({
  producerId: 5n,
  producerEpoch: 1,
  lastSequence: 9,
  lastTimestamp: 1_000n,
  coordinatorEpoch: -1,
  currentTxnStartOffset: -1n,
  ...over,
});

describe('Admin: transactions', () => {
  it('Admin transactions – describeTransactions asks FindCoordinator with key type 1, finds it again after NOT_COORDINATOR; no start time is null, an unknown id TRANSACTIONAL_ID_NOT_FOUND', async () => {
    const { fc, admin } = await setup();
    const keyTypes: number[] = [];
    let coordinator = 1;
    for (const b of fc.brokers) {
      b.on(10, (req) => {
        keyTypes.push(req.keyType);
        const c = fc.broker(coordinator);
        return {
          throttleTimeMs: 0,
          errorCode: 0,
          errorMessage: null,
          nodeId: 0,
          host: '',
          port: 0,
          coordinators: req.coordinatorKeys.map((key) => ({ key, nodeId: coordinator, host: c.host, port: c.port, errorCode: 0, errorMessage: null })),
        };
      });
    }
    fc.broker(1).on(65, () => {
      coordinator = 2; // it moved
      return { throttleTimeMs: 0, transactionStates: [{ ...emptyState('t1'), errorCode: ErrorCode.NOT_COORDINATOR }] };
    });
    fc.broker(2).on(65, (req) => ({
      throttleTimeMs: 0,
      transactionStates: req.transactionalIds.map((id) =>
        id === 't1'
          ? {
              ...emptyState(id),
              transactionState: 'Ongoing',
              transactionTimeoutMs: 60_000,
              transactionStartTimeMs: 1_234n,
              producerId: 7n,
              producerEpoch: 3,
              topics: [
                { topic: 'b', partitions: [2, 0] },
                { topic: 'a', partitions: [1] },
              ],
            }
          : { ...emptyState(id), errorCode: ErrorCode.TRANSACTIONAL_ID_NOT_FOUND },
      ),
    }));
    const [d] = await admin.describeTransactions(['t1']);
    expect(d).toEqual({
      transactionalId: 't1',
      coordinatorId: 2,
      state: 'Ongoing',
      producerId: 7n,
      producerEpoch: 3,
      transactionTimeoutMs: 60_000,
      transactionStartTimeMs: 1_234n,
      topicPartitions: [
        { topic: 'a', partition: 1 },
        { topic: 'b', partition: 0 },
        { topic: 'b', partition: 2 },
      ],
    });
    expect(new Set(keyTypes)).toEqual(new Set([1]));
    const err = await admin.describeTransactions(['t1', 'nope']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BatchError);
    expect((err as BatchError).errors.get('nope')?.errorName).toBe('TRANSACTIONAL_ID_NOT_FOUND');
    expect((err as BatchError).succeeded).toEqual(['t1']);
  });

  it('Admin transactions – listTransactions asks every broker with the filters and names the coordinator of each listing', async () => {
    const { fc, admin } = await setup();
    const seen: ApiRequestMap[66][] = [];
    for (const b of fc.brokers) {
      b.on(66, (req, ctx) => {
        seen.push(req);
        const id = ctx.broker.nodeId;
        return {
          throttleTimeMs: 0,
          errorCode: 0,
          unknownStateFilters: [],
          transactionStates: id === 1 ? [] : [{ transactionalId: `tx-${id}`, producerId: BigInt(100 + id), transactionState: 'Ongoing' }],
        };
      });
    }
    expect(await admin.listTransactions({ states: ['Ongoing'], producerIds: [100n, 102n] })).toEqual([
      { transactionalId: 'tx-0', producerId: 100n, state: 'Ongoing', coordinatorId: 0 },
      { transactionalId: 'tx-2', producerId: 102n, state: 'Ongoing', coordinatorId: 2 },
    ]);
    expect(seen).toHaveLength(3);
    expect(seen[0]).toMatchObject({ stateFilters: ['Ongoing'], producerIdFilters: [100n, 102n] });
  });

  it('Admin transactions – describeProducers goes to each leader (again after NOT_LEADER_OR_FOLLOWER) or to the broker asked, where NOT_LEADER_OR_FOLLOWER is final', async () => {
    const { fc, admin } = await setup();
    fc.addTopic('t', [
      [0, 1],
      [1, 0],
    ]);
    let moved = false;
    fc.broker(0).on(61, (req) => ({
      throttleTimeMs: 0,
      topics: req.topics.map((t) => ({
        name: t.name,
        partitions: t.partitionIndexes.map((p) =>
          p === 0 && !moved
            ? { partitionIndex: p, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, errorMessage: null, activeProducers: [] }
            : { partitionIndex: p, errorCode: 0, errorMessage: null, activeProducers: [producer({ coordinatorEpoch: 4, currentTxnStartOffset: 42n })] },
        ),
      })),
    }));
    fc.broker(1).on(61, (req) => {
      moved = true;
      return {
        throttleTimeMs: 0,
        topics: req.topics.map((t) => ({
          name: t.name,
          partitions: t.partitionIndexes.map((p) => ({ partitionIndex: p, errorCode: 0, errorMessage: null, activeProducers: [producer()] })),
        })),
      };
    });
    const r = await admin.describeProducers([
      { topic: 't', partition: 0 },
      { topic: 't', partition: 1 },
    ]);
    expect(r).toEqual([
      {
        topic: 't',
        partition: 0,
        activeProducers: [
          { producerId: 5n, producerEpoch: 1, lastSequence: 9, lastTimestamp: 1_000n, coordinatorEpoch: 4, currentTransactionStartOffset: 42n },
        ],
      },
      {
        topic: 't',
        partition: 1,
        activeProducers: [
          { producerId: 5n, producerEpoch: 1, lastSequence: 9, lastTimestamp: 1_000n, coordinatorEpoch: null, currentTransactionStartOffset: null },
        ],
      },
    ]);
    expect(fc.broker(0).requestsFor(61).length).toBe(2);

    // a broker named by the caller: its NOT_LEADER_OR_FOLLOWER ends the operation at once
    fc.broker(2).on(61, (req) => ({
      throttleTimeMs: 0,
      topics: req.topics.map((t) => ({
        name: t.name,
        partitions: t.partitionIndexes.map((p) => ({
          partitionIndex: p,
          errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER,
          errorMessage: null,
          activeProducers: [],
        })),
      })),
    }));
    const err = await admin.describeProducers([{ topic: 't', partition: 0 }], { brokerId: 2 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BatchError);
    expect((err as BatchError).errors.get('t-0')?.message).toBe('Failed to describe active producers for partition t-0 on brokerId 2');
    expect(fc.broker(2).requestsFor(61).length).toBe(1);
    // a partition the cluster does not have
    const unknown = await admin.describeProducers([{ topic: 't', partition: 7 }]).catch((e: unknown) => e);
    expect((unknown as BatchError).errors.get('t-7')?.errorName).toBe('UNKNOWN_TOPIC_OR_PARTITION');
  });

  it('Admin transactions – abortTransaction sends an ABORT marker with the spec to the partition leader; a fenced coordinator epoch rejects', async () => {
    const { fc, admin } = await setup();
    fc.addTopic('t', [[2, 0]]);
    let code: number = ErrorCode.NONE;
    fc.broker(2).on(27, (req) => ({
      markers: req.markers.map((m) => ({
        producerId: m.producerId,
        topics: m.topics.map((t) => ({ name: t.name, partitions: t.partitionIndexes.map((partitionIndex) => ({ partitionIndex, errorCode: code })) })),
      })),
    }));
    await admin.abortTransaction({ topic: 't', partition: 0, producerId: 9n, producerEpoch: 2, coordinatorEpoch: 0 });
    const [sent] = fc.broker(2).requestsFor(27);
    expect(sent!.body).toMatchObject({
      markers: [{ producerId: 9n, producerEpoch: 2, transactionResult: false, coordinatorEpoch: 0, topics: [{ name: 't', partitionIndexes: [0] }] }],
    });
    code = ErrorCode.TRANSACTION_COORDINATOR_FENCED;
    await expect(admin.abortTransaction({ topic: 't', partition: 0, producerId: 9n, producerEpoch: 2, coordinatorEpoch: 0 })).rejects.toMatchObject({
      errorName: 'TRANSACTION_COORDINATOR_FENCED',
    });
  });
});

function emptyState(transactionalId: string) {
  return {
    errorCode: 0,
    transactionalId,
    transactionState: '',
    transactionTimeoutMs: 0,
    transactionStartTimeMs: -1n,
    producerId: -1n,
    producerEpoch: -1,
    topics: [] as Array<{ topic: string; partitions: number[] }>,
  };
}
