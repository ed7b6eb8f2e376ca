import { subscribedPartitionCounts, toAssignments } from './common.js';
import { defaultCapacityFor, javaHashOrder, javaStringHash } from './java-hash.js';
import { constrainedAssign } from './sticky-constrained.js';
import { generalAssign } from './sticky-general.js';
import type { MemberAssignment, MemberSubscription, PartitionAssignor, PartitionsPerTopic, RebalanceProtocol, TopicPartition } from './types.js';

/**
 * Kafka's AbstractStickyAssignor: the algorithm behind 'sticky' and 'cooperative-sticky'. Goals, in
 * order: a balanced assignment (partition counts differ by at most one where subscriptions allow),
 * then keeping as many partitions as possible with the member that had them. When every member
 * subscribes to the same topics the constrained builder runs (sticky-constrained.ts), otherwise the
 * general one (sticky-general.ts). Subclasses say where a member's previous partitions and
 * generation come from (StickyAssignor: its user data; CooperativeStickyAssignor: the subscription's
 * owned partitions).
 *
 * Member ids are visited in the order Java's HashMap would visit them (see java-hash.ts), in the
 * few places where that order decides the result. Rack-aware assignment (KIP-881) is not done: the
 * assignor contract carries no partition replica racks, and without them Java takes these paths too.
 */

export const DEFAULT_GENERATION = -1;

/** A member's previous assignment as the sticky assignors read it. */
export interface MemberData {
  partitions: TopicPartition[];
  /** -1 when unknown (Java: Optional.empty() and a parse failure behave alike). */
  generation: number;
}

/** One TopicPartition object per (topic, partition), so === and Map/Set keys work as Java's equals. */
export class PartitionRegistry {
  private readonly byTopic = new Map<string, TopicPartition[]>();

  get(topic: string, partition: number): TopicPartition {
    let list = this.byTopic.get(topic);
    if (!list) this.byTopic.set(topic, (list = []));
    let tp = list[partition];
    if (!tp) list[partition] = tp = { topic, partition };
    return tp;
  }

  intern(tp: TopicPartition): TopicPartition {
    return this.get(tp.topic, tp.partition);
  }
}

export interface StickyInput {
  partitionCounts: ReadonlyMap<string, number>;
  subscriptions: ReadonlyMap<string, MemberSubscription>;
  /** Member ids in Java HashMap order. */
  memberOrder: readonly string[];
  /** Each member's previously owned, still-existing partitions (after conflicts are resolved). */
  consumerToOwnedPartitions: Map<string, TopicPartition[]>;
  registry: PartitionRegistry;
}

export abstract class AbstractStickyAssignor implements PartitionAssignor {
  abstract readonly name: string;
  abstract readonly supportedProtocols: readonly RebalanceProtocol[];
  /** Like Java's field: the highest member generation seen by this instance (never reset). */
  private maxGenerationSeen = DEFAULT_GENERATION;
  /**
   * Partitions the last assignment moved from one member to another, with their new owner; filled by
   * the constrained builder, null after the general one (the cooperative assignor then computes them).
   */
  protected partitionsTransferringOwnership: Map<TopicPartition, string> | null = new Map();

  /** The member's previous partitions and generation. */
  protected abstract memberData(subscription: MemberSubscription): MemberData;

  abstract subscriptionUserData(topics: readonly string[]): Buffer | null;
  abstract onAssignment(assignment: MemberAssignment, generationId: number): void;

  get maxGeneration(): number {
    return this.maxGenerationSeen;
  }

  assign(partitionsPerTopic: PartitionsPerTopic, subscriptions: ReadonlyMap<string, MemberSubscription>): Map<string, MemberAssignment> {
    const counts = subscribedPartitionCounts(partitionsPerTopic, subscriptions);
    return toAssignments(subscriptions, this.assignPartitions(counts, subscriptions, new PartitionRegistry()));
  }

