/**
 * The coordinator's cache of groups and offsets and its storage in `__consumer_offsets` (Kafka's
 * GroupMetadataManager): which offsets partitions this broker owns (leads and has loaded) or is
 * loading, group metadata and offset commits written with acks=-1 and cached once replicated,
 * loading a partition's groups from its log when this broker becomes its leader and unloading
 * them when it stops, offset expiry (offsets.retention.minutes) with tombstones.
 */
import type { Logger } from 'pino';
import { encodeRecordBatch, ErrorCode, type CompressionType, type RecordInput, type TopicPartition } from '@samsa/protocol';
import { GroupMetadata, GroupState } from './group-metadata.js';
import { MemberMetadata } from './member-metadata.js';
import { readOffsetsPartition, type LoadedPartition } from './offsets-partition-loader.js';
import { partitionForGroup } from './offsets-topic.js';
import { LATEST_METADATA_VERSION, groupMetadataValueVersion, offsetCommitValueVersion, type CoordinatorLog, type MetadataVersion } from '@samsa/server-common';
import {
  encodeGroupMetadataKey,
  encodeGroupMetadataValue,
  encodeOffsetCommitKey,
  encodeOffsetCommitValue,
  type OffsetAndMetadata,
  type StoredGroup,
} from './records.js';

/** The coordinator's storage for its `__consumer_offsets` partitions (the shared CoordinatorLog). */
export type OffsetsLog = CoordinatorLog;

export interface OffsetConfig {
  /** offset.metadata.max.bytes */
  maxMetadataSize: number;
  /** offsets.load.buffer.size */
  loadBufferSize: number;
  /** offsets.retention.minutes in ms */
  offsetsRetentionMs: number;
  /** offsets.retention.check.interval.ms */
  offsetsRetentionCheckIntervalMs: number;
  /** offsets.commit.timeout.ms */
  offsetCommitTimeoutMs: number;
  /** offsets.topic.compression.codec */
  compression: number;
  /**
   * inter.broker.protocol.version: picks the value versions written (Kafka's
   * groupMetadataValue / offsetCommitValue); the latest when absent.
   */
  interBrokerProtocolVersion?: MetadataVersion;
}

export interface PartitionData {
  offset: bigint;
  leaderEpoch: number;
  metadata: string;
  error: number;
}

const INVALID_OFFSET = -1n;

/** The transaction an offset commit belongs to (TxnOffsetCommit). */
export interface TxnProducer {
  producerId: bigint;
  producerEpoch: number;
}

/** Kafka's storeGroup error translation (append error → what JoinGroup/SyncGroup answer). */
export function groupStoreError(code: number): number {
  switch (code) {
    case ErrorCode.NONE:
      return ErrorCode.NONE;
    case ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
    case ErrorCode.NOT_ENOUGH_REPLICAS:
    case ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND:
      return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    case ErrorCode.NOT_LEADER_OR_FOLLOWER:
    case ErrorCode.KAFKA_STORAGE_ERROR:
      return ErrorCode.NOT_COORDINATOR;
    case ErrorCode.REQUEST_TIMED_OUT:
      return ErrorCode.REBALANCE_IN_PROGRESS;
    case ErrorCode.MESSAGE_TOO_LARGE:
    case ErrorCode.RECORD_LIST_TOO_LARGE:
    case ErrorCode.INVALID_FETCH_SIZE:
      return ErrorCode.UNKNOWN_SERVER_ERROR;
    default:
      return code;
  }
}

/** Kafka's maybeConvertOffsetCommitError. */
export function offsetCommitError(code: number): number {
  switch (code) {
    case ErrorCode.NETWORK_EXCEPTION:
      return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS;
    case ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
    case ErrorCode.NOT_ENOUGH_REPLICAS:
    case ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND:
      return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    case ErrorCode.NOT_LEADER_OR_FOLLOWER:
    case ErrorCode.KAFKA_STORAGE_ERROR:
      return ErrorCode.NOT_COORDINATOR;
    case ErrorCode.MESSAGE_TOO_LARGE:
    case ErrorCode.RECORD_LIST_TOO_LARGE:
    case ErrorCode.INVALID_FETCH_SIZE:
      return ErrorCode.INVALID_COMMIT_OFFSET_SIZE;
    default:
      return code;
  }
}

