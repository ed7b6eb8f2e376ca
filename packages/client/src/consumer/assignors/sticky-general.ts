import { removeFirst, type MemberData, type StickyInput } from './abstract-sticky.js';
import { compareStrings } from './common.js';
import { JavaHashSet, topicPartitionHash } from './java-hash.js';
import type { MemberSubscription, TopicPartition } from './types.js';

/**
 * Kafka's AbstractStickyAssignor.GeneralAssignmentBuilder, for members with different
 * subscriptions: keep every still-valid owned partition, give each unassigned partition (topics
 * with the fewest potential members first) to the member with the fewest partitions that can take
 * it, then move partitions from members with more than one above another potential owner until
 * balanced — preferring to move a partition back to its previous owner, and undoing a move of the
 * same topic between the same two members (PartitionMovements). A rebalance that does not lower the
 * balance score is reverted.
 */
export function generalAssign(input: StickyInput, memberData: (s: MemberSubscription) => MemberData, maxGeneration: number): Map<string, TopicPartition[]> {
  return new GeneralAssignmentBuilder(input, memberData, maxGeneration).build();
}

interface ConsumerGenerationPair {
  consumer: string;
  generation: number;
}

class GeneralAssignmentBuilder {
  private readonly partitionCounts: ReadonlyMap<string, number>;
  private readonly subscriptions: ReadonlyMap<string, MemberSubscription>;
  private readonly memberOrder: readonly string[];
  private currentAssignment: Map<string, TopicPartition[]>;
  private readonly totalPartitionsCount: number;
  private readonly topic2AllPotentialConsumers = new Map<string, string[]>();
  private readonly consumer2AllPotentialTopics = new Map<string, string[]>();
  private currentPartitionConsumer = new Map<TopicPartition, string>();
  private readonly sortedAllPartitions: TopicPartition[];
  private readonly sortedCurrentSubscriptions: SortedMembers;
  private readonly movements = new PartitionMovements();
  private revocationRequired = false;

  constructor(
    private readonly input: StickyInput,
    private readonly memberData: (s: MemberSubscription) => MemberData,
    private readonly maxGeneration: number,
  ) {
    this.partitionCounts = input.partitionCounts;
    this.subscriptions = input.subscriptions;
    this.memberOrder = input.memberOrder;
    this.currentAssignment = input.consumerToOwnedPartitions;
    let total = 0;
    for (const n of this.partitionCounts.values()) total += n;
    this.totalPartitionsCount = total;
    for (const topic of this.partitionCounts.keys()) this.topic2AllPotentialConsumers.set(topic, []);
    for (const consumer of this.memberOrder) {
      const topics: string[] = [];
      this.consumer2AllPotentialTopics.set(consumer, topics);
      for (const topic of this.subscriptions.get(consumer)!.topics) {
        if (!this.partitionCounts.has(topic)) continue;
        topics.push(topic);
        this.topic2AllPotentialConsumers.get(topic)!.push(consumer);
      }
      if (!this.currentAssignment.has(consumer)) this.currentAssignment.set(consumer, []);
    }
    for (const [consumer, partitions] of this.currentAssignment) for (const tp of partitions) this.currentPartitionConsumer.set(tp, consumer);
    const sortedAllTopics = [...this.topic2AllPotentialConsumers.keys()].sort((a, b) => this.compareTopics(a, b));
    this.sortedAllPartitions = [];
    for (const topic of sortedAllTopics) for (let i = 0; i < this.partitionCounts.get(topic)!; i++) this.sortedAllPartitions.push(input.registry.get(topic, i));
    this.sortedCurrentSubscriptions = new SortedMembers((c) => this.currentAssignment.get(c)!.length);
  }

  /** TopicComparator: fewer potential consumers first, then by name. */
  private compareTopics(a: string, b: string): number {
    return this.topic2AllPotentialConsumers.get(a)!.length - this.topic2AllPotentialConsumers.get(b)!.length || compareStrings(a, b);
  }

  build(): Map<string, TopicPartition[]> {
    const prevAssignment = new Map<TopicPartition, ConsumerGenerationPair>();
    this.prepopulateCurrentAssignments(prevAssignment);
    const assignedPartitions = this.assignOwnedPartitions();
    const unassignedPartitions = this.getUnassignedPartitions(assignedPartitions);
    for (const c of this.currentAssignment.keys()) this.sortedCurrentSubscriptions.add(c);
    this.balance(prevAssignment, unassignedPartitions);
    return this.currentAssignment;
  }

