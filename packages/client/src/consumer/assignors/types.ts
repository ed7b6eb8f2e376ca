/**
 * The contract between the consumer's group coordinator and its partition assignors (Kafka's
 * ConsumerPartitionAssignor). The group leader runs `assign` over every member's subscription; each
 * member then receives its `MemberAssignment` through SyncGroup and calls `onAssignment`.
 */

import type { TopicPartition } from '@samsa/protocol';

/** Kafka's RebalanceProtocol: EAGER revokes everything before a rebalance, COOPERATIVE only what moves. */
export const RebalanceProtocol = { EAGER: 'EAGER', COOPERATIVE: 'COOPERATIVE' } as const;
export type RebalanceProtocol = (typeof RebalanceProtocol)[keyof typeof RebalanceProtocol];

export type { TopicPartition };

/** One member's subscription as the leader sees it (ConsumerProtocolSubscription v0–v3). */
export interface MemberSubscription {
  memberId: string;
  /** KIP-345 static membership id, when the member has one; assignors sort by it before memberId. */
  groupInstanceId: string | null;
  topics: string[];
  userData: Buffer | null;
  /** v1+: partitions the member owns now (cooperative and sticky use them). */
  ownedPartitions: TopicPartition[];
  /** v2+: the generation the owned partitions belong to; -1 when unknown. */
  generationId: number;
  /** v3+ */
  rackId: string | null;
}

export interface MemberAssignment {
  partitions: TopicPartition[];
  userData: Buffer | null;
}

/** The group's view of the cluster the leader assigns over: partition count per subscribed topic. */
export type PartitionsPerTopic = ReadonlyMap<string, number>;

export interface PartitionAssignor {
  /** The protocol name on the wire: 'range', 'roundrobin', 'sticky', 'cooperative-sticky'. */
  readonly name: string;
  /** Protocols supported, preferred first; COOPERATIVE only for cooperative-sticky. */
  readonly supportedProtocols: readonly RebalanceProtocol[];
  /** User data to put in this member's subscription (sticky: its previous assignment). */
  subscriptionUserData(topics: readonly string[]): Buffer | null;
  /** Runs on the group leader only. Must return an entry for every member, even an empty one. */
  assign(partitionsPerTopic: PartitionsPerTopic, subscriptions: ReadonlyMap<string, MemberSubscription>): Map<string, MemberAssignment>;
  /** Called on every member when SyncGroup delivers its assignment. */
  onAssignment(assignment: MemberAssignment, generationId: number): void;
}
