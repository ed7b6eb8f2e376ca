/**
 * Broker-side validation of the records a producer (or a replica / coordinator) appends to one
 * partition. Mirrors the checks of Kafka's KafkaApis.handleProduceRequest (ProduceRequest.validateRecords),
 * UnifiedLog.analyzeAndValidateRecords and LogValidator, and returns Kafka error codes instead of throwing.
 *
 * Origins: 'client' gets every check; 'coordinator' skips the client-only batch checks (offset range,
 * control batches, sequence); 'replication' (follower appends) skips LogValidator entirely, as Kafka
 * does, leaving structure, size and CRC checks.
 *
 * Uncompressed batches are walked without allocating per record. Compressed batches are decompressed
 * only when something needs the records: `deepCompressed` (default true, as Kafka always does),
 * CreateTime bounds, a compacted topic, or a LogAppendTime batch.
 *
 * Deliberate differences from Kafka:
 * - Trailing bytes that do not form a complete batch are CORRUPT_MESSAGE (Kafka silently trims them);
 *   `allowTrailingBytes` restores Kafka's behaviour.
 * - Records whose offsetDelta differs from their index are INVALID_RECORD (Kafka rewrites such
 *   compressed batches); `requireSequentialOffsetDeltas: false` disables the check.
 * - An unknown compression codec id (5..7) and a payload that fails to decompress are CORRUPT_MESSAGE.
 * - A transactional batch without a producer id is INVALID_RECORD.
 */
import { KafkaError, errorCodeOf } from '../errors.js';
import type { RecordBatch } from './batch.js';
import { ensureMagicV2, incrementSequence } from './batch.js';
import { COMPRESSION_CODEC_MASK, CompressionType, decompress, isKnownCompression } from './compression.js';
import {
  ATTRIBUTES_OFFSET,
  BASE_OFFSET_OFFSET,
  BASE_SEQUENCE_OFFSET,
  BASE_TIMESTAMP_OFFSET,
  CONTROL_FLAG_MASK,
  CRC_OFFSET,
  DEFAULT_MAX_MESSAGE_BYTES,
  DEFAULT_SEGMENT_BYTES,
  LAST_OFFSET_DELTA_OFFSET,
  MAGIC_OFFSET,
  MAX_TIMESTAMP_OFFSET,
  NO_SEQUENCE,
  PARTITION_LEADER_EPOCH_OFFSET,
  PRODUCER_EPOCH_OFFSET,
  PRODUCER_ID_OFFSET,
  RECORDS_COUNT_OFFSET,
  RECORDS_OFFSET,
  TIMESTAMP_TYPE_MASK,
  TRANSACTIONAL_FLAG_MASK,
  TimestampType,
} from './constants.js';
import { computeBatchCrc } from './crc.js';
import { readControlRecordType } from './control-records.js';
import { skimRecord, type RecordSkim } from './record.js';
import { RecordSetIterator, type PartialBatch } from './record-set.js';
import { Cursor, readInt64AsNumber } from './varint.js';

const CORRUPT_MESSAGE = 2;
const MESSAGE_TOO_LARGE = 10;
const RECORD_LIST_TOO_LARGE = 18;
const INVALID_TIMESTAMP = 32;
const UNSUPPORTED_FOR_MESSAGE_FORMAT = 43;
const UNSUPPORTED_COMPRESSION_TYPE = 76;
const INVALID_RECORD = 87;

/** Who is appending: producers are checked strictly; replicas and the coordinator are trusted more. */
export type AppendOrigin = 'client' | 'replication' | 'coordinator';

