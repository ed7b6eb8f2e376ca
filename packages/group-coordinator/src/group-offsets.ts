/**
 * Offset commits, fetches and deletes for the group coordinator (the offset half of Kafka's
 * GroupCoordinator.scala): validation against the group's generation and members, then storage
 * through the GroupMetadataManager.
 */
import type { Logger } from 'pino';
import { ErrorCode, type TopicPartition } from '@samsa/protocol';
import { GroupMetadata, GroupState } from './group-metadata.js';
import type { GroupMetadataManager, PartitionData } from './group-metadata-manager.js';
import type { GroupRebalancer } from './group-rebalancer.js';
import { UNKNOWN_MEMBER_ID } from './member-metadata.js';
import type { OffsetAndMetadata } from './records.js';
import { GroupApi } from './group-api.js';

export interface GroupOffsetsOptions {
  groupManager: GroupMetadataManager;
  rebalancer: GroupRebalancer;
  log: Logger;
  validateGroupStatus(groupId: string, api: GroupApi): number | null;
  validateCurrentMember(group: GroupMetadata, memberId: string, groupInstanceId: string | null, operation: string): number | null;
}

export class GroupOffsets {
  private readonly groupManager: GroupMetadataManager;
  private readonly rebalancer: GroupRebalancer;
  private readonly log: Logger;
  private readonly validateGroupStatus: GroupOffsetsOptions['validateGroupStatus'];
  private readonly validateCurrentMember: GroupOffsetsOptions['validateCurrentMember'];

  constructor(o: GroupOffsetsOptions) {
    this.groupManager = o.groupManager;
    this.rebalancer = o.rebalancer;
    this.log = o.log;
    this.validateGroupStatus = o.validateGroupStatus;
    this.validateCurrentMember = o.validateCurrentMember;
  }

  // ---- OffsetDelete -----------------------------------------------------------------------------

  /**
   * OffsetDelete (KIP-496): removes committed offsets of an Empty group, or of topics a consumer
   * group with members is not subscribed to (GROUP_SUBSCRIBED_TO_TOPIC for the others). A group
   * with members of a non-consumer protocol answers NON_EMPTY_GROUP; an unknown group
   * GROUP_ID_NOT_FOUND. Returns the group-level error and the per-partition errors.
   */
  handleDeleteOffsets(groupId: string, partitions: readonly TopicPartition[]): { error: number; partitions: Array<[TopicPartition, number]> } {
    const status = this.validateGroupStatus(groupId, GroupApi.OffsetDelete);
    if (status !== null) return { error: status, partitions: [] };
    const group = this.groupManager.getGroup(groupId);
    const notFound = () => ({ error: this.groupManager.groupNotExists(groupId) ? ErrorCode.GROUP_ID_NOT_FOUND : ErrorCode.NOT_COORDINATOR, partitions: [] });
    if (!group || group.is(GroupState.Dead)) return notFound();
    let eligible: TopicPartition[];
    const results: Array<[TopicPartition, number]> = [];
    if (group.is(GroupState.Empty)) {
      eligible = [...partitions];
    } else if (group.isConsumerGroup) {
      eligible = [];
      for (const tp of partitions) {
        if (group.isSubscribedToTopic(tp.topic)) results.push([tp, ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC]);
        else eligible.push(tp);
      }
    } else {
      return { error: ErrorCode.NON_EMPTY_GROUP, partitions: [] };
    }
    if (eligible.length > 0) {
      const removed = this.groupManager.cleanupGroupMetadata([group], (g) => g.removeOffsets(eligible));
      for (const tp of eligible) results.push([tp, ErrorCode.NONE]);
      this.log.info({ groupId, partitions: eligible.length, offsets: removed }, 'deleted committed offsets (OffsetDelete)');
    }
    return { error: ErrorCode.NONE, partitions: results };
  }

  // ---- OffsetCommit / OffsetFetch ---------------------------------------------------------------

  handleCommitOffsets(
    groupId: string,
    memberId: string,
    groupInstanceId: string | null,
    generationId: number,
    offsets: ReadonlyArray<[TopicPartition, OffsetAndMetadata]>,
    callback: (results: Array<[TopicPartition, number]>) => void,
  ): void {
    const all = (error: number) => callback(offsets.map(([tp]) => [tp, error]));
    const status = this.validateGroupStatus(groupId, GroupApi.OffsetCommit);
    if (status !== null) {
      all(status);
      return;
    }
    let group = this.groupManager.getGroup(groupId);
    if (!group) {
      if (generationId >= 0) {
        // a commit from an older generation of a group we no longer know
        all(ErrorCode.ILLEGAL_GENERATION);
        return;
      }
      // no group management: the group exists only to store offsets
      this.log.info({ groupId }, 'creating simple consumer group via manual offset commit');
      group = this.groupManager.addGroup(new GroupMetadata(groupId, GroupState.Empty));
    }
    this.doCommitOffsets(group, memberId, groupInstanceId, generationId, offsets, callback);
  }

