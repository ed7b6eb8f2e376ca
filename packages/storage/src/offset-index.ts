/**
 * The `.index` file of a segment: sparse map from offset to file position.
 *
 * Entry (8 bytes, big-endian): relative offset int32 (offset - baseOffset) | position int32.
 * One entry is added per index.interval.bytes appended, keyed by the last offset of the batch that
 * starts at `position`; lookups return the largest entry <= the target and the caller scans batch
 * headers forward from its position.
 */
import { AbstractIndex, INT32_MAX } from './abstract-index.js';
import { CorruptIndexError } from './errors.js';
import type { OpenIndexFiles } from './open-index-files.js';

export const OFFSET_INDEX_ENTRY_SIZE = 8;

export interface OffsetPosition {
  offset: bigint;
  position: number;
}

export class OffsetIndex extends AbstractIndex {
  private lastRelative = -1;

  constructor(path: string, baseOffset: bigint, maxIndexSize: number, files?: OpenIndexFiles) {
    super(path, baseOffset, maxIndexSize, OFFSET_INDEX_ENTRY_SIZE, files);
  }

  /** Offset of the last entry, or baseOffset when empty. */
  get lastOffset(): bigint {
    return this.lastRelative < 0 ? this.baseOffset : this.baseOffset + BigInt(this.lastRelative);
  }

  /** Position of the last entry, or 0 when empty. */
  get lastPosition(): number {
    return this.count === 0 ? 0 : this.data.readInt32BE((this.count - 1) * OFFSET_INDEX_ENTRY_SIZE + 4);
  }

  /** Relative offset of `offset`, or throws if it does not fit an int32. */
  relativeOffset(offset: bigint): number {
    const rel = offset - this.baseOffset;
    if (rel < 0n || rel > BigInt(INT32_MAX)) {
      throw new RangeError(`Offset ${offset} cannot be stored relative to base offset ${this.baseOffset} in ${this.path}`);
    }
    return Number(rel);
  }

  canAppendOffset(offset: bigint): boolean {
    const rel = offset - this.baseOffset;
    return rel >= 0n && rel <= BigInt(INT32_MAX);
  }

  /** Appends an entry; `offset` must be larger than the last one and the index not full. */
  append(offset: bigint, position: number): void {
    const rel = this.relativeOffset(offset);
    if (this.count > 0 && rel <= this.lastRelative) {
      throw new CorruptIndexError(`Attempt to append offset ${offset} to ${this.path}, not larger than the last offset ${this.lastOffset}`);
    }
    if (this.isFull) throw new RangeError(`Attempt to append to a full index ${this.path} (${this.count} entries)`);
    const at = this.reserveEntry();
    const b = this.data;
    b.writeInt32BE(rel, at);
    b.writeInt32BE(position, at + 4);
    this.commitEntry();
    this.lastRelative = rel;
  }

  /** The largest entry whose offset is <= target, or (baseOffset, 0) if there is none. */
  lookup(target: bigint): OffsetPosition {
    const slot = this.slotFor(target);
    if (slot < 0) return { offset: this.baseOffset, position: 0 };
    return this.entry(slot);
  }

  /** Position of the largest entry whose offset is <= target, or 0 (no allocation). */
  lookupPosition(target: bigint): number {
    const slot = this.slotFor(target);
    return slot < 0 ? 0 : this.data.readInt32BE(slot * OFFSET_INDEX_ENTRY_SIZE + 4);
  }

  entry(slot: number): OffsetPosition {
    if (slot < 0 || slot >= this.count) throw new RangeError(`Slot ${slot} out of range in ${this.path} (${this.count} entries)`);
    const b = this.data;
    const at = slot * OFFSET_INDEX_ENTRY_SIZE;
    return { offset: this.baseOffset + BigInt(b.readInt32BE(at)), position: b.readInt32BE(at + 4) };
  }

  /**
   * Kafka's fetchUpperBoundOffset: the offset of the first entry at or after file position
   * `position` (a batch not read when a read ends there), or null when there is none.
   */
  fetchUpperBoundOffset(position: number): bigint | null {
    const b = this.data;
    const slot = this.smallestUpperBoundSlot(position, (s) => b.readInt32BE(s * OFFSET_INDEX_ENTRY_SIZE + 4));
    return slot < 0 || slot >= this.count ? null : this.entry(slot).offset;
  }

  /** Removes every entry whose offset is >= `offset`. */
  truncateTo(offset: bigint): void {
    const rel = offset - this.baseOffset;
    if (rel <= 0n) return this.truncateToEntries(0);
    if (rel > BigInt(INT32_MAX)) return;
    const b = this.data;
    this.truncateToEntries(this.smallestUpperBoundSlot(Number(rel), (s) => b.readInt32BE(s * OFFSET_INDEX_ENTRY_SIZE)));
  }

  private slotFor(target: bigint): number {
    const rel = target - this.baseOffset;
    if (rel < 0n) return -1;
    const key = rel > BigInt(INT32_MAX) ? INT32_MAX : Number(rel);
    const b = this.data;
    return this.largestLowerBoundSlot(key, (s) => b.readInt32BE(s * OFFSET_INDEX_ENTRY_SIZE));
  }

  protected onEntriesChanged(): void {
    this.lastRelative = this.count === 0 ? -1 : this.data.readInt32BE((this.count - 1) * OFFSET_INDEX_ENTRY_SIZE);
  }

  /** Entries strictly increasing in offset and position, positions inside the log. */
  protected sanityCheck(logSize: number | undefined): void {
    const b = this.data;
    let prevRel = -1;
    let prevPos = -1;
    for (let i = 0; i < this.count; i++) {
      const rel = b.readInt32BE(i * OFFSET_INDEX_ENTRY_SIZE);
      const pos = b.readInt32BE(i * OFFSET_INDEX_ENTRY_SIZE + 4);
      if (rel <= prevRel) this.corrupt(`entry ${i} has relative offset ${rel}, not larger than the previous ${prevRel}`);
      if (pos <= prevPos) this.corrupt(`entry ${i} has position ${pos}, not larger than the previous ${prevPos}`);
      if (logSize !== undefined && pos >= logSize) this.corrupt(`entry ${i} has position ${pos} beyond the log size ${logSize}`);
      prevRel = rel;
      prevPos = pos;
    }
  }
}
