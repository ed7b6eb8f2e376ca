/**
 * Kafka's AclAuthorizer (ZooKeeper mode): ACLs kept in ZooKeeper and cached in memory, reloaded per
 * resource on change notifications, decisions per Kafka's rules (acl-cache.ts), one authorizer-log
 * line per decision on the `kafka.authorizer.logger` logger (denials at info, allows at debug).
 */
import type { Logger } from 'pino';
import {
  AclPatternType,
  AclResourceType,
  CLUSTER_RESOURCE_NAME,
  ErrorCode,
  aclOperationPascal,
  aclResourceTypePascal,
  getApi,
  invalidBindingReason,
  patternFilterMatches,
  unknownFilterField,
  entryFilterMatches,
  type AclBinding,
  type AclBindingFilter,
  type ResourcePattern,
} from '@samsa/protocol';
import type { ZkClientApi, Unwatch } from '@samsa/zk-paths';
import type { BrokerConfig } from '../config/broker-config.js';
import { ANONYMOUS, parsePrincipal, principalToString } from './kafka-principal.js';
import { AclCache, patternKey, type AclDecisionSettings } from './acl-cache.js';
import { AclZkStore } from './acl-zk-store.js';
import type { AclApiError, AclDeleteResult, AuthAction, Authorizer, AuthContext } from './authorizer.js';

export interface AclAuthorizerOptions {
  /** `super.users`: `User:admin;User:broker`. */
  superUsers: string;
  allowEveryoneIfNoAclFound: boolean;
}

/** Parses `super.users` (semicolon-separated principals; blanks ignored). */
export function parseSuperUsers(s: string): Set<string> {
  const out = new Set<string>();
  for (const part of s.split(';')) {
    const t = part.trim();
    if (t) out.add(principalToString(parsePrincipal(t)));
  }
  return out;
}

/** The client's IP from ConnectionInfo.remote (`ip:port`, `[v6]:port`), IPv4-mapped IPv6 as plain IPv4. */
export function hostOf(remote: string): string {
  const i = remote.lastIndexOf(':');
  const ip = (i > 0 ? remote.slice(0, i) : remote).replace(/^\[|\]$/g, '');
  return ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice('::ffff:'.length) : ip;
}

export class AclAuthorizer implements Authorizer {
  private readonly cache = new AclCache();
  private readonly settings: AclDecisionSettings;
  private readonly store: AclZkStore;
  private readonly log: Logger;
  private readonly authLog: Logger;
  private unwatch: Unwatch | undefined;

  constructor(zk: ZkClientApi, opts: AclAuthorizerOptions, logger: Logger) {
    this.settings = { superUsers: parseSuperUsers(opts.superUsers), allowEveryoneIfNoAclFound: opts.allowEveryoneIfNoAclFound };
    this.log = logger.child({ component: 'acl-authorizer' });
    this.authLog = logger.child({ logger: 'kafka.authorizer.logger' });
    this.store = new AclZkStore(zk, this.log);
  }

  /** Creates the ACL paths, loads every ACL and starts watching the change notifications. */
  async startup(): Promise<void> {
    await this.store.createPaths();
    const seqs = await this.store.lastChangeSeqs();
    this.cache.clear();
    for (const { pattern, acls } of await this.store.loadAll()) this.cache.set(pattern, acls);
    this.unwatch = this.store.watchChanges(seqs, (p) => this.reload(p));
    this.log.info(
      {
        resources: this.cache.patterns().length,
        superUsers: [...this.settings.superUsers],
        allowEveryoneIfNoAclFound: this.settings.allowEveryoneIfNoAclFound,
      },
      'ACL authorizer started',
    );
  }

  shutdown(): void {
    this.unwatch?.();
    this.unwatch = undefined;
  }

  private async reload(pattern: ResourcePattern): Promise<void> {
    const { acls } = await this.store.read(pattern);
    this.cache.set(pattern, acls);
    this.log.debug({ resource: patternKey(pattern), acls: acls.length }, 'ACLs reloaded after a change notification');
  }

  authorize(ctx: AuthContext, actions: readonly AuthAction[]): boolean[] {
    const principal = principalToString(ctx.conn.principal ?? ANONYMOUS);
    const host = hostOf(ctx.conn.remote);
    return actions.map((a) => {
      const d = this.cache.decide(this.settings, principal, host, a.operation, a.resourceType, a.name);
      this.logDecision(ctx, principal, host, a, d.allowed);
      return d.allowed;
    });
  }

  private logDecision(ctx: AuthContext, principal: string, host: string, a: AuthAction, allowed: boolean): void {
    const level = allowed ? (a.logIfAllowed === false ? 'trace' : 'debug') : a.logIfDenied === false ? 'trace' : 'info';
    if (!this.authLog.isLevelEnabled(level)) return;
    const request = ctx.apiKey !== undefined ? (getApi(ctx.apiKey)?.name ?? String(ctx.apiKey)) : 'unknown';
    const resource = `${aclResourceTypePascal(a.resourceType)}:LITERAL:${a.name}`;
    this.authLog[level](
      `Principal = ${principal} is ${allowed ? 'Allowed' : 'Denied'} Operation = ${aclOperationPascal(a.operation)} from host = ${host} ` +
        `on resource = ${resource} for request = ${request} with resourceRefCount = ${a.resourceRefCount ?? 1}`,
    );
  }

