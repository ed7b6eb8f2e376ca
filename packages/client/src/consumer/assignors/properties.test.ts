import { topicPartitionKey } from '@samsa/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CooperativeStickyAssignor, validateCooperativeAssignment } from './cooperative-sticky.js';
import { assignorByName } from './index.js';
import { StickyAssignor } from './sticky.js';
import { member } from './testing.js';
import type { MemberAssignment, MemberSubscription, TopicPartition } from './types.js';

/** Property tests over random groups: topics t0..t3 (1–8 partitions), 1–7 members with random ids. */

interface Group {
  topics: Map<string, number>;
  members: MemberSubscription[];
}

const groupArb = (equalSubscriptions: boolean): fc.Arbitrary<Group> =>
  fc
    .record({
      counts: fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 1, maxLength: 4 }),
      ids: fc.uniqueArray(fc.string({ minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 7 }),
      masks: fc.array(fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }), { minLength: 7, maxLength: 7 }),
      statics: fc.array(fc.option(fc.string({ minLength: 1, maxLength: 4 }), { nil: null }), { minLength: 7, maxLength: 7 }),
    })
    .map(({ counts, ids, masks, statics }) => {
      const topics = new Map(counts.map((n, i) => [`t${i}`, n]));
      const names = [...topics.keys()];
      const members = ids.map((id, i) => member(id, equalSubscriptions ? names : names.filter((_, j) => masks[i]![j]), { groupInstanceId: statics[i]! }));
      return { topics, members };
    });

const anyGroupArb = fc.oneof(groupArb(true), groupArb(false));
const subsOf = (members: readonly MemberSubscription[]) => new Map(members.map((m) => [m.memberId, m]));
const key = (tp: TopicPartition) => topicPartitionKey(tp);

/** Every partition of a subscribed topic exactly once, to a subscriber; an entry per member. */
function expectComplete(g: Group, result: ReadonlyMap<string, MemberAssignment>): void {
  expect([...result.keys()].sort()).toEqual(g.members.map((m) => m.memberId).sort());
  const seen = new Map<string, string>();
  for (const m of g.members) {
    for (const tp of result.get(m.memberId)!.partitions) {
      expect(m.topics).toContain(tp.topic);
      expect(seen.has(key(tp))).toBe(false);
      seen.set(key(tp), m.memberId);
    }
  }
  const expected: string[] = [];
  for (const [t, n] of g.topics) if (g.members.some((m) => m.topics.includes(t))) for (let p = 0; p < n; p++) expected.push(topicPartitionKey(t, p));
  expect([...seen.keys()].sort()).toEqual(expected.sort());
}

const sizes = (r: ReadonlyMap<string, MemberAssignment>) => [...r.values()].map((a) => a.partitions.length);