  /** The assignment as partition lists per member (Java's assignPartitions). */
  protected assignPartitions(
    partitionCounts: ReadonlyMap<string, number>,
    subscriptions: ReadonlyMap<string, MemberSubscription>,
    registry: PartitionRegistry,
  ): Map<string, TopicPartition[]> {
    // the leader's Map<String, Subscription> is a HashMap filled in JoinGroup member order
    const memberOrder = javaHashOrder([...subscriptions.keys()], javaStringHash, defaultCapacityFor(subscriptions.size));
    const consumerToOwnedPartitions = new Map<string, TopicPartition[]>();
    const partitionsWithMultiplePreviousOwners = new Set<TopicPartition>();
    const equal = this.allSubscriptionsEqual(
      partitionCounts,
      subscriptions,
      memberOrder,
      consumerToOwnedPartitions,
      partitionsWithMultiplePreviousOwners,
      registry,
    );
    const input: StickyInput = { partitionCounts, subscriptions, memberOrder, consumerToOwnedPartitions, registry };
    if (equal) {
      const transferring = new Map<TopicPartition, string>();
      this.partitionsTransferringOwnership = transferring;
      return constrainedAssign(input, partitionsWithMultiplePreviousOwners, transferring);
    }
    this.partitionsTransferringOwnership = null;
    return generalAssign(input, (s) => this.memberDataInterned(s, registry), this.maxGenerationSeen);
  }

  private memberDataInterned(s: MemberSubscription, registry: PartitionRegistry): MemberData {
    const md = this.memberData(s);
    return { partitions: md.partitions.map((tp) => registry.intern(tp)), generation: md.generation };
  }

  /**
   * Whether all members subscribe to the same topics; fills each member's owned partitions (of
   * topics still assigned), resolving partitions claimed by several members: the higher generation
   * keeps it; claimants of the same generation both lose it (it goes to partitionsWithMultiplePreviousOwners).
   */
  private allSubscriptionsEqual(
    partitionCounts: ReadonlyMap<string, number>,
    subscriptions: ReadonlyMap<string, MemberSubscription>,
    memberOrder: readonly string[],
    consumerToOwnedPartitions: Map<string, TopicPartition[]>,
    partitionsWithMultiplePreviousOwners: Set<TopicPartition>,
    registry: PartitionRegistry,
  ): boolean {
    let isAllSubscriptionsEqual = true;
    const subscribedTopics = new Set<string>();
    const allPreviousPartitionsToOwner = new Map<TopicPartition, string>();
    let first = true;
    for (const consumer of memberOrder) {
      const subscription = subscriptions.get(consumer)!;
      // Deviation from Java, which tests subscribedTopics.isEmpty() here: when the first member (in
      // HashMap order) subscribes to nothing, Java takes the constrained path and hands partitions to
      // members not subscribed to them (whose consumers then rejoin, forever). We compare every member.
      if (first) {
        first = false;
        for (const t of subscription.topics) subscribedTopics.add(t);
      } else if (
        isAllSubscriptionsEqual &&
        !(subscription.topics.length === subscribedTopics.size && subscription.topics.every((t) => subscribedTopics.has(t)))
      ) {
        isAllSubscriptionsEqual = false;
      }
      const memberData = this.memberDataInterned(subscription, registry);
      const memberGeneration = memberData.generation;
      this.maxGenerationSeen = Math.max(this.maxGenerationSeen, memberGeneration);
      const ownedPartitions: TopicPartition[] = [];
      consumerToOwnedPartitions.set(consumer, ownedPartitions);
      for (const tp of memberData.partitions) {
        if (!partitionCounts.has(tp.topic)) continue;
        const otherConsumer = allPreviousPartitionsToOwner.get(tp);
        if (otherConsumer === undefined) {
          ownedPartitions.push(tp);
          allPreviousPartitionsToOwner.set(tp, consumer);
          continue;
        }
        // Java compares with the other member's *subscription* generation (v2+ field), not its member data
        const otherGeneration = subscriptions.get(otherConsumer)!.generationId;
        const otherMemberGeneration = otherGeneration < 0 ? DEFAULT_GENERATION : otherGeneration;
        if (memberGeneration === otherMemberGeneration) {
          partitionsWithMultiplePreviousOwners.add(tp);
          removeFirst(consumerToOwnedPartitions.get(otherConsumer)!, tp);
          allPreviousPartitionsToOwner.set(tp, consumer);
        } else if (memberGeneration > otherMemberGeneration) {
          ownedPartitions.push(tp);
          removeFirst(consumerToOwnedPartitions.get(otherConsumer)!, tp);
          allPreviousPartitionsToOwner.set(tp, consumer);
        }
        // else: the other member keeps it
      }
    }
    return isAllSubscriptionsEqual;
  }
}

/** Java's List.remove(Object): the first occurrence. */
export function removeFirst<T>(list: T[], x: T): boolean {
  const i = list.indexOf(x);
  if (i < 0) return false;
  list.splice(i, 1);
  return true;
}
