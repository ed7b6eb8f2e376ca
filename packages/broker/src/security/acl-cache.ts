/**
 * The authorizer's in-memory copy of every ACL (Kafka's AclAuthorizer aclCache) and the decision
 * rules of AclAuthorizer.authorizeAction: super users, allow.everyone.if.no.acl.found, DENY before
 * ALLOW, implied operations, `*` names, prefixes, `User:*` principals and `*` hosts.
 */
import {
  AclOperation,
  AclPatternType,
  AclPermissionType,
  WILDCARD_HOST,
  WILDCARD_PRINCIPAL,
  WILDCARD_RESOURCE,
  aclBindingFilterMatches,
  type AccessControlEntry,
  type AclBinding,
  type AclBindingFilter,
  type AclResourceType,
  type ResourcePattern,
} from '@samsa/protocol';

/** Operations whose ALLOW also allows `op` (Kafka: DESCRIBE from READ/WRITE/DELETE/ALTER, DESCRIBE_CONFIGS from ALTER_CONFIGS). */
export function allowingOperations(op: AclOperation): readonly AclOperation[] {
  switch (op) {
    case AclOperation.DESCRIBE:
      return [AclOperation.DESCRIBE, AclOperation.READ, AclOperation.WRITE, AclOperation.DELETE, AclOperation.ALTER, AclOperation.ALL];
    case AclOperation.DESCRIBE_CONFIGS:
      return [AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS, AclOperation.ALL];
    default:
      return [op, AclOperation.ALL];
  }
}

export function patternKey(p: ResourcePattern): string {
  return `${p.resourceType}\u0000${p.patternType}\u0000${p.name}`;
}

/** Why a request was allowed or denied (logged at debug; the tests read it). */
export type AclDecisionReason = 'super-user' | 'no-acls' | 'deny-acl' | 'allow-acl' | 'no-matching-allow';

export interface AclDecision {
  allowed: boolean;
  reason: AclDecisionReason;
}

export interface AclDecisionSettings {
  superUsers: ReadonlySet<string>;
  allowEveryoneIfNoAclFound: boolean;
}

export class AclCache {
  private readonly byPattern = new Map<string, { pattern: ResourcePattern; acls: readonly AccessControlEntry[] }>();

  /** Replaces one resource's ACLs (empty: the resource has none). */
  set(pattern: ResourcePattern, acls: readonly AccessControlEntry[]): void {
    const k = patternKey(pattern);
    if (acls.length === 0) this.byPattern.delete(k);
    else this.byPattern.set(k, { pattern: { ...pattern }, acls: [...acls] });
  }

  get(pattern: ResourcePattern): readonly AccessControlEntry[] {
    return this.byPattern.get(patternKey(pattern))?.acls ?? [];
  }

  clear(): void {
    this.byPattern.clear();
  }

  patterns(): ResourcePattern[] {
    return [...this.byPattern.values()].map((e) => e.pattern);
  }

  /** Every binding matching `filter` (Kafka's Authorizer.acls), grouped in pattern order. */
  bindings(filter: AclBindingFilter): AclBinding[] {
    const out: AclBinding[] = [];
    for (const { pattern, acls } of this.byPattern.values()) {
      for (const entry of acls) {
        const b = { pattern, entry };
        if (aclBindingFilterMatches(filter, b)) out.push(b);
      }
    }
    return out;
  }

  /** ACLs that apply to the resource: its literal name, the `*` wildcard and every matching prefix. */
  matching(resourceType: AclResourceType, name: string): AccessControlEntry[] {
    const out: AccessControlEntry[] = [];
    for (const { pattern, acls } of this.byPattern.values()) {
      if (pattern.resourceType !== resourceType) continue;
      const hit =
        pattern.patternType === AclPatternType.LITERAL
          ? pattern.name === name || pattern.name === WILDCARD_RESOURCE
          : pattern.patternType === AclPatternType.PREFIXED && name.startsWith(pattern.name);
      if (hit) out.push(...acls);
    }
    return out;
  }

  /** Kafka's AclAuthorizer.authorizeAction for one principal, host and operation on one resource. */
  decide(s: AclDecisionSettings, principal: string, host: string, op: AclOperation, resourceType: AclResourceType, name: string): AclDecision {
    if (s.superUsers.has(principal)) return { allowed: true, reason: 'super-user' };
    const acls = this.matching(resourceType, name);
    if (acls.length === 0) return { allowed: s.allowEveryoneIfNoAclFound, reason: 'no-acls' };
    const applies = (a: AccessControlEntry) =>
      (a.principal === principal || a.principal === WILDCARD_PRINCIPAL) && (a.host === host || a.host === WILDCARD_HOST);
    // DENY wins; a DENY applies to its operation or ALL, never by implication
    if (acls.some((a) => a.permissionType === AclPermissionType.DENY && (a.operation === op || a.operation === AclOperation.ALL) && applies(a))) {
      return { allowed: false, reason: 'deny-acl' };
    }
    const ops = allowingOperations(op);
    if (acls.some((a) => a.permissionType === AclPermissionType.ALLOW && ops.includes(a.operation) && applies(a))) {
      return { allowed: true, reason: 'allow-acl' };
    }
    return { allowed: false, reason: 'no-matching-allow' };
  }
}
