/**
 * What the cleaner does with one batch (Kafka's MemoryRecords.filterTo with the LogCleaner's
 * RecordFilter and BatchRetention), magic v2 only:
 *
 * - each batch is first shown to the round's CleanedTransactionMetadata, which says whether it may
 *   be discarded: a data batch of an aborted transaction, a COMMIT marker none of whose batches were
 *   read in this round, an ABORT marker whose batches are all gone (one that still had batches is
 *   kept one more round), an empty control batch;
 * - a discardable data batch loses all its records; a discardable marker first gets a delete
 *   horizon (attributes bit 6, baseTimestamp = now + delete.retention.ms, KIP-534) and loses its
 *   record at the first cleaning at or after that time;
 * - otherwise a record is kept when it lies past the offset map (`offset > map.latestOffset`), or
 *   when its key maps to an offset <= its own and it has a value or is a tombstone not yet past its
 *   batch's delete horizon; records without a key are dropped (compacted topics require keys);
 *   marker records are always kept. Committed transactional batches are compacted like any other;
 * - a batch whose records all stay, and that needs no delete horizon, is copied byte for byte;
 * - otherwise the kept records are written into a new batch with the same base offset, last offset
 *   delta (so producer sequence numbers stay intact), producer fields, partition leader epoch,
 *   timestamp type, flags and compression codec. A batch that keeps a tombstone (or a discardable
 *   marker) and has no delete horizon yet gets one;
 * - a batch left without records is dropped, except the last batch of a producer that still has
 *   state (its sequence numbers and epoch must survive: the batch holding its last data offset, or
 *   when its last entry is a marker, its control batches of its current epoch) and the batch ending
 *   where this cleaning round stops (so the last offset is not lost): those become an empty batch
 *   (header only).
 */
import { CompressionType, RecordBatch, TimestampType, encodeRecordBatch, type KafkaRecord, type RecordInput } from '@samsa/protocol';
import type { CleanedTransactionMetadata } from './cleaned-txn-metadata.js';
import type { SkimpyOffsetMap } from './offset-map.js';

/** Kafka's LastRecord: what the producer state knows of an active producer's last entry. */
export interface LastRecordOfProducer {
  /** The producer's last data offset, null when its last entry is a marker (or it has none). */
  lastDataOffset: bigint | null;
  producerEpoch: number;
}

export interface FilterContext {
  map: SkimpyOffsetMap;
  /** The cleaning's start time (delete horizons are compared with it). */
  now: number;
  /** delete.retention.ms of the log. */
  deleteRetentionMs: number;
  /** Kafka's lastRecordsOfActiveProducers: the producers with state in the log. */
  lastRecordsOfActiveProducers: ReadonlyMap<bigint, LastRecordOfProducer>;
  /** First offset not cleaned in this round: the batch ending just before it is never dropped. */
  upperBoundOffset: bigint;
  /** The round's transaction state; every batch is filtered in offset order. */
  txn: CleanedTransactionMetadata;
}

export const FilterOutcome = {
  /** Copy the batch unchanged. */
  ORIGINAL: 'original',
  /** Write `bytes` (the kept records, or an empty header) instead. */
  REWRITTEN: 'rewritten',
  /** Drop the batch. */
  DELETED: 'deleted',
} as const;
export type FilterOutcome = (typeof FilterOutcome)[keyof typeof FilterOutcome];

export interface FilterResult {
  outcome: FilterOutcome;
  /** The replacement batch for REWRITTEN. */
  bytes?: Buffer;
  recordsRead: number;
  recordsRetained: number;
}

/** Kafka's BatchRetention. */
const BatchRetention = {
  /** Drop the batch whatever its records. */
  DELETE: 'delete',
  /** Filter the records; drop the batch if none is left. */
  DELETE_EMPTY: 'delete-empty',
  /** Filter the records; keep an empty batch if none is left. */
  RETAIN_EMPTY: 'retain-empty',
} as const;
type BatchRetention = (typeof BatchRetention)[keyof typeof BatchRetention];