export class GroupMetadataManager {
  private readonly cache = new Map<string, GroupMetadata>();
  /** Partitions being loaded → the load's token (a newer election replaces it). */
  private readonly loadingPartitions = new Map<number, number>();
  private readonly ownedPartitions = new Set<number>();
  /** Groups holding pending transactional offset commits of each producer (Kafka's openGroupsForProducer). */
  private readonly openGroupsForProducer = new Map<bigint, Set<string>>();
  /** Leader epoch of the last (un)load per partition: racing LeaderAndIsr requests are ordered by it. */
  private readonly epochForPartitionId = new Map<number, number>();
  private partitionCount: number;
  private shuttingDown = false;
  private loadToken = 0;
  private cleanupTimer: NodeJS.Timeout | undefined;
  /** Loads in progress (awaited by tests and shutdown). */
  private readonly loads = new Set<Promise<void>>();

  constructor(
    private readonly brokerId: number,
    readonly config: OffsetConfig,
    private readonly storage: OffsetsLog,
    private readonly log: Logger,
    partitionCount: number,
    private readonly now: () => number = Date.now,
  ) {
    this.partitionCount = partitionCount;
  }

  startup(partitionCount: number, enableMetadataExpiration = true): void {
    this.partitionCount = partitionCount;
    if (enableMetadataExpiration) {
      this.cleanupTimer = setInterval(() => this.cleanupExpiredGroupMetadata(), Math.max(1, this.config.offsetsRetentionCheckIntervalMs));
      this.cleanupTimer.unref();
    }
  }

  async shutdown(): Promise<void> {
    this.shuttingDown = true;
    clearInterval(this.cleanupTimer);
    await Promise.allSettled([...this.loads]);
  }

  get numPartitions(): number {
    return this.partitionCount;
  }

  currentGroups(): GroupMetadata[] {
    return [...this.cache.values()];
  }

  isPartitionOwned(p: number): boolean {
    return this.ownedPartitions.has(p);
  }

  isPartitionLoading(p: number): boolean {
    return this.loadingPartitions.has(p);
  }

  partitionFor(groupId: string): number {
    return partitionForGroup(groupId, this.partitionCount);
  }

  isGroupLocal(groupId: string): boolean {
    return this.isPartitionOwned(this.partitionFor(groupId));
  }

  isGroupLoading(groupId: string): boolean {
    return this.isPartitionLoading(this.partitionFor(groupId));
  }

  get isLoading(): boolean {
    return this.loadingPartitions.size > 0;
  }

  /** The group is ours and does not exist (or is Dead). */
  groupNotExists(groupId: string): boolean {
    if (!this.isGroupLocal(groupId)) return false;
    const g = this.cache.get(groupId);
    return g === undefined || g.is(GroupState.Dead);
  }

  getGroup(groupId: string): GroupMetadata | undefined {
    return this.cache.get(groupId);
  }

  getOrMaybeCreateGroup(groupId: string, createIfNotExist: boolean): GroupMetadata | undefined {
    const g = this.cache.get(groupId);
    if (g || !createIfNotExist) return g;
    return this.addGroup(new GroupMetadata(groupId, GroupState.Empty, this.now));
  }

  addGroup(group: GroupMetadata): GroupMetadata {
    const cur = this.cache.get(group.groupId);
    if (cur) return cur;
    this.cache.set(group.groupId, group);
    return group;
  }

  /** One batch of the coordinator's records; a transaction's offset commits go in a transactional batch of its producer. */
  private batch(records: RecordInput[], producer: TxnProducer | null = null): Buffer {
    const ts = this.now();
    return encodeRecordBatch({
      records: records.map((r) => ({ ...r, timestamp: ts })),
      baseTimestamp: ts,
      compression: this.config.compression as CompressionType,
      ...(producer ? { producerId: producer.producerId, producerEpoch: producer.producerEpoch, baseSequence: 0, transactional: true } : {}),
    });
  }

  // ---- transactional offset commits -------------------------------------------------------------

  private addProducerGroup(producerId: bigint, groupId: string): void {
    let groups = this.openGroupsForProducer.get(producerId);
    if (!groups) {
      groups = new Set();
      this.openGroupsForProducer.set(producerId, groups);
    }
    groups.add(groupId);
  }

