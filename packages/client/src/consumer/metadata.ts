/**
 * The consumer's topic metadata: partition leaders and leader epochs of the topics it needs
 * (subscribed, assigned, and — on the group leader — every member's topics), or of every topic
 * while a pattern subscription is active. Refreshed every metadata.max.age.ms and on demand
 * (NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH, lost connections, new topics).
 */
import { API_KEYS, ErrorCode, ZERO_UUID } from '@samsa/protocol';
import type { Cluster } from '../cluster.js';
import type { Logger } from '../logger.js';

export interface PartitionMeta {
  partition: number;
  /** -1: no leader now. */
  leader: number;
  leaderEpoch: number;
}

export interface TopicMeta {
  name: string;
  isInternal: boolean;
  errorCode: number;
  /** Sorted by partition. */
  partitions: PartitionMeta[];
}

export class ConsumerMetadata {
  private topics = new Map<string, TopicMeta>();
  private updatedAt = 0;
  private stale = true;
  private inflight: Promise<void> | undefined;
  /** Bumped on every successful refresh. */
  version = 0;

  constructor(
    private readonly cluster: Cluster,
    private readonly maxAgeMs: number,
    private readonly allowAutoCreate: boolean,
    private readonly log: Logger,
  ) {}

  topic(name: string): TopicMeta | undefined {
    return this.topics.get(name);
  }

  allTopics(): TopicMeta[] {
    return [...this.topics.values()];
  }

  partitionCount(topic: string): number {
    const t = this.topics.get(topic);
    return t && t.errorCode === ErrorCode.NONE ? t.partitions.length : 0;
  }

  leaderOf(topic: string, partition: number): PartitionMeta | undefined {
    return this.topics.get(topic)?.partitions.find((p) => p.partition === partition);
  }

  requestUpdate(): void {
    this.stale = true;
  }

  get needsUpdate(): boolean {
    return this.stale || Date.now() - this.updatedAt >= this.maxAgeMs;
  }

  /** One Metadata request for `topics` (null: every topic); concurrent callers share it. */
  refresh(topics: readonly string[] | null): Promise<void> {
    this.inflight ??= this.fetch(topics).finally(() => (this.inflight = undefined));
    return this.inflight;
  }

  private async fetch(names: readonly string[] | null): Promise<void> {
    this.stale = false;
    try {
      const conn = await this.cluster.anyConnection();
      const res = await conn.send(API_KEYS.Metadata, (v) => ({
        topics: names === null ? (v === 0 ? [] : null) : names.map((name) => ({ name, topicId: ZERO_UUID })),
        allowAutoTopicCreation: v < 4 ? true : this.allowAutoCreate,
        includeClusterAuthorizedOperations: false,
        includeTopicAuthorizedOperations: false,
      }));
      const next = names === null ? new Map<string, TopicMeta>() : new Map(this.topics);
      for (const t of res.topics) {
        if (t.name === null) continue;
        const partitions = [...t.partitions]
          .sort((a, b) => a.partitionIndex - b.partitionIndex)
          .map((p) => ({ partition: p.partitionIndex, leader: p.errorCode === ErrorCode.LEADER_NOT_AVAILABLE ? -1 : p.leaderId, leaderEpoch: p.leaderEpoch }));
        next.set(t.name, { name: t.name, isInternal: t.isInternal, errorCode: t.errorCode, partitions });
        if (t.errorCode === ErrorCode.LEADER_NOT_AVAILABLE || partitions.some((p) => p.leader < 0)) this.stale = true;
      }
      this.topics = next;
      if (res.brokers.some((b) => !this.cluster.metadata?.brokers.some((k) => k.nodeId === b.nodeId))) await this.cluster.refreshMetadata();
      this.updatedAt = Date.now();
      this.version++;
    } catch (err) {
      this.stale = true;
      this.log.debug({ err: (err as Error).message }, 'metadata refresh failed');
      throw err;
    }
  }
}
