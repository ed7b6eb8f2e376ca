import { describe, expect, it } from 'vitest';
import { eventsFromStateChanges, nextStateChangeSeq, type StateChangeRecord } from './state-change-events.js';

const rec = (seq: number, msg: string, f: Record<string, unknown>): StateChangeRecord => ({ seq, time: 1000 + seq, msg, ...f });

describe('console state-change events', () => {
  it('console state-change events – elections grouped by topic and strategy, with leaders and epochs; other records ignored', () => {
    const ev = eventsFromStateChanges(
      [
        rec(1, 'partition state change', { topic: 't', partition: 0, from: 'OnlinePartition', to: 'OfflinePartition' }),
        rec(2, 'elected leader', { topic: 't', partition: 0, leader: 2, leaderEpoch: 3, strategy: 'offline', unclean: false }),
        rec(3, 'elected leader', { topic: 't', partition: 4, leader: 1, leaderEpoch: 2, strategy: 'offline', unclean: false }),
        rec(4, 'elected leader', { topic: 'u', partition: 1, leader: 0, leaderEpoch: 7, strategy: 'offline', unclean: true }),
        rec(5, 'sending LeaderAndIsr', { topic: 't', partition: 0, leader: 2 }),
        rec(6, 'reassignment completed', { topic: 't', partition: 1, replicas: [2, 0, 1] }),
      ],
      2,
    );
    expect(ev.map((e) => [e.kind, e.source, e.at])).toEqual([
      ['leader-election', 'state-change', 1003],
      ['unclean-election', 'state-change', 1004],
      ['reassignment-completed', 'state-change', 1006],
    ]);
    expect(ev[0]!.message).toBe('Topic t: controller 2 elected leaders (offline) p0→2 (epoch 3), p4→1 (epoch 2)');
    expect(ev[0]!.partitions).toEqual([
      { partition: 0, from: null, to: 2 },
      { partition: 4, from: null, to: 1 },
    ]);
    expect(ev[1]!.message).toContain('UNCLEAN leader (offline) p1→0');
    expect(ev[2]!.message).toBe('Topic t: reassignment of p1 completed, replicas [2,0,1] (controller 2)');
  });

  it('console state-change events – many partitions are counted, not all listed', () => {
    const records = Array.from({ length: 20 }, (_, i) =>
      rec(i + 1, 'elected leader', { topic: 't', partition: i, leader: 1, leaderEpoch: 1, strategy: 'preferred' }),
    );
    const [e] = eventsFromStateChanges(records, null);
    expect(e!.message).toMatch(/^Topic t: the controller elected leaders \(preferred, 20 partitions\) p0→1 \(epoch 1\).* … and 12 more$/);
    expect(e!.partitions).toHaveLength(20);
  });

  it('console state-change events – the next seq; a broker whose last seq fell behind restarted', () => {
    expect(nextStateChangeSeq(10, { next: 14, last: 14 })).toEqual({ since: 14, restarted: false });
    expect(nextStateChangeSeq(10, { next: 10, last: 10 })).toEqual({ since: 10, restarted: false });
    expect(nextStateChangeSeq(10, { next: 10, last: 3 })).toEqual({ since: 0, restarted: true });
  });
});
