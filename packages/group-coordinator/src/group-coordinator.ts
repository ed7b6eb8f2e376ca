/**
 * The group coordinator (Kafka's classic GroupCoordinator, ZooKeeper era): group membership with
 * the two-phase JOIN_GROUP / SYNC_GROUP rebalance, heartbeats and session expiry, static
 * membership, and offset commits/fetches for the groups whose `__consumer_offsets` partition this
 * broker leads. Node runs it on one thread, so Kafka's group locks are not needed; what Kafka
 * re-checks after an append completes (state, generation) is re-checked here in the callbacks.
 *
 * Error codes, state transitions and timeouts follow Kafka 3.x's GroupCoordinator.scala.
 */
import type { Logger } from 'pino';
import { ErrorCode, type JoinGroupResponseMember, type TopicPartition } from '@samsa/protocol';
import { DelayedOperationPurgatory, SystemTimer } from '@samsa/server-common';
import { groupJoinKey, memberKey, type DelayedHeartbeat, type DelayedRebalance } from './delayed-operations.js';
import { GroupState, type GroupMetadata, type GroupOverview, type GroupSummary } from './group-metadata.js';
import { GroupApi } from './group-api.js';
import { GroupOffsets } from './group-offsets.js';
import { GroupRebalancer } from './group-rebalancer.js';
import { GroupMetadataManager, type OffsetConfig, type OffsetsLog, type PartitionData } from './group-metadata-manager.js';
import { UNKNOWN_MEMBER_ID, joinError, syncError, type JoinCallback, type Protocol, type SyncCallback } from './member-metadata.js';
import type { OffsetAndMetadata } from './records.js';

export interface GroupConfig {
  /** group.min.session.timeout.ms */
  groupMinSessionTimeoutMs: number;
  /** group.max.session.timeout.ms */
  groupMaxSessionTimeoutMs: number;
  /** group.max.size */
  groupMaxSize: number;
  /** group.initial.rebalance.delay.ms */
  groupInitialRebalanceDelayMs: number;
}

export { NEW_MEMBER_JOIN_TIMEOUT_MS } from './group-rebalancer.js';

export { GroupApi } from './group-api.js';

export interface JoinGroupParams {
  groupId: string;
  memberId: string;
  groupInstanceId: string | null;
  /** JoinGroup v4+ without group.instance.id: a new member first gets MEMBER_ID_REQUIRED. */
  requireKnownMemberId: boolean;
  /** JoinGroup v9+ (KIP-814). */
  supportSkippingAssignment: boolean;
  clientId: string;
  clientHost: string;
  rebalanceTimeoutMs: number;
  sessionTimeoutMs: number;
  protocolType: string;
  protocols: Protocol[];
  reason: string | null;
}

export interface SyncGroupParams {
  groupId: string;
  generationId: number;
  memberId: string;
  protocolType: string | null;
  protocolName: string | null;
  groupInstanceId: string | null;
  assignments: ReadonlyMap<string, Buffer>;
}

export interface LeavingMember {
  memberId: string;
  groupInstanceId: string | null;
  reason: string | null;
}

export interface LeaveGroupResult {
  topLevelError: number;
  members: Array<{ memberId: string; groupInstanceId: string | null; error: number }>;
}

export interface GroupCoordinatorOptions {
  brokerId: number;
  groupConfig: GroupConfig;
  offsetConfig: OffsetConfig;
  storage: OffsetsLog;
  logger: Logger;
  /** offsets.topic.num.partitions until startup reads the real count. */
  partitionCount: number;
  /** The purgatories' timing wheel (tests drive a fake clock). */
  timer?: SystemTimer;
}

const EMPTY_GROUP: GroupSummary = { state: '', protocolType: '', protocol: '', members: [] };
const DEAD_GROUP: GroupSummary = { state: GroupState.Dead, protocolType: '', protocol: '', members: [] };

export class GroupCoordinator {
  readonly groupManager: GroupMetadataManager;
  readonly timer: SystemTimer;
  readonly heartbeatPurgatory: DelayedOperationPurgatory<DelayedHeartbeat>;
  readonly rebalancePurgatory: DelayedOperationPurgatory<DelayedRebalance>;
  private readonly log: Logger;
  private readonly groupConfig: GroupConfig;
  private active = false;
  private readonly ownsTimer: boolean;
  private readonly rebalancer: GroupRebalancer;
  private readonly offsets: GroupOffsets;

