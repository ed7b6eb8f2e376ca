/**
 * Reading one `__consumer_offsets` partition into memory when this broker becomes its leader (the
 * read half of Kafka's GroupMetadataManager.doLoadGroupsAndOffsets). Offset commits written by
 * transactions (TxnOffsetCommit: transactional batches) stay pending per producer until the
 * producer's COMMIT marker, which makes them committed offsets, or its ABORT marker, which drops
 * them; those still pending at the end of the log belong to open transactions and are handed to
 * their groups as pending transactional commits.
 */
import type { Logger } from 'pino';
import { ControlRecordType, readControlRecordType, recordBatches, TopicPartitionMap } from '@samsa/protocol';
import { olderThan, type CommitRecordMetadataAndOffset } from './pending-txn-offsets.js';
import { decodeGroupMetadataValue, decodeKey, decodeOffsetCommitValue, type StoredGroup } from './records.js';

/** What the loader needs of the partition's log (a part of the coordinator's storage). */
export interface OffsetsPartitionSource {
  logStartOffset(partition: number): bigint | undefined;
  leaderLogEndOffset(partition: number): bigint;
  read(partition: number, offset: bigint, maxBytes: number): Promise<Buffer>;
}

type OffsetsByGroup = Map<string, TopicPartitionMap<CommitRecordMetadataAndOffset>>;

export interface LoadedPartition {
  partition: number;
  /** Committed offsets per group. */
  offsets: OffsetsByGroup;
  /** Offsets of transactions still open at the end of the log: producer id → group → offsets. */
  pendingTxnOffsets: Map<bigint, OffsetsByGroup>;
  groups: Map<string, StoredGroup>;
  removedGroups: Set<string>;
  offsetCount: number;
}

function offsetsOf(m: OffsetsByGroup, group: string): TopicPartitionMap<CommitRecordMetadataAndOffset> {
  let o = m.get(group);
  if (!o) {
    o = new TopicPartitionMap();
    m.set(group, o);
  }
  return o;
}

/** Reads the partition from its log start to the leader's log end, `loadBufferSize` bytes at a time. */
export async function readOffsetsPartition(
  source: OffsetsPartitionSource,
  partition: number,
  loadBufferSize: number,
  shuttingDown: () => boolean,
  log: Logger,
): Promise<LoadedPartition> {
  const out: LoadedPartition = { partition, offsets: new Map(), pendingTxnOffsets: new Map(), groups: new Map(), removedGroups: new Set(), offsetCount: 0 };
  let curr = source.logStartOffset(partition);
  if (curr === undefined) {
    log.warn({ partition }, 'attempted to load offsets and group metadata but found no log');
    return out;
  }
  let readOne = true;
  while (curr < source.leaderLogEndOffset(partition) && readOne && !shuttingDown()) {
    const buf = await source.read(partition, curr, loadBufferSize);
    const before = curr;
    for (const batch of recordBatches(buf)) {
      if (batch.isControl) {
        const [marker] = batch.toArray();
        if (marker) {
          if (readControlRecordType(marker.key) === ControlRecordType.COMMIT) {
            for (const [group, offsets] of out.pendingTxnOffsets.get(batch.producerId) ?? []) {
              if (out.removedGroups.has(group)) continue;
              const committed = offsetsOf(out.offsets, group);
              for (const [tp, c] of offsets.entries()) {
                const cur = committed.get(tp.topic, tp.partition);
                if (!cur || olderThan(cur, c)) committed.set(tp.topic, tp.partition, c);
              }
            }
          }
          out.pendingTxnOffsets.delete(batch.producerId);
        }
        curr = batch.nextOffset;
        continue;
      }
      const base = batch.baseOffset;
      const txn = batch.isTransactional;
      for (const record of batch) {
        if (!record.key) throw new Error('Group metadata/offset entry key should not be null');
        const key = decodeKey(record.key);
        if (key.type === 'offset') {
          let target: OffsetsByGroup = out.offsets;
          if (txn) {
            let p = out.pendingTxnOffsets.get(batch.producerId);
            if (!p) {
              p = new Map();
              out.pendingTxnOffsets.set(batch.producerId, p);
            }
            target = p;
          }
          const m = offsetsOf(target, key.group);
          if (record.value === null) m.delete(key.topic, key.partition);
          else m.set(key.topic, key.partition, { appendedBatchOffset: base, offsetAndMetadata: decodeOffsetCommitValue(record.value) });
        } else if (key.type === 'group') {
          if (record.value === null) {
            out.groups.delete(key.group);
            out.removedGroups.add(key.group);
          } else {
            out.removedGroups.delete(key.group);
            out.groups.set(key.group, decodeGroupMetadataValue(record.value));
          }
        } else {
          log.warn({ partition, version: key.version }, 'unknown message key version while loading offsets and group metadata; ignoring it');
        }
      }
      curr = batch.nextOffset;
    }
    // nothing (or no whole batch) was read: the end of the log
    readOne = curr > before;
  }
  for (const m of out.offsets.values()) out.offsetCount += m.size;
  return out;
}
