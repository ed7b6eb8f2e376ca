import type { Logger } from 'pino';
import { ConfigType } from '@samsa/zk-paths';
import type { BrokerConfig } from '../config/broker-config.js';
import { DEFAULT_BROKER_ENTITY, type ConfigHandlers } from '../config/config-change-notification.js';
import type { ReplicaManager } from '../replica/replica-manager.js';
import { UNLIMITED_RATE, parseThrottledReplicas } from '../replica/replication-quota.js';
import { topicSettingsFrom } from './topic-settings.js';

/**
 * Broker configs applied dynamically (Kafka's DynamicConfig.Broker subset Samsa honours so far):
 * the replication throttle rates, in bytes/s, per broker (/config/brokers/<id>) over the cluster
 * default (/config/brokers/<default>); unset means unlimited.
 */
export const DYNAMIC_BROKER_CONFIGS = ['leader.replication.throttled.rate', 'follower.replication.throttled.rate', 'replica.alter.log.dirs.io.max.bytes.per.second'] as const;
export type DynamicBrokerConfigName = (typeof DYNAMIC_BROKER_CONFIGS)[number];

export function isDynamicBrokerConfig(name: string): name is DynamicBrokerConfigName {
  return (DYNAMIC_BROKER_CONFIGS as readonly string[]).includes(name);
}

/** A throttle rate value: a non-negative long. Returns the reason it is not, or null. */
export function invalidRate(value: string): string | null {
  return /^\d+$/.test(value.trim()) && Number(value) <= Number.MAX_SAFE_INTEGER ? null : `Invalid value ${value} for configuration: expected a non-negative long (bytes/s)`;
}

export interface DynamicConfigTargets {
  brokerId: number;
  config: BrokerConfig;
  replicaManager: ReplicaManager;
  /** The broker's copy of /config/topics (read by new logs). */
  topicConfigs: Map<string, Record<string, string>>;
  logger: Logger;
}

/**
 * What each config change does on this broker (Kafka's TopicConfigHandler / BrokerConfigHandler):
 * a topic's overrides replace the cached settings, reconfigure its open logs and set its
 * throttled replicas; broker entities set the replication throttle rates.
 */
export function dynamicConfigHandlers(t: DynamicConfigTargets): ConfigHandlers {
  const brokerEntities = new Map<string, Record<string, string>>();
  const log = t.logger.child({ component: 'dynamic-config' });
  const rate = (name: DynamicBrokerConfigName): number => {
    const v = brokerEntities.get(String(t.brokerId))?.[name] ?? brokerEntities.get(DEFAULT_BROKER_ENTITY)?.[name];
    return v === undefined || invalidRate(v) !== null ? UNLIMITED_RATE : Number(v);
  };
  return {
    [ConfigType.Topic]: async (topic, overrides) => {
      t.topicConfigs.set(topic, overrides);
      const rm = t.replicaManager;
      rm.invalidateTopicSettings(topic);
      const leader = parseThrottledReplicas(overrides['leader.replication.throttled.replicas'], t.brokerId);
      const follower = parseThrottledReplicas(overrides['follower.replication.throttled.replicas'], t.brokerId);
      if (leader) rm.quotas.leader.markThrottled(topic, leader);
      else rm.quotas.leader.removeThrottle(topic);
      if (follower) rm.quotas.follower.markThrottled(topic, follower);
      else rm.quotas.follower.removeThrottle(topic);
      let logConfig;
      try {
        logConfig = topicSettingsFrom(t.config, overrides).logConfig;
      } catch (err) {
        log.warn({ topic, err: (err as Error).message }, 'invalid topic config in ZooKeeper; open logs keep their settings');
        return;
      }
      for (const p of rm.partitions.values()) {
        if (p.topic === topic && p.log) await p.log.updateConfig(logConfig).catch((err: unknown) => log.warn({ topic, partition: p.partition, err }, 'could not reconfigure the log'));
      }
    },
    [ConfigType.Broker]: (entity, config) => {
      brokerEntities.set(entity, config);
      t.replicaManager.quotas.leader.updateQuota(rate('leader.replication.throttled.rate'));
      t.replicaManager.quotas.follower.updateQuota(rate('follower.replication.throttled.rate'));
      log.info({ entity, leaderRate: t.replicaManager.quotas.leader.quota, followerRate: t.replicaManager.quotas.follower.quota }, 'replication throttle rates');
    },
  };
}
