/**
 * The `__transaction_state` topic: its name and the partition a transactional id maps to, which
 * decides its coordinator (Kafka's TransactionStateManager.partitionFor:
 * `Utils.abs(transactionalId.hashCode) % transaction.state.log.num.partitions`).
 */
import { javaStringHashCode, kafkaAbs } from '@samsa/server-common';

export const TRANSACTION_STATE_TOPIC_NAME = '__transaction_state';

/** transaction.state.log.num.partitions' default. */
export const DEFAULT_TRANSACTION_STATE_LOG_NUM_PARTITIONS = 50;

/** The `__transaction_state` partition holding a transactional id's metadata (and so its coordinator). */
export function partitionForTransactionalId(transactionalId: string, partitionCount: number = DEFAULT_TRANSACTION_STATE_LOG_NUM_PARTITIONS): number {
  return kafkaAbs(javaStringHashCode(transactionalId)) % partitionCount;
}
