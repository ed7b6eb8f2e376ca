/**
 * samsa verify: a workload (producers writing unique sequenced values, acknowledgements recorded)
 * and a checker (read everything back, report lost acknowledged writes, duplicates, reordering,
 * offsets going backwards and replica divergence), for any Kafka-compatible cluster.
 */
export * from './workload.js';
export * from './checker.js';
export * from './report.js';
export { readReplicaLog, readSegmentFile, segmentFiles, type LogFileBatch, type LogRecordDigest } from './log-files.js';
export { readPartition, readTopic, type ConsumedRecord, type PartitionRead } from './fetch-reader.js';
