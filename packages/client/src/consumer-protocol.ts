import { Reader, Writer } from '@samsa/protocol';
import type { MemberAssignment, MemberSubscription, TopicPartition } from './consumer/assignors/types.js';

/**
 * The consumer protocol's embedded formats (Kafka's ConsumerProtocolSubscription and
 * ConsumerProtocolAssignment, versions 0–3, never flexible): the bytes group members exchange
 * through JoinGroup / SyncGroup and that DescribeGroups returns as member metadata and member
 * assignment. Each starts with an int16 version.
 *
 *   Subscription: Topics [string] (0+), UserData nullable bytes (0+),
 *                 OwnedPartitions [Topic string, Partitions [int32]] (1+), GenerationId int32 (2+,
 *                 default -1), RackId nullable string (3+, default null)
 *   Assignment:   AssignedPartitions [Topic string, Partitions [int32]] (0+), UserData nullable bytes (0+)
 *
 * Decoding follows Kafka's ConsumerProtocol: a version above 3 is read as version 3 (later versions
 * only append fields), bytes after the last known field are ignored, a truncated field throws. One
 * leniency beyond Java: a body that ends cleanly before a field its version declares (KafkaJS
 * custom assigners send v1 headers on v0 bodies) gets that field's default instead of an error.
 */

/** The protocol type of groups using the consumer protocol. */
export const CONSUMER_PROTOCOL_TYPE = 'consumer';
/** The highest ConsumerProtocolSubscription / ConsumerProtocolAssignment version (Kafka 3.x). */
export const CONSUMER_PROTOCOL_HIGHEST_VERSION = 3;

export interface TopicPartitions {
  topic: string;
  partitions: number[];
}

/** ConsumerProtocolSubscription as on the wire. */
export interface ConsumerProtocolSubscription {
  /** The version the bytes carry (may exceed 3; read as 3). */
  version: number;
  topics: string[];
  userData: Buffer | null;
  /** v1+ */
  ownedPartitions: TopicPartitions[];
  /** v2+; -1 when absent. */
  generationId: number;
  /** v3+; null when absent. */
  rackId: string | null;
}

/** ConsumerProtocolAssignment as on the wire. */
export interface ConsumerProtocolAssignment {
  version: number;
  assignedPartitions: TopicPartitions[];
  userData: Buffer | null;
}

function readVersion(r: Reader, what: string): number {
  const version = r.readInt16();
  if (version < 0) r.fail(`Unsupported ${what} version: ${version}`, 0);
  return version;
}

function readTopicPartitionsArray(r: Reader): TopicPartitions[] {
  const n = r.readArrayLength(6, false);
  const out: TopicPartitions[] = [];
  for (let i = 0; i < n; i++) {
    const topic = r.readString();
    const k = r.readArrayLength(4, false);
    const partitions: number[] = [];
    for (let j = 0; j < k; j++) partitions.push(r.readInt32());
    out.push({ topic, partitions });
  }
  return out;
}

function writeTopicPartitionsArray(w: Writer, tps: readonly TopicPartitions[]): void {
  w.writeArrayLength(tps.length);
  for (const tp of tps) {
    w.writeString(tp.topic);
    w.writeArrayLength(tp.partitions.length);
    for (const p of tp.partitions) w.writeInt32(p);
  }
}

function copyOrNull(b: Buffer | null): Buffer | null {
  return b === null ? null : Buffer.from(b);
}

function checkWriteVersion(version: number, what: string): number {
  if (!Number.isInteger(version) || version < 0) throw new RangeError(`Unsupported ${what} version: ${version}`);
  return Math.min(version, CONSUMER_PROTOCOL_HIGHEST_VERSION);
}

/** Reads a ConsumerProtocolSubscription (Kafka's deserializeConsumerProtocolSubscription). Throws on truncated input. */
export function readConsumerProtocolSubscription(bytes: Buffer): ConsumerProtocolSubscription {
  const r = new Reader(bytes);
  const version = readVersion(r, 'subscription');
  const n = r.readArrayLength(2, false);
  const topics: string[] = [];
  for (let i = 0; i < n; i++) topics.push(r.readString());
  const out: ConsumerProtocolSubscription = { version, topics, userData: null, ownedPartitions: [], generationId: -1, rackId: null };
  if (r.remaining === 0) return out;
  out.userData = copyOrNull(r.readNullableBytes());
  if (version >= 1 && r.remaining > 0) out.ownedPartitions = readTopicPartitionsArray(r);
  if (version >= 2 && r.remaining > 0) out.generationId = r.readInt32();
  if (version >= 3 && r.remaining > 0) out.rackId = r.readNullableString();
  return out;
}

/**
 * Writes a ConsumerProtocolSubscription at `version` (default 3; above 3 writes 3, as Kafka does).
 * Fields the version cannot carry are left out (they are all ignorable). Fields are written as given.
 */
export function writeConsumerProtocolSubscription(
  data: Omit<ConsumerProtocolSubscription, 'version'>,
  version: number = CONSUMER_PROTOCOL_HIGHEST_VERSION,
): Buffer {
  const v = checkWriteVersion(version, 'subscription');
  const w = new Writer();
  w.writeInt16(v);
  w.writeArrayLength(data.topics.length);
  for (const t of data.topics) w.writeString(t);
  w.writeNullableBytes(data.userData);
  if (v >= 1) writeTopicPartitionsArray(w, data.ownedPartitions);
  if (v >= 2) w.writeInt32(data.generationId);
  if (v >= 3) w.writeNullableString(data.rackId);
  return Buffer.from(w.finish());
}

