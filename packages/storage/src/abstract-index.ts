/**
 * Shared machinery of the offset and time indexes.
 *
 * Kafka memory-maps index files; Node cannot, so the entries live in a Buffer and every change is
 * written to the file with positional writes (`writeDirty`) when the segment is flushed, rolled or
 * closed. The index of the active segment is writable: its file is preallocated to `maxIndexSize`
 * (sparse) and trimmed to the used size when the segment is rolled or closed. As Kafka's LazyIndex,
 * the file is opened only when it must be written (not for appends, which stay in memory, nor for
 * lookups), through `OpenIndexFiles`, which caps the descriptors open across the broker and may
 * close an idle one at any time (reopened on next use). Indexes of inactive segments are read
 * lazily, sanity-checked on load, and may be released from memory (`release`) and reloaded later.
 */
import { constants } from 'node:fs';
import { readFile, rename, truncate, unlink, writeFile } from 'node:fs/promises';
import { CorruptIndexError } from './errors.js';
import { FdFile } from './fd-file.js';
import { defaultOpenIndexFiles, type IndexFileHolder, type OpenIndexFiles } from './open-index-files.js';

export const INT32_MAX = 0x7fffffff;

/** Capacity of an index's buffer when its first entry is added (an empty index holds none). */
const MIN_CAPACITY = 4096;
/** Shared by every empty index (never written: the first entry allocates a buffer). */
const EMPTY = Buffer.alloc(0);

export abstract class AbstractIndex implements IndexFileHolder {
  protected buf: Buffer | null = null;
  protected count = 0;
  /** Open descriptor of a writable index (null until needed, or closed by the cap). */
  private fh: FdFile | null = null;
  private opening: Promise<FdFile> | null = null;
  /** Operations using (or about to use) `fh`. */
  private users = 0;
  /** The active segment's index: entries may be appended and the file is kept preallocated. */
  private writable = false;
  /** The file was extended to the preallocation size since it became writable. */
  private preallocated = false;
  /** Written or resized since the last fsync. */
  private unsynced = false;
  private dirtyFrom = Number.POSITIVE_INFINITY;
  private dirtyTo = 0;
  /** Loaded from or trimmed on disk and not reopened: no room for more entries. */
  private sealed = false;
  private filePath: string;
  private maxSize: number;
  private readonly files: OpenIndexFiles;