  /** Partitions of members with an older generation, for moving partitions back where they were. */
  private prepopulateCurrentAssignments(prevAssignment: Map<TopicPartition, ConsumerGenerationPair>): void {
    for (const consumer of this.memberOrder) {
      const md = this.memberData(this.subscriptions.get(consumer)!);
      if (md.generation < this.maxGeneration) {
        for (const tp of md.partitions) {
          const prev = prevAssignment.get(tp);
          if (prev === undefined || md.generation > prev.generation) prevAssignment.set(tp, { consumer, generation: md.generation });
        }
      }
    }
  }

  private assignOwnedPartitions(): TopicPartition[] {
    const assigned: TopicPartition[] = [];
    for (const [consumer, partitions] of this.currentAssignment) {
      const subscription = this.subscriptions.get(consumer);
      if (!subscription) {
        for (const tp of partitions) this.currentPartitionConsumer.delete(tp);
        this.currentAssignment.delete(consumer);
        continue;
      }
      for (let i = 0; i < partitions.length; i++) {
        const tp = partitions[i]!;
        if (!this.topic2AllPotentialConsumers.has(tp.topic)) {
          partitions.splice(i--, 1);
          this.currentPartitionConsumer.delete(tp);
        } else if (!subscription.topics.includes(tp.topic)) {
          partitions.splice(i--, 1);
          this.revocationRequired = true;
        } else {
          assigned.push(tp);
        }
      }
    }
    return assigned;
  }

  private getUnassignedPartitions(sortedAssignedPartitions: TopicPartition[]): TopicPartition[] {
    if (sortedAssignedPartitions.length === 0) return this.sortedAllPartitions;
    sortedAssignedPartitions.sort((a, b) => this.compareTopics(a.topic, b.topic) || a.partition - b.partition);
    const out: TopicPartition[] = [];
    let idx = 0;
    let nextAssigned = sortedAssignedPartitions[idx++]!;
    let shouldAddDirectly = false;
    for (const tp of this.sortedAllPartitions) {
      if (shouldAddDirectly || nextAssigned !== tp) out.push(tp);
      else if (idx < sortedAssignedPartitions.length) nextAssigned = sortedAssignedPartitions[idx++]!;
      else shouldAddDirectly = true;
    }
    return out;
  }

  private sizeOf(consumer: string): number {
    return this.currentAssignment.get(consumer)!.length;
  }

  private getMaxAssignmentSize(topics: readonly string[]): number {
    if (topics.length === this.partitionCounts.size) return this.totalPartitionsCount;
    let n = 0;
    for (const t of topics) n += this.partitionCounts.get(t)!;
    return n;
  }

  private isBalanced(): boolean {
    const min = this.sizeOf(this.sortedCurrentSubscriptions.first()!);
    const max = this.sizeOf(this.sortedCurrentSubscriptions.last()!);
    if (min >= max - 1) return true;
    const allPartitions = new Map<TopicPartition, string>();
    for (const [consumer, partitions] of this.currentAssignment) for (const tp of partitions) allPartitions.set(tp, consumer);
    for (const consumer of this.sortedCurrentSubscriptions.values()) {
      const consumerPartitions = this.currentAssignment.get(consumer)!;
      const count = consumerPartitions.length;
      const topics = this.consumer2AllPotentialTopics.get(consumer)!;
      if (count === this.getMaxAssignmentSize(topics)) continue;
      for (const topic of topics) {
        const n = this.partitionCounts.get(topic)!;
        for (let i = 0; i < n; i++) {
          const tp = this.input.registry.get(topic, i);
          if (consumerPartitions.includes(tp)) continue;
          const other = allPartitions.get(tp);
          if (other !== undefined && count + 1 < this.sizeOf(other)) return false;
        }
      }
    }
    return true;
  }

  private static balanceScore(assignment: ReadonlyMap<string, TopicPartition[]>): number {
    const sizes = [...assignment.values()].map((l) => l.length);
    let score = 0;
    for (let i = 0; i < sizes.length; i++) for (let j = i + 1; j < sizes.length; j++) score += Math.abs(sizes[i]! - sizes[j]!);
    return score;
  }

  private maybeAssignPartition(tp: TopicPartition): void {
    for (const consumer of this.sortedCurrentSubscriptions.values()) {
      if (this.consumer2AllPotentialTopics.get(consumer)!.includes(tp.topic)) {
        this.sortedCurrentSubscriptions.remove(consumer);
        this.currentAssignment.get(consumer)!.push(tp);
        this.currentPartitionConsumer.set(tp, consumer);
        this.sortedCurrentSubscriptions.add(consumer);
        return;
      }
    }
  }

  private canTopicParticipateInReassignment(topic: string): boolean {
    return this.topic2AllPotentialConsumers.get(topic)!.length >= 2;
  }

  private canConsumerParticipateInReassignment(consumer: string): boolean {
    const partitions = this.currentAssignment.get(consumer)!;
    if (partitions.length < this.getMaxAssignmentSize(this.consumer2AllPotentialTopics.get(consumer)!)) return true;
    return partitions.some((tp) => this.canTopicParticipateInReassignment(tp.topic));
  }

