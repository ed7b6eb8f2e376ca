import { describe, expect, it } from 'vitest';
import { addEvents, diffSnapshots, uncleanElectionEvent, type ClusterSnapshot, type SnapshotPartition } from './timeline.js';
import type { TimelineEvent } from './state.js';

const snap = (o: Omit<Partial<ClusterSnapshot>, 'topics'> & { topics?: Record<string, SnapshotPartition[]> }): ClusterSnapshot => ({
  brokers: o.brokers ?? [0, 1, 2],
  controllerId: o.controllerId === undefined ? 0 : o.controllerId,
  controllerEpoch: o.controllerEpoch ?? null,
  topics: new Map(Object.entries(o.topics ?? {})),
});
const p = (partition: number, leader: number | null, isr: number[]): SnapshotPartition => ({ partition, leader, isr });

describe('console timeline', () => {
  it('console timeline – identical snapshots give no events', () => {
    const a = snap({ topics: { t: [p(0, 1, [1, 2, 0])] } });
    const b = snap({ topics: { t: [p(0, 1, [0, 1, 2])] } });
    expect(diffSnapshots(a, b, 1)).toEqual([]);
  });

  it('console timeline – a broker dying: broker down, leaders moved, ISR shrank (one event per kind and topic)', () => {
    const before = snap({ topics: { t: [p(0, 1, [1, 2]), p(1, 2, [2, 1]), p(2, 1, [1, 0])] } });
    const after = snap({ brokers: [0, 2], topics: { t: [p(0, 2, [2]), p(1, 2, [2]), p(2, 0, [0])] } });
    const ev = diffSnapshots(before, after, 42);
    expect(ev.map((e) => e.kind)).toEqual(['broker-down', 'leader-election', 'isr-shrink']);
    expect(ev[0]).toMatchObject({ at: 42, brokerId: 1, source: 'metadata' });
    expect(ev[1]!.partitions).toEqual([
      { partition: 0, from: 1, to: 2 },
      { partition: 2, from: 1, to: 0 },
    ]);
    expect(ev[1]!.message).toBe('Topic t: new leaders p0 1→2, p2 1→0');
    expect(ev[2]!.partitions!.map((x) => x.partition)).toEqual([0, 1, 2]);
    expect(ev[2]!.message).toContain('p0 [1,2]→[2]');
  });

  it('console timeline – broker back and ISR expanding; no leader is "offline", not an election', () => {
    const before = snap({ brokers: [0, 2], topics: { t: [p(0, 2, [2]), p(1, 0, [0])] } });
    const after = snap({ topics: { t: [p(0, 2, [2, 1]), p(1, null, [0])] } });
    const ev = diffSnapshots(before, after, 1);
    expect(ev.map((e) => e.kind)).toEqual(['broker-up', 'partition-offline', 'isr-expand']);
    expect(ev[0]!.brokerId).toBe(1);
    expect(ev[1]!.message).toBe('Topic t: no leader for p1 (was 0)');
  });

  it('console timeline – an ISR that swaps a member counts as a shrink only', () => {
    const ev = diffSnapshots(snap({ topics: { t: [p(0, 0, [0, 1])] } }), snap({ topics: { t: [p(0, 0, [0, 2])] } }), 1);
    expect(ev.map((e) => e.kind)).toEqual(['isr-shrink']);
  });

  it('console timeline – controller change carries the epoch; a new epoch on the same broker is a change too', () => {
    const ev = diffSnapshots(snap({ controllerId: 0, controllerEpoch: 3 }), snap({ controllerId: 2, controllerEpoch: 4 }), 1);
    expect(ev).toMatchObject([{ kind: 'controller-change', brokerId: 2, message: 'Broker 2 elected controller (controller epoch 4), was broker 0' }]);
    expect(diffSnapshots(snap({ controllerEpoch: 4 }), snap({ controllerEpoch: 5 }), 1).map((e) => e.kind)).toEqual(['controller-change']);
    expect(diffSnapshots(snap({ controllerId: 1 }), snap({ controllerId: null }), 1)[0]!.message).toBe('No controller (was broker 1)');
  });

  it('console timeline – topics created, deleted and grown', () => {
    const ev = diffSnapshots(
      snap({ topics: { a: [p(0, 0, [0])], b: [p(0, 1, [1])] } }),
      snap({ topics: { b: [p(0, 1, [1]), p(1, 2, [2])], c: [p(0, 0, [0])] } }),
      1,
    );
    expect(ev.map((e) => [e.kind, e.topic])).toEqual([
      ['topic-deleted', 'a'],
      ['partitions-added', 'b'],
      ['topic-created', 'c'],
    ]);
  });

  it('console timeline – unclean elections from the counters; newest first, capped', () => {
    expect(uncleanElectionEvent(null, 3, 1)).toBeNull();
    expect(uncleanElectionEvent(3, 3, 1)).toBeNull();
    expect(uncleanElectionEvent(3, 5, 1)).toMatchObject({
      kind: 'unclean-election',
      source: 'metrics',
      message: expect.stringContaining('2 unclean leader elections'),
    });
    const tl: TimelineEvent[] = [];
    const e = (at: number): TimelineEvent => ({ at, kind: 'broker-up', message: String(at), source: 'metadata' });
    addEvents(tl, [e(1), e(2)], 3);
    addEvents(tl, [e(3), e(4)], 3);
    expect(tl.map((x) => x.at)).toEqual([4, 3, 2]);
  });
});

describe('console timeline – long events', () => {
  it('console timeline – many partitions: the message names the first 8 and counts the rest; details keep all', () => {
    const parts = (leader: number, isr: number[]) => Array.from({ length: 50 }, (_, i) => p(i, leader, isr));
    const ev = diffSnapshots(snap({ topics: { t: parts(0, [0, 1, 2]) } }), snap({ brokers: [1, 2], topics: { t: parts(1, [1, 2]) } }), 1);
    expect(ev.map((e) => e.kind)).toEqual(['broker-down', 'leader-election', 'isr-shrink']);
    expect(ev[1]!.message).toBe('Topic t: new leaders (50 partitions) p0 0→1, p1 0→1, p2 0→1, p3 0→1, p4 0→1, p5 0→1, p6 0→1, p7 0→1 … and 42 more');
    expect(ev[1]!.partitions).toHaveLength(50);
    expect(ev[2]!.message).toMatch(/^Topic t: ISR shrank on 50 partitions \(broker 0 out\): p0 \[0,1,2\]→\[1,2\].* … and 42 more$/);
  });
});
