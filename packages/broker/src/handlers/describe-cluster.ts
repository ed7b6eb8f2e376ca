import { AclResourceType, CLUSTER_RESOURCE_NAME } from '@samsa/protocol';
import type { ApiHandler } from '../api/api-handler.js';
import type { BrokerServices } from './services.js';
import { AUTHORIZED_OPERATIONS_OMITTED, SUPPORTED_OPERATIONS, authorizedOperations } from '../security/authorizer.js';

export const describeClusterHandler: ApiHandler<60, BrokerServices> = {
  apiKey: 60,
  async handle(req, ctx, s) {
    const brokers = [];
    for (const b of s.metadata.aliveBrokers()) {
      const e = s.metadata.endpoint(b.id, ctx.listener);
      if (e) brokers.push({ brokerId: b.id, host: e.host, port: e.port, rack: b.rack });
    }
    return {
      throttleTimeMs: 0,
      errorCode: 0,
      errorMessage: null,
      endpointType: 1,
      clusterId: s.clusterId,
      controllerId: s.metadata.controllerId,
      brokers,
      clusterAuthorizedOperations: req.body.includeClusterAuthorizedOperations
        ? authorizedOperations(s, ctx, AclResourceType.CLUSTER, CLUSTER_RESOURCE_NAME, SUPPORTED_OPERATIONS.cluster)
        : -2147483648,
    };
  },
  errorResponse(_req, code) {
    return {
      throttleTimeMs: 0,
      errorCode: code,
      errorMessage: null,
      endpointType: 1,
      clusterId: '',
      controllerId: -1,
      brokers: [],
      clusterAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
    };
  },
};
