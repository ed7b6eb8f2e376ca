import { describe, expect, it } from 'vitest';
import { RoundRobinAssignor } from './roundrobin.js';
import { member, run } from './testing.js';

describe('RoundRobinAssignor', () => {
  const rr = new RoundRobinAssignor();

  it('roundrobin – equal subscriptions, 2 topics of 3 partitions: dealt in turn (RoundRobinAssignor javadoc example)', () => {
    expect(run(rr, { t0: 3, t1: 3 }, [member('C0', ['t0', 't1']), member('C1', ['t0', 't1'])])).toEqual({
      C0: 't0p0 t0p2 t1p1',
      C1: 't0p1 t1p0 t1p2',
    });
  });

  it('roundrobin – unequal subscriptions skip members not subscribed (RoundRobinAssignor javadoc example: C0 t0p0, C1 t1p0, C2 t1p1 t2p0 t2p1 t2p2)', () => {
    const members = [member('C0', ['t0']), member('C1', ['t0', 't1']), member('C2', ['t0', 't1', 't2'])];
    expect(run(rr, { t0: 1, t1: 2, t2: 3 }, members)).toEqual({ C0: 't0p0', C1: 't1p0', C2: 't1p1 t2p0 t2p1 t2p2' });
  });

  it('roundrobin – the circle continues across topics (not restarted per topic)', () => {
    const members = ['a', 'b', 'c'].map((id) => member(id, ['x', 'y']));
    expect(run(rr, { x: 2, y: 2 }, members)).toEqual({ a: 'xp0 yp1', b: 'xp1', c: 'yp0' });
  });

  it('roundrobin – static members (group.instance.id) sort first', () => {
    const members = [member('a', ['t']), member('b', ['t'], { groupInstanceId: 'static' })];
    expect(run(rr, { t: 3 }, members)).toEqual({ b: 'tp0 tp2', a: 'tp1' });
  });

  it('roundrobin – eager only', () => {
    expect(rr.name).toBe('roundrobin');
    expect(rr.supportedProtocols).toEqual(['EAGER']);
  });
});