  private removeGroupFromAllProducers(groupId: string): void {
    for (const groups of this.openGroupsForProducer.values()) groups.delete(groupId);
  }

  /**
   * The marker of `producerId`'s transaction was written to these offsets partitions: its pending
   * transactional offset commits in groups of those partitions become committed offsets (COMMIT) or
   * are dropped (ABORT). Kafka's GroupMetadataManager.handleTxnCompletion.
   */
  handleTxnCompletion(producerId: bigint, completedPartitions: ReadonlySet<number>, isCommit: boolean): void {
    const groups = this.openGroupsForProducer.get(producerId);
    if (!groups) return;
    for (const groupId of [...groups]) {
      if (!completedPartitions.has(this.partitionFor(groupId))) continue;
      const group = this.cache.get(groupId);
      if (group?.is(GroupState.Dead)) continue;
      groups.delete(groupId);
      if (!group) {
        this.log.info(
          { groupId, producerId: String(producerId) },
          'group moved away after the transaction marker was written; dropping its pending transactional offsets',
        );
        continue;
      }
      try {
        group.completePendingTxnOffsetCommit(producerId, isCommit);
        this.log.debug({ groupId, producerId: String(producerId), commit: isCommit }, 'completed transactional offset commits');
      } catch (err) {
        this.log.error({ err, groupId, producerId: String(producerId) }, 'could not complete transactional offset commits');
      }
    }
    if (groups.size === 0) this.openGroupsForProducer.delete(producerId);
  }

  /**
   * Writes the group's metadata (with this assignment) to its offsets partition, acks=-1 within
   * offsets.commit.timeout.ms; `callback` gets NONE or the translated error.
   */
  storeGroup(group: GroupMetadata, assignment: ReadonlyMap<string, Buffer>, callback: (error: number) => void): void {
    const partition = this.partitionFor(group.groupId);
    if (!this.storage.hasLog(partition)) {
      callback(ErrorCode.NOT_COORDINATOR);
      return;
    }
    const protocol = group.protocolName;
    const value: StoredGroup = {
      protocolType: group.protocolType ?? '',
      generation: group.generationId,
      protocol,
      leader: group.leaderOrNull,
      currentStateTimestamp: group.currentStateTimestampOrDefault,
      members: group.allMemberMetadata.map((m) => {
        if (protocol === null) throw new Error('Attempted to write non-empty group metadata with no defined protocol.');
        const a = assignment.get(m.memberId);
        if (a === undefined) throw new Error(`Attempted to write member ${m.memberId} of group ${group.groupId} with no assignment.`);
        return {
          memberId: m.memberId,
          groupInstanceId: m.groupInstanceId,
          clientId: m.clientId,
          clientHost: m.clientHost,
          rebalanceTimeoutMs: m.rebalanceTimeoutMs,
          sessionTimeoutMs: m.sessionTimeoutMs,
          subscription: m.metadata(protocol),
          assignment: a,
        };
      }),
    };
    const records = this.batch([{ key: encodeGroupMetadataKey(group.groupId), value: encodeGroupMetadataValue(value, groupMetadataValueVersion(this.ibp)) }]);
    const generation = group.generationId;
    this.storage.append(partition, records, -1, this.config.offsetCommitTimeoutMs).then(
      (r) => {
        if (r.errorCode !== ErrorCode.NONE) {
          this.log.debug({ groupId: group.groupId, generation, errorCode: r.errorCode }, 'group metadata append failed');
        }
        callback(groupStoreError(r.errorCode));
      },
      (err: unknown) => {
        this.log.error({ err, groupId: group.groupId, generation }, 'group metadata append failed');
        callback(ErrorCode.UNKNOWN_SERVER_ERROR);
      },
    );
  }

  private get ibp(): MetadataVersion {
    return this.config.interBrokerProtocolVersion ?? LATEST_METADATA_VERSION;
  }

  private validMetadataLength(metadata: string): boolean {
    return metadata.length <= this.config.maxMetadataSize;
  }

