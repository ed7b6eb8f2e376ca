/**
 * The broker's Kafka APIs: one handler per API key (handlers/), behind one RequestHandler that
 * decodes, dispatches and encodes. ApiVersions advertises exactly the APIs listed here.
 */
import type { Logger } from 'pino';
import type { RequestThrottler, ResponseObserver } from '../api/api-handler.js';
import type { BrokerServices } from '../handlers/services.js';
import { RequestHandler } from './request-handler.js';
import { alterPartitionReassignmentsHandler } from '../handlers/alter-partition-reassignments.js';
import { apiVersionsHandler } from '../handlers/api-versions.js';
import { listPartitionReassignmentsHandler } from '../handlers/list-partition-reassignments.js';
import { incrementalAlterConfigsHandler } from '../handlers/incremental-alter-configs.js';
import { createPartitionsHandler } from '../handlers/create-partitions.js';
import { createTopicsHandler } from '../handlers/create-topics.js';
import { deleteTopicsHandler } from '../handlers/delete-topics.js';
import { describeClusterHandler } from '../handlers/describe-cluster.js';
import { describeConfigsHandler } from '../handlers/describe-configs.js';
import { deleteRecordsHandler } from '../handlers/delete-records.js';
import { alterClientQuotasHandler } from '../handlers/alter-client-quotas.js';
import { describeClientQuotasHandler } from '../handlers/describe-client-quotas.js';
import { alterConfigsHandler } from '../handlers/alter-configs.js';
import { electLeadersHandler } from '../handlers/elect-leaders.js';
import { fetchHandler } from '../handlers/fetch.js';
import { deleteGroupsHandler } from '../handlers/delete-groups.js';
import { offsetDeleteHandler } from '../handlers/offset-delete.js';
import { describeGroupsHandler } from '../handlers/describe-groups.js';
import { findCoordinatorHandler } from '../handlers/find-coordinator.js';
import { heartbeatHandler } from '../handlers/heartbeat.js';
import { joinGroupHandler } from '../handlers/join-group.js';
import { leaveGroupHandler } from '../handlers/leave-group.js';
import { listGroupsHandler } from '../handlers/list-groups.js';
import { offsetCommitHandler } from '../handlers/offset-commit.js';
import { offsetFetchHandler } from '../handlers/offset-fetch.js';
import { syncGroupHandler } from '../handlers/sync-group.js';
import { initProducerIdHandler } from '../handlers/init-producer-id.js';
import { addPartitionsToTxnHandler } from '../handlers/add-partitions-to-txn.js';
import { addOffsetsToTxnHandler } from '../handlers/add-offsets-to-txn.js';
import { endTxnHandler } from '../handlers/end-txn.js';
import { writeTxnMarkersHandler } from '../handlers/write-txn-markers.js';
import { txnOffsetCommitHandler } from '../handlers/txn-offset-commit.js';
import { describeTransactionsHandler } from '../handlers/describe-transactions.js';
import { listTransactionsHandler } from '../handlers/list-transactions.js';
import { describeProducersHandler } from '../handlers/describe-producers.js';
import { listOffsetsHandler } from '../handlers/list-offsets.js';
import { metadataHandler } from '../handlers/metadata.js';
import { offsetForLeaderEpochHandler } from '../handlers/offset-for-leader-epoch.js';
import { produceHandler } from '../handlers/produce.js';
import { aclHandlers } from '../handlers/acls.js';
import { alterUserScramCredentialsHandler, describeUserScramCredentialsHandler, saslAuthenticateHandler, saslHandshakeHandler } from '../handlers/sasl.js';

export function brokerRequestHandler(
  services: BrokerServices,
  log: Logger,
  observer: ResponseObserver,
  throttler: RequestThrottler,
): RequestHandler<BrokerServices> {
  const handlers = [
    produceHandler,
    fetchHandler,
    listOffsetsHandler,
    metadataHandler,
    offsetForLeaderEpochHandler,
    describeConfigsHandler,
    findCoordinatorHandler,
    createTopicsHandler,
    createPartitionsHandler,
    electLeadersHandler,
    deleteTopicsHandler,
    describeClusterHandler,
    initProducerIdHandler,
    alterPartitionReassignmentsHandler,
    listPartitionReassignmentsHandler,
    incrementalAlterConfigsHandler,
    alterConfigsHandler,
    deleteRecordsHandler,
    alterClientQuotasHandler,
    describeClientQuotasHandler,
    saslHandshakeHandler,
    saslAuthenticateHandler,
    describeUserScramCredentialsHandler,
    alterUserScramCredentialsHandler,
    ...aclHandlers,
  ];
  // the group coordinator's APIs
  const groupHandlers = [
    joinGroupHandler,
    syncGroupHandler,
    heartbeatHandler,
    leaveGroupHandler,
    offsetCommitHandler,
    offsetFetchHandler,
    describeGroupsHandler,
    listGroupsHandler,
    deleteGroupsHandler,
    offsetDeleteHandler,
    txnOffsetCommitHandler,
  ];
  // the transaction coordinator's APIs and the markers it sends
  const transactionHandlers = [
    addPartitionsToTxnHandler,
    addOffsetsToTxnHandler,
    endTxnHandler,
    writeTxnMarkersHandler,
    describeTransactionsHandler,
    listTransactionsHandler,
    describeProducersHandler,
  ];
  const holder: { rh?: RequestHandler<BrokerServices> } = {};
  const apiVersions = apiVersionsHandler(() => holder.rh!.apiVersionsResponse());
  const rh = new RequestHandler<BrokerServices>([...handlers, ...groupHandlers, ...transactionHandlers, apiVersions], services, log, observer, throttler);
  holder.rh = rh;
  return rh;
}
