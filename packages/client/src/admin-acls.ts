/**
 * Kafka's Admin.createAcls / describeAcls / deleteAcls: one request to any broker (every broker's
 * authorizer reads and writes the same ACLs in ZooKeeper).
 */
import {
  API_KEYS,
  ErrorCode,
  accessControlEntryToString,
  resourcePatternToString,
  type AclBinding,
  type AclBindingFilter,
  type KafkaError,
} from '@samsa/protocol';
import type { Cluster } from './cluster.js';
import { BatchError, brokerError } from './errors.js';

/** `ResourcePattern(...) (principal=..., ...)`: how a binding is named in errors. */
export function aclBindingToString(b: AclBinding): string {
  return `${resourcePatternToString(b.pattern)} ${accessControlEntryToString(b.entry)}`;
}

/** Creates the ACLs; rejects with a BatchError keyed by aclBindingToString when any failed. */
export async function createAcls(cluster: Cluster, bindings: readonly AclBinding[], opts: { timeoutMs?: number } = {}): Promise<void> {
  if (bindings.length === 0) return;
  const res = await cluster.retry(
    'createAcls',
    async () => {
      const conn = await cluster.anyConnection();
      return conn.request(API_KEYS.CreateAcls, {
        creations: bindings.map((b) => ({
          resourceType: b.pattern.resourceType,
          resourceName: b.pattern.name,
          resourcePatternType: b.pattern.patternType,
          principal: b.entry.principal,
          host: b.entry.host,
          operation: b.entry.operation,
          permissionType: b.entry.permissionType,
        })),
      });
    },
    opts,
  );
  const errors = new Map<string, KafkaError>();
  const ok: string[] = [];
  res.body.results.forEach((r, i) => {
    const name = aclBindingToString(bindings[i]!);
    if (r.errorCode !== ErrorCode.NONE) errors.set(name, brokerError(r.errorCode, r.errorMessage));
    else ok.push(name);
  });
  if (errors.size > 0) throw new BatchError('createAcls', errors, ok);
}

function wireFilter(f: AclBindingFilter) {
  return {
    resourceTypeFilter: f.patternFilter.resourceType,
    resourceNameFilter: f.patternFilter.name,
    patternTypeFilter: f.patternFilter.patternType,
    principalFilter: f.entryFilter.principal,
    hostFilter: f.entryFilter.host,
    operation: f.entryFilter.operation,
    permissionType: f.entryFilter.permissionType,
  };
}

/** The ACLs matching the filter. */
export async function describeAcls(cluster: Cluster, filter: AclBindingFilter, opts: { timeoutMs?: number } = {}): Promise<AclBinding[]> {
  const res = await cluster.retry(
    'describeAcls',
    async () => {
      const conn = await cluster.anyConnection();
      return conn.request(API_KEYS.DescribeAcls, wireFilter(filter));
    },
    opts,
  );
  if (res.body.errorCode !== ErrorCode.NONE) throw brokerError(res.body.errorCode, res.body.errorMessage);
  return res.body.resources.flatMap((r) =>
    r.acls.map((a) => ({
      pattern: { resourceType: r.resourceType, name: r.resourceName, patternType: r.patternType },
      entry: { principal: a.principal, host: a.host, operation: a.operation, permissionType: a.permissionType },
    })),
  ) as AclBinding[];
}

/** Deletes the ACLs matching each filter; per filter the bindings deleted. Rejects when a filter failed. */
export async function deleteAcls(cluster: Cluster, filters: readonly AclBindingFilter[], opts: { timeoutMs?: number } = {}): Promise<AclBinding[][]> {
  if (filters.length === 0) return [];
  const res = await cluster.retry(
    'deleteAcls',
    async () => {
      const conn = await cluster.anyConnection();
      return conn.request(API_KEYS.DeleteAcls, { filters: filters.map(wireFilter) });
    },
    opts,
  );
  const errors = new Map<string, KafkaError>();
  const out = res.body.filterResults.map((r, i) => {
    if (r.errorCode !== ErrorCode.NONE) errors.set(`filter ${i}`, brokerError(r.errorCode, r.errorMessage));
    return r.matchingAcls.map((m) => ({
      pattern: { resourceType: m.resourceType, name: m.resourceName, patternType: m.patternType },
      entry: { principal: m.principal, host: m.host, operation: m.operation, permissionType: m.permissionType },
    })) as AclBinding[];
  });
  if (errors.size > 0) throw new BatchError('deleteAcls', errors, []);
  return out;
}
