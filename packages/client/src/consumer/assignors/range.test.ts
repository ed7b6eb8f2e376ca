import { describe, expect, it } from 'vitest';
import { RangeAssignor } from './range.js';
import { RoundRobinAssignor } from './roundrobin.js';
import { member, run } from './testing.js';

describe('RangeAssignor', () => {
  const range = new RangeAssignor();

  it('range – 2 consumers, 2 topics of 4 partitions: each gets a consecutive half of every topic', () => {
    expect(run(range, { t0: 4, t1: 4 }, [member('C0', ['t0', 't1']), member('C1', ['t0', 't1'])])).toEqual({
      C0: 't0p0 t0p1 t1p0 t1p1',
      C1: 't0p2 t0p3 t1p2 t1p3',
    });
  });

  it('range – 2 consumers, 2 topics of 3 partitions: the first consumer gets the extra partition of each topic (RangeAssignor javadoc example)', () => {
    expect(run(range, { t0: 3, t1: 3 }, [member('C0', ['t0', 't1']), member('C1', ['t0', 't1'])])).toEqual({
      C0: 't0p0 t0p1 t1p0 t1p1',
      C1: 't0p2 t1p2',
    });
  });

  it('range – unequal subscriptions give the same result as round-robin (RoundRobinAssignor javadoc example: C0 t0p0, C1 t1p0, C2 t1p1 t2p0 t2p1 t2p2)', () => {
    const members = [member('C0', ['t0']), member('C1', ['t0', 't1']), member('C2', ['t0', 't1', 't2'])];
    const expected = { C0: 't0p0', C1: 't1p0', C2: 't1p1 t2p0 t2p1 t2p2' };
    expect(run(range, { t0: 1, t1: 2, t2: 3 }, members)).toEqual(expected);
    expect(run(new RoundRobinAssignor(), { t0: 1, t1: 2, t2: 3 }, members)).toEqual(expected);
  });

  it('range – n = partitions / consumers, m = partitions % consumers: the first m consumers get n + 1', () => {
    const members = ['a', 'b', 'c', 'd'].map((id) => member(id, ['t']));
    expect(run(range, { t: 10 }, members)).toEqual({ a: 'tp0 tp1 tp2', b: 'tp3 tp4 tp5', c: 'tp6 tp7', d: 'tp8 tp9' });
  });

  it('range – members with a group.instance.id sort first, by it; then the others by member id', () => {
    const members = [member('m-a', ['t']), member('m-z', ['t'], { groupInstanceId: 'i-1' }), member('m-b', ['t'], { groupInstanceId: 'i-0' })];
    expect(run(range, { t: 3 }, members)).toEqual({ 'm-b': 'tp0', 'm-z': 'tp1', 'm-a': 'tp2' });
  });

  it('range – more consumers than partitions: the last ones get nothing but still have an entry; unknown and empty topics are skipped', () => {
    const members = [member('a', ['t', 'gone', 'empty']), member('b', ['t']), member('c', ['t'])];
    const result = new RangeAssignor().assign(
      new Map([
        ['t', 2],
        ['empty', 0],
        ['other', 5],
      ]),
      new Map(members.map((m) => [m.memberId, m])),
    );
    expect([...result.keys()].sort()).toEqual(['a', 'b', 'c']);
    expect(result.get('c')).toEqual({ partitions: [], userData: null });
    expect(result.get('a')!.partitions).toEqual([{ topic: 't', partition: 0 }]);
  });

  it('range – eager only, no user data', () => {
    expect(range.name).toBe('range');
    expect(range.supportedProtocols).toEqual(['EAGER']);
    expect(range.subscriptionUserData(['t'])).toBeNull();
  });
});
