/**
 * The group coordinator's delayed operations on the purgatory (Kafka's design, on a timing wheel):
 * - DelayedJoin: PreparingRebalance waits until every known member rejoined (checked on each join,
 *   leave and expiry) or the largest rebalance timeout of the members passed;
 * - InitialDelayedJoin: the first rebalance of an Empty group waits group.initial.rebalance.delay.ms,
 *   again while members keep arriving, bounded by the rebalance timeout;
 * - DelayedSync: CompletingRebalance/Stable waits for every member's SyncGroup (rebalance timeout);
 * - DelayedHeartbeat: a member's session (session.timeout.ms), completed by each heartbeat and
 *   re-armed; on expiry the member is removed.
 */
import { DelayedOperation, type DelayedOperationPurgatory } from '@samsa/server-common';
import type { GroupMetadata } from './group-metadata.js';

/** What the delayed operations call back into (the GroupCoordinator). */
export interface DelayedGroupCallbacks {
  tryCompleteJoin(group: GroupMetadata, forceComplete: () => boolean): boolean;
  onCompleteJoin(group: GroupMetadata): void;
  tryCompletePendingSync(group: GroupMetadata, generationId: number, forceComplete: () => boolean): boolean;
  onExpirePendingSync(group: GroupMetadata, generationId: number): void;
  tryCompleteHeartbeat(group: GroupMetadata, memberId: string, isPending: boolean, forceComplete: () => boolean): boolean;
  onExpireHeartbeat(group: GroupMetadata, memberId: string, isPending: boolean): void;
}

export const groupJoinKey = (groupId: string): string => `join\u0000${groupId}`;
export const groupSyncKey = (groupId: string): string => `sync\u0000${groupId}`;
export const memberKey = (groupId: string, memberId: string): string => `${groupId}\u0000${memberId}`;

/** DelayedJoin and DelayedSync share one purgatory, as in Kafka. */
export abstract class DelayedRebalance extends DelayedOperation {}

export class DelayedJoin extends DelayedRebalance {
  constructor(
    protected readonly coordinator: DelayedGroupCallbacks,
    protected readonly group: GroupMetadata,
    rebalanceTimeoutMs: number,
  ) {
    super(rebalanceTimeoutMs);
  }

  tryComplete(): boolean {
    return this.coordinator.tryCompleteJoin(this.group, () => this.forceComplete());
  }

  protected onExpiration(): void {}

  protected onComplete(): void {
    this.coordinator.onCompleteJoin(this.group);
  }
}

/**
 * The Empty → PreparingRebalance delay: never completes early; when it expires and a member was
 * added meanwhile (and rebalance time remains), it waits another delay.
 */
export class InitialDelayedJoin extends DelayedJoin {
  constructor(
    coordinator: DelayedGroupCallbacks,
    private readonly purgatory: DelayedOperationPurgatory<DelayedRebalance>,
    group: GroupMetadata,
    private readonly configuredRebalanceDelayMs: number,
    private readonly delayMs: number,
    private readonly remainingMs: number,
  ) {
    super(coordinator, group, delayMs);
  }

  override tryComplete(): boolean {
    return false;
  }

  protected override onComplete(): void {
    if (this.group.newMemberAdded && this.remainingMs !== 0) {
      this.group.newMemberAdded = false;
      const delay = Math.min(this.configuredRebalanceDelayMs, this.remainingMs);
      const remaining = Math.max(this.remainingMs - this.delayMs, 0);
      this.purgatory.tryCompleteElseWatch(
        new InitialDelayedJoin(this.coordinator, this.purgatory, this.group, this.configuredRebalanceDelayMs, delay, remaining),
        [groupJoinKey(this.group.groupId)],
      );
    } else super.onComplete();
  }
}

export class DelayedSync extends DelayedRebalance {
  constructor(
    private readonly coordinator: DelayedGroupCallbacks,
    private readonly group: GroupMetadata,
    private readonly generationId: number,
    rebalanceTimeoutMs: number,
  ) {
    super(rebalanceTimeoutMs);
  }

  tryComplete(): boolean {
    return this.coordinator.tryCompletePendingSync(this.group, this.generationId, () => this.forceComplete());
  }

  protected onExpiration(): void {
    this.coordinator.onExpirePendingSync(this.group, this.generationId);
  }

  protected onComplete(): void {}
}

export class DelayedHeartbeat extends DelayedOperation {
  constructor(
    private readonly coordinator: DelayedGroupCallbacks,
    private readonly group: GroupMetadata,
    readonly memberId: string,
    private readonly isPending: boolean,
    timeoutMs: number,
  ) {
    super(timeoutMs);
  }

  tryComplete(): boolean {
    return this.coordinator.tryCompleteHeartbeat(this.group, this.memberId, this.isPending, () => this.forceComplete());
  }

  protected onExpiration(): void {
    this.coordinator.onExpireHeartbeat(this.group, this.memberId, this.isPending);
  }

  protected onComplete(): void {}
}
