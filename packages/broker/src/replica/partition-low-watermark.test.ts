import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { PartitionState } from '@samsa/protocol';
import type { Log } from '@samsa/storage';
import { Partition } from './partition.js';

/** Just what a leading Partition reads of its log. */
function fakeLog(logStartOffset: bigint, logEndOffset: bigint): Log {
  let hw = 0n;
  return {
    logStartOffset,
    logEndOffset,
    get highWatermark() {
      return hw;
    },
    updateHighWatermark: (v: bigint) => void (hw = v),
    assignLeaderEpochStart: () => undefined,
  } as unknown as Log;
}

const state = (replicas: number[]): PartitionState => ({
  topic: 't',
  topicId: 'x',
  partition: 0,
  controllerEpoch: 1,
  leader: 0,
  leaderEpoch: 3,
  isr: replicas,
  zkVersion: 1,
  replicas,
  addingReplicas: [],
  removingReplicas: [],
  isNew: false,
  offlineReplicas: [],
  leaderRecoveryState: 0,
});

describe('partition low watermark', () => {
  it("partition – the DeleteRecords low watermark is the smallest log start offset over the leader and followers on live brokers (Kafka's lowWatermarkIfLeader)", async () => {
    const alive = new Set([0, 1, 2]);
    const p = new Partition('t', 0, 0, pino({ level: 'silent' }), {
      replicaLagTimeMaxMs: 30_000,
      writeIsr: async () => ({ ok: true }) as never,
      isBrokerAlive: (id) => alive.has(id),
    });
    await p.makeLeader(state([0, 1, 2]), fakeLog(100n, 200n));
    // followers that have not fetched yet (log start unknown) do not hold it back
    expect(p.lowWatermark).toBe(100n);
    await p.updateFollowerFetchState(1, 200n, 200n, Date.now(), 40n);
    await p.updateFollowerFetchState(2, 200n, 200n, Date.now(), 70n);
    expect(p.lowWatermark).toBe(40n);
    // broker 1 dies: its stale log start no longer counts
    alive.delete(1);
    expect(p.lowWatermark).toBe(70n);
    alive.delete(2);
    expect(p.lowWatermark).toBe(100n);
    alive.add(1);
    expect(p.lowWatermark).toBe(40n);
    await p.makeFollower({ ...state([0, 1, 2]), leader: 1, leaderEpoch: 4 }, fakeLog(100n, 200n));
    expect(p.lowWatermark).toBe(-1n);
  });
});
