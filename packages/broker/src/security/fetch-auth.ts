/**
 * Fetch's checks (Kafka's KafkaApis.handleFetchRequest): a follower needs CLUSTER_ACTION on the
 * cluster (else every partition is TOPIC_AUTHORIZATION_FAILED), a consumer READ on each topic.
 */
import { AclOperation, AclResourceType } from '@samsa/protocol';
import { authorizeCluster, authorizedNames, type Authorizer, type AuthContext } from './authorizer.js';

/** The topics this fetch may not read, or null when it may read them all (no authorizer: always null). */
export function fetchDeniedTopics(
  services: { authorizer?: Authorizer | undefined },
  ctx: AuthContext,
  follower: boolean,
  partitions: ReadonlyArray<{ topic?: string | undefined }>,
): Set<string> | null {
  if (!services.authorizer) return null;
  const names: string[] = [];
  for (const p of partitions) if (p.topic !== undefined) names.push(p.topic);
  if (follower) return authorizeCluster(services, ctx, AclOperation.CLUSTER_ACTION) ? null : new Set(names);
  const allowed = authorizedNames(services, ctx, AclOperation.READ, AclResourceType.TOPIC, names);
  const denied = new Set(names.filter((n) => !allowed.has(n)));
  return denied.size > 0 ? denied : null;
}
