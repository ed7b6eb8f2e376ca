import { pino } from 'pino';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ErrorCode, LeaderAndIsrType, topicPartitionKey, type LeaderAndIsrRequest, type TopicPartition } from '@samsa/protocol';
import type { Log } from '@samsa/storage';
import { makeTempDir } from '@samsa/storage/testing';
import { testReplicaManagerOptions, testTopicSettings } from './test-replica-manager.js';
import { ReplicaManager } from './replica-manager.js';
import { STOP_REPLICA_PER_PARTITION_INFO_LIMIT } from './leader-and-isr.js';

const settings = testTopicSettings(1);

let dir: string;
let cleanup: () => Promise<void>;
const managers: ReplicaManager[] = [];
const logs: Log[] = [];

beforeEach(async () => {
  ({ dir, cleanup } = await makeTempDir('samsa-rm-lai-'));
});
afterEach(async () => {
  for (const rm of managers.splice(0)) await rm.shutdown();
  for (const l of logs.splice(0)) if (!l.isClosed) await l.close();
  await cleanup();
});

/** A replica manager whose log creation waits for `gate` and records how many run at once (overall and per partition). */
function gatedManager(gate: Promise<void>) {
  const base = testReplicaManagerOptions(dir, logs, settings, (t) => t === 't');
  const stats = { inFlight: 0, most: 0, perPartition: new Map<string, number>(), mostPerPartition: 0 };
  const rm = new ReplicaManager({
    ...base,
    logs: {
      ...base.logs,
      getOrCreateLog: async (tp: TopicPartition, config, topicId) => {
        const k = topicPartitionKey(tp);
        stats.inFlight++;
        stats.most = Math.max(stats.most, stats.inFlight);
        stats.perPartition.set(k, (stats.perPartition.get(k) ?? 0) + 1);
        stats.mostPerPartition = Math.max(stats.mostPerPartition, stats.perPartition.get(k)!);
        await gate;
        try {
          return await base.logs.getOrCreateLog(tp, config, topicId);
        } finally {
          stats.inFlight--;
          stats.perPartition.set(k, stats.perPartition.get(k)! - 1);
        }
      },
    },
  });
  managers.push(rm);
  return { rm, stats };
}

/** Yields to the event loop until `cond` holds (fails the test after 5 s). */
async function untilTrue(cond: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((r) => setImmediate(r));
  }
}

const request = (partitions: number, leaderEpoch = 0): LeaderAndIsrRequest => ({
  controllerId: 1,
  controllerEpoch: 1,
  brokerEpoch: 1n,
  type: LeaderAndIsrType.FULL,
  partitionStates: Array.from({ length: partitions }, (_, partition) => ({
    topic: 't',
    topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
    partition,
    controllerEpoch: 1,
    leader: 0,
    leaderEpoch,
    isr: [0],
    zkVersion: 0,
    replicas: [0],
    addingReplicas: [],
    removingReplicas: [],
    isNew: true,
    offlineReplicas: [],
    leaderRecoveryState: 0,
  })),
  liveLeaders: [],
});

it('replica manager – a LeaderAndIsr applies its partitions 32 at a time', async () => {
  let open!: () => void;
  const { rm, stats } = gatedManager(new Promise<void>((r) => (open = r)));
  const applied = rm.becomeLeaderOrFollower(request(100));
  await untilTrue(() => stats.inFlight === 32);
  // more turns of the event loop start no more than the limit
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  expect(stats.inFlight).toBe(32);
  open();
  const r = await applied;
  expect(r.partitionErrors.filter((e) => e.errorCode === ErrorCode.NONE)).toHaveLength(100);
  expect(stats.most).toBe(32);
});

it('replica manager – a LeaderAndIsr resent while the first is applied waits for it: a partition is never applied twice at once', async () => {
  let open!: () => void;
  const { rm, stats } = gatedManager(new Promise<void>((r) => (open = r)));
  // the controller timed out waiting and sent the same request again on a new connection
  const first = rm.becomeLeaderOrFollower(request(8, 3));
  const again = rm.becomeLeaderOrFollower(request(8, 3));
  await untilTrue(() => stats.inFlight === 8);
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  expect(stats.inFlight).toBe(8);
  open();
  const [a, b] = await Promise.all([first, again]);
  expect(stats.mostPerPartition).toBe(1);
  expect(a.partitionErrors.map((e) => e.errorCode)).toEqual(Array(8).fill(ErrorCode.NONE));
  expect(b.partitionErrors.every((e) => e.errorCode !== ErrorCode.KAFKA_STORAGE_ERROR)).toBe(true);
  expect(rm.getPartition('t', 7)?.leaderEpoch).toBe(3);
});

it('replica manager – a LeaderAndIsr answers its partitions in request order, refused ones included, each leader epoch in memory at once', async () => {
  const { rm } = gatedManager(Promise.resolve());
  const req = request(6, 2);
  // partition 3 is assigned elsewhere: refused without touching its log
  req.partitionStates[3] = { ...req.partitionStates[3]!, replicas: [1], isr: [1], leader: 1 };
  const r = await rm.becomeLeaderOrFollower(req);
  expect(r.partitionErrors.map((e) => [e.partition, e.errorCode])).toEqual([
    [0, ErrorCode.NONE],
    [1, ErrorCode.NONE],
    [2, ErrorCode.NONE],
    [3, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
    [4, ErrorCode.NONE],
    [5, ErrorCode.NONE],
  ]);
  for (const p of [0, 1, 2, 4, 5]) expect(rm.getPartition('t', p)?.log?.epochs.latestEntry).toEqual({ epoch: 2, startOffset: 0n });
  expect(rm.getPartition('t', 3)).toBeUndefined();
});

it('replica manager – StopReplica logs a line per partition for a small request and one summary line for a large one', async () => {
  const lines: Array<Record<string, unknown>> = [];
  const captured = pino({ level: 'info' }, { write: (l: string) => lines.push(JSON.parse(l) as Record<string, unknown>) });
  const rm = new ReplicaManager({ ...testReplicaManagerOptions(dir, logs, settings, (t) => t === 't'), stateChangeLogger: captured });
  managers.push(rm);
  const stop = (from: number, count: number) =>
    rm.stopReplicas({
      controllerId: 1,
      controllerEpoch: 1,
      brokerEpoch: 1n,
      partitions: Array.from({ length: count }, (_, i) => ({ topic: 't', partition: from + i, deletePartition: false, leaderEpoch: -1 })),
    });
  await stop(0, 3);
  expect(lines.filter((l) => l['msg'] === 'stopped replica')).toHaveLength(3);
  lines.length = 0;
  const r = await stop(3, STOP_REPLICA_PER_PARTITION_INFO_LIMIT + 1);
  expect(r.partitionErrors).toHaveLength(STOP_REPLICA_PER_PARTITION_INFO_LIMIT + 1);
  expect(lines.map((l) => l['msg'])).toEqual(['applied StopReplica request']);
  expect(lines[0]).toMatchObject({ partitions: STOP_REPLICA_PER_PARTITION_INFO_LIMIT + 1, stopped: STOP_REPLICA_PER_PARTITION_INFO_LIMIT + 1, errors: 0 });
});
