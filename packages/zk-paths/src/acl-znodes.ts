/**
 * Kafka's AclAuthorizer layout in ZooKeeper (ZkAclStore / ZkAclChangeStore): LITERAL ACLs under
 * /kafka-acl/<ResourceType>/<name>, PREFIXED ACLs under /kafka-acl-extended/prefixed/<ResourceType>/<name>,
 * change notifications under /kafka-acl-changes (literal: `Topic:orders`) and
 * /kafka-acl-extended-changes (JSON). Byte-compatible with what Kafka brokers and kafka-acls.sh write.
 */
import {
  AclPatternType,
  aclOperationPascal,
  aclPatternTypeName,
  aclPermissionTypePascal,
  aclResourceTypePascal,
  parseAclOperation,
  parseAclPatternType,
  parseAclPermissionType,
  parseAclResourceType,
  type AccessControlEntry,
  type AclResourceType,
  type ResourcePattern,
} from '@samsa/protocol';
import { ZNodeDecodeError } from './zk-errors.js';
import { Fields, orderedJson, parseObject, utf8 } from './json.js';

/** The store of one pattern type: where its ACLs and its change notifications live. */
export interface AclStore {
  patternType: typeof AclPatternType.LITERAL | typeof AclPatternType.PREFIXED;
  /** Parent of the per-resource-type nodes. */
  aclPath: string;
  changePath: string;
  encodeChange(p: ResourcePattern): Buffer;
  decodeChange(data: Buffer, path: string): ResourcePattern;
}

export const ACL_CHANGE_PREFIX = 'acl_changes_';

export const LiteralAclStore: AclStore = {
  patternType: AclPatternType.LITERAL,
  aclPath: '/kafka-acl',
  changePath: '/kafka-acl-changes',
  /** `Topic:orders` (Kafka's LiteralAclChangeStore). */
  encodeChange(p: ResourcePattern): Buffer {
    return utf8(`${aclResourceTypePascal(p.resourceType)}:${p.name}`);
  },
  decodeChange(data: Buffer, path: string): ResourcePattern {
    const s = data.toString('utf8');
    const i = s.indexOf(':');
    const resourceType = i > 0 ? parseAclResourceType(s.slice(0, i)) : undefined;
    if (resourceType === undefined) throw new ZNodeDecodeError(path, `expected <ResourceType>:<name>, got ${JSON.stringify(s)}`);
    return { resourceType, name: s.slice(i + 1), patternType: AclPatternType.LITERAL };
  },
};

export const PrefixedAclStore: AclStore = {
  patternType: AclPatternType.PREFIXED,
  aclPath: '/kafka-acl-extended/prefixed',
  changePath: '/kafka-acl-extended-changes',
  /** `{"version":1,"resourceType":"Topic","name":"orders-","patternType":"PREFIXED"}` (Kafka's ExtendedAclChangeEvent). */
  encodeChange(p: ResourcePattern): Buffer {
    return utf8(
      orderedJson([
        ['version', 1],
        ['resourceType', aclResourceTypePascal(p.resourceType)],
        ['name', p.name],
        ['patternType', aclPatternTypeName(p.patternType)],
      ]),
    );
  },
  decodeChange(data: Buffer, path: string): ResourcePattern {
    const f = new Fields(path, parseObject(path, data));
    f.version(1);
    const resourceType = parseAclResourceType(f.str('resourceType'));
    const patternType = parseAclPatternType(f.str('patternType'));
    if (resourceType === undefined || patternType === undefined) throw new ZNodeDecodeError(path, 'unknown resourceType or patternType');
    return { resourceType, name: f.str('name'), patternType };
  },
};

export const ACL_STORES: readonly AclStore[] = [LiteralAclStore, PrefixedAclStore];

export function aclStoreFor(patternType: AclPatternType): AclStore {
  if (patternType === AclPatternType.LITERAL) return LiteralAclStore;
  if (patternType === AclPatternType.PREFIXED) return PrefixedAclStore;
  throw new Error(`no ACL store for pattern type ${aclPatternTypeName(patternType)}`);
}

/** `/kafka-acl/Topic` or `/kafka-acl-extended/prefixed/Topic`. */
export const AclResourceTypeZNode = {
  path: (store: AclStore, resourceType: AclResourceType) => `${store.aclPath}/${aclResourceTypePascal(resourceType)}`,
} as const;

/** One resource's ACLs: `{"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow","operation":"Read","host":"*"}]}`. */
export const AclResourceZNode = {
  path: (p: ResourcePattern) => `${AclResourceTypeZNode.path(aclStoreFor(p.patternType), p.resourceType)}/${p.name}`,
  encode(acls: readonly AccessControlEntry[]): Buffer {
    const list = acls.map(
      (a) =>
        orderedJson([
          ['principal', a.principal],
          ['permissionType', aclPermissionTypePascal(a.permissionType)],
          ['operation', aclOperationPascal(a.operation)],
          ['host', a.host],
        ]) as unknown,
    );
    return utf8(
      orderedJson([
        ['version', 1],
        ['acls', `[${list.join(',')}]`, 'raw'],
      ]),
    );
  },
  decode(data: Buffer, path: string): AccessControlEntry[] {
    if (data.length === 0) return [];
    const f = new Fields(path, parseObject(path, data));
    f.version(1);
    return f.array('acls').map((raw) => {
      if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new ZNodeDecodeError(path, 'an ACL should be an object');
      const a = new Fields(path, raw as Record<string, unknown>);
      const operation = parseAclOperation(a.str('operation'));
      const permissionType = parseAclPermissionType(a.str('permissionType'));
      if (operation === undefined || permissionType === undefined) {
        throw new ZNodeDecodeError(path, `unknown operation or permissionType in ${JSON.stringify(raw)}`);
      }
      return { principal: a.str('principal'), host: a.str('host'), operation, permissionType };
    });
  },
} as const;

/** Sequential notification node: `<changePath>/acl_changes_<seq>`. */
export const AclChangeNotificationSequenceZNode = {
  createPath: (store: AclStore) => `${store.changePath}/${ACL_CHANGE_PREFIX}`,
  seqOf: (child: string) => {
    const n = Number(child.slice(ACL_CHANGE_PREFIX.length));
    return child.startsWith(ACL_CHANGE_PREFIX) && Number.isFinite(n) ? n : -1;
  },
} as const;

/** Created at authorizer startup (Kafka's AclAuthorizer.configure → ZkAclStore paths). */
export const ACL_PERSISTENT_PATHS: readonly string[] = ACL_STORES.flatMap((s) => [s.aclPath, s.changePath]);
