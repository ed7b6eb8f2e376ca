/**
 * `@samsa/client/testing`: in-process fake brokers (a scripted broker, a cluster of them with topics,
 * a consumer group), for tests of code built on this client.
 */
export * from './fake-broker.js';
export * from './fake-cluster.js';
export * from './fake-group.js';
