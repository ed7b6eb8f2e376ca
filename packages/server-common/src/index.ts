/**
 * @samsa/server-common: what the broker, the controller and the admin tools share (Kafka 3.x's
 * server-common module): replica assignment (AdminUtils.assignReplicasToBrokers) and the Java
 * .properties reader.
 */
export * from './admin-utils.js';
export * from './properties.js';
