/**
 * Committed offsets and fetch positions: OffsetCommit (commitSync / commitAsync / auto commit
 * every auto.commit.interval.ms from poll), OffsetFetch for partitions without a position, and
 * ListOffsets for the auto.offset.reset policy (earliest / latest; none → NoOffsetForPartitionError)
 * and for seekToBeginning / seekToEnd / beginningOffsets / endOffsets.
 */
import { API_KEYS, ErrorCode, KafkaError, topicPartitionKey } from '@samsa/protocol';
import type { Cluster } from '../cluster.js';
import { brokerError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { ConsumerConfig } from './config.js';
import type { GroupMembership } from './coordinator.js';
import { CommitFailedError, NoOffsetForPartitionError } from './errors.js';
import type { ConsumerInterceptorChain } from './interceptors.js';
import type { ConsumerMetadata } from './metadata.js';
import type { SubscriptionState } from './subscription-state.js';
import { type OffsetAndMetadata, type TopicPartition } from './types.js';

export type OffsetMap = Map<string, { tp: TopicPartition; offset: OffsetAndMetadata }>;

const EARLIEST = -2n;
const LATEST = -1n;
const RETRIABLE_COMMIT: ReadonlySet<number> = new Set([
  ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
  ErrorCode.REQUEST_TIMED_OUT,
  ErrorCode.NOT_COORDINATOR,
  ErrorCode.COORDINATOR_NOT_AVAILABLE,
  ErrorCode.UNSTABLE_OFFSET_COMMIT,
]);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function byTopic<T extends { tp: TopicPartition }>(items: Iterable<T>): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const it of items) {
    const l = m.get(it.tp.topic) ?? [];
    l.push(it);
    m.set(it.tp.topic, l);
  }
  return m;
}

export class ConsumerOffsets<K, V> {
  private nextAutoCommit: number;
  private autoCommitInFlight: Promise<void> | undefined;

  constructor(
    private readonly cfg: ConsumerConfig,
    private readonly cluster: Cluster,
    private readonly metadata: ConsumerMetadata,
    private readonly subs: SubscriptionState,
    private readonly group: GroupMembership | null,
    private readonly interceptors: ConsumerInterceptorChain<K, V>,
    private readonly log: Logger,
  ) {
    this.nextAutoCommit = Date.now() + cfg.autoCommitIntervalMs;
  }

  private requireGroup(): GroupMembership {
    if (!this.group)
      throw new KafkaError(
        'INVALID_GROUP_ID',
        'To use the group management or offset commit APIs, you must provide a valid group.id in the consumer configuration.',
      );
    return this.group;
  }

  /**
   * Commits `offsets`. Sync: retries retriable errors (coordinator moved / loading) until
   * `deadline`; async: one attempt. A generation that moved on is a CommitFailedError (and, for
   * UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION, resets the generation so the next poll rejoins).
   */
  async commit(offsets: OffsetMap, opts: { sync: boolean; deadline: number }): Promise<void> {
    const group = this.requireGroup();
    if (offsets.size === 0) return;
    for (let attempt = 0; ; attempt++) {
      try {
        await this.commitOnce(group, offsets);
        const out = new Map<TopicPartition, OffsetAndMetadata>();
        for (const { tp, offset } of offsets.values()) out.set(tp, offset);
        if (!this.interceptors.empty) this.interceptors.onCommit(out);
        return;
      } catch (err) {
        const retriable = err instanceof KafkaError && (RETRIABLE_COMMIT.has(err.code) || err.retriable) && !(err instanceof CommitFailedError);
        if (!opts.sync || !retriable || Date.now() + this.cfg.retryBackoffMs >= opts.deadline) throw err;
        this.log.debug({ err: (err as Error).message, attempt }, 'offset commit failed; retrying');
        await sleep(this.cfg.retryBackoffMs);
      }
    }
  }