  constructor(o: GroupCoordinatorOptions) {
    this.log = o.logger.child({ component: 'group-coordinator' });
    this.groupConfig = o.groupConfig;
    this.ownsTimer = o.timer === undefined;
    this.timer = o.timer ?? new SystemTimer();
    this.heartbeatPurgatory = new DelayedOperationPurgatory('Heartbeat', this.timer);
    this.rebalancePurgatory = new DelayedOperationPurgatory('Rebalance', this.timer);
    this.groupManager = new GroupMetadataManager(o.brokerId, o.offsetConfig, o.storage, this.log, o.partitionCount);
    this.rebalancer = new GroupRebalancer({
      groupConfig: this.groupConfig,
      groupManager: this.groupManager,
      heartbeatPurgatory: this.heartbeatPurgatory,
      rebalancePurgatory: this.rebalancePurgatory,
      log: this.log,
    });
    this.offsets = new GroupOffsets({
      groupManager: this.groupManager,
      rebalancer: this.rebalancer,
      log: this.log,
      validateGroupStatus: (groupId, api) => this.validateGroupStatus(groupId, api),
      validateCurrentMember: (group, memberId, groupInstanceId, operation) => this.validateCurrentMember(group, memberId, groupInstanceId, operation),
    });
  }

  startup(partitionCount: number, enableMetadataExpiration = true): void {
    this.log.info({ partitionCount }, 'starting up');
    this.groupManager.startup(partitionCount, enableMetadataExpiration);
    this.active = true;
  }

  async shutdown(): Promise<void> {
    this.active = false;
    await this.groupManager.shutdown();
    this.heartbeatPurgatory.shutdown();
    this.rebalancePurgatory.shutdown();
    if (this.ownsTimer) this.timer.shutdown();
  }

  get isActive(): boolean {
    return this.active;
  }

  partitionFor(groupId: string): number {
    return this.groupManager.partitionFor(groupId);
  }

  // ---- JoinGroup --------------------------------------------------------------------------------

  /** Whether the group has room for this member (group.max.size). */
  private acceptJoiningMember(group: GroupMetadata, memberId: string): boolean {
    switch (group.currentState) {
      case GroupState.Empty:
      case GroupState.Dead:
        return true;
      case GroupState.PreparingRebalance:
        return (group.has(memberId) && group.get(memberId).isAwaitingJoin) || group.numAwaiting < this.groupConfig.groupMaxSize;
      case GroupState.CompletingRebalance:
      case GroupState.Stable:
        return group.has(memberId) || group.size < this.groupConfig.groupMaxSize;
    }
  }

  handleJoinGroup(p: JoinGroupParams, callback: JoinCallback): void {
    const status = this.validateGroupStatus(p.groupId, GroupApi.JoinGroup);
    if (status !== null) {
      callback(joinError(p.memberId, status));
      return;
    }
    if (p.sessionTimeoutMs < this.groupConfig.groupMinSessionTimeoutMs || p.sessionTimeoutMs > this.groupConfig.groupMaxSessionTimeoutMs) {
      callback(joinError(p.memberId, ErrorCode.INVALID_SESSION_TIMEOUT));
      return;
    }
    const isUnknownMember = p.memberId === UNKNOWN_MEMBER_ID;
    // the group is created only for an unknown member; a known member of a missing group is unknown
    const group = this.groupManager.getOrMaybeCreateGroup(p.groupId, isUnknownMember);
    if (!group) {
      callback(joinError(p.memberId, ErrorCode.UNKNOWN_MEMBER_ID));
      return;
    }
    const reason = p.reason ?? 'not provided';
    if (!this.acceptJoiningMember(group, p.memberId)) {
      group.remove(p.memberId);
      callback(joinError(UNKNOWN_MEMBER_ID, ErrorCode.GROUP_MAX_SIZE_REACHED));
    } else if (isUnknownMember) {
      this.doNewMemberJoinGroup(group, p, callback, reason);
    } else {
      this.doCurrentMemberJoinGroup(group, p, callback, reason);
    }
    if (group.is(GroupState.PreparingRebalance)) this.rebalancePurgatory.checkAndComplete(groupJoinKey(group.groupId));
  }

