export { ProducerStateEntry, ProducerStateManager, NUM_BATCHES_TO_RETAIN, DEFAULT_PRODUCER_ID_EXPIRATION_MS } from '../log/producer-state-manager.js';
export type { BatchMetadata, ProducerStateOptions } from '../log/producer-state-manager.js';
export { ProducerIdManager, PRODUCER_ID_BLOCK_SIZE } from './producer-id-manager.js';
export type { ProducerIdManagerOptions, ProducerIdZk } from './producer-id-manager.js';
export {
  CorruptSnapshotError,
  PRODUCER_SNAPSHOT_FILE_SUFFIX,
  decodeSnapshot,
  encodeSnapshot,
  listSnapshotOffsets,
  readSnapshotFile,
  snapshotFilePath,
  writeSnapshotFile,
} from '../log/snapshot.js';
export type { SnapshotEntry } from '../log/snapshot.js';
