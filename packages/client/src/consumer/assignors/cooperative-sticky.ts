import { Reader, topicPartitionKey, Writer } from '@samsa/protocol';
import type { PartitionRegistry } from './abstract-sticky.js';
import { AbstractStickyAssignor, DEFAULT_GENERATION, removeFirst, type MemberData } from './abstract-sticky.js';
import { RebalanceProtocol, type MemberSubscription, type TopicPartition } from './types.js';

/**
 * Kafka's CooperativeStickyAssignor ('cooperative-sticky'; protocols COOPERATIVE, then EAGER): the
 * sticky algorithm over the owned partitions members report in their subscriptions (v1+), with the
 * generation from the subscription (v2+) or else from the user data (an int32). Two-phase
 * (KIP-429): a partition the algorithm moves from one member to another is left out of its new
 * owner's assignment this round; the old owner, no longer assigned it, revokes it and rejoins, and
 * the next rebalance hands it to the new owner.
 */
export class CooperativeStickyAssignor extends AbstractStickyAssignor {
  readonly name = 'cooperative-sticky';
  readonly supportedProtocols: readonly RebalanceProtocol[] = [RebalanceProtocol.COOPERATIVE, RebalanceProtocol.EAGER];
  private generation = DEFAULT_GENERATION;

  onAssignment(_assignment: unknown, generationId: number): void {
    this.generation = generationId;
  }

  /** The generation as an int32 (Java's COOPERATIVE_STICKY_ASSIGNOR_USER_DATA_V0), for leaders that read subscriptions below v2. */
  subscriptionUserData(): Buffer {
    const w = new Writer();
    w.writeInt32(this.generation);
    return Buffer.from(w.finish());
  }

  protected memberData(subscription: MemberSubscription): MemberData {
    if (subscription.generationId >= 0) return { partitions: subscription.ownedPartitions, generation: subscription.generationId };
    const userData = subscription.userData;
    let generation = DEFAULT_GENERATION;
    if (userData !== null) {
      try {
        generation = new Reader(userData).readInt32();
      } catch {
        generation = DEFAULT_GENERATION;
      }
    }
    return { partitions: subscription.ownedPartitions, generation };
  }

  protected override assignPartitions(
    partitionCounts: ReadonlyMap<string, number>,
    subscriptions: ReadonlyMap<string, MemberSubscription>,
    registry: PartitionRegistry,
  ): Map<string, TopicPartition[]> {
    const assignments = super.assignPartitions(partitionCounts, subscriptions, registry);
    const transferring = this.partitionsTransferringOwnership ?? computePartitionsTransferringOwnership(subscriptions, assignments, registry);
    // withhold what must first be revoked by its current owner
    for (const [tp, consumer] of transferring) removeFirst(assignments.get(consumer)!, tp);
    return assignments;
  }
}

/** Partitions newly assigned to a member that another member owned and no longer gets. */
function computePartitionsTransferringOwnership(
  subscriptions: ReadonlyMap<string, MemberSubscription>,
  assignments: ReadonlyMap<string, TopicPartition[]>,
  registry: PartitionRegistry,
): Map<TopicPartition, string> {
  const allAddedPartitions = new Map<TopicPartition, string>();
  const allRevokedPartitions = new Set<TopicPartition>();
  for (const [consumer, assigned] of assignments) {
    const owned = subscriptions.get(consumer)!.ownedPartitions.map((tp) => registry.intern(tp));
    const ownedSet = new Set(owned);
    for (const tp of assigned) if (!ownedSet.has(tp)) allAddedPartitions.set(tp, consumer);
    const assignedSet = new Set(assigned);
    for (const tp of owned) if (!assignedSet.has(tp)) allRevokedPartitions.add(tp);
  }
  for (const tp of [...allAddedPartitions.keys()]) if (!allRevokedPartitions.has(tp)) allAddedPartitions.delete(tp);
  return allAddedPartitions;
}

/**
 * Kafka's ConsumerCoordinator.validateCooperativeAssignment, for leaders running another assignor
 * under the COOPERATIVE protocol: throws when a partition still owned by one member is assigned to
 * another in the same round (it must be revoked first).
 */
export function validateCooperativeAssignment(
  ownedPartitions: ReadonlyMap<string, readonly TopicPartition[]>,
  assignments: ReadonlyMap<string, { partitions: readonly TopicPartition[] }>,
): void {
  const key = (tp: TopicPartition): string => `${tp.topic}\u0000${tp.partition}`;
  const added = new Map<string, TopicPartition>();
  const revoked = new Set<string>();
  for (const [member, a] of assignments) {
    const owned = new Set((ownedPartitions.get(member) ?? []).map(key));
    const assigned = new Set(a.partitions.map(key));
    for (const tp of a.partitions) if (!owned.has(key(tp))) added.set(key(tp), tp);
    for (const tp of ownedPartitions.get(member) ?? []) if (!assigned.has(key(tp))) revoked.add(key(tp));
  }
  const both = [...added].filter(([k]) => revoked.has(k)).map(([, tp]) => topicPartitionKey(tp));
  if (both.length > 0) {
    throw new Error(
      `Assignor supporting the COOPERATIVE protocol violates its requirements: partitions ${both.sort().join(', ')} are reassigned while still owned by another member`,
    );
  }
}
