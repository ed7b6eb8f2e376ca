/**
 * @samsa/transaction-coordinator: Kafka 3.x's transaction coordinator (kafka.coordinator.transaction):
 * the transaction state machine as a transition table, the `__transaction_state` record formats,
 * the partition a transactional id maps to, each id's metadata with its prepare/complete
 * transitions, the state manager over `__transaction_state` (server-common's CoordinatorLog), the
 * coordinator's API logic (InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn,
 * DescribeTransactions, ListTransactions, timed-out aborts) and the marker channel. The broker
 * supplies storage, producer ids, partition leaders and the WriteTxnMarkers sender.
 */
export * from './transaction-coordinator.js';
export * from './transaction-log.js';
export * from './transaction-marker-channel-manager.js';
export * from './transaction-metadata.js';
export * from './transaction-partitioner.js';
export * from './transaction-state-manager.js';
export * from './transaction-state.js';
