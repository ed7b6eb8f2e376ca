/**
 * Kafka's ACL vocabulary (org.apache.kafka.common.acl / resource): the wire codes carried by
 * CreateAcls, DescribeAcls and DeleteAcls, Kafka's enum names (`READ`, `TOPIC`, what kafka-acls.sh
 * prints) and the CamelCase names Kafka writes in ZooKeeper and in the authorizer log (`Read`, `Topic`).
 */

export const AclResourceType = {
  UNKNOWN: 0,
  ANY: 1,
  TOPIC: 2,
  GROUP: 3,
  CLUSTER: 4,
  TRANSACTIONAL_ID: 5,
  DELEGATION_TOKEN: 6,
} as const;
export type AclResourceType = (typeof AclResourceType)[keyof typeof AclResourceType];

export const AclOperation = {
  UNKNOWN: 0,
  ANY: 1,
  ALL: 2,
  READ: 3,
  WRITE: 4,
  CREATE: 5,
  DELETE: 6,
  ALTER: 7,
  DESCRIBE: 8,
  CLUSTER_ACTION: 9,
  DESCRIBE_CONFIGS: 10,
  ALTER_CONFIGS: 11,
  IDEMPOTENT_WRITE: 12,
} as const;
export type AclOperation = (typeof AclOperation)[keyof typeof AclOperation];

export const AclPermissionType = { UNKNOWN: 0, ANY: 1, DENY: 2, ALLOW: 3 } as const;
export type AclPermissionType = (typeof AclPermissionType)[keyof typeof AclPermissionType];

export const AclPatternType = { UNKNOWN: 0, ANY: 1, MATCH: 2, LITERAL: 3, PREFIXED: 4 } as const;
export type AclPatternType = (typeof AclPatternType)[keyof typeof AclPatternType];

/**
 * The operations each resource type has (Kafka's AclEntry.supportedOperations, without ALL): what
 * KIP-430 reports as authorized operations and, with ALL, what kafka-acls.sh accepts.
 */
export const SUPPORTED_ACL_OPERATIONS: Readonly<Partial<Record<AclResourceType, readonly AclOperation[]>>> = {
  [AclResourceType.TOPIC]: [
    AclOperation.READ,
    AclOperation.WRITE,
    AclOperation.CREATE,
    AclOperation.DESCRIBE,
    AclOperation.DELETE,
    AclOperation.ALTER,
    AclOperation.DESCRIBE_CONFIGS,
    AclOperation.ALTER_CONFIGS,
  ],
  [AclResourceType.GROUP]: [AclOperation.READ, AclOperation.DESCRIBE, AclOperation.DELETE],
  [AclResourceType.CLUSTER]: [
    AclOperation.CREATE,
    AclOperation.CLUSTER_ACTION,
    AclOperation.DESCRIBE_CONFIGS,
    AclOperation.ALTER_CONFIGS,
    AclOperation.IDEMPOTENT_WRITE,
    AclOperation.ALTER,
    AclOperation.DESCRIBE,
  ],
  [AclResourceType.TRANSACTIONAL_ID]: [AclOperation.DESCRIBE, AclOperation.WRITE],
};

/** The only name a CLUSTER resource has. */
export const CLUSTER_RESOURCE_NAME = 'kafka-cluster';
/** A LITERAL resource name matching every resource of its type. */
export const WILDCARD_RESOURCE = '*';
/** The ACL host matching every host. */
export const WILDCARD_HOST = '*';
/** The ACL principal matching every user. */
export const WILDCARD_PRINCIPAL = 'User:*';

function nameOf<T extends Record<string, number>>(table: T, code: number): keyof T & string {
  for (const [k, v] of Object.entries(table)) if (v === code) return k;
  return 'UNKNOWN';
}

/** `READ`, `TOPIC`, `ALLOW`, `PREFIXED`: Kafka's enum names. */
export const aclOperationName = (code: number): string => nameOf(AclOperation, code);
export const aclResourceTypeName = (code: number): string => nameOf(AclResourceType, code);
export const aclPermissionTypeName = (code: number): string => nameOf(AclPermissionType, code);
export const aclPatternTypeName = (code: number): string => nameOf(AclPatternType, code);

/** `DESCRIBE_CONFIGS` → `DescribeConfigs` (Kafka's SecurityUtils.toPascalCase). */
function pascal(enumName: string): string {
  return enumName
    .toLowerCase()
    .split('_')
    .map((w) => (w ? w[0]!.toUpperCase() + w.slice(1) : w))
    .join('');
}

/** Parses an enum name case-insensitively, with or without underscores (`read`, `DescribeConfigs`). */
function parseName<T extends Record<string, number>>(table: T, s: string): T[keyof T] | undefined {
  const want = s.replace(/_/g, '').toUpperCase();
  for (const [k, v] of Object.entries(table)) if (k.replace(/_/g, '') === want) return v as T[keyof T];
  return undefined;
}

/** Kafka's SecurityUtils.operationName / resourceTypeName / permissionTypeName: `Read`, `Topic`, `Allow`. */
export const aclOperationPascal = (code: number): string => pascal(aclOperationName(code));
export const aclResourceTypePascal = (code: number): string => pascal(aclResourceTypeName(code));
export const aclPermissionTypePascal = (code: number): string => pascal(aclPermissionTypeName(code));

