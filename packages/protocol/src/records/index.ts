/**
 * Kafka record batches (magic v2): zero-copy views and lazy record iteration (`RecordBatch`,
 * `recordBatches`/`scanRecordSet` for whole records buffers), encoding (`encodeRecordBatch`), the
 * five codecs (`compress`/`decompress`), in-place header rewrites that keep the CRC valid
 * (`setBaseOffset`, `setPartitionLeaderEpoch`, `assignOffsets`; `setMaxTimestamp` recomputes it),
 * transaction markers, and broker-side validation returning Kafka error codes (`validateRecords`).
 *
 * Produce path sketch: `validateRecords(records, { produceVersion, timestampType, ... })`; on success
 * `assignOffsets(records, logEndOffset, leaderEpoch)` and, for LogAppendTime topics,
 * `setMaxTimestamp(records, LOG_APPEND_TIME, now)` (Kafka also rewrites a CreateTime batch's
 * maxTimestamp when it differs from `recordsMaxTimestamp`).
 */
export * from './constants.js';
export { crc32c, computeBatchCrc } from './crc.js';
export {
  COMPRESSION_CODEC_MASK,
  CompressionType,
  XERIAL_MAGIC,
  compress,
  compressionFromName,
  compressionName,
  decompress,
  isKnownCompression,
  isXerialSnappy,
  type CompressOptions,
  type CompressionName,
  type DecompressOptions,
} from './compression.js';
export { encodeRecords, type BytesInput, type KafkaRecord, type RecordContext, type RecordHeader, type RecordHeaderInput, type RecordInput } from './record.js';
export {
  RecordBatch,
  RecordIterator,
  encodeRecordBatch,
  ensureMagicV2,
  incrementSequence,
  readBatchHeader,
  type RecordBatchHeader,
  type RecordBatchInput,
} from './batch.js';
export { RecordSetIterator, recordBatches, scanRecordSet, type PartialBatch, type RecordSetScan } from './record-set.js';
export { assignOffsets, rewriteCrc, setBaseOffset, setMaxTimestamp, setPartitionLeaderEpoch } from './rewrite.js';
export {
  ControlRecordType,
  encodeEndTxnMarkerBatch,
  readControlRecordType,
  readEndTxnMarker,
  type EndTxnMarker,
  type EndTxnMarkerBatchInput,
} from './control-records.js';
export {
  validateRecords,
  type AppendOrigin,
  type RecordError,
  type RecordsValidationFailure,
  type RecordsValidationOk,
  type RecordsValidationOptions,
  type RecordsValidationResult,
  type ValidatedBatch,
} from './validate.js';
