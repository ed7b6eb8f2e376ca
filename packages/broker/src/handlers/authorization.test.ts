import { pino } from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { AclOperation as Op, AclPatternType, AclPermissionType, AclResourceType, ErrorCode, errorCodeOf } from '@samsa/protocol';
import { FakeZkClient, FakeZkServer } from '@samsa/zk-paths';
import type { AnyApiHandler, RequestContext } from '../api/api-handler.js';
import { AclAuthorizer } from '../security/acl-authorizer.js';
import type { BrokerServices } from './services.js';
import { addOffsetsToTxnHandler } from './add-offsets-to-txn.js';
import { addPartitionsToTxnHandler } from './add-partitions-to-txn.js';
import { alterClientQuotasHandler } from './alter-client-quotas.js';
import { alterConfigsHandler } from './alter-configs.js';
import { alterPartitionReassignmentsHandler } from './alter-partition-reassignments.js';
import { createPartitionsHandler } from './create-partitions.js';
import { deleteGroupsHandler } from './delete-groups.js';
import { describeClusterHandler } from './describe-cluster.js';
import { deleteRecordsHandler } from './delete-records.js';
import { deleteTopicsHandler } from './delete-topics.js';
import { describeClientQuotasHandler } from './describe-client-quotas.js';
import { describeConfigsHandler } from './describe-configs.js';
import { describeGroupsHandler } from './describe-groups.js';
import { describeProducersHandler } from './describe-producers.js';
import { describeTransactionsHandler } from './describe-transactions.js';
import { electLeadersHandler } from './elect-leaders.js';
import { endTxnHandler } from './end-txn.js';
import { findCoordinatorHandler } from './find-coordinator.js';
import { heartbeatHandler } from './heartbeat.js';
import { incrementalAlterConfigsHandler } from './incremental-alter-configs.js';
import { initProducerIdHandler } from './init-producer-id.js';
import { joinGroupHandler } from './join-group.js';
import { leaveGroupHandler } from './leave-group.js';
import { listGroupsHandler } from './list-groups.js';
import { listOffsetsHandler } from './list-offsets.js';
import { listPartitionReassignmentsHandler } from './list-partition-reassignments.js';
import { listTransactionsHandler } from './list-transactions.js';
import { offsetCommitHandler } from './offset-commit.js';
import { offsetDeleteHandler } from './offset-delete.js';
import { offsetFetchHandler } from './offset-fetch.js';
import { offsetForLeaderEpochHandler } from './offset-for-leader-epoch.js';
import { syncGroupHandler } from './sync-group.js';
import { txnOffsetCommitHandler } from './txn-offset-commit.js';
import { writeTxnMarkersHandler } from './write-txn-markers.js';

const E = ErrorCode;
const ctx: RequestContext = { conn: { id: 1, remote: '127.0.0.1:4000', listener: 'PLAINTEXT' }, clientId: 'c', listener: 'PLAINTEXT' };

/** Just enough of the broker for each handler to reach (and stop at) its authorization check. */
function services(authorizer: AclAuthorizer): BrokerServices {
  return {
    authorizer,
    log: pino({ enabled: false }),
    brokerId: 0,
    controller: { isActive: true },
    settings: { deleteTopicEnable: true },
    metadata: { topicId: () => undefined, partition: () => ({}), hasTopic: () => true },
    replicaManager: { getPartition: () => undefined },
    groupCoordinator: {
      handleDeleteGroups: () => new Map(),
      handleListGroups: () => ({ error: 0, groups: [{ groupId: 'g1', protocolType: 'consumer', state: 'Stable', groupType: 'classic' }] }),
    },
    transactionCoordinator: {
      handleListTransactions: () => ({
        errorCode: 0,
        unknownStateFilters: [],
        transactionStates: [{ transactionalId: 'tx', producerId: 1n, transactionState: 'Ongoing' }],
      }),
    },
  } as unknown as BrokerServices;
}

/** The dispatcher's way: a thrown error becomes the handler's error response. */
async function call(h: AnyApiHandler<BrokerServices>, apiVersion: number, body: unknown, s: BrokerServices): Promise<Record<string, unknown>> {
  const req = { ok: true, apiKey: h.apiKey, apiVersion, body, header: { correlationId: 1, clientId: 'c' } } as never;
  try {
    return (await h.handle(req, ctx, s)) as Record<string, unknown>;
  } catch (err) {
    return h.errorResponse(req, errorCodeOf(err)) as Record<string, unknown>;
  }
}

