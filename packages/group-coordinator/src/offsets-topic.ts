/**
 * The `__consumer_offsets` topic: its name, the partition a group maps to (Kafka's
 * `Utils.abs(groupId.hashCode) % offsets.topic.num.partitions`, with Java's String.hashCode) and
 * the topic configs the group coordinator creates it with.
 */
import { javaStringHashCode, kafkaAbs } from '@samsa/server-common';

export const GROUP_METADATA_TOPIC_NAME = '__consumer_offsets';

/** The `__consumer_offsets` partition holding a group's offsets and metadata (and so its coordinator). */
export function partitionForGroup(groupId: string, partitionCount: number): number {
  return kafkaAbs(javaStringHashCode(groupId)) % partitionCount;
}

/**
 * Kafka's GroupCoordinator.offsetsTopicConfigs: compacted, offsets.topic.segment.bytes segments,
 * and compression.type=producer (batches are stored as the coordinator writes them).
 */
export function offsetsTopicConfigs(segmentBytes: number): Record<string, string> {
  return {
    'cleanup.policy': 'compact',
    'segment.bytes': String(segmentBytes),
    'compression.type': 'producer',
  };
}

/**
 * The replication factor `__consumer_offsets` is created with: offsets.topic.replication.factor,
 * capped at the number of live brokers (what Kafka before 0.11 did; Kafka 0.11+ refuses and keeps
 * answering COORDINATOR_NOT_AVAILABLE until enough brokers are up).
 */
export function offsetsTopicReplicationFactor(configured: number, liveBrokers: number): number {
  return Math.max(1, Math.min(configured, liveBrokers));
}