export interface RecordsValidationOptions {
  /**
   * The Produce request version the records arrived with. v3+ requires exactly one magic v2 batch
   * (else INVALID_RECORD); below v7 zstd is UNSUPPORTED_COMPRESSION_TYPE. When omitted the
   * request-level checks are skipped and any number (>= 1) of batches is accepted.
   */
  produceVersion?: number;
  /** Default 'client'. */
  origin?: AppendOrigin;
  /** max.message.bytes: a batch larger than this is MESSAGE_TOO_LARGE. Default 1048588. */
  maxMessageBytes?: number;
  /** segment.bytes: records larger than this are RECORD_LIST_TOO_LARGE. Default 1 GiB. */
  segmentBytes?: number;
  /** The topic's message.timestamp.type. Default CREATE_TIME. */
  timestampType?: TimestampType;
  /** message.timestamp.before.max.ms (CreateTime only). Default unbounded. */
  timestampBeforeMaxMs?: number;
  /** message.timestamp.after.max.ms (CreateTime only). Default unbounded. */
  timestampAfterMaxMs?: number;
  /** Clock for timestamp checks (ms). Default Date.now(). */
  now?: number;
  /** cleanup.policy contains compact: records must have a key. */
  compactedTopic?: boolean;
  /** Verify CRCs (default true). */
  verifyCrc?: boolean;
  /** Decompress and walk compressed batches even when no other check needs it. Default true. */
  deepCompressed?: boolean;
  /** Accept (and ignore) an incomplete trailing batch, as Kafka does. Default false. */
  allowTrailingBytes?: boolean;
  /** Require record offsetDelta === index within the batch. Default true. */
  requireSequentialOffsetDeltas?: boolean;
  /** Limit for a decompressed payload. Default unlimited. */
  maxDecompressedBytes?: number;
  /** At most this many per-record errors are collected for a failing batch. Default 100. */
  maxRecordErrors?: number;
}

/** What validation learned about one batch. Positions are byte offsets in the records buffer. */
export interface ValidatedBatch {
  position: number;
  sizeInBytes: number;
  baseOffset: bigint;
  partitionLeaderEpoch: number;
  compression: CompressionType;
  timestampType: TimestampType;
  isTransactional: boolean;
  isControl: boolean;
  recordCount: number;
  /** offsetDelta of the first record (0 unless records were not walked, then assumed 0). */
  firstOffsetDelta: number;
  lastOffsetDelta: number;
  baseTimestamp: bigint;
  /** maxTimestamp as stored in the header. */
  maxTimestamp: bigint;
  /** Largest record timestamp found by walking the records; null when they were not walked. */
  recordsMaxTimestamp: bigint | null;
  /** offsetDelta of the record carrying recordsMaxTimestamp (first one on ties); null when not walked. */
  offsetDeltaOfMaxTimestamp: number | null;
  producerId: bigint;
  producerEpoch: number;
  baseSequence: number;
  lastSequence: number;
  hasProducerId: boolean;
  /** Whether the records were parsed (always for uncompressed batches). */
  recordsWalked: boolean;
}

/** A per-record failure, as Produce v8+ reports it (Kafka calls the record index `batch_index`). */
export interface RecordError {
  batchIndex: number;
  message: string;
}

export interface RecordsValidationOk {
  ok: true;
  errorCode: 0;
  batches: ValidatedBatch[];
  recordCount: number;
  /** Bytes covered by the complete batches. */
  validBytes: number;
  /** Largest timestamp over all batches (walked records, else headers); -1 when none. */
  maxTimestamp: bigint;
  /** Index (over all records of all batches) of the record holding maxTimestamp; -1 when unknown. */
  maxTimestampRecordIndex: number;
  /** The ignored incomplete tail when allowTrailingBytes is set. */
  partial: PartialBatch | null;
}

export interface RecordsValidationFailure {
  ok: false;
  errorCode: number;
  message: string;
  /** Index of the failing batch in the buffer, when the error belongs to one. */
  batchIndex?: number;
  recordErrors: RecordError[];
}

export type RecordsValidationResult = RecordsValidationOk | RecordsValidationFailure;

class ValidationFailure extends KafkaError {
  constructor(
    code: number,
    message: string,
    readonly batchIndex: number | undefined,
    readonly recordErrors: RecordError[] = [],
    options?: { cause?: unknown },
  ) {
    super(code, message, options);
  }
}

function fail(code: number, message: string, batchIndex?: number, recordErrors?: RecordError[]): never {
  throw new ValidationFailure(code, message, batchIndex, recordErrors);
}