  /**
   * Writes offset commits (one batch), acks=-1; they enter the cache once replicated. Metadata
   * longer than offset.metadata.max.bytes answers OFFSET_METADATA_TOO_LARGE for that partition.
   */
  storeOffsets(
    group: GroupMetadata,
    consumerId: string,
    offsets: ReadonlyArray<[TopicPartition, OffsetAndMetadata]>,
    callback: (results: Array<[TopicPartition, number]>) => void,
    producer: TxnProducer | null = null,
  ): void {
    const filtered = offsets.filter(([, o]) => this.validMetadataLength(o.metadata));
    const finish = (error: number) =>
      callback(offsets.map(([tp, o]) => [tp, this.validMetadataLength(o.metadata) ? error : ErrorCode.OFFSET_METADATA_TOO_LARGE]));
    if (filtered.length === 0) {
      finish(ErrorCode.OFFSET_METADATA_TOO_LARGE);
      return;
    }
    const partition = this.partitionFor(group.groupId);
    if (!this.storage.hasLog(partition)) {
      callback(offsets.map(([tp]) => [tp, ErrorCode.NOT_COORDINATOR]));
      return;
    }
    const records = this.batch(
      filtered.map(([tp, o]) => ({
        key: encodeOffsetCommitKey(group.groupId, tp.topic, tp.partition),
        value: encodeOffsetCommitValue(o, offsetCommitValueVersion(this.ibp, o.expireTimestampMs !== null)),
      })),
      producer,
    );
    if (producer) {
      this.addProducerGroup(producer.producerId, group.groupId);
      group.pendingTxnOffsetCommits.prepare(producer.producerId, filtered);
    } else {
      group.prepareOffsetCommit(filtered);
    }
    const done = (errorCode: number, baseOffset: bigint) => {
      let error: number;
      if (errorCode === ErrorCode.NONE) {
        if (!group.is(GroupState.Dead)) {
          for (const [tp, o] of filtered) {
            const c = { appendedBatchOffset: baseOffset, offsetAndMetadata: o };
            if (producer) group.pendingTxnOffsetCommits.onAppend(producer.producerId, tp, c);
            else group.onOffsetCommitAppend(tp, c);
          }
        }
        error = ErrorCode.NONE;
      } else {
        if (!group.is(GroupState.Dead)) {
          for (const [tp, o] of filtered) {
            if (producer) group.pendingTxnOffsetCommits.fail(producer.producerId, tp);
            else group.failPendingOffsetWrite(tp, o);
          }
        }
        this.log.debug({ groupId: group.groupId, memberId: consumerId, generation: group.generationId, errorCode }, 'offset commit append failed');
        error = offsetCommitError(errorCode);
      }
      finish(error);
    };
    this.storage.append(partition, records, -1, this.config.offsetCommitTimeoutMs).then(
      (r) => done(r.errorCode, r.baseOffset),
      (err: unknown) => {
        this.log.error({ err, groupId: group.groupId }, 'offset commit append failed');
        done(ErrorCode.UNKNOWN_SERVER_ERROR, -1n);
      },
    );
  }

  /**
   * Committed offsets from the cache (never from the log): -1 with no error for partitions
   * without one; with requireStable, UNSTABLE_OFFSET_COMMIT while a commit is in flight.
   */
  getOffsets(groupId: string, requireStable: boolean, tps: readonly TopicPartition[] | null): Array<[TopicPartition, PartitionData]> {
    const none = (): PartitionData => ({ offset: INVALID_OFFSET, leaderEpoch: -1, metadata: '', error: ErrorCode.NONE });
    const group = this.cache.get(groupId);
    if (!group || group.is(GroupState.Dead)) return (tps ?? []).map((tp) => [tp, none()]);
    const wanted = tps ?? group.allOffsets().map(([tp]) => tp);
    return wanted.map((tp) => {
      if (requireStable && group.hasPendingOffsetCommitsForTopicPartition(tp)) {
        return [tp, { offset: INVALID_OFFSET, leaderEpoch: -1, metadata: '', error: ErrorCode.UNSTABLE_OFFSET_COMMIT }];
      }
      const o = group.offset(tp);
      return [tp, o ? { offset: o.committedOffset, leaderEpoch: o.leaderEpoch, metadata: o.metadata, error: ErrorCode.NONE } : none()];
    });
  }