  acls(filter: AclBindingFilter): AclBinding[] {
    return this.cache.bindings(filter);
  }

  async createAcls(bindings: readonly AclBinding[]): Promise<Array<AclApiError | null>> {
    const results: Array<AclApiError | null> = bindings.map((b) => validateBinding(b));
    const byPattern = new Map<string, { pattern: ResourcePattern; indexes: number[] }>();
    bindings.forEach((b, i) => {
      if (results[i]) return;
      const k = patternKey(b.pattern);
      const g = byPattern.get(k) ?? { pattern: b.pattern, indexes: [] };
      g.indexes.push(i);
      byPattern.set(k, g);
    });
    for (const { pattern, indexes } of byPattern.values()) {
      try {
        const after = await this.store.update(pattern, (current) => [...current, ...indexes.map((i) => bindings[i]!.entry)]);
        this.cache.set(pattern, after);
      } catch (err) {
        this.log.error({ err, resource: patternKey(pattern) }, 'creating ACLs failed');
        for (const i of indexes) results[i] = { code: ErrorCode.UNKNOWN_SERVER_ERROR, message: `Failed to create ACL: ${(err as Error).message}` };
      }
    }
    return results;
  }

  async deleteAcls(filters: readonly AclBindingFilter[]): Promise<AclDeleteResult[]> {
    const results: AclDeleteResult[] = filters.map((f) => {
      const bad = unknownFilterField(f);
      return bad ? { error: { code: ErrorCode.INVALID_REQUEST, message: bad }, deleted: [] } : { deleted: [] };
    });
    // every cached resource, plus the exact ones the filters name (another broker's ACLs not yet seen here)
    const patterns = new Map(this.cache.patterns().map((p) => [patternKey(p), p]));
    for (const f of filters) for (const p of exactPatterns(f)) patterns.set(patternKey(p), p);
    for (const pattern of patterns.values()) {
      const live = filters.map((f, i) => (results[i]!.error ? null : f)).map((f) => (f && patternFilterMatches(f.patternFilter, pattern) ? f : null));
      if (live.every((f) => f === null)) continue;
      const removed: Array<{ entry: AclBinding['entry']; filterIndex: number }> = [];
      try {
        const after = await this.store.update(pattern, (current) => {
          removed.length = 0;
          return current.filter((entry) => {
            const i = live.findIndex((f) => f !== null && entryFilterMatches(f.entryFilter, entry));
            if (i < 0) return true;
            removed.push({ entry, filterIndex: i });
            return false;
          });
        });
        this.cache.set(pattern, after);
        for (const r of removed) results[r.filterIndex]!.deleted.push({ pattern, entry: r.entry });
      } catch (err) {
        this.log.error({ err, resource: patternKey(pattern) }, 'deleting ACLs failed');
        live.forEach((f, i) => {
          if (f) results[i]!.error = { code: ErrorCode.UNKNOWN_SERVER_ERROR, message: `Failed to delete ACLs: ${(err as Error).message}` };
        });
      }
    }
    return results;
  }
}

/** Kafka's checks on a binding to create (KafkaApis.handleCreateAcls and AuthorizerUtils.validateAclBinding). */
function validateBinding(b: AclBinding): AclApiError | null {
  const reason = invalidBindingReason(b);
  if (reason) return { code: ErrorCode.INVALID_REQUEST, message: reason };
  if (b.pattern.name === '') return { code: ErrorCode.INVALID_REQUEST, message: 'Invalid empty resource name specified' };
  if (b.pattern.resourceType === AclResourceType.CLUSTER && b.pattern.name !== CLUSTER_RESOURCE_NAME) {
    return { code: ErrorCode.INVALID_REQUEST, message: `The only valid name for the CLUSTER resource is ${CLUSTER_RESOURCE_NAME}` };
  }
  try {
    parsePrincipal(b.entry.principal);
  } catch (err) {
    return { code: ErrorCode.INVALID_REQUEST, message: (err as Error).message };
  }
  if (b.entry.host === '') return { code: ErrorCode.INVALID_REQUEST, message: 'Invalid empty host specified' };
  return null;
}

/** The concrete patterns a filter names exactly (Kafka's ResourcePatternFilter.matchingResource), if any. */
function exactPatterns(f: AclBindingFilter): ResourcePattern[] {
  const { resourceType, name, patternType } = f.patternFilter;
  if (name === null || resourceType === AclResourceType.ANY || resourceType === AclResourceType.UNKNOWN) return [];
  if (patternType === AclPatternType.LITERAL || patternType === AclPatternType.PREFIXED) return [{ resourceType, name, patternType }];
  return [];
}

/** The authorizer `authorizer.class.name` asks for (started), or undefined when it is empty. */
export async function startAuthorizer(config: Pick<BrokerConfig, 'get'>, zk: ZkClientApi, logger: Logger): Promise<AclAuthorizer | undefined> {
  if (config.get('authorizer.class.name') === '') return undefined;
  const a = new AclAuthorizer(zk, { superUsers: config.get('super.users'), allowEveryoneIfNoAclFound: config.get('allow.everyone.if.no.acl.found') }, logger);
  await a.startup();
  return a;
}
