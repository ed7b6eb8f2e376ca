import type { MemberAssignment, MemberSubscription, PartitionsPerTopic, TopicPartition } from './types.js';

/**
 * Helpers shared by the assignors. Kafka compares strings with String.compareTo (UTF-16 code
 * units), which is what JavaScript's `<` does, so plain comparisons reproduce Java's orders.
 */

export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Kafka's AbstractPartitionAssignor.MemberInfo order: members with a group.instance.id first,
 * sorted by it; then the others by member id.
 */
export function compareMembers(a: { memberId: string; groupInstanceId: string | null }, b: { memberId: string; groupInstanceId: string | null }): number {
  if (a.groupInstanceId !== null && b.groupInstanceId !== null) return compareStrings(a.groupInstanceId, b.groupInstanceId);
  if (a.groupInstanceId !== null) return -1;
  if (b.groupInstanceId !== null) return 1;
  return compareStrings(a.memberId, b.memberId);
}

/** Topic, then partition: Kafka's TopicPartitionComparator. */
export function compareTopicPartitions(a: TopicPartition, b: TopicPartition): number {
  return compareStrings(a.topic, b.topic) || a.partition - b.partition;
}

export function tpKey(tp: TopicPartition): string {
  return `${tp.partition}:${tp.topic}`;
}

/**
 * What the Java leader passes its assignor (AbstractPartitionAssignor.assign): the partition count of
 * each topic some member subscribes to, for topics with metadata and at least one partition.
 */
export function subscribedPartitionCounts(partitionsPerTopic: PartitionsPerTopic, subscriptions: ReadonlyMap<string, MemberSubscription>): Map<string, number> {
  const subscribed = new Set<string>();
  for (const s of subscriptions.values()) for (const t of s.topics) subscribed.add(t);
  const out = new Map<string, number>();
  for (const t of [...subscribed].sort(compareStrings)) {
    const n = partitionsPerTopic.get(t);
    if (n !== undefined && n > 0) out.set(t, n);
  }
  return out;
}

/** Wraps per-member partition lists into MemberAssignments (no user data), one per member. */
export function toAssignments(
  subscriptions: ReadonlyMap<string, MemberSubscription>,
  partitions: ReadonlyMap<string, TopicPartition[]>,
): Map<string, MemberAssignment> {
  const out = new Map<string, MemberAssignment>();
  for (const memberId of subscriptions.keys()) out.set(memberId, { partitions: partitions.get(memberId) ?? [], userData: null });
  return out;
}
