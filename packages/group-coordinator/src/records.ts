/**
 * The records the group coordinator keeps in `__consumer_offsets`, byte for byte as Kafka writes
 * them (version-prefixed, Kafka's generated OffsetCommitKey/Value and GroupMetadataKey/Value
 * schemas), so Kafka's tools could read a Samsa offsets topic and the other way round:
 *
 *   OffsetCommitKey   v0/v1: group string, topic string, partition int32
 *   GroupMetadataKey  v2:    group string
 *   OffsetCommitValue v0: offset int64, metadata string, commitTimestamp int64
 *                     v1: + expireTimestamp int64 (after commitTimestamp)
 *                     v2: as v0
 *                     v3: offset, leaderEpoch int32, metadata, commitTimestamp
 *                     v4: v3, flexible (compact strings, tagged fields)
 *   GroupMetadataValue v0: protocolType, generation int32, protocol?, leader?, members[memberId,
 *                          clientId, clientHost, sessionTimeout, subscription bytes, assignment bytes]
 *                      v1: + member rebalanceTimeout (before sessionTimeout)
 *                      v2: + currentStateTimestamp int64 (before members)
 *                      v3: + member groupInstanceId? (after memberId)
 *                      v4: v3, flexible
 *
 * Kafka writes key v1 / GroupMetadataKey v2 and the value versions its inter.broker.protocol.version
 * allows (GroupMetadataManager.groupMetadataValue / offsetCommitValue): GroupMetadataValue v0 before
 * 0.10.1, v1 before 2.1, v2 before 2.3, else v3; OffsetCommitValue v1 before 2.1 (and whenever an
 * explicit expire timestamp is set), v2 before 2.1-IV1, else v3. So does Samsa (see
 * config/metadata-version.ts), so older tools (Burrow 1.2 reads up to v2) can decode them. A null
 * value is a tombstone.
 */
import { Reader, Writer } from '@samsa/protocol';

export interface OffsetAndMetadata {
  committedOffset: bigint;
  /** -1: none. */
  leaderEpoch: number;
  metadata: string;
  commitTimestampMs: number;
  /** Only from OffsetCommit v2–v4 with a retention time (or records written that way). */
  expireTimestampMs: number | null;
}

export interface StoredMember {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  rebalanceTimeoutMs: number;
  sessionTimeoutMs: number;
  subscription: Buffer;
  assignment: Buffer;
}

export interface StoredGroup {
  protocolType: string;
  generation: number;
  protocol: string | null;
  leader: string | null;
  /** -1: unknown (records before v2). */
  currentStateTimestamp: number;
  members: StoredMember[];
}

export type CoordinatorKey =
  | { type: 'offset'; version: number; group: string; topic: string; partition: number }
  | { type: 'group'; version: number; group: string }
  | { type: 'unknown'; version: number };

export const OFFSET_COMMIT_KEY_VERSION = 1;
export const GROUP_METADATA_KEY_VERSION = 2;

export function encodeOffsetCommitKey(group: string, topic: string, partition: number): Buffer {
  const w = new Writer(8 + Buffer.byteLength(group) + Buffer.byteLength(topic));
  w.writeInt16(OFFSET_COMMIT_KEY_VERSION);
  w.writeString(group);
  w.writeString(topic);
  w.writeInt32(partition);
  return w.toBuffer();
}

export function encodeGroupMetadataKey(group: string): Buffer {
  const w = new Writer(4 + Buffer.byteLength(group));
  w.writeInt16(GROUP_METADATA_KEY_VERSION);
  w.writeString(group);
  return w.toBuffer();
}

export function decodeKey(buf: Buffer): CoordinatorKey {
  const r = new Reader(buf);
  const version = r.readInt16();
  if (version === 0 || version === 1) {
    return { type: 'offset', version, group: r.readString(), topic: r.readString(), partition: r.readInt32() };
  }
  if (version === 2) return { type: 'group', version, group: r.readString() };
  return { type: 'unknown', version };
}

/** Value versions Samsa writes: 0–3 for group metadata, 1–3 for offset commits. */
export type GroupMetadataValueVersion = 0 | 1 | 2 | 3;
export type OffsetCommitValueVersion = 1 | 2 | 3;

/**
 * OffsetCommitValue at `version` (3 by default); a commit with an explicit expire timestamp is
 * always v1, as Kafka writes it. v1 without one carries expireTimestamp -1.
 */
export function encodeOffsetCommitValue(o: OffsetAndMetadata, version: OffsetCommitValueVersion = 3): Buffer {
  const v = o.expireTimestampMs !== null ? 1 : version;
  const w = new Writer(40 + Buffer.byteLength(o.metadata));
  w.writeInt16(v);
  w.writeInt64(o.committedOffset);
  if (v >= 3) w.writeInt32(o.leaderEpoch);
  w.writeString(o.metadata);
  w.writeInt64(BigInt(o.commitTimestampMs));
  if (v === 1) w.writeInt64(BigInt(o.expireTimestampMs ?? -1));
  return w.toBuffer();
}

