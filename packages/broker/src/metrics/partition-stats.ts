/**
 * The ReplicaManager gauges (Kafka's LeaderCount, PartitionCount, UnderReplicatedPartitions,
 * UnderMinIsrPartitionCount, AtMinIsrPartitionCount), computed at scrape time from the partitions
 * this broker hosts. Only a partition's leader reports it under-replicated or under min ISR, as in
 * Kafka, so a cluster-wide sum counts each partition once.
 */
export interface PartitionView {
  isLeader: boolean;
  isr: readonly number[];
  replicas: readonly number[];
  /** min.insync.replicas of the partition's topic. */
  minIsr: number;
}

export interface ReplicaStats {
  partitionCount: number;
  leaderCount: number;
  underReplicated: number;
  underMinIsr: number;
  atMinIsr: number;
}

export function replicaStats(partitions: Iterable<PartitionView>): ReplicaStats {
  const s: ReplicaStats = { partitionCount: 0, leaderCount: 0, underReplicated: 0, underMinIsr: 0, atMinIsr: 0 };
  for (const p of partitions) {
    s.partitionCount++;
    if (!p.isLeader) continue;
    s.leaderCount++;
    if (p.isr.length < p.replicas.length) s.underReplicated++;
    if (p.isr.length < p.minIsr) s.underMinIsr++;
    else if (p.isr.length === p.minIsr) s.atMinIsr++;
  }
  return s;
}
