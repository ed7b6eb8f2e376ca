/**
 * The rebalance machinery behind the group coordinator (the second half of Kafka's
 * GroupCoordinator.scala): preparing and completing rebalances, propagating assignments, and the
 * heartbeat / join / sync expirations the delayed operations call back into. The coordinator's
 * request handlers validate and route; everything that moves a group between generations is here.
 */
import type { Logger } from 'pino';
import { ErrorCode } from '@samsa/protocol';
import type { DelayedOperationPurgatory } from '@samsa/server-common';
import {
  DelayedHeartbeat,
  DelayedJoin,
  DelayedSync,
  InitialDelayedJoin,
  groupJoinKey,
  groupSyncKey,
  memberKey,
  type DelayedGroupCallbacks,
  type DelayedRebalance,
} from './delayed-operations.js';
import { GroupState, type GroupMetadata } from './group-metadata.js';
import type { GroupMetadataManager } from './group-metadata-manager.js';
import { MemberMetadata, UNKNOWN_MEMBER_ID, joinError, syncError, type JoinCallback, type Protocol } from './member-metadata.js';
import type { GroupConfig, JoinGroupParams } from './group-coordinator.js';

/** A new member's JoinGroup is parked at most this long (Kafka's NewMemberJoinTimeoutMs). */
export const NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000;

export interface GroupRebalancerOptions {
  groupConfig: GroupConfig;
  groupManager: GroupMetadataManager;
  heartbeatPurgatory: DelayedOperationPurgatory<DelayedHeartbeat>;
  rebalancePurgatory: DelayedOperationPurgatory<DelayedRebalance>;
  log: Logger;
}

export class GroupRebalancer implements DelayedGroupCallbacks {
  private readonly groupConfig: GroupConfig;
  private readonly groupManager: GroupMetadataManager;
  private readonly heartbeatPurgatory: DelayedOperationPurgatory<DelayedHeartbeat>;
  private readonly rebalancePurgatory: DelayedOperationPurgatory<DelayedRebalance>;
  private readonly log: Logger;

  constructor(o: GroupRebalancerOptions) {
    this.groupConfig = o.groupConfig;
    this.groupManager = o.groupManager;
    this.heartbeatPurgatory = o.heartbeatPurgatory;
    this.rebalancePurgatory = o.rebalancePurgatory;
    this.log = o.log;
  }

  setAndPropagateAssignment(group: GroupMetadata, assignment: ReadonlyMap<string, Buffer>): void {
    for (const m of group.allMemberMetadata) m.assignment = assignment.get(m.memberId) ?? Buffer.alloc(0);
    this.propagateAssignment(group, ErrorCode.NONE);
  }

  resetAndPropagateAssignmentError(group: GroupMetadata, error: number): void {
    for (const m of group.allMemberMetadata) m.assignment = Buffer.alloc(0);
    this.propagateAssignment(group, error);
  }

  propagateAssignment(group: GroupMetadata, error: number): void {
    const ok = error === ErrorCode.NONE;
    for (const m of group.allMemberMetadata) {
      if (m.assignment.length === 0 && ok)
        this.log.warn({ groupId: group.groupId, memberId: m.memberId, generation: group.generationId }, 'sending empty assignment with no errors');
      const answered = group.maybeInvokeSyncCallback(m, {
        protocolType: ok ? group.protocolType : null,
        protocolName: ok ? group.protocolName : null,
        assignment: m.assignment,
        error,
      });
      // sessions that expired while waiting for the assignment are re-armed now
      if (answered) this.completeAndScheduleNextHeartbeatExpiration(group, m);
    }
  }

  completeAndScheduleNextHeartbeatExpiration(group: GroupMetadata, member: MemberMetadata): void {
    this.completeAndScheduleNextExpiration(group, member, member.sessionTimeoutMs);
  }