  private doNewMemberJoinGroup(group: GroupMetadata, p: JoinGroupParams, callback: JoinCallback, reason: string): void {
    if (group.is(GroupState.Dead)) {
      // the group was just removed (unloaded, deleted): let the member find the coordinator again
      callback(joinError(UNKNOWN_MEMBER_ID, ErrorCode.COORDINATOR_NOT_AVAILABLE));
    } else if (!group.supportsProtocols(p.protocolType, new Set(p.protocols.map((x) => x.name)))) {
      callback(joinError(UNKNOWN_MEMBER_ID, ErrorCode.INCONSISTENT_GROUP_PROTOCOL));
    } else {
      const newMemberId = group.generateMemberId(p.clientId, p.groupInstanceId);
      if (p.groupInstanceId !== null) this.doStaticNewMemberJoinGroup(group, p.groupInstanceId, newMemberId, p, callback, reason);
      else this.doDynamicNewMemberJoinGroup(group, newMemberId, p, callback, reason);
    }
  }

  private doStaticNewMemberJoinGroup(
    group: GroupMetadata,
    groupInstanceId: string,
    newMemberId: string,
    p: JoinGroupParams,
    callback: JoinCallback,
    reason: string,
  ): void {
    const oldMemberId = group.currentStaticMemberId(groupInstanceId);
    if (oldMemberId !== undefined) {
      this.log.info(
        { groupId: group.groupId, groupInstanceId, state: group.currentState, oldMemberId, newMemberId },
        'static member with unknown member id joins; replacing the previously mapped member',
      );
      this.rebalancer.updateStaticMemberAndRebalance(group, oldMemberId, newMemberId, groupInstanceId, p, callback, reason);
    } else {
      this.log.info(
        { groupId: group.groupId, groupInstanceId, state: group.currentState, memberId: newMemberId },
        'static member with unknown member id joins; created a new member id',
      );
      this.rebalancer.addMemberAndRebalance(
        p.rebalanceTimeoutMs,
        p.sessionTimeoutMs,
        newMemberId,
        groupInstanceId,
        p.clientId,
        p.clientHost,
        p.protocolType,
        p.protocols,
        group,
        callback,
        reason,
      );
    }
  }

  private doDynamicNewMemberJoinGroup(group: GroupMetadata, newMemberId: string, p: JoinGroupParams, callback: JoinCallback, reason: string): void {
    if (p.requireKnownMemberId) {
      // KIP-394: the member must come back with this id; until then it is pending
      this.log.info(
        { groupId: group.groupId, state: group.currentState, memberId: newMemberId },
        'dynamic member with unknown member id joins; asking it to rejoin with a new member id',
      );
      group.addPendingMember(newMemberId);
      this.rebalancer.addPendingMemberExpiration(group, newMemberId, p.sessionTimeoutMs);
      callback(joinError(newMemberId, ErrorCode.MEMBER_ID_REQUIRED));
    } else {
      this.log.info(
        { groupId: group.groupId, state: group.currentState, memberId: newMemberId },
        'dynamic member with unknown member id joins; added to the group',
      );
      this.rebalancer.addMemberAndRebalance(
        p.rebalanceTimeoutMs,
        p.sessionTimeoutMs,
        newMemberId,
        null,
        p.clientId,
        p.clientHost,
        p.protocolType,
        p.protocols,
        group,
        callback,
        reason,
      );
    }
  }

  /** `groupInstanceId` (when given) maps to `memberId`, and `memberId` is in the group. */
  private validateCurrentMember(group: GroupMetadata, memberId: string, groupInstanceId: string | null, operation: string): number | null {
    if (groupInstanceId !== null) {
      const current = group.currentStaticMemberId(groupInstanceId);
      if (current === undefined) return ErrorCode.UNKNOWN_MEMBER_ID;
      if (current !== memberId) {
        this.log.info({ groupId: group.groupId, memberId, groupInstanceId, current, operation }, 'static member is fenced by a newer member id');
        return ErrorCode.FENCED_INSTANCE_ID;
      }
      return null;
    }
    return group.has(memberId) ? null : ErrorCode.UNKNOWN_MEMBER_ID;
  }

