import { AclOperation, ErrorCode, errorCodeOf } from '@samsa/protocol';
import { describeClientQuotas } from '../admin/client-quota-admin.js';
import type { ApiHandler } from '../api/api-handler.js';
import type { BrokerServices } from './services.js';
import { requireCluster } from '../security/authorizer.js';

/**
 * DescribeClientQuotas (KIP-546), ZooKeeper mode: the quota entities under /config/users,
 * /config/clients and /config/ips that match the filter (EXACT / DEFAULT / SPECIFIED per entity
 * type, `strict`), with their quota values. A bad filter fails the whole request.
 */
export const describeClientQuotasHandler: ApiHandler<48, BrokerServices> = {
  apiKey: 48,
  async handle(req, ctx, s) {
    requireCluster(s, ctx, AclOperation.DESCRIBE_CONFIGS);
    try {
      const found = await describeClientQuotas(s.kzk, req.body.components, req.body.strict);
      return { throttleTimeMs: 0, errorCode: 0, errorMessage: null, entries: found.map((f) => ({ entity: f.entity, values: f.values })) };
    } catch (err) {
      const errorCode = errorCodeOf(err);
      if (errorCode === ErrorCode.UNKNOWN_SERVER_ERROR) s.log.error({ err }, 'DescribeClientQuotas failed');
      return { throttleTimeMs: 0, errorCode, errorMessage: (err as Error).message, entries: null };
    }
  },
  errorResponse(_req, code) {
    return { throttleTimeMs: 0, errorCode: code, errorMessage: null, entries: null };
  },
};
