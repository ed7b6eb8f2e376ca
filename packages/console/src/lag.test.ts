import { describe, expect, it } from 'vitest';
import { groupLag, lagKey, partitionLag } from './lag.js';
import type { MemberView } from './state.js';

const member = (id: string, assignment: MemberView['assignment']): MemberView => ({
  memberId: id,
  clientId: `c-${id}`,
  host: '/127.0.0.1',
  groupInstanceId: null,
  assignment,
});

describe('console lag', () => {
  it('console lag – per partition: end − committed, never negative, unknown without both', () => {
    expect(partitionLag(5, 12)).toBe(7);
    expect(partitionLag(15, 12)).toBe(0);
    expect(partitionLag(null, 12)).toBeNull();
    expect(partitionLag(-1, 12)).toBeNull();
    expect(partitionLag(3, null)).toBeNull();
  });

  it('console lag – group rows: assigned and committed partitions, owners, total of the known lags', () => {
    const ends = new Map([
      [lagKey('t', 0), 100],
      [lagKey('t', 1), 50],
      [lagKey('t', 2), 10],
      [lagKey('u', 0), 7],
    ]);
    const { partitions, totalLag } = groupLag(
      [
        { topic: 't', partition: 0, offset: 90n },
        { topic: 't', partition: 2, offset: 10n },
        { topic: 'u', partition: 0, offset: -1n },
        { topic: 'v', partition: 0, offset: -1n },
      ],
      [member('m1', [{ topic: 't', partitions: [1, 0] }]), member('m2', [{ topic: 'u', partitions: [0] }])],
      ends,
    );
    expect(partitions.map((r) => [r.topic, r.partition, r.committed, r.endOffset, r.lag, r.memberId])).toEqual([
      ['t', 0, 90, 100, 10, 'm1'],
      ['t', 1, null, 50, null, 'm1'],
      ['t', 2, 10, 10, 0, null],
      ['u', 0, null, 7, null, 'm2'],
    ]);
    expect(totalLag).toBe(10);
  });

  it('console lag – lag grows with the end offset while the committed offset stays', () => {
    const committed = [{ topic: 't', partition: 0, offset: 40n }];
    const at = (end: number) => groupLag(committed, [], new Map([[lagKey('t', 0), end]])).totalLag;
    expect([at(40), at(55), at(90)]).toEqual([0, 15, 50]);
  });
});
