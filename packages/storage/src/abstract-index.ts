/**
 * Shared machinery of the offset and time indexes.
 *
 * Kafka memory-maps index files; Node cannot, so the entries live in a Buffer and every change is
 * written to the file with positional writes (`writeDirty`) when the segment is flushed, rolled or
 * closed. While a segment is active its index files are preallocated to `maxIndexSize`
 * (sparse) and kept open; when the segment is rolled or closed they are trimmed to the used size and
 * closed. Indexes of inactive segments are loaded lazily, sanity-checked on load, and may be released
 * from memory (`release`) and reloaded later.
 */
import { constants } from 'node:fs';
import { readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { CorruptIndexError } from './errors.js';
import { FdFile } from './fd-file.js';

export const INT32_MAX = 0x7fffffff;

const MIN_CAPACITY = 4096;

export abstract class AbstractIndex {
  protected buf: Buffer | null = null;
  protected count = 0;
  private fh: FdFile | null = null;
  private dirtyFrom = Number.POSITIVE_INFINITY;
  private dirtyTo = 0;
  /** Loaded from or trimmed on disk and not reopened: no room for more entries. */
  private sealed = false;
  private filePath: string;
  private maxSize: number;

  protected constructor(
    path: string,
    readonly baseOffset: bigint,
    maxIndexSize: number,
    readonly entrySize: number,
  ) {
    this.filePath = path;
    this.maxSize = maxIndexSize;
  }

  get path(): string {
    return this.filePath;
  }
  get entries(): number {
    return this.count;
  }
  get maxIndexSize(): number {
    return this.maxSize;
  }
  /** Preallocated capacity; an index loaded or trimmed and not reopened for writing is full (as Kafka's). */
  get maxEntries(): number {
    return this.sealed ? this.count : Math.floor(this.maxSize / this.entrySize);
  }
  get isFull(): boolean {
    return this.count >= this.maxEntries;
  }
  get isLoaded(): boolean {
    return this.buf !== null;
  }
  get isWritable(): boolean {
    return this.fh !== null;
  }
  /** Bytes of valid entries. */
  get sizeInBytes(): number {
    return this.count * this.entrySize;
  }

  /** Checks loaded entries; throws CorruptIndexError. `logSize` bounds positions where relevant. */
  protected abstract sanityCheck(logSize: number | undefined): void;
  /** Refreshes cached "last entry" state after entries were loaded, truncated or reset. */
  protected abstract onEntriesChanged(): void;

  protected get data(): Buffer {
    const b = this.buf;
    if (b === null) throw new Error(`Index ${this.filePath} is not loaded`);
    return b;
  }

  /** Starts an empty index: truncates the file and preallocates it to maxIndexSize. */
  async createEmpty(): Promise<void> {
    await this.closeHandle();
    this.buf = Buffer.alloc(MIN_CAPACITY - (MIN_CAPACITY % this.entrySize));
    this.count = 0;
    this.sealed = false;
    this.clearDirty();
    this.onEntriesChanged();
    this.fh = await FdFile.open(this.filePath, 'w+');
    await this.fh.truncate(this.roundDown(this.maxSize));
  }

  /** Reads the file into memory and sanity-checks it (ENOENT and CorruptIndexError propagate). */
  async load(logSize?: number): Promise<void> {
    const content = await readFile(this.filePath);
    if (content.length % this.entrySize !== 0) {
      throw new CorruptIndexError(`Index file ${this.filePath} has size ${content.length}, not a multiple of ${this.entrySize}`);
    }
    this.buf = content;
    this.count = content.length / this.entrySize;
    this.sealed = true;
    this.clearDirty();
    try {
      this.sanityCheck(logSize);
    } catch (err) {
      this.buf = null;
      this.count = 0;
      throw err;
    }
    this.onEntriesChanged();
  }

  /** Opens the file for appends and preallocates it (the segment became the active one). */
  async openWritable(): Promise<void> {
    if (this.fh) return;
    if (!this.buf) throw new Error(`Index ${this.filePath} must be loaded before it is opened for writing`);
    const fh = await FdFile.open(this.filePath, constants.O_RDWR | constants.O_CREAT);
    this.fh = fh;
    this.sealed = false;
    await fh.truncate(Math.max(this.roundDown(this.maxSize), this.sizeInBytes));
    // Changes made in memory while the file was closed (e.g. a truncation) are written now.
    await this.writeDirty();
  }

  /** Changes the preallocation size (segment.index.bytes changed). */
  async resize(maxIndexSize: number): Promise<void> {
    this.maxSize = maxIndexSize;
    if (this.fh) await this.fh.truncate(Math.max(this.roundDown(maxIndexSize), this.sizeInBytes));
  }

  /** Writes pending in-memory changes to the file (no fsync). */
  writeDirty(): Promise<void> | undefined {
    if (this.dirtyFrom >= this.dirtyTo || !this.fh || !this.buf) return undefined;
    const from = this.dirtyFrom;
    const len = Math.min(this.dirtyTo, this.buf.length) - from;
    this.clearDirty();
    if (len <= 0) return undefined;
    const fh = this.fh;
    const buf = this.buf;
    return fh.writeFully(buf, from, len, from);
  }

  async flush(): Promise<void> {
    await this.writeDirty();
    await this.fh?.sync();
  }

  /** Writes pending changes, shrinks the file to the valid entries and closes it. */
  async closeWritable(): Promise<void> {
    if (!this.fh) return;
    await this.writeDirty();
    await this.fh.truncate(this.sizeInBytes);
    this.sealed = true;
    await this.closeHandle();
  }

  /** Persists the whole in-memory index to a closed (inactive) index file. */
  async writeAll(): Promise<void> {
    if (this.fh) {
      this.markDirty(0, this.sizeInBytes);
      await this.writeDirty();
      await this.fh.truncate(Math.max(this.roundDown(this.maxSize), this.sizeInBytes));
    } else {
      await writeFile(this.filePath, this.data.subarray(0, this.sizeInBytes));
    }
    this.clearDirty();
  }

  /** Drops the in-memory copy of a closed index (reloaded by `load`). */
  release(): void {
    if (this.fh) return;
    this.buf = null;
  }

  /** Removes all entries. */
  async reset(): Promise<void> {
    if (this.buf) this.buf.fill(0, 0, this.sizeInBytes);
    else this.buf = Buffer.alloc(MIN_CAPACITY - (MIN_CAPACITY % this.entrySize));
    this.count = 0;
    this.sealed = false;
    this.clearDirty();
    this.onEntriesChanged();
    if (this.fh) {
      await this.fh.truncate(0);
      await this.fh.truncate(this.roundDown(this.maxSize));
    } else {
      await writeFile(this.filePath, Buffer.alloc(0));
    }
  }

  async close(): Promise<void> {
    await this.closeWritable();
    this.buf = null;
  }

  async renameTo(path: string): Promise<void> {
    try {
      await rename(this.filePath, path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    this.filePath = path;
    this.fh?.setPath(path);
  }

  async deleteFile(): Promise<void> {
    await this.closeHandle();
    this.buf = null;
    await unlink(this.filePath).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
  }

  // ---- helpers for subclasses -------------------------------------------------------------

  /** Makes room for one more entry and returns its byte position. */
  protected reserveEntry(): number {
    let b = this.data;
    const need = (this.count + 1) * this.entrySize;
    if (b.length < need) {
      const grown = Buffer.alloc(Math.max(need, Math.min(b.length * 2, this.roundDown(this.maxSize)), need));
      b.copy(grown, 0, 0, this.sizeInBytes);
      this.buf = b = grown;
    }
    return this.count * this.entrySize;
  }

  /** Commits the entry written at `reserveEntry()`'s position. */
  protected commitEntry(): void {
    const pos = this.count * this.entrySize;
    this.markDirty(pos, pos + this.entrySize);
    this.count++;
  }

  /** Keeps the first `n` entries, zeroing the rest (in memory and, via writeDirty, on disk). */
  protected truncateToEntries(n: number): void {
    if (n >= this.count) return;
    const from = n * this.entrySize;
    const to = this.sizeInBytes;
    this.data.fill(0, from, to);
    this.markDirty(from, to);
    this.count = n;
    this.onEntriesChanged();
  }

  /** Largest slot whose key is <= target (keys ascending), or -1. */
  protected largestLowerBoundSlot(target: number, keyAt: (slot: number) => number): number {
    if (this.count === 0 || keyAt(0) > target) return -1;
    let lo = 0;
    let hi = this.count - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (keyAt(mid) <= target) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** Smallest slot whose key is >= target (keys ascending), or `entries`. */
  protected smallestUpperBoundSlot(target: number, keyAt: (slot: number) => number): number {
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (keyAt(mid) < target) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  protected corrupt(why: string): never {
    throw new CorruptIndexError(`Corrupt index found, index file (${this.filePath}) ${why}`);
  }

  private markDirty(from: number, to: number): void {
    if (from < this.dirtyFrom) this.dirtyFrom = from;
    if (to > this.dirtyTo) this.dirtyTo = to;
  }

  private clearDirty(): void {
    this.dirtyFrom = Number.POSITIVE_INFINITY;
    this.dirtyTo = 0;
  }

  private roundDown(size: number): number {
    return size - (size % this.entrySize);
  }

  private async closeHandle(): Promise<void> {
    const fh = this.fh;
    this.fh = null;
    await fh?.close();
  }
}
