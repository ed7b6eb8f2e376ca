import type { ApiVersionsResponse } from '@samsa/protocol';
import type { ApiHandler } from '../api/api-handler.js';
import type { BrokerServices } from './services.js';

/** ApiVersions: derived from the protocol table, limited to the APIs this broker serves. */
export function apiVersionsHandler(advertised: () => ApiVersionsResponse): ApiHandler<18, BrokerServices> {
  return {
    apiKey: 18,
    async handle() {
      return advertised();
    },
    errorResponse(_req, code) {
      return { ...advertised(), errorCode: code };
    },
  };
}