/** Filters one complete v2 batch (`batch` holds exactly its bytes); call for every batch in offset order. */
export function filterBatch(batch: Buffer, ctx: FilterContext): FilterResult {
  const rb = new RecordBatch(batch);
  const recordCount = rb.recordCount;
  const canDiscardBatch = rb.isControl ? ctx.txn.onControlBatchRead(rb) : ctx.txn.onBatchRead(rb);
  const deleteHorizon = rb.hasDeleteHorizon ? Number(rb.baseTimestamp) : null;
  // a discardable marker goes only once its delete horizon has passed
  const discardBatchRecords = rb.isControl ? canDiscardBatch && deleteHorizon !== null && deleteHorizon <= ctx.now : canDiscardBatch;
  const containsMarkerForEmptyTxn = canDiscardBatch && rb.isControl;

  let retention: BatchRetention;
  if ((rb.hasProducerId && isLastRecordOfProducer(rb, ctx)) || rb.nextOffset === ctx.upperBoundOffset) retention = BatchRetention.RETAIN_EMPTY;
  else retention = discardBatchRecords ? BatchRetention.DELETE : BatchRetention.DELETE_EMPTY;
  if (retention === BatchRetention.DELETE) return { outcome: FilterOutcome.DELETED, recordsRead: recordCount, recordsRetained: 0 };

  const retainDeletes = deleteHorizon === null || ctx.now < deleteHorizon;
  const retained: KafkaRecord[] = [];
  let read = 0;
  let containsTombstones = false;
  if (!discardBatchRecords) {
    for (const record of rb.records()) {
      read++;
      if (rb.isControl || shouldRetainRecord(record, ctx, retainDeletes)) {
        retained.push(record);
        if (record.value === null) containsTombstones = true;
      }
    }
  } else {
    read = recordCount;
  }

  if (retained.length > 0) {
    const needDeleteHorizon = (containsTombstones || containsMarkerForEmptyTxn) && deleteHorizon === null;
    if (retained.length === read && !needDeleteHorizon) return { outcome: FilterOutcome.ORIGINAL, recordsRead: read, recordsRetained: read };
    const horizon = needDeleteHorizon ? ctx.now + ctx.deleteRetentionMs : deleteHorizon;
    return { outcome: FilterOutcome.REWRITTEN, bytes: rebuild(rb, retained, horizon), recordsRead: read, recordsRetained: retained.length };
  }
  if (retention === BatchRetention.RETAIN_EMPTY) return { outcome: FilterOutcome.REWRITTEN, bytes: emptyBatch(rb), recordsRead: read, recordsRetained: 0 };
  return { outcome: FilterOutcome.DELETED, recordsRead: read, recordsRetained: 0 };
}

/**
 * The batch preserves the state of a producer that is still active: it holds the producer's last
 * data offset, or (when the producer's last entry is a marker) it is a marker of the current epoch.
 */
function isLastRecordOfProducer(rb: RecordBatch, ctx: FilterContext): boolean {
  const last = ctx.lastRecordsOfActiveProducers.get(rb.producerId);
  if (!last) return false;
  if (last.lastDataOffset !== null) return rb.lastOffset === last.lastDataOffset;
  return rb.isControl && rb.producerEpoch === last.producerEpoch;
}

/** Kafka's Cleaner.shouldRetainRecord for magic v2. */
function shouldRetainRecord(record: KafkaRecord, ctx: FilterContext, retainDeletes: boolean): boolean {
  if (record.offset > ctx.map.latestOffset) return true;
  const key = record.key;
  if (key === null) return false;
  const latestForKey = record.offset >= ctx.map.get(key);
  return latestForKey && (record.value !== null || retainDeletes);
}

function baseFields(rb: RecordBatch): Omit<Parameters<typeof encodeRecordBatch>[0], 'records'> {
  return {
    baseOffset: rb.baseOffset,
    partitionLeaderEpoch: rb.partitionLeaderEpoch,
    timestampType: rb.timestampType,
    transactional: rb.isTransactional,
    control: rb.isControl,
    producerId: rb.producerId,
    producerEpoch: rb.producerEpoch,
    baseSequence: rb.baseSequence,
    lastOffsetDelta: rb.lastOffsetDelta,
  };
}

/** Kafka's buildRetainedRecordsInto: the kept records in a batch shaped like the original. */
function rebuild(rb: RecordBatch, records: readonly KafkaRecord[], deleteHorizon: number | null): Buffer {
  const logAppendTime = rb.timestampType === TimestampType.LOG_APPEND_TIME;
  let maxTimestamp = -1n;
  const inputs: RecordInput[] = records.map((r) => {
    if (r.timestamp > maxTimestamp) maxTimestamp = r.timestamp;
    return { key: r.key, value: r.value, headers: r.headers, timestamp: r.timestamp, offsetDelta: r.offsetDelta, attributes: r.attributes };
  });
  const first = records[0] as KafkaRecord;
  return encodeRecordBatch({
    ...baseFields(rb),
    records: inputs,
    compression: rb.compression as CompressionType,
    baseTimestamp: deleteHorizon ?? first.timestamp,
    maxTimestamp: logAppendTime ? rb.maxTimestamp : maxTimestamp,
    deleteHorizon: deleteHorizon !== null,
  });
}

/** Kafka's DefaultRecordBatch.writeEmptyHeader: offsets, producer fields and max timestamp only. */
function emptyBatch(rb: RecordBatch): Buffer {
  const ts = rb.maxTimestamp;
  return encodeRecordBatch({ ...baseFields(rb), records: [], compression: CompressionType.NONE, baseTimestamp: ts, maxTimestamp: ts });
}