  completeAndScheduleNextExpiration(group: GroupMetadata, member: MemberMetadata, timeoutMs: number): void {
    const key = memberKey(group.groupId, member.memberId);
    member.heartbeatSatisfied = true;
    this.heartbeatPurgatory.checkAndComplete(key);
    member.heartbeatSatisfied = false;
    this.heartbeatPurgatory.tryCompleteElseWatch(new DelayedHeartbeat(this, group, member.memberId, false, timeoutMs), [key]);
  }

  addPendingMemberExpiration(group: GroupMetadata, pendingMemberId: string, timeoutMs: number): void {
    this.heartbeatPurgatory.tryCompleteElseWatch(new DelayedHeartbeat(this, group, pendingMemberId, true, timeoutMs), [
      memberKey(group.groupId, pendingMemberId),
    ]);
  }

  removeHeartbeatForLeavingMember(group: GroupMetadata, memberId: string): void {
    this.heartbeatPurgatory.checkAndComplete(memberKey(group.groupId, memberId));
  }

  addMemberAndRebalance(
    rebalanceTimeoutMs: number,
    sessionTimeoutMs: number,
    memberId: string,
    groupInstanceId: string | null,
    clientId: string,
    clientHost: string,
    protocolType: string,
    protocols: Protocol[],
    group: GroupMetadata,
    callback: JoinCallback,
    reason: string,
  ): void {
    const member = new MemberMetadata(memberId, groupInstanceId, clientId, clientHost, rebalanceTimeoutMs, sessionTimeoutMs, protocolType, protocols);
    member.isNew = true;
    // a member arriving during the initial delay extends it
    if (group.is(GroupState.PreparingRebalance) && group.generationId === 0) group.newMemberAdded = true;
    group.add(member, callback);
    // a new member's JoinGroup is parked at most NewMemberJoinTimeoutMs (its session does not apply:
    // it has no member id to heartbeat with, and a client that gave up would leave a defunct member)
    this.completeAndScheduleNextExpiration(group, member, NEW_MEMBER_JOIN_TIMEOUT_MS);
    this.maybePrepareRebalance(group, `Adding new member ${memberId} with group instance id ${groupInstanceId}; client reason: ${reason}`);
  }

