/**
 * The producer's topic metadata: partitions and leaders of the topics it sends to, fetched from the
 * least loaded broker, refreshed every metadata.max.age.ms and whenever a send hits a stale leader
 * (NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION, lost connections).
 */
import { API_KEYS, ErrorCode, KafkaError, ZERO_UUID } from '@samsa/protocol';
import type { Cluster } from '../cluster.js';
import type { Logger } from '../logger.js';
import type { TopicPartitionInfo } from './types.js';

export interface TopicMetadata {
  partitions: TopicPartitionInfo[];
  /** Error of the last lookup (UNKNOWN_TOPIC_OR_PARTITION while auto-creation is pending). */
  errorCode: number;
}

export class ProducerMetadata {
  private readonly topics = new Map<string, TopicMetadata>();
  private readonly wanted = new Set<string>();
  private updatedAt = 0;
  private stale = false;
  private inflight: Promise<void> | undefined;
  private suspect: number | undefined;

  constructor(
    private readonly cluster: Cluster,
    private readonly maxAgeMs: number,
    private readonly log: Logger,
  ) {}

  get(topic: string): TopicMetadata | undefined {
    return this.topics.get(topic);
  }

  leaderFor(topic: string, partition: number): number {
    return this.topics.get(topic)?.partitions[partition]?.leader ?? -1;
  }

  /**
   * Asks for a refresh; `failedNode` is the broker whose answer (an error, a timeout) prompted it:
   * the refresh then asks another broker when there is one, since a leader that lost its partitions
   * without knowing (cut off from ZooKeeper: the controller no longer updates it) still claims them.
   */
  requestUpdate(failedNode?: number): void {
    this.stale = true;
    if (failedNode !== undefined) this.suspect = failedNode;
  }

  get needsUpdate(): boolean {
    return this.stale || Date.now() - this.updatedAt >= this.maxAgeMs;
  }

  /** One Metadata request for the topics in use (and `extra`); concurrent callers share it. */
  refresh(extra?: string): Promise<void> {
    if (extra) this.wanted.add(extra);
    this.inflight ??= this.fetch().finally(() => (this.inflight = undefined));
    return this.inflight;
  }

  private async fetch(): Promise<void> {
    const names = [...this.wanted];
    this.stale = false;
    const suspect = this.suspect;
    this.suspect = undefined;
    try {
      const others = (this.cluster.metadata?.brokers ?? []).filter((b) => b.nodeId !== suspect);
      const conn =
        suspect !== undefined && others.length > 0
          ? await this.cluster.connectionTo(others[Math.floor(Math.random() * others.length)]!.nodeId).catch(() => this.cluster.anyConnection())
          : await this.cluster.anyConnection();
      const res = await conn.send(API_KEYS.Metadata, () => ({
        topics: names.map((name) => ({ name, topicId: ZERO_UUID })),
        allowAutoTopicCreation: true,
        includeClusterAuthorizedOperations: false,
        includeTopicAuthorizedOperations: false,
      }));
      for (const t of res.topics) {
        if (t.name === null) continue;
        const known = this.topics.get(t.name);
        let older = false;
        const partitions = [...t.partitions]
          .sort((a, b) => a.partitionIndex - b.partitionIndex)
          .map((p) => {
            const fresh = { partition: p.partitionIndex, leader: p.errorCode === ErrorCode.LEADER_NOT_AVAILABLE ? -1 : p.leaderId, leaderEpoch: p.leaderEpoch };
            // KIP-320: a broker with stale metadata (e.g. a leader cut off from ZooKeeper, which the
            // controller no longer updates) must not take us back to an older leader epoch
            const cached = known?.partitions[p.partitionIndex];
            if (cached && cached.leaderEpoch >= 0 && fresh.leaderEpoch >= 0 && fresh.leaderEpoch < cached.leaderEpoch) {
              older = true;
              return cached;
            }
            return fresh;
          });
        this.topics.set(t.name, { partitions, errorCode: t.errorCode });
        if (older) this.log.debug({ topic: t.name }, 'metadata with an older leader epoch ignored');
        if (t.errorCode !== 0 || partitions.some((p) => p.leader < 0)) this.stale = true;
      }
      // brokers the cluster does not know yet get picked up by its own refresh
      if (res.brokers.some((b) => !this.cluster.metadata?.brokers.some((k) => k.nodeId === b.nodeId))) await this.cluster.refreshMetadata();
      this.updatedAt = Date.now();
    } catch (err) {
      this.stale = true;
      this.log.debug({ err: (err as Error).message }, 'metadata refresh failed');
      throw err;
    }
  }

  /** Partitions of `topic`, fetching metadata until they are known or max.block.ms passes. */
  async waitOnMetadata(topic: string, maxBlockMs: number, retryBackoffMs: number): Promise<TopicPartitionInfo[]> {
    const deadline = Date.now() + maxBlockMs;
    let lastError: unknown;
    for (;;) {
      const t = this.topics.get(topic);
      if (t && t.partitions.length > 0) return t.partitions;
      if (this.cluster.isClosed)
        throw new KafkaError('UNKNOWN_SERVER_ERROR', `Producer closed while waiting for the metadata of topic ${topic}`, { cause: lastError });
      if (Date.now() >= deadline) {
        throw new KafkaError('REQUEST_TIMED_OUT', `Topic ${topic} not present in metadata after ${maxBlockMs} ms.`, { cause: lastError });
      }
      try {
        await this.refresh(topic);
      } catch (err) {
        lastError = err;
      }
      const again = this.topics.get(topic);
      if (!again || again.partitions.length === 0) await new Promise((r) => setTimeout(r, Math.min(retryBackoffMs, Math.max(0, deadline - Date.now()))));
    }
  }
}
