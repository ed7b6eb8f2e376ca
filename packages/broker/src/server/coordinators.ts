/**
 * The broker's two coordinators and what ties them to the replica layer: the group coordinator on
 * `__consumer_offsets` and the transaction coordinator on `__transaction_state`, each following
 * this broker's leaderships of its topic's partitions (Kafka's KafkaServer startup of
 * GroupCoordinator and TransactionCoordinator with their onElection/onResignation hooks).
 */
import { interBrokerConnectHook } from '../replica/inter-broker-sasl.js';
import type { ConnectionOptions } from 'node:tls';
import type { Logger } from 'pino';
import type { KafkaZk } from '@samsa/zk-paths';
import { GROUP_METADATA_TOPIC_NAME, GroupCoordinator } from '@samsa/group-coordinator';
import { TRANSACTION_STATE_TOPIC_NAME, TransactionCoordinator } from '@samsa/transaction-coordinator';
import type { BrokerConfig } from '../config/broker-config.js';
import { ReplicaCoordinatorLog } from '../coordinator/replica-coordinator-log.js';
import { TxnMarkerSender } from '../coordinator/txn-marker-sender.js';
import type { MetadataCache } from '../metadata/metadata-cache.js';
import type { ReplicaManager } from '../replica/replica-manager.js';

export interface CoordinatorsOptions {
  brokerId: number;
  config: BrokerConfig;
  kzk: KafkaZk;
  replicaManager: ReplicaManager;
  metadata: MetadataCache;
  producerIds: { generateProducerId(): Promise<bigint> };
  logger: Logger;
  /** TLS towards the inter-broker listener (transaction markers), when it is SSL / SASL_SSL. */
  interBrokerTls?: ConnectionOptions;
}

export interface Coordinators {
  group: GroupCoordinator;
  transaction: TransactionCoordinator;
  shutdown(): Promise<void>;
}

/** Kafka reads an internal topic's partition count from ZooKeeper, else takes the configured one. */
async function partitionCount(kzk: KafkaZk, topic: string, configured: number): Promise<number> {
  return (await kzk.getTopicAssignment(topic))?.partitions.size ?? configured;
}

export async function startCoordinators(o: CoordinatorsOptions): Promise<Coordinators> {
  const cfg = o.config;
  const rm = o.replicaManager;
  const group = new GroupCoordinator({
    brokerId: o.brokerId,
    groupConfig: {
      groupMinSessionTimeoutMs: cfg.get('group.min.session.timeout.ms'),
      groupMaxSessionTimeoutMs: cfg.get('group.max.session.timeout.ms'),
      groupMaxSize: cfg.get('group.max.size'),
      groupInitialRebalanceDelayMs: cfg.get('group.initial.rebalance.delay.ms'),
    },
    offsetConfig: {
      maxMetadataSize: cfg.get('offset.metadata.max.bytes'),
      loadBufferSize: cfg.get('offsets.load.buffer.size'),
      offsetsRetentionMs: cfg.get('offsets.retention.minutes') * 60_000,
      offsetsRetentionCheckIntervalMs: cfg.get('offsets.retention.check.interval.ms'),
      offsetCommitTimeoutMs: cfg.get('offsets.commit.timeout.ms'),
      compression: cfg.get('offsets.topic.compression.codec'),
      interBrokerProtocolVersion: cfg.interBrokerProtocolVersion,
    },
    storage: new ReplicaCoordinatorLog(rm, GROUP_METADATA_TOPIC_NAME),
    logger: o.logger,
    partitionCount: cfg.get('offsets.topic.num.partitions'),
  });

  const markers = new TxnMarkerSender({
    brokerId: o.brokerId,
    metadata: o.metadata,
    listener: cfg.interBrokerListenerName,
    requestTimeoutMs: cfg.get('request.timeout.ms'),
    ...interBrokerConnectHook(cfg),
    ...(o.interBrokerTls ? { tls: o.interBrokerTls } : {}),
  });
  const transaction = new TransactionCoordinator({
    brokerId: o.brokerId,
    config: {
      transactionalIdExpirationMs: cfg.get('transactional.id.expiration.ms'),
      transactionMaxTimeoutMs: cfg.get('transaction.max.timeout.ms'),
      transactionLogNumPartitions: cfg.get('transaction.state.log.num.partitions'),
      transactionLogReplicationFactor: cfg.get('transaction.state.log.replication.factor'),
      transactionLogSegmentBytes: cfg.get('transaction.state.log.segment.bytes'),
      transactionLogLoadBufferSize: cfg.get('transaction.state.log.load.buffer.size'),
      transactionLogMinInsyncReplicas: cfg.get('transaction.state.log.min.isr'),
      abortTimedOutTransactionsIntervalMs: cfg.get('transaction.abort.timed.out.transaction.cleanup.interval.ms'),
      removeExpiredTransactionalIdsIntervalMs: cfg.get('transaction.remove.expired.transaction.cleanup.interval.ms'),
      requestTimeoutMs: cfg.get('request.timeout.ms'),
    },
    storage: new ReplicaCoordinatorLog(rm, TRANSACTION_STATE_TOPIC_NAME),
    logger: o.logger,
    generateProducerId: () => o.producerIds.generateProducerId(),
    partitionForGroup: (groupId) => group.partitionFor(groupId),
    leaderFor: (topic, partition) => {
      if (!o.metadata.partition(topic, partition)) return undefined;
      const leader = o.metadata.leader(topic, partition);
      return leader >= 0 && o.metadata.isBrokerAlive(leader) ? leader : -1;
    },
    sendMarkers: markers.sendMarkers,
  });

  rm.onLeadershipChange((c) => {
    const epoch = c.leaderEpoch >= 0 ? c.leaderEpoch : null;
    if (c.topic === GROUP_METADATA_TOPIC_NAME) {
      if (c.isLeader) void group.onElection(c.partition, c.leaderEpoch);
      else group.onResignation(c.partition, epoch);
    } else if (c.topic === TRANSACTION_STATE_TOPIC_NAME) {
      // the partition's leader epoch is the coordinator epoch (Kafka's onElection(partition, leaderEpoch))
      if (c.isLeader) void transaction.onElection(c.partition, c.leaderEpoch);
      else transaction.onResignation(c.partition, epoch);
    }
  });
  group.startup(await partitionCount(o.kzk, GROUP_METADATA_TOPIC_NAME, cfg.get('offsets.topic.num.partitions')));
  transaction.startup(await partitionCount(o.kzk, TRANSACTION_STATE_TOPIC_NAME, cfg.get('transaction.state.log.num.partitions')));

  return {
    group,
    transaction,
    async shutdown() {
      await transaction.shutdown();
      markers.close();
      await group.shutdown();
    },
  };
}
