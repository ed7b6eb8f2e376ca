import { topicPartitionKey } from '@samsa/protocol';
import type { Logger } from 'pino';
import { ReplicaFetcher, type FetcherOptions } from './replica-fetcher.js';
import type { Partition } from './partition.js';

export interface LeaderEndpoint {
  brokerId: number;
  host: string;
  port: number;
}

/**
 * Kafka's ReplicaFetcherManager: num.replica.fetchers fetchers per source broker; a partition is
 * fetched by the fetcher `hash(topic, partition) % n` of its leader.
 */
export class ReplicaFetcherManager {
  private readonly fetchers = new Map<string, ReplicaFetcher>();
  private readonly assigned = new Map<string, string>();

  constructor(
    private readonly o: FetcherOptions & { numFetchers: number },
    private readonly log: Logger,
  ) {}

  private fetcherId(topic: string, partition: number): number {
    let h = 0;
    for (let i = 0; i < topic.length; i++) h = (Math.imul(31, h) + topic.charCodeAt(i)) | 0;
    return Math.abs(31 * h + partition) % Math.max(1, this.o.numFetchers);
  }

  addPartition(partition: Partition, leader: LeaderEndpoint, leaderEpoch: number): void {
    const key = topicPartitionKey(partition);
    this.removePartition(key);
    const fkey = `${leader.brokerId}-${leader.host}:${leader.port}-${this.fetcherId(partition.topic, partition.partition)}`;
    let f = this.fetchers.get(fkey);
    if (!f) {
      f = new ReplicaFetcher(leader.brokerId, leader.host, leader.port, this.o, this.log.child({ fetcher: fkey }));
      this.fetchers.set(fkey, f);
      f.start();
    }
    f.addPartition(key, partition, leaderEpoch);
    this.assigned.set(key, fkey);
  }

  /** Kafka's addFetcherForPartitions: the followers of one LeaderAndIsr, at once. */
  addPartitions(list: ReadonlyArray<{ partition: Partition; leader: LeaderEndpoint; leaderEpoch: number }>): void {
    for (const x of list) this.addPartition(x.partition, x.leader, x.leaderEpoch);
  }

  /** Kafka's removeFetcherForPartitions. */
  removePartitions(keys: readonly string[]): void {
    for (const k of keys) this.removePartition(k);
  }

  removePartition(key: string): void {
    const fkey = this.assigned.get(key);
    if (!fkey) return;
    this.assigned.delete(key);
    const f = this.fetchers.get(fkey);
    f?.removePartition(key);
    if (f && f.size === 0) {
      this.fetchers.delete(fkey);
      void f.stop();
    }
  }

  async shutdown(): Promise<void> {
    const all = [...this.fetchers.values()];
    this.fetchers.clear();
    this.assigned.clear();
    await Promise.all(all.map((f) => f.stop()));
  }
}