describe('assignors – properties', () => {
  for (const name of ['range', 'roundrobin', 'sticky', 'cooperative-sticky']) {
    it(`${name} – every partition of a subscribed topic is assigned exactly once, to a member subscribed to it`, () => {
      fc.assert(
        fc.property(anyGroupArb, (g) => expectComplete(g, assignorByName(name).assign(g.topics, subsOf(g.members)))),
        { numRuns: 150 },
      );
    });
  }

  it('sticky – with equal subscriptions the partition counts differ by at most one (also after members come and go)', () => {
    fc.assert(
      fc.property(groupArb(true), fc.integer({ min: 0, max: 6 }), (g, drop) => {
        const first = new StickyAssignor().assign(g.topics, subsOf(g.members));
        expect(Math.max(...sizes(first)) - Math.min(...sizes(first))).toBeLessThanOrEqual(1);
        const survivors = withStickyUserData(g.members, first, 1).filter((_, i) => g.members.length === 1 || i !== drop % g.members.length);
        const second = new StickyAssignor().assign(g.topics, subsOf(survivors));
        expect(Math.max(...sizes(second)) - Math.min(...sizes(second))).toBeLessThanOrEqual(1);
      }),
      { numRuns: 150 },
    );
  });

  it('sticky – stickiness: when one member leaves, every surviving member keeps all it had', () => {
    fc.assert(
      fc.property(
        groupArb(true).filter((g) => g.members.length >= 2),
        fc.nat(),
        (g, drop) => {
          const first = new StickyAssignor().assign(g.topics, subsOf(g.members));
          const gone = g.members[drop % g.members.length]!.memberId;
          const survivors = withStickyUserData(g.members, first, 1).filter((m) => m.memberId !== gone);
          const second = new StickyAssignor().assign(g.topics, subsOf(survivors));
          for (const m of survivors) for (const tp of first.get(m.memberId)!.partitions) expect(second.get(m.memberId)!.partitions.map(key)).toContain(key(tp));
          expectComplete({ topics: g.topics, members: survivors }, second);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('cooperative-sticky – stickiness: when one member leaves, survivors keep all they owned and its partitions are assigned at once', () => {
    fc.assert(
      fc.property(
        groupArb(true).filter((g) => g.members.length >= 2),
        fc.nat(),
        (g, drop) => {
          const first = new CooperativeStickyAssignor().assign(g.topics, subsOf(g.members));
          const gone = g.members[drop % g.members.length]!.memberId;
          const survivors = owning(g.members, first, 1).filter((m) => m.memberId !== gone);
          const second = new CooperativeStickyAssignor().assign(g.topics, subsOf(survivors));
          for (const m of survivors) for (const tp of m.ownedPartitions) expect(second.get(m.memberId)!.partitions.map(key)).toContain(key(tp));
          // nothing the leaver had needs revoking from anyone, so nothing is withheld
          expectComplete({ topics: g.topics, members: survivors }, second);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('cooperative-sticky – no partition is assigned to a new owner in the round it is revoked from the old; later rounds converge', () => {
    const ownedArb = fc.array(fc.integer({ min: -1, max: 6 }), { minLength: 32, maxLength: 32 });
    fc.assert(
      fc.property(anyGroupArb, ownedArb, (g, owners) => {
        // a random, conflict-free current ownership (only of subscribed topics), all in generation 3
        let i = 0;
        const owned = new Map<string, TopicPartition[]>(g.members.map((m) => [m.memberId, []]));
        for (const [topic, n] of g.topics) {
          for (let p = 0; p < n; p++) {
            const o = owners[i++ % owners.length]!;
            const m = o < 0 ? undefined : g.members[o % g.members.length];
            if (m && m.topics.includes(topic)) owned.get(m.memberId)!.push({ topic, partition: p });
          }
        }
        let members = g.members.map((m) => ({ ...m, ownedPartitions: owned.get(m.memberId)!, generationId: 3 }));
        for (let round = 0; round < 4; round++) {
          const result = new CooperativeStickyAssignor().assign(g.topics, subsOf(members));
          validateCooperativeAssignment(new Map(members.map((m) => [m.memberId, m.ownedPartitions])), result);
          const assigned = [...result.values()].flatMap((a) => a.partitions.map(key));
          expect(new Set(assigned).size).toBe(assigned.length);
          if (round > 0 && assigned.length === totalSubscribed(g)) return;
          members = owning(members, result, 4 + round);
        }
        throw new Error('cooperative rebalance did not converge in 4 rounds');
      }),
      { numRuns: 150 },
    );
  });
});

function totalSubscribed(g: Group): number {
  let n = 0;
  for (const [t, c] of g.topics) if (g.members.some((m) => m.topics.includes(t))) n += c;
  return n;
}

function withStickyUserData(members: readonly MemberSubscription[], result: ReadonlyMap<string, MemberAssignment>, generation: number): MemberSubscription[] {
  return members.map((m) => {
    const a = new StickyAssignor();
    a.onAssignment(result.get(m.memberId)!, generation);
    return { ...m, userData: a.subscriptionUserData() };
  });
}

function owning(members: readonly MemberSubscription[], result: ReadonlyMap<string, MemberAssignment>, generation: number): MemberSubscription[] {
  return members.map((m) => ({ ...m, ownedPartitions: result.get(m.memberId)!.partitions, generationId: generation }));
}
