/**
 * The `.timeindex` file of a segment: sparse map from timestamp to offset, for ListOffsets by time
 * and time-based retention.
 *
 * Entry (12 bytes, big-endian): timestamp int64 | relative offset int32. Timestamps are strictly
 * increasing (an entry is only added when the segment's max timestamp grows); offsets never decrease.
 */
import { AbstractIndex, INT32_MAX } from './abstract-index.js';
import { readInt64AsNumber, writeInt64FromNumber } from './batch-header.js';
import { CorruptIndexError } from './errors.js';
import type { OpenIndexFiles } from './open-index-files.js';

export const TIME_INDEX_ENTRY_SIZE = 12;

export interface TimestampOffset {
  /** Milliseconds; -1 when unknown. */
  timestamp: number;
  offset: bigint;
}

export class TimeIndex extends AbstractIndex {
  private lastTs = -1;
  private lastRel = 0;

  constructor(path: string, baseOffset: bigint, maxIndexSize: number, files?: OpenIndexFiles) {
    super(path, baseOffset, maxIndexSize, TIME_INDEX_ENTRY_SIZE, files);
  }

  /** The last entry, or (-1, baseOffset) when empty. */
  get lastEntry(): TimestampOffset {
    return { timestamp: this.lastTs, offset: this.baseOffset + BigInt(this.lastRel) };
  }

  get lastTimestamp(): number {
    return this.lastTs;
  }

  /**
   * Adds (timestamp, offset) if `timestamp` is larger than the last entry's. `skipFullCheck` lets the
   * final entry of a rolled segment in even when the index is full (Kafka does the same).
   */
  maybeAppend(timestamp: number, offset: bigint, skipFullCheck = false): void {
    if (!skipFullCheck && this.isFull) throw new RangeError(`Attempt to append to a full time index ${this.path} (${this.count} entries)`);
    const relBig = offset - this.baseOffset;
    if (relBig < 0n || relBig > BigInt(INT32_MAX)) {
      throw new RangeError(`Offset ${offset} cannot be stored relative to base offset ${this.baseOffset} in ${this.path}`);
    }
    const rel = Number(relBig);
    if (this.count > 0 && rel < this.lastRel) {
      throw new CorruptIndexError(`Attempt to append offset ${offset} to ${this.path}, smaller than the last offset ${this.lastEntry.offset}`);
    }
    if (this.count > 0 && timestamp < this.lastTs) {
      throw new CorruptIndexError(`Attempt to append timestamp ${timestamp} to ${this.path}, smaller than the last timestamp ${this.lastTs}`);
    }
    if (timestamp <= this.lastTs) return;
    const at = this.reserveEntry();
    const b = this.data;
    writeInt64FromNumber(b, timestamp, at);
    b.writeInt32BE(rel, at + 8);
    this.commitEntry();
    this.lastTs = timestamp;
    this.lastRel = rel;
  }

  /** The entry with the largest timestamp <= target, or (-1, baseOffset) if there is none. */
  lookup(target: number): TimestampOffset {
    const b = this.data;
    const slot = this.largestLowerBoundSlot(target, (s) => readInt64AsNumber(b, s * TIME_INDEX_ENTRY_SIZE));
    if (slot < 0) return { timestamp: -1, offset: this.baseOffset };
    return this.entry(slot);
  }

  entry(slot: number): TimestampOffset {
    if (slot < 0 || slot >= this.count) throw new RangeError(`Slot ${slot} out of range in ${this.path} (${this.count} entries)`);
    const b = this.data;
    const at = slot * TIME_INDEX_ENTRY_SIZE;
    return { timestamp: readInt64AsNumber(b, at), offset: this.baseOffset + BigInt(b.readInt32BE(at + 8)) };
  }

  /** Removes every entry whose offset is >= `offset`. */
  truncateTo(offset: bigint): void {
    const rel = offset - this.baseOffset;
    if (rel <= 0n) return this.truncateToEntries(0);
    if (rel > BigInt(INT32_MAX)) return;
    const b = this.data;
    this.truncateToEntries(this.smallestUpperBoundSlot(Number(rel), (s) => b.readInt32BE(s * TIME_INDEX_ENTRY_SIZE + 8)));
  }

  protected onEntriesChanged(): void {
    if (this.count === 0) {
      this.lastTs = -1;
      this.lastRel = 0;
      return;
    }
    const at = (this.count - 1) * TIME_INDEX_ENTRY_SIZE;
    this.lastTs = readInt64AsNumber(this.data, at);
    this.lastRel = this.data.readInt32BE(at + 8);
  }

  /** Timestamps strictly increasing and non-negative, offsets non-decreasing. */
  protected sanityCheck(): void {
    const b = this.data;
    let prevTs = -1;
    let prevRel = 0;
    for (let i = 0; i < this.count; i++) {
      const ts = readInt64AsNumber(b, i * TIME_INDEX_ENTRY_SIZE);
      const rel = b.readInt32BE(i * TIME_INDEX_ENTRY_SIZE + 8);
      if (ts <= prevTs) this.corrupt(`entry ${i} has timestamp ${ts}, not larger than the previous ${prevTs}`);
      if (rel < prevRel) this.corrupt(`entry ${i} has relative offset ${rel}, smaller than the previous ${prevRel}`);
      prevTs = ts;
      prevRel = rel;
    }
  }
}
