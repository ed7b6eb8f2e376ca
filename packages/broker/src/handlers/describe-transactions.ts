import { AclOperation, AclResourceType, ErrorCode, type DescribeTransactionsResponseState } from '@samsa/protocol';
import type { ApiHandler } from '../api/api-handler.js';
import type { BrokerServices } from './services.js';
import { authorize, authorizedNames } from '../security/authorizer.js';

/**
 * DescribeTransactions v0 (KIP-664): the state of each transactional id this broker coordinates
 * (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS or TRANSACTIONAL_ID_NOT_FOUND per id otherwise).
 */
export const describeTransactionsHandler: ApiHandler<65, BrokerServices> = {
  apiKey: 65,
  async handle(req, ctx, s) {
    const transactionStates: DescribeTransactionsResponseState[] = req.body.transactionalIds.map((id) => {
      if (!authorize(s, ctx, AclOperation.DESCRIBE, AclResourceType.TRANSACTIONAL_ID, id))
        return stateError(id, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
      const d = s.transactionCoordinator.handleDescribeTransactions(id);
      // the transaction's topics the principal may not DESCRIBE are left out
      const topics = authorizedNames(
        s,
        ctx,
        AclOperation.DESCRIBE,
        AclResourceType.TOPIC,
        d.topics.map((t) => t.topic),
        { logIfDenied: false },
      );
      return { ...d, topics: d.topics.filter((t) => topics.has(t.topic)), transactionStartTimeMs: BigInt(d.transactionStartTimeMs) };
    });
    return { throttleTimeMs: 0, transactionStates };
  },
  errorResponse(req, errorCode) {
    return { throttleTimeMs: 0, transactionStates: req.body.transactionalIds.map((id) => stateError(id, errorCode)) };
  },
};

function stateError(transactionalId: string, errorCode: number): DescribeTransactionsResponseState {
  return {
    errorCode,
    transactionalId,
    transactionState: '',
    transactionTimeoutMs: 0,
    transactionStartTimeMs: -1n,
    producerId: -1n,
    producerEpoch: -1,
    topics: [],
  };
}
