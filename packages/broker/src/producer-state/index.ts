export { ProducerIdManager, PRODUCER_ID_BLOCK_SIZE } from './producer-id-manager.js';
export type { ProducerIdManagerOptions, ProducerIdZk } from './producer-id-manager.js';
