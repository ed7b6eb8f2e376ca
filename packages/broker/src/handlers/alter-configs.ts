import { AclOperation, ErrorCode, errorCodeOf, type AlterConfigsResponseResourceResponse } from '@samsa/protocol';
import { alterResourceConfig } from './config-admin.js';
import type { ApiHandler } from '../api/api-handler.js';
import type { BrokerServices } from './services.js';
import { requireConfigResource } from '../security/authorizer.js';

/**
 * AlterConfigs (the legacy API, replaced by IncrementalAlterConfigs): each resource's dynamic
 * config is replaced as a whole by the entries given (null values are dropped), through the same
 * admin path — validated, written to /config/<type>/<name>, announced under /config/changes.
 */
export const alterConfigsHandler: ApiHandler<33, BrokerServices> = {
  apiKey: 33,
  async handle(req, ctx, s) {
    const responses: AlterConfigsResponseResourceResponse[] = [];
    for (const r of req.body.resources) {
      const res = { errorCode: 0, errorMessage: null as string | null, resourceType: r.resourceType, resourceName: r.resourceName };
      try {
        requireConfigResource(s, ctx, AclOperation.ALTER_CONFIGS, r.resourceType, r.resourceName);
        const next = Object.fromEntries(r.configs.filter((c) => c.value !== null).map((c) => [c.name, c.value as string]));
        await alterResourceConfig(s, r.resourceType, r.resourceName, () => next, req.body.validateOnly);
      } catch (err) {
        res.errorCode = errorCodeOf(err);
        res.errorMessage = (err as Error).message;
        if (res.errorCode === ErrorCode.UNKNOWN_SERVER_ERROR) s.log.error({ err, resource: r.resourceName }, 'AlterConfigs failed');
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
