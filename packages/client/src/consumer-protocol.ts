import { Reader, Writer } from '@samsa/protocol';

/**
 * The consumer protocol's embedded formats (Kafka's ConsumerProtocolSubscription and
 * ConsumerProtocolAssignment): the bytes group members exchange through JoinGroup / SyncGroup and
 * that DescribeGroups returns as member metadata and member assignment. Every version starts with
 * the v0 fields, so decoding reads those and ignores what later versions append.
 */

/** The protocol type of groups using the consumer protocol. */
export const CONSUMER_PROTOCOL_TYPE = 'consumer';

export interface TopicPartitions {
  topic: string;
  partitions: number[];
}

export interface ConsumerSubscription {
  version: number;
  topics: string[];
  userData: Buffer | null;
}

export interface ConsumerAssignment {
  version: number;
  /** Sorted by topic, partitions ascending. */
  partitions: TopicPartitions[];
  userData: Buffer | null;
}

/** Decodes a member's subscription (JoinGroup protocol metadata). Throws on truncated input. */
export function decodeConsumerSubscription(bytes: Buffer): ConsumerSubscription {
  const r = new Reader(bytes);
  const version = r.readInt16();
  const n = r.readArrayLength(2, false);
  const topics: string[] = [];
  for (let i = 0; i < n; i++) topics.push(r.readString());
  const userData = r.offset < r.end ? r.readNullableBytes() : null;
  return { version, topics, userData };
}

/** Decodes a member's assignment (SyncGroup); empty bytes (no assignment yet) decode to no partitions. */
export function decodeConsumerAssignment(bytes: Buffer): ConsumerAssignment {
  if (bytes.length === 0) return { version: 0, partitions: [], userData: null };
  const r = new Reader(bytes);
  const version = r.readInt16();
  const n = r.readArrayLength(6, false);
  const partitions: TopicPartitions[] = [];
  for (let i = 0; i < n; i++) {
    const topic = r.readString();
    const k = r.readArrayLength(4, false);
    const ps: number[] = [];
    for (let j = 0; j < k; j++) ps.push(r.readInt32());
    partitions.push({ topic, partitions: ps.sort((a, b) => a - b) });
  }
  const userData = r.offset < r.end ? r.readNullableBytes() : null;
  partitions.sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : 0));
  return { version, partitions, userData };
}

/** Encodes a v0 subscription (for tests and simple group members). */
export function encodeConsumerSubscription(topics: readonly string[], userData: Buffer | null = null): Buffer {
  const w = new Writer();
  w.writeInt16(0);
  w.writeArrayLength(topics.length);
  for (const t of topics) w.writeString(t);
  w.writeNullableBytes(userData);
  return Buffer.from(w.finish());
}

/** Encodes a v0 assignment. */
export function encodeConsumerAssignment(partitions: readonly TopicPartitions[], userData: Buffer | null = null): Buffer {
  const w = new Writer();
  w.writeInt16(0);
  w.writeArrayLength(partitions.length);
  for (const tp of partitions) {
    w.writeString(tp.topic);
    w.writeArrayLength(tp.partitions.length);
    for (const p of tp.partitions) w.writeInt32(p);
  }
  w.writeNullableBytes(userData);
  return Buffer.from(w.finish());
}
