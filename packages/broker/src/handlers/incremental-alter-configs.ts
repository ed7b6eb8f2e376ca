import {
  AclOperation,
  ErrorCode,
  KafkaError,
  errorCodeOf,
  type IncrementalAlterConfigsRequestResource,
  type IncrementalAlterConfigsResponseResourceResponse,
} from '@samsa/protocol';
import { alterResourceConfig } from './config-admin.js';
import type { ApiHandler } from '../api/api-handler.js';
import type { BrokerServices } from './services.js';
import { requireConfigResource } from '../security/authorizer.js';
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
        const items = (next[c.name] ?? '')
          .split(',')
          .map((x) => x.trim())
          .filter(Boolean);
        const values = (c.value ?? '')
          .split(',')
          .map((x) => x.trim())
          .filter(Boolean);
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

/**
 * IncrementalAlterConfigs (KIP-339), ZooKeeper mode: a topic's or a broker's dynamic configs are
 * rewritten in /config/<type>/<name> and announced under /config/changes, which every broker
 * applies. Broker resources name this broker (or "" for the cluster default); broker configs Samsa
 * cannot apply at runtime are refused (see config/dynamic-broker-config.ts).
 */
export const incrementalAlterConfigsHandler: ApiHandler<44, BrokerServices> = {
  apiKey: 44,
  async handle(req, ctx, s) {
    const responses: IncrementalAlterConfigsResponseResourceResponse[] = [];
    for (const r of req.body.resources) {
      const res = { errorCode: 0, errorMessage: null as string | null, resourceType: r.resourceType, resourceName: r.resourceName };
      try {
        requireConfigResource(s, ctx, AclOperation.ALTER_CONFIGS, r.resourceType, r.resourceName);
        await alterResourceConfig(s, r.resourceType, r.resourceName, (current, isList) => applyOps(current, r, isList), req.body.validateOnly);
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
    return {
      throttleTimeMs: 0,
      responses: req.body.resources.map((r) => ({ errorCode: code, errorMessage: null, resourceType: r.resourceType, resourceName: r.resourceName })),
    };
  },
};
