/**
 * KafkaConsumer: `subscribe(topics | RegExp, listener)` with group management or `assign(partitions)`,
 * then a poll loop — `poll(timeoutMs)` joins / rejoins the group when needed, commits
 * automatically (enable.auto.commit, every auto.commit.interval.ms), looks up or resets positions
 * (committed offsets, auto.offset.reset) and returns up to max.poll.records records. Heartbeats
 * run on a timer of their own; not calling poll() within max.poll.interval.ms makes the member
 * leave the group. Offsets: commitSync / commitAsync, seek, seekToBeginning / seekToEnd,
 * position, committed; flow control: pause / resume.
 *
 * Differences from the Java client: calls are async; when poll()'s timeout runs out during a
 * rebalance the rebalance continues in the background, so the listener may then run between
 * polls rather than inside one.
 */
import { KafkaError, topicPartitionKey } from '@samsa/protocol';
import { Cluster } from '../cluster.js';
import { silentLogger, type Logger } from '../logger.js';
import { createAssignors } from './assignor-registry.js';
import type { PartitionAssignor } from './assignors/types.js';
import { resolveConsumerConfig, type ConsumerConfig, type ConsumerConfigInput } from './config.js';
import { ConsumerCoordinator } from './consumer-coordinator.js';
import { Fetcher, type FetchStats } from './fetcher.js';
import { ConsumerInterceptorChain, type ConsumerInterceptor } from './interceptors.js';
import { ConsumerMetadata } from './metadata.js';
import { ConsumerOffsets, type OffsetMap } from './offsets.js';
import { FetchState, SubscriptionState, SubscriptionType } from './subscription-state.js';
import {
  bufferDeserializer,
  type ConsumerRebalanceListener,
  type ConsumerRecord,
  type Deserializer,
  type OffsetAndMetadata,
  type TopicPartition,
} from './types.js';

export interface OffsetToCommit extends TopicPartition {
  /** The offset of the next record to consume. */
  offset: bigint | number;
  leaderEpoch?: number;
  metadata?: string;
}

/** Thrown by a poll() interrupted by wakeup() (Kafka's WakeupException). */
export class WakeupError extends Error {
  constructor() {
    super('The consumer was woken up');
    this.name = 'WakeupError';
  }
}

const TIMED_OUT = Symbol('timed out');