const topics = (key: 'name' | 'topic', partitions: Record<string, unknown>) => [{ [key]: 't', partitions: [partitions] }];

/** [handler, version, body, where the error code is read, the expected code]. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the responses of many APIs, read by path
const CASES: Array<[string, AnyApiHandler<BrokerServices>, number, unknown, (r: any) => unknown, number]> = [
  [
    'ListOffsets',
    listOffsetsHandler,
    5,
    { replicaId: -1, isolationLevel: 0, topics: topics('name', { partitionIndex: 0, timestamp: -1n, currentLeaderEpoch: -1 }) },
    (r) => r.topics[0].partitions[0].errorCode,
    E.TOPIC_AUTHORIZATION_FAILED,
  ],
  [
    'OffsetForLeaderEpoch',
    offsetForLeaderEpochHandler,
    3,
    { replicaId: -1, topics: topics('topic', { partition: 0, leaderEpoch: 0, currentLeaderEpoch: -1 }) },
    (r) => r.topics[0].partitions[0].errorCode,
    E.TOPIC_AUTHORIZATION_FAILED,
  ],
  [
    'OffsetForLeaderEpoch (follower)',
    offsetForLeaderEpochHandler,
    3,
    { replicaId: 1, topics: topics('topic', { partition: 0, leaderEpoch: 0, currentLeaderEpoch: -1 }) },
    (r) => r.topics[0].partitions[0].errorCode,
    E.CLUSTER_AUTHORIZATION_FAILED,
  ],
  ['DeleteTopics', deleteTopicsHandler, 4, { topicNames: ['t'], timeoutMs: 1000 }, (r) => r.responses[0].errorCode, E.TOPIC_AUTHORIZATION_FAILED],
  [
    'CreatePartitions',
    createPartitionsHandler,
    2,
    { topics: [{ name: 't', count: 2, assignments: null }], timeoutMs: 1000, validateOnly: false },
    (r) => r.results[0].errorCode,
    E.TOPIC_AUTHORIZATION_FAILED,
  ],
  [
    'DeleteRecords',
    deleteRecordsHandler,
    1,
    { topics: topics('name', { partitionIndex: 0, offset: 1n }), timeoutMs: 0 },
    (r) => r.topics[0].partitions[0].errorCode,
    E.TOPIC_AUTHORIZATION_FAILED,
  ],
  [
    'JoinGroup',
    joinGroupHandler,
    5,
    { groupId: 'g1', memberId: '', groupInstanceId: null, sessionTimeoutMs: 10000, rebalanceTimeoutMs: 10000, protocolType: 'consumer', protocols: [] },
    (r) => r.errorCode,
    E.GROUP_AUTHORIZATION_FAILED,
  ],
  [
    'SyncGroup',
    syncGroupHandler,
    3,
    { groupId: 'g1', generationId: 1, memberId: 'm', groupInstanceId: null, assignments: [] },
    (r) => r.errorCode,
    E.GROUP_AUTHORIZATION_FAILED,
  ],
  [
    'Heartbeat',
    heartbeatHandler,
    3,
    { groupId: 'g1', generationId: 1, memberId: 'm', groupInstanceId: null },
    (r) => r.errorCode,
    E.GROUP_AUTHORIZATION_FAILED,
  ],
  [
    'LeaveGroup',
    leaveGroupHandler,
    3,
    { groupId: 'g1', members: [{ memberId: 'm', groupInstanceId: null }] },
    (r) => r.errorCode,
    E.GROUP_AUTHORIZATION_FAILED,
  ],
  [
    'OffsetCommit',
    offsetCommitHandler,
    7,
    { groupId: 'g1', generationIdOrMemberEpoch: 1, memberId: 'm', groupInstanceId: null, topics: topics('name', { partitionIndex: 0, committedOffset: 1n }) },
    (r) => r.topics[0].partitions[0].errorCode,
    E.GROUP_AUTHORIZATION_FAILED,
  ],
  [
    'OffsetFetch',
    offsetFetchHandler,
    5,
    { groupId: 'g1', topics: [{ name: 't', partitionIndexes: [0] }], requireStable: false },
    (r) => r.errorCode,
    E.GROUP_AUTHORIZATION_FAILED,
  ],
  [
    'OffsetFetch v8',
    offsetFetchHandler,
    8,
    { groups: [{ groupId: 'g1', topics: null }], requireStable: false },
    (r) => r.groups[0].errorCode,
    E.GROUP_AUTHORIZATION_FAILED,
  ],
  [
    'OffsetDelete',
    offsetDeleteHandler,
    0,
    { groupId: 'g1', topics: [{ name: 't', partitions: [{ partitionIndex: 0 }] }] },
    (r) => r.errorCode,
    E.GROUP_AUTHORIZATION_FAILED,
  ],
  [
    'DescribeGroups',
    describeGroupsHandler,
    3,
    { groups: ['g1'], includeAuthorizedOperations: false },
    (r) => r.groups[0].errorCode,
    E.GROUP_AUTHORIZATION_FAILED,
  ],
  ['ListGroups', listGroupsHandler, 3, {}, (r) => r.groups.length, 0],
  ['DeleteGroups', deleteGroupsHandler, 1, { groupNames: ['g1'] }, (r) => r.results[0].errorCode, E.GROUP_AUTHORIZATION_FAILED],
  ['FindCoordinator (group)', findCoordinatorHandler, 2, { key: 'g1', keyType: 0 }, (r) => r.errorCode, E.GROUP_AUTHORIZATION_FAILED],
  ['FindCoordinator (transaction)', findCoordinatorHandler, 2, { key: 'tx', keyType: 1 }, (r) => r.errorCode, E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED],
  [
    'InitProducerId (transactional)',
    initProducerIdHandler,
    2,
    { transactionalId: 'tx', transactionTimeoutMs: 1000, producerId: -1n, producerEpoch: -1 },
    (r) => r.errorCode,
    E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
  ],
  [
    'InitProducerId (idempotent)',
    initProducerIdHandler,
    2,
    { transactionalId: null, transactionTimeoutMs: 1000, producerId: -1n, producerEpoch: -1 },
    (r) => r.errorCode,
    E.CLUSTER_AUTHORIZATION_FAILED,
  ],
  [
    'AddPartitionsToTxn',
    addPartitionsToTxnHandler,
    1,
    { transactionalId: 'tx', producerId: 1n, producerEpoch: 0, topics: [{ name: 't', partitions: [0] }] },
    (r) => r.resultsByTopic[0].resultsByPartition[0].partitionErrorCode,
    E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
  ],
  [
    'AddOffsetsToTxn',
    addOffsetsToTxnHandler,
    1,
    { transactionalId: 'tx', producerId: 1n, producerEpoch: 0, groupId: 'g1' },
    (r) => r.errorCode,
    E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
  ],
  [
    'EndTxn',
    endTxnHandler,
    1,
    { transactionalId: 'tx', producerId: 1n, producerEpoch: 0, committed: true },
    (r) => r.errorCode,
    E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
  ],
  [
    'TxnOffsetCommit',
    txnOffsetCommitHandler,
    2,
    { transactionalId: 'tx', groupId: 'g1', producerId: 1n, producerEpoch: 0, topics: topics('name', { partitionIndex: 0, committedOffset: 1n }) },
    (r) => r.topics[0].partitions[0].errorCode,
    E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
  ],
  [
    'WriteTxnMarkers',
    writeTxnMarkersHandler,
    1,
    { markers: [{ producerId: 1n, producerEpoch: 0, transactionResult: true, topics: [{ name: 't', partitionIndexes: [0] }], coordinatorEpoch: 0 }] },
    (r) => r.markers[0].topics[0].partitions[0].errorCode,
    E.CLUSTER_AUTHORIZATION_FAILED,
  ],
  [
    'DescribeConfigs (topic)',
    describeConfigsHandler,
    1,
    { resources: [{ resourceType: 2, resourceName: 't', configurationKeys: null }], includeSynonyms: false },
    (r) => r.results[0].errorCode,
    E.TOPIC_AUTHORIZATION_FAILED,
  ],
  [
    'DescribeConfigs (broker)',
    describeConfigsHandler,
    1,
    { resources: [{ resourceType: 4, resourceName: '0', configurationKeys: null }], includeSynonyms: false },
    (r) => r.results[0].errorCode,
    E.CLUSTER_AUTHORIZATION_FAILED,
  ],
  [
    'AlterConfigs',
    alterConfigsHandler,
    1,
    { resources: [{ resourceType: 2, resourceName: 't', configs: [] }], validateOnly: false },
    (r) => r.responses[0].errorCode,
    E.TOPIC_AUTHORIZATION_FAILED,
  ],
  [
    'IncrementalAlterConfigs',
    incrementalAlterConfigsHandler,
    1,
    { resources: [{ resourceType: 4, resourceName: '', configs: [] }], validateOnly: false },
    (r) => r.responses[0].errorCode,
    E.CLUSTER_AUTHORIZATION_FAILED,
  ],
  ['ElectLeaders', electLeadersHandler, 1, { electionType: 0, topicPartitions: null, timeoutMs: 1000 }, (r) => r.errorCode, E.CLUSTER_AUTHORIZATION_FAILED],
  ['AlterPartitionReassignments', alterPartitionReassignmentsHandler, 0, { timeoutMs: 1000, topics: [] }, (r) => r.errorCode, E.CLUSTER_AUTHORIZATION_FAILED],
  ['ListPartitionReassignments', listPartitionReassignmentsHandler, 0, { timeoutMs: 1000, topics: null }, (r) => r.errorCode, E.CLUSTER_AUTHORIZATION_FAILED],
  ['DescribeClientQuotas', describeClientQuotasHandler, 0, { components: [], strict: false }, (r) => r.errorCode, E.CLUSTER_AUTHORIZATION_FAILED],
  [
    'AlterClientQuotas',
    alterClientQuotasHandler,
    0,
    { entries: [{ entity: [], ops: [] }], validateOnly: false },
    (r) => r.entries[0].errorCode,
    E.CLUSTER_AUTHORIZATION_FAILED,
  ],
  [
    'DescribeProducers',
    describeProducersHandler,
    0,
    { topics: [{ name: 't', partitionIndexes: [0] }] },
    (r) => r.topics[0].partitions[0].errorCode,
    E.TOPIC_AUTHORIZATION_FAILED,
  ],
  [
    'DescribeTransactions',
    describeTransactionsHandler,
    0,
    { transactionalIds: ['tx'] },
    (r) => r.transactionStates[0].errorCode,
    E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
  ],
  ['ListTransactions', listTransactionsHandler, 0, { stateFilters: [], producerIdFilters: [] }, (r) => r.transactionStates.length, 0],
];

describe('handler authorization', () => {
  let denyAll: BrokerServices;
  beforeAll(async () => {
    const a = new AclAuthorizer(new FakeZkClient(new FakeZkServer()), { superUsers: '', allowEveryoneIfNoAclFound: false }, pino({ enabled: false }));
    await a.startup();
    // an ACL for someone else: the resources have ACLs, none for ANONYMOUS
    await a.createAcls([
      {
        pattern: { resourceType: AclResourceType.TOPIC, name: '*', patternType: AclPatternType.LITERAL },
        entry: { principal: 'User:x', host: '*', operation: Op.ALL, permissionType: AclPermissionType.ALLOW },
      },
    ]);
    denyAll = services(a);
  });

  it.each(CASES)('handler authorization – %s refused with its authorization error', async (_name, h, version, body, read, expected) => {
    expect(read(await call(h, version, body, denyAll))).toBe(expected);
  });
});

describe('handler authorization – authorized operations (KIP-430)', () => {
  it('handler authorization – DescribeGroups and DescribeCluster report the operations the ACLs allow', async () => {
    const a = new AclAuthorizer(new FakeZkClient(new FakeZkServer()), { superUsers: '', allowEveryoneIfNoAclFound: false }, pino({ enabled: false }));
    await a.startup();
    const allow = (resourceType: AclResourceType, name: string, operation: Op) => ({
      pattern: { resourceType, name, patternType: AclPatternType.LITERAL },
      entry: { principal: 'User:ANONYMOUS', host: '*', operation, permissionType: AclPermissionType.ALLOW },
    });
    await a.createAcls([allow(AclResourceType.GROUP, 'g1', Op.READ), allow(AclResourceType.CLUSTER, 'kafka-cluster', Op.ALTER)]);
    const s = {
      ...services(a),
      clusterId: 'c',
      metadata: { aliveBrokers: () => [], controllerId: 0 },
      groupCoordinator: { handleDescribeGroup: () => ({ error: 0, summary: { state: 'Empty', protocolType: '', protocol: '', members: [] } }) },
    } as unknown as BrokerServices;
    const groups = await call(describeGroupsHandler, 3, { groups: ['g1'], includeAuthorizedOperations: true }, s);
    // READ implies DESCRIBE; no DELETE
    expect((groups as { groups: Array<{ authorizedOperations: number }> }).groups[0]!.authorizedOperations).toBe((1 << Op.READ) | (1 << Op.DESCRIBE));
    const cluster = await call(describeClusterHandler, 0, { includeClusterAuthorizedOperations: true }, s);
    expect(cluster.clusterAuthorizedOperations).toBe((1 << Op.ALTER) | (1 << Op.DESCRIBE));
  });
});
