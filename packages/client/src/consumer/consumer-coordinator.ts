/**
 * Kafka's ConsumerCoordinator: the consumer protocol on top of group membership. It advertises
 * one JoinGroup protocol per configured assignor (its subscription, with the partitions it owns),
 * runs the chosen assignor when it is the leader, applies the assignment with the rebalance
 * listener, and watches metadata: the leader rejoins when a subscribed topic's partition count
 * changes, every member when its pattern matches other topics.
 *
 * EAGER (range, roundrobin, sticky): every owned partition is revoked before JoinGroup.
 * COOPERATIVE (cooperative-sticky, when every assignor supports it): partitions are kept across
 * JoinGroup; after SyncGroup only those no longer assigned are revoked, and the member rejoins
 * at once so the leader can hand them to their new owner (KIP-429).
 */
import type { JoinGroupRequestProtocol, JoinGroupResponseMember } from '@samsa/protocol';
import { compareTopicPartitions, topicPartitionKey } from '@samsa/protocol';
import type { Cluster } from '../cluster.js';
import type { Logger } from '../logger.js';
import { RebalanceProtocol, type MemberSubscription, type PartitionAssignor } from './assignors/types.js';
import { GroupMembership, type Generation, type MembershipOptions } from './coordinator.js';
import type { ConsumerMetadata } from './metadata.js';
import { decodeAssignment, decodeSubscription, encodeAssignment, encodeSubscription } from './protocol-codec.js';
import type { SubscriptionState } from './subscription-state.js';
import { type ConsumerRebalanceListener, type TopicPartition } from './types.js';

export interface ConsumerCoordinatorHooks {
  listener(): ConsumerRebalanceListener | undefined;
  /** Auto commit before a rebalance (errors logged, not thrown). */
  commitBeforeRebalance(): Promise<void>;
  /** Partitions revoked or lost: drop buffered fetch data. */
  onPartitionsDropped(partitions: TopicPartition[]): void;
  clientRack: string | null;
}

export class ConsumerCoordinator extends GroupMembership {
  readonly protocol: RebalanceProtocol;
  /** Leader: partition counts the last assignment was computed over. */
  private assignmentSnapshot: Map<string, number> | null = null;
  /** Topics of the subscription the member joined with. */
  private joinedSubscription = new Set<string>();

  constructor(
    cluster: Cluster,
    opts: MembershipOptions,
    private readonly subs: SubscriptionState,
    private readonly metadata: ConsumerMetadata,
    private readonly assignors: readonly PartitionAssignor[],
    private readonly hooks: ConsumerCoordinatorHooks,
    log: Logger,
  ) {
    super(cluster, opts, log);
    // Java: COOPERATIVE only when every assignor supports it
    this.protocol = assignors.every((a) => a.supportedProtocols.includes(RebalanceProtocol.COOPERATIVE))
      ? RebalanceProtocol.COOPERATIVE
      : RebalanceProtocol.EAGER;
  }

  protected protocols(): JoinGroupRequestProtocol[] {
    const topics = [...this.subs.subscription].sort();
    this.joinedSubscription = new Set(topics);
    const owned = this.subs.assignedPartitions();
    return this.assignors.map((a) => ({
      name: a.name,
      metadata: encodeSubscription({
        topics,
        userData: a.subscriptionUserData(topics),
        ownedPartitions: owned,
        generationId: this.generation.generationId,
        rackId: this.hooks.clientRack,
      }),
    }));
  }

  protected async onJoinPrepare(generation: Generation, memberId: string): Promise<void> {
    this.log.debug({ generation: generation.generationId, memberId }, 'preparing to join the group');
    if (generation.generationId >= 0) await this.hooks.commitBeforeRebalance();
    const owned = this.subs.assignedPartitions();
    if (generation.generationId < 0 || memberId === '') {
      // the generation is gone: the partitions may already be someone else's
      if (owned.length > 0) await this.invokeLost(owned);
      this.subs.assignFromSubscribed([]);
    } else if (this.protocol === RebalanceProtocol.EAGER) {
      if (owned.length > 0) await this.invokeRevoked(owned);
      this.subs.assignFromSubscribed([]);
    } else {
      // cooperative: give up only the partitions of topics no longer subscribed
      const gone = owned.filter((tp) => !this.subs.subscription.has(tp.topic));
      if (gone.length > 0) {
        await this.invokeRevoked(gone);
        const goneKeys = new Set(gone.map(topicPartitionKey));
        this.subs.assignFromSubscribed(owned.filter((tp) => !goneKeys.has(topicPartitionKey(tp))));
      }
    }
    this.assignmentSnapshot = null;
  }

  protected async performAssignment(leaderId: string, protocol: string, members: JoinGroupResponseMember[]): Promise<Map<string, Buffer>> {
    const assignor = this.assignors.find((a) => a.name === protocol);
    if (!assignor) throw new Error(`Coordinator selected invalid assignment protocol: ${protocol}`);
    const subscriptions = new Map<string, MemberSubscription>();
    const allTopics = new Set<string>();
    for (const m of members) {
      const s = decodeSubscription(m.memberId, m.groupInstanceId, m.metadata);
      subscriptions.set(m.memberId, s);
      for (const t of s.topics) allTopics.add(t);
    }
    this.subs.groupSubscription = allTopics;
    await this.metadata
      .refresh([...new Set([...allTopics, ...this.subs.subscription])])
      .catch((err: Error) => this.log.warn({ err: err.message }, 'metadata refresh before assignment failed'));
    const partitionsPerTopic = new Map<string, number>();
    for (const t of allTopics) {
      const n = this.metadata.partitionCount(t);
      if (n > 0) partitionsPerTopic.set(t, n);
    }
    this.assignmentSnapshot = new Map(partitionsPerTopic);
    this.log.info({ leaderId, assignor: protocol, members: members.length, topics: [...partitionsPerTopic.keys()] }, 'performing assignment');
    const assignment = assignor.assign(partitionsPerTopic, subscriptions);
    const out = new Map<string, Buffer>();
    for (const memberId of subscriptions.keys()) out.set(memberId, encodeAssignment(assignment.get(memberId) ?? { partitions: [], userData: null }));
    return out;
  }

