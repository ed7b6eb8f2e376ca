/**
 * Kafka's SubscriptionState: what the consumer subscribes to (topics, a pattern, or partitions
 * assigned by the user) and, per assigned partition, its fetch position (offset + leader epoch),
 * whether it is paused, and whether its position must be looked up (committed offset) or reset
 * (auto.offset.reset / seekToBeginning / seekToEnd).
 */
import { compareTopicPartitions, KafkaError, topicPartitionKey } from '@samsa/protocol';
import type { OffsetResetStrategy } from './config.js';
import { type OffsetAndMetadata, type TopicPartition } from './types.js';

export const SubscriptionType = { NONE: 'NONE', AUTO_TOPICS: 'AUTO_TOPICS', AUTO_PATTERN: 'AUTO_PATTERN', USER_ASSIGNED: 'USER_ASSIGNED' } as const;
export type SubscriptionType = (typeof SubscriptionType)[keyof typeof SubscriptionType];

export interface FetchPosition {
  offset: bigint;
  /** Leader epoch of the last record consumed (or of the committed offset), -1 when unknown. */
  leaderEpoch: number;
}

/** INITIALIZING: position unknown (look up the committed offset); AWAIT_RESET: reset by `resetStrategy`; FETCHING: position known. */
export const FetchState = { INITIALIZING: 'INITIALIZING', AWAIT_RESET: 'AWAIT_RESET', FETCHING: 'FETCHING' } as const;
export type FetchState = (typeof FetchState)[keyof typeof FetchState];

export interface PartitionState {
  tp: TopicPartition;
  state: FetchState;
  position: FetchPosition | null;
  resetStrategy: OffsetResetStrategy | null;
  paused: boolean;
  highWatermark: bigint;
  lastStableOffset: bigint;
  logStartOffset: bigint;
}

export class SubscriptionState {
  type: SubscriptionType = SubscriptionType.NONE;
  /** Topics subscribed (AUTO_TOPICS) or matched by the pattern (AUTO_PATTERN). */
  subscription = new Set<string>();
  pattern: RegExp | null = null;
  /** Leader only: every member's topics (metadata for them is watched). */
  groupSubscription = new Set<string>();
  private readonly assignment = new Map<string, PartitionState>();

  constructor(private readonly defaultReset: OffsetResetStrategy) {}

  private setType(t: SubscriptionType): void {
    if (this.type !== SubscriptionType.NONE && this.type !== t) {
      throw new KafkaError('INVALID_REQUEST', 'Subscription to topics, partitions and pattern are mutually exclusive');
    }
    this.type = t;
  }

  /** Returns whether the subscription changed. */
  subscribe(topics: readonly string[]): boolean {
    this.setType(SubscriptionType.AUTO_TOPICS);
    return this.changeSubscription(new Set(topics));
  }

  subscribePattern(pattern: RegExp): void {
    this.setType(SubscriptionType.AUTO_PATTERN);
    this.pattern = pattern;
  }

  /** AUTO_PATTERN: the topics now matching the pattern. Returns whether the subscription changed. */
  changeSubscription(topics: Set<string>): boolean {
    const same = topics.size === this.subscription.size && [...topics].every((t) => this.subscription.has(t));
    if (same) return false;
    this.subscription = topics;
    return true;
  }

  get hasAutoAssignment(): boolean {
    return this.type === SubscriptionType.AUTO_TOPICS || this.type === SubscriptionType.AUTO_PATTERN;
  }

  /** The user's assign(): replaces the assignment; positions of partitions kept are kept. */
  assignFromUser(partitions: readonly TopicPartition[]): void {
    this.setType(SubscriptionType.USER_ASSIGNED);
    this.replaceAssignment(partitions);
  }

  /** The group's assignment (SyncGroup). */
  assignFromSubscribed(partitions: readonly TopicPartition[]): void {
    if (!this.hasAutoAssignment) throw new KafkaError('INVALID_REQUEST', 'Attempt to dynamically assign partitions while manual assignment in use');
    this.replaceAssignment(partitions);
  }

  private replaceAssignment(partitions: readonly TopicPartition[]): void {
    const keep = new Map<string, PartitionState>();
    for (const tp of partitions) {
      const k = topicPartitionKey(tp);
      keep.set(k, this.assignment.get(k) ?? newState(tp));
    }
    this.assignment.clear();
    for (const [k, s] of keep) this.assignment.set(k, s);
  }

  unsubscribe(): void {
    this.type = SubscriptionType.NONE;
    this.subscription = new Set();
    this.groupSubscription = new Set();
    this.pattern = null;
    this.assignment.clear();
  }

  assignedPartitions(): TopicPartition[] {
    return [...this.assignment.values()].map((s) => s.tp).sort(compareTopicPartitions);
  }

  isAssigned(tp: TopicPartition): boolean {
    return this.assignment.has(topicPartitionKey(tp));
  }

  states(): PartitionState[] {
    return [...this.assignment.values()];
  }

  stateOf(tp: TopicPartition): PartitionState {
    const s = this.assignment.get(topicPartitionKey(tp));
    if (!s) throw new KafkaError('INVALID_REQUEST', `No current assignment for partition ${topicPartitionKey(tp)}`);
    return s;
  }

  seek(tp: TopicPartition, offset: bigint, leaderEpoch = -1): void {
    const s = this.stateOf(tp);
    s.position = { offset, leaderEpoch };
    s.state = FetchState.FETCHING;
    s.resetStrategy = null;
  }

  requestReset(tp: TopicPartition, strategy: OffsetResetStrategy = this.defaultReset): void {
    const s = this.stateOf(tp);
    s.state = FetchState.AWAIT_RESET;
    s.resetStrategy = strategy;
  }

  /** Partitions whose position is unknown and not awaiting a reset: look up committed offsets. */
  initializing(): TopicPartition[] {
    return this.states()
      .filter((s) => s.state === FetchState.INITIALIZING)
      .map((s) => s.tp);
  }

  awaitingReset(): PartitionState[] {
    return this.states().filter((s) => s.state === FetchState.AWAIT_RESET);
  }

  get hasAllFetchPositions(): boolean {
    return this.states().every((s) => s.state === FetchState.FETCHING);
  }

  pause(tp: TopicPartition): void {
    this.stateOf(tp).paused = true;
  }

  resume(tp: TopicPartition): void {
    this.stateOf(tp).paused = false;
  }

  paused(): TopicPartition[] {
    return this.states()
      .filter((s) => s.paused)
      .map((s) => s.tp)
      .sort(compareTopicPartitions);
  }

  /** Assigned, not paused, position known. */
  fetchable(): PartitionState[] {
    return this.states().filter((s) => !s.paused && s.state === FetchState.FETCHING && s.position !== null);
  }

  /** The offsets auto commit (and commitSync() without arguments) commits: every known position. */
  allConsumed(): Map<string, { tp: TopicPartition; offset: OffsetAndMetadata }> {
    const out = new Map<string, { tp: TopicPartition; offset: OffsetAndMetadata }>();
    for (const s of this.states()) {
      if (s.position && s.state === FetchState.FETCHING)
        out.set(topicPartitionKey(s.tp), { tp: s.tp, offset: { offset: s.position.offset, leaderEpoch: s.position.leaderEpoch, metadata: '' } });
    }
    return out;
  }
}

function newState(tp: TopicPartition): PartitionState {
  return {
    tp: { topic: tp.topic, partition: tp.partition },
    state: FetchState.INITIALIZING,
    position: null,
    resetStrategy: null,
    paused: false,
    highWatermark: -1n,
    lastStableOffset: -1n,
    logStartOffset: -1n,
  };
}
