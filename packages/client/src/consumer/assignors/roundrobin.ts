import { compareMembers, subscribedPartitionCounts, toAssignments } from './common.js';
import {
  RebalanceProtocol,
  type MemberAssignment,
  type MemberSubscription,
  type PartitionAssignor,
  type PartitionsPerTopic,
  type TopicPartition,
} from './types.js';

/**
 * Kafka's RoundRobinAssignor ('roundrobin'). All partitions of all subscribed topics, sorted by topic
 * then partition, are dealt to the sorted members (group instance id, then member id) in a circle;
 * a member not subscribed to a partition's topic is skipped. Balanced when all members subscribe to
 * the same topics; with different subscriptions it can be lopsided, exactly as in Java.
 */
export class RoundRobinAssignor implements PartitionAssignor {
  readonly name = 'roundrobin';
  readonly supportedProtocols: readonly RebalanceProtocol[] = [RebalanceProtocol.EAGER];

  subscriptionUserData(_topics?: readonly string[]): Buffer | null {
    return null;
  }

  onAssignment(): void {}

  assign(partitionsPerTopic: PartitionsPerTopic, subscriptions: ReadonlyMap<string, MemberSubscription>): Map<string, MemberAssignment> {
    const assignment = new Map<string, TopicPartition[]>();
    for (const memberId of subscriptions.keys()) assignment.set(memberId, []);
    const members = [...subscriptions.values()].sort(compareMembers);
    let cursor = 0;
    // subscribedPartitionCounts yields the topics sorted, like Java's TreeSet
    for (const [topic, numPartitions] of subscribedPartitionCounts(partitionsPerTopic, subscriptions)) {
      for (let partition = 0; partition < numPartitions; partition++) {
        while (!members[cursor]!.topics.includes(topic)) cursor = (cursor + 1) % members.length;
        assignment.get(members[cursor]!.memberId)!.push({ topic, partition });
        cursor = (cursor + 1) % members.length;
      }
    }
    return toAssignments(subscriptions, assignment);
  }
}
