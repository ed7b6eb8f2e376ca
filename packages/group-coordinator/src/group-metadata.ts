/**
 * A classic consumer group's state (Kafka's GroupMetadata): members, static members, the selected
 * protocol, generation and leader, committed offsets, and the group state machine, which is the
 * table below (Kafka's five states; a transition not in it is a bug and throws).
 */
import { randomUUID } from 'node:crypto';
import { TopicPartitionMap, type JoinGroupResponseMember, type TopicPartition } from '@samsa/protocol';
import type { JoinCallback, JoinGroupResult, MemberMetadata, MemberSummary, Protocol, SyncGroupResult } from './member-metadata.js';
import { subscriptionTopics, type OffsetAndMetadata } from './records.js';
import { olderThan, PendingTxnOffsetCommits, type CommitRecordMetadataAndOffset } from './pending-txn-offsets.js';

export type { CommitRecordMetadataAndOffset } from './pending-txn-offsets.js';

export const GroupState = {
  /** No members; lingers for its offsets (also: groups used only for offset storage). */
  Empty: 'Empty',
  /** Parks JoinGroups until every known member rejoined or the rebalance timeout. */
  PreparingRebalance: 'PreparingRebalance',
  /** Waits for the leader's assignment (SyncGroup). */
  CompletingRebalance: 'CompletingRebalance',
  Stable: 'Stable',
  /** Removed (deleted, expired, or its offsets partition moved away). */
  Dead: 'Dead',
} as const;
export type GroupState = (typeof GroupState)[keyof typeof GroupState];

/**
 * The state machine: target state → the states it may be entered from (Kafka's
 * validPreviousStates).
 *
 *   Empty               → PreparingRebalance  (a member joins)
 *   PreparingRebalance  → CompletingRebalance (all members joined / rebalance timeout, members left)
 *   PreparingRebalance  → Empty               (… and nobody is left)
 *   CompletingRebalance → Stable              (the leader's assignment is stored)
 *   CompletingRebalance → PreparingRebalance  (join with new metadata, leave, session expiry, store failure)
 *   Stable              → PreparingRebalance  (leader rejoins, follower with new metadata, leave, expiry)
 *   any                 → Dead                (group deleted / expired / unloaded)
 */
export const VALID_PREVIOUS_STATES: { readonly [S in GroupState]: ReadonlySet<GroupState> } = {
  Empty: new Set([GroupState.PreparingRebalance]),
  PreparingRebalance: new Set([GroupState.Stable, GroupState.CompletingRebalance, GroupState.Empty]),
  CompletingRebalance: new Set([GroupState.PreparingRebalance]),
  Stable: new Set([GroupState.CompletingRebalance]),
  Dead: new Set([GroupState.Stable, GroupState.PreparingRebalance, GroupState.CompletingRebalance, GroupState.Empty, GroupState.Dead]),
};

export function canTransition(from: GroupState, to: GroupState): boolean {
  return VALID_PREVIOUS_STATES[to].has(from);
}

export const CONSUMER_PROTOCOL_TYPE = 'consumer';
/** ListGroups v5 group type of every group this coordinator runs (KIP-848's "classic"). */
export const CLASSIC_GROUP_TYPE = 'classic';

export interface GroupSummary {
  state: string;
  protocolType: string;
  protocol: string;
  members: MemberSummary[];
}

export interface GroupOverview {
  groupId: string;
  protocolType: string;
  state: GroupState;
  groupType: string;
}

