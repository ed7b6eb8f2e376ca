/**
 * Client quota entities in ZooKeeper (Kafka's ZkAdminManager.alterClientQuotas /
 * describeClientQuotas): a user's quotas live in /config/users/<user>, a client id's in
 * /config/clients/<client-id>, a (user, client id) pair's in /config/users/<user>/clients/<client-id>
 * and an IP's in /config/ips/<ip>; the default entity of each is `<default>`, other names are
 * sanitized (Kafka's Sanitizer: URL-encoded, `*` and space percent-encoded too). Every change is
 * announced under /config/changes like any entity config (KafkaZk.changeEntityConfig).
 */
import { isIP } from 'node:net';
import { KafkaError } from '@samsa/protocol';
import { ConfigType, type KafkaZk } from '@samsa/zk-paths';
import { DEFAULT_ENTITY } from '../quota/client-quota-manager.js';

/** Kafka's ClientQuotaEntity types. */
export const QuotaEntityType = { User: 'user', ClientId: 'client-id', Ip: 'ip' } as const;

/** DescribeClientQuotas component match types. */
export const QuotaMatchType = { EXACT: 0, DEFAULT: 1, SPECIFIED: 2 } as const;

type KeyType = 'long' | 'double' | 'int';
/** Kafka's QuotaConfig keys of user and client-id entities (DynamicConfig.User / Client). */
const USER_CLIENT_QUOTA_KEYS: Readonly<Record<string, KeyType>> = {
  producer_byte_rate: 'long',
  consumer_byte_rate: 'long',
  request_percentage: 'double',
  controller_mutation_rate: 'double',
};
/** DynamicConfig.Ip. */
const IP_QUOTA_KEYS: Readonly<Record<string, KeyType>> = { connection_creation_rate: 'int' };

/** One entity of a request: entity type → name (null: the default entity). */
export interface QuotaEntityPart {
  entityType: string;
  entityName: string | null;
}

export interface QuotaOp {
  key: string;
  value: number;
  remove: boolean;
}

export interface QuotaFilterComponent {
  entityType: string;
  matchType: number;
  match: string | null;
}

/** Kafka's Sanitizer.sanitize: what a user principal or client id is called in a znode path. */
export function sanitizeEntityName(name: string): string {
  let out = '';
  for (const b of Buffer.from(name, 'utf8')) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9._-]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Kafka's Sanitizer.desanitize (names it cannot decode are taken as they are). */
export function desanitizeEntityName(name: string): string {
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}

const toZkName = (name: string | null) => (name === null ? DEFAULT_ENTITY : sanitizeEntityName(name));
const fromZkName = (name: string) => (name === DEFAULT_ENTITY ? null : desanitizeEntityName(name));

/** Java's Double.toString for the values Kafka stores for DOUBLE quota keys (50 → "50.0", 1e7 → "1.0E7"). */
export function javaDouble(v: number): string {
  if (v === 0) return '0.0';
  const a = Math.abs(v);
  if (a >= 1e-3 && a < 1e7) return Number.isInteger(v) ? `${v}.0` : String(v);
  const [m, e] = v.toExponential().split('e') as [string, string];
  return `${m.includes('.') ? m : `${m}.0`}E${Number(e)}`;
}

/** The entity of an AlterClientQuotas entry as a map (Kafka's ClientQuotaEntity: a later duplicate type wins). */
function parseEntity(parts: readonly QuotaEntityPart[]): { user?: string | null; clientId?: string | null; ip?: string | null } {
  if (parts.length === 0) throw new KafkaError('INVALID_REQUEST', 'Invalid empty client quota entity');
  const e: { user?: string | null; clientId?: string | null; ip?: string | null } = {};
  for (const p of parts) {
    switch (p.entityType) {
      case QuotaEntityType.User:
        e.user = p.entityName;
        break;
      case QuotaEntityType.ClientId:
        e.clientId = p.entityName;
        break;
      case QuotaEntityType.Ip:
        e.ip = p.entityName;
        break;
      default:
        throw new KafkaError('INVALID_REQUEST', `Unhandled client quota entity type: ${p.entityType}`);
    }
    if (p.entityName === '') throw new KafkaError('INVALID_REQUEST', `Empty ${p.entityType} not supported`);
  }
  return e;
}

