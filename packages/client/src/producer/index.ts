export * from './types.js';
export * from './murmur2.js';
export * from './partitioner.js';
export * from './serializers.js';
export * from './interceptors.js';
export * from './config.js';
export { BufferPool, BufferExhaustedError } from './buffer-pool.js';
export { RecordAccumulator } from './accumulator.js';
export { ProducerBatch } from './batch.js';
export { IdempotenceManager } from './idempotence.js';
export { Producer } from './producer.js';
export {
  TransactionManager,
  TransactionState,
  IllegalTransactionStateError,
  TransactionAbortedError,
  type ConsumerGroupMetadata,
  type TransactionOffset,
} from './transaction-manager.js';