  private balance(prevAssignment: ReadonlyMap<TopicPartition, ConsumerGenerationPair>, unassignedPartitions: TopicPartition[]): void {
    const initializing = this.sizeOf(this.sortedCurrentSubscriptions.last()!) === 0;
    for (const tp of unassignedPartitions) {
      if (this.topic2AllPotentialConsumers.get(tp.topic)!.length === 0) continue;
      this.maybeAssignPartition(tp);
    }
    // narrow the reassignment down to partitions and members that can move
    const fixedPartitions = new Set<TopicPartition>();
    for (const topic of this.topic2AllPotentialConsumers.keys()) {
      if (this.canTopicParticipateInReassignment(topic)) continue;
      for (let i = 0; i < this.partitionCounts.get(topic)!; i++) fixedPartitions.add(this.input.registry.get(topic, i));
    }
    removeAllInPlace(this.sortedAllPartitions, fixedPartitions);
    removeAllInPlace(unassignedPartitions, fixedPartitions);
    const fixedAssignments = new Map<string, TopicPartition[]>();
    for (const consumer of this.consumer2AllPotentialTopics.keys()) {
      if (this.canConsumerParticipateInReassignment(consumer)) continue;
      this.sortedCurrentSubscriptions.remove(consumer);
      fixedAssignments.set(consumer, this.currentAssignment.get(consumer)!);
      this.currentAssignment.delete(consumer);
    }
    const preBalanceAssignment = deepCopy(this.currentAssignment);
    const preBalancePartitionConsumers = new Map(this.currentPartitionConsumer);
    // without revocations from subscription changes, first try moving only newly added partitions
    if (!this.revocationRequired) this.performReassignments(unassignedPartitions, prevAssignment);
    const reassignmentPerformed = this.performReassignments(this.sortedAllPartitions, prevAssignment);
    if (
      !initializing &&
      reassignmentPerformed &&
      GeneralAssignmentBuilder.balanceScore(this.currentAssignment) >= GeneralAssignmentBuilder.balanceScore(preBalanceAssignment)
    ) {
      this.currentAssignment.clear();
      for (const [c, l] of preBalanceAssignment) this.currentAssignment.set(c, [...l]);
      this.currentPartitionConsumer = new Map(preBalancePartitionConsumers);
    }
    for (const [consumer, partitions] of fixedAssignments) {
      this.currentAssignment.set(consumer, partitions);
      this.sortedCurrentSubscriptions.add(consumer);
    }
  }

  private performReassignments(
    reassignablePartitions: readonly TopicPartition[],
    prevAssignment: ReadonlyMap<TopicPartition, ConsumerGenerationPair>,
  ): boolean {
    let reassignmentPerformed = false;
    let modified: boolean;
    do {
      modified = false;
      for (let i = 0; i < reassignablePartitions.length && !this.isBalanced(); i++) {
        const tp = reassignablePartitions[i]!;
        const consumer = this.currentPartitionConsumer.get(tp)!;
        const prev = prevAssignment.get(tp);
        // Deviation from Java, which moves the partition back to its previous owner even when that
        // member no longer subscribes to the topic (or was set aside as fixed: a NullPointerException).
        if (prev !== undefined && this.canTake(prev.consumer, tp.topic) && this.sizeOf(consumer) > this.sizeOf(prev.consumer) + 1) {
          this.reassignPartitionTo(tp, prev.consumer);
          reassignmentPerformed = modified = true;
          continue;
        }
        for (const other of this.topic2AllPotentialConsumers.get(tp.topic)!) {
          if (this.sizeOf(consumer) > this.sizeOf(other) + 1) {
            this.reassignPartition(tp);
            reassignmentPerformed = modified = true;
            break;
          }
        }
      }
    } while (modified);
    return reassignmentPerformed;
  }

  private canTake(consumer: string, topic: string): boolean {
    return this.currentAssignment.has(consumer) && this.consumer2AllPotentialTopics.get(consumer)!.includes(topic);
  }

  /** To the member with the fewest partitions that can take it. */
  private reassignPartition(tp: TopicPartition): void {
    for (const c of this.sortedCurrentSubscriptions.values()) {
      if (this.consumer2AllPotentialTopics.get(c)!.includes(tp.topic)) {
        this.reassignPartitionTo(tp, c);
        return;
      }
    }
  }

  private reassignPartitionTo(tp: TopicPartition, newConsumer: string): void {
    const consumer = this.currentPartitionConsumer.get(tp)!;
    const toMove = this.movements.getTheActualPartitionToBeMoved(tp, consumer, newConsumer);
    this.processPartitionMovement(toMove, newConsumer);
  }

