/**
 * @samsa/transaction-coordinator: the pure parts of Kafka's transaction coordinator
 * (kafka.coordinator.transaction): the transaction state machine as a transition table, the
 * `__transaction_state` record formats, and the partition a transactional id maps to. The
 * coordinator itself (InitProducerId, AddPartitionsToTxn, EndTxn, markers) is not built yet.
 */
export * from './transaction-log.js';
export * from './transaction-partitioner.js';
export * from './transaction-state.js';