/** Reads a ConsumerProtocolAssignment (Kafka's deserializeConsumerProtocolAssignment). Throws on truncated input. */
export function readConsumerProtocolAssignment(bytes: Buffer): ConsumerProtocolAssignment {
  const r = new Reader(bytes);
  const version = readVersion(r, 'assignment');
  const assignedPartitions = readTopicPartitionsArray(r);
  const userData = r.remaining > 0 ? copyOrNull(r.readNullableBytes()) : null;
  return { version, assignedPartitions, userData };
}

/** Writes a ConsumerProtocolAssignment at `version` (default 3; the layout is the same in every version). */
export function writeConsumerProtocolAssignment(
  data: Omit<ConsumerProtocolAssignment, 'version'>,
  version: number = CONSUMER_PROTOCOL_HIGHEST_VERSION,
): Buffer {
  const w = new Writer();
  w.writeInt16(checkWriteVersion(version, 'assignment'));
  writeTopicPartitionsArray(w, data.assignedPartitions);
  w.writeNullableBytes(data.userData);
  return Buffer.from(w.finish());
}

function compareTp(a: TopicPartition, b: TopicPartition): number {
  return a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition;
}

/** Groups partitions by topic in order of first appearance (Kafka's serializeAssignment). */
function groupInOrder(partitions: readonly TopicPartition[]): TopicPartitions[] {
  const byTopic = new Map<string, number[]>();
  for (const tp of partitions) {
    let ps = byTopic.get(tp.topic);
    if (!ps) byTopic.set(tp.topic, (ps = []));
    ps.push(tp.partition);
  }
  return [...byTopic].map(([topic, ps]) => ({ topic, partitions: ps }));
}

function flatten(tps: readonly TopicPartitions[]): TopicPartition[] {
  const out: TopicPartition[] = [];
  for (const t of tps) for (const partition of t.partitions) out.push({ topic: t.topic, partition });
  return out;
}

/** What a member puts in its JoinGroup protocol metadata. */
export interface SubscriptionToSend {
  topics: readonly string[];
  userData: Buffer | null;
  ownedPartitions: readonly TopicPartition[];
  /** -1 when the member has no generation. */
  generationId: number;
  rackId: string | null;
}

/**
 * A member's subscription bytes, as Kafka's ConsumerProtocol.serializeSubscription builds them:
 * topics sorted, owned partitions sorted by topic and partition and grouped by topic.
 */
export function serializeSubscription(sub: SubscriptionToSend, version: number = CONSUMER_PROTOCOL_HIGHEST_VERSION): Buffer {
  const owned = [...sub.ownedPartitions].sort(compareTp);
  return writeConsumerProtocolSubscription(
    { topics: [...sub.topics].sort(), userData: sub.userData, ownedPartitions: groupInOrder(owned), generationId: sub.generationId, rackId: sub.rackId },
    version,
  );
}

/**
 * A JoinGroup member's metadata as the leader hands it to its assignor (Kafka's
 * deserializeSubscription plus the member's ids): owned partitions flattened, an empty rack id as null.
 */
export function deserializeSubscription(bytes: Buffer, memberId: string, groupInstanceId: string | null = null): MemberSubscription {
  const s = readConsumerProtocolSubscription(bytes);
  return {
    memberId,
    groupInstanceId,
    topics: s.topics,
    userData: s.userData,
    ownedPartitions: flatten(s.ownedPartitions),
    generationId: s.generationId,
    rackId: s.rackId === null || s.rackId === '' ? null : s.rackId,
  };
}

/** A member's assignment bytes for SyncGroup (Kafka's serializeAssignment: grouped by topic in order of appearance). */
export function serializeAssignment(assignment: MemberAssignment, version: number = CONSUMER_PROTOCOL_HIGHEST_VERSION): Buffer {
  return writeConsumerProtocolAssignment({ assignedPartitions: groupInOrder(assignment.partitions), userData: assignment.userData }, version);
}

/** A SyncGroup assignment, flattened. Empty bytes (a member the leader left out) decode to no partitions. */
export function deserializeAssignment(bytes: Buffer): MemberAssignment {
  if (bytes.length === 0) return { partitions: [], userData: null };
  const a = readConsumerProtocolAssignment(bytes);
  return { partitions: flatten(a.assignedPartitions), userData: a.userData };
}

// ---- the original v0-shaped helpers (admin describeGroups, the CLI, tests) ----

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

/** Decodes a member's subscription (JoinGroup protocol metadata), any version. Throws on truncated input. */
export function decodeConsumerSubscription(bytes: Buffer): ConsumerSubscription {
  const s = readConsumerProtocolSubscription(bytes);
  return { version: s.version, topics: s.topics, userData: s.userData };
}

/** Decodes a member's assignment (SyncGroup), any version; empty bytes (no assignment yet) decode to no partitions. */
export function decodeConsumerAssignment(bytes: Buffer): ConsumerAssignment {
  if (bytes.length === 0) return { version: 0, partitions: [], userData: null };
  const a = readConsumerProtocolAssignment(bytes);
  const partitions = a.assignedPartitions.map((t) => ({ topic: t.topic, partitions: [...t.partitions].sort((x, y) => x - y) }));
  partitions.sort((x, y) => (x.topic < y.topic ? -1 : x.topic > y.topic ? 1 : 0));
  return { version: a.version, partitions, userData: a.userData };
}

/** Encodes a v0 subscription (for tests and simple group members). */
export function encodeConsumerSubscription(topics: readonly string[], userData: Buffer | null = null): Buffer {
  return writeConsumerProtocolSubscription({ topics: [...topics], userData, ownedPartitions: [], generationId: -1, rackId: null }, 0);
}

/** Encodes a v0 assignment. */
export function encodeConsumerAssignment(partitions: readonly TopicPartitions[], userData: Buffer | null = null): Buffer {
  return writeConsumerProtocolAssignment({ assignedPartitions: [...partitions], userData }, 0);
}