export function decodeOffsetCommitValue(buf: Buffer): OffsetAndMetadata {
  const r = new Reader(buf);
  const version = r.readInt16();
  if (version < 0 || version > 4) throw new Error(`Unknown offset message version: ${version}`);
  const flexible = version >= 4;
  const committedOffset = r.readInt64();
  const leaderEpoch = version >= 3 ? r.readInt32() : -1;
  const metadata = flexible ? r.readCompactString() : r.readString();
  const commitTimestampMs = Number(r.readInt64());
  const expire = version === 1 ? Number(r.readInt64()) : -1;
  if (flexible) r.skipTaggedFields();
  return { committedOffset, leaderEpoch, metadata, commitTimestampMs, expireTimestampMs: expire === -1 ? null : expire };
}

/**
 * GroupMetadataValue at `version` (3 by default): v0 has no member rebalance timeout, v0–v1 no
 * currentStateTimestamp, v0–v2 no member groupInstanceId (Kafka's GroupMetadataValue schema).
 */
export function encodeGroupMetadataValue(g: StoredGroup, version: GroupMetadataValueVersion = 3): Buffer {
  const w = new Writer(256);
  w.writeInt16(version);
  w.writeString(g.protocolType);
  w.writeInt32(g.generation);
  w.writeNullableString(g.protocol);
  w.writeNullableString(g.leader);
  if (version >= 2) w.writeInt64(BigInt(g.currentStateTimestamp));
  w.writeArrayLength(g.members.length);
  for (const m of g.members) {
    w.writeString(m.memberId);
    if (version >= 3) w.writeNullableString(m.groupInstanceId);
    w.writeString(m.clientId);
    w.writeString(m.clientHost);
    if (version >= 1) w.writeInt32(m.rebalanceTimeoutMs);
    w.writeInt32(m.sessionTimeoutMs);
    w.writeBytes(m.subscription);
    w.writeBytes(m.assignment);
  }
  return w.toBuffer();
}

export function decodeGroupMetadataValue(buf: Buffer): StoredGroup {
  const r = new Reader(buf);
  const version = r.readInt16();
  if (version < 0 || version > 4) throw new Error(`Unknown group metadata message version: ${version}`);
  const flexible = version >= 4;
  const str = () => (flexible ? r.readCompactString() : r.readString());
  const nstr = () => (flexible ? r.readCompactNullableString() : r.readNullableString());
  const bytes = () => Buffer.from(flexible ? r.readCompactBytes() : r.readBytes());
  const protocolType = str();
  const generation = r.readInt32();
  const protocol = nstr();
  const leader = nstr();
  const currentStateTimestamp = version >= 2 ? Number(r.readInt64()) : -1;
  const n = flexible ? r.readCompactArrayLength(1, false) : r.readArrayLength(1, false);
  const members: StoredMember[] = [];
  for (let i = 0; i < n; i++) {
    const memberId = str();
    const groupInstanceId = version >= 3 ? nstr() : null;
    const clientId = str();
    const clientHost = str();
    const rebalanceTimeout = version >= 1 ? r.readInt32() : -1;
    const sessionTimeoutMs = r.readInt32();
    const subscription = bytes();
    const assignment = bytes();
    if (flexible) r.skipTaggedFields();
    // v0 has no rebalance timeout: Kafka uses the session timeout
    members.push({
      memberId,
      groupInstanceId,
      clientId,
      clientHost,
      rebalanceTimeoutMs: version === 0 ? sessionTimeoutMs : rebalanceTimeout,
      sessionTimeoutMs,
      subscription,
      assignment,
    });
  }
  if (flexible) r.skipTaggedFields();
  return { protocolType, generation, protocol, leader, currentStateTimestamp, members };
}

/**
 * The consumer protocol's subscription topics (ConsumerProtocolSubscription, read with its v0
 * prefix as Kafka does: version int16, topics [string]); null when the bytes do not parse.
 */
export function subscriptionTopics(metadata: Buffer): string[] | null {
  try {
    const r = new Reader(metadata);
    r.readInt16();
    const n = r.readArrayLength(2, false);
    const topics: string[] = [];
    for (let i = 0; i < n; i++) topics.push(r.readString());
    return topics;
  } catch {
    return null;
  }
}

/** The consumer protocol's assignment (ConsumerProtocolAssignment v0 prefix): topic → partitions; null when unparsable. */
export function assignmentPartitions(assignment: Buffer): Array<{ topic: string; partitions: number[] }> | null {
  if (assignment.length === 0) return [];
  try {
    const r = new Reader(assignment);
    r.readInt16();
    const n = r.readArrayLength(6, false);
    const out: Array<{ topic: string; partitions: number[] }> = [];
    for (let i = 0; i < n; i++) {
      const topic = r.readString();
      const k = r.readArrayLength(4, false);
      const partitions: number[] = [];
      for (let j = 0; j < k; j++) partitions.push(r.readInt32());
      out.push({ topic, partitions });
    }
    return out;
  } catch {
    return null;
  }
}