  private doCurrentMemberJoinGroup(group: GroupMetadata, p: JoinGroupParams, callback: JoinCallback, reason: string): void {
    const memberId = p.memberId;
    if (group.is(GroupState.Dead)) {
      callback(joinError(memberId, ErrorCode.COORDINATOR_NOT_AVAILABLE));
      return;
    }
    if (!group.supportsProtocols(p.protocolType, new Set(p.protocols.map((x) => x.name)))) {
      callback(joinError(memberId, ErrorCode.INCONSISTENT_GROUP_PROTOCOL));
      return;
    }
    if (group.isPendingMember(memberId)) {
      // the second step of the two-step join; pending members are never static
      if (p.groupInstanceId !== null)
        throw new Error(`Received unexpected JoinGroup with groupInstanceId=${p.groupInstanceId} for pending member with memberId=${memberId}`);
      this.log.info({ groupId: group.groupId, memberId, state: group.currentState }, 'pending dynamic member joins; adding it to the group');
      this.rebalancer.addMemberAndRebalance(
        p.rebalanceTimeoutMs,
        p.sessionTimeoutMs,
        memberId,
        null,
        p.clientId,
        p.clientHost,
        p.protocolType,
        p.protocols,
        group,
        callback,
        reason,
      );
      return;
    }
    const error = this.validateCurrentMember(group, memberId, p.groupInstanceId, 'join-group');
    if (error !== null) {
      callback(joinError(memberId, error));
      return;
    }
    const member = group.get(memberId);
    const update = (why: string) =>
      this.rebalancer.updateMemberAndRebalance(
        group,
        member,
        p.protocols,
        p.rebalanceTimeoutMs,
        p.sessionTimeoutMs,
        `${why}; client reason: ${reason}`,
        callback,
      );
    const current = (members: JoinGroupResponseMember[]) =>
      callback({
        members,
        memberId,
        generationId: group.generationId,
        protocolType: group.protocolType,
        protocolName: group.protocolName,
        leaderId: group.leaderOrNull ?? '',
        skipAssignment: false,
        error: ErrorCode.NONE,
      });
    switch (group.currentState) {
      case GroupState.PreparingRebalance:
        update(`Member ${memberId} joining group during ${group.currentState}`);
        break;
      case GroupState.CompletingRebalance:
        // the same metadata: the member probably missed the JoinGroup answer; answer it again
        if (member.matches(p.protocols)) current(group.isLeader(memberId) ? group.currentMemberMetadata() : []);
        else update(`Updating metadata for member ${memberId} during ${group.currentState}`);
        break;
      case GroupState.Stable:
        // the leader rejoining forces a rebalance (topic metadata changed); followers only with new metadata
        if (group.isLeader(memberId)) update(`Leader ${memberId} re-joining group during ${group.currentState}`);
        else if (!member.matches(p.protocols)) update(`Updating metadata for member ${memberId} during ${group.currentState}`);
        else current([]);
        break;
      case GroupState.Empty:
      case GroupState.Dead:
        this.log.warn({ groupId: group.groupId, memberId, state: group.currentState }, 'attempt to add rejoining member in unexpected group state');
        callback(joinError(memberId, ErrorCode.UNKNOWN_MEMBER_ID));
        break;
    }
  }

  // ---- SyncGroup --------------------------------------------------------------------------------

  handleSyncGroup(p: SyncGroupParams, callback: SyncCallback): void {
    const status = this.validateGroupStatus(p.groupId, GroupApi.SyncGroup);
    if (status === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS) {
      // the rebalance state was lost with the coordinator move: rejoin (older clients do not know LOAD_IN_PROGRESS here)
      callback(syncError(ErrorCode.REBALANCE_IN_PROGRESS));
      return;
    }
    if (status !== null) {
      callback(syncError(status));
      return;
    }
    const group = this.groupManager.getGroup(p.groupId);
    if (!group) {
      callback(syncError(ErrorCode.UNKNOWN_MEMBER_ID));
      return;
    }
    this.doSyncGroup(group, p, callback);
  }