  updateStaticMemberAndRebalance(
    group: GroupMetadata,
    oldMemberId: string,
    newMemberId: string,
    groupInstanceId: string,
    p: JoinGroupParams,
    callback: JoinCallback,
    reason: string,
  ): void {
    const currentLeader = group.leaderOrNull;
    const member = group.replaceStaticMember(groupInstanceId, oldMemberId, newMemberId, {
      join: joinError(oldMemberId, ErrorCode.FENCED_INSTANCE_ID),
      sync: syncError(ErrorCode.FENCED_INSTANCE_ID),
    });
    // the old member id's heartbeat expires without effect; the new one gets its own
    this.completeAndScheduleNextHeartbeatExpiration(group, member);
    const oldRebalanceTimeoutMs = member.rebalanceTimeoutMs;
    const oldSessionTimeoutMs = member.sessionTimeoutMs;
    const oldProtocols = member.supportedProtocols;
    group.updateMember(member, p.protocols, p.rebalanceTimeoutMs, p.sessionTimeoutMs, callback);
    switch (group.currentState) {
      case GroupState.Stable: {
        // no rebalance unless the group's protocol would change: persist the new member id
        const selected = group.selectProtocol();
        if (group.protocolName === selected) {
          this.log.info({ groupId: group.groupId, groupInstanceId }, 'static member joins during Stable without changing the protocol; no rebalance');
          const assignment = new Map(group.allMemberMetadata.map((m) => [m.memberId, m.assignment]));
          this.groupManager.storeGroup(group, assignment, (error) => {
            if (error !== ErrorCode.NONE) {
              this.log.warn({ groupId: group.groupId, error }, 'failed to persist metadata for group');
              // revert: the old member id stays
              group.updateMember(member, oldProtocols, oldRebalanceTimeoutMs, oldSessionTimeoutMs, null);
              const oldMember = group.replaceStaticMember(groupInstanceId, newMemberId, oldMemberId, {
                join: joinError(newMemberId, ErrorCode.FENCED_INSTANCE_ID),
                sync: syncError(ErrorCode.FENCED_INSTANCE_ID),
              });
              this.completeAndScheduleNextHeartbeatExpiration(group, oldMember);
              callback({
                members: [],
                memberId: UNKNOWN_MEMBER_ID,
                generationId: group.generationId,
                protocolType: group.protocolType,
                protocolName: group.protocolName,
                leaderId: currentLeader ?? '',
                skipAssignment: false,
                error,
              });
            } else if (p.supportSkippingAssignment) {
              // JoinGroup v9+: the leader learns it leads but skips the assignor while Stable
              const isLeader = group.isLeader(newMemberId);
              group.maybeInvokeJoinCallback(member, {
                members: isLeader ? group.currentMemberMetadata() : [],
                memberId: newMemberId,
                generationId: group.generationId,
                protocolType: group.protocolType,
                protocolName: group.protocolName,
                leaderId: group.leaderOrNull ?? '',
                skipAssignment: isLeader,
                error: ErrorCode.NONE,
              });
            } else {
              // older clients get the old leader id, so a replaced leader does not run a useless assignment
              group.maybeInvokeJoinCallback(member, {
                members: [],
                memberId: newMemberId,
                generationId: group.generationId,
                protocolType: group.protocolType,
                protocolName: group.protocolName,
                leaderId: currentLeader ?? '',
                skipAssignment: false,
                error: ErrorCode.NONE,
              });
            }
          });
        } else {
          this.maybePrepareRebalance(
            group,
            `Group's selectedProtocol will change because static member ${member.memberId} with instance id ${groupInstanceId} joined with change of protocol; client reason: ${reason}`,
          );
        }
        break;
      }
      case GroupState.CompletingRebalance:
        // the leader may already have assigned to the old member id: rebalance
        this.prepareRebalance(group, `Updating metadata for static member ${member.memberId} with instance id ${groupInstanceId}; client reason: ${reason}`);
        break;
      case GroupState.Empty:
      case GroupState.Dead:
        throw new Error(
          `Group ${group.groupId} was not supposed to be in the state ${group.currentState} when the unknown static member ${groupInstanceId} rejoins.`,
        );
      case GroupState.PreparingRebalance:
        break;
    }
  }

  updateMemberAndRebalance(
    group: GroupMetadata,
    member: MemberMetadata,
    protocols: Protocol[],
    rebalanceTimeoutMs: number,
    sessionTimeoutMs: number,
    reason: string,
    callback: JoinCallback,
  ): void {
    group.updateMember(member, protocols, rebalanceTimeoutMs, sessionTimeoutMs, callback);
    this.maybePrepareRebalance(group, reason);
  }

  maybePrepareRebalance(group: GroupMetadata, reason: string): void {
    if (group.canRebalance) this.prepareRebalance(group, reason);
  }

  /** → PreparingRebalance, with a DelayedJoin (an InitialDelayedJoin when the group was Empty). */
  prepareRebalance(group: GroupMetadata, reason: string): void {
    // members waiting for an assignment must rejoin
    if (group.is(GroupState.CompletingRebalance)) this.resetAndPropagateAssignmentError(group, ErrorCode.REBALANCE_IN_PROGRESS);
    this.removeSyncExpiration(group);
    const delay = this.groupConfig.groupInitialRebalanceDelayMs;
    const op: DelayedJoin = group.is(GroupState.Empty)
      ? new InitialDelayedJoin(this, this.rebalancePurgatory, group, delay, delay, Math.max(group.rebalanceTimeoutMs - delay, 0))
      : new DelayedJoin(this, group, group.rebalanceTimeoutMs);
    group.transitionTo(GroupState.PreparingRebalance);
    this.log.info(
      { groupId: group.groupId, generation: group.generationId, partition: this.groupManager.partitionFor(group.groupId), reason },
      'preparing to rebalance group',
    );
    this.rebalancePurgatory.tryCompleteElseWatch(op, [groupJoinKey(group.groupId)]);
  }