  protected async onJoinComplete(generation: Generation, protocol: string, bytes: Buffer): Promise<void> {
    const assignor = this.assignors.find((a) => a.name === protocol);
    const assignment = decodeAssignment(bytes);
    // only partitions of topics we subscribe to (a leader with another view may hand out others)
    const assigned = assignment.partitions.filter((tp) => this.subs.subscription.has(tp.topic));
    if (assigned.length !== assignment.partitions.length) this.requestRejoin('assignment contains topics the member does not subscribe to');
    assignor?.onAssignment(assignment, generation.generationId);
    const owned = this.subs.assignedPartitions();
    const assignedKeys = new Set(assigned.map(topicPartitionKey));
    const ownedKeys = new Set(owned.map(topicPartitionKey));
    this.log.info({ generation: generation.generationId, assigned: assigned.map(topicPartitionKey) }, 'received assignment');
    if (this.protocol === RebalanceProtocol.COOPERATIVE) {
      const added = assigned.filter((tp) => !ownedKeys.has(topicPartitionKey(tp)));
      const revoked = owned.filter((tp) => !assignedKeys.has(topicPartitionKey(tp)));
      this.subs.assignFromSubscribed(assigned);
      if (revoked.length > 0) {
        await this.invokeRevoked(revoked);
        this.requestRejoin('need to revoke partitions and re-join');
      }
      await this.invokeAssigned(added);
    } else {
      this.subs.assignFromSubscribed(assigned);
      await this.invokeAssigned(assigned);
    }
  }

  /** From poll(): rejoin when the metadata the assignment was based on moved. */
  checkMetadata(): void {
    if (this.subs.type === 'AUTO_PATTERN' && this.subs.pattern) {
      const pattern = this.subs.pattern;
      const matching = new Set(
        this.metadata
          .allTopics()
          .filter((t) => t.errorCode === 0 && !t.isInternal && pattern.test(t.name))
          .map((t) => t.name),
      );
      if (this.subs.changeSubscription(matching)) this.requestRejoin('the pattern subscription matches other topics');
    }
    if (this.state === 'STABLE' && this.joinedSubscription.size > 0 && !sameSet(this.joinedSubscription, this.subs.subscription)) {
      this.requestRejoin('the subscription changed');
    }
    if (this.assignmentSnapshot && this.state === 'STABLE') {
      for (const [topic, count] of this.assignmentSnapshot) {
        const now = this.metadata.partitionCount(topic);
        if (now !== count && now > 0) {
          this.requestRejoin(`cached metadata has changed: topic ${topic} has ${now} partitions, was ${count}`);
          this.assignmentSnapshot = null;
          return;
        }
      }
      for (const topic of this.subs.groupSubscription) {
        if (!this.assignmentSnapshot.has(topic) && this.metadata.partitionCount(topic) > 0) {
          this.requestRejoin(`cached metadata has changed: topic ${topic} now exists`);
          this.assignmentSnapshot = null;
          return;
        }
      }
    }
  }

  get isLeaderWatching(): boolean {
    return this.assignmentSnapshot !== null;
  }

  /** Before close / unsubscribe: revoke (or lose) everything. */
  async onLeavePrepare(): Promise<void> {
    const owned = this.subs.assignedPartitions();
    if (owned.length === 0) return;
    if (this.generation.generationId < 0 || this.generation.memberId === '') await this.invokeLost(owned);
    else await this.invokeRevoked(owned);
  }

  private async invokeRevoked(tps: TopicPartition[]): Promise<void> {
    this.hooks.onPartitionsDropped(tps);
    await this.invoke('onPartitionsRevoked', tps);
  }

  private async invokeLost(tps: TopicPartition[]): Promise<void> {
    this.hooks.onPartitionsDropped(tps);
    const l = this.hooks.listener();
    // Java: a listener without onPartitionsLost gets onPartitionsRevoked
    await this.invoke(l?.onPartitionsLost ? 'onPartitionsLost' : 'onPartitionsRevoked', tps);
  }

  private async invokeAssigned(tps: TopicPartition[]): Promise<void> {
    await this.invoke('onPartitionsAssigned', tps);
  }

  private async invoke(name: keyof ConsumerRebalanceListener, tps: TopicPartition[]): Promise<void> {
    const l = this.hooks.listener();
    const fn = l?.[name];
    if (!fn) return;
    try {
      await fn.call(l, [...tps].sort(compareTopicPartitions));
    } catch (err) {
      this.log.error({ err: (err as Error).message, callback: name }, 'user rebalance callback threw an error');
    }
  }
}

function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  return a.size === b.size && [...a].every((x) => b.has(x));
}
