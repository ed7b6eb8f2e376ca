// `@samsa/storage/testing`: the storage layer's test helpers (v2 batches, temp directories, a
// manual clock, a capturing logger; a cleaner wired for tests) for tests of the packages built on it.
export { ManualClock, batchOf, batchesIn, buildBatch, capturingLogger, makeTempDir } from '../test-support.js';
export type { TestBatch, TestRecord } from '../test-support.js';
export { cleanLog, keyedBatch, makeCleaner, readLog, silent } from '../cleaner/test-support.js';
export type { KeyedBatchOptions, KeyedRecord, ReadBatch, ReadRecord } from '../cleaner/test-support.js';
