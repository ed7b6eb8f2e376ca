/**
 * @samsa/server-common: what the broker, the controller and the admin tools share (Kafka 3.x's
 * server-common module): replica assignment (AdminUtils.assignReplicasToBrokers).
 */
export * from './admin-utils.js';