export class GroupMetadata {
  private state: GroupState;
  currentStateTimestamp: number | null;
  protocolType: string | null = null;
  protocolName: string | null = null;
  generationId = 0;
  private leaderId: string | null = null;
  private readonly members = new Map<string, MemberMetadata>();
  /** group.instance.id → member id. */
  private readonly staticMembers = new Map<string, string>();
  /** Member ids handed out with MEMBER_ID_REQUIRED that have not joined yet. */
  private readonly pendingMembers = new Set<string>();
  private numMembersAwaitingJoin = 0;
  /** Protocol name → how many members support it. */
  private readonly supportedProtocols = new Map<string, number>();
  private readonly offsets = new TopicPartitionMap<CommitRecordMetadataAndOffset>();
  private readonly pendingOffsetCommits = new TopicPartitionMap<OffsetAndMetadata>();
  /** TxnOffsetCommits waiting for their transaction's marker, by producer id. */
  readonly pendingTxnOffsetCommits = new PendingTxnOffsetCommits();
  private readonly pendingSyncMembers = new Set<string>();
  /** Topics the consumer-protocol members subscribe to (null: unknown). */
  private subscribedTopics: Set<string> | null = null;
  /** A member joined during the initial rebalance delay (InitialDelayedJoin extends it). */
  newMemberAdded = false;

  constructor(
    readonly groupId: string,
    initialState: GroupState,
    private readonly now: () => number = Date.now,
  ) {
    this.state = initialState;
    this.currentStateTimestamp = now();
  }

  /** A group read back from `__consumer_offsets` (Stable with members, else Empty). */
  static loadGroup(
    groupId: string,
    v: { generation: number; protocolType: string; protocol: string | null; leader: string | null; currentStateTimestamp: number; members: MemberMetadata[] },
    now: () => number = Date.now,
  ): GroupMetadata {
    const g = new GroupMetadata(groupId, v.members.length === 0 ? GroupState.Empty : GroupState.Stable, now);
    g.generationId = v.generation;
    g.protocolType = v.protocolType === '' ? null : v.protocolType;
    g.protocolName = v.protocol;
    g.leaderId = v.leader;
    g.currentStateTimestamp = v.currentStateTimestamp === -1 ? null : v.currentStateTimestamp;
    for (const m of v.members) g.add(m, null);
    g.subscribedTopics = g.computeSubscribedTopics();
    return g;
  }

  get currentState(): GroupState {
    return this.state;
  }

  is(s: GroupState): boolean {
    return this.state === s;
  }

  has(memberId: string): boolean {
    return this.members.has(memberId);
  }

  get(memberId: string): MemberMetadata {
    const m = this.members.get(memberId);
    if (!m) throw new Error(`Member ${memberId} is not in group ${this.groupId}`);
    return m;
  }

  get size(): number {
    return this.members.size;
  }

  isLeader(memberId: string): boolean {
    return this.leaderId === memberId;
  }

  get leaderOrNull(): string | null {
    return this.leaderId;
  }

  get currentStateTimestampOrDefault(): number {
    return this.currentStateTimestamp ?? -1;
  }

  get isConsumerGroup(): boolean {
    return this.protocolType === CONSUMER_PROTOCOL_TYPE;
  }

  add(member: MemberMetadata, callback: JoinCallback | null): void {
    if (member.groupInstanceId !== null) {
      if (this.staticMembers.has(member.groupInstanceId)) {
        throw new Error(`Static member with groupInstanceId=${member.groupInstanceId} cannot be added to group ${this.groupId} since it is already a member`);
      }
      this.staticMembers.set(member.groupInstanceId, member.memberId);
    }
    if (this.members.size === 0) this.protocolType = member.protocolType;
    if (this.leaderId === null) this.leaderId = member.memberId;
    this.members.set(member.memberId, member);
    for (const p of member.supportedProtocols) this.supportedProtocols.set(p.name, (this.supportedProtocols.get(p.name) ?? 0) + 1);
    member.awaitingJoinCallback = callback;
    if (member.isAwaitingJoin) this.numMembersAwaitingJoin++;
    this.pendingMembers.delete(member.memberId);
  }

  remove(memberId: string): void {
    const member = this.members.get(memberId);
    if (member) {
      this.members.delete(memberId);
      for (const p of member.supportedProtocols) this.supportedProtocols.set(p.name, (this.supportedProtocols.get(p.name) ?? 0) - 1);
      if (member.isAwaitingJoin) this.numMembersAwaitingJoin--;
      if (member.groupInstanceId !== null) this.staticMembers.delete(member.groupInstanceId);
    }
    if (this.isLeader(memberId)) this.leaderId = this.members.keys().next().value ?? null;
    this.pendingMembers.delete(memberId);
    this.pendingSyncMembers.delete(memberId);
  }