/** `p` or TIMED_OUT after `ms`; a rejection of `p` after the timeout is swallowed (the caller retries). */
async function within<T>(p: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  p.catch(() => undefined);
  if (ms <= 0) return Promise.race([p, Promise.resolve(TIMED_OUT)]);
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<typeof TIMED_OUT>((r) => (timer = setTimeout(() => r(TIMED_OUT), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

export class Consumer<K = Buffer | null, V = Buffer | null> {
  readonly config: ConsumerConfig;
  readonly assignors: readonly PartitionAssignor[];
  private readonly cluster: Cluster;
  private readonly log: Logger;
  private readonly subs: SubscriptionState;
  private readonly metadata: ConsumerMetadata;
  private readonly coordinator: ConsumerCoordinator | null;
  private readonly fetcher: Fetcher<K, V>;
  private readonly offsets: ConsumerOffsets<K, V>;
  private readonly interceptors: ConsumerInterceptorChain<K, V>;
  private listener: ConsumerRebalanceListener | undefined;
  private polling = false;
  private wakeupRequested = false;
  private closed = false;

  constructor(input: ConsumerConfigInput) {
    const cfg = resolveConsumerConfig(input);
    this.config = cfg;
    this.log = (input.logger ?? silentLogger).child({ component: 'consumer', clientId: cfg.clientId, groupId: cfg.groupId });
    this.cluster = new Cluster({
      bootstrapServers: cfg.bootstrapServers,
      clientId: cfg.clientId,
      requestTimeoutMs: cfg.requestTimeoutMs,
      defaultApiTimeoutMs: cfg.defaultApiTimeoutMs,
      retryBackoffMs: cfg.retryBackoffMs,
      retryBackoffMaxMs: cfg.retryBackoffMaxMs,
      metadataMaxAgeMs: cfg.metadataMaxAgeMs,
      ...(input.tls ? { tls: input.tls } : {}),
      logger: input.logger,
      ...(input.sasl ? { sasl: input.sasl } : {}),
    });
    this.assignors = createAssignors(cfg.assignmentStrategy, cfg.assignmentStrategyIsDefault);
    this.subs = new SubscriptionState(cfg.autoOffsetReset);
    this.metadata = new ConsumerMetadata(this.cluster, cfg.metadataMaxAgeMs, cfg.allowAutoCreateTopics, this.log);
    this.interceptors = new ConsumerInterceptorChain((input['interceptor.classes'] ?? []) as ConsumerInterceptor<K, V>[], (err, phase) =>
      this.log.warn({ err: (err as Error).message, phase }, 'interceptor failed'),
    );
    this.coordinator =
      cfg.groupId === null
        ? null
        : new ConsumerCoordinator(
            this.cluster,
            {
              groupId: cfg.groupId,
              groupInstanceId: cfg.groupInstanceId,
              clientId: cfg.clientId,
              sessionTimeoutMs: cfg.sessionTimeoutMs,
              rebalanceTimeoutMs: cfg.maxPollIntervalMs,
              heartbeatIntervalMs: cfg.heartbeatIntervalMs,
              requestTimeoutMs: cfg.requestTimeoutMs,
              retryBackoffMs: cfg.retryBackoffMs,
            },
            this.subs,
            this.metadata,
            this.assignors,
            {
              listener: () => this.listener,
              commitBeforeRebalance: () => this.offsets.autoCommitSync(Date.now() + cfg.defaultApiTimeoutMs),
              onPartitionsDropped: (tps) => {
                const gone = new Set(tps.map(topicPartitionKey));
                this.fetcher.clearBuffered((tp) => !gone.has(topicPartitionKey(tp)));
              },
              clientRack: cfg.clientRack || null,
            },
            this.log,
          );
    this.fetcher = new Fetcher(
      cfg,
      this.cluster,
      this.metadata,
      this.subs,
      (input['key.deserializer'] ?? bufferDeserializer) as Deserializer<K>,
      (input['value.deserializer'] ?? bufferDeserializer) as Deserializer<V>,
      this.log,
    );
    this.offsets = new ConsumerOffsets(cfg, this.cluster, this.metadata, this.subs, this.coordinator, this.interceptors, this.log);
  }

  private assertOpen(): void {
    if (this.closed) throw new KafkaError('UNKNOWN_SERVER_ERROR', 'This consumer has already been closed.');
  }

  private requireGroup(): ConsumerCoordinator {
    if (!this.coordinator)
      throw new KafkaError(
        'INVALID_GROUP_ID',
        'To use the group management or offset commit APIs, you must provide a valid group.id in the consumer configuration.',
      );
    return this.coordinator;
  }

  /** Subscribes to topics (a list) or to every topic matching a pattern, with group management. */
  subscribe(topics: readonly string[] | RegExp, listener?: ConsumerRebalanceListener): void {
    this.assertOpen();
    const group = this.requireGroup();
    this.listener = listener;
    if (topics instanceof RegExp) {
      this.subs.subscribePattern(topics);
      this.log.info({ pattern: topics.source }, 'subscribed to pattern');
    } else {
      if (topics.some((t) => !t || t.trim() === ''))
        throw new KafkaError('INVALID_TOPIC_EXCEPTION', 'Topic collection to subscribe to cannot contain null or empty topic');
      if (this.subs.subscribe(topics)) group.requestRejoin('the subscription changed');
      this.log.info({ topics }, 'subscribed to topic(s)');
    }
    this.metadata.requestUpdate();
  }

  /** Manual assignment: no group membership (offsets can still be committed with a group.id). */
  assign(partitions: readonly TopicPartition[]): void {
    this.assertOpen();
    this.subs.assignFromUser(partitions);
    const keep = new Set(partitions.map(topicPartitionKey));
    this.fetcher.clearBuffered((tp) => keep.has(topicPartitionKey(tp)));
    this.metadata.requestUpdate();
    this.log.info({ partitions: partitions.map(topicPartitionKey) }, 'assigned to partition(s)');
  }

  /** Leaves the group (revoking the partitions) or drops the manual assignment. */
  async unsubscribe(): Promise<void> {
    this.assertOpen();
    if (this.coordinator && this.subs.hasAutoAssignment) {
      await this.coordinator.onLeavePrepare();
      await this.coordinator.maybeLeaveGroup('the consumer unsubscribed from all topics');
    }
    this.subs.unsubscribe();
    this.fetcher.clearBuffered();
  }

  subscription(): string[] {
    return this.subs.hasAutoAssignment ? [...this.subs.subscription].sort() : [];
  }

  assignment(): TopicPartition[] {
    return this.subs.assignedPartitions();
  }

  /** Kafka's groupMetadata(): the generation this member is in. */
  groupMetadata(): { groupId: string | null; generationId: number; memberId: string; groupInstanceId: string | null } {
    return {
      groupId: this.config.groupId,
      generationId: this.coordinator?.generation.generationId ?? -1,
      memberId: this.coordinator?.memberId ?? '',
      groupInstanceId: this.config.groupInstanceId,
    };
  }

  /** Fetch counters (fetch requests, time spent in them, bytes, records). */
  get fetchStats(): Readonly<FetchStats> {
    return this.fetcher.stats;
  }

  /**
   * Waits up to `timeoutMs` for records. Joins the group first when needed (within the timeout),
   * commits offsets when auto commit is due, and throws fatal errors (fencing, a reset policy of
   * `none` with no offset, authorization) and WakeupError after wakeup().
   */
  async poll(timeoutMs: number): Promise<ConsumerRecord<K, V>[]> {
    this.assertOpen();
    if (this.polling) throw new KafkaError('INVALID_REQUEST', 'KafkaConsumer is not safe for concurrent access: poll() is already running');
    if (this.subs.type === SubscriptionType.NONE)
      throw new KafkaError('INVALID_REQUEST', 'Consumer is not subscribed to any topics or assigned any partitions');
    this.polling = true;
    const deadline = Date.now() + Math.max(0, timeoutMs);
    try {
      this.coordinator?.pollHeartbeat();
      for (;;) {
        this.checkWakeup();
        const ready = await this.updateAssignmentMetadata(deadline);
        if (ready) {
          const records = this.fetcher.collect(this.config.maxPollRecords);
          // keep the pipeline full: the next fetches go out before the records are processed
          this.fetcher.sendFetches();
          if (records.length > 0) return this.interceptors.empty ? records : this.interceptors.onConsume(records);
        }
        const remaining = deadline - Date.now();
        if (remaining <= 0) return [];
        await this.fetcher.waitForData(ready ? remaining : Math.min(remaining, this.config.retryBackoffMs));
        this.checkWakeup();
        if (ready && this.fetcher.hasCompletedFetches) {
          const records = this.fetcher.collect(this.config.maxPollRecords);
          this.fetcher.sendFetches();
          if (records.length > 0) return this.interceptors.empty ? records : this.interceptors.onConsume(records);
        }
        if (Date.now() >= deadline) return [];
      }
    } finally {
      this.polling = false;
    }
  }

  private checkWakeup(): void {
    if (this.wakeupRequested) {
      this.wakeupRequested = false;
      throw new WakeupError();
    }
  }

  /** Group, metadata, positions: true when the consumer can fetch. */
  private async updateAssignmentMetadata(deadline: number): Promise<boolean> {
    const remaining = () => deadline - Date.now();
    if (this.metadata.needsUpdate) {
      const r = await within(this.metadata.refresh(this.metadataTopics()), remaining());
      if (r === TIMED_OUT) return false;
    }
    const group = this.coordinator;
    if (group && this.subs.hasAutoAssignment) {
      group.checkMetadata();
      if (group.rejoinNeeded || group.state !== 'STABLE') {
        const r = await within(group.ensureActiveGroup(), remaining());
        if (r === TIMED_OUT) return false;
      }
      if (group.fatalError) throw group.fatalError;
    }
    if (group) this.offsets.maybeAutoCommit();
    if (!this.subs.hasAllFetchPositions) {
      try {
        const r = await within(this.offsets.updateFetchPositions(Math.max(deadline, Date.now() + this.config.retryBackoffMs)), remaining());
        if (r === TIMED_OUT) return this.subs.fetchable().length > 0;
      } catch (err) {
        if (err instanceof KafkaError && err.retriable) {
          this.log.debug({ err: err.message }, 'updating fetch positions failed; retrying');
          return this.subs.fetchable().length > 0;
        }
        throw err;
      }
    }
    return true;
  }

  private metadataTopics(): string[] | null {
    if (this.subs.type === SubscriptionType.AUTO_PATTERN) return null;
    return [...new Set([...this.subs.subscription, ...this.subs.groupSubscription, ...this.subs.assignedPartitions().map((tp) => tp.topic)])];
  }

  /** Interrupts a poll() (now or the next one) with WakeupError. */
  wakeup(): void {
    this.wakeupRequested = true;
    this.fetcher.wake();
  }

  private toOffsetMap(offsets?: readonly OffsetToCommit[]): OffsetMap {
    if (!offsets) return this.subs.allConsumed();
    const m: OffsetMap = new Map();
    for (const o of offsets)
      m.set(topicPartitionKey(o), {
        tp: { topic: o.topic, partition: o.partition },
        offset: { offset: BigInt(o.offset), leaderEpoch: o.leaderEpoch ?? -1, metadata: o.metadata ?? '' },
      });
    return m;
  }

  /** Commits `offsets` (default: the positions of every assigned partition), retrying until `timeoutMs` (default.api.timeout.ms). */
  async commitSync(offsets?: readonly OffsetToCommit[], opts: { timeoutMs?: number } = {}): Promise<void> {
    this.assertOpen();
    this.requireGroup();
    await this.offsets.commit(this.toOffsetMap(offsets), { sync: true, deadline: Date.now() + (opts.timeoutMs ?? this.config.defaultApiTimeoutMs) });
  }

  /** One commit attempt; the callback (and the promise) get the outcome. */
  commitAsync(offsets?: readonly OffsetToCommit[], callback?: (offsets: OffsetToCommit[], err: Error | null) => void): Promise<void> {
    this.assertOpen();
    this.requireGroup();
    const m = this.toOffsetMap(offsets);
    const list = [...m.values()].map(({ tp, offset }) => ({ ...tp, offset: offset.offset, leaderEpoch: offset.leaderEpoch, metadata: offset.metadata }));
    const p = this.offsets.commit(m, { sync: false, deadline: Date.now() + this.config.requestTimeoutMs });
    return p.then(
      () => callback?.(list, null),
      (err: Error) => {
        if (callback) callback(list, err);
        else throw err;
      },
    );
  }

  /** The next fetch of `tp` starts at `offset`. */
  seek(tp: TopicPartition, offset: bigint | number | OffsetAndMetadata): void {
    this.assertOpen();
    const o = typeof offset === 'object' ? offset : { offset: BigInt(offset), leaderEpoch: -1 };
    if (o.offset < 0n) throw new KafkaError('INVALID_REQUEST', 'seek offset must not be a negative number');
    this.subs.seek(tp, o.offset, o.leaderEpoch);
    this.fetcher.clearBuffered((x) => topicPartitionKey(x) !== topicPartitionKey(tp));
  }

  /** Resets to the log start offset on the next poll()/position() (all assigned partitions when empty). */
  seekToBeginning(partitions: readonly TopicPartition[] = []): void {
    this.assertOpen();
    for (const tp of partitions.length ? partitions : this.assignment()) this.subs.requestReset(tp, 'earliest');
    this.fetcher.clearBuffered((tp) => partitions.length > 0 && !partitions.some((p) => topicPartitionKey(p) === topicPartitionKey(tp)));
  }

  /** Resets to the end (high watermark, or last stable offset with read_committed). */
  seekToEnd(partitions: readonly TopicPartition[] = []): void {
    this.assertOpen();
    for (const tp of partitions.length ? partitions : this.assignment()) this.subs.requestReset(tp, 'latest');
    this.fetcher.clearBuffered((tp) => partitions.length > 0 && !partitions.some((p) => topicPartitionKey(p) === topicPartitionKey(tp)));
  }

  /** The offset of the next record poll() returns for `tp` (looked up when unknown). */
  async position(tp: TopicPartition, opts: { timeoutMs?: number } = {}): Promise<bigint> {
    this.assertOpen();
    const s = this.subs.stateOf(tp);
    if (s.state !== FetchState.FETCHING || !s.position)
      await this.offsets.updateFetchPositions(Date.now() + (opts.timeoutMs ?? this.config.defaultApiTimeoutMs));
    const p = this.subs.stateOf(tp).position;
    if (!p) throw new KafkaError('REQUEST_TIMED_OUT', `Timeout expired before the position for partition ${topicPartitionKey(tp)} could be determined`);
    return p.offset;
  }

  /** The committed offsets of `partitions` (null where none). */
  async committed(partitions: readonly TopicPartition[], opts: { timeoutMs?: number } = {}): Promise<Map<string, OffsetAndMetadata | null>> {
    this.assertOpen();
    this.requireGroup();
    return this.offsets.fetchCommitted(partitions, Date.now() + (opts.timeoutMs ?? this.config.defaultApiTimeoutMs));
  }

  /** Log start offsets. */
  async beginningOffsets(partitions: readonly TopicPartition[], opts: { timeoutMs?: number } = {}): Promise<Map<string, bigint>> {
    return this.listed(partitions, -2n, opts.timeoutMs);
  }

  /** End offsets (high watermark; last stable offset with read_committed). */
  async endOffsets(partitions: readonly TopicPartition[], opts: { timeoutMs?: number } = {}): Promise<Map<string, bigint>> {
    return this.listed(partitions, -1n, opts.timeoutMs);
  }

  /** Kafka's offsetsForTimes: the first offset with a timestamp ≥ the one given (null when none). */
  async offsetsForTimes(
    query: readonly (TopicPartition & { timestamp: number })[],
    opts: { timeoutMs?: number } = {},
  ): Promise<Map<string, { offset: bigint; timestamp: number; leaderEpoch: number } | null>> {
    this.assertOpen();
    const r = await this.offsets.listOffsets(
      query.map((q) => ({ tp: q, timestamp: BigInt(q.timestamp) })),
      Date.now() + (opts.timeoutMs ?? this.config.defaultApiTimeoutMs),
    );
    const out = new Map<string, { offset: bigint; timestamp: number; leaderEpoch: number } | null>();
    for (const q of query) {
      const x = r.get(topicPartitionKey(q));
      out.set(topicPartitionKey(q), x && x.offset >= 0n ? { offset: x.offset, timestamp: Number(x.timestamp), leaderEpoch: x.leaderEpoch } : null);
    }
    return out;
  }

  private async listed(partitions: readonly TopicPartition[], ts: bigint, timeoutMs?: number): Promise<Map<string, bigint>> {
    this.assertOpen();
    const r = await this.offsets.listOffsets(
      partitions.map((tp) => ({ tp, timestamp: ts })),
      Date.now() + (timeoutMs ?? this.config.defaultApiTimeoutMs),
    );
    return new Map([...r].map(([k, v]) => [k, v.offset]));
  }

  /** Partitions of a topic (metadata). */
  async partitionsFor(topic: string): Promise<{ topic: string; partition: number; leader: number }[]> {
    this.assertOpen();
    await this.metadata.refresh([...new Set([...(this.metadataTopics() ?? []), topic])]);
    return (this.metadata.topic(topic)?.partitions ?? []).map((p) => ({ topic, partition: p.partition, leader: p.leader }));
  }

  pause(partitions: readonly TopicPartition[]): void {
    for (const tp of partitions) this.subs.pause(tp);
  }

  resume(partitions: readonly TopicPartition[]): void {
    for (const tp of partitions) this.subs.resume(tp);
  }

  paused(): TopicPartition[] {
    return this.subs.paused();
  }

  /**
   * Commits (auto commit), revokes the partitions through the listener, leaves the group and
   * closes the connections, within `timeoutMs` (default 30 s, as Kafka).
   */
  async close(opts: { timeoutMs?: number } = {}): Promise<void> {
    if (this.closed) return;
    const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
    const group = this.coordinator;
    if (group) {
      const leave = async () => {
        // manual assignment commits without a generation; a group member only within one
        if (!this.subs.hasAutoAssignment || group.generation.generationId >= 0) await this.offsets.autoCommitSync(deadline);
        if (this.subs.hasAutoAssignment) {
          await group.onLeavePrepare();
          await group.maybeLeaveGroup('the consumer is being closed');
        }
      };
      const r = await within(leave(), deadline - Date.now());
      if (r === TIMED_OUT) this.log.warn({}, 'close timed out before the consumer left the group');
    }
    this.closed = true;
    await group?.closeMembership();
    this.interceptors.close();
    await this.cluster.close();
  }
}
