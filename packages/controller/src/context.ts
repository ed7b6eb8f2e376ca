import { TopicPartitionMap, topicPartitionKey, type TopicPartition } from '@samsa/protocol';
import type { BrokerInfo, LeaderIsrAndControllerEpoch } from '@samsa/zk-paths';
import type { PartitionState, ReplicaState } from './states.js';

export interface ReplicaAssignment {
  replicas: number[];
  addingReplicas: number[];
  removingReplicas: number[];
}

export interface LeadershipInfo {
  state: LeaderIsrAndControllerEpoch;
  zkVersion: number;
}

export interface PartitionReplica {
  tp: TopicPartition;
  replica: number;
}

/**
 * The controller's view of the cluster (Kafka's ControllerContext): live brokers with their epochs,
 * topics and their ids, assignments, leadership (with zkVersions), and the state of every partition
 * and replica. Only the controller's event loop touches it.
 */
export class ControllerContext {
  epoch = 0;
  epochZkVersion = -1;
  readonly liveBrokers = new Map<number, BrokerInfo>();
  readonly shuttingDownBrokerIds = new Set<number>();
  readonly topicIds = new Map<string, string>();
  private readonly assignments = new Map<string, Map<number, ReplicaAssignment>>();
  // keyed by topic, then partition (no key string built per lookup: a controlled shutdown of 10,000
  // partitions looks each one up several times)
  private readonly leadership = new TopicPartitionMap<LeadershipInfo>();
  private readonly partitionStates = new TopicPartitionMap<{ tp: TopicPartition; state: PartitionState }>();
  /** Per partition, by replica. */
  private readonly replicaStates = new TopicPartitionMap<Map<number, ReplicaState>>();
  readonly topicsToBeDeleted = new Set<string>();
  readonly topicsIneligibleForDeletion = new Set<string>();
  /** Partitions with a reassignment in progress (adding or removing replicas), by topicPartitionKey. */
  readonly partitionsBeingReassigned = new Map<string, TopicPartition>();

  reset(): void {
    this.epoch = 0;
    this.epochZkVersion = -1;
    this.liveBrokers.clear();
    this.shuttingDownBrokerIds.clear();
    this.topicIds.clear();
    this.assignments.clear();
    this.leadership.clear();
    this.partitionStates.clear();
    this.replicaStates.clear();
    this.topicsToBeDeleted.clear();
    this.topicsIneligibleForDeletion.clear();
    this.partitionsBeingReassigned.clear();
  }

  // ---- brokers ----

  liveBrokerIds(): number[] {
    return [...this.liveBrokers.keys()].sort((a, b) => a - b);
  }

  /** Live and not shutting down: eligible to lead. */
  liveOrShuttingDownBrokerIds(): number[] {
    return this.liveBrokerIds();
  }

  isBrokerLive(id: number): boolean {
    return this.liveBrokers.has(id) && !this.shuttingDownBrokerIds.has(id);
  }

  brokerEpoch(id: number): bigint {
    return this.liveBrokers.get(id)?.epoch ?? -1n;
  }

  // ---- topics & assignment ----

  allTopics(): string[] {
    return [...this.assignments.keys()].sort();
  }

  hasTopic(topic: string): boolean {
    return this.assignments.has(topic);
  }

  addTopic(topic: string, topicId: string | null): void {
    if (!this.assignments.has(topic)) this.assignments.set(topic, new Map());
    if (topicId) this.topicIds.set(topic, topicId);
  }

  removeTopic(topic: string): void {
    for (const p of this.partitionsForTopic(topic)) this.partitionsBeingReassigned.delete(topicPartitionKey(p));
    this.leadership.deleteTopic(topic);
    this.partitionStates.deleteTopic(topic);
    this.replicaStates.deleteTopic(topic);
    this.assignments.delete(topic);
    this.topicIds.delete(topic);
    this.topicsToBeDeleted.delete(topic);
    this.topicsIneligibleForDeletion.delete(topic);
  }