  /**
   * The leader must have rejoined to lead the next generation; otherwise any rejoined member
   * takes over. False when there is no leader or nobody rejoined.
   */
  maybeElectNewJoinedLeader(): boolean {
    if (this.leaderId === null) return false;
    const current = this.members.get(this.leaderId);
    if (current?.isAwaitingJoin) return true;
    for (const [id, m] of this.members) {
      if (m.isAwaitingJoin) {
        this.leaderId = id;
        return true;
      }
    }
    return false;
  }

  /** A known static member rejoined with a new member id: fence the old one, keep everything else. */
  replaceStaticMember(
    groupInstanceId: string,
    oldMemberId: string,
    newMemberId: string,
    fenced: { join: JoinGroupResult; sync: SyncGroupResult },
  ): MemberMetadata {
    const m = this.members.get(oldMemberId);
    if (!m) throw new Error(`Cannot replace non-existing member id ${oldMemberId}`);
    this.members.delete(oldMemberId);
    this.maybeInvokeJoinCallback(m, fenced.join);
    this.maybeInvokeSyncCallback(m, fenced.sync);
    m.memberId = newMemberId;
    this.members.set(newMemberId, m);
    if (this.isLeader(oldMemberId)) this.leaderId = newMemberId;
    this.staticMembers.set(groupInstanceId, newMemberId);
    return m;
  }

  isPendingMember(memberId: string): boolean {
    return this.pendingMembers.has(memberId);
  }

  addPendingMember(memberId: string): void {
    if (this.has(memberId)) throw new Error(`Attempt to add pending member ${memberId} which is already a stable member of the group`);
    this.pendingMembers.add(memberId);
  }

  addPendingSyncMember(memberId: string): void {
    if (!this.has(memberId)) throw new Error(`Attempt to add a pending sync for member ${memberId} which is not a member of the group`);
    this.pendingSyncMembers.add(memberId);
  }

  removePendingSyncMember(memberId: string): void {
    if (!this.has(memberId)) throw new Error(`Attempt to remove a pending sync for member ${memberId} which is not a member of the group`);
    this.pendingSyncMembers.delete(memberId);
  }

  get hasReceivedSyncFromAllMembers(): boolean {
    return this.pendingSyncMembers.size === 0;
  }

  get allPendingSyncMembers(): string[] {
    return [...this.pendingSyncMembers];
  }

  clearPendingSyncMembers(): void {
    this.pendingSyncMembers.clear();
  }

  hasStaticMember(groupInstanceId: string): boolean {
    return this.staticMembers.has(groupInstanceId);
  }

  currentStaticMemberId(groupInstanceId: string): string | undefined {
    return this.staticMembers.get(groupInstanceId);
  }

  get notYetRejoinedMembers(): MemberMetadata[] {
    return [...this.members.values()].filter((m) => !m.isAwaitingJoin);
  }

  get hasAllMembersJoined(): boolean {
    return this.members.size === this.numMembersAwaitingJoin && this.pendingMembers.size === 0;
  }

  get allMembers(): string[] {
    return [...this.members.keys()];
  }

  get allStaticMembers(): string[] {
    return [...this.staticMembers.keys()];
  }

  get numPending(): number {
    return this.pendingMembers.size;
  }

  get numAwaiting(): number {
    return this.numMembersAwaitingJoin;
  }

  get allMemberMetadata(): MemberMetadata[] {
    return [...this.members.values()];
  }

  /** The largest rebalance timeout of the members: how long a rebalance may wait for them. */
  get rebalanceTimeoutMs(): number {
    let t = 0;
    for (const m of this.members.values()) t = Math.max(t, m.rebalanceTimeoutMs);
    return t;
  }

