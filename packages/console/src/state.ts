/**
 * What the console server sends to the browser (GET /api/state and every Server-Sent `state`
 * event): one JSON document describing the cluster as last polled, with the histories the charts
 * draw. Offsets and sizes are plain numbers (JSON has no bigint; offsets stay far below 2^53).
 * The front end (web/src) imports these types only.
 */

export const ConnectionStatus = { Connecting: 'connecting', Ok: 'ok', Unreachable: 'unreachable' } as const;
export type ConnectionStatus = (typeof ConnectionStatus)[keyof typeof ConnectionStatus];

export interface BrokerView {
  id: number;
  host: string;
  port: number;
  rack: string | null;
  isController: boolean;
  /** Partitions whose leader is this broker (from metadata). */
  leaderCount: number;
  /** Replicas hosted here (from metadata). */
  replicaCount: number;
  /** Base URL of the broker's metrics endpoint, when known. */
  metricsUrl: string | null;
}

export interface PartitionView {
  partition: number;
  /** null: no live leader (offline). */
  leader: number | null;
  leaderEpoch: number;
  replicas: number[];
  isr: number[];
  offline: number[];
  /** Log start offset (ListOffsets earliest); null when not known. */
  startOffset: number | null;
  /** High watermark (ListOffsets latest); null when not known. */
  endOffset: number | null;
  /** Bytes of the leader's log (kafka_log_log_size), null without metrics. */
  sizeBytes: number | null;
}

export interface TopicView {
  name: string;
  internal: boolean;
  partitions: PartitionView[];
}

export interface MemberView {
  memberId: string;
  clientId: string;
  host: string;
  groupInstanceId: string | null;
  assignment: Array<{ topic: string; partitions: number[] }>;
}

export interface PartitionLag {
  topic: string;
  partition: number;
  /** Committed offset; null when the group has none for the partition. */
  committed: number | null;
  /** High watermark; null when unknown. */
  endOffset: number | null;
  /** endOffset − committed (never negative); null when either is unknown. */
  lag: number | null;
  /** Member owning the partition now, when assigned. */
  memberId: string | null;
  clientId: string | null;
}

export interface GroupView {
  groupId: string;
  state: string;
  protocolType: string;
  assignor: string;
  coordinator: number | null;
  members: MemberView[];
  partitions: PartitionLag[];
  /** Sum of the known partition lags. */
  totalLag: number;
}

/** One point of a time series: [epoch ms, value]. */
export type Point = [number, number];

export interface ThroughputView {
  /** Cluster totals per second over time. */
  bytesIn: Point[];
  bytesOut: Point[];
  messagesIn: Point[];
  /** Latest per-topic rates (per second). */
  topics: Array<{ topic: string; bytesIn: number; bytesOut: number; messagesIn: number }>;
}

export interface MetricsEndpointView {
  url: string;
  brokerId: number | null;
  ok: boolean;
  error: string | null;
}

export const TimelineKind = {
  BrokerUp: 'broker-up',
  BrokerDown: 'broker-down',
  ControllerChange: 'controller-change',
  LeaderElection: 'leader-election',
  PartitionOffline: 'partition-offline',
  IsrShrink: 'isr-shrink',
  IsrExpand: 'isr-expand',
  TopicCreated: 'topic-created',
  TopicDeleted: 'topic-deleted',
  PartitionsAdded: 'partitions-added',
  UncleanElection: 'unclean-election',
  ReassignmentCompleted: 'reassignment-completed',
} as const;
export type TimelineKind = (typeof TimelineKind)[keyof typeof TimelineKind];

export interface TimelineEvent {
  /** Epoch ms of the poll that saw the change. */
  at: number;
  kind: TimelineKind;
  /** One readable line. */
  message: string;
  topic?: string;
  brokerId?: number;
  /** Per-partition details: leader from → to, or ISR before → after. */
  partitions?: Array<{ partition: number; from: number[] | number | null; to: number[] | number | null }>;
  /** Where the event was derived from: metadata snapshots, metrics counters, or a broker's state-change log (GET /state-change). */
  source: 'metadata' | 'metrics' | 'state-change';
}

export interface ConsoleError {
  message: string;
  /** What to do about it. */
  hint: string;
  /** Epoch ms of the first failed poll in a row. */
  since: number;
}

export interface ConsoleState {
  /** Epoch ms of the last poll (successful or not). */
  updatedAt: number;
  /** Epoch ms the console started collecting. */
  startedAt: number;
  pollIntervalMs: number;
  bootstrap: string;
  status: ConnectionStatus;
  error: ConsoleError | null;
  clusterId: string | null;
  controllerId: number | null;
  /** From kafka_controller_kafkacontroller_controllerepoch on the controller's metrics; null without metrics. */
  controllerEpoch: number | null;
  brokers: BrokerView[];
  counts: { topics: number; partitions: number; offline: number; underReplicated: number };
  topics: TopicView[];
  groups: GroupView[];
  /** Total lag of each group over time. */
  lagHistory: Record<string, Point[]>;
  throughput: ThroughputView;
  metrics: MetricsEndpointView[];
  /** Newest first. */
  timeline: TimelineEvent[];
}