  setAssignment(tp: TopicPartition, a: ReplicaAssignment): void {
    let m = this.assignments.get(tp.topic);
    if (!m) {
      m = new Map();
      this.assignments.set(tp.topic, m);
    }
    m.set(tp.partition, a);
  }

  assignment(tp: TopicPartition): ReplicaAssignment | undefined {
    return this.assignments.get(tp.topic)?.get(tp.partition);
  }

  replicas(tp: TopicPartition): number[] {
    return this.assignment(tp)?.replicas ?? [];
  }

  partitionsForTopic(topic: string): TopicPartition[] {
    const m = this.assignments.get(topic);
    if (!m) return [];
    return [...m.keys()].sort((a, b) => a - b).map((partition) => ({ topic, partition }));
  }

  allPartitions(): TopicPartition[] {
    return this.allTopics().flatMap((t) => this.partitionsForTopic(t));
  }

  partitionsOnBroker(brokerId: number): TopicPartition[] {
    return this.allPartitions().filter((tp) => this.replicas(tp).includes(brokerId));
  }

  replicasOnBrokers(brokerIds: Iterable<number>): PartitionReplica[] {
    const ids = new Set(brokerIds);
    const out: PartitionReplica[] = [];
    for (const tp of this.allPartitions()) for (const r of this.replicas(tp)) if (ids.has(r)) out.push({ tp, replica: r });
    return out;
  }

  replicasForPartition(tps: TopicPartition[]): PartitionReplica[] {
    return tps.flatMap((tp) => this.replicas(tp).map((replica) => ({ tp, replica })));
  }

  /** A replica is online when its broker is live (and the log dir is fine — not tracked yet). */
  isReplicaOnline(brokerId: number, _tp: TopicPartition, includeShuttingDown = false): boolean {
    return this.liveBrokers.has(brokerId) && (includeShuttingDown || !this.shuttingDownBrokerIds.has(brokerId));
  }

  // ---- leadership ----

  leadershipOf(tp: TopicPartition): LeadershipInfo | undefined {
    return this.leadership.get(tp.topic, tp.partition);
  }

  setLeadership(tp: TopicPartition, info: LeadershipInfo): void {
    this.leadership.set(tp.topic, tp.partition, info);
  }

  partitionsLedBy(brokerId: number): TopicPartition[] {
    return this.allPartitions().filter((tp) => this.leadershipOf(tp)?.state.leader === brokerId);
  }

  // ---- states ----

  partitionState(tp: TopicPartition): PartitionState {
    return this.partitionStates.get(tp.topic, tp.partition)?.state ?? 'NonExistentPartition';
  }

  putPartitionState(tp: TopicPartition, state: PartitionState): void {
    this.partitionStates.set(tp.topic, tp.partition, { tp, state });
  }

  partitionsInStates(...states: PartitionState[]): TopicPartition[] {
    return [...this.partitionStates.values()].filter((v) => states.includes(v.state)).map((v) => v.tp);
  }

  replicaState(tp: TopicPartition, replica: number): ReplicaState {
    return this.replicaStates.get(tp.topic, tp.partition)?.get(replica) ?? 'NonExistentReplica';
  }

  putReplicaState(tp: TopicPartition, replica: number, state: ReplicaState): void {
    let replicas = this.replicaStates.get(tp.topic, tp.partition);
    if (!replicas) {
      replicas = new Map();
      this.replicaStates.set(tp.topic, tp.partition, replicas);
    }
    replicas.set(replica, state);
  }

  removeReplicaState(tp: TopicPartition, replica: number): void {
    const replicas = this.replicaStates.get(tp.topic, tp.partition);
    if (!replicas) return;
    replicas.delete(replica);
    if (replicas.size === 0) this.replicaStates.delete(tp.topic, tp.partition);
  }

  /** Offline replicas of a partition: assigned to a broker that is not live. */
  offlineReplicas(tp: TopicPartition): number[] {
    return this.replicas(tp).filter((r) => !this.liveBrokers.has(r));
  }
}
