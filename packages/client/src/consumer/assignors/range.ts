import { compareMembers, subscribedPartitionCounts, toAssignments } from './common.js';
import { defaultCapacityFor, javaHashOrder, javaStringHash } from './java-hash.js';
import {
  RebalanceProtocol,
  type MemberAssignment,
  type MemberSubscription,
  type PartitionAssignor,
  type PartitionsPerTopic,
  type TopicPartition,
} from './types.js';

/**
 * Kafka's RangeAssignor ('range'). Per topic, the members subscribing to it are sorted (group
 * instance id, then member id) and each gets a consecutive range: with n = partitions / members and
 * m = partitions % members, the first m members get n + 1 partitions and the rest n. Topics are
 * assigned independently, so members early in the order get more when counts do not divide.
 * (Java's rack-aware variant needs partition replica racks, which the assignor contract does not
 * carry; without them Java runs this same path.)
 */
export class RangeAssignor implements PartitionAssignor {
  readonly name = 'range';
  readonly supportedProtocols: readonly RebalanceProtocol[] = [RebalanceProtocol.EAGER];

  subscriptionUserData(_topics?: readonly string[]): Buffer | null {
    return null;
  }

  onAssignment(): void {}

  assign(partitionsPerTopic: PartitionsPerTopic, subscriptions: ReadonlyMap<string, MemberSubscription>): Map<string, MemberAssignment> {
    const assignment = new Map<string, TopicPartition[]>();
    for (const memberId of subscriptions.keys()) assignment.set(memberId, []);
    const counts = subscribedPartitionCounts(partitionsPerTopic, subscriptions);
    for (const topic of javaTopicOrder(counts, subscriptions)) {
      const numPartitions = counts.get(topic)!;
      const members = [...subscriptions.values()].filter((s) => s.topics.includes(topic)).sort(compareMembers);
      const perMember = Math.floor(numPartitions / members.length);
      let withExtra = numPartitions % members.length;
      let next = 0;
      for (const m of members) {
        if (next >= numPartitions) break;
        const take = perMember + (withExtra > 0 ? 1 : 0);
        if (take > perMember) withExtra--;
        const list = assignment.get(m.memberId)!;
        for (let i = 0; i < take; i++) list.push({ topic, partition: next++ });
      }
    }
    return toAssignments(subscriptions, assignment);
  }
}

/**
 * The order Java's RangeAssignor visits topics in (so each member's list comes out in Java's order):
 * that of its HashMap of topics, whose keys were first inserted as met going through the members
 * (in HashMap order) and their topics.
 */
function javaTopicOrder(counts: ReadonlyMap<string, number>, subscriptions: ReadonlyMap<string, MemberSubscription>): string[] {
  const firstSeen = new Set<string>();
  for (const id of javaHashOrder([...subscriptions.keys()], javaStringHash)) for (const t of subscriptions.get(id)!.topics) if (counts.has(t)) firstSeen.add(t);
  return javaHashOrder([...firstSeen], javaStringHash, defaultCapacityFor(firstSeen.size));
}
