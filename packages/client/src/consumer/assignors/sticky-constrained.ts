import type { StickyInput } from './abstract-sticky.js';
import { compareStrings } from './common.js';
import type { TopicPartition } from './types.js';

/**
 * Kafka's AbstractStickyAssignor.ConstrainedAssignmentBuilder, for groups whose members all
 * subscribe to the same topics. With minQuota = floor(P / M), maxQuota = ceil(P / M) and P % M
 * members expected to get maxQuota:
 *  1. each member keeps its owned partitions (sorted by partition, then topic) up to its quota: all
 *     of them when it owns fewer than minQuota; maxQuota while fewer than P % M members have been
 *     given maxQuota; else minQuota — the rest may be revoked;
 *  2. the partitions left (sorted by topic, then partition) are dealt round-robin to the members under
 *     minQuota (sorted by member id), then one each to members at minQuota until P % M have maxQuota.
 * Members are visited in step 1 in Java HashMap order, which decides who keeps maxQuota.
 */
export function constrainedAssign(
  input: StickyInput,
  partitionsWithMultiplePreviousOwners: ReadonlySet<TopicPartition>,
  partitionsTransferringOwnership: Map<TopicPartition, string>,
): Map<string, TopicPartition[]> {
  const { partitionCounts, memberOrder, consumerToOwnedPartitions: currentAssignment, registry } = input;
  const maybeRevokedPartitions = new Map<TopicPartition, string>();
  const unfilledMembersWithUnderMinQuotaPartitions: string[] = [];
  let unfilledMembersWithExactlyMinQuotaPartitions: string[] = [];

  const numberOfConsumers = currentAssignment.size;
  let totalPartitionsCount = 0;
  for (const n of partitionCounts.values()) totalPartitionsCount += n;
  const minQuota = Math.floor(totalPartitionsCount / numberOfConsumers);
  const maxQuota = Math.ceil(totalPartitionsCount / numberOfConsumers);
  const expectedNumMembersWithOverMinQuotaPartitions = totalPartitionsCount % numberOfConsumers;
  let currentNumMembersWithOverMinQuotaPartitions = 0;

  const assignment = new Map<string, TopicPartition[]>();
  for (const c of memberOrder) assignment.set(c, []);
  const assignedPartitions: TopicPartition[] = [];

  // 1. reassign previously owned partitions, up to the expected number of partitions per member
  for (const consumer of memberOrder) {
    const ownedPartitions = [...currentAssignment.get(consumer)!]
      .sort((a, b) => a.partition - b.partition || compareStrings(a.topic, b.topic))
      .filter((tp) => !partitionsWithMultiplePreviousOwners.has(tp));
    const consumerAssignment = assignment.get(consumer)!;
    if (ownedPartitions.length < minQuota) {
      consumerAssignment.push(...ownedPartitions);
      assignedPartitions.push(...ownedPartitions);
      unfilledMembersWithUnderMinQuotaPartitions.push(consumer);
    } else if (ownedPartitions.length >= maxQuota && currentNumMembersWithOverMinQuotaPartitions < expectedNumMembersWithOverMinQuotaPartitions) {
      currentNumMembersWithOverMinQuotaPartitions++;
      if (currentNumMembersWithOverMinQuotaPartitions === expectedNumMembersWithOverMinQuotaPartitions) unfilledMembersWithExactlyMinQuotaPartitions = [];
      const kept = ownedPartitions.slice(0, maxQuota);
      consumerAssignment.push(...kept);
      assignedPartitions.push(...kept);
      for (const tp of ownedPartitions.slice(maxQuota)) maybeRevokedPartitions.set(tp, consumer);
    } else {
      const kept = ownedPartitions.slice(0, minQuota);
      consumerAssignment.push(...kept);
      assignedPartitions.push(...kept);
      for (const tp of ownedPartitions.slice(minQuota)) maybeRevokedPartitions.set(tp, consumer);
      if (currentNumMembersWithOverMinQuotaPartitions < expectedNumMembersWithOverMinQuotaPartitions)
        unfilledMembersWithExactlyMinQuotaPartitions.push(consumer);
    }
  }

  const unassignedPartitions = unassignedOf(partitionCounts, assignedPartitions, registry);
  unfilledMembersWithUnderMinQuotaPartitions.sort(compareStrings);
  unfilledMembersWithExactlyMinQuotaPartitions.sort(compareStrings);

  const assignNewPartition = (tp: TopicPartition, consumer: string): number => {
    const consumerAssignment = assignment.get(consumer)!;
    consumerAssignment.push(tp);
    const revokedFrom = maybeRevokedPartitions.get(tp);
    if ((revokedFrom !== undefined && revokedFrom !== consumer) || partitionsWithMultiplePreviousOwners.has(tp))
      partitionsTransferringOwnership.set(tp, consumer);
    return consumerAssignment.length;
  };

  // 2. round-robin the rest: members under minQuota first, then members at minQuota up to maxQuota
  let next = 0; // Java's iterator over unfilledMembersWithUnderMinQuotaPartitions
  for (let i = 0; i < unassignedPartitions.length; i++) {
    const tp = unassignedPartitions[i]!;
    let consumer: string;
    if (next < unfilledMembersWithUnderMinQuotaPartitions.length) {
      consumer = unfilledMembersWithUnderMinQuotaPartitions[next++]!;
    } else if (unfilledMembersWithUnderMinQuotaPartitions.length === 0 && unfilledMembersWithExactlyMinQuotaPartitions.length === 0) {
      throw new Error('No more unfilled consumers to be assigned.');
    } else if (unfilledMembersWithUnderMinQuotaPartitions.length === 0) {
      consumer = unfilledMembersWithExactlyMinQuotaPartitions.shift()!;
    } else {
      next = 0;
      consumer = unfilledMembersWithUnderMinQuotaPartitions[next++]!;
    }
    const currentAssignedCount = assignNewPartition(tp, consumer);
    if (currentAssignedCount === minQuota) {
      unfilledMembersWithUnderMinQuotaPartitions.splice(--next, 1);
      unfilledMembersWithExactlyMinQuotaPartitions.push(consumer);
    } else if (currentAssignedCount === maxQuota) {
      currentNumMembersWithOverMinQuotaPartitions++;
    }
  }

  // verifyUnfilledMembers
  if (unfilledMembersWithUnderMinQuotaPartitions.length > 0) {
    if (currentNumMembersWithOverMinQuotaPartitions !== expectedNumMembersWithOverMinQuotaPartitions) {
      throw new Error("We haven't reached the expected number of members with more than the minQuota partitions, but no more partitions to be assigned");
    }
    for (const m of unfilledMembersWithUnderMinQuotaPartitions) {
      if (assignment.get(m)!.length !== minQuota) throw new Error(`Consumer: [${m}] doesn't reach minQuota partitions, and no more partitions to be assigned`);
    }
  }
  return assignment;
}

