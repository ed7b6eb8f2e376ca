import { describe, expect, it } from 'vitest';
import { replicaStats } from './partition-stats.js';

const p = (isLeader: boolean, isr: number[], replicas: number[], minIsr = 2) => ({ isLeader, isr, replicas, minIsr });

describe('replicaStats', () => {
  it('metrics – leaders with a short ISR count as under-replicated; followers never do', () => {
    const s = replicaStats([p(true, [0, 1, 2], [0, 1, 2]), p(true, [0, 1], [0, 1, 2]), p(false, [1], [1, 0, 2])]);
    expect(s).toEqual({ partitionCount: 3, leaderCount: 2, underReplicated: 1, underMinIsr: 0, atMinIsr: 1 });
  });

  it("metrics – under-min-ISR and at-min-ISR follow each topic's min.insync.replicas", () => {
    const s = replicaStats([p(true, [0], [0, 1, 2], 2), p(true, [0], [0, 1, 2], 1), p(true, [0, 1], [0, 1, 2], 3), p(false, [1], [0, 1, 2], 3)]);
    expect(s.underMinIsr).toBe(2);
    expect(s.atMinIsr).toBe(1);
    expect(s.underReplicated).toBe(3);
  });

  it('metrics – no partitions, all zero', () => {
    expect(replicaStats([])).toEqual({ partitionCount: 0, leaderCount: 0, underReplicated: 0, underMinIsr: 0, atMinIsr: 0 });
  });
});