  private validateSyncGroup(group: GroupMetadata, p: SyncGroupParams): number | null {
    if (group.is(GroupState.Dead)) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    const e = this.validateCurrentMember(group, p.memberId, p.groupInstanceId, 'sync-group');
    if (e !== null) return e;
    if (p.generationId !== group.generationId) return ErrorCode.ILLEGAL_GENERATION;
    if (p.protocolType !== null && group.protocolType !== p.protocolType) return ErrorCode.INCONSISTENT_GROUP_PROTOCOL;
    if (p.protocolName !== null && group.protocolName !== p.protocolName) return ErrorCode.INCONSISTENT_GROUP_PROTOCOL;
    return null;
  }

  private doSyncGroup(group: GroupMetadata, p: SyncGroupParams, callback: SyncCallback): void {
    const error = this.validateSyncGroup(group, p);
    if (error !== null) {
      callback(syncError(error));
      return;
    }
    switch (group.currentState) {
      case GroupState.Empty:
        callback(syncError(ErrorCode.UNKNOWN_MEMBER_ID));
        return;
      case GroupState.PreparingRebalance:
        callback(syncError(ErrorCode.REBALANCE_IN_PROGRESS));
        return;
      case GroupState.CompletingRebalance: {
        group.get(p.memberId).awaitingSyncCallback = callback;
        this.rebalancer.removePendingSyncMember(group, p.memberId);
        if (group.isLeader(p.memberId)) {
          this.log.info(
            { groupId: group.groupId, memberId: p.memberId, generation: group.generationId, members: group.size, staticMembers: group.allStaticMembers.length },
            'assignment received from the leader',
          );
          // members the leader left out get an empty assignment
          const assignment = new Map(p.assignments);
          const missing = group.allMembers.filter((m) => !assignment.has(m));
          for (const m of missing) assignment.set(m, Buffer.alloc(0));
          if (missing.length > 0)
            this.log.warn({ groupId: group.groupId, generation: group.generationId, missing }, 'setting empty assignments for members the leader left out');
          const generationId = group.generationId;
          this.groupManager.storeGroup(group, assignment, (storeError) => {
            // the group may have moved on (a join, a leave) while the write was in flight
            if (!group.is(GroupState.CompletingRebalance) || generationId !== group.generationId) return;
            if (storeError !== ErrorCode.NONE) {
              this.rebalancer.resetAndPropagateAssignmentError(group, storeError);
              this.rebalancer.maybePrepareRebalance(group, `Error ${storeError} when storing group assignment during SyncGroup (member: ${p.memberId})`);
            } else {
              this.rebalancer.setAndPropagateAssignment(group, assignment);
              group.transitionTo(GroupState.Stable);
            }
          });
        }
        return;
      }
      case GroupState.Stable: {
        this.rebalancer.removePendingSyncMember(group, p.memberId);
        const member = group.get(p.memberId);
        callback({ protocolType: group.protocolType, protocolName: group.protocolName, assignment: member.assignment, error: ErrorCode.NONE });
        this.rebalancer.completeAndScheduleNextHeartbeatExpiration(group, member);
        return;
      }
      case GroupState.Dead:
        throw new Error(`Reached unexpected condition for Dead group ${group.groupId}`);
    }
  }

  // ---- LeaveGroup -------------------------------------------------------------------------------

