import { ZERO_UUID, uuidToBase64, type KafkaError } from '@samsa/protocol';
import type { BrokerNode, ClusterOptions } from './cluster.js';

/** The Admin client's public types (admin.ts holds the client itself). */

/** Kafka's internal topics (TopicCommand and Metadata v0 have no isInternal flag to go by). */
export const INTERNAL_TOPICS: ReadonlySet<string> = new Set(['__consumer_offsets', '__transaction_state']);

/** Kafka's all-zero topic id, as a string. */
export const ZERO_TOPIC_ID = uuidToBase64(ZERO_UUID);

export interface OperationOptions {
  /** Deadline of the whole operation, retries included. Default: the cluster's defaultApiTimeoutMs. */
  timeoutMs?: number;
}

export interface ListTopicsOptions extends OperationOptions {
  /** Include internal topics (__consumer_offsets, ...). Default false. */
  listInternal?: boolean;
}

export interface PartitionInfo {
  partition: number;
  /** The leader's broker id; null when there is none (-1) or it is not a live broker. */
  leader: number | null;
  leaderEpoch: number;
  replicas: number[];
  isr: number[];
  /** Replicas on offline brokers or log dirs (Metadata v5+). */
  offline: number[];
}

export interface TopicDescription {
  name: string;
  /** Base64url topic id; ZERO_TOPIC_ID when the broker does not send one (Metadata < v10). */
  topicId: string;
  isInternal: boolean;
  /** Sorted by partition. */
  partitions: PartitionInfo[];
}

/** Replica assignment: partition → broker ids (an array is indexed by partition). */
export type ReplicaAssignment = ReadonlyMap<number, readonly number[]> | ReadonlyArray<readonly number[]>;

export interface NewTopic {
  name: string;
  /** Default -1: the broker's num.partitions (needs CreateTopics v4+). Ignored with replicaAssignment. */
  numPartitions?: number;
  /** Default -1: the broker's default.replication.factor (v4+). Ignored with replicaAssignment. */
  replicationFactor?: number;
  replicaAssignment?: ReplicaAssignment;
  configs?: Readonly<Record<string, string>>;
}

export interface CreateTopicsOptions extends OperationOptions {
  /** Validate only, create nothing. */
  validateOnly?: boolean;
}

export interface CreatedTopic {
  name: string;
  /** ZERO_TOPIC_ID before CreateTopics v7. */
  topicId: string;
  /** -1 before CreateTopics v5. */
  numPartitions: number;
  /** -1 before CreateTopics v5. */
  replicationFactor: number;
  /** The topic's configs (v5+), else null. */
  configs: Array<{ name: string; value: string | null; readOnly: boolean; source: number; isSensitive: boolean }> | null;
}

export interface NewPartitions {
  topic: string;
  /** The new total partition count. */
  count: number;
  /** Replicas of each new partition (count − current entries), or the broker's choice. */
  assignments?: ReadonlyArray<readonly number[]>;
}

export interface CreatePartitionsOptions extends OperationOptions {
  validateOnly?: boolean;
}

export interface ClusterDescription {
  clusterId: string | null;
  controllerId: number;
  controller: BrokerNode | null;
  brokers: BrokerNode[];
}

export const ConfigResourceType = { Unknown: 0, Topic: 2, Broker: 4, BrokerLogger: 8 } as const;
export type ConfigResourceType = (typeof ConfigResourceType)[keyof typeof ConfigResourceType];

/** Where a config value comes from (DescribeConfigs ConfigSource ids). */
export const ConfigSource = {
  Unknown: 0,
  DynamicTopicConfig: 1,
  DynamicBrokerConfig: 2,
  DynamicDefaultBrokerConfig: 3,
  StaticBrokerConfig: 4,
  DefaultConfig: 5,
  DynamicBrokerLoggerConfig: 6,
  ClientMetricsConfig: 7,
} as const;
export type ConfigSource = (typeof ConfigSource)[keyof typeof ConfigSource];

const CONFIG_SOURCE_NAMES = [
  'UNKNOWN',
  'DYNAMIC_TOPIC_CONFIG',
  'DYNAMIC_BROKER_CONFIG',
  'DYNAMIC_DEFAULT_BROKER_CONFIG',
  'STATIC_BROKER_CONFIG',
  'DEFAULT_CONFIG',
  'DYNAMIC_BROKER_LOGGER_CONFIG',
  'CLIENT_METRICS_CONFIG',
];

/** Kafka's name of a config source (e.g. `DYNAMIC_TOPIC_CONFIG`). */
export function configSourceName(source: number): string {
  return CONFIG_SOURCE_NAMES[source] ?? `UNKNOWN(${source})`;
}

export interface ConfigResource {
  type: ConfigResourceType;
  /** Topic name, or broker id as a string. */
  name: string;
  /** Only these keys (default: all). */
  configNames?: readonly string[];
}

export interface ConfigSynonym {
  name: string;
  value: string | null;
  source: number;
}

export interface ConfigEntry {
  name: string;
  value: string | null;
  source: number;
  /** source === DefaultConfig (Kafka's ConfigEntry.isDefault). */
  isDefault: boolean;
  isReadOnly: boolean;
  isSensitive: boolean;
  synonyms: ConfigSynonym[];
  /** DescribeConfigs v3+ config type id, 0 (unknown) otherwise. */
  type: number;
  documentation: string | null;
}

export interface ConfigResourceResult {
  type: ConfigResourceType;
  name: string;
  entries: ConfigEntry[];
}

export interface DescribeConfigsOptions extends OperationOptions {
  includeSynonyms?: boolean;
  includeDocumentation?: boolean;
}

export interface PartitionReassignment {
  topic: string;
  partition: number;
  replicas: number[];
  addingReplicas: number[];
  removingReplicas: number[];
}

/** Kafka's ElectionType: 0 preferred (the first replica leads), 1 unclean (any live replica, for leaderless partitions). */
export const ElectionType = { PREFERRED: 0, UNCLEAN: 1 } as const;
export type ElectionType = (typeof ElectionType)[keyof typeof ElectionType];

/** One partition's outcome of electLeaders: `error` null when a leader was elected. */
export interface ElectionResult {
  topic: string;
  partition: number;
  /** E.g. ELECTION_NOT_NEEDED (a valid leader is already there), PREFERRED_LEADER_NOT_AVAILABLE, ELIGIBLE_LEADERS_NOT_AVAILABLE, UNKNOWN_TOPIC_OR_PARTITION. */
  error: KafkaError | null;
}

export type AdminOptions = ClusterOptions;
