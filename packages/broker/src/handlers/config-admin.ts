import { KafkaError, errorCodeOf } from '@samsa/protocol';
import { ConfigType } from '@samsa/zk-paths';
import { DEFAULT_BROKER_ENTITY } from '../config/config-change-notification.js';
import { validateBrokerEntityConfig, type BrokerEntityKeys } from '../config/dynamic-broker-config.js';
import { TOPIC_CONFIGS, isTopicConfigName } from '../config/topic-config.js';
import type { BrokerServices } from '../handlers/services.js';
import { topicSettingsFrom } from '../config/topic-settings.js';

/** ConfigResource.Type codes of the config APIs. */
export const ConfigResourceType = { TOPIC: 2, BROKER: 4 } as const;

/** A resource's new config computed from its current one (and whether a name is a list config). */
export type ConfigUpdate = (current: Readonly<Record<string, string>>, isList: (name: string) => boolean) => Record<string, string>;

/**
 * The one admin path for dynamic configs (Kafka's ZkAdminManager + AdminZkClient.changeConfigs):
 * the resource's new config is computed from what /config/<type>/<name> holds, validated, then
 * written back with a /config/changes notification that every broker applies. Topic resources
 * need an existing topic; broker resources name this broker or "" (the cluster default).
 */
export async function alterResourceConfig(
  s: BrokerServices,
  resourceType: number,
  resourceName: string,
  update: ConfigUpdate,
  validateOnly: boolean,
): Promise<void> {
  if (resourceType === ConfigResourceType.TOPIC) {
    if (!(await s.kzk.topicExists(resourceName))) throw new KafkaError('UNKNOWN_TOPIC_OR_PARTITION', `Topic ${resourceName} does not exist`);
    const next = update(await s.kzk.getEntityConfig(ConfigType.Topic, resourceName), (n) => isTopicConfigName(n) && TOPIC_CONFIGS[n].type === 'list');
    for (const name of Object.keys(next)) if (!isTopicConfigName(name)) throw new KafkaError('INVALID_CONFIG', `Unknown topic config name: ${name}`);
    try {
      topicSettingsFrom(s.config, next);
    } catch (err) {
      throw new KafkaError('INVALID_CONFIG', (err as Error).message, { cause: err });
    }
    if (!validateOnly) await s.kzk.changeEntityConfig(ConfigType.Topic, resourceName, next);
    return;
  }
  if (resourceType === ConfigResourceType.BROKER) {
    const entity = resourceName === '' ? DEFAULT_BROKER_ENTITY : resourceName;
    if (entity !== DEFAULT_BROKER_ENTITY && entity !== String(s.brokerId)) {
      throw new KafkaError('INVALID_REQUEST', `Unexpected broker id, expected ${s.brokerId} or empty string, but received ${resourceName}`);
    }
    const otherEntity = entity === DEFAULT_BROKER_ENTITY ? String(s.brokerId) : DEFAULT_BROKER_ENTITY;
    const current = await s.kzk.getEntityConfig(ConfigType.Broker, entity);
    const next = update(current, (n) => n === 'log.cleanup.policy');
    const staticConfig = s.dynamicConfig?.staticConfig ?? s.config;
    const log = s.log.child({ component: 'config-admin', resourceType: 'BROKER', resourceName, entity, validateOnly });
    const changed = Object.keys(next).filter((k) => next[k] !== current[k]);
    const removed = Object.keys(current).filter((k) => !(k in next));
    let keys: BrokerEntityKeys;
    try {
      keys = validateBrokerEntityConfig(staticConfig, entity, next, await s.kzk.getEntityConfig(ConfigType.Broker, otherEntity));
    } catch (err) {
      // Kafka logs refused broker config changes at info ("Invalid config value for resource …")
      log.info({ changed, removed, errorCode: errorCodeOf(err), reason: (err as Error).message }, 'broker config change refused');
      throw err;
    }
    if (!validateOnly) await s.kzk.changeEntityConfig(ConfigType.Broker, entity, next);
    log.info(
      { changed, removed, applied: keys.applied.filter((k) => changed.includes(k)), storedOnly: keys.storedOnly.filter((k) => changed.includes(k)) },
      validateOnly ? 'broker config change validated' : 'broker config change accepted',
    );
    return;
  }
  throw new KafkaError('INVALID_REQUEST', `Unsupported resource type ${resourceType}`);
}
