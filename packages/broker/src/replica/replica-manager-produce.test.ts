import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ErrorCode, LeaderAndIsrType, type ProduceRequestTopic, type ProduceResponseTopic } from '@samsa/protocol';
import type { Log } from '@samsa/storage';
import type { KafkaZk } from '@samsa/zk-paths';
import { batchOf, makeTempDir } from '@samsa/storage/testing';
import { AppendOrigin } from './produce-response.js';
import { testReplicaManagerOptions, testTopicSettings } from './test-replica-manager.js';
import { ReplicaManager, type ReplicaManagerOptions } from './replica-manager.js';

const settings = testTopicSettings(2);

let dir: string;
let cleanup: () => Promise<void>;
const managers: ReplicaManager[] = [];
const logs: Log[] = [];

beforeEach(async () => {
  ({ dir, cleanup } = await makeTempDir('samsa-rm-'));
});
afterEach(async () => {
  for (const rm of managers.splice(0)) await rm.shutdown();
  for (const l of logs.splice(0)) if (!l.isClosed) await l.close();
  await cleanup();
});

/** Broker 0 leading t-0..t-2 with follower 1 in the ISR: acks=all waits for broker 1's fetch. */
async function leaderOf3(extra: Partial<ReplicaManagerOptions> = {}, isr = [0, 1]): Promise<ReplicaManager> {
  const rm = new ReplicaManager({
    ...testReplicaManagerOptions(dir, logs, settings, (topic) => topic === 't' || topic === 'elsewhere'),
    ...extra,
  });
  managers.push(rm);
  const partitionStates = [0, 1, 2].map((partition) => ({
    topic: 't',
    topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
    partition,
    controllerEpoch: 1,
    leader: 0,
    leaderEpoch: 1,
    isr,
    zkVersion: 0,
    replicas: [0, 1],
    addingReplicas: [],
    removingReplicas: [],
    isNew: true,
    offlineReplicas: [],
    leaderRecoveryState: 0,
  }));
  const r = await rm.becomeLeaderOrFollower({
    controllerId: 0,
    controllerEpoch: 1,
    brokerEpoch: 1n,
    type: LeaderAndIsrType.FULL,
    partitionStates,
    liveLeaders: [],
  });
  expect(r.partitionErrors.map((e) => e.errorCode)).toEqual([0, 0, 0]);
  return rm;
}

/** 3 records for each partition, each in a buffer of its own (the leader stamps offsets into it). */
const request = (topic: string, partitions: number[]): ProduceRequestTopic[] => [
  { name: topic, partitionData: partitions.map((index) => ({ index, records: batchOf(3) })) },
];

function produce(rm: ReplicaManager, acks: number, entries: ProduceRequestTopic[], opts: { timeoutMs?: number; origin?: AppendOrigin } = {}) {
  let delayed = false;
  const answered = new Promise<ProduceResponseTopic[]>((resolve) =>
    rm.appendRecords(opts.timeoutMs ?? 30_000, acks, opts.origin ?? AppendOrigin.Client, 9, entries, resolve, () => (delayed = true)),
  );
  return { answered, delayed: () => delayed };
}

const codes = (r: ProduceResponseTopic[]) => r.flatMap((t) => t.partitionResponses.map((p) => p.errorCode));

