/**
 * Consumer lag as the group coordinator sees it: per group and partition, the partition's high
 * watermark minus the group's committed offset. Computed at scrape time from local data only: a
 * partition this broker does not lead has no end offset here and is skipped (its leader's
 * coordinator-less view cannot help either), so a group's lag is complete when the coordinator
 * leads the partitions its group consumes, and partial otherwise.
 */
export interface CommittedOffset {
  topic: string;
  partition: number;
  offset: bigint;
}

export interface GroupOffsets {
  groupId: string;
  offsets: Iterable<CommittedOffset>;
}

export interface LagSample {
  group: string;
  topic: string;
  partition: number;
  lag: number;
}

/** `endOffset` answers the high watermark of partitions this broker leads, else undefined. */
export function consumerLag(groups: Iterable<GroupOffsets>, endOffset: (topic: string, partition: number) => bigint | undefined): LagSample[] {
  const out: LagSample[] = [];
  for (const g of groups) {
    for (const o of g.offsets) {
      const end = endOffset(o.topic, o.partition);
      if (end === undefined) continue;
      // a committed offset of -1 (none) or past the end (truncated log) counts as no lag
      const lag = o.offset < 0n || o.offset > end ? 0n : end - o.offset;
      out.push({ group: g.groupId, topic: o.topic, partition: o.partition, lag: Number(lag) });
    }
  }
  return out;
}
