/**
 * A cap on the index file descriptors a broker keeps open (Samsa's `log.index.open.files.max`).
 *
 * Kafka memory-maps index files and closes the file once mapped, so an index costs it no
 * descriptor; Samsa writes indexes through descriptors, and one per `.index` and `.timeindex` of
 * every active segment would need 20,000 for 10,000 partitions. Indexes therefore open their file
 * only when they write to it (Kafka's LazyIndex) and register the descriptor here. Past the cap,
 * opening one more first closes the least recently used idle descriptor (no operation in flight);
 * when none is idle the opener waits until one is. Nothing is lost by closing: an index keeps its
 * entries in memory and writes pending ones through a new descriptor on its next flush, and an
 * fsync through that descriptor covers writes made through the old one (fsync works on the file).
 */

/** An index that holds a descriptor registered here. */
export interface IndexFileHolder {
  /** No operation on the descriptor in flight or about to start. */
  readonly isIdle: boolean;
  /** Closes the descriptor (the holder reopens it on its next use). */
  evictFile(): Promise<void>;
}

export const DEFAULT_MAX_OPEN_INDEX_FILES = 4096;

export class OpenIndexFiles {
  /** Holders with an open descriptor, least recently used first (a Set keeps insertion order). */
  private readonly lru = new Set<IndexFileHolder>();
  /** Descriptors open, being opened or being closed. */
  private reserved = 0;
  private readonly waiters: (() => void)[] = [];
  /** Evictions under way on behalf of waiters. */
  private evicting = 0;
  private evictedTotal = 0;

  constructor(readonly maxOpen = DEFAULT_MAX_OPEN_INDEX_FILES) {
    if (!Number.isInteger(maxOpen) || maxOpen < 1) throw new RangeError(`The cap on open index files must be a positive integer, got ${maxOpen}`);
  }

  /** Index descriptors open or being opened or closed. */
  get openCount(): number {
    return this.reserved;
  }

  /** Descriptors closed to stay under the cap since this was created. */
  get evictions(): number {
    return this.evictedTotal;
  }

  /**
   * Reserves a descriptor before opening one: immediate (undefined) under the cap, else resolves
   * once an idle descriptor was closed for it. Every reservation ends with `release` (not opened, or closed by its holder).
   */
  reserve(): Promise<void> | undefined {
    if (this.reserved < this.maxOpen) {
      this.reserved++;
      return undefined;
    }
    return new Promise<void>((resolve) => {
      this.waiters.push(resolve);
      this.evictForWaiters();
    });
  }

  /** The reserved descriptor is open and held by `holder`. */
  opened(holder: IndexFileHolder): void {
    this.lru.add(holder);
  }

  /** A reserved descriptor was not opened after all, or its holder closed it (see `detach`). */
  release(): void {
    this.freeSlot();
  }

  /** `holder` used its descriptor: it becomes the most recently used. */
  touch(holder: IndexFileHolder): void {
    if (this.lru.delete(holder)) this.lru.add(holder);
  }

  /** `holder`'s last operation finished: it may be closed for a waiting opener. */
  idle(): void {
    if (this.waiters.length > this.evicting) this.evictForWaiters();
  }

  /**
   * `holder` is about to close its descriptor itself (segment rolled, closed or deleted): it is no
   * longer a candidate for eviction. Returns whether it held one; if so, `release` once it is closed.
   */
  detach(holder: IndexFileHolder): boolean {
    return this.lru.delete(holder);
  }

  private evictForWaiters(): void {
    if (this.waiters.length <= this.evicting) return;
    for (const holder of this.lru) {
      if (!holder.isIdle) continue;
      this.lru.delete(holder);
      this.evicting++;
      this.evictedTotal++;
      const done = (): void => {
        this.evicting--;
        this.freeSlot();
      };
      // A failed close still gives the descriptor up (FdFile forgets it); the holder reopens on use.
      holder.evictFile().then(done, done);
      if (this.waiters.length <= this.evicting) return;
    }
  }

  /** A descriptor was closed: hand its slot to the first waiter, else give it back. */
  private freeSlot(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.reserved--;
  }
}

/** The cap shared by indexes created without one (tests, tools). */
export const defaultOpenIndexFiles = new OpenIndexFiles();
