import { AclOperation, AclResourceType } from '@samsa/protocol';
import type { ApiHandler } from '../api/api-handler.js';
import type { BrokerServices } from './services.js';
import { authorizedNames } from '../security/authorizer.js';

/**
 * ListTransactions v0 (KIP-664): the transactional ids this broker coordinates, filtered by state
 * names and producer ids; state names Kafka does not know come back in unknownStateFilters.
 */
export const listTransactionsHandler: ApiHandler<66, BrokerServices> = {
  apiKey: 66,
  async handle(req, ctx, s) {
    const r = s.transactionCoordinator.handleListTransactions(req.body.producerIdFilters, req.body.stateFilters);
    // only the transactional ids the principal may DESCRIBE
    const ids = authorizedNames(
      s,
      ctx,
      AclOperation.DESCRIBE,
      AclResourceType.TRANSACTIONAL_ID,
      r.transactionStates.map((t) => t.transactionalId),
      {
        logIfDenied: false,
      },
    );
    return { throttleTimeMs: 0, ...r, transactionStates: r.transactionStates.filter((t) => ids.has(t.transactionalId)) };
  },
  errorResponse(_req, errorCode) {
    return { throttleTimeMs: 0, errorCode, unknownStateFilters: [], transactionStates: [] };
  },
};