interface Settings {
  produceVersion: number | undefined;
  client: boolean;
  /** LogValidator runs (every origin but replication). */
  validated: boolean;
  origin: AppendOrigin;
  maxMessageBytes: number;
  segmentBytes: number;
  timestampType: TimestampType;
  beforeMax: number;
  afterMax: number;
  now: number;
  compacted: boolean;
  verifyCrc: boolean;
  deep: boolean;
  allowTrailing: boolean;
  sequential: boolean;
  maxDecompressed: number | undefined;
  maxRecordErrors: number;
}

function settings(o: RecordsValidationOptions): Settings {
  const origin = o.origin ?? 'client';
  return {
    produceVersion: o.produceVersion,
    client: origin === 'client',
    validated: origin !== 'replication',
    origin,
    maxMessageBytes: o.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
    segmentBytes: o.segmentBytes ?? DEFAULT_SEGMENT_BYTES,
    timestampType: o.timestampType ?? TimestampType.CREATE_TIME,
    beforeMax: o.timestampBeforeMaxMs ?? Number.POSITIVE_INFINITY,
    afterMax: o.timestampAfterMaxMs ?? Number.POSITIVE_INFINITY,
    now: o.now ?? Date.now(),
    compacted: o.compactedTopic ?? false,
    verifyCrc: o.verifyCrc ?? true,
    deep: o.deepCompressed ?? true,
    allowTrailing: o.allowTrailingBytes ?? false,
    sequential: o.requireSequentialOffsetDeltas ?? true,
    maxDecompressed: o.maxDecompressedBytes,
    maxRecordErrors: o.maxRecordErrors ?? 100,
  };
}

/**
 * Validates a whole records buffer destined for one partition. Never throws: failures come back as
 * `{ ok: false, errorCode, message, recordErrors }`.
 */
export function validateRecords(records: Buffer, options: RecordsValidationOptions = {}): RecordsValidationResult {
  try {
    return run(records, settings(options));
  } catch (e) {
    const code = errorCodeOf(e);
    const message = e instanceof Error ? e.message : String(e);
    if (e instanceof ValidationFailure) {
      const failure: RecordsValidationFailure = { ok: false, errorCode: code, message, recordErrors: e.recordErrors };
      if (e.batchIndex !== undefined) failure.batchIndex = e.batchIndex;
      return failure;
    }
    return { ok: false, errorCode: code, message, recordErrors: [] };
  }
}