  /** Only newer (or equal) epochs may (un)load; returns whether `epoch` is current. */
  private maybeUpdateCoordinatorEpoch(partition: number, epoch: number | null): boolean {
    const cur = this.epochForPartitionId.get(partition);
    if (epoch === null) return true;
    if (cur === undefined || epoch > cur) this.epochForPartitionId.set(partition, epoch);
    return this.epochForPartitionId.get(partition) === epoch;
  }

  /**
   * This broker leads offsets partition `partition` in leader epoch `epoch`: mark it loading (group
   * requests answer COORDINATOR_LOAD_IN_PROGRESS), read its log into the cache, then own it.
   */
  scheduleLoadGroupAndOffsets(partition: number, epoch: number, onGroupLoaded: (g: GroupMetadata) => void): Promise<void> {
    if (!this.maybeUpdateCoordinatorEpoch(partition, epoch)) {
      this.log.info({ partition, epoch, current: this.epochForPartitionId.get(partition) }, 'not loading offsets and group metadata: stale epoch');
      return Promise.resolve();
    }
    if (this.ownedPartitions.has(partition) || this.loadingPartitions.has(partition)) {
      this.log.info({ partition, epoch }, 'already loading or loaded offsets and group metadata');
      return Promise.resolve();
    }
    const token = ++this.loadToken;
    this.loadingPartitions.set(partition, token);
    this.log.info({ partition, epoch }, 'loading offsets and group metadata');
    const p = this.loadGroupsAndOffsets(partition, epoch, token, onGroupLoaded).finally(() => this.loads.delete(p));
    this.loads.add(p);
    return p;
  }

  private async loadGroupsAndOffsets(partition: number, epoch: number, token: number, onGroupLoaded: (g: GroupMetadata) => void): Promise<void> {
    const started = this.now();
    let loaded: LoadedPartition | undefined;
    try {
      loaded = await readOffsetsPartition(this.storage, partition, this.config.loadBufferSize, () => this.shuttingDown, this.log);
    } catch (err) {
      this.log.error({ err, partition }, 'error loading offsets');
    }
    // a resignation (or a newer election) while we were reading: drop what we read
    if (this.loadingPartitions.get(partition) !== token || this.epochForPartitionId.get(partition) !== epoch) {
      this.log.info({ partition, epoch }, 'offsets partition moved while loading; discarding what was read');
      return;
    }
    if (loaded) this.install(loaded, onGroupLoaded);
    this.ownedPartitions.add(partition);
    this.loadingPartitions.delete(partition);
    this.log.info(
      { partition, epoch, ms: this.now() - started, groups: loaded?.groups.size ?? 0, offsets: loaded?.offsetCount ?? 0 },
      'finished loading offsets and group metadata',
    );
  }

  private install(l: LoadedPartition, onGroupLoaded: (g: GroupMetadata) => void): void {
    const load = (group: GroupMetadata) => {
      const offsets = l.offsets.get(group.groupId);
      if (offsets) group.initializeOffsets(offsets.entries());
      for (const [producerId, byGroup] of l.pendingTxnOffsets) {
        const pending = byGroup.get(group.groupId);
        if (!pending || pending.size === 0) continue;
        group.pendingTxnOffsetCommits.initialize(producerId, pending.entries());
        this.addProducerGroup(producerId, group.groupId);
      }
      const cur = this.addGroup(group);
      if (cur !== group) {
        this.log.debug(
          { groupId: group.groupId, generation: group.generationId, cached: cur.generationId },
          'a group is already cached; not loading it from the log',
        );
        return;
      }
      onGroupLoaded(group);
    };
    for (const [groupId, v] of l.groups) {
      const members = v.members.map(
        (m) =>
          new MemberMetadata(
            m.memberId,
            m.groupInstanceId,
            m.clientId,
            m.clientHost,
            m.rebalanceTimeoutMs,
            m.sessionTimeoutMs,
            v.protocolType,
            [{ name: v.protocol ?? '', metadata: m.subscription }],
            m.assignment,
          ),
      );
      load(GroupMetadata.loadGroup(groupId, { ...v, members }, this.now));
    }
    // groups that only store offsets (no metadata record); offsets all deleted by tombstones leave
    // no group, as Kafka's load (and a compacted log, where the tombstones are gone) has it
    const offsetsOnly = new Set<string>();
    for (const [groupId, offsets] of l.offsets) if (offsets.size > 0) offsetsOnly.add(groupId);
    for (const byGroup of l.pendingTxnOffsets.values()) for (const [groupId, offsets] of byGroup) if (offsets.size > 0) offsetsOnly.add(groupId);
    for (const groupId of offsetsOnly) if (!l.groups.has(groupId)) load(new GroupMetadata(groupId, GroupState.Empty, this.now));
  }

