import { AclOperation, ErrorCode, errorCodeOf, type AlterClientQuotasResponseEntryData } from '@samsa/protocol';
import { alterClientQuotaEntity } from '../admin/client-quota-admin.js';
import type { ApiHandler } from '../api/api-handler.js';
import type { BrokerServices } from './services.js';
import { requireCluster } from '../security/authorizer.js';

/**
 * AlterClientQuotas (KIP-546), ZooKeeper mode: each entry's ops are applied to its entity's quota
 * config in /config/users|clients|ips/… and announced under /config/changes, which every broker's
 * quota managers apply; each entry is answered on its own (INVALID_REQUEST for unknown keys,
 * entity types or combinations). `validateOnly` checks without writing.
 */
export const alterClientQuotasHandler: ApiHandler<49, BrokerServices> = {
  apiKey: 49,
  async handle(req, ctx, s) {
    requireCluster(s, ctx, AclOperation.ALTER_CONFIGS);
    const entries: AlterClientQuotasResponseEntryData[] = [];
    for (const e of req.body.entries) {
      const res: AlterClientQuotasResponseEntryData = {
        errorCode: 0,
        errorMessage: null,
        entity: e.entity.map((p) => ({ entityType: p.entityType, entityName: p.entityName })),
      };
      try {
        await alterClientQuotaEntity(s.kzk, e.entity, e.ops, req.body.validateOnly);
      } catch (err) {
        res.errorCode = errorCodeOf(err);
        res.errorMessage = (err as Error).message;
        if (res.errorCode === ErrorCode.UNKNOWN_SERVER_ERROR) s.log.error({ err, entity: e.entity }, 'AlterClientQuotas failed');
      }
      entries.push(res);
    }
    return { throttleTimeMs: 0, entries };
  },
  errorResponse(req, code) {
    return {
      throttleTimeMs: 0,
      entries: req.body.entries.map((e) => ({
        errorCode: code,
        errorMessage: null,
        entity: e.entity.map((p) => ({ entityType: p.entityType, entityName: p.entityName })),
      })),
    };
  },
};
