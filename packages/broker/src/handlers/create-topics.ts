import { AclOperation, AclResourceType, ErrorCode, KafkaError, errorCodeOf, type CreateTopicsResponseCreatableTopicResult } from '@samsa/protocol';
import { topicIdFromString } from '@samsa/zk-paths';
import { ConfigSource } from '../config/types.js';
import { describeTopicConfigs, parseTopicConfigs } from '../config/topic-config.js';
import type { ApiHandler } from '../api/api-handler.js';
import type { BrokerServices } from './services.js';
import { authorizeCluster, authorizedNames } from '../security/authorizer.js';

const ZERO_UUID = Buffer.alloc(16);

function result(name: string, errorCode: number, errorMessage: string | null = null): CreateTopicsResponseCreatableTopicResult {
  return { name, topicId: ZERO_UUID, errorCode, errorMessage, topicConfigErrorCode: 0, numPartitions: -1, replicationFactor: -1, configs: [] };
}

/**
 * CreateTopics, as ZooKeeper-mode Kafka serves it: only the controller creates (others answer
 * NOT_CONTROLLER); each topic is validated and written to ZooKeeper; the answer waits (up to the
 * request timeout) until this broker's metadata shows every new partition with a leader.
 */
export const createTopicsHandler: ApiHandler<19, BrokerServices> = {
  apiKey: 19,
  async handle(req, ctx, s) {
    const b = req.body;
    if (!s.controller.isActive) return { throttleTimeMs: 0, topics: b.topics.map((t) => result(t.name, ErrorCode.NOT_CONTROLLER)) };
    // CREATE on the cluster, else on each topic; the answer's configs need DESCRIBE_CONFIGS
    const names = b.topics.map((t) => t.name);
    const creatable = authorizeCluster(s, ctx, AclOperation.CREATE, { logIfDenied: false })
      ? new Set(names)
      : authorizedNames(s, ctx, AclOperation.CREATE, AclResourceType.TOPIC, names);
    const describable = authorizedNames(s, ctx, AclOperation.DESCRIBE_CONFIGS, AclResourceType.TOPIC, names, { logIfDenied: false });
    const seen = new Map<string, number>();
    for (const t of b.topics) seen.set(t.name, (seen.get(t.name) ?? 0) + 1);
    const results: CreateTopicsResponseCreatableTopicResult[] = [];
    const created: Array<{ name: string; partitions: number }> = [];
    for (const t of b.topics) {
      if ((seen.get(t.name) ?? 0) > 1) {
        results.push(result(t.name, ErrorCode.INVALID_REQUEST, `Create topics request from client contains duplicate topic: ${t.name}`));
        continue;
      }
      if (!creatable.has(t.name)) {
        results.push(result(t.name, ErrorCode.TOPIC_AUTHORIZATION_FAILED, 'Authorization failed.'));
        continue;
      }
      try {
        const configs: Record<string, string> = {};
        for (const c of t.configs) {
          if (c.value === null) throw new KafkaError('INVALID_CONFIG', `Null value not supported for topic configs: ${c.name}`);
          configs[c.name] = c.value;
        }
        const assignment = t.assignments.length > 0 ? new Map(t.assignments.map((a) => [a.partitionIndex, a.brokerIds])) : undefined;
        const r = await s.topicAdmin.createTopic(
          { name: t.name, numPartitions: t.numPartitions, replicationFactor: t.replicationFactor, assignment, configs },
          b.validateOnly,
        );
        const res = result(t.name, 0);
        res.numPartitions = r.numPartitions;
        res.replicationFactor = r.replicationFactor;
        // v5+ (KIP-525): the new topic's configs, as DescribeConfigs would list them. The Java
        // AdminClient reads them whenever numPartitions is set (null configs: NullPointerException).
        res.configs = describeTopicConfigs(s.config, parseTopicConfigs(configs)).map((d) => ({
          name: d.name,
          value: d.sensitive ? null : d.value,
          readOnly: d.readOnly,
          configSource: ConfigSource[d.source],
          isSensitive: d.sensitive,
        }));
        if (!describable.has(t.name)) {
          res.configs = [];
          res.topicConfigErrorCode = ErrorCode.TOPIC_AUTHORIZATION_FAILED;
        }
        if (!b.validateOnly) created.push({ name: t.name, partitions: r.numPartitions });
        results.push(res);
      } catch (err) {
        results.push(result(t.name, errorCodeOf(err), (err as Error).message));
      }
    }
    if (created.length > 0) await s.topicAdmin.waitForMetadata(created, b.timeoutMs);
    for (const r of results) {
      const id = s.metadata.topicId(r.name);
      if (id && r.errorCode === 0) r.topicId = topicIdFromString(id);
      if (r.errorCode === 0 && !b.validateOnly && created.some((c) => c.name === r.name)) {
        const ps = s.metadata.partitions(r.name);
        if (ps.length < r.numPartitions || ps.some((p) => p.leader < 0)) {
          r.errorCode = ErrorCode.REQUEST_TIMED_OUT;
          r.errorMessage = `Topic ${r.name} was created but its partitions had no leader within ${b.timeoutMs} ms`;
        }
      }
    }
    return { throttleTimeMs: 0, topics: results };
  },
  errorResponse(req, code) {
    return { throttleTimeMs: 0, topics: req.body.topics.map((t) => result(t.name, code)) };
  },
};