  /**
   * This broker no longer leads offsets partition `partition`: drop its groups from the cache
   * (`onGroupUnloaded` answers their parked requests with NOT_COORDINATOR).
   */
  removeGroupsForPartition(partition: number, epoch: number | null, onGroupUnloaded: (g: GroupMetadata) => void): void {
    if (!this.maybeUpdateCoordinatorEpoch(partition, epoch)) {
      this.log.info({ partition, epoch, current: this.epochForPartitionId.get(partition) }, 'not removing offsets and group metadata: stale epoch');
      return;
    }
    const wasOwned = this.ownedPartitions.delete(partition);
    const wasLoading = this.loadingPartitions.delete(partition);
    let groups = 0;
    let offsets = 0;
    for (const g of [...this.cache.values()]) {
      if (this.partitionFor(g.groupId) !== partition) continue;
      onGroupUnloaded(g);
      this.cache.delete(g.groupId);
      this.removeGroupFromAllProducers(g.groupId);
      groups++;
      offsets += g.numOffsets;
    }
    if (wasOwned || wasLoading || groups > 0) this.log.info({ partition, epoch, groups, offsets }, 'unloaded offsets and group metadata');
  }

  /** The periodic offsets.retention check. */
  cleanupExpiredGroupMetadata(): number {
    const now = this.now();
    const n = this.cleanupGroupMetadata(this.currentGroups(), (g) => g.removeExpiredOffsets(now, this.config.offsetsRetentionMs));
    if (n > 0) this.log.info({ offsets: n, ms: this.now() - now }, 'removed expired offsets');
    return n;
  }

  /**
   * Removes offsets chosen by `selector` from each group, writing tombstones (acks=0, as Kafka: a
   * lost tombstone is written again by the next pass); an Empty group left without offsets becomes
   * Dead and leaves the cache (with a group tombstone unless it only stored offsets).
   */
  cleanupGroupMetadata(groups: Iterable<GroupMetadata>, selector: (g: GroupMetadata) => Array<[TopicPartition, OffsetAndMetadata]>): number {
    let removedTotal = 0;
    for (const group of groups) {
      const removed = selector(group);
      if (group.is(GroupState.Empty) && !group.hasOffsets) {
        this.log.info({ groupId: group.groupId, generation: group.generationId }, 'group transitioned to Dead');
        group.transitionTo(GroupState.Dead);
      }
      const dead = group.is(GroupState.Dead);
      const partition = this.partitionFor(group.groupId);
      if (!this.storage.hasLog(partition)) continue;
      const tombstones: RecordInput[] = removed.map(([tp]) => ({ key: encodeOffsetCommitKey(group.groupId, tp.topic, tp.partition), value: null }));
      if (dead && this.cache.get(group.groupId) === group) {
        this.cache.delete(group.groupId);
        // a group that only stored offsets (generation 0) never wrote metadata
        if (group.generationId > 0) tombstones.push({ key: encodeGroupMetadataKey(group.groupId), value: null });
      }
      if (tombstones.length > 0) {
        removedTotal += removed.length;
        this.storage.append(partition, this.batch(tombstones), 0, this.config.offsetCommitTimeoutMs).then(
          (r) => {
            if (r.errorCode !== ErrorCode.NONE) this.log.warn({ groupId: group.groupId, errorCode: r.errorCode }, 'failed to append tombstones');
          },
          (err: unknown) => this.log.error({ err, groupId: group.groupId }, 'failed to append tombstones'),
        );
      }
    }
    return removedTotal;
  }

  /** Loads in flight (tests wait for them). */
  async awaitLoads(): Promise<void> {
    await Promise.allSettled([...this.loads]);
  }

  toString(): string {
    return `GroupMetadataManager(brokerId=${this.brokerId})`;
  }
}