function run(records: Buffer, s: Settings): RecordsValidationOk {
  // 1. Structure: split into batches (CORRUPT_MESSAGE for impossible lengths / magic > 2).
  const it = new RecordSetIterator(records);
  const views: RecordBatch[] = [];
  const positions: number[] = [];
  for (;;) {
    const position = it.position;
    let r: IteratorResult<RecordBatch>;
    try {
      r = it.next();
    } catch (e) {
      if (e instanceof KafkaError && e.code === UNSUPPORTED_FOR_MESSAGE_FORMAT) {
        // Legacy magic 0/1 batch.
        if (s.produceVersion !== undefined && s.produceVersion >= 3) {
          fail(
            INVALID_RECORD,
            `Produce requests with version ${s.produceVersion} are only allowed to contain record batches with magic version 2`,
            views.length,
          );
        }
        fail(UNSUPPORTED_FOR_MESSAGE_FORMAT, e.message, views.length);
      }
      throw e;
    }
    if (r.done) break;
    views.push(r.value);
    positions.push(position);
  }

  if (it.partial && !s.allowTrailing) {
    const p = it.partial;
    fail(
      CORRUPT_MESSAGE,
      `Incomplete record batch at position ${p.position}: ${p.available} bytes present` + (p.declared === null ? '' : `, ${p.declared} declared`),
    );
  }

  // 2. Request-level rules (ProduceRequest.validateRecords, run by KafkaApis before the append).
  if (s.produceVersion !== undefined && s.produceVersion >= 3) {
    const v = s.produceVersion;
    if (views.length === 0) fail(INVALID_RECORD, `Produce requests with version ${v} must have at least one record batch per partition`);
    const codec = views[0]!.buffer.readInt16BE(ATTRIBUTES_OFFSET) & COMPRESSION_CODEC_MASK;
    if (v < 7 && codec === CompressionType.ZSTD) {
      fail(UNSUPPORTED_COMPRESSION_TYPE, `Produce requests with version ${v} are not allowed to use ZStandard compression`, 0);
    }
    if (views.length > 1) {
      fail(INVALID_RECORD, `Produce requests with version ${v} are only allowed to contain exactly one record batch per partition`);
    }
  }

  // 3. Per-batch shallow checks (UnifiedLog.analyzeAndValidateRecords), in Kafka's order.
  for (let i = 0; i < views.length; i++) {
    const b = views[i]!.buffer;
    if (s.client && b.readBigInt64BE(BASE_OFFSET_OFFSET) !== 0n) {
      fail(INVALID_RECORD, `The baseOffset of the record batch should be 0, but it is ${b.readBigInt64BE(BASE_OFFSET_OFFSET)}`, i);
    }
    if (b.length > s.maxMessageBytes) {
      fail(MESSAGE_TOO_LARGE, `The record batch size is ${b.length} bytes which exceeds the maximum configured value of ${s.maxMessageBytes}`, i);
    }
    if (s.verifyCrc) {
      const stored = b.readUInt32BE(CRC_OFFSET);
      const computed = computeBatchCrc(b);
      if (stored !== computed) fail(CORRUPT_MESSAGE, `Record is corrupt (stored crc = ${stored}, computed crc = ${computed})`, i);
    }
    const codec = b.readInt16BE(ATTRIBUTES_OFFSET) & COMPRESSION_CODEC_MASK;
    if (!isKnownCompression(codec)) fail(CORRUPT_MESSAGE, `Unknown compression type id: ${codec}`, i);
  }
  // 4. Batch and record checks (LogValidator). Appends that are validated (all but replication)
  //    must hold exactly one v2 batch.
  if (s.origin !== 'replication') {
    if (views.length === 0) fail(INVALID_RECORD, 'Record batch has no batches at all');
    if (views.length > 1) fail(INVALID_RECORD, 'Compressed outer record has more than one batch', 1);
  } else if (views.length === 0) {
    fail(INVALID_RECORD, 'The records contain no complete record batch');
  }
  const batches: ValidatedBatch[] = [];
  let recordCount = 0;
  let maxTimestamp = -1n;
  let maxTimestampRecordIndex = -1;
  for (let i = 0; i < views.length; i++) {
    const info = validateBatch(views[i]!, positions[i]!, i, s);
    batches.push(info);
    const ts = info.recordsMaxTimestamp ?? info.maxTimestamp;
    if (ts > maxTimestamp) {
      maxTimestamp = ts;
      maxTimestampRecordIndex = info.offsetDeltaOfMaxTimestamp === null ? -1 : recordCount + info.offsetDeltaOfMaxTimestamp;
    }
    recordCount += info.recordCount;
  }
  // 5. The whole append must fit in a segment (UnifiedLog.append, after validation).
  const validBytes = it.position;
  if (validBytes > s.segmentBytes) {
    fail(RECORD_LIST_TOO_LARGE, `The size of the records (${validBytes}) is larger than the segment size of ${s.segmentBytes}`);
  }
  return {
    ok: true,
    errorCode: 0,
    batches,
    recordCount,
    validBytes,
    maxTimestamp,
    maxTimestampRecordIndex,
    partial: it.partial,
  };
}

// Reused across calls: the walk allocates nothing per record.
const skim: RecordSkim = { timestampDelta: 0, offsetDelta: 0, keyIsNull: false };