  protected constructor(
    path: string,
    readonly baseOffset: bigint,
    maxIndexSize: number,
    readonly entrySize: number,
    files: OpenIndexFiles = defaultOpenIndexFiles,
  ) {
    this.filePath = path;
    this.maxSize = maxIndexSize;
    this.files = files;
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
  /** The index of the active segment (its file is opened lazily, see `isFileOpen`). */
  get isWritable(): boolean {
    return this.writable;
  }
  /** A descriptor of the file is open (or being opened). */
  get isFileOpen(): boolean {
    return this.fh !== null || this.opening !== null;
  }
  /** For OpenIndexFiles: nothing uses the descriptor now. */
  get isIdle(): boolean {
    return this.users === 0;
  }
  /** Bytes of memory holding the entries (0 for an empty or released index). */
  get memoryBytes(): number {
    return this.buf?.length ?? 0;
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

  /**
   * Starts an empty writable index: the file is created empty (replacing a leftover) and closed;
   * it is opened and preallocated when entries are first written.
   */
  async createEmpty(): Promise<void> {
    await this.closeHandle();
    this.startEmpty();
    await writeFile(this.filePath, EMPTY);
  }

  /** `createEmpty` for a file that cannot exist (a new partition directory): the file is created with the first entry written. */
  startEmpty(): void {
    this.buf = EMPTY;
    this.count = 0;
    this.sealed = false;
    this.clearDirty();
    this.onEntriesChanged();
    this.writable = true;
    this.preallocated = false;
  }

  /**
   * Reads the file into memory and sanity-checks it (ENOENT and CorruptIndexError propagate). With
   * `missingIsEmpty` (the segment's log is empty) a missing file is an empty index: a segment made
   * in a new partition directory gets its index files with their first entry (`LogSegment.create`).
   */
  async load(logSize?: number, missingIsEmpty = false): Promise<void> {
    let content: Buffer;
    try {
      content = await readFile(this.filePath);
    } catch (err) {
      if (!missingIsEmpty || (err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      content = EMPTY;
    }
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

  /**
   * The segment became the active one: entries may be appended. Nothing is opened now; the file is
   * opened and preallocated on the first write, and in-memory changes not yet written go with it.
   */
  openWritable(): void {
    if (this.writable) return;
    if (!this.buf) throw new Error(`Index ${this.filePath} must be loaded before it is opened for writing`);
    this.writable = true;
    this.sealed = false;
    this.preallocated = false;
  }

  /** Changes the preallocation size (segment.index.bytes changed). */
  async resize(maxIndexSize: number): Promise<void> {
    this.maxSize = maxIndexSize;
    if (!this.writable) return;
    if (this.fh) {
      await this.withFile((fh) => fh.truncate(this.preallocationSize()));
      this.unsynced = true;
    } else {
      this.preallocated = false; // done by the next open
    }
  }

  /** Writes pending in-memory changes to the file of a writable index (no fsync). */
  writeDirty(): Promise<void> | undefined {
    if (this.dirtyFrom >= this.dirtyTo || !this.writable || !this.buf) return undefined;
    const from = this.dirtyFrom;
    const len = Math.min(this.dirtyTo, this.buf.length) - from;
    this.clearDirty();
    if (len <= 0) return undefined;
    const buf = this.buf;
    this.unsynced = true;
    const fh = this.fh;
    let written: Promise<void>;
    if (fh) {
      // Already open: the same single positional write as before, pinned against the cap's eviction.
      this.users++;
      this.files.touch(this);
      written = fh.writeFully(buf, from, len, from).finally(() => this.unpin());
    } else {
      written = this.withFile((f) => f.writeFully(buf, from, len, from));
    }
    // A failed write (or open) leaves the range pending for the next flush.
    return written.catch((err: unknown) => {
      this.markDirty(from, from + len);
      throw err;
    });
  }

  /** Writes pending changes and fsyncs them (nothing is opened when nothing changed). */
  async flush(): Promise<void> {
    await this.writeDirty();
    if (!this.writable || !this.unsynced) return;
    this.unsynced = false;
    try {
      await this.withFile((fh) => fh.sync());
    } catch (err) {
      this.unsynced = true;
      throw err;
    }
  }

  /** Writes pending changes, shrinks the file to the valid entries and closes it. */
  async closeWritable(): Promise<void> {
    if (!this.writable) return;
    await this.writeDirty();
    if (this.fh || this.opening) await this.withFile((fh) => fh.truncate(this.sizeInBytes));
    else if (this.preallocated) await truncate(this.filePath, this.sizeInBytes);
    this.writable = false;
    this.preallocated = false;
    this.sealed = true;
    await this.closeHandle();
  }

  /** Persists the whole in-memory index (used for inactive indexes, whose file is not kept open). */
  async writeAll(): Promise<void> {
    if (this.writable) {
      this.markDirty(0, this.sizeInBytes);
      await this.writeDirty();
    } else {
      await writeFile(this.filePath, this.data.subarray(0, this.sizeInBytes));
    }
    this.clearDirty();
  }

  /** Drops the in-memory copy of an inactive index (reloaded by `load`). */
  release(): void {
    if (this.writable) return;
    this.buf = null;
  }

  /** Removes all entries. */
  async reset(): Promise<void> {
    if (this.buf) this.buf.fill(0, 0, this.sizeInBytes);
    else this.buf = EMPTY;
    this.count = 0;
    this.sealed = false;
    this.clearDirty();
    this.onEntriesChanged();
    if (this.writable && this.isFileOpen) {
      await this.withFile(async (fh) => {
        await fh.truncate(0);
        await fh.truncate(this.preallocationSize());
      });
      this.unsynced = true;
    } else {
      await writeFile(this.filePath, EMPTY);
      this.preallocated = false;
      if (this.writable) this.unsynced = true;
    }
  }

  async close(): Promise<void> {
    await this.closeWritable();
    await this.closeHandle();
    this.buf = null;
  }

  async renameTo(path: string): Promise<void> {
    if (this.opening) await this.opening.catch(() => undefined);
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
    this.writable = false;
    this.preallocated = false;
    this.buf = null;
    await unlink(this.filePath).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
  }

  /** For OpenIndexFiles: closes the idle descriptor; the next write reopens the file. */
  evictFile(): Promise<void> {
    const fh = this.fh;
    this.fh = null;
    return fh ? fh.close() : Promise.resolve();
  }

  // ---- helpers for subclasses -------------------------------------------------------------

  /** Makes room for one more entry and returns its byte position. */
  protected reserveEntry(): number {
    let b = this.data;
    const need = (this.count + 1) * this.entrySize;
    if (b.length < need) {
      const grown = Buffer.alloc(Math.max(need, Math.min(Math.max(b.length * 2, MIN_CAPACITY), this.roundDown(this.maxSize))));
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

  private preallocationSize(): number {
    return Math.max(this.roundDown(this.maxSize), this.sizeInBytes);
  }

  /** Runs `fn` on the open descriptor, opening the file first when needed (pinned meanwhile). */
  private async withFile<T>(fn: (fh: FdFile) => Promise<T>): Promise<T> {
    this.users++;
    try {
      let fh = this.fh;
      if (fh) this.files.touch(this);
      else fh = await (this.opening ??= this.openFile());
      return await fn(fh);
    } finally {
      this.unpin();
    }
  }

  private unpin(): void {
    if (--this.users === 0) this.files.idle();
  }

  private async openFile(): Promise<FdFile> {
    try {
      await this.files.reserve();
      let fh: FdFile | null = null;
      try {
        fh = await FdFile.open(this.filePath, constants.O_RDWR | constants.O_CREAT);
        if (!this.preallocated) {
          await fh.truncate(this.preallocationSize());
          this.preallocated = true;
          this.unsynced = true;
        }
      } catch (err) {
        await fh?.close().catch(() => undefined);
        this.files.release();
        throw err;
      }
      this.fh = fh;
      this.files.opened(this);
      return fh;
    } finally {
      this.opening = null;
    }
  }

  private async closeHandle(): Promise<void> {
    if (this.opening) await this.opening.catch(() => undefined);
    const fh = this.fh;
    if (!fh) return;
    this.fh = null;
    const held = this.files.detach(this);
    try {
      await fh.close();
    } finally {
      if (held) this.files.release();
    }
  }
}
