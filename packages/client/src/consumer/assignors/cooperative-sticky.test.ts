import { describe, expect, it } from 'vitest';
import { CooperativeStickyAssignor, validateCooperativeAssignment } from './cooperative-sticky.js';
import { member, run, tps } from './testing.js';

const all = ['t0', 't1'];
const owning = (id: string, partitions: string, generation = 4) => member(id, all, { ownedPartitions: tps(partitions), generationId: generation });

describe('CooperativeStickyAssignor', () => {
  it('cooperative-sticky – a new member: what moves to it is first only taken from its owner (withheld this round)', () => {
    // a and b own 3 each; c joins. Balanced is 2/2/2, so a and b each give up one partition
    const first = run(new CooperativeStickyAssignor(), { t0: 3, t1: 3 }, [owning('a', 't0p0 t0p1 t0p2'), owning('b', 't1p0 t1p1 t1p2'), member('c', all)]);
    expect(first).toEqual({ a: 't0p0 t0p1', b: 't1p0 t1p1', c: '' });
    // next round: a and b have revoked t0p2 and t1p2; c now gets them
    const second = run(new CooperativeStickyAssignor(), { t0: 3, t1: 3 }, [
      owning('a', 't0p0 t0p1', 5),
      owning('b', 't1p0 t1p1', 5),
      member('c', all, { generationId: 5 }),
    ]);
    expect(second).toEqual({ a: 't0p0 t0p1', b: 't1p0 t1p1', c: 't0p2 t1p2' });
  });

  it('cooperative-sticky – partitions nobody owns are assigned at once; owners keep theirs', () => {
    expect(run(new CooperativeStickyAssignor(), { t0: 2, t1: 2 }, [owning('a', 't0p0'), member('b', all)])).toEqual({ a: 't0p0 t0p1', b: 't1p0 t1p1' });
  });

  it('cooperative-sticky – unequal subscriptions (general path): a moved partition is withheld too', () => {
    const members = [member('a', ['t0', 't1'], { ownedPartitions: tps('t0p0 t0p1 t1p0 t1p1'), generationId: 2 }), member('b', ['t1'], { generationId: 2 })];
    const r = new CooperativeStickyAssignor().assign(
      new Map([
        ['t0', 2],
        ['t1', 2],
      ]),
      new Map(members.map((m) => [m.memberId, m])),
    );
    const owned = new Map(members.map((m) => [m.memberId, m.ownedPartitions]));
    expect(() => validateCooperativeAssignment(owned, r)).not.toThrow();
    // balanced is 2/2: a gives up t1p0 and t1p1, and b gets them only next round (same as Kafka's Java code gives)
    expect(r.get('a')!.partitions).toEqual(tps('t0p0 t0p1'));
    expect(r.get('b')!.partitions).toEqual([]);
  });

  it('cooperative-sticky – generation from user data when the subscription is below v2 (int32, as librdkafka/Java write it)', () => {
    const a = new CooperativeStickyAssignor();
    expect(a.subscriptionUserData().toString('hex')).toBe('ffffffff');
    a.onAssignment({ partitions: [], userData: null }, 7);
    expect(a.subscriptionUserData().toString('hex')).toBe('00000007');
    // an old-generation claim loses to a current one
    const stale = member('x', ['t'], { ownedPartitions: tps('tp0'), userData: Buffer.from('00000003', 'hex') });
    const fresh = member('y', ['t'], { ownedPartitions: tps('tp0'), userData: Buffer.from('00000007', 'hex') });
    const r = run(new CooperativeStickyAssignor(), { t: 2 }, [stale, fresh]);
    expect(r.y).toContain('tp0');
  });

  it('cooperative-sticky – supports COOPERATIVE first, then EAGER', () => {
    expect(new CooperativeStickyAssignor().supportedProtocols).toEqual(['COOPERATIVE', 'EAGER']);
  });

  it('cooperative-sticky – validateCooperativeAssignment rejects a partition handed to a new owner while still owned', () => {
    const owned = new Map([
      ['a', tps('tp0')],
      ['b', []],
    ]);
    const bad = new Map([
      ['a', { partitions: [] }],
      ['b', { partitions: tps('tp0') }],
    ]);
    expect(() => validateCooperativeAssignment(owned, bad)).toThrow(/t-0/);
  });
});
