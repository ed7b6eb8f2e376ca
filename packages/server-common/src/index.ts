/**
 * @samsa/server-common: what the broker, the controller, the group coordinator and the admin tools
 * share (Kafka 3.x's server-common module): the CoordinatorLog interface the group and transaction
 * coordinators store their internal topics through, replica assignment (AdminUtils.assignReplicasToBrokers),
 * the delayed-operation purgatory on a hierarchical timing wheel, MetadataVersion
 * (inter.broker.protocol.version), the Java .properties reader, a bounded parallel loop, and Java's String.hashCode with
 * Kafka's Utils.abs (coordinator partitioning).
 */
export * from './admin-utils.js';
export * from './bounded-parallel.js';
export * from './coordinator-log.js';
export * from './jaas.js';
export * from './java-hash.js';
export * from './metadata-version.js';
export * from './properties.js';
export * from './purgatory/purgatory.js';
export * from './purgatory/timing-wheel.js';