function validateBatch(view: RecordBatch, position: number, index: number, s: Settings): ValidatedBatch {
  const b = view.buffer;
  ensureMagicV2(b.readInt8(MAGIC_OFFSET));
  const attributes = b.readInt16BE(ATTRIBUTES_OFFSET);
  const compression = (attributes & COMPRESSION_CODEC_MASK) as CompressionType;
  const batchTimestampType = attributes & TIMESTAMP_TYPE_MASK ? TimestampType.LOG_APPEND_TIME : TimestampType.CREATE_TIME;
  const isTransactional = (attributes & TRANSACTIONAL_FLAG_MASK) !== 0;
  const isControl = (attributes & CONTROL_FLAG_MASK) !== 0;
  const lastOffsetDelta = b.readInt32BE(LAST_OFFSET_DELTA_OFFSET);
  const count = b.readInt32BE(RECORDS_COUNT_OFFSET);
  const baseOffset = b.readBigInt64BE(BASE_OFFSET_OFFSET);
  const producerId = b.readBigInt64BE(PRODUCER_ID_OFFSET);
  const producerEpoch = b.readInt16BE(PRODUCER_EPOCH_OFFSET);
  const baseSequence = b.readInt32BE(BASE_SEQUENCE_OFFSET);
  const hasProducerId = producerId >= 0n;

  if (s.client) {
    const countFromOffsets = lastOffsetDelta + 1;
    if (countFromOffsets <= 0) {
      fail(INVALID_RECORD, `Batch has an invalid offset range: [${baseOffset}, ${baseOffset + BigInt(lastOffsetDelta)}]`, index);
    }
    if (count <= 0) fail(INVALID_RECORD, `Invalid reported count for record batch: ${count}`, index);
    if (countFromOffsets !== count) {
      fail(INVALID_RECORD, `Inconsistent batch offset range [${baseOffset}, ${baseOffset + BigInt(lastOffsetDelta)}] and count of records ${count}`, index);
    }
    if (isControl) fail(INVALID_RECORD, 'Clients are not allowed to write control records', index);
    if (hasProducerId && baseSequence < 0) {
      fail(INVALID_RECORD, `Invalid sequence number ${baseSequence} in record batch with producerId ${producerId}`, index);
    }
  } else if (count < 0) {
    fail(INVALID_RECORD, `Invalid reported count for record batch: ${count}`, index);
  }
  if (isTransactional && !hasProducerId) {
    fail(INVALID_RECORD, 'Transactional record batch has no producer id', index);
  }

  const timestampChecks =
    s.validated &&
    ((s.timestampType === TimestampType.CREATE_TIME && (Number.isFinite(s.beforeMax) || Number.isFinite(s.afterMax))) ||
      batchTimestampType === TimestampType.LOG_APPEND_TIME);
  const keyChecks = s.validated && s.compacted;
  const walk = compression === CompressionType.NONE || s.deep || timestampChecks || keyChecks || (isControl && !s.client);

  let recordsMaxTimestamp: bigint | null = null;
  let offsetDeltaOfMaxTimestamp: number | null = null;
  let firstOffsetDelta = 0;
  if (walk) {
    const payload =
      compression === CompressionType.NONE
        ? b.subarray(RECORDS_OFFSET)
        : decompress(compression, b.subarray(RECORDS_OFFSET), { maxBytes: s.maxDecompressed ?? Number.POSITIVE_INFINITY });
    const maxTsHeader = readInt64AsNumber(b, MAX_TIMESTAMP_OFFSET);
    const walked = walkRecords(payload, count, index, {
      baseTimestamp: readInt64AsNumber(b, BASE_TIMESTAMP_OFFSET),
      logAppendTime: batchTimestampType === TimestampType.LOG_APPEND_TIME ? maxTsHeader : null,
      baseOffset,
      s,
      checkTimestamps: timestampChecks,
      checkKeys: keyChecks,
    });
    recordsMaxTimestamp = walked.maxTimestamp;
    offsetDeltaOfMaxTimestamp = walked.offsetDeltaOfMax;
    firstOffsetDelta = walked.firstOffsetDelta;
    if (isControl && !s.client && count > 0) {
      // The first record must carry a parseable control key.
      const c = new Cursor(payload);
      c.varint();
      c.int8();
      c.varlong();
      c.varint();
      const keyLen = c.varint();
      readControlRecordType(keyLen >= 0 ? c.view(keyLen) : null);
    }
  }

  return {
    position,
    sizeInBytes: b.length,
    baseOffset,
    partitionLeaderEpoch: b.readInt32BE(PARTITION_LEADER_EPOCH_OFFSET),
    compression,
    timestampType: batchTimestampType,
    isTransactional,
    isControl,
    recordCount: count,
    firstOffsetDelta,
    lastOffsetDelta,
    baseTimestamp: b.readBigInt64BE(BASE_TIMESTAMP_OFFSET),
    maxTimestamp: b.readBigInt64BE(MAX_TIMESTAMP_OFFSET),
    recordsMaxTimestamp,
    offsetDeltaOfMaxTimestamp,
    producerId,
    producerEpoch,
    baseSequence,
    lastSequence: baseSequence === NO_SEQUENCE ? NO_SEQUENCE : incrementSequence(baseSequence, lastOffsetDelta),
    hasProducerId,
    recordsWalked: walk,
  };
}