/** Where the entity's quotas live: znode type, entity path under it, and its valid keys. */
function quotaEntityPath(parts: readonly QuotaEntityPart[]): { type: ConfigType; path: string; keys: Readonly<Record<string, KeyType>> } {
  const e = parseEntity(parts);
  if (e.ip !== undefined) {
    if (e.user !== undefined || e.clientId !== undefined) {
      throw new KafkaError('INVALID_REQUEST', 'Invalid quota entity combination, IP entity should not be used with user/client ID entity.');
    }
    if (e.ip !== null && isIP(e.ip) === 0) throw new KafkaError('INVALID_REQUEST', `${e.ip} is not a valid IP or resolvable host.`);
    return { type: ConfigType.Ip, path: toZkName(e.ip), keys: IP_QUOTA_KEYS };
  }
  if (e.user !== undefined && e.clientId !== undefined)
    return { type: ConfigType.User, path: `${toZkName(e.user)}/clients/${toZkName(e.clientId)}`, keys: USER_CLIENT_QUOTA_KEYS };
  if (e.user !== undefined) return { type: ConfigType.User, path: toZkName(e.user), keys: USER_CLIENT_QUOTA_KEYS };
  if (e.clientId !== undefined) return { type: ConfigType.Client, path: toZkName(e.clientId), keys: USER_CLIENT_QUOTA_KEYS };
  throw new KafkaError('INVALID_REQUEST', 'Invalid client quota entity');
}

/**
 * One AlterClientQuotas entry: the ops are applied to the entity's current config (remove drops a
 * key; a set needs a known key, and whole numbers for LONG/INT keys), then the config is written
 * and announced unless `validateOnly`. Throws a KafkaError (INVALID_REQUEST) when it is refused.
 */
export async function alterClientQuotaEntity(kzk: KafkaZk, entity: readonly QuotaEntityPart[], ops: readonly QuotaOp[], validateOnly: boolean): Promise<void> {
  const { type, path, keys } = quotaEntityPath(entity);
  const props = { ...(await kzk.getEntityConfig(type, path)) };
  for (const op of ops) {
    if (op.remove) {
      delete props[op.key];
      continue;
    }
    const t = keys[op.key];
    if (!t) throw new KafkaError('INVALID_REQUEST', `Invalid configuration key ${op.key}`);
    if (!Number.isFinite(op.value)) throw new KafkaError('INVALID_REQUEST', `Configuration ${op.key} must be a ${t.toUpperCase()} value`);
    if (t === 'double') {
      props[op.key] = javaDouble(op.value);
      continue;
    }
    const epsilon = 1e-6;
    const whole = Math.trunc(op.value + epsilon);
    if (Math.abs(whole - op.value) > epsilon || (t === 'int' && Math.abs(whole) > 2 ** 31 - 1)) {
      throw new KafkaError('INVALID_REQUEST', `Configuration ${op.key} must be a ${t.toUpperCase()} value`);
    }
    props[op.key] = String(whole);
  }
  if (!validateOnly) await kzk.changeEntityConfig(type, path, props);
}

/** A described entity: its parts (user first, then client-id) and its quota values. */
export interface DescribedQuotaEntity {
  entity: QuotaEntityPart[];
  values: Array<{ key: string; value: number }>;
}

interface Component {
  /** undefined: no component for this type; `any`: SPECIFIED; else the name (null: the default entity). */
  match: string | null | 'any' | undefined;
}

const ANY = 'any' as const;

/**
 * DescribeClientQuotas (Kafka's ZkAdminManager.describeClientQuotas): the entities whose znodes
 * hold quota keys and that match every filter component (EXACT name, DEFAULT entity, SPECIFIED:
 * any named or default entity of that type); with `strict`, entities with entity types the filter
 * does not name are left out.
 */
export async function describeClientQuotas(kzk: KafkaZk, components: readonly QuotaFilterComponent[], strict: boolean): Promise<DescribedQuotaEntity[]> {
  const byType = new Map<string, Component>();
  for (const c of components) {
    if (c.entityType === '') throw new KafkaError('INVALID_REQUEST', 'Unexpected empty filter component entity type');
    if (!Object.values(QuotaEntityType).includes(c.entityType as never))
      throw new KafkaError('UNSUPPORTED_VERSION', `Custom entity type '${c.entityType}' not supported`);
    if (byType.has(c.entityType)) {
      const what = { user: 'user', 'client-id': 'client', ip: 'ip' }[c.entityType as 'user' | 'client-id' | 'ip'];
      throw new KafkaError('INVALID_REQUEST', `Duplicate ${what} filter component entity type`);
    }
    let match: Component['match'];
    if (c.matchType === QuotaMatchType.EXACT) {
      if (c.match === null) throw new KafkaError('INVALID_REQUEST', `Exact match of ${c.entityType} needs a name`);
      match = c.match;
    } else if (c.matchType === QuotaMatchType.DEFAULT) match = null;
    else if (c.matchType === QuotaMatchType.SPECIFIED) match = ANY;
    else throw new KafkaError('INVALID_REQUEST', `Unexpected match type: ${c.matchType}`);
    byType.set(c.entityType, { match });
  }
  const user = byType.get(QuotaEntityType.User);
  const client = byType.get(QuotaEntityType.ClientId);
  const ip = byType.get(QuotaEntityType.Ip);
  if ((user || client) && ip) {
    throw new KafkaError(
      'INVALID_REQUEST',
      'Invalid entity filter component combination, IP filter component should not be used with user or clientId filter component.',
    );
  }
  const out: DescribedQuotaEntity[] = [];
  if (!ip) out.push(...(await describeUserClient(kzk, user, client, strict)));
  if (!user && !client) out.push(...(await describeIps(kzk, ip, strict)));
  return out;
}

