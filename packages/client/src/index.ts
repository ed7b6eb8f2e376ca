// The protocol error type, so users of the client need not depend on @samsa/protocol.
export { KafkaError, errorName, TopicPartitionMap, compareTopicPartitions, topicPartitionKey, type TopicPartition } from '@samsa/protocol';
export * from './address.js';
export * from './errors.js';
export * from './logger.js';
export * from './framing.js';
export * from './connection.js';
export * from './cluster.js';
export * from './admin.js';
export * from './consumer-protocol.js';
export * from './admin-groups.js';
export * from './admin-records.js';
export * from './admin-quotas.js';
export * from './admin-scram.js';
export * from './admin-acls.js';
export * from './admin-transactions.js';
export * from './producer/index.js';
export * from './consumer/assignors/index.js';
export * from './consumer/index.js';
// The fake brokers for tests are `@samsa/client/testing`; the verify workload and checker `@samsa/client/verify`.
export * from './sasl/index.js';
