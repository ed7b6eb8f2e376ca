/**
 * @samsa/storage: the broker's storage layer (Kafka 3.x's `storage` module plus kafka.log): the
 * partition Log with its segments, file records, offset/time indexes and checkpoints, the loader,
 * the leader-epoch cache, producer state and its snapshots, retention, the LogCleaner and the
 * LogManager that owns the log directories. It depends only on @samsa/protocol; the broker builds
 * on it. Test helpers are in `@samsa/storage/testing`.
 */
export { DEFAULT_LOG_CONFIG, TimestampType, filenamePrefixFromOffset, logConfig, offsetFromFileName, systemClock, validateLogConfig } from './config.js';
export type { Clock, LogConfig } from './config.js';
export {
  CorruptCheckpointError,
  CorruptIndexError,
  CorruptRecordError,
  InconsistentBrokerIdError,
  InconsistentClusterIdError,
  InconsistentTopicIdError,
  KafkaStorageError,
  LogClosedError,
  LogError,
  LogErrorCode,
  OffsetOutOfRangeError,
  OffsetsOutOfOrderError,
  RecordBatchTooLargeError,
  RecordTooLargeError,
  UnexpectedAppendOffsetError,
} from './errors.js';
export {
  CheckpointFile,
  deferredFlushes,
  OFFSET_CHECKPOINT_FORMAT,
  OffsetCheckpointFile,
  formatCheckpoint,
  fsyncDirectory,
  parseCheckpoint,
  tempFileName,
  writeFileAtomically,
} from './checkpoint.js';
export type { CheckpointFormat, Fsync, TopicPartitionOffset } from './checkpoint.js';
export { deleteDirName, parsePartitionDirName } from './topic-partition.js';
export type { ParsedPartitionDir, PartitionDirKind } from './topic-partition.js';
export { OffsetIndex } from './offset-index.js';
export { DEFAULT_MAX_OPEN_INDEX_FILES, OpenIndexFiles } from './open-index-files.js';
export type { OffsetPosition } from './offset-index.js';
export { TimeIndex } from './time-index.js';
export type { TimestampOffset } from './time-index.js';
export { BatchScanner, FileRecords, FileRecordsSlice, ScanStatus } from './file-records.js';
export { completeBatchesLength } from './batch-header.js';
export { LogSegment, segmentFilePaths } from './segment.js';
export type { FetchDataInfo, LogOffsetMetadata, LogOffsetPosition, RollParams, SegmentOptions } from './segment.js';
export { LeaderEpochFileCache, UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET } from './leader-epoch-cache.js';
export type { EpochEndOffset, EpochEntry } from './leader-epoch-cache.js';
export { LogLoader } from './loader.js';
export { fetchOffsetByTimestamp } from './list-offsets.js';
export type { ListOffsetsContext } from './list-offsets.js';
export { planRetention } from './retention.js';
export type { RetentionParams, RetentionStep } from './retention.js';
export { SegmentDeleter } from './segment-deleter.js';
export type { LoadLogParams, LoadedLog } from './loader.js';
export { DEFAULT_PRODUCER_ID_EXPIRATION_MS, NUM_BATCHES_TO_RETAIN, ProducerStateEntry, ProducerStateManager } from './producer-state-manager.js';
export type { BatchMetadata, LeaderAppendOrigin, ProducerStateOptions, TxnCompletion } from './producer-state-manager.js';
export { ProducerTransactions } from './producer-transactions.js';
export type { CompletedTxn, TxnMetadata } from './producer-transactions.js';
export { ABORTED_TXN_SIZE, ABORTED_TXN_VERSION, TransactionIndex, decodeAbortedTxn, encodeAbortedTxn } from './transaction-index.js';
export type { AbortedTxn, TxnIndexSearchResult } from './transaction-index.js';
export {
  CorruptSnapshotError,
  PRODUCER_SNAPSHOT_FILE_SUFFIX,
  decodeSnapshot,
  encodeSnapshot,
  listSnapshotOffsets,
  readSnapshotFile,
  snapshotFilePath,
  writeSnapshotFile,
} from './snapshot.js';
export type { SnapshotEntry } from './snapshot.js';
export { ListOffsetsTimestamp, Log, prepareAppends } from './log.js';
export type { LogAppendInfo, LogOptions, OffsetForTimestamp, TruncationListener } from './log.js';
export {
  CLEAN_SHUTDOWN_FILE,
  LOG_START_OFFSET_CHECKPOINT_FILE,
  LogManager,
  META_PROPERTIES_FILE,
  PARTITION_METADATA_FILE,
  RECOVERY_POINT_CHECKPOINT_FILE,
  REPLICATION_OFFSET_CHECKPOINT_FILE,
  formatMetaProperties,
  formatPartitionMetadata,
  parseMetaProperties,
} from './manager/manager.js';
export type { LogManagerOptions } from './manager/manager.js';
export { CLEANER_OFFSET_CHECKPOINT_FILE, DEFAULT_CLEANER_CONFIG, LogCleaningAbortedError } from './cleaner/cleaner-types.js';
export type { CleanerConfig, LogToClean } from './cleaner/cleaner-types.js';
export { LogCleaner } from './cleaner/log-cleaner.js';
export { CleanerManager } from './cleaner/cleaner-manager.js';
export { Cleaner } from './cleaner/cleaner.js';
export { SkimpyOffsetMap } from './cleaner/offset-map.js';
