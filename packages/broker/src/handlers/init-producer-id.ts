import { ErrorCode, KafkaError, type InitProducerIdResponse } from '@samsa/protocol';
import { ProducerIdManager } from '../producer-state/producer-id-manager.js';
import type { ApiHandler } from '../api/api-handler.js';
import type { BrokerServices } from './services.js';

/** One producer id manager per broker (services object), created on first use. */
const managers = new WeakMap<BrokerServices, ProducerIdManager>();

function managerFor(s: BrokerServices): ProducerIdManager {
  let m = managers.get(s);
  if (!m) {
    m = new ProducerIdManager({ brokerId: s.brokerId, zk: s.kzk.zk, logger: s.log.child({ component: 'producer-id-manager' }) });
    managers.set(s, m);
  }
  return m;
}

const answer = (errorCode: number, producerId = -1n, producerEpoch = -1): InitProducerIdResponse => ({
  throttleTimeMs: 0,
  errorCode,
  producerId,
  producerEpoch,
});

/**
 * InitProducerId (KIP-98; v3+ KIP-360) for idempotent producers, as Kafka 3.x's KafkaApis +
 * TransactionCoordinator.handleInitProducerId answer it without an authorizer:
 * - producerId and producerEpoch must be both -1 or both set (INVALID_REQUEST);
 * - no transactional id: a fresh producer id from this broker's block (claimed from
 *   `/latest_producer_id_block`), epoch 0. An id/epoch sent by a v3+ client (KIP-360 epoch bump of
 *   an idempotent producer) is ignored, as Kafka does: the producer gets a new id;
 * - empty transactional id: INVALID_REQUEST;
 * - any other transactional id: COORDINATOR_NOT_AVAILABLE. Samsa has no transaction coordinator;
 *   Kafka answers NOT_COORDINATOR from a broker that does not own the id's __transaction_state
 *   partition and TRANSACTIONAL_ID_AUTHORIZATION_FAILED only when an authorizer denies the id. Both
 *   COORDINATOR_NOT_AVAILABLE and NOT_COORDINATOR make clients look the coordinator up again,
 *   and FindCoordinator already answers COORDINATOR_NOT_AVAILABLE, so that is the one used.
 * When no block can be claimed (ZooKeeper trouble) the answer is the retriable
 * COORDINATOR_LOAD_IN_PROGRESS (what Kafka's KRaft-mode producer id manager answers then; its ZK
 * mode answers UNKNOWN_SERVER_ERROR, which clients treat as fatal).
 */
export const initProducerIdHandler: ApiHandler<22, BrokerServices> = {
  apiKey: 22,
  async handle(req, _ctx, s) {
    const { transactionalId, producerId, producerEpoch } = req.body;
    if ((producerId === -1n) !== (producerEpoch === -1)) return answer(ErrorCode.INVALID_REQUEST);
    if (transactionalId !== null) {
      return answer(transactionalId === '' ? ErrorCode.INVALID_REQUEST : ErrorCode.COORDINATOR_NOT_AVAILABLE);
    }
    let id: bigint;
    try {
      id = await managerFor(s).generateProducerId();
    } catch (err) {
      if (err instanceof KafkaError) throw err;
      s.log.warn({ err }, 'could not allocate a producer id');
      throw new KafkaError('COORDINATOR_LOAD_IN_PROGRESS', 'Could not allocate a producer id block', { cause: err });
    }
    return answer(ErrorCode.NONE, id, 0);
  },
  errorResponse(_req, code) {
    return answer(code);
  },
};