interface WalkContext {
  baseTimestamp: number;
  logAppendTime: number | null;
  baseOffset: bigint;
  s: Settings;
  checkTimestamps: boolean;
  checkKeys: boolean;
}

interface WalkResult {
  maxTimestamp: bigint | null;
  offsetDeltaOfMax: number | null;
  firstOffsetDelta: number;
}

function walkRecords(payload: Buffer, count: number, batchIndex: number, ctx: WalkContext): WalkResult {
  const s = ctx.s;
  const c = new Cursor(payload);
  const recordErrors: RecordError[] = [];
  let timestampError = false;
  let maxTs = Number.NEGATIVE_INFINITY;
  let offsetDeltaOfMax: number | null = null;
  let firstOffsetDelta = 0;
  const lower = s.now - s.beforeMax;
  const upper = s.now + s.afterMax;
  const addError = (i: number, message: string): void => {
    if (recordErrors.length < s.maxRecordErrors) recordErrors.push({ batchIndex: i, message });
  };

  for (let i = 0; i < count; i++) {
    if (c.pos >= c.end) {
      fail(INVALID_RECORD, `Record batch declares ${count} records but its payload ends after ${i}`, batchIndex);
    }
    try {
      skimRecord(c, skim);
    } catch (e) {
      if (e instanceof KafkaError) fail(e.code, `${e.message} (record ${i})`, batchIndex);
      throw e;
    }
    if (i === 0) firstOffsetDelta = skim.offsetDelta;
    if (s.sequential && skim.offsetDelta !== i) {
      fail(INVALID_RECORD, `Record ${i} has offset delta ${skim.offsetDelta}; offset deltas must be 0..${count - 1} in order`, batchIndex);
    }
    const ts = ctx.logAppendTime ?? ctx.baseTimestamp + skim.timestampDelta;
    if (ts > maxTs) {
      maxTs = ts;
      offsetDeltaOfMax = skim.offsetDelta;
    }
    // LogValidator.validateRecord: a key error hides the timestamp check of the same record.
    if (ctx.checkKeys && skim.keyIsNull) {
      addError(i, 'Compacted topic cannot accept message without key');
    } else if (ctx.checkTimestamps) {
      if (s.timestampType === TimestampType.CREATE_TIME && ts !== -1) {
        if (ts < lower || ts > upper) {
          timestampError = true;
          addError(
            i,
            `Timestamp ${ts} of message with offset ${ctx.baseOffset + BigInt(skim.offsetDelta)} is out of range. ` +
              `The timestamp should be within [${lower}, ${upper}]`,
          );
        }
      } else if (ctx.logAppendTime !== null) {
        timestampError = true;
        addError(i, 'Invalid timestamp type in message. Producer should not set timestamp type to LogAppendTime.');
      }
    }
  }
  if (c.pos !== c.end) {
    fail(INVALID_RECORD, 'Incorrect declared batch size, records still remaining in the batch', batchIndex);
  }
  if (recordErrors.length > 0) {
    const message = timestampError
      ? `One or more records were rejected for an invalid timestamp: ${recordErrors[0]!.message}`
      : `One or more records were rejected (${recordErrors.length} record errors), first: ${recordErrors[0]!.message}`;
    fail(timestampError ? INVALID_TIMESTAMP : INVALID_RECORD, message, batchIndex, recordErrors);
  }
  return {
    maxTimestamp: count > 0 && Number.isFinite(maxTs) ? BigInt(maxTs) : null,
    offsetDeltaOfMax,
    firstOffsetDelta,
  };
}
