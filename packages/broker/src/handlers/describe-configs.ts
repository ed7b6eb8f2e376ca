import { KafkaError, errorCodeOf, type DescribeConfigsResponseResourceResult, type DescribeConfigsResponseResult } from '@samsa/protocol';
import { CONFIG_TYPE_CODES, ConfigSource } from '../config/types.js';
import type { ConfigDescription } from '../config/describe.js';
import { describeTopicConfigs, parseTopicConfigs } from '../config/topic-config.js';
import type { ApiHandler } from '../server/request-handler.js';
import type { BrokerServices } from '../server/services.js';

const TOPIC = 2;
const BROKER = 4;

/**
 * DescribeConfigs for topics (their /config/topics overrides over the broker defaults) and for this
 * broker (static server.properties values and Kafka's defaults), with sources, synonyms and
 * documentation as the request version allows. Dynamic broker configs come with the configs issue.
 */
export const describeConfigsHandler: ApiHandler<32, BrokerServices> = {
  apiKey: 32,
  async handle(req, _ctx, s) {
    const v = req.apiVersion;
    const b = req.body;
    const results: DescribeConfigsResponseResult[] = [];
    for (const r of b.resources) {
      const base = { resourceType: r.resourceType, resourceName: r.resourceName };
      try {
        let described: readonly ConfigDescription[];
        if (r.resourceType === TOPIC) {
          if (!(await s.kzk.topicExists(r.resourceName))) throw new KafkaError('UNKNOWN_TOPIC_OR_PARTITION', `Topic ${r.resourceName} does not exist`);
          const overrides = await s.kzk.getTopicConfig(r.resourceName);
          described = describeTopicConfigs(s.config, parseTopicConfigs(overrides));
        } else if (r.resourceType === BROKER) {
          if (r.resourceName !== '' && r.resourceName !== String(s.brokerId)) {
            throw new KafkaError('INVALID_REQUEST', `Unexpected broker id, expected ${s.brokerId} or empty string, but received ${r.resourceName}`);
          }
          described = s.config.describe() as ConfigDescription[];
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
    return { throttleTimeMs: 0, results: req.body.resources.map((r) => ({ errorCode: code, errorMessage: null, resourceType: r.resourceType, resourceName: r.resourceName, configs: [] })) };
  },
};
