import type { Logger } from 'pino';
import type { KafkaController } from '@samsa/controller';
import type { KafkaZk } from '@samsa/zk-paths';
import type { MetadataCache } from '../metadata/metadata-cache.js';
import type { TopicAdmin } from '../admin/topic-admin.js';
import type { ReplicaManager } from '../replica/replica-manager.js';
import type { BrokerConfig } from '../config/broker-config.js';
import type { DynamicBrokerConfig } from '../config/dynamic-broker-config.js';
import type { GroupCoordinator } from '@samsa/group-coordinator';
import type { TransactionCoordinator } from '@samsa/transaction-coordinator';
import type { TopicMetricsSink } from '../metrics/topic-metrics.js';
import type { ClientQuotas } from '../quota/throttle.js';
import type { TxnMarkerRefusal } from './txn-marker-refusal.js';
import type { FetchManager } from '../fetch-session/fetch-manager.js';
import type { Authorizer } from '../security/authorizer.js';

/** The broker settings request handlers read (resolved from server.properties and defaults). */
export interface HandlerSettings {
  autoCreateTopicsEnable: boolean;
  numPartitions: number;
  defaultReplicationFactor: number;
  deleteTopicEnable: boolean;
}

/** What API handlers can reach. One object per broker, built by the server. */
export interface BrokerServices {
  brokerId: number;
  clusterId: string;
  /** The effective configuration (static with dynamic broker configs applied). */
  readonly config: BrokerConfig;
  /** The dynamic broker config layers (absent in handler unit tests: static only). */
  dynamicConfig?: DynamicBrokerConfig;
  settings: HandlerSettings;
  metadata: MetadataCache;
  controller: KafkaController;
  kzk: KafkaZk;
  topicAdmin: TopicAdmin;
  replicaManager: ReplicaManager;
  /** Fetch sessions (KIP-227); absent in handler unit tests: every fetch is sessionless. */
  fetchSessions?: FetchManager;
  groupCoordinator: GroupCoordinator;
  transactionCoordinator: TransactionCoordinator;
  /** This broker's producer ids (blocks claimed in `/latest_producer_id_block`). */
  producerIds: { generateProducerId(): Promise<bigint> };
  /** Client quotas (producer_byte_rate, consumer_byte_rate); absent in handler unit tests. */
  quotas?: ClientQuotas;
  log: Logger;
  /** Per-topic traffic counters (BrokerTopicMetrics); absent when metrics are off. */
  metrics?: TopicMetricsSink;
  /** The ACL authorizer (authorizer.class.name); absent: every request is allowed. */
  authorizer?: Authorizer;
  /** Test-only: marker writes this broker refuses (SAMSA_TEST_REFUSE_TXN_MARKERS); absent normally. */
  txnMarkerRefusal?: TxnMarkerRefusal;
}
