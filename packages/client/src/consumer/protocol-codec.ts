/**
 * The consumer's side of the embedded consumer protocol, over consumer-protocol.ts: it sends its
 * subscription as v3 like the Java client (v0 fields, then ownedPartitions, generationId, rackId —
 * librdkafka and KafkaJS read the fields they know), reads members' subscriptions of any version,
 * and sends / reads assignments.
 */
import { compareTopicPartitions } from '@samsa/protocol';
import { deserializeAssignment, deserializeSubscription, serializeAssignment, serializeSubscription, type SubscriptionToSend } from '../consumer-protocol.js';
import type { MemberAssignment, MemberSubscription } from './assignors/types.js';

export type OwnSubscription = SubscriptionToSend;

export function encodeSubscription(s: OwnSubscription): Buffer {
  return serializeSubscription(s);
}

export function decodeSubscription(memberId: string, groupInstanceId: string | null, bytes: Buffer): MemberSubscription {
  return deserializeSubscription(bytes, memberId, groupInstanceId);
}

export function encodeAssignment(a: MemberAssignment): Buffer {
  return serializeAssignment(a);
}

export function decodeAssignment(bytes: Buffer): MemberAssignment {
  const a = deserializeAssignment(bytes);
  return { partitions: [...a.partitions].sort(compareTopicPartitions), userData: a.userData };
}
