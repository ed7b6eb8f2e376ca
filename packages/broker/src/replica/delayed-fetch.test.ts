import { describe, expect, it } from 'vitest';
import { DelayedFetch, type FetchPartitionStatus } from './delayed-fetch.js';
import type { Partition } from './partition.js';

/** The parts of a Partition a delayed fetch reads: leadership, leader epoch, the log's ends. */
function leading(leaderEpoch: number, logEndOffset = 10n): Partition {
  return { isLeader: true, leaderEpoch, log: { logEndOffset, lastStableOffset: logEndOffset }, highWatermark: logEndOffset } as unknown as Partition;
}

/** A follower's fetch of `partitions`, caught up (fetch offset = log end), naming `epoch` for each. */
function followerFetch(partitions: Partition[], epoch: number) {
  let answered = 0;
  const statuses: FetchPartitionStatus[] = partitions.map((partition) => ({ partition, fetchOffset: 10n, leaderEpoch: epoch }));
  const op = new DelayedFetch(500, 1, true, statuses, () => answered++);
  return { op, answered: () => answered };
}

describe('delayed fetch', () => {
  it('delayed fetch – a caught-up follower fetch waits while nothing changes', () => {
    const { op, answered } = followerFetch([leading(3), leading(3)], 3);
    expect(op.tryComplete()).toBe(false);
    expect(answered()).toBe(0);
  });

  it('delayed fetch – completes once a partition leader epoch is not the one the fetch named (fenced), though this broker still leads', () => {
    const partitions = [leading(3), leading(3)];
    const { op, answered } = followerFetch(partitions, 3);
    (partitions[1] as { leaderEpoch: number }).leaderEpoch = 4;
    expect(op.tryComplete()).toBe(true);
    expect(answered()).toBe(1);
  });

  it('delayed fetch – a fetch without a leader epoch (-1) is not completed by an epoch change', () => {
    const partitions = [leading(3)];
    const { op } = followerFetch(partitions, -1);
    (partitions[0] as { leaderEpoch: number }).leaderEpoch = 4;
    expect(op.tryComplete()).toBe(false);
  });

  it('delayed fetch – completes when this broker stops leading a partition', () => {
    const partitions = [leading(3), leading(3)];
    const { op } = followerFetch(partitions, 3);
    (partitions[0] as { isLeader: boolean }).isLeader = false;
    expect(op.tryComplete()).toBe(true);
  });

  it('delayed fetch – new data past the fetch offset completes it', () => {
    const partitions = [leading(3)];
    const { op } = followerFetch(partitions, 3);
    (partitions[0] as unknown as { log: { logEndOffset: bigint } }).log.logEndOffset = 11n;
    expect(op.tryComplete()).toBe(true);
  });
});