  removeMemberAndUpdateGroup(group: GroupMetadata, member: MemberMetadata, reason: string): void {
    // a new member may time out while its JoinGroup is parked: answer it so the client retries
    group.maybeInvokeJoinCallback(member, joinError(UNKNOWN_MEMBER_ID, ErrorCode.UNKNOWN_MEMBER_ID));
    group.remove(member.memberId);
    switch (group.currentState) {
      case GroupState.Dead:
      case GroupState.Empty:
        break;
      case GroupState.Stable:
      case GroupState.CompletingRebalance:
        this.maybePrepareRebalance(group, reason);
        break;
      case GroupState.PreparingRebalance:
        this.rebalancePurgatory.checkAndComplete(groupJoinKey(group.groupId));
        break;
    }
  }

  removePendingMemberAndUpdateGroup(group: GroupMetadata, memberId: string): void {
    group.remove(memberId);
    if (group.is(GroupState.PreparingRebalance)) this.rebalancePurgatory.checkAndComplete(groupJoinKey(group.groupId));
  }

  tryCompleteJoin(group: GroupMetadata, forceComplete: () => boolean): boolean {
    return group.hasAllMembersJoined ? forceComplete() : false;
  }

  /** All members rejoined or the rebalance timeout passed: the next generation. */
  onCompleteJoin(group: GroupMetadata): void {
    const notYetRejoined = group.notYetRejoinedMembers.filter((m) => !m.isStaticMember);
    if (notYetRejoined.length > 0) {
      this.log.info({ groupId: group.groupId, members: notYetRejoined.map((m) => m.memberId) }, 'removing dynamic members that did not rejoin');
      for (const m of notYetRejoined) {
        group.remove(m.memberId);
        this.removeHeartbeatForLeavingMember(group, m.memberId);
      }
    }
    if (group.is(GroupState.Dead)) {
      this.log.info({ groupId: group.groupId }, 'group is dead, skipping rebalance stage');
      return;
    }
    if (!group.maybeElectNewJoinedLeader() && group.allMembers.length > 0) {
      // nobody rejoined (only static members remain): wait another rebalance timeout, until
      // their sessions expire
      this.log.error({ groupId: group.groupId }, 'group could not complete rebalance because no members rejoined');
      this.rebalancePurgatory.tryCompleteElseWatch(new DelayedJoin(this, group, group.rebalanceTimeoutMs), [groupJoinKey(group.groupId)]);
      return;
    }
    group.initNextGeneration();
    if (group.is(GroupState.Empty)) {
      this.log.info({ groupId: group.groupId, generation: group.generationId, partition: this.groupManager.partitionFor(group.groupId) }, 'group is now empty');
      this.groupManager.storeGroup(group, new Map(), (error) => {
        // an old generation may come back after a failover; harmless for a group without members
        if (error !== ErrorCode.NONE) this.log.warn({ groupId: group.groupId, error }, 'failed to write empty metadata for group');
      });
      return;
    }
    this.log.info(
      {
        groupId: group.groupId,
        generation: group.generationId,
        partition: this.groupManager.partitionFor(group.groupId),
        members: group.size,
        protocol: group.protocolName,
        leader: group.leaderOrNull,
      },
      'stabilized group',
    );
    for (const m of group.allMemberMetadata) {
      group.maybeInvokeJoinCallback(m, {
        members: group.isLeader(m.memberId) ? group.currentMemberMetadata() : [],
        memberId: m.memberId,
        generationId: group.generationId,
        protocolType: group.protocolType,
        protocolName: group.protocolName,
        leaderId: group.leaderOrNull ?? '',
        skipAssignment: false,
        error: ErrorCode.NONE,
      });
      this.completeAndScheduleNextHeartbeatExpiration(group, m);
      m.isNew = false;
      group.addPendingSyncMember(m.memberId);
    }
    this.schedulePendingSync(group);
  }

