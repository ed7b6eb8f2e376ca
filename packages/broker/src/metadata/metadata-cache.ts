/**
 * The broker's view of cluster metadata (Kafka's MetadataCache, ZooKeeper mode): replaced and
 * amended only by the controller's UpdateMetadata requests; read by Metadata, DescribeCluster,
 * FindCoordinator and the produce/fetch paths.
 */
import type { PartitionState } from '@samsa/protocol';

export interface MetadataEndpoint {
  listener: string;
  host: string;
  port: number;
  securityProtocol: string;
}

export interface MetadataBroker {
  id: number;
  endpoints: MetadataEndpoint[];
  rack: string | null;
}

/**
 * A partition as the cache holds it: the fields of the controller's partition state (the control
 * plane's PartitionState, as UpdateMetadata carries it) that metadata answers need, under the same names.
 */
export type MetadataPartition = Pick<
  PartitionState,
  'topic' | 'partition' | 'leader' | 'leaderEpoch' | 'isr' | 'replicas' | 'offlineReplicas' | 'zkVersion' | 'controllerEpoch'
>;

/** Kafka's LeaderAndIsr.LeaderDuringDelete: UpdateMetadata carries it for topics being deleted. */
export const LEADER_DURING_DELETE = -2;

export interface UpdateMetadata {
  controllerId: number;
  controllerEpoch: number;
  brokers: MetadataBroker[];
  partitions: Array<MetadataPartition & { topicId: string }>;
}

export class MetadataCache {
  private brokers = new Map<number, MetadataBroker>();
  private readonly topics = new Map<string, Map<number, MetadataPartition>>();
  private readonly topicIds = new Map<string, string>();
  private readonly topicNames = new Map<string, string>();
  controllerId = -1;
  controllerEpoch = -1;
  /** Bumped on every update; waiters (CreateTopics) compare it. */
  version = 0;
  private readonly listeners = new Set<() => void>();

  /** Applies an UpdateMetadata: brokers are replaced, partitions upserted, deleted topics removed. */
  update(u: UpdateMetadata): string[] {
    this.controllerId = u.controllerId;
    this.controllerEpoch = u.controllerEpoch;
    this.brokers = new Map(u.brokers.map((b) => [b.id, b]));
    const deleted = new Set<string>();
    for (const p of u.partitions) {
      if (p.leader === LEADER_DURING_DELETE) {
        const m = this.topics.get(p.topic);
        m?.delete(p.partition);
        if (m && m.size === 0) deleted.add(p.topic);
        continue;
      }
      let m = this.topics.get(p.topic);
      if (!m) {
        m = new Map();
        this.topics.set(p.topic, m);
      }
      const { topicId, ...state } = p;
      m.set(p.partition, state);
      if (topicId) {
        this.topicIds.set(p.topic, topicId);
        this.topicNames.set(topicId, p.topic);
      }
    }
    for (const t of deleted) {
      this.topics.delete(t);
      const id = this.topicIds.get(t);
      if (id) this.topicNames.delete(id);
      this.topicIds.delete(t);
    }
    this.version++;
    for (const l of this.listeners) l();
    return [...deleted];
  }

  /** Called after every update (used to complete requests waiting for metadata). */
  onUpdate(l: () => void): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  aliveBrokers(): MetadataBroker[] {
    return [...this.brokers.values()].sort((a, b) => a.id - b.id);
  }

  aliveBroker(id: number): MetadataBroker | undefined {
    return this.brokers.get(id);
  }

  isBrokerAlive(id: number): boolean {
    return this.brokers.has(id);
  }

  /** The endpoint of broker `id` on listener `listener` (clients get addresses of the listener they used). */
  endpoint(id: number, listener: string): MetadataEndpoint | undefined {
    return this.brokers.get(id)?.endpoints.find((e) => e.listener === listener);
  }

  allTopics(): string[] {
    return [...this.topics.keys()].sort();
  }

  hasTopic(topic: string): boolean {
    return this.topics.has(topic);
  }

  partitions(topic: string): MetadataPartition[] {
    const m = this.topics.get(topic);
    return m ? [...m.values()].sort((a, b) => a.partition - b.partition) : [];
  }

  partition(topic: string, partition: number): MetadataPartition | undefined {
    return this.topics.get(topic)?.get(partition);
  }

  partitionCount(topic: string): number {
    return this.topics.get(topic)?.size ?? 0;
  }

  topicId(topic: string): string | undefined {
    return this.topicIds.get(topic);
  }

  topicName(topicId: string): string | undefined {
    return this.topicNames.get(topicId);
  }

  leader(topic: string, partition: number): number {
    return this.partition(topic, partition)?.leader ?? -1;
  }
}