/**
 * All partitions of the topics sorted by name, less the assigned ones, by Java's two-pointer walk
 * over both sorted lists (getUnassignedPartitions).
 */
function unassignedOf(partitionCounts: ReadonlyMap<string, number>, assigned: TopicPartition[], registry: StickyInput['registry']): TopicPartition[] {
  const sortedAllTopics = [...partitionCounts.keys()].sort(compareStrings);
  const out: TopicPartition[] = [];
  if (assigned.length === 0) {
    for (const t of sortedAllTopics) for (let i = 0; i < partitionCounts.get(t)!; i++) out.push(registry.get(t, i));
    return out;
  }
  const sorted = [...assigned].sort((a, b) => compareStrings(a.topic, b.topic) || a.partition - b.partition);
  let idx = 0;
  let nextAssigned = sorted[idx++]!;
  let shouldAddDirectly = false;
  for (const topic of sortedAllTopics) {
    const n = partitionCounts.get(topic)!;
    for (let i = 0; i < n; i++) {
      if (shouldAddDirectly || !(nextAssigned.topic === topic && nextAssigned.partition === i)) {
        out.push(registry.get(topic, i));
      } else if (idx < sorted.length) {
        nextAssigned = sorted[idx++]!;
      } else {
        shouldAddDirectly = true;
      }
    }
  }
  return out;
}
