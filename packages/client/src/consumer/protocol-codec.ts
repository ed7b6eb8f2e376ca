/**
 * The consumer's side of the embedded consumer protocol: what it puts in JoinGroup (its
 * subscription, v1 with the partitions it owns so cooperative and sticky assignors can use them)
 * and how it reads members' subscriptions and its assignment. Every version starts with the v0
 * fields; later fields are read when present (librdkafka and KafkaJS members send v0/v1, Java v3).
 */
import { Reader, Writer } from '@samsa/protocol';
import type { MemberAssignment, MemberSubscription, TopicPartition } from './assignors/types.js';
import { compareTp } from './types.js';

export interface OwnSubscription {
  topics: readonly string[];
  userData: Buffer | null;
  ownedPartitions: readonly TopicPartition[];
  generationId: number;
  rackId: string | null;
}

function groupPartitions(tps: readonly TopicPartition[]): Map<string, number[]> {
  const m = new Map<string, number[]>();
  for (const tp of [...tps].sort(compareTp)) {
    const l = m.get(tp.topic) ?? [];
    l.push(tp.partition);
    m.set(tp.topic, l);
  }
  return m;
}

function writeTopicPartitions(w: Writer, tps: readonly TopicPartition[]): void {
  const m = groupPartitions(tps);
  w.writeArrayLength(m.size);
  for (const [topic, ps] of m) {
    w.writeString(topic);
    w.writeArrayLength(ps.length);
    for (const p of ps) w.writeInt32(p);
  }
}

function readTopicPartitions(r: Reader): TopicPartition[] {
  const out: TopicPartition[] = [];
  const n = r.readArrayLength(6, false);
  for (let i = 0; i < n; i++) {
    const topic = r.readString();
    const k = r.readArrayLength(4, false);
    for (let j = 0; j < k; j++) out.push({ topic, partition: r.readInt32() });
  }
  return out;
}

/** ConsumerProtocolSubscription v1 (v0 fields + ownedPartitions). */
export function encodeSubscription(s: OwnSubscription): Buffer {
  const w = new Writer();
  w.writeInt16(1);
  w.writeArrayLength(s.topics.length);
  for (const t of [...s.topics].sort()) w.writeString(t);
  w.writeNullableBytes(s.userData);
  writeTopicPartitions(w, s.ownedPartitions);
  return Buffer.from(w.finish());
}

export function decodeSubscription(memberId: string, groupInstanceId: string | null, bytes: Buffer): MemberSubscription {
  const r = new Reader(bytes);
  const version = r.readInt16();
  const n = r.readArrayLength(2, false);
  const topics: string[] = [];
  for (let i = 0; i < n; i++) topics.push(r.readString());
  const more = () => r.offset < r.end;
  const userData = more() ? r.readNullableBytes() : null;
  const ownedPartitions = version >= 1 && more() ? readTopicPartitions(r) : [];
  const generationId = version >= 2 && more() ? r.readInt32() : -1;
  const rackId = version >= 3 && more() ? r.readNullableString() : null;
  return { memberId, groupInstanceId, topics, userData, ownedPartitions, generationId, rackId };
}

/** ConsumerProtocolAssignment v0 (the v1 fields are what v0 has). */
export function encodeAssignment(a: MemberAssignment): Buffer {
  const w = new Writer();
  w.writeInt16(0);
  writeTopicPartitions(w, a.partitions);
  w.writeNullableBytes(a.userData);
  return Buffer.from(w.finish());
}

export function decodeAssignment(bytes: Buffer): MemberAssignment {
  if (bytes.length === 0) return { partitions: [], userData: null };
  const r = new Reader(bytes);
  r.readInt16();
  const partitions = readTopicPartitions(r);
  const userData = r.offset < r.end ? r.readNullableBytes() : null;
  return { partitions: partitions.sort(compareTp), userData };
}