  private async commitOnce(group: GroupMembership, offsets: OffsetMap): Promise<void> {
    // a member in a generation commits with it; one that is rebalancing cannot commit at all
    const gen = group.generation;
    const inGroup = this.subs.hasAutoAssignment;
    if (inGroup && gen.generationId < 0 && gen.memberId === '') {
      throw new CommitFailedError(ErrorCode.REBALANCE_IN_PROGRESS, 'the member is not part of an active generation');
    }
    const res = await group.onCoordinator((c) =>
      c.send(API_KEYS.OffsetCommit, (v) => ({
        groupId: this.cfg.groupId!,
        generationIdOrMemberEpoch: inGroup ? gen.generationId : -1,
        memberId: inGroup ? gen.memberId : '',
        groupInstanceId: v >= 7 ? this.cfg.groupInstanceId : null,
        retentionTimeMs: -1n,
        topics: [...byTopic(offsets.values())].map(([name, items]) => ({
          name,
          partitions: items.map(({ tp, offset }) => ({
            partitionIndex: tp.partition,
            committedOffset: offset.offset,
            committedLeaderEpoch: offset.leaderEpoch,
            commitTimestamp: -1n,
            committedMetadata: offset.metadata,
          })),
        })),
      })),
    );
    let first: { tp: TopicPartition; code: number } | undefined;
    for (const t of res.topics)
      for (const p of t.partitions) if (p.errorCode !== ErrorCode.NONE) first ??= { tp: { topic: t.name, partition: p.partitionIndex }, code: p.errorCode };
    if (!first) return;
    const err = brokerError(first.code);
    switch (first.code) {
      case ErrorCode.UNKNOWN_MEMBER_ID:
        group.resetGeneration(`encountered ${err.errorName} from OffsetCommit response`, true);
        throw new CommitFailedError(first.code, err.errorName, { cause: err });
      case ErrorCode.ILLEGAL_GENERATION:
        group.resetGeneration(`encountered ${err.errorName} from OffsetCommit response`, false);
        throw new CommitFailedError(first.code, err.errorName, { cause: err });
      case ErrorCode.REBALANCE_IN_PROGRESS:
        group.requestRejoin('OffsetCommit answered REBALANCE_IN_PROGRESS');
        throw new CommitFailedError(first.code, 'the group is rebalancing', { cause: err });
      case ErrorCode.NOT_COORDINATOR:
      case ErrorCode.COORDINATOR_NOT_AVAILABLE:
        group.markCoordinatorUnknown(err.errorName);
        throw new KafkaError(first.code, `Offset commit for ${topicPartitionKey(first.tp)} failed: ${err.message}`, { cause: err });
      default:
        throw new KafkaError(first.code, `Offset commit for ${topicPartitionKey(first.tp)} failed: ${err.message}`, { cause: err });
    }
  }

  /** Auto commit from poll(): the consumed positions, asynchronously, every auto.commit.interval.ms. */
  maybeAutoCommit(now = Date.now()): void {
    if (!this.cfg.enableAutoCommit || now < this.nextAutoCommit || this.autoCommitInFlight) return;
    this.nextAutoCommit = now + this.cfg.autoCommitIntervalMs;
    const offsets = this.subs.allConsumed();
    if (offsets.size === 0) return;
    this.autoCommitInFlight = this.commit(offsets, { sync: false, deadline: now + this.cfg.requestTimeoutMs })
      .catch((err: Error) => this.log.warn({ err: err.message }, 'asynchronous auto-commit of offsets failed'))
      .finally(() => (this.autoCommitInFlight = undefined));
  }

