/**
 * What the cleaner does with one batch (Kafka's MemoryRecords.filterTo with the LogCleaner's
 * RecordFilter), magic v2 only:
 *
 * - a record is kept when it lies past the offset map (`offset > map.latestOffset`), or when its key
 *   maps to an offset <= its own and it has a value or is a tombstone not yet past its batch's delete
 *   horizon; records without a key are dropped (compacted topics require keys);
 * - a batch whose records all stay, and that needs no delete horizon, is copied byte for byte;
 * - otherwise the kept records are written into a new batch with the same base offset, last offset
 *   delta (so producer sequence numbers stay intact), producer fields, partition leader epoch,
 *   timestamp type and compression codec. A batch that keeps a tombstone and has no delete horizon
 *   yet gets one (attributes bit 6, baseTimestamp = now + delete.retention.ms, KIP-534): the
 *   tombstone is dropped by the first cleaning after that time;
 * - a batch left without records is dropped, except the last batch of a producer that still has
 *   state (its sequence numbers must survive) and the batch ending where this cleaning round stops
 *   (so the last offset is not lost): those become an empty batch (header only);
 * - control and transactional batches are kept as they are (Samsa has no transactions yet).
 */
import {
  ATTRIBUTES_OFFSET,
  CONTROL_FLAG_MASK,
  CompressionType,
  RecordBatch,
  TRANSACTIONAL_FLAG_MASK,
  TimestampType,
  encodeRecordBatch,
  type KafkaRecord,
  type RecordInput,
} from '@samsa/protocol';
import type { SkimpyOffsetMap } from './offset-map.js';

export interface FilterContext {
  map: SkimpyOffsetMap;
  /** The cleaning's start time (delete horizons are compared with it). */
  now: number;
  /** delete.retention.ms of the log. */
  deleteRetentionMs: number;
  /** Last data offset of each producer id with state in the log. */
  lastOffsetOfProducer: ReadonlyMap<bigint, bigint>;
  /** First offset not cleaned in this round: the batch ending just before it is never dropped. */
  upperBoundOffset: bigint;
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

/** Filters one complete v2 batch (`batch` holds exactly its bytes). */
export function filterBatch(batch: Buffer, ctx: FilterContext): FilterResult {
  const rb = new RecordBatch(batch);
  const recordCount = rb.recordCount;
  if (rb.isControl || rb.isTransactional) return { outcome: FilterOutcome.ORIGINAL, recordsRead: recordCount, recordsRetained: recordCount };

  const deleteHorizon = rb.hasDeleteHorizon ? Number(rb.baseTimestamp) : null;
  const retainDeletes = deleteHorizon === null || ctx.now < deleteHorizon;
  const retained: KafkaRecord[] = [];
  let read = 0;
  let containsTombstones = false;
  for (const record of rb.records()) {
    read++;
    if (shouldRetainRecord(record, ctx, retainDeletes)) {
      retained.push(record);
      if (record.value === null) containsTombstones = true;
    }
  }

  if (retained.length > 0) {
    const needDeleteHorizon = containsTombstones && deleteHorizon === null;
    if (retained.length === read && !needDeleteHorizon) return { outcome: FilterOutcome.ORIGINAL, recordsRead: read, recordsRetained: read };
    const horizon = needDeleteHorizon ? ctx.now + ctx.deleteRetentionMs : deleteHorizon;
    return { outcome: FilterOutcome.REWRITTEN, bytes: rebuild(rb, retained, horizon), recordsRead: read, recordsRetained: retained.length };
  }
  const lastOfProducer = rb.hasProducerId && ctx.lastOffsetOfProducer.get(rb.producerId) === rb.lastOffset;
  if (lastOfProducer || rb.nextOffset === ctx.upperBoundOffset) {
    return { outcome: FilterOutcome.REWRITTEN, bytes: emptyBatch(rb), recordsRead: read, recordsRetained: 0 };
  }
  return { outcome: FilterOutcome.DELETED, recordsRead: read, recordsRetained: 0 };
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

/** True for batches the filter never looks into (control or transactional). */
export function isPassThroughBatch(batch: Buffer): boolean {
  return (batch.readInt16BE(ATTRIBUTES_OFFSET) & (CONTROL_FLAG_MASK | TRANSACTIONAL_FLAG_MASK)) !== 0;
}