  handleLeaveGroup(groupId: string, leaving: readonly LeavingMember[]): LeaveGroupResult {
    const status = this.validateGroupStatus(groupId, GroupApi.LeaveGroup);
    if (status !== null) return { topLevelError: status, members: [] };
    const memberResult = (m: LeavingMember, error: number) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, error });
    const group = this.groupManager.getGroup(groupId);
    if (!group) return { topLevelError: ErrorCode.NONE, members: leaving.map((m) => memberResult(m, ErrorCode.UNKNOWN_MEMBER_ID)) };
    if (group.is(GroupState.Dead)) return { topLevelError: ErrorCode.COORDINATOR_NOT_AVAILABLE, members: [] };
    const removeCurrent = (memberId: string, reason: string | null) => {
      const member = group.get(memberId);
      const why = reason ?? 'not provided';
      this.rebalancer.removeMemberAndUpdateGroup(group, member, `Removing member ${memberId} on LeaveGroup; client reason: ${why}`);
      this.rebalancer.removeHeartbeatForLeavingMember(group, memberId);
      this.log.info({ groupId, memberId, reason: why }, 'member left the group through LeaveGroup');
    };
    const members = leaving.map((m) => {
      // administrative removal by group.instance.id (no member id)
      if (m.memberId === UNKNOWN_MEMBER_ID) {
        const current = m.groupInstanceId !== null ? group.currentStaticMemberId(m.groupInstanceId) : undefined;
        if (current === undefined) return memberResult(m, ErrorCode.UNKNOWN_MEMBER_ID);
        removeCurrent(current, m.reason);
        return memberResult(m, ErrorCode.NONE);
      }
      if (group.isPendingMember(m.memberId)) {
        this.rebalancer.removePendingMemberAndUpdateGroup(group, m.memberId);
        this.heartbeatPurgatory.checkAndComplete(memberKey(group.groupId, m.memberId));
        this.log.info({ groupId, memberId: m.memberId }, 'pending member left the group through LeaveGroup');
        return memberResult(m, ErrorCode.NONE);
      }
      const error = this.validateCurrentMember(group, m.memberId, m.groupInstanceId, 'leave-group');
      if (error !== null) return memberResult(m, error);
      removeCurrent(m.memberId, m.reason);
      return memberResult(m, ErrorCode.NONE);
    });
    return { topLevelError: ErrorCode.NONE, members };
  }

  // ---- DeleteGroups -----------------------------------------------------------------------------

  handleDeleteGroups(groupIds: readonly string[]): Map<string, number> {
    const errors = new Map<string, number>();
    const eligible: GroupMetadata[] = [];
    for (const groupId of new Set(groupIds)) {
      const status = this.validateGroupStatus(groupId, GroupApi.DeleteGroups);
      if (status !== null) {
        errors.set(groupId, status);
        continue;
      }
      const group = this.groupManager.getGroup(groupId);
      const notFound = () => (this.groupManager.groupNotExists(groupId) ? ErrorCode.GROUP_ID_NOT_FOUND : ErrorCode.NOT_COORDINATOR);
      if (!group) {
        errors.set(groupId, notFound());
        continue;
      }
      switch (group.currentState) {
        case GroupState.Dead:
          errors.set(groupId, notFound());
          break;
        case GroupState.Empty:
          group.transitionTo(GroupState.Dead);
          eligible.push(group);
          break;
        default:
          errors.set(groupId, ErrorCode.NON_EMPTY_GROUP);
      }
    }
    if (eligible.length > 0) {
      const removed = this.groupManager.cleanupGroupMetadata(eligible, (g) => g.removeAllOffsets());
      for (const g of eligible) errors.set(g.groupId, ErrorCode.NONE);
      this.log.info({ groups: eligible.map((g) => g.groupId), offsets: removed }, 'deleted groups');
    }
    return errors;
  }

  // ---- OffsetDelete / OffsetCommit / OffsetFetch (group-offsets.ts) -----------------------------

  handleDeleteOffsets(groupId: string, partitions: readonly TopicPartition[]): { error: number; partitions: Array<[TopicPartition, number]> } {
    return this.offsets.handleDeleteOffsets(groupId, partitions);
  }

  handleCommitOffsets(
    groupId: string,
    memberId: string,
    groupInstanceId: string | null,
    generationId: number,
    offsets: ReadonlyArray<[TopicPartition, OffsetAndMetadata]>,
    callback: (results: Array<[TopicPartition, number]>) => void,
  ): void {
    this.offsets.handleCommitOffsets(groupId, memberId, groupInstanceId, generationId, offsets, callback);
  }

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
    this.offsets.handleTxnCommitOffsets(groupId, producerId, producerEpoch, memberId, groupInstanceId, generationId, offsets, callback);
  }

  /**
   * Transaction markers were written to these `__consumer_offsets` partitions (WriteTxnMarkers):
   * complete the producer's pending transactional offset commits there (Kafka's
   * scheduleHandleTxnCompletion, run after the marker append).
   */
  scheduleHandleTxnCompletion(producerId: bigint, offsetsPartitions: Iterable<number>, isCommit: boolean): void {
    const partitions = new Set(offsetsPartitions);
    setImmediate(() => this.groupManager.handleTxnCompletion(producerId, partitions, isCommit));
  }

  handleFetchOffsets(
    groupId: string,
    requireStable: boolean,
    partitions: readonly TopicPartition[] | null,
  ): { error: number; offsets: Array<[TopicPartition, PartitionData]> } {
    return this.offsets.handleFetchOffsets(groupId, requireStable, partitions);
  }

  // ---- Heartbeat --------------------------------------------------------------------------------

  handleHeartbeat(groupId: string, memberId: string, groupInstanceId: string | null, generationId: number): number {
    const status = this.validateGroupStatus(groupId, GroupApi.Heartbeat);
    // while loading the group is not known yet: answer blindly
    if (status !== null) return status === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS ? ErrorCode.NONE : status;
    const group = this.groupManager.getGroup(groupId);
    if (!group) return ErrorCode.UNKNOWN_MEMBER_ID;
    if (group.is(GroupState.Dead)) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    const error = this.validateCurrentMember(group, memberId, groupInstanceId, 'heartbeat');
    if (error !== null) return error;
    if (generationId !== group.generationId) return ErrorCode.ILLEGAL_GENERATION;
    switch (group.currentState) {
      case GroupState.Empty:
        return ErrorCode.UNKNOWN_MEMBER_ID;
      case GroupState.CompletingRebalance:
        // heartbeats may start right after the JoinGroup answer
        this.rebalancer.completeAndScheduleNextHeartbeatExpiration(group, group.get(memberId));
        return ErrorCode.NONE;
      case GroupState.PreparingRebalance:
        this.rebalancer.completeAndScheduleNextHeartbeatExpiration(group, group.get(memberId));
        return ErrorCode.REBALANCE_IN_PROGRESS;
      case GroupState.Stable:
        this.rebalancer.completeAndScheduleNextHeartbeatExpiration(group, group.get(memberId));
        return ErrorCode.NONE;
      case GroupState.Dead:
        throw new Error(`Reached unexpected condition for Dead group ${groupId}`);
    }
  }

  // ---- ListGroups / DescribeGroups --------------------------------------------------------------

  handleListGroups(states: ReadonlySet<string>, types: ReadonlySet<string>): { error: number; groups: GroupOverview[] } {
    if (!this.active) return { error: ErrorCode.COORDINATOR_NOT_AVAILABLE, groups: [] };
    const error = this.groupManager.isLoading ? ErrorCode.COORDINATOR_LOAD_IN_PROGRESS : ErrorCode.NONE;
    const lowerStates = new Set([...states].map((s) => s.toLowerCase()));
    const lowerTypes = new Set([...types].map((t) => t.toLowerCase()));
    const groups = this.groupManager
      .currentGroups()
      .filter((g) => (lowerStates.size === 0 || g.isInStates(lowerStates)) && (lowerTypes.size === 0 || lowerTypes.has('classic')))
      .map((g) => g.overview());
    return { error, groups };
  }

  handleDescribeGroup(groupId: string): { error: number; summary: GroupSummary } {
    const status = this.validateGroupStatus(groupId, GroupApi.DescribeGroups);
    if (status !== null) return { error: status, summary: EMPTY_GROUP };
    const group = this.groupManager.getGroup(groupId);
    if (!group) return { error: ErrorCode.NONE, summary: DEAD_GROUP };
    return { error: ErrorCode.NONE, summary: group.summary() };
  }

  /** Topic partitions were deleted: forget their committed offsets (tombstones in the log). */
  handleDeletedPartitions(partitions: readonly TopicPartition[]): void {
    if (partitions.length === 0) return;
    const removed = this.groupManager.cleanupGroupMetadata(this.groupManager.currentGroups(), (g) => g.removeOffsets(partitions));
    this.log.info({ partitions: partitions.length, offsets: removed }, 'removed offsets of deleted partitions');
  }

  /** Whole topics were deleted. */
  handleDeletedTopics(topics: readonly string[]): void {
    if (topics.length === 0) return;
    const set = new Set(topics);
    const removed = this.groupManager.cleanupGroupMetadata(this.groupManager.currentGroups(), (g) =>
      g.removeOffsets(
        g
          .allOffsets()
          .map(([tp]) => tp)
          .filter((tp) => set.has(tp.topic)),
      ),
    );
    if (removed > 0) this.log.info({ topics, offsets: removed }, 'removed offsets of deleted topics');
  }

  // ---- coordinator status -----------------------------------------------------------------------

  private isValidGroupId(groupId: string, api: GroupApi): boolean {
    // offset APIs, DescribeGroups and DeleteGroups accept the empty group id (compatibility)
    switch (api) {
      case GroupApi.OffsetCommit:
      case GroupApi.OffsetFetch:
      case GroupApi.DescribeGroups:
      case GroupApi.DeleteGroups:
        return true;
      default:
        return groupId !== '';
    }
  }

  /** INVALID_GROUP_ID, COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS or NOT_COORDINATOR; null when we serve the group. */
  validateGroupStatus(groupId: string, api: GroupApi): number | null {
    if (!this.isValidGroupId(groupId, api)) return ErrorCode.INVALID_GROUP_ID;
    if (!this.active) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    if (this.groupManager.isGroupLoading(groupId)) return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS;
    if (!this.groupManager.isGroupLocal(groupId)) return ErrorCode.NOT_COORDINATOR;
    return null;
  }

  private onGroupUnloaded(group: GroupMetadata): void {
    this.log.info({ groupId: group.groupId, generation: group.generationId }, 'unloading group metadata');
    const previous = group.currentState;
    group.transitionTo(GroupState.Dead);
    switch (previous) {
      case GroupState.Empty:
      case GroupState.Dead:
        break;
      case GroupState.PreparingRebalance:
        for (const m of group.allMemberMetadata) group.maybeInvokeJoinCallback(m, joinError(m.memberId, ErrorCode.NOT_COORDINATOR));
        this.rebalancePurgatory.checkAndComplete(groupJoinKey(group.groupId));
        break;
      case GroupState.Stable:
      case GroupState.CompletingRebalance:
        for (const m of group.allMemberMetadata) {
          group.maybeInvokeSyncCallback(m, syncError(ErrorCode.NOT_COORDINATOR));
          this.heartbeatPurgatory.checkAndComplete(memberKey(group.groupId, m.memberId));
        }
        break;
    }
    this.rebalancer.removeSyncExpiration(group);
  }

  private onGroupLoaded(group: GroupMetadata): void {
    this.log.info({ groupId: group.groupId, generation: group.generationId, state: group.currentState }, 'loaded group metadata');
    if (group.size > this.groupConfig.groupMaxSize) {
      this.rebalancer.prepareRebalance(
        group,
        `Freshly-loaded group is over capacity (${this.groupConfig.groupMaxSize}). Rebalancing in order to give a chance for consumers to commit offsets`,
      );
    }
    for (const m of group.allMemberMetadata) this.rebalancer.completeAndScheduleNextHeartbeatExpiration(group, m);
  }

  /** This broker became leader of offsets partition `partition` (leader epoch = coordinator epoch). */
  onElection(partition: number, coordinatorEpoch: number): Promise<void> {
    this.log.info({ partition, coordinatorEpoch }, 'elected as the group coordinator for an offsets partition');
    return this.groupManager.scheduleLoadGroupAndOffsets(partition, coordinatorEpoch, (g) => this.onGroupLoaded(g));
  }

  /** This broker no longer leads offsets partition `partition`. */
  onResignation(partition: number, coordinatorEpoch: number | null): void {
    this.log.info({ partition, coordinatorEpoch }, 'resigned as the group coordinator for an offsets partition');
    this.groupManager.removeGroupsForPartition(partition, coordinatorEpoch, (g) => this.onGroupUnloaded(g));
  }
}
