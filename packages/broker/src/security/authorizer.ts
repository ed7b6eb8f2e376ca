/**
 * What request handlers see of authorization (Kafka's org.apache.kafka.server.authorizer.Authorizer),
 * and the one-call helpers they use. With no authorizer configured every helper allows at the cost
 * of a null check.
 */
import {
  AclOperation,
  AclResourceType,
  CLUSTER_RESOURCE_NAME,
  KafkaError,
  SUPPORTED_ACL_OPERATIONS,
  type AclBinding,
  type AclBindingFilter,
  type AclOperation as AclOperationCode,
} from '@samsa/protocol';
import type { KafkaPrincipal } from './kafka-principal.js';

/** What the authorizer reads of a request (AuthContext fits): who, from where, which API. */
export interface AuthContext {
  conn: { remote: string; principal?: KafkaPrincipal | undefined };
  /** The request's API key (the authorizer log names the request). */
  apiKey?: number | undefined;
}

/** One thing a request wants to do (Kafka's Action). */
export interface AuthAction {
  operation: AclOperationCode;
  resourceType: AclResourceType;
  /** The resource's name (always a LITERAL pattern: the resource itself). */
  name: string;
  /** How many times the request refers to the resource (the authorizer log prints it). */
  resourceRefCount?: number;
  /** Log an allow at debug (default true); false: at trace. */
  logIfAllowed?: boolean;
  /** Log a denial at info (default true); false: at trace (filtered lists such as Metadata's all topics). */
  logIfDenied?: boolean;
}

/** A failure for one binding or filter, as the ACL APIs report it. */
export interface AclApiError {
  code: number;
  message: string;
}

export interface AclDeleteResult {
  error?: AclApiError;
  deleted: AclBinding[];
}

export interface Authorizer {
  /** One decision per action, in order. */
  authorize(ctx: AuthContext, actions: readonly AuthAction[]): boolean[];
  createAcls(bindings: readonly AclBinding[]): Promise<Array<AclApiError | null>>;
  deleteAcls(filters: readonly AclBindingFilter[]): Promise<AclDeleteResult[]>;
  acls(filter: AclBindingFilter): AclBinding[];
}

interface HasAuthorizer {
  authorizer?: Authorizer | undefined;
}

/** Whether the request may do `operation` on the resource. */
export function authorize(
  services: HasAuthorizer,
  ctx: AuthContext,
  operation: AclOperationCode,
  resourceType: AclResourceType,
  name: string,
  opts: Pick<AuthAction, 'logIfAllowed' | 'logIfDenied' | 'resourceRefCount'> = {},
): boolean {
  const a = services.authorizer;
  if (!a) return true;
  return a.authorize(ctx, [{ operation, resourceType, name, ...opts }])[0] === true;
}

export function authorizeCluster(
  services: HasAuthorizer,
  ctx: AuthContext,
  operation: AclOperationCode,
  opts: Pick<AuthAction, 'logIfAllowed' | 'logIfDenied'> = {},
): boolean {
  return authorize(services, ctx, operation, AclResourceType.CLUSTER, CLUSTER_RESOURCE_NAME, opts);
}

/** The names a request may act on (a Set, or every name when no authorizer is configured). */
export interface NameSet {
  has(name: string): boolean;
}

const EVERY_NAME: NameSet = Object.freeze({ has: () => true });

/**
 * The names among `names` the request may do `operation` on (Kafka's filterByAuthorized): each
 * distinct name is asked once, with its reference count. Without an authorizer: every name, at no cost.
 */
export function authorizedNames(
  services: HasAuthorizer,
  ctx: AuthContext,
  operation: AclOperationCode,
  resourceType: AclResourceType,
  names: Iterable<string>,
  opts: Pick<AuthAction, 'logIfAllowed' | 'logIfDenied'> = {},
): NameSet {
  const a = services.authorizer;
  if (!a) return EVERY_NAME;
  const counts = new Map<string, number>();
  for (const n of names) counts.set(n, (counts.get(n) ?? 0) + 1);
  const actions = [...counts].map(([name, resourceRefCount]) => ({ operation, resourceType, name, resourceRefCount, ...opts }));
  const decisions = a.authorize(ctx, actions);
  return new Set(actions.filter((_, i) => decisions[i]).map((x) => x.name));
}