export const parseAclOperation = (s: string): AclOperation | undefined => parseName(AclOperation, s);
export const parseAclResourceType = (s: string): AclResourceType | undefined => parseName(AclResourceType, s);
export const parseAclPermissionType = (s: string): AclPermissionType | undefined => parseName(AclPermissionType, s);
export const parseAclPatternType = (s: string): AclPatternType | undefined => parseName(AclPatternType, s);

/** A resource pattern: what an ACL applies to. */
export interface ResourcePattern {
  resourceType: AclResourceType;
  name: string;
  patternType: AclPatternType;
}

/** An access control entry: who may (or may not) do what, from where. */
export interface AccessControlEntry {
  /** `User:alice`, `User:*`. */
  principal: string;
  host: string;
  operation: AclOperation;
  permissionType: AclPermissionType;
}

export interface AclBinding {
  pattern: ResourcePattern;
  entry: AccessControlEntry;
}

/** Kafka's AclBindingFilter: null strings match anything, ANY codes match any value. */
export interface AclBindingFilter {
  patternFilter: { resourceType: AclResourceType; name: string | null; patternType: AclPatternType };
  entryFilter: { principal: string | null; host: string | null; operation: AclOperation; permissionType: AclPermissionType };
}

/** `ResourcePattern(resourceType=TOPIC, name=orders-, patternType=PREFIXED)`, as Kafka's toString. */
export function resourcePatternToString(p: ResourcePattern): string {
  return `ResourcePattern(resourceType=${aclResourceTypeName(p.resourceType)}, name=${p.name}, patternType=${aclPatternTypeName(p.patternType)})`;
}

/** `(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)`, as Kafka's toString. */
export function accessControlEntryToString(e: AccessControlEntry): string {
  return `(principal=${e.principal}, host=${e.host}, operation=${aclOperationName(e.operation)}, permissionType=${aclPermissionTypeName(e.permissionType)})`;
}

/** Kafka's ResourcePatternFilter.matches. */
export function patternFilterMatches(f: AclBindingFilter['patternFilter'], p: ResourcePattern): boolean {
  if (f.resourceType !== AclResourceType.ANY && f.resourceType !== p.resourceType) return false;
  if (f.patternType !== AclPatternType.ANY && f.patternType !== AclPatternType.MATCH && f.patternType !== p.patternType) return false;
  if (f.name === null) return true;
  if (f.patternType === AclPatternType.ANY || f.patternType === p.patternType) return f.name === p.name;
  // MATCH: the patterns that would apply to a resource named f.name
  if (p.patternType === AclPatternType.LITERAL) return f.name === p.name || p.name === WILDCARD_RESOURCE;
  if (p.patternType === AclPatternType.PREFIXED) return f.name.startsWith(p.name);
  return false;
}

/** Kafka's AccessControlEntryFilter.matches. */
export function entryFilterMatches(f: AclBindingFilter['entryFilter'], e: AccessControlEntry): boolean {
  if (f.principal !== null && f.principal !== e.principal) return false;
  if (f.host !== null && f.host !== e.host) return false;
  if (f.operation !== AclOperation.ANY && f.operation !== e.operation) return false;
  return f.permissionType === AclPermissionType.ANY || f.permissionType === e.permissionType;
}

export function aclBindingFilterMatches(f: AclBindingFilter, b: AclBinding): boolean {
  return patternFilterMatches(f.patternFilter, b.pattern) && entryFilterMatches(f.entryFilter, b.entry);
}

/**
 * Why a filter cannot be used (Kafka's AclBindingFilter.findIndefiniteField / isUnknown): a field
 * left UNKNOWN. Returns null when the filter is usable.
 */
export function unknownFilterField(f: AclBindingFilter): string | null {
  if (f.patternFilter.resourceType === AclResourceType.UNKNOWN) return 'Resource type is UNKNOWN.';
  if (f.patternFilter.patternType === AclPatternType.UNKNOWN) return 'Resource pattern type is UNKNOWN.';
  if (f.entryFilter.operation === AclOperation.UNKNOWN) return 'Operation is UNKNOWN.';
  if (f.entryFilter.permissionType === AclPermissionType.UNKNOWN) return 'Permission type is UNKNOWN.';
  return null;
}

/** Why a binding cannot be stored (Kafka: no ANY/UNKNOWN/MATCH anywhere), or null when it can. */
export function invalidBindingReason(b: AclBinding): string | null {
  const p = b.pattern;
  const e = b.entry;
  if (p.resourceType === AclResourceType.UNKNOWN || p.resourceType === AclResourceType.ANY || !aclResourceTypeKnown(p.resourceType)) {
    return `Invalid resource type ${aclResourceTypeName(p.resourceType)}`;
  }
  if (p.patternType !== AclPatternType.LITERAL && p.patternType !== AclPatternType.PREFIXED) {
    return `Invalid pattern type ${aclPatternTypeName(p.patternType)}: ACLs are LITERAL or PREFIXED`;
  }
  if (e.operation <= AclOperation.ANY || e.operation > AclOperation.IDEMPOTENT_WRITE) return `Invalid operation ${aclOperationName(e.operation)}`;
  if (e.permissionType !== AclPermissionType.ALLOW && e.permissionType !== AclPermissionType.DENY) {
    return `Invalid permission type ${aclPermissionTypeName(e.permissionType)}`;
  }
  return null;
}

function aclResourceTypeKnown(code: number): boolean {
  return code >= AclResourceType.TOPIC && code <= AclResourceType.DELEGATION_TOKEN;
}
