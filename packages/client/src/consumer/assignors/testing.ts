import type { MemberAssignment, MemberSubscription, PartitionAssignor, TopicPartition } from './types.js';

/**
 * Test helpers for the assignors: subscriptions, and assignments in the `t0p1` notation of Kafka's
 * assignor docs.
 */

export function member(memberId: string, topics: string[], extra: Partial<Omit<MemberSubscription, 'memberId' | 'topics'>> = {}): MemberSubscription {
  return { memberId, groupInstanceId: null, topics, userData: null, ownedPartitions: [], generationId: -1, rackId: null, ...extra };
}

export function subscriptions(...members: MemberSubscription[]): Map<string, MemberSubscription> {
  return new Map(members.map((m) => [m.memberId, m]));
}

/** `t0p1` → { topic: 't0', partition: 1 } (topic names without a trailing p<digits>). */
export function tp(s: string): TopicPartition {
  const m = /^(.*)p(\d+)$/.exec(s);
  if (!m) throw new Error(`not a t0p1-style partition: ${s}`);
  return { topic: m[1]!, partition: Number(m[2]) };
}

export function tps(s: string): TopicPartition[] {
  return s.trim() === ''
    ? []
    : s
        .trim()
        .split(/[\s,]+/)
        .map(tp);
}

export function show(list: readonly TopicPartition[]): string {
  return [...list]
    .sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition))
    .map((x) => `${x.topic}p${x.partition}`)
    .join(' ');
}

/** member id → its partitions in t0p0 notation, sorted. */
export function summary(result: ReadonlyMap<string, MemberAssignment>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [id, a] of [...result].sort(([a], [b]) => (a < b ? -1 : 1))) out[id] = show(a.partitions);
  return out;
}

export function topicsMap(entries: Record<string, number>): Map<string, number> {
  return new Map(Object.entries(entries));
}

export function run(assignor: PartitionAssignor, topics: Record<string, number>, members: MemberSubscription[]): Record<string, string> {
  return summary(assignor.assign(topicsMap(topics), subscriptions(...members)));
}
