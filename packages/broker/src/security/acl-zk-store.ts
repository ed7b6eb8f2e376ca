/**
 * The authorizer's ZooKeeper side (Kafka's KafkaZkClient ACL calls and AclChangeNotificationHandler):
 * reading every ACL at startup, conditional (zkVersion-checked) read-modify-write of one resource's
 * ACL node, change notifications written after each change and watched on every broker.
 */
import type { Logger } from 'pino';
import {
  ACL_PERSISTENT_PATHS,
  ACL_STORES,
  AclChangeNotificationSequenceZNode,
  AclResourceTypeZNode,
  AclResourceZNode,
  CreateMode,
  ZNodeDecodeError,
  ZkCode,
  aclStoreFor,
  isZkError,
  type AclStore,
  type Unwatch,
  type ZkClientApi,
} from '@samsa/zk-paths';
import { AclResourceType, parseAclResourceType, type AccessControlEntry, type ResourcePattern } from '@samsa/protocol';

/** Kafka's ZkNodeChangeNotificationListener purges notifications older than this (15 minutes). */
const NOTIFICATION_EXPIRY_MS = 15 * 60_000;
/** Kafka's AclAuthorizer retries a conflicting conditional update this many times. */
const MAX_UPDATE_RETRIES = 10;

const RESOURCE_TYPES: readonly AclResourceType[] = [
  AclResourceType.TOPIC,
  AclResourceType.GROUP,
  AclResourceType.CLUSTER,
  AclResourceType.TRANSACTIONAL_ID,
  AclResourceType.DELEGATION_TOKEN,
];

export class AclZkStore {
  constructor(
    private readonly zk: ZkClientApi,
    private readonly log: Logger,
  ) {}

  async createPaths(): Promise<void> {
    for (const p of ACL_PERSISTENT_PATHS) await this.zk.mkdirp(p);
  }

  /** Every resource with ACLs (Kafka's AclAuthorizer.loadCache). Malformed nodes are logged and skipped. */
  async loadAll(): Promise<Array<{ pattern: ResourcePattern; acls: AccessControlEntry[] }>> {
    const out: Array<{ pattern: ResourcePattern; acls: AccessControlEntry[] }> = [];
    for (const store of ACL_STORES) {
      const types = await this.zk.getChildren(store.aclPath).catch(() => [] as string[]);
      for (const typeName of types) {
        const resourceType = parseAclResourceType(typeName);
        if (resourceType === undefined || !RESOURCE_TYPES.includes(resourceType)) {
          this.log.warn({ path: `${store.aclPath}/${typeName}` }, 'ignoring an unknown ACL resource type');
          continue;
        }
        const names = await this.zk.getChildren(AclResourceTypeZNode.path(store, resourceType)).catch(() => [] as string[]);
        for (const name of names) {
          const pattern = { resourceType, name, patternType: store.patternType };
          const read = await this.read(pattern);
          if (read.acls.length > 0) out.push({ pattern, acls: read.acls });
        }
      }
    }
    return out;
  }

  /** One resource's ACLs and the node's zkVersion (-1: no node). */
  async read(pattern: ResourcePattern): Promise<{ acls: AccessControlEntry[]; version: number }> {
    const path = AclResourceZNode.path(pattern);
    const n = await this.zk.getOrNull(path);
    if (!n) return { acls: [], version: -1 };
    try {
      return { acls: AclResourceZNode.decode(n.data, path), version: n.stat.version };
    } catch (err) {
      if (!(err instanceof ZNodeDecodeError)) throw err;
      this.log.error({ path, err: err.message }, 'ignoring a malformed ACL node');
      return { acls: [], version: n.stat.version };
    }
  }

