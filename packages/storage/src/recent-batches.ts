/**
 * Where the batches of the last appends start. Followers fetch at their log end offset and
 * caught-up consumers from the last high watermark; both are batch boundaries of a recent append,
 * and so is the high watermark that bounds a consumer read. Found here, such reads need no index
 * lookup and no batch-header read from the file (Log.read falls back to those otherwise).
 */
import { BASE_OFFSET_OFFSET, BATCH_LENGTH_OFFSET, LAST_OFFSET_DELTA_OFFSET, LOG_OVERHEAD } from './batch-header.js';
import type { LogOffsetPosition, LogSegment } from './segment.js';

export interface RecentBatch extends LogOffsetPosition {
  segment: LogSegment;
}

/** Batches remembered; a fetch this far behind the log end is rare and takes the slow path. */
const CAPACITY = 64;

export class RecentBatches {
  private readonly ring: Array<RecentBatch | undefined> = new Array<RecentBatch | undefined>(CAPACITY);
  private next = 0;

  /** `records` (complete v2 batches with their final offsets) were appended to `segment` at `position`. */
  record(segment: LogSegment, position: number, records: Buffer): void {
    for (let pos = 0; pos + LOG_OVERHEAD <= records.length;) {
      const size = records.readInt32BE(pos + BATCH_LENGTH_OFFSET) + LOG_OVERHEAD;
      const baseOffset = records.readBigInt64BE(pos + BASE_OFFSET_OFFSET);
      const lastOffset = baseOffset + BigInt(records.readInt32BE(pos + LAST_OFFSET_DELTA_OFFSET));
      this.ring[this.next] = { segment, baseOffset, lastOffset, position: position + pos, size };
      this.next = (this.next + 1) % CAPACITY;
      pos += size;
    }
  }

  /** The remembered batch starting at `offset`, newest first. */
  find(offset: bigint): RecentBatch | undefined {
    for (let i = 1; i <= CAPACITY; i++) {
      const e = this.ring[(this.next - i + CAPACITY) % CAPACITY];
      if (e === undefined) return undefined;
      if (e.baseOffset === offset) return e;
    }
    return undefined;
  }

  /** Forgets everything (the log was truncated: positions may now hold other batches). */
  clear(): void {
    this.ring.fill(undefined);
    this.next = 0;
  }
}
