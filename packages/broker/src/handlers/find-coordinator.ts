import { ErrorCode } from '@samsa/protocol';
import type { ApiHandler } from '../server/request-handler.js';
import type { BrokerServices } from '../server/services.js';

/**
 * FindCoordinator. The group coordinator (and __consumer_offsets) is not built yet, so every key
 * gets the retriable COORDINATOR_NOT_AVAILABLE: clients retry instead of failing hard.
 */
export const findCoordinatorHandler: ApiHandler<10, BrokerServices> = {
  apiKey: 10,
  async handle(req) {
    return this.errorResponse(req, ErrorCode.COORDINATOR_NOT_AVAILABLE);
  },
  errorResponse(req, code) {
    const message = 'The coordinator is not available.';
    return {
      throttleTimeMs: 0,
      errorCode: code,
      errorMessage: req.apiVersion >= 1 && req.apiVersion < 4 ? message : null,
      nodeId: -1,
      host: '',
      port: -1,
      coordinators: req.apiVersion >= 4 ? req.body.coordinatorKeys.map((key) => ({ key, nodeId: -1, host: '', port: -1, errorCode: code, errorMessage: message })) : [],
    };
  },
};