  /** Kafka's member id: `<client id or group.instance.id>-<UUID>`. */
  generateMemberId(clientId: string, groupInstanceId: string | null): string {
    return `${groupInstanceId ?? clientId}-${randomUUID()}`;
  }

  get canRebalance(): boolean {
    return canTransition(this.state, GroupState.PreparingRebalance);
  }

  transitionTo(target: GroupState): void {
    if (!canTransition(this.state, target)) {
      throw new Error(
        `Group ${this.groupId} should be in the ${[...VALID_PREVIOUS_STATES[target]].join(',')} states before moving to ${target} state. Instead it is in ${this.state} state`,
      );
    }
    this.state = target;
    this.currentStateTimestamp = this.now();
  }

  /** The protocol every member supports that gets the most first-choice votes. */
  selectProtocol(): string {
    if (this.members.size === 0) throw new Error('Cannot select protocol for empty group');
    const candidates = this.candidateProtocols();
    const votes = new Map<string, number>();
    let best = '';
    let bestVotes = -1;
    for (const m of this.members.values()) {
      const p = m.vote(candidates);
      const n = (votes.get(p) ?? 0) + 1;
      votes.set(p, n);
    }
    for (const [p, n] of votes) {
      if (n > bestVotes) {
        best = p;
        bestVotes = n;
      }
    }
    return best;
  }

  private candidateProtocols(): Set<string> {
    const n = this.members.size;
    return new Set([...this.supportedProtocols].filter(([, c]) => c === n).map(([p]) => p));
  }

  /**
   * Whether a member with these protocols may join: an empty group takes any non-empty protocol
   * type and list; otherwise the type must match and one protocol must be supported by everyone.
   */
  supportsProtocols(memberProtocolType: string, memberProtocols: ReadonlySet<string>): boolean {
    if (this.is(GroupState.Empty)) return memberProtocolType !== '' && memberProtocols.size > 0;
    const n = this.members.size;
    return this.protocolType === memberProtocolType && [...memberProtocols].some((p) => (this.supportedProtocols.get(p) ?? 0) === n);
  }

  getSubscribedTopics(): ReadonlySet<string> | null {
    return this.subscribedTopics;
  }

  isSubscribedToTopic(topic: string): boolean {
    return this.subscribedTopics === null || this.subscribedTopics.has(topic);
  }

  private computeSubscribedTopics(): Set<string> | null {
    if (this.protocolType !== CONSUMER_PROTOCOL_TYPE) return null;
    if (this.members.size === 0) return new Set();
    if (this.protocolName === null) return null;
    const out = new Set<string>();
    for (const m of this.members.values()) {
      const topics = subscriptionTopics(m.metadata(this.protocolName));
      if (topics === null) return null;
      for (const t of topics) out.add(t);
    }
    return out;
  }

  updateMember(member: MemberMetadata, protocols: Protocol[], rebalanceTimeoutMs: number, sessionTimeoutMs: number, callback: JoinCallback | null): void {
    for (const p of member.supportedProtocols) this.supportedProtocols.set(p.name, (this.supportedProtocols.get(p.name) ?? 0) - 1);
    member.supportedProtocols = protocols;
    for (const p of protocols) this.supportedProtocols.set(p.name, (this.supportedProtocols.get(p.name) ?? 0) + 1);
    member.rebalanceTimeoutMs = rebalanceTimeoutMs;
    member.sessionTimeoutMs = sessionTimeoutMs;
    if (callback !== null && !member.isAwaitingJoin) this.numMembersAwaitingJoin++;
    else if (callback === null && member.isAwaitingJoin) this.numMembersAwaitingJoin--;
    member.awaitingJoinCallback = callback;
  }

  maybeInvokeJoinCallback(member: MemberMetadata, result: JoinGroupResult): void {
    const cb = member.awaitingJoinCallback;
    if (!cb) return;
    member.awaitingJoinCallback = null;
    this.numMembersAwaitingJoin--;
    cb(result);
  }