/** Whether a (user | client-id) name of an entity (undefined: the entity has none) passes its component. */
function matches(c: Component | undefined, name: string | null | undefined, strict: boolean): boolean {
  if (!c) return name === undefined || !strict;
  if (c.match === ANY) return name !== undefined;
  return name !== undefined && name === c.match;
}

function quotaValues(props: Readonly<Record<string, string>>, keys: Readonly<Record<string, KeyType>>): Array<{ key: string; value: number }> {
  return Object.entries(props)
    .filter(([k]) => k in keys)
    .map(([key, v]) => ({ key, value: Number(v) }))
    .sort((a, b) => a.key.localeCompare(b.key));
}

async function describeUserClient(kzk: KafkaZk, user: Component | undefined, client: Component | undefined, strict: boolean): Promise<DescribedQuotaEntity[]> {
  const exact = (c: Component | undefined): c is { match: string | null } => c !== undefined && c.match !== ANY;
  const excludeUser = strict && !user;
  const excludeClient = strict && !client;
  const found: Array<{ user?: string | null; clientId?: string | null; props: Record<string, string> }> = [];
  // the same choice of znodes to read as Kafka's handleDescribeClientQuotas
  if (exact(user) && excludeClient) found.push({ user: user.match, props: await kzk.getEntityConfig(ConfigType.User, toZkName(user.match)) });
  else if (!excludeUser && !exact(client)) {
    for (const [n, props] of await kzk.getAllEntityConfigs(ConfigType.User)) found.push({ user: fromZkName(n), props });
  }
  if (excludeUser && exact(client)) found.push({ clientId: client.match, props: await kzk.getEntityConfig(ConfigType.Client, toZkName(client.match)) });
  else if (!exact(user) && !excludeClient) {
    for (const [n, props] of await kzk.getAllEntityConfigs(ConfigType.Client)) found.push({ clientId: fromZkName(n), props });
  }
  if (exact(user) && exact(client)) {
    found.push({
      user: user.match,
      clientId: client.match,
      props: await kzk.getEntityConfig(ConfigType.User, `${toZkName(user.match)}/clients/${toZkName(client.match)}`),
    });
  } else if (!excludeUser && !excludeClient) {
    for (const [path, props] of await kzk.getAllChildEntityConfigs(ConfigType.User, ConfigType.Client)) {
      const [u, , c] = path.split('/') as [string, string, string];
      found.push({ user: fromZkName(u), clientId: fromZkName(c), props });
    }
  }
  const out: DescribedQuotaEntity[] = [];
  for (const f of found) {
    const values = quotaValues(f.props, USER_CLIENT_QUOTA_KEYS);
    if (values.length === 0 || !matches(user, f.user, strict) || !matches(client, f.clientId, strict)) continue;
    const entity: QuotaEntityPart[] = [];
    if (f.user !== undefined) entity.push({ entityType: QuotaEntityType.User, entityName: f.user });
    if (f.clientId !== undefined) entity.push({ entityType: QuotaEntityType.ClientId, entityName: f.clientId });
    out.push({ entity, values });
  }
  return out;
}

async function describeIps(kzk: KafkaZk, ip: Component | undefined, strict: boolean): Promise<DescribedQuotaEntity[]> {
  const found: Array<[string | null, Record<string, string>]> = [];
  const name = ip?.match;
  if (name !== undefined && name !== ANY) found.push([name, await kzk.getEntityConfig(ConfigType.Ip, toZkName(name))]);
  else if (ip || !strict) for (const [n, props] of await kzk.getAllEntityConfigs(ConfigType.Ip)) found.push([fromZkName(n), props]);
  return found
    .map(([name, props]) => ({ entity: [{ entityType: QuotaEntityType.Ip, entityName: name }], values: quotaValues(props, IP_QUOTA_KEYS) }))
    .filter((e) => e.values.length > 0);
}