  private processPartitionMovement(tp: TopicPartition, newConsumer: string): void {
    const oldConsumer = this.currentPartitionConsumer.get(tp)!;
    this.sortedCurrentSubscriptions.remove(oldConsumer);
    this.sortedCurrentSubscriptions.remove(newConsumer);
    this.movements.movePartition(tp, oldConsumer, newConsumer);
    removeFirst(this.currentAssignment.get(oldConsumer)!, tp);
    this.currentAssignment.get(newConsumer)!.push(tp);
    this.currentPartitionConsumer.set(tp, newConsumer);
    this.sortedCurrentSubscriptions.add(newConsumer);
    this.sortedCurrentSubscriptions.add(oldConsumer);
  }
}

function deepCopy(m: ReadonlyMap<string, TopicPartition[]>): Map<string, TopicPartition[]> {
  const out = new Map<string, TopicPartition[]>();
  for (const [k, v] of m) out.set(k, [...v]);
  return out;
}

function removeAllInPlace(list: TopicPartition[], remove: ReadonlySet<TopicPartition>): void {
  let w = 0;
  for (const x of list) if (!remove.has(x)) list[w++] = x;
  list.length = w;
}

/**
 * A TreeSet of member ids ordered by (partition count, member id), counts read at comparison time
 * (Java's SubscriptionComparator): callers remove a member before its count changes.
 */
class SortedMembers {
  private readonly items: string[] = [];

  constructor(private readonly size: (member: string) => number) {}

  private compare(a: string, b: string): number {
    return this.size(a) - this.size(b) || compareStrings(a, b);
  }

  private search(x: string): { index: number; found: boolean } {
    let lo = 0;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const c = this.compare(this.items[mid]!, x);
      if (c === 0) return { index: mid, found: true };
      if (c < 0) lo = mid + 1;
      else hi = mid;
    }
    return { index: lo, found: false };
  }

  add(x: string): void {
    const { index, found } = this.search(x);
    if (!found) this.items.splice(index, 0, x);
  }

  remove(x: string): void {
    const { index, found } = this.search(x);
    if (found) this.items.splice(index, 1);
  }

  first(): string | undefined {
    return this.items[0];
  }

  last(): string | undefined {
    return this.items[this.items.length - 1];
  }

  values(): readonly string[] {
    return this.items;
  }
}

interface ConsumerPair {
  src: string;
  dst: string;
}

/** Kafka's PartitionMovements: the moves made while balancing, by topic and (source, destination). */
class PartitionMovements {
  private readonly byTopic = new Map<string, Map<string, JavaHashSet<TopicPartition>>>();
  private readonly movements = new Map<TopicPartition, ConsumerPair>();

  private static key(p: ConsumerPair): string {
    return `${p.src}\u0000${p.dst}`;
  }

  private removeMovementRecordOfPartition(tp: TopicPartition): ConsumerPair {
    const pair = this.movements.get(tp)!;
    this.movements.delete(tp);
    const forTopic = this.byTopic.get(tp.topic)!;
    const set = forTopic.get(PartitionMovements.key(pair))!;
    set.delete(tp);
    if (set.size === 0) forTopic.delete(PartitionMovements.key(pair));
    if (forTopic.size === 0) this.byTopic.delete(tp.topic);
    return pair;
  }

  private addPartitionMovementRecord(tp: TopicPartition, pair: ConsumerPair): void {
    this.movements.set(tp, pair);
    let forTopic = this.byTopic.get(tp.topic);
    if (!forTopic) this.byTopic.set(tp.topic, (forTopic = new Map()));
    const k = PartitionMovements.key(pair);
    let set = forTopic.get(k);
    if (!set) forTopic.set(k, (set = new JavaHashSet(topicPartitionHash)));
    set.add(tp);
  }

  movePartition(tp: TopicPartition, oldConsumer: string, newConsumer: string): void {
    if (this.movements.has(tp)) {
      const existing = this.removeMovementRecordOfPartition(tp);
      if (existing.src !== newConsumer) this.addPartitionMovementRecord(tp, { src: existing.src, dst: newConsumer });
    } else {
      this.addPartitionMovementRecord(tp, { src: oldConsumer, dst: newConsumer });
    }
  }

  /** A partition of the same topic already moved the opposite way is moved back instead. */
  getTheActualPartitionToBeMoved(tp: TopicPartition, oldConsumer: string, newConsumer: string): TopicPartition {
    const forTopic = this.byTopic.get(tp.topic);
    if (!forTopic) return tp;
    const moved = this.movements.get(tp);
    const src = moved ? moved.src : oldConsumer;
    const reverse = forTopic.get(PartitionMovements.key({ src: newConsumer, dst: src }));
    if (!reverse) return tp;
    return reverse.first()!;
  }
}
