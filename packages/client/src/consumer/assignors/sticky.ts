import { Reader, Writer } from '@samsa/protocol';
import { AbstractStickyAssignor, DEFAULT_GENERATION, type MemberData } from './abstract-sticky.js';
import { defaultCapacityFor, javaHashOrder, javaStringHash } from './java-hash.js';
import { RebalanceProtocol, type MemberAssignment, type MemberSubscription, type TopicPartition } from './types.js';

/**
 * Kafka's StickyAssignor ('sticky', eager): the sticky algorithm (abstract-sticky.ts) with each
 * member's previous assignment and generation carried in its subscription's user data, because an
 * eager member revokes everything before it rejoins and so reports no owned partitions.
 *
 * User data (StickyAssignor's ConsumerUserData schema; librdkafka's cooperative-sticky writes it too):
 *   v1: previous_assignment [topic string, partitions [int32]], generation int32
 *   v0: previous_assignment only
 * Reading tries v1, then v0; unreadable user data counts as no previous assignment.
 */
export class StickyAssignor extends AbstractStickyAssignor {
  readonly name = 'sticky';
  readonly supportedProtocols: readonly RebalanceProtocol[] = [RebalanceProtocol.EAGER];
  private memberAssignment: TopicPartition[] | null = null;
  private generation = DEFAULT_GENERATION;

  onAssignment(assignment: MemberAssignment, generationId: number): void {
    this.memberAssignment = assignment.partitions.map((tp) => ({ topic: tp.topic, partition: tp.partition }));
    this.generation = generationId;
  }

  subscriptionUserData(): Buffer | null {
    if (this.memberAssignment === null) return null;
    return serializeStickyUserData({ partitions: this.memberAssignment, generation: this.generation });
  }

  protected memberData(subscription: MemberSubscription): MemberData {
    const userData = subscription.userData;
    if (userData === null || userData.length === 0) return { partitions: [], generation: DEFAULT_GENERATION };
    return deserializeStickyUserData(userData);
  }
}

/**
 * StickyAssignor user data v1, as Java's serializeTopicPartitionAssignment writes it: partitions
 * grouped by topic, topics in the order of Java's HashMap (CollectionUtils.groupPartitionsByTopic).
 * A generation of -1 (none) is still written, as Java's Optional.of(-1) is.
 */
export function serializeStickyUserData(data: MemberData): Buffer {
  const byTopic = new Map<string, number[]>();
  for (const tp of data.partitions) {
    let ps = byTopic.get(tp.topic);
    if (!ps) byTopic.set(tp.topic, (ps = []));
    ps.push(tp.partition);
  }
  const w = new Writer();
  // groupPartitionsByTopic fills its HashMap with computeIfAbsent
  const topics = javaHashOrder([...byTopic.keys()], javaStringHash, defaultCapacityFor(byTopic.size), true);
  w.writeArrayLength(topics.length);
  for (const topic of topics) {
    const ps = byTopic.get(topic)!;
    w.writeString(topic);
    w.writeArrayLength(ps.length);
    for (const p of ps) w.writeInt32(p);
  }
  w.writeInt32(data.generation);
  return Buffer.from(w.finish());
}

function readPreviousAssignment(r: Reader): TopicPartition[] {
  const partitions: TopicPartition[] = [];
  const n = r.readArrayLength(6, false);
  for (let i = 0; i < n; i++) {
    const topic = r.readString();
    const k = r.readArrayLength(4, false);
    for (let j = 0; j < k; j++) partitions.push({ topic, partition: r.readInt32() });
  }
  return partitions;
}

/** Reads StickyAssignor user data: v1, else v0 (no generation), else nothing with generation -1. */
export function deserializeStickyUserData(userData: Buffer): MemberData {
  try {
    const r = new Reader(userData);
    const partitions = readPreviousAssignment(r);
    return { partitions, generation: r.readInt32() };
  } catch {
    try {
      return { partitions: readPreviousAssignment(new Reader(userData)), generation: DEFAULT_GENERATION };
    } catch {
      return { partitions: [], generation: DEFAULT_GENERATION };
    }
  }
}
