import { ErrorCode, KafkaError, errorCodeOf, type IncrementalAlterConfigsRequestResource, type IncrementalAlterConfigsResponseResourceResponse } from '@samsa/protocol';
import { ConfigType } from '@samsa/zk-paths';
import { DEFAULT_BROKER_ENTITY } from '../config/config-change-notification.js';
import { TOPIC_CONFIGS, isTopicConfigName } from '../config/topic-config.js';
import type { ApiHandler } from '../server/request-handler.js';
import type { BrokerServices } from '../server/services.js';
import { topicSettingsFrom } from '../server/topic-settings.js';
import { invalidRate, isDynamicBrokerConfig } from '../server/dynamic-config.js';

const RESOURCE_TOPIC = 2;
const RESOURCE_BROKER = 4;
const OP = { SET: 0, DELETE: 1, APPEND: 2, SUBTRACT: 3 } as const;

/** Applies SET / DELETE / APPEND / SUBTRACT (the last two on list configs) to `current`. */
function applyOps(current: Record<string, string>, r: IncrementalAlterConfigsRequestResource, isList: (name: string) => boolean): Record<string, string> {
  const next = { ...current };
  const seen = new Set<string>();
  for (const c of r.configs) {
    if (seen.has(c.name)) throw new KafkaError('INVALID_REQUEST', `Error due to duplicate config keys: ${c.name}`);
    seen.add(c.name);
    switch (c.configOperation) {
      case OP.SET:
        if (c.value === null) throw new KafkaError('INVALID_REQUEST', `Null value not supported for : ${c.name}`);
        next[c.name] = c.value;
        break;
      case OP.DELETE:
        delete next[c.name];
        break;
      case OP.APPEND:
      case OP.SUBTRACT: {
        if (!isList(c.name)) throw new KafkaError('INVALID_CONFIG', `Config value append is not allowed for config key: ${c.name}`);
        const items = (next[c.name] ?? '').split(',').map((x) => x.trim()).filter(Boolean);
        const values = (c.value ?? '').split(',').map((x) => x.trim()).filter(Boolean);
        const out = c.configOperation === OP.APPEND ? [...items, ...values.filter((v) => !items.includes(v))] : items.filter((v) => !values.includes(v));
        if (out.length > 0) next[c.name] = out.join(',');
        else delete next[c.name];
        break;
      }
      default:
        throw new KafkaError('INVALID_REQUEST', `Unknown config operation ${c.configOperation} for ${c.name}`);
    }
  }
  return next;
}

async function alterTopic(r: IncrementalAlterConfigsRequestResource, validateOnly: boolean, s: BrokerServices): Promise<void> {
  if (!(await s.kzk.topicExists(r.resourceName))) throw new KafkaError('UNKNOWN_TOPIC_OR_PARTITION', `Topic ${r.resourceName} does not exist`);
  for (const c of r.configs) if (!isTopicConfigName(c.name)) throw new KafkaError('INVALID_CONFIG', `Unknown topic config name: ${c.name}`);
  const next = applyOps(await s.kzk.getEntityConfig(ConfigType.Topic, r.resourceName), r, (n) => isTopicConfigName(n) && TOPIC_CONFIGS[n].type === 'list');
  try {
    topicSettingsFrom(s.config, next);
  } catch (err) {
    throw new KafkaError('INVALID_CONFIG', (err as Error).message, { cause: err });
  }
  if (!validateOnly) await s.kzk.changeEntityConfig(ConfigType.Topic, r.resourceName, next);
}

async function alterBroker(r: IncrementalAlterConfigsRequestResource, validateOnly: boolean, s: BrokerServices): Promise<void> {
  const entity = r.resourceName === '' ? DEFAULT_BROKER_ENTITY : r.resourceName;
  if (entity !== DEFAULT_BROKER_ENTITY && entity !== String(s.brokerId)) {
    throw new KafkaError('INVALID_REQUEST', `Unexpected broker id, expected ${s.brokerId} or empty string, but received ${r.resourceName}`);
  }
  for (const c of r.configs) {
    if (!isDynamicBrokerConfig(c.name)) throw new KafkaError('INVALID_CONFIG', `Broker config ${c.name} cannot be updated dynamically in Samsa (only ${['leader.replication.throttled.rate', 'follower.replication.throttled.rate'].join(', ')})`);
    if (c.configOperation === OP.SET && c.value !== null && invalidRate(c.value)) throw new KafkaError('INVALID_CONFIG', invalidRate(c.value)!);
  }
  const next = applyOps(await s.kzk.getEntityConfig(ConfigType.Broker, entity), r, () => false);
  if (!validateOnly) await s.kzk.changeEntityConfig(ConfigType.Broker, entity, next);
}

/**
 * IncrementalAlterConfigs (KIP-339), ZooKeeper mode: a topic's or a broker's dynamic configs are
 * rewritten in /config/<type>/<name> and announced under /config/changes, which every broker
 * applies. Broker resources name this broker (or "" for the cluster default); Samsa applies the
 * replication throttle rates dynamically and refuses other broker configs.
 */
export const incrementalAlterConfigsHandler: ApiHandler<44, BrokerServices> = {
  apiKey: 44,
  async handle(req, _ctx, s) {
    const responses: IncrementalAlterConfigsResponseResourceResponse[] = [];
    for (const r of req.body.resources) {
      const res = { errorCode: 0, errorMessage: null as string | null, resourceType: r.resourceType, resourceName: r.resourceName };
      try {
        if (r.resourceType === RESOURCE_TOPIC) await alterTopic(r, req.body.validateOnly, s);
        else if (r.resourceType === RESOURCE_BROKER) await alterBroker(r, req.body.validateOnly, s);
        else throw new KafkaError('INVALID_REQUEST', `Unsupported resource type ${r.resourceType}`);
      } catch (err) {
        res.errorCode = errorCodeOf(err);
        res.errorMessage = (err as Error).message;
        if (res.errorCode === ErrorCode.UNKNOWN_SERVER_ERROR) s.log.error({ err, resource: r.resourceName }, 'IncrementalAlterConfigs failed');
      }
      responses.push(res);
    }
    return { throttleTimeMs: 0, responses };
  },
  errorResponse(req, code) {
    return { throttleTimeMs: 0, responses: req.body.resources.map((r) => ({ errorCode: code, errorMessage: null, resourceType: r.resourceType, resourceName: r.resourceName })) };
  },
};
