/**
 * Produce's request-level check (Kafka 2.8's KafkaApis.handleProduceRequest): transactional
 * records need WRITE on the request's transactional id, idempotent ones (a producer id, no
 * transactional id) IDEMPOTENT_WRITE on the cluster.
 */
import { AclOperation, AclResourceType, ErrorCode, TRANSACTIONAL_FLAG_MASK, type ProduceRequestTopic } from '@samsa/protocol';
import { authorize, authorizeCluster, type Authorizer, type AuthContext } from './authorizer.js';

const BATCH_LENGTH_AT = 8;
const MAGIC_AT = 16;
const ATTRIBUTES_AT = 21;
const PRODUCER_ID_AT = 43;
const HEADER_BYTES = 61;

/** Whether any v2 batch of the request is transactional / carries a producer id. */
export function produceKinds(topicData: readonly ProduceRequestTopic[]): { transactional: boolean; idempotent: boolean } {
  let transactional = false;
  let idempotent = false;
  for (const t of topicData) {
    for (const p of t.partitionData) {
      const b = p.records;
      if (!b) continue;
      for (let at = 0; at + HEADER_BYTES <= b.length;) {
        if (b.readInt8(at + MAGIC_AT) === 2) {
          if (b.readInt16BE(at + ATTRIBUTES_AT) & TRANSACTIONAL_FLAG_MASK) transactional = true;
          if (b.readBigInt64BE(at + PRODUCER_ID_AT) >= 0n) idempotent = true;
        }
        const len = b.readInt32BE(at + BATCH_LENGTH_AT);
        if (len <= 0) break;
        at += 12 + len;
      }
    }
  }
  return { transactional, idempotent };
}

/** The error the whole Produce gets (0: none; the per-topic WRITE check follows). */
export function produceRequestAuthError(
  services: { authorizer?: Authorizer | undefined },
  ctx: AuthContext,
  transactionalId: string | null,
  topicData: readonly ProduceRequestTopic[],
): number {
  if (!services.authorizer) return 0;
  const kinds = produceKinds(topicData);
  if (kinds.transactional) {
    const ok = transactionalId !== null && authorize(services, ctx, AclOperation.WRITE, AclResourceType.TRANSACTIONAL_ID, transactionalId);
    return ok ? 0 : ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
  }
  if (kinds.idempotent && !authorizeCluster(services, ctx, AclOperation.IDEMPOTENT_WRITE)) return ErrorCode.CLUSTER_AUTHORIZATION_FAILED;
  return 0;
}
