/**
 * Iterating the batches of a records buffer ("record set", as carried by Produce and Fetch).
 *
 * Follows Kafka's ByteBufferLogInputStream: a length field below 14 or a magic outside 0..2 is
 * corruption (CORRUPT_MESSAGE); trailing bytes that do not hold a complete batch are not an error
 * here but are reported as `partial` (a fetch response may legitimately end in a truncated batch).
 */
import { KafkaError } from '../errors.js';
import { RecordBatch } from './batch.js';
import { BATCH_LENGTH_OFFSET, CURRENT_MAGIC, HEADER_SIZE_UP_TO_MAGIC, LEGACY_RECORD_OVERHEAD_V0, LOG_OVERHEAD, MAGIC_OFFSET } from './constants.js';

const CORRUPT_MESSAGE = 2;

export interface PartialBatch {
  /** Byte position of the incomplete batch in the records buffer. */
  position: number;
  /** Bytes present from `position` to the end of the buffer. */
  available: number;
  /** Size the batch declares (12 + batchLength), or null when its length field is not complete. */
  declared: number | null;
}

export class RecordSetIterator implements IterableIterator<RecordBatch> {
  /** Position of the next batch to read. */
  position = 0;
  /** Set when iteration stopped at an incomplete trailing batch. */
  partial: PartialBatch | null = null;

  constructor(readonly buffer: Buffer) {}

  next(): IteratorResult<RecordBatch> {
    const buf = this.buffer;
    const pos = this.position;
    const remaining = buf.length - pos;
    if (remaining <= 0 || this.partial) return { done: true, value: undefined };
    if (remaining < LOG_OVERHEAD) return this.stop(null);
    const batchLength = buf.readInt32BE(pos + BATCH_LENGTH_OFFSET);
    if (batchLength < LEGACY_RECORD_OVERHEAD_V0) {
      throw new KafkaError(
        CORRUPT_MESSAGE,
        `Record size ${batchLength} at position ${pos} is less than the minimum record overhead (${LEGACY_RECORD_OVERHEAD_V0})`,
      );
    }
    const size = batchLength + LOG_OVERHEAD;
    if (remaining < HEADER_SIZE_UP_TO_MAGIC) return this.stop(size);
    const magic = buf.readInt8(pos + MAGIC_OFFSET);
    if (magic < 0 || magic > CURRENT_MAGIC) {
      throw new KafkaError(CORRUPT_MESSAGE, `Invalid magic found in record: ${magic} at position ${pos}`);
    }
    if (remaining < size) return this.stop(size);
    const batch = new RecordBatch(buf.subarray(pos, pos + size));
    this.position = pos + size;
    return { done: false, value: batch };
  }

  private stop(declared: number | null): IteratorResult<RecordBatch> {
    this.partial = { position: this.position, available: this.buffer.length - this.position, declared };
    return { done: true, value: undefined };
  }

  [Symbol.iterator](): RecordSetIterator {
    return this;
  }
}

/** Lazily iterates the complete batches in `records`; check `.partial` afterwards for a truncated tail. */
export function recordBatches(records: Buffer): RecordSetIterator {
  return new RecordSetIterator(records);
}

export interface RecordSetScan {
  batches: RecordBatch[];
  /** Bytes covered by complete batches (the position of `partial`, if any). */
  validBytes: number;
  partial: PartialBatch | null;
}

/** Splits `records` into batch views, reporting (not throwing on) an incomplete trailing batch. */
export function scanRecordSet(records: Buffer): RecordSetScan {
  const it = new RecordSetIterator(records);
  const batches = [...it];
  return { batches, validBytes: it.position, partial: it.partial };
}
