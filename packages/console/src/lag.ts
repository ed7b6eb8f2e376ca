/**
 * Consumer lag as kafka-consumer-groups.sh computes it: per partition, high watermark − committed
 * offset, for partitions the group committed or is assigned; unknown when either side is missing.
 */
import type { MemberView, PartitionLag } from './state.js';

export interface CommittedEntry {
  topic: string;
  partition: number;
  /** −1: nothing committed. */
  offset: bigint | number;
}

const key = (topic: string, partition: number) => `${topic}\u0000${partition}`;

/** Lag of one partition; null when either offset is unknown, never negative. */
export function partitionLag(committed: number | null, endOffset: number | null): number | null {
  if (committed === null || endOffset === null || committed < 0) return null;
  return Math.max(0, endOffset - committed);
}

/**
 * Rows for a group: every assigned partition (with its member) and every committed partition,
 * sorted by topic then partition; `endOffsets` is keyed by `lagKey(topic, partition)`.
 */
export function groupLag(
  committed: readonly CommittedEntry[],
  members: readonly MemberView[],
  endOffsets: ReadonlyMap<string, number>,
): { partitions: PartitionLag[]; totalLag: number } {
  const rows = new Map<string, PartitionLag>();
  const row = (topic: string, partition: number): PartitionLag => {
    const k = key(topic, partition);
    let r = rows.get(k);
    if (!r) {
      r = { topic, partition, committed: null, endOffset: endOffsets.get(k) ?? null, lag: null, memberId: null, clientId: null };
      rows.set(k, r);
    }
    return r;
  };
  for (const m of members) {
    for (const a of m.assignment) {
      for (const p of a.partitions) {
        const r = row(a.topic, p);
        r.memberId = m.memberId;
        r.clientId = m.clientId;
      }
    }
  }
  for (const c of committed) {
    const offset = Number(c.offset);
    if (offset < 0 && !rows.has(key(c.topic, c.partition))) continue;
    row(c.topic, c.partition).committed = offset < 0 ? null : offset;
  }
  let totalLag = 0;
  for (const r of rows.values()) {
    r.lag = partitionLag(r.committed, r.endOffset);
    if (r.lag !== null) totalLag += r.lag;
  }
  const partitions = [...rows.values()].sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition));
  return { partitions, totalLag };
}

/** The key of `endOffsets` for groupLag. */
export const lagKey = key;
