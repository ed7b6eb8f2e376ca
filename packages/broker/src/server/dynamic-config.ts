import type { Logger } from 'pino';
import { ConfigType } from '@samsa/zk-paths';
import type { ConfigHandlers } from '../config/config-change-notification.js';
import type { DynamicBrokerConfig } from '../config/dynamic-broker-config.js';
import type { ReplicaManager } from '../replica/replica-manager.js';
import { UNLIMITED_RATE, parseThrottledReplicas } from '../replica/replication-quota.js';
import { topicSettingsFrom } from '../config/topic-settings.js';
import { desanitizeEntityName } from '../admin/client-quota-admin.js';
import type { ClientQuotas } from '../quota/throttle.js';
import { withoutCredentials, type ScramCredentialCache } from '../security/scram-credential-cache.js';

export { THROTTLE_RATE_CONFIGS as DYNAMIC_BROKER_CONFIGS, invalidRate } from '../config/dynamic-broker-config.js';

export interface DynamicConfigTargets {
  brokerId: number;
  config: DynamicBrokerConfig;
  replicaManager: ReplicaManager;
  /** The broker's copy of /config/topics (read by new logs). */
  topicConfigs: Map<string, Record<string, string>>;
  /** Client quota entities (/config/clients, /config/users). */
  quotas?: ClientQuotas;
  /** SCRAM credentials (the `SCRAM-SHA-*` keys of /config/users/<user>). */
  credentials?: ScramCredentialCache;
  logger: Logger;
}

/**
 * What each config change does on this broker (Kafka's TopicConfigHandler / BrokerConfigHandler):
 * a topic's overrides replace the cached settings, reconfigure its open logs and set its
 * throttled replicas; broker entities set the replication throttle rates.
 */
export function dynamicConfigHandlers(t: DynamicConfigTargets): ConfigHandlers {
  const log = t.logger.child({ component: 'dynamic-config' });
  /** Open logs take their topic's settings again (after a topic or a broker default changed). */
  const reconfigure = async (topic: string, overrides: Readonly<Record<string, string>>) => {
    t.replicaManager.invalidateTopicSettings(topic);
    let logConfig;
    try {
      logConfig = topicSettingsFrom(t.config.current, overrides).logConfig;
    } catch (err) {
      log.warn({ topic, err: (err as Error).message }, 'invalid topic config in ZooKeeper; open logs keep their settings');
      return;
    }
    for (const p of t.replicaManager.partitions.values()) {
      if (p.topic === topic && p.log)
        await p.log.updateConfig(logConfig).catch((err: unknown) => log.warn({ topic, partition: p.partition, err }, 'could not reconfigure the log'));
    }
  };
  return {
    [ConfigType.Topic]: async (topic, overrides) => {
      t.topicConfigs.set(topic, overrides);
      const rm = t.replicaManager;
      const leader = parseThrottledReplicas(overrides['leader.replication.throttled.replicas'], t.brokerId);
      const follower = parseThrottledReplicas(overrides['follower.replication.throttled.replicas'], t.brokerId);
      if (leader) rm.quotas.leader.markThrottled(topic, leader);
      else rm.quotas.leader.removeThrottle(topic);
      if (follower) rm.quotas.follower.markThrottled(topic, follower);
      else rm.quotas.follower.removeThrottle(topic);
      await reconfigure(topic, overrides);
    },
    // quota entities (Kafka's ClientIdConfigHandler / UserConfigHandler); users may be `user/clients/id`
    [ConfigType.Client]: (sanitized, config) => {
      if (!t.quotas) return;
      const entity = desanitizeEntityName(sanitized);
      if (Object.keys(config).length === 0) t.quotas.configs.clients.delete(entity);
      else t.quotas.configs.clients.set(entity, config);
      log.info({ clientId: entity, config }, 'client quota config applied');
    },
    [ConfigType.User]: (sanitized, config) => {
      if (t.credentials && !sanitized.includes('/')) {
        const bad = t.credentials.updateUser(desanitizeEntityName(sanitized), config);
        if (bad.length > 0) log.warn({ user: desanitizeEntityName(sanitized), mechanisms: bad }, 'invalid SCRAM credentials in ZooKeeper ignored');
      }
      if (!t.quotas) return;
      // znode names are sanitized (Kafka's Sanitizer); `<default>` and `/clients/` stay as they are
      const entity = sanitized
        .split('/')
        .map((p, i) => (i === 1 ? p : desanitizeEntityName(p)))
        .join('/');
      if (Object.keys(config).length === 0) t.quotas.configs.users.delete(entity);
      else t.quotas.configs.users.set(entity, config);
      log.info({ user: entity, config: withoutCredentials(config) }, 'user quota config applied');
    },
    [ConfigType.Broker]: async (entity, config) => {
      const skipped = t.config.update(entity, config);
      if (skipped.length > 0) log.warn({ entity, skipped }, 'dynamic broker configs not applied (not updatable or invalid)');
      t.replicaManager.quotas.leader.updateQuota(t.config.rate('leader.replication.throttled.rate') ?? UNLIMITED_RATE);
      t.replicaManager.quotas.follower.updateQuota(t.config.rate('follower.replication.throttled.rate') ?? UNLIMITED_RATE);
      log.info(
        { entity, leaderRate: t.replicaManager.quotas.leader.quota, followerRate: t.replicaManager.quotas.follower.quota },
        'dynamic broker config applied',
      );
      // topics inherit the broker's log.* defaults: every topic with an open log takes them again
      const topics = new Set([...t.replicaManager.partitions.values()].map((p) => p.topic));
      for (const topic of topics) await reconfigure(topic, t.topicConfigs.get(topic) ?? {});
    },
  };
}
