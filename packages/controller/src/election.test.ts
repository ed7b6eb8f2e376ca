import { describe, expect, it } from 'vitest';
import {
  controlledShutdownPartitionLeaderElection,
  offlinePartitionLeaderElection,
  preferredReplicaPartitionLeaderElection,
  reassignPartitionLeaderElection,
} from './election.js';

const live = (...ids: number[]) => new Set(ids);

describe('election', () => {
  it('election – offline picks the first live ISR member in AR order, not ISR order', () => {
    expect(offlinePartitionLeaderElection([2, 0, 1], [1, 0], live(0, 1), false)).toEqual({ leader: 0, isr: [1, 0], unclean: false });
    expect(offlinePartitionLeaderElection([2, 0, 1], [2, 1, 0], live(1, 0), false)?.leader).toBe(0);
  });

  it('election – offline drops dead replicas from the new ISR', () => {
    expect(offlinePartitionLeaderElection([0, 1, 2], [0, 1, 2], live(1), false)).toEqual({ leader: 1, isr: [1], unclean: false });
  });

  it('election – no live ISR member: no leader unless unclean election is enabled', () => {
    expect(offlinePartitionLeaderElection([0, 1, 2], [0], live(1, 2), false)).toBeNull();
    expect(offlinePartitionLeaderElection([0, 1, 2], [0], live(2, 1), true)).toEqual({ leader: 1, isr: [1], unclean: true });
    expect(offlinePartitionLeaderElection([0, 1], [0], live(), true)).toBeNull();
  });

  it('election – preferred only elects the first AR replica when live and in ISR', () => {
    expect(preferredReplicaPartitionLeaderElection([1, 0], [0, 1], live(0, 1))?.leader).toBe(1);
    expect(preferredReplicaPartitionLeaderElection([1, 0], [0], live(0, 1))).toBeNull();
    expect(preferredReplicaPartitionLeaderElection([1, 0], [0, 1], live(0))).toBeNull();
  });

  it('election – reassignment and controlled shutdown', () => {
    expect(reassignPartitionLeaderElection([3, 4], [1, 4, 3], live(1, 3, 4))?.leader).toBe(3);
    expect(controlledShutdownPartitionLeaderElection([0, 1, 2], [0, 1, 2], live(0, 1, 2), new Set([0]))).toEqual({ leader: 1, isr: [1, 2], unclean: false });
    expect(controlledShutdownPartitionLeaderElection([0, 1], [0], live(0, 1), new Set([0]))).toBeNull();
  });
});
