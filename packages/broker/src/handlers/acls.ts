/**
 * DescribeAcls, CreateAcls and DeleteAcls (Kafka's KafkaApis.handle…Acls): DESCRIBE / ALTER on the
 * cluster, SECURITY_DISABLED when no authorizer is configured, filters as Kafka's AclBindingFilter.
 */
import { AclOperation, ErrorCode, unknownFilterField, type AclBinding, type AclBindingFilter, type AclOperation as Op } from '@samsa/protocol';
import type { AclPatternType, AclPermissionType, AclResourceType, ApiRequestMap } from '@samsa/protocol';
import type { ApiHandler } from '../api/api-handler.js';
import { requireCluster } from '../security/authorizer.js';
import type { BrokerServices } from './services.js';

const NO_AUTHORIZER = 'No Authorizer is configured on the broker';

type DeleteFilter = ApiRequestMap[31]['filters'][number];

/** A wire filter (DescribeAcls' top level or one DeleteAcls filter) as an AclBindingFilter. */
export function toBindingFilter(f: DeleteFilter): AclBindingFilter {
  return {
    patternFilter: { resourceType: f.resourceTypeFilter as AclResourceType, name: f.resourceNameFilter, patternType: f.patternTypeFilter as AclPatternType },
    entryFilter: { principal: f.principalFilter, host: f.hostFilter, operation: f.operation as Op, permissionType: f.permissionType as AclPermissionType },
  };
}

export const describeAclsHandler: ApiHandler<29, BrokerServices> = {
  apiKey: 29,
  async handle(req, ctx, s) {
    requireCluster(s, ctx, AclOperation.DESCRIBE);
    if (!s.authorizer) return { throttleTimeMs: 0, errorCode: ErrorCode.SECURITY_DISABLED, errorMessage: NO_AUTHORIZER, resources: [] };
    const filter = toBindingFilter(req.body);
    const bad = unknownFilterField(filter);
    if (bad) return { throttleTimeMs: 0, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: bad, resources: [] };
    return { throttleTimeMs: 0, errorCode: 0, errorMessage: null, resources: groupByPattern(s.authorizer.acls(filter)) };
  },
  errorResponse(_req, code) {
    return { throttleTimeMs: 0, errorCode: code, errorMessage: null, resources: [] };
  },
};

/** DescribeAclsResponse.aclsResources: one entry per resource pattern, its ACLs inside. */
function groupByPattern(bindings: AclBinding[]) {
  const out = new Map<string, ApiResponseResource>();
  for (const { pattern, entry } of bindings) {
    const k = `${pattern.resourceType}\u0000${pattern.patternType}\u0000${pattern.name}`;
    let r = out.get(k);
    if (!r) out.set(k, (r = { resourceType: pattern.resourceType, resourceName: pattern.name, patternType: pattern.patternType, acls: [] }));
    r.acls.push({ principal: entry.principal, host: entry.host, operation: entry.operation, permissionType: entry.permissionType });
  }
  return [...out.values()];
}
interface ApiResponseResource {
  resourceType: number;
  resourceName: string;
  patternType: number;
  acls: Array<{ principal: string; host: string; operation: number; permissionType: number }>;
}

export const createAclsHandler: ApiHandler<30, BrokerServices> = {
  apiKey: 30,
  async handle(req, ctx, s) {
    requireCluster(s, ctx, AclOperation.ALTER);
    if (!s.authorizer) return createAclsError(req.body.creations.length, ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER);
    const bindings: AclBinding[] = req.body.creations.map((c) => ({
      pattern: { resourceType: c.resourceType as AclResourceType, name: c.resourceName, patternType: c.resourcePatternType as AclPatternType },
      entry: { principal: c.principal, host: c.host, operation: c.operation as Op, permissionType: c.permissionType as AclPermissionType },
    }));
    const results = await s.authorizer.createAcls(bindings);
    return { throttleTimeMs: 0, results: results.map((r) => (r ? { errorCode: r.code, errorMessage: r.message } : { errorCode: 0, errorMessage: null })) };
  },
  errorResponse(req, code) {
    return createAclsError(req.body.creations.length, code, null);
  },
};

function createAclsError(n: number, errorCode: number, errorMessage: string | null) {
  return { throttleTimeMs: 0, results: Array.from({ length: n }, () => ({ errorCode, errorMessage })) };
}

export const deleteAclsHandler: ApiHandler<31, BrokerServices> = {
  apiKey: 31,
  async handle(req, ctx, s) {
    requireCluster(s, ctx, AclOperation.ALTER);
    if (!s.authorizer) return deleteAclsError(req.body.filters.length, ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER);
    const results = await s.authorizer.deleteAcls(req.body.filters.map(toBindingFilter));
    return {
      throttleTimeMs: 0,
      filterResults: results.map((r) => ({
        errorCode: r.error?.code ?? 0,
        errorMessage: r.error?.message ?? null,
        matchingAcls: r.deleted.map(({ pattern, entry }) => ({
          errorCode: 0,
          errorMessage: null,
          resourceType: pattern.resourceType,
          resourceName: pattern.name,
          patternType: pattern.patternType,
          principal: entry.principal,
          host: entry.host,
          operation: entry.operation,
          permissionType: entry.permissionType,
        })),
      })),
    };
  },
  errorResponse(req, code) {
    return deleteAclsError(req.body.filters.length, code, null);
  },
};

function deleteAclsError(n: number, errorCode: number, errorMessage: string | null) {
  return { throttleTimeMs: 0, filterResults: Array.from({ length: n }, () => ({ errorCode, errorMessage, matchingAcls: [] })) };
}

export const aclHandlers = [describeAclsHandler, createAclsHandler, deleteAclsHandler] as const;
