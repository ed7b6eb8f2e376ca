import { AclOperation, KafkaError, errorCodeOf, type DescribeConfigsResponseResourceResult, type DescribeConfigsResponseResult } from '@samsa/protocol';
import { CONFIG_TYPE_CODES, ConfigSource } from '../config/types.js';
import type { ConfigDescription } from '../config/describe.js';
import { DEFAULT_BROKER_ENTITY } from '../config/config-change-notification.js';
import { isBrokerConfigName } from '../config/definitions.js';
import { THROTTLE_RATE_CONFIGS } from '../config/dynamic-broker-config.js';
import { describeTopicConfigs, parseTopicConfigs } from '../config/topic-config.js';
import type { ApiHandler } from '../api/api-handler.js';
import type { BrokerServices } from './services.js';
import { requireConfigResource } from '../security/authorizer.js';

const TOPIC = 2;
const BROKER = 4;

/**
 * A broker resource: its id gives every config with its source (per-broker dynamic, cluster
 * default, static, default) plus the dynamic throttle rates; "" gives the cluster-default
 * dynamic configs only (Kafka's describe of the <default> entity).
 */
function describeBroker(s: BrokerServices, name: string): ConfigDescription[] {
  const dyn = s.dynamicConfig;
  const rateEntry = (n: string, value: string, source: 'DYNAMIC_BROKER_CONFIG' | 'DYNAMIC_DEFAULT_BROKER_CONFIG'): ConfigDescription => ({
    name: n,
    value,
    source,
    sensitive: false,
    readOnly: false,
    type: 'long',
    documentation: 'Replication throttle rate in bytes/s.',
    synonyms: [{ name: n, value, source }],
    origin: { kind: 'dynamic', level: source === 'DYNAMIC_BROKER_CONFIG' ? 'broker' : 'default' },
  });
  if (name === '') {
    if (!dyn) return [];
    return Object.entries(dyn.entity(DEFAULT_BROKER_ENTITY))
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([n, v]) => {
        if (isBrokerConfigName(n)) {
          const d = dyn.staticConfig.describe(n);
          // Kafka keeps only the DYNAMIC_DEFAULT_BROKER_CONFIG synonyms of the default entity's configs
          return {
            ...d,
            value: d.sensitive ? null : v,
            source: 'DYNAMIC_DEFAULT_BROKER_CONFIG',
            synonyms: [{ name: n, value: d.sensitive ? null : v, source: 'DYNAMIC_DEFAULT_BROKER_CONFIG' }],
          };
        }
        return rateEntry(n, v, 'DYNAMIC_DEFAULT_BROKER_CONFIG');
      });
  }
  const out = s.config.describe() as ConfigDescription[];
  if (dyn) {
    for (const n of THROTTLE_RATE_CONFIGS) {
      const own = dyn.entity(String(s.brokerId))[n];
      const def = dyn.entity(DEFAULT_BROKER_ENTITY)[n];
      if (own !== undefined) out.push(rateEntry(n, own, 'DYNAMIC_BROKER_CONFIG'));
      else if (def !== undefined) out.push(rateEntry(n, def, 'DYNAMIC_DEFAULT_BROKER_CONFIG'));
    }
    out.sort((a, b) => a.name.localeCompare(b.name));
  }
  return out;
}

/**
 * DescribeConfigs for topics (their /config/topics overrides over the broker's effective defaults)
 * and for this broker or the cluster default (""), with sources (DYNAMIC_TOPIC_CONFIG,
 * DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG),
 * synonyms and documentation as the request version allows.
 */
export const describeConfigsHandler: ApiHandler<32, BrokerServices> = {
  apiKey: 32,
  async handle(req, ctx, s) {
    const v = req.apiVersion;
    const b = req.body;
    const results: DescribeConfigsResponseResult[] = [];
    for (const r of b.resources) {
      const base = { resourceType: r.resourceType, resourceName: r.resourceName };
      try {
        requireConfigResource(s, ctx, AclOperation.DESCRIBE_CONFIGS, r.resourceType, r.resourceName);
        let described: readonly ConfigDescription[];
        if (r.resourceType === TOPIC) {
          if (!(await s.kzk.topicExists(r.resourceName))) throw new KafkaError('UNKNOWN_TOPIC_OR_PARTITION', `Topic ${r.resourceName} does not exist`);
          const overrides = await s.kzk.getTopicConfig(r.resourceName);
          described = describeTopicConfigs(s.config, parseTopicConfigs(overrides));
        } else if (r.resourceType === BROKER) {
          if (r.resourceName !== '' && r.resourceName !== String(s.brokerId)) {
            throw new KafkaError('INVALID_REQUEST', `Unexpected broker id, expected ${s.brokerId} or empty string, but received ${r.resourceName}`);
          }
          described = describeBroker(s, r.resourceName);
        } else {
          throw new KafkaError('INVALID_REQUEST', `Unsupported resource type ${r.resourceType}`);
        }
        const keys = r.configurationKeys === null ? null : new Set(r.configurationKeys);
        const configs: DescribeConfigsResponseResourceResult[] = described
          .filter((d) => keys === null || keys.has(d.name))
          .map((d) => ({
            name: d.name,
            value: d.sensitive ? null : d.value,
            readOnly: d.readOnly,
            isDefault: v === 0 ? d.source === 'DEFAULT_CONFIG' : false,
            configSource: v >= 1 ? ConfigSource[d.source] : -1,
            isSensitive: d.sensitive,
            synonyms: v >= 1 && b.includeSynonyms ? d.synonyms.map((x) => ({ name: x.name, value: x.value, source: ConfigSource[x.source] })) : [],
            configType: v >= 3 ? (CONFIG_TYPE_CODES[d.type] ?? 0) : 0,
            documentation: v >= 3 && b.includeDocumentation ? d.documentation : null,
          }));
        results.push({ errorCode: 0, errorMessage: null, ...base, configs });
      } catch (err) {
        results.push({ errorCode: errorCodeOf(err), errorMessage: (err as Error).message, ...base, configs: [] });
      }
    }
    return { throttleTimeMs: 0, results };
  },
  errorResponse(req, code) {
    return {
      throttleTimeMs: 0,
      results: req.body.resources.map((r) => ({
        errorCode: code,
        errorMessage: null,
        resourceType: r.resourceType,
        resourceName: r.resourceName,
        configs: [],
      })),
    };
  },
};
