/**
 * @samsa/group-coordinator: Kafka's classic group coordinator (its 3.x group-coordinator module):
 * the group state machine, rebalances with their delayed joins and heartbeats, committed offsets,
 * and `__consumer_offsets` in Kafka's record formats. Its storage is server-common's CoordinatorLog; the
 * broker supplies it over its replicas of `__consumer_offsets` and serves the group APIs.
 */
export * from './client-host.js';
export * from './delayed-operations.js';
export * from './group-api.js';
export * from './group-coordinator.js';
export * from './group-metadata.js';
export * from './group-metadata-manager.js';
export * from './group-offsets.js';
export * from './group-rebalancer.js';
export * from './member-metadata.js';
export * from './offsets-topic.js';
export * from './records.js';
