import { describe, expect, it } from 'vitest';
import { deserializeStickyUserData, serializeStickyUserData, StickyAssignor } from './sticky.js';
import { member, run, summary, tps } from './testing.js';
import type { MemberAssignment, MemberSubscription } from './types.js';

/** What a StickyAssignor member sends after it got `partitions` in `generation` (its user data). */
function stickyMember(id: string, topics: string[], partitions: string, generation: number): MemberSubscription {
  const a = new StickyAssignor();
  a.onAssignment({ partitions: tps(partitions), userData: null }, generation);
  return member(id, topics, { userData: a.subscriptionUserData() });
}

describe('StickyAssignor', () => {
  const topics4 = { t0: 2, t1: 2, t2: 2, t3: 2 };
  const all4 = ['t0', 't1', 't2', 't3'];

  it('sticky – 3 consumers, 4 topics of 2 partitions: balanced first assignment (StickyAssignor javadoc example)', () => {
    expect(run(new StickyAssignor(), topics4, [member('C0', all4), member('C1', all4), member('C2', all4)])).toEqual({
      C0: 't0p0 t1p1 t3p0',
      C1: 't0p1 t2p0 t3p1',
      C2: 't1p0 t2p1',
    });
  });

  it('sticky – when C1 leaves, C0 and C2 keep every partition they had and share out C1’s (StickyAssignor javadoc: the departed member’s partitions go to the others)', () => {
    const result = run(new StickyAssignor(), topics4, [stickyMember('C0', all4, 't0p0 t1p1 t3p0', 1), stickyMember('C2', all4, 't1p0 t2p1', 1)]);
    // Kafka's constrained builder: owned partitions first, then t0p1 t2p0 t3p1 round-robin to C0, C2, C2
    expect(result).toEqual({ C0: 't0p0 t0p1 t1p1 t3p0', C2: 't1p0 t2p0 t2p1 t3p1' });
  });

  it('sticky – a round-robin assignor would move partitions between survivors; sticky moves only the departed member’s', () => {
    const before = { C0: tps('t0p0 t1p1 t3p0'), C2: tps('t1p0 t2p1') };
    const after = new StickyAssignor().assign(
      new Map(Object.entries(topics4)),
      new Map([
        ['C0', stickyMember('C0', all4, 't0p0 t1p1 t3p0', 1)],
        ['C2', stickyMember('C2', all4, 't1p0 t2p1', 1)],
      ]),
    );
    for (const [id, had] of Object.entries(before)) {
      const now = after.get(id)!.partitions;
      for (const tp of had) expect(now).toContainEqual(tp);
    }
  });

  it('sticky – unequal subscriptions (C0: t0; C1: t0 t1; C2: t0 t1 t2): balanced where subscriptions allow, unlike round-robin', () => {
    const members = [member('C0', ['t0']), member('C1', ['t0', 't1']), member('C2', ['t0', 't1', 't2'])];
    expect(run(new StickyAssignor(), { t0: 1, t1: 2, t2: 3 }, members)).toEqual({ C0: 't0p0', C1: 't1p0 t1p1', C2: 't2p0 t2p1 t2p2' });
  });

  it('sticky – unequal subscriptions, C0 leaves: its t0p0 goes to C1, nothing else moves', () => {
    const members = [stickyMember('C1', ['t0', 't1'], 't1p0 t1p1', 3), stickyMember('C2', ['t0', 't1', 't2'], 't2p0 t2p1 t2p2', 3)];
    expect(run(new StickyAssignor(), { t0: 1, t1: 2, t2: 3 }, members)).toEqual({ C1: 't0p0 t1p0 t1p1', C2: 't2p0 t2p1 t2p2' });
  });

  it('sticky – a partition claimed by two members goes to the one of the higher generation (Java members send it in the subscription too)', () => {
    const withGen = (m: MemberSubscription, g: number): MemberSubscription => ({ ...m, generationId: g });
    const members = [withGen(stickyMember('a', ['t'], 'tp0 tp1', 5), 5), withGen(stickyMember('b', ['t'], 'tp1 tp2', 4), 4), member('c', ['t'])];
    // a keeps tp0 (quota 1 each), b keeps tp2, tp1 goes to the newcomer c (as Kafka's Java code gives)
    expect(run(new StickyAssignor(), { t: 3 }, members)).toEqual({ a: 'tp0', b: 'tp2', c: 'tp1' });
  });

  it('sticky – without subscription generations (v0/v1 subscriptions) Java compares a claim with -1, so the later claimant wins', () => {
    const members = [stickyMember('a', ['t'], 'tp0 tp1', 5), stickyMember('b', ['t'], 'tp1 tp2', 4), member('c', ['t'])];
    expect(run(new StickyAssignor(), { t: 3 }, members)).toEqual({ a: 'tp0', b: 'tp1', c: 'tp2' });
  });

  it('sticky – user data: the ConsumerUserData v1 layout librdkafka writes (golden: kcat 2.0.2 cooperative-sticky member, generation 2)', () => {
    // from consumer-protocol.test.ts's capture: previous assignment t0 [2], t1 [0, 2], generation 2
    const golden = Buffer.from('000000020002743000000001000000020002743100000002000000000000000200000002', 'hex');
    expect(deserializeStickyUserData(golden)).toEqual({ partitions: tps('t0p2 t1p0 t1p2'), generation: 2 });
    expect(serializeStickyUserData({ partitions: tps('t0p2 t1p0 t1p2'), generation: 2 }).toString('hex')).toBe(golden.toString('hex'));
    // v0 (no generation) still reads; garbage reads as nothing
    expect(deserializeStickyUserData(golden.subarray(0, golden.length - 4))).toEqual({ partitions: tps('t0p2 t1p0 t1p2'), generation: -1 });
    expect(deserializeStickyUserData(Buffer.from([1, 2, 3]))).toEqual({ partitions: [], generation: -1 });
  });

  it('sticky – subscriptionUserData is null until the first assignment, then the assignment and generation', () => {
    const a = new StickyAssignor();
    expect(a.subscriptionUserData()).toBeNull();
    a.onAssignment({ partitions: tps('xp1'), userData: null } satisfies MemberAssignment, 9);
    expect(deserializeStickyUserData(a.subscriptionUserData()!)).toEqual({ partitions: tps('xp1'), generation: 9 });
    expect(a.supportedProtocols).toEqual(['EAGER']);
  });

  it('sticky – every member gets an entry, members beyond the partition count an empty one', () => {
    const r = new StickyAssignor().assign(new Map([['t', 1]]), new Map(['a', 'b'].map((id) => [id, member(id, ['t'])])));
    expect(summary(r)).toEqual({ a: 'tp0', b: '' });
  });
});