  /** Before a rebalance and on close: commit synchronously, errors only logged (Java's autoCommitOffsetsSync). */
  async autoCommitSync(deadline: number): Promise<void> {
    if (!this.cfg.enableAutoCommit) return;
    await this.autoCommitInFlight;
    const offsets = this.subs.allConsumed();
    try {
      await this.commit(offsets, { sync: true, deadline });
      this.nextAutoCommit = Date.now() + this.cfg.autoCommitIntervalMs;
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'synchronous auto-commit of offsets failed');
    }
  }

  /** The committed offsets of `tps` (null: none committed). Retries until `deadline`. */
  async fetchCommitted(tps: readonly TopicPartition[], deadline: number): Promise<Map<string, OffsetAndMetadata | null>> {
    const group = this.requireGroup();
    const out = new Map<string, OffsetAndMetadata | null>();
    if (tps.length === 0) return out;
    for (let attempt = 0; ; attempt++) {
      try {
        const res = await group.onCoordinator((c) =>
          c.request(
            API_KEYS.OffsetFetch,
            (v) => {
              const topics = [...byTopic(tps.map((tp) => ({ tp })))].map(([name, items]) => ({ name, partitionIndexes: items.map((i) => i.tp.partition) }));
              return v >= 8
                ? {
                    groupId: '',
                    topics: [],
                    groups: [{ groupId: this.cfg.groupId!, memberId: null, memberEpoch: -1, topics }],
                    requireStable: this.cfg.isolationLevel === 'read_committed',
                  }
                : { groupId: this.cfg.groupId!, topics, groups: [], requireStable: v >= 7 && this.cfg.isolationLevel === 'read_committed' };
            },
            { maxVersion: 9 },
          ),
        );
        const b = res.body;
        const groupError = res.version >= 8 ? (b.groups[0]?.errorCode ?? 0) : b.errorCode;
        if (groupError !== ErrorCode.NONE) throw brokerError(groupError);
        const topics = res.version >= 8 ? (b.groups[0]?.topics ?? []) : b.topics;
        for (const t of topics) {
          for (const p of t.partitions) {
            if (p.errorCode !== ErrorCode.NONE) throw brokerError(p.errorCode);
            out.set(
              topicPartitionKey(t.name, p.partitionIndex),
              p.committedOffset < 0n ? null : { offset: p.committedOffset, leaderEpoch: p.committedLeaderEpoch, metadata: p.metadata ?? '' },
            );
          }
        }
        return out;
      } catch (err) {
        if (err instanceof KafkaError && (err.code === ErrorCode.NOT_COORDINATOR || err.code === ErrorCode.COORDINATOR_NOT_AVAILABLE))
          group.markCoordinatorUnknown(err.errorName);
        const retriable = err instanceof KafkaError && (err.retriable || RETRIABLE_COMMIT.has(err.code));
        if (!retriable || Date.now() + this.cfg.retryBackoffMs >= deadline) throw err;
        await sleep(Math.min(this.cfg.retryBackoffMaxMs, this.cfg.retryBackoffMs * 2 ** Math.min(attempt, 4)));
      }
    }
  }

  /**
   * Gives every assigned partition a position: the committed offset, else the reset policy
   * (auto.offset.reset, or a pending seekToBeginning / seekToEnd).
   */
  async updateFetchPositions(deadline: number): Promise<void> {
    const init = this.subs.initializing();
    if (init.length > 0) {
      if (this.cfg.groupId !== null) {
        const committed = await this.fetchCommitted(init, deadline);
        for (const tp of init) {
          if (!this.subs.isAssigned(tp)) continue;
          const s = this.subs.stateOf(tp);
          if (s.state !== 'INITIALIZING') continue;
          const c = committed.get(topicPartitionKey(tp));
          if (c) this.subs.seek(tp, c.offset, c.leaderEpoch);
          else this.subs.requestReset(tp);
        }
      } else {
        for (const tp of init) this.subs.requestReset(tp);
      }
    }
    const reset = this.subs.awaitingReset();
    if (reset.length === 0) return;
    const none = reset.filter((s) => s.resetStrategy === 'none').map((s) => s.tp);
    if (none.length > 0) throw new NoOffsetForPartitionError(none);
    const listed = await this.listOffsets(
      reset.map((s) => ({ tp: s.tp, timestamp: s.resetStrategy === 'earliest' ? EARLIEST : LATEST })),
      deadline,
    );
    for (const s of reset) {
      const r = listed.get(topicPartitionKey(s.tp));
      if (!r || !this.subs.isAssigned(s.tp) || s.state !== 'AWAIT_RESET') continue;
      this.log.info({ topic: s.tp.topic, partition: s.tp.partition, offset: r.offset.toString(), strategy: s.resetStrategy }, 'resetting offset');
      this.subs.seek(s.tp, r.offset, r.leaderEpoch);
    }
  }

  /** ListOffsets on the partitions' leaders (timestamp -2 earliest, -1 latest, else a time). Retries until `deadline`. */
  async listOffsets(
    reqs: readonly { tp: TopicPartition; timestamp: bigint }[],
    deadline: number,
  ): Promise<Map<string, { offset: bigint; leaderEpoch: number; timestamp: bigint }>> {
    const out = new Map<string, { offset: bigint; leaderEpoch: number; timestamp: bigint }>();
    let pending = [...reqs];
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (this.metadata.needsUpdate || pending.some((r) => (this.metadata.leaderOf(r.tp.topic, r.tp.partition)?.leader ?? -1) < 0)) {
        await this.metadata.refresh([...new Set([...this.subs.subscription, ...pending.map((r) => r.tp.topic)])]).catch(() => undefined);
      }
      const byLeader = new Map<number, typeof pending>();
      for (const r of pending) {
        const leader = this.metadata.leaderOf(r.tp.topic, r.tp.partition)?.leader ?? -1;
        if (leader < 0) continue;
        const l = byLeader.get(leader) ?? [];
        l.push(r);
        byLeader.set(leader, l);
      }
      const failed: typeof pending = pending.filter((r) => (this.metadata.leaderOf(r.tp.topic, r.tp.partition)?.leader ?? -1) < 0);
      let lastError: unknown;
      await Promise.all(
        [...byLeader].map(async ([leader, items]) => {
          try {
            const conn = await this.cluster.connectionTo(leader);
            const res = await conn.send(API_KEYS.ListOffsets, () => ({
              replicaId: -1,
              isolationLevel: this.cfg.isolationLevel === 'read_committed' ? 1 : 0,
              topics: [...byTopic(items)].map(([name, ps]) => ({
                name,
                partitions: ps.map((p) => ({
                  partitionIndex: p.tp.partition,
                  currentLeaderEpoch: this.metadata.leaderOf(name, p.tp.partition)?.leaderEpoch ?? -1,
                  timestamp: p.timestamp,
                  maxNumOffsets: 1,
                })),
              })),
            }));
            for (const t of res.topics) {
              for (const p of t.partitions) {
                const item = items.find((i) => i.tp.topic === t.name && i.tp.partition === p.partitionIndex);
                if (!item) continue;
                if (p.errorCode === ErrorCode.NONE) {
                  out.set(topicPartitionKey(item.tp), {
                    offset: p.offset >= 0n ? p.offset : (p.oldStyleOffsets[0] ?? -1n),
                    leaderEpoch: p.leaderEpoch,
                    timestamp: p.timestamp,
                  });
                } else {
                  const err = brokerError(p.errorCode);
                  if (!err.retriable) throw new KafkaError(p.errorCode, `ListOffsets for ${topicPartitionKey(item.tp)} failed: ${err.message}`, { cause: err });
                  lastError = err;
                  this.metadata.requestUpdate();
                  failed.push(item);
                }
              }
            }
          } catch (err) {
            if (!(err instanceof KafkaError) || !err.retriable) throw err;
            lastError = err;
            this.metadata.requestUpdate();
            failed.push(...items);
          }
        }),
      );
      pending = failed.filter((r) => !out.has(topicPartitionKey(r.tp)));
      if (pending.length === 0) break;
      if (Date.now() + this.cfg.retryBackoffMs >= deadline) {
        throw new KafkaError('REQUEST_TIMED_OUT', `Failed to get offsets by times for ${pending.map((r) => topicPartitionKey(r.tp)).join(', ')} in time`, {
          cause: lastError,
        });
      }
      await sleep(Math.min(this.cfg.retryBackoffMaxMs, this.cfg.retryBackoffMs * 2 ** Math.min(attempt, 4)));
    }
    return out;
  }
}