  /**
   * Kafka's updateResourceAcls: applies `change` to the resource's current ACLs with a conditional
   * write (set at the read zkVersion, create if absent, delete when none remain), re-reading and
   * retrying on a concurrent change. Writes the change notification when the ACLs changed.
   * Returns the resource's ACLs after the change.
   */
  async update(pattern: ResourcePattern, change: (current: AccessControlEntry[]) => AccessControlEntry[]): Promise<AccessControlEntry[]> {
    const path = AclResourceZNode.path(pattern);
    for (let attempt = 0; ; attempt++) {
      const { acls, version } = await this.read(pattern);
      const next = dedupe(change(acls));
      if (sameSet(acls, next)) return acls;
      try {
        if (next.length === 0) await this.zk.delete(path, version);
        else if (version < 0) await this.zk.create(path, AclResourceZNode.encode(next), { mkdirp: true });
        else await this.zk.set(path, AclResourceZNode.encode(next), version);
      } catch (err) {
        const conflict = isZkError(err, ZkCode.BAD_VERSION) || isZkError(err, ZkCode.NODE_EXISTS) || isZkError(err, ZkCode.NO_NODE);
        if (!conflict || attempt >= MAX_UPDATE_RETRIES) throw new Error(`Failed to update ACLs for ${path}`, { cause: err });
        this.log.debug({ path, attempt, err }, 'ACL node changed concurrently; retrying');
        continue;
      }
      await this.notifyChange(pattern);
      return next;
    }
  }

  async notifyChange(pattern: ResourcePattern): Promise<void> {
    const store = aclStoreFor(pattern.patternType);
    await this.zk.create(AclChangeNotificationSequenceZNode.createPath(store), store.encodeChange(pattern), {
      mode: CreateMode.PersistentSequential,
      mkdirp: true,
    });
  }

  /** The newest notification sequence number of each store (taken before the full load). */
  async lastChangeSeqs(): Promise<number[]> {
    const out: number[] = [];
    for (const store of ACL_STORES) {
      const existing = await this.zk.getChildren(store.changePath).catch(() => [] as string[]);
      out.push(Math.max(-1, ...existing.map(AclChangeNotificationSequenceZNode.seqOf)));
    }
    return out;
  }

  /**
   * Watches both change paths; `onChange` gets each notified resource once, in sequence order per
   * store. Notifications up to `lastSeqs` (from lastChangeSeqs, before the full load) are skipped.
   */
  watchChanges(lastSeqs: readonly number[], onChange: (pattern: ResourcePattern) => Promise<void>): Unwatch {
    const unwatches: Unwatch[] = [];
    for (const [i, store] of ACL_STORES.entries()) {
      const state = { last: lastSeqs[i] ?? -1, chain: Promise.resolve() };
      unwatches.push(
        this.zk.watchChildren(store.changePath, (children) => {
          if (!children) return;
          state.chain = state.chain
            .then(async () => {
              state.last = await this.processChanges(store, children, state.last, onChange);
            })
            .catch((err: unknown) => this.log.error({ err, path: store.changePath }, 'processing ACL change notifications failed'));
        }),
      );
    }
    return () => unwatches.forEach((u) => u());
  }

  private async processChanges(store: AclStore, children: string[], last: number, onChange: (p: ResourcePattern) => Promise<void>): Promise<number> {
    const seqOf = AclChangeNotificationSequenceZNode.seqOf;
    const sorted = children.filter((c) => seqOf(c) >= 0).sort((a, b) => seqOf(a) - seqOf(b));
    for (const child of sorted) {
      const path = `${store.changePath}/${child}`;
      const seq = seqOf(child);
      if (seq <= last) continue;
      last = seq;
      const n = await this.zk.getOrNull(path);
      if (!n) continue;
      try {
        await onChange(store.decodeChange(n.data, path));
      } catch (err) {
        if (!(err instanceof ZNodeDecodeError)) throw err;
        this.log.warn({ path, err: err.message }, 'ignoring a malformed ACL change notification');
      }
      if (n.stat.ctime > 0 && Date.now() - n.stat.ctime > NOTIFICATION_EXPIRY_MS) await this.zk.delete(path).catch(() => undefined);
    }
    return last;
  }
}

function entryKey(a: AccessControlEntry): string {
  return `${a.principal}\u0000${a.host}\u0000${a.operation}\u0000${a.permissionType}`;
}

function dedupe(acls: AccessControlEntry[]): AccessControlEntry[] {
  const seen = new Map<string, AccessControlEntry>();
  for (const a of acls) if (!seen.has(entryKey(a))) seen.set(entryKey(a), a);
  return [...seen.values()];
}

function sameSet(a: AccessControlEntry[], b: AccessControlEntry[]): boolean {
  if (a.length !== b.length) return false;
  const keys = new Set(a.map(entryKey));
  return b.every((x) => keys.has(entryKey(x)));
}