describe('replica manager – produce path', () => {
  it('replica manager – a Produce request looks up its topic settings (min.insync.replicas) once, however many partitions it has', async () => {
    const rm = await leaderOf3();
    const cached = vi.spyOn(rm, 'cachedSettings');
    const loaded = vi.spyOn(rm, 'settingsFor');
    const acks1 = await produce(rm, 1, request('t', [0, 1, 2])).answered;
    expect(codes(acks1)).toEqual([0, 0, 0]);
    expect(cached.mock.calls.length + loaded.mock.calls.length).toBe(1);
    cached.mockClear();
    loaded.mockClear();
    const all = produce(rm, -1, request('t', [0, 1, 2]));
    await vi.waitFor(() => expect(all.delayed()).toBe(true));
    // the follower catches up on every partition: the high watermark passes the appends
    await rm.readForFollower(
      1,
      [0, 1, 2].map((partition) => ({ topic: 't', partition, fetchOffset: 6n, maxBytes: 1 << 20, currentLeaderEpoch: 1 })),
      1 << 20,
    );
    expect(codes(await all.answered)).toEqual([0, 0, 0]);
    expect(cached.mock.calls.length + loaded.mock.calls.length).toBe(1);
  });

  it('replica manager – a Produce request to several new logs runs their first-append work (partition.metadata) together, not one after the other', async () => {
    const rm = await leaderOf3();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const started: number[] = [];
    for (const log of logs) {
      log.beforeNextAppend(async () => {
        started.push(log.topicPartition.partition);
        await gate;
      });
    }
    const acks1 = produce(rm, 1, request('t', [0, 1, 2]));
    // appended one after the other, the second partition's work would wait for the first append
    await vi.waitFor(() => expect([...started].sort()).toEqual([0, 1, 2]));
    release();
    expect(codes(await acks1.answered)).toEqual([0, 0, 0]);
    expect(started).toHaveLength(3);
  });

  it('replica manager – a follower fetch that expands the ISR is answered without waiting for the ZooKeeper write', async () => {
    let written!: (zkVersion: number) => void;
    const write = new Promise<number>((r) => (written = r));
    const requested: number[][] = [];
    const kzk = {
      conditionalUpdatePartitionState: (_tp: unknown, state: { isr: number[] }) => {
        requested.push(state.isr);
        return write;
      },
    } as unknown as KafkaZk;
    const rm = await leaderOf3({ kzk }, [0]);
    await produce(rm, 1, request('t', [0])).answered;
    // broker 1 caught up: its fetch starts the expansion, and its answer comes while the write is pending
    const [r] = await rm.readForFollower(1, [{ topic: 't', partition: 0, fetchOffset: 3n, maxBytes: 1 << 20, currentLeaderEpoch: 1 }], 1 << 20);
    expect(r!.errorCode).toBe(ErrorCode.NONE);
    expect(requested).toEqual([[0, 1]]);
    expect(rm.getPartition('t', 0)!.isr).toEqual([0]);
    written(1);
    await vi.waitFor(() => expect(rm.getPartition('t', 0)!.isr).toEqual([0, 1]));
  });

  it('replica manager – a follower fetch reads no file for partitions at the log end, and errors stay per partition', async () => {
    const rm = await leaderOf3();
    await produce(rm, 1, request('t', [0])).answered;
    const reads = [0, 1, 2].map((partition) =>
      vi.spyOn(
        logs.find((l) => l.topicPartition.partition === partition)!,
        'read',
      ),
    );
    const results = await rm.readForFollower(
      1,
      [
        { topic: 't', partition: 0, fetchOffset: 0n, maxBytes: 1 << 20, currentLeaderEpoch: 1 },
        { topic: 't', partition: 1, fetchOffset: 0n, maxBytes: 1 << 20, currentLeaderEpoch: 1 },
        { topic: 't', partition: 2, fetchOffset: 0n, maxBytes: 1 << 20, currentLeaderEpoch: 0 },
      ],
      1 << 20,
    );
    expect(results.map((r) => [r.errorCode, r.data?.records.sizeInBytes ?? null])).toEqual([
      [ErrorCode.NONE, expect.any(Number)],
      [ErrorCode.NONE, 0],
      [ErrorCode.FENCED_LEADER_EPOCH, null],
    ]);
    expect(results[0]!.data!.records.sizeInBytes).toBeGreaterThan(0);
    // only t-0 has records past the follower's offset
    expect(reads.map((r) => r.mock.calls.length)).toEqual([1, 0, 0]);
  });

  it('replica manager – fetches of partitions led elsewhere or at another leader epoch get their error codes, the rest are read', async () => {
    const rm = await leaderOf3();
    await produce(rm, 1, request('t', [0, 1, 2])).answered;
    // t-1 moves to broker 1 (epoch 2); this broker follows it
    const moved = await rm.becomeLeaderOrFollower({
      controllerId: 0,
      controllerEpoch: 1,
      brokerEpoch: 1n,
      type: LeaderAndIsrType.INCREMENTAL,
      partitionStates: [
        {
          topic: 't',
          topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
          partition: 1,
          controllerEpoch: 1,
          leader: 1,
          leaderEpoch: 2,
          isr: [0, 1],
          zkVersion: 1,
          replicas: [0, 1],
          addingReplicas: [],
          removingReplicas: [],
          isNew: false,
          offlineReplicas: [],
          leaderRecoveryState: 0,
        },
      ],
      liveLeaders: [],
    });
    expect(moved.partitionErrors.map((e) => e.errorCode)).toEqual([0]);
    const entries = [
      { topic: 't', partition: 0, fetchOffset: 0n, maxBytes: 1 << 20, currentLeaderEpoch: 1 },
      { topic: 't', partition: 1, fetchOffset: 0n, maxBytes: 1 << 20, currentLeaderEpoch: 1 },
      { topic: 't', partition: 2, fetchOffset: 0n, maxBytes: 1 << 20, currentLeaderEpoch: 5 },
    ];
    const expected = [ErrorCode.NONE, ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.UNKNOWN_LEADER_EPOCH];
    const followers = await rm.readForFollower(1, entries, 1 << 20);
    expect(followers.map((r) => r.errorCode)).toEqual(expected);
    expect(followers.map((r) => r.data === undefined)).toEqual([false, true, true]);
    const consumers = await rm.readFromLocalLogs(entries, 1 << 20);
    expect(consumers.map((r) => r.errorCode)).toEqual(expected);
    expect(consumers.map((r) => r.data === undefined)).toEqual([false, true, true]);
  });

  it('replica manager – a consumer fetch of a partition not hosted here: NOT_LEADER_OR_FOLLOWER for a known topic, UNKNOWN_TOPIC_OR_PARTITION otherwise', async () => {
    const rm = await leaderOf3();
    const results = await rm.readFromLocalLogs(
      [
        { topic: 'elsewhere', partition: 0, fetchOffset: 0n, maxBytes: 1 << 20, currentLeaderEpoch: -1 },
        { topic: 'nowhere', partition: 0, fetchOffset: 0n, maxBytes: 1 << 20, currentLeaderEpoch: -1 },
      ],
      1 << 20,
    );
    expect(results.map((r) => r.errorCode)).toEqual([ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]);
  });

  it('replica manager – acks=all answers only once the high watermark covers the append, with the base offset', async () => {
    const rm = await leaderOf3();
    await produce(rm, 1, request('t', [0])).answered;
    let answered = false;
    const p = produce(rm, -1, request('t', [0]));
    void p.answered.then(() => (answered = true));
    await vi.waitFor(() => expect(p.delayed()).toBe(true));
    // broker 1 has fetched only the first batch: offsets 0..2, not the second append (3..5)
    await rm.readForFollower(1, [{ topic: 't', partition: 0, fetchOffset: 3n, maxBytes: 1 << 20, currentLeaderEpoch: 1 }], 1 << 20);
    expect(rm.getPartition('t', 0)!.highWatermark).toBe(3n);
    expect(answered).toBe(false);
    await rm.readForFollower(1, [{ topic: 't', partition: 0, fetchOffset: 6n, maxBytes: 1 << 20, currentLeaderEpoch: 1 }], 1 << 20);
    const [t] = await p.answered;
    expect(t!.partitionResponses[0]).toMatchObject({ errorCode: 0, baseOffset: 3n });
  });

  it('replica manager – an acks=all append the followers never fetch answers REQUEST_TIMED_OUT without an offset', async () => {
    const rm = await leaderOf3();
    const [t] = await produce(rm, -1, request('t', [1]), { timeoutMs: 50 }).answered;
    expect(t!.partitionResponses[0]).toMatchObject({ errorCode: ErrorCode.REQUEST_TIMED_OUT, baseOffset: -1n });
  });

  it('replica manager – the test-only unsafe ack answers acks=all at the leader append, chosen at construction', async () => {
    const rm = await leaderOf3({ unsafeAckBeforeHighWatermark: true });
    const p = produce(rm, -1, request('t', [0]));
    expect(codes(await p.answered)).toEqual([0]);
    expect(p.delayed()).toBe(false);
    expect(rm.getPartition('t', 0)!.highWatermark).toBe(0n);
  });

  it("replica manager – bad requests get Kafka's error codes per partition, in the request's order", async () => {
    const rm = await leaderOf3();
    expect(codes(await produce(rm, 2, request('t', [0, 1])).answered)).toEqual([ErrorCode.INVALID_REQUIRED_ACKS, ErrorCode.INVALID_REQUIRED_ACKS]);
    const corrupt = batchOf(2);
    corrupt.writeUInt8(corrupt[corrupt.length - 1]! ^ 0xff, corrupt.length - 1);
    const mixed = await produce(rm, 1, [
      { name: '__consumer_offsets', partitionData: [{ index: 0, records: batchOf(1) }] },
      {
        name: 't',
        partitionData: [
          { index: 2, records: corrupt },
          { index: 0, records: batchOf(1) },
          { index: 7, records: batchOf(1) },
        ],
      },
      { name: 'elsewhere', partitionData: [{ index: 0, records: batchOf(1) }] },
      { name: 'nowhere', partitionData: [{ index: 0, records: batchOf(1) }] },
    ]).answered;
    expect(codes(mixed)).toEqual([
      ErrorCode.INVALID_TOPIC_EXCEPTION,
      ErrorCode.CORRUPT_MESSAGE,
      ErrorCode.NONE,
      ErrorCode.NOT_LEADER_OR_FOLLOWER,
      ErrorCode.NOT_LEADER_OR_FOLLOWER,
      ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    ]);
    expect(mixed.map((t) => t.name)).toEqual(['__consumer_offsets', 't', 'elsewhere', 'nowhere']);
  });

  it('replica manager – min.insync.replicas above the ISR refuses acks=all before writing (NOT_ENOUGH_REPLICAS)', async () => {
    const rm = await leaderOf3({ topicSettings: async () => ({ ...settings, minInsyncReplicas: 3 }) });
    expect(codes(await produce(rm, -1, request('t', [0])).answered)).toEqual([ErrorCode.NOT_ENOUGH_REPLICAS]);
    expect(rm.getPartition('t', 0)!.log!.logEndOffset).toBe(0n);
    // acks=1 does not look at the ISR
    expect(codes(await produce(rm, 1, request('t', [0])).answered)).toEqual([ErrorCode.NONE]);
  });
});
