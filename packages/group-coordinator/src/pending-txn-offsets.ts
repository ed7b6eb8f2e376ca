/**
 * A group's transactional offset commits (TxnOffsetCommit, KIP-98) that wait for their
 * transaction's marker: Kafka's GroupMetadata.pendingTransactionalOffsetCommits. A commit is
 * prepared before its record is written, learns its log position once the write is replicated,
 * and is moved into the group's committed offsets when the COMMIT marker reaches the offsets
 * partition (dropped on ABORT). Until then OffsetFetch with require_stable answers
 * UNSTABLE_OFFSET_COMMIT for the partition.
 */
import { topicPartitionKey, TopicPartitionMap, type TopicPartition } from '@samsa/protocol';
import type { OffsetAndMetadata } from './records.js';

/** A commit and where its record sits in the offsets partition (null until the write succeeded). */
export interface CommitRecordMetadataAndOffset {
  appendedBatchOffset: bigint | null;
  offsetAndMetadata: OffsetAndMetadata;
}

/** Kafka's CommitRecordMetadataAndOffset.olderThan: by log position of the records. */
export function olderThan(a: CommitRecordMetadataAndOffset, b: CommitRecordMetadataAndOffset): boolean {
  return (a.appendedBatchOffset ?? -1n) < (b.appendedBatchOffset ?? -1n);
}

export class PendingTxnOffsetCommits {
  private readonly byProducer = new Map<bigint, TopicPartitionMap<CommitRecordMetadataAndOffset>>();

  /** Registers commits about to be written by `producerId`'s transaction. */
  prepare(producerId: bigint, offsets: ReadonlyArray<[TopicPartition, OffsetAndMetadata]>): void {
    let m = this.byProducer.get(producerId);
    if (!m) {
      m = new TopicPartitionMap();
      this.byProducer.set(producerId, m);
    }
    for (const [tp, o] of offsets) m.set(tp.topic, tp.partition, { appendedBatchOffset: null, offsetAndMetadata: o });
  }

  /** Installs commits read from the log (their transaction still open when the load ended). */
  initialize(producerId: bigint, offsets: Iterable<[TopicPartition, CommitRecordMetadataAndOffset]>): void {
    let m = this.byProducer.get(producerId);
    if (!m) {
      m = new TopicPartitionMap();
      this.byProducer.set(producerId, m);
    }
    for (const [tp, c] of offsets) m.set(tp.topic, tp.partition, c);
  }

  /** The commit's record was replicated: remember where (only if it is still the pending one). */
  onAppend(producerId: bigint, tp: TopicPartition, c: CommitRecordMetadataAndOffset): void {
    const m = this.byProducer.get(producerId);
    const pending = m?.get(tp.topic, tp.partition);
    // the partition may have emigrated meanwhile, or a newer commit replaced this one
    if (m && pending && pending.offsetAndMetadata === c.offsetAndMetadata) m.set(tp.topic, tp.partition, c);
  }

  /** The commit's write failed: forget it. */
  fail(producerId: bigint, tp: TopicPartition): void {
    const m = this.byProducer.get(producerId);
    if (!m) return;
    m.delete(tp.topic, tp.partition);
    if (m.size === 0) this.byProducer.delete(producerId);
  }

  /**
   * The transaction's marker was written: removes its commits and returns them when it committed
   * (empty on abort). Throws when a committed commit's own record never reached the log (Kafka's
   * IllegalStateException: the marker cannot precede the record it completes).
   */
  complete(producerId: bigint, isCommit: boolean, groupId: string): Array<[TopicPartition, CommitRecordMetadataAndOffset]> {
    const m = this.byProducer.get(producerId);
    this.byProducer.delete(producerId);
    if (!m || !isCommit) return [];
    const out = [...m.entries()];
    for (const [tp, c] of out) {
      if (c.appendedBatchOffset === null) {
        throw new Error(
          `Trying to complete a transactional offset commit for producerId ${producerId} and groupId ${groupId} (${topicPartitionKey(tp)}) even though the offset commit record itself hasn't been appended to the log.`,
        );
      }
    }
    return out;
  }

  hasFromProducer(producerId: bigint): boolean {
    return this.byProducer.has(producerId);
  }

  hasForTopicPartition(tp: TopicPartition): boolean {
    for (const m of this.byProducer.values()) if (m.has(tp.topic, tp.partition)) return true;
    return false;
  }

  remove(tp: TopicPartition): void {
    for (const [pid, m] of this.byProducer) {
      m.delete(tp.topic, tp.partition);
      if (m.size === 0) this.byProducer.delete(pid);
    }
  }

  get size(): number {
    return this.byProducer.size;
  }

  /** Producer ids with commits waiting (for DescribeGroups-style introspection and tests). */
  producerIds(): bigint[] {
    return [...this.byProducer.keys()];
  }
}