  private validateOffsetCommit(group: GroupMetadata, generationId: number, memberId: string, groupInstanceId: string | null): number | null {
    if (group.is(GroupState.Dead)) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    // generation -1: the admin client or a consumer without group management, allowed while Empty
    if (generationId < 0 && group.is(GroupState.Empty)) return null;
    if (generationId >= 0 || memberId !== UNKNOWN_MEMBER_ID || groupInstanceId !== null) {
      const e = this.validateCurrentMember(group, memberId, groupInstanceId, 'offset-commit');
      if (e !== null) return e;
      return generationId !== group.generationId ? ErrorCode.ILLEGAL_GENERATION : null;
    }
    // a non-empty group takes commits from its members only
    return group.is(GroupState.Empty) ? null : ErrorCode.UNKNOWN_MEMBER_ID;
  }

  private doCommitOffsets(
    group: GroupMetadata,
    memberId: string,
    groupInstanceId: string | null,
    generationId: number,
    offsets: ReadonlyArray<[TopicPartition, OffsetAndMetadata]>,
    callback: (results: Array<[TopicPartition, number]>) => void,
  ): void {
    const error = this.validateOffsetCommit(group, generationId, memberId, groupInstanceId);
    if (error !== null) {
      callback(offsets.map(([tp]) => [tp, error]));
      return;
    }
    switch (group.currentState) {
      case GroupState.Empty:
        this.groupManager.storeOffsets(group, memberId, offsets, callback);
        return;
      case GroupState.Stable:
      case GroupState.PreparingRebalance:
        // commits during PreparingRebalance are allowed: heartbeats tell the member to rejoin
        this.rebalancer.completeAndScheduleNextHeartbeatExpiration(group, group.get(memberId));
        this.groupManager.storeOffsets(group, memberId, offsets, callback);
        return;
      case GroupState.CompletingRebalance:
        // a member of the new generation committing before SyncGroup: let it finish the rebalance
        callback(offsets.map(([tp]) => [tp, ErrorCode.REBALANCE_IN_PROGRESS]));
        return;
      case GroupState.Dead:
        throw new Error(`Logic error: unexpected group state ${group.currentState}`);
    }
  }

  /**
   * TxnOffsetCommit (KIP-98, Kafka's handleTxnCommitOffsets): offsets committed inside a transaction
   * are written as the producer's transactional batch and stay pending until the transaction's
   * marker reaches the offsets partition. The group is created if unknown; a member id, instance
   * id or generation given must match the group's (consumer group metadata sent with
   * sendOffsetsToTransaction, KIP-447).
   */
  handleTxnCommitOffsets(
    groupId: string,
    producerId: bigint,
    producerEpoch: number,
    memberId: string,
    groupInstanceId: string | null,
    generationId: number,
    offsets: ReadonlyArray<[TopicPartition, OffsetAndMetadata]>,
    callback: (results: Array<[TopicPartition, number]>) => void,
  ): void {
    const all = (error: number) => callback(offsets.map(([tp]) => [tp, error]));
    const status = this.validateGroupStatus(groupId, GroupApi.TxnOffsetCommit);
    if (status !== null) {
      all(status);
      return;
    }
    const group = this.groupManager.getGroup(groupId) ?? this.groupManager.addGroup(new GroupMetadata(groupId, GroupState.Empty));
    if (group.is(GroupState.Dead)) {
      all(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    } else if (groupInstanceId !== null && group.currentStaticMemberId(groupInstanceId) !== memberId) {
      this.log.info({ groupId, memberId, groupInstanceId }, 'static member is fenced by a newer member id (txn-commit-offsets)');
      all(ErrorCode.FENCED_INSTANCE_ID);
    } else if (memberId !== UNKNOWN_MEMBER_ID && !group.has(memberId)) {
      all(ErrorCode.UNKNOWN_MEMBER_ID);
    } else if (generationId >= 0 && generationId !== group.generationId) {
      all(ErrorCode.ILLEGAL_GENERATION);
    } else {
      this.groupManager.storeOffsets(group, memberId, offsets, callback, { producerId, producerEpoch });
    }
  }

  /** Committed offsets whatever the group state (groups may use Kafka only to store offsets). */
  handleFetchOffsets(
    groupId: string,
    requireStable: boolean,
    partitions: readonly TopicPartition[] | null,
  ): { error: number; offsets: Array<[TopicPartition, PartitionData]> } {
    const status = this.validateGroupStatus(groupId, GroupApi.OffsetFetch);
    if (status !== null) return { error: status, offsets: [] };
    return { error: ErrorCode.NONE, offsets: this.groupManager.getOffsets(groupId, requireStable, partitions) };
  }
}
