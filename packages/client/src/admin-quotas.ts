import { API_KEYS, ErrorCode, type KafkaError } from '@samsa/protocol';
import type { Cluster } from './cluster.js';
import { BatchError, brokerError } from './errors.js';

/**
 * Kafka's ClientQuotaEntity: entity type (`user`, `client-id`, `ip`) → name, null for the default
 * entity (`<default>`). A (user, client-id) pair is one entity with both keys.
 */
export type ClientQuotaEntity = Readonly<Partial<Record<'user' | 'client-id' | 'ip', string | null>>> & Readonly<Record<string, string | null>>;

/** One AlterClientQuotas alteration: set keys to values, or remove them (value null). */
export interface ClientQuotaAlteration {
  entity: ClientQuotaEntity;
  ops: ReadonlyArray<{ key: string; value: number | null }>;
}

/** A DescribeClientQuotas filter component (Kafka's ClientQuotaFilterComponent). */
export type ClientQuotaFilterComponent =
  /** exactly this entity name */
  | { entityType: string; match: string }
  /** the default entity of the type */
  | { entityType: string; match: 'default' }
  /** any named or default entity of the type */
  | { entityType: string; match: 'specified' };

export interface DescribedClientQuota {
  entity: Record<string, string | null>;
  values: Record<string, number>;
}

const MATCH = { EXACT: 0, DEFAULT: 1, SPECIFIED: 2 } as const;

/** Entity map → request entity list (user, client-id, ip first, in that order). */
function entityParts(e: ClientQuotaEntity): Array<{ entityType: string; entityName: string | null }> {
  const order = ['user', 'client-id', 'ip'];
  return Object.keys(e)
    .sort((a, b) => (order.indexOf(a) + 1 || 99) - (order.indexOf(b) + 1 || 99) || a.localeCompare(b))
    .map((k) => ({ entityType: k, entityName: e[k] ?? null }));
}

/** How an entity is named in errors and results: `user=alice,client-id=<default>`. */
export function formatQuotaEntity(e: ClientQuotaEntity): string {
  return entityParts(e)
    .map((p) => `${p.entityType}=${p.entityName ?? '<default>'}`)
    .join(',');
}

/**
 * Kafka's Admin.alterClientQuotas: one AlterClientQuotas to any broker (ZooKeeper mode: every
 * broker writes /config itself). Rejects with BatchError keyed by formatQuotaEntity when any
 * entity's alteration failed.
 */
export async function alterClientQuotas(
  cluster: Cluster,
  alterations: readonly ClientQuotaAlteration[],
  opts: { timeoutMs?: number; validateOnly?: boolean } = {},
): Promise<void> {
  if (alterations.length === 0) return;
  const res = await cluster.retry(
    'alterClientQuotas',
    async () => {
      const conn = await cluster.anyConnection();
      return conn.request(API_KEYS.AlterClientQuotas, {
        entries: alterations.map((a) => ({
          entity: entityParts(a.entity),
          ops: a.ops.map((o) => ({ key: o.key, value: o.value ?? 0, remove: o.value === null })),
        })),
        validateOnly: opts.validateOnly ?? false,
      });
    },
    opts,
  );
  const errors = new Map<string, KafkaError>();
  const names: string[] = [];
  for (const e of res.body.entries) {
    const name = e.entity.map((p) => `${p.entityType}=${p.entityName ?? '<default>'}`).join(',');
    if (e.errorCode !== ErrorCode.NONE) errors.set(name, brokerError(e.errorCode, e.errorMessage));
    else names.push(name);
  }
  if (errors.size > 0) throw new BatchError('alterClientQuotas', errors, names);
}

/**
 * Kafka's Admin.describeClientQuotas: the entities matching every component (with `strict`, only
 * entities of exactly the component types) and their quota values.
 */
export async function describeClientQuotas(
  cluster: Cluster,
  components: readonly ClientQuotaFilterComponent[],
  opts: { timeoutMs?: number; strict?: boolean } = {},
): Promise<DescribedClientQuota[]> {
  const res = await cluster.retry(
    'describeClientQuotas',
    async () => {
      const conn = await cluster.anyConnection();
      return conn.request(API_KEYS.DescribeClientQuotas, {
        components: components.map((c) =>
          c.match === 'default'
            ? { entityType: c.entityType, matchType: MATCH.DEFAULT, match: null }
            : c.match === 'specified'
              ? { entityType: c.entityType, matchType: MATCH.SPECIFIED, match: null }
              : { entityType: c.entityType, matchType: MATCH.EXACT, match: c.match },
        ),
        strict: opts.strict ?? false,
      });
    },
    opts,
  );
  if (res.body.errorCode !== ErrorCode.NONE) throw brokerError(res.body.errorCode, res.body.errorMessage);
  return (res.body.entries ?? []).map((e) => ({
    entity: Object.fromEntries(e.entity.map((p) => [p.entityType, p.entityName])),
    values: Object.fromEntries(e.values.map((v) => [v.key, v.value])),
  }));
}