/** Throws CLUSTER_AUTHORIZATION_FAILED unless the request may do `operation` on the cluster. */
export function requireCluster(services: HasAuthorizer, ctx: AuthContext, operation: AclOperationCode): void {
  if (!authorizeCluster(services, ctx, operation)) throw new KafkaError('CLUSTER_AUTHORIZATION_FAILED');
}

export { AclOperation, AclResourceType };

/** Throws GROUP_AUTHORIZATION_FAILED unless the request may do `operation` on the group. */
export function requireGroup(services: HasAuthorizer, ctx: AuthContext, operation: AclOperationCode, groupId: string): void {
  if (!authorize(services, ctx, operation, AclResourceType.GROUP, groupId)) throw new KafkaError('GROUP_AUTHORIZATION_FAILED');
}

/** Throws TRANSACTIONAL_ID_AUTHORIZATION_FAILED unless the request may WRITE the transactional id. */
export function requireTransactionalId(services: HasAuthorizer, ctx: AuthContext, transactionalId: string): void {
  if (!authorize(services, ctx, AclOperation.WRITE, AclResourceType.TRANSACTIONAL_ID, transactionalId)) {
    throw new KafkaError('TRANSACTIONAL_ID_AUTHORIZATION_FAILED');
  }
}

/** KIP-430: what a response reports when the client did not ask for authorized operations (Int.MinValue). */
export const AUTHORIZED_OPERATIONS_OMITTED = -2147483648;

/** The operations Kafka reports for each resource type (AclEntry.supportedOperations). */
export const SUPPORTED_OPERATIONS = {
  topic: SUPPORTED_ACL_OPERATIONS[AclResourceType.TOPIC] ?? [],
  group: SUPPORTED_ACL_OPERATIONS[AclResourceType.GROUP] ?? [],
  cluster: SUPPORTED_ACL_OPERATIONS[AclResourceType.CLUSTER] ?? [],
} as const;

/**
 * KIP-430's authorized-operations bit field: bit `op` set for each of `ops` the principal may do on
 * the resource (decisions not logged, as Kafka's authorizedOperations).
 */
export function authorizedOperations(
  services: HasAuthorizer,
  ctx: AuthContext,
  resourceType: AclResourceType,
  name: string,
  ops: readonly AclOperationCode[],
): number {
  let bits = 0;
  for (const op of ops) if (authorize(services, ctx, op, resourceType, name, { logIfAllowed: false, logIfDenied: false })) bits |= 1 << op;
  return bits;
}

const CONFIG_TOPIC = 2;
const CONFIG_BROKER = 4;
const CONFIG_BROKER_LOGGER = 8;

/**
 * DescribeConfigs / AlterConfigs / IncrementalAlterConfigs: `operation` on the topic (else
 * TOPIC_AUTHORIZATION_FAILED) or, for a broker or broker-logger resource, on the cluster (else
 * CLUSTER_AUTHORIZATION_FAILED). Other resource types are left to the handler.
 */
export function requireConfigResource(services: HasAuthorizer, ctx: AuthContext, operation: AclOperationCode, configResourceType: number, name: string): void {
  if (!services.authorizer) return;
  if (configResourceType === CONFIG_TOPIC) {
    if (!authorize(services, ctx, operation, AclResourceType.TOPIC, name)) throw new KafkaError('TOPIC_AUTHORIZATION_FAILED');
  } else if (configResourceType === CONFIG_BROKER || configResourceType === CONFIG_BROKER_LOGGER) {
    requireCluster(services, ctx, operation);
  }
}