  /** True when a parked SyncGroup was answered. */
  maybeInvokeSyncCallback(member: MemberMetadata, result: SyncGroupResult): boolean {
    const cb = member.awaitingSyncCallback;
    if (!cb) return false;
    member.awaitingSyncCallback = null;
    cb(result);
    return true;
  }

  initNextGeneration(): void {
    this.generationId++;
    if (this.members.size > 0) {
      this.protocolName = this.selectProtocol();
      this.subscribedTopics = this.computeSubscribedTopics();
      this.transitionTo(GroupState.CompletingRebalance);
    } else {
      this.protocolName = null;
      this.subscribedTopics = this.computeSubscribedTopics();
      this.transitionTo(GroupState.Empty);
    }
    this.clearPendingSyncMembers();
  }

  /** Every member's metadata for the selected protocol (what the leader gets in its JoinGroup answer). */
  currentMemberMetadata(): JoinGroupResponseMember[] {
    if (this.is(GroupState.Dead) || this.is(GroupState.PreparingRebalance) || this.protocolName === null) {
      throw new Error(`Cannot obtain member metadata for group in state ${this.state}`);
    }
    const protocol = this.protocolName;
    return [...this.members.values()].map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, metadata: m.metadata(protocol) }));
  }

  /** DescribeGroups: member metadata and assignments only once Stable. */
  summary(): GroupSummary {
    if (this.is(GroupState.Stable)) {
      const protocol = this.protocolName;
      if (protocol === null) throw new Error('Invalid null group protocol for stable group');
      return { state: this.state, protocolType: this.protocolType ?? '', protocol, members: [...this.members.values()].map((m) => m.summary(protocol)) };
    }
    return { state: this.state, protocolType: this.protocolType ?? '', protocol: '', members: [...this.members.values()].map((m) => m.summaryNoMetadata()) };
  }

  overview(): GroupOverview {
    return { groupId: this.groupId, protocolType: this.protocolType ?? '', state: this.state, groupType: CLASSIC_GROUP_TYPE };
  }

  // ---- offsets -------------------------------------------------------------------------------

  initializeOffsets(offsets: Iterable<[TopicPartition, CommitRecordMetadataAndOffset]>): void {
    for (const [tp, o] of offsets) this.offsets.set(tp.topic, tp.partition, o);
  }

  /** A commit reached the log: cache it unless a newer one (by log position) is there. */
  onOffsetCommitAppend(tp: TopicPartition, o: CommitRecordMetadataAndOffset): void {
    const pending = this.pendingOffsetCommits.get(tp.topic, tp.partition);
    if (pending !== undefined) {
      const cur = this.offsets.get(tp.topic, tp.partition);
      if (!cur || olderThan(cur, o)) this.offsets.set(tp.topic, tp.partition, o);
      if (pending === o.offsetAndMetadata) this.pendingOffsetCommits.delete(tp.topic, tp.partition);
    }
  }

  failPendingOffsetWrite(tp: TopicPartition, o: OffsetAndMetadata): void {
    if (this.pendingOffsetCommits.get(tp.topic, tp.partition) === o) this.pendingOffsetCommits.delete(tp.topic, tp.partition);
  }

  prepareOffsetCommit(offsets: ReadonlyArray<[TopicPartition, OffsetAndMetadata]>): void {
    for (const [tp, o] of offsets) this.pendingOffsetCommits.set(tp.topic, tp.partition, o);
  }

  hasPendingOffsetCommitsForTopicPartition(tp: TopicPartition): boolean {
    return this.pendingOffsetCommits.has(tp.topic, tp.partition) || this.pendingTxnOffsetCommits.hasForTopicPartition(tp);
  }

  /**
   * The marker of `producerId`'s transaction reached this group's offsets partition: on COMMIT its
   * commits become the group's offsets (unless a commit written later is already there), on ABORT
   * they are dropped (Kafka's completePendingTxnOffsetCommit).
   */
  completePendingTxnOffsetCommit(producerId: bigint, isCommit: boolean): void {
    for (const [tp, c] of this.pendingTxnOffsetCommits.complete(producerId, isCommit, this.groupId)) {
      const cur = this.offsets.get(tp.topic, tp.partition);
      if (!cur || olderThan(cur, c)) this.offsets.set(tp.topic, tp.partition, c);
    }
  }

  removeAllOffsets(): Array<[TopicPartition, OffsetAndMetadata]> {
    return this.removeOffsets([...this.offsets.keys()]);
  }

  removeOffsets(tps: readonly TopicPartition[]): Array<[TopicPartition, OffsetAndMetadata]> {
    const out: Array<[TopicPartition, OffsetAndMetadata]> = [];
    for (const tp of tps) {
      this.pendingOffsetCommits.delete(tp.topic, tp.partition);
      this.pendingTxnOffsetCommits.remove(tp);
      const removed = this.offsets.delete(tp.topic, tp.partition);
      if (removed) out.push([tp, removed.offsetAndMetadata]);
    }
    return out;
  }

  /**
   * offsets.retention.minutes (Kafka's removeExpiredOffsets): an Empty group's offsets expire
   * `retention` after it became Empty; a Stable consumer group's offsets of topics it no longer
   * subscribes to expire `retention` after their commit; a group without protocol type (offset
   * storage only) expires each offset `retention` after its commit. Offsets written with an
   * explicit expire timestamp (OffsetCommit v2–v4) expire at it. Pending commits never expire.
   */
  removeExpiredOffsets(now: number, retentionMs: number): Array<[TopicPartition, OffsetAndMetadata]> {
    const expired = (base: (c: CommitRecordMetadataAndOffset) => number, subscribed: ReadonlySet<string> = new Set()): TopicPartition[] => {
      const out: TopicPartition[] = [];
      for (const [tp, c] of this.offsets.entries()) {
        if (subscribed.has(tp.topic) || this.pendingOffsetCommits.has(tp.topic, tp.partition)) continue;
        const e = c.offsetAndMetadata.expireTimestampMs;
        if (e === null ? now - base(c) >= retentionMs : now >= e) out.push(tp);
      }
      return out;
    };
    let tps: TopicPartition[] = [];
    if (this.protocolType !== null && this.is(GroupState.Empty)) {
      tps = expired((c) => this.currentStateTimestamp ?? c.offsetAndMetadata.commitTimestampMs);
    } else if (this.protocolType === CONSUMER_PROTOCOL_TYPE && this.subscribedTopics !== null && this.is(GroupState.Stable)) {
      tps = expired((c) => c.offsetAndMetadata.commitTimestampMs, this.subscribedTopics);
    } else if (this.protocolType === null) {
      tps = expired((c) => c.offsetAndMetadata.commitTimestampMs);
    }
    return this.removeOffsets(tps);
  }

  allOffsets(): Array<[TopicPartition, OffsetAndMetadata]> {
    return [...this.offsets.entries()].map(([tp, c]) => [tp, c.offsetAndMetadata]);
  }

  offset(tp: TopicPartition): OffsetAndMetadata | undefined {
    return this.offsets.get(tp.topic, tp.partition)?.offsetAndMetadata;
  }

  offsetWithRecordMetadata(tp: TopicPartition): CommitRecordMetadataAndOffset | undefined {
    return this.offsets.get(tp.topic, tp.partition);
  }

  get numOffsets(): number {
    return this.offsets.size;
  }

  get hasOffsets(): boolean {
    return this.offsets.size > 0 || this.pendingOffsetCommits.size > 0 || this.pendingTxnOffsetCommits.size > 0;
  }

  isInStates(states: ReadonlySet<string>): boolean {
    return states.has(this.state.toLowerCase());
  }

  toString(): string {
    return `GroupMetadata(groupId=${this.groupId}, generation=${this.generationId}, protocolType=${this.protocolType}, currentState=${this.state}, members=${this.members.size})`;
  }
}