  removePendingSyncMember(group: GroupMetadata, memberId: string): void {
    group.removePendingSyncMember(memberId);
    this.maybeCompleteSyncExpiration(group);
  }

  removeSyncExpiration(group: GroupMetadata): void {
    group.clearPendingSyncMembers();
    this.maybeCompleteSyncExpiration(group);
  }

  maybeCompleteSyncExpiration(group: GroupMetadata): void {
    this.rebalancePurgatory.checkAndComplete(groupSyncKey(group.groupId));
  }

  schedulePendingSync(group: GroupMetadata): void {
    this.rebalancePurgatory.tryCompleteElseWatch(new DelayedSync(this, group, group.generationId, group.rebalanceTimeoutMs), [groupSyncKey(group.groupId)]);
  }

  tryCompletePendingSync(group: GroupMetadata, generationId: number, forceComplete: () => boolean): boolean {
    if (generationId !== group.generationId) return forceComplete();
    switch (group.currentState) {
      case GroupState.Dead:
      case GroupState.Empty:
      case GroupState.PreparingRebalance:
        return forceComplete();
      case GroupState.CompletingRebalance:
      case GroupState.Stable:
        return group.hasReceivedSyncFromAllMembers ? forceComplete() : false;
    }
  }

  /** Members that did not send SyncGroup within the rebalance timeout are removed; the group rebalances. */
  onExpirePendingSync(group: GroupMetadata, generationId: number): void {
    if (generationId !== group.generationId) {
      this.log.error({ groupId: group.groupId, generationId, current: group.generationId }, 'unexpected sync expiration for an old generation');
      return;
    }
    switch (group.currentState) {
      case GroupState.Dead:
      case GroupState.Empty:
      case GroupState.PreparingRebalance:
        this.log.error({ groupId: group.groupId, state: group.currentState }, 'unexpected sync expiration after the group moved on');
        return;
      case GroupState.CompletingRebalance:
      case GroupState.Stable:
        if (!group.hasReceivedSyncFromAllMembers) {
          const pending = group.allPendingSyncMembers;
          for (const memberId of pending) {
            group.remove(memberId);
            this.removeHeartbeatForLeavingMember(group, memberId);
          }
          this.log.info({ groupId: group.groupId, members: pending }, 'removed members that did not send SyncGroup');
          this.prepareRebalance(group, `Removing ${pending.join(',')} on pending sync request expiration`);
        }
    }
  }

  tryCompleteHeartbeat(group: GroupMetadata, memberId: string, isPending: boolean, forceComplete: () => boolean): boolean {
    if (group.is(GroupState.Dead)) return forceComplete();
    if (isPending) return group.has(memberId) ? forceComplete() : false;
    return this.shouldCompleteNonPendingHeartbeat(group, memberId) ? forceComplete() : false;
  }

  shouldCompleteNonPendingHeartbeat(group: GroupMetadata, memberId: string): boolean {
    return group.has(memberId) ? group.get(memberId).hasSatisfiedHeartbeat : true;
  }

  /** A member's session (or a pending member's wait, or a new member's join) expired. */
  onExpireHeartbeat(group: GroupMetadata, memberId: string, isPending: boolean): void {
    if (group.is(GroupState.Dead)) {
      this.log.info({ groupId: group.groupId, memberId }, 'heartbeat expiration after the group was unloaded or deleted');
    } else if (isPending) {
      this.log.info({ groupId: group.groupId, memberId }, 'pending member removed after session timeout expiration');
      this.removePendingMemberAndUpdateGroup(group, memberId);
    } else if (group.has(memberId)) {
      const member = group.get(memberId);
      if (!member.hasSatisfiedHeartbeat) {
        this.log.info({ groupId: group.groupId, memberId, generation: group.generationId }, 'member has failed (session expired), removing it from the group');
        this.removeMemberAndUpdateGroup(group, member, `removing member ${memberId} on heartbeat expiration`);
      }
    }
  }
}
