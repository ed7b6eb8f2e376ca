/**
 * Leader epoch cache (Kafka's LeaderEpochFileCache): for each leader epoch, the first offset the
 * leader of that epoch wrote. Persisted in `leader-epoch-checkpoint`:
 *
 *   0            version
 *   2            number of entries
 *   0 0          epoch startOffset
 *   3 1250
 *
 * Entries are strictly increasing in both epoch and start offset. Every change is written
 * atomically (temp file, fsync, rename, fsync dir).
 */
import type { Logger } from 'pino';
import { CheckpointFile, type CheckpointFormat } from './checkpoint.js';

/**
 * Background checkpoint writes (`assignInBackground`) running at once, process-wide: becoming leader
 * of thousands of partitions queues thousands of file replacements, which must not fill the libuv
 * threadpool ahead of the reads and writes that serve requests.
 */
const BACKGROUND_WRITE_CONCURRENCY = 2;
let backgroundRunning = 0;
/** Waiting writes, in order (a Set: one jumps the queue in O(1) when its log needs it now). */
const backgroundQueue = new Set<() => void>();

/**
 * Queues `write`; `now()` starts it at once, past the queue (a log that closes or flushes needs it);
 * `drop()` takes it out of the queue unstarted (done resolves) and says whether it did.
 */
function runInBackground(write: () => Promise<void>): { done: Promise<void>; now: () => void; drop: () => boolean } {
  let start = (): void => undefined;
  let drop = (): boolean => false;
  const done = new Promise<void>((resolve, reject) => {
    let started = false;
    drop = (): boolean => {
      if (started) return false;
      started = true;
      backgroundQueue.delete(start);
      resolve();
      return true;
    };
    start = (): void => {
      if (started) return;
      started = true;
      backgroundQueue.delete(start);
      backgroundRunning++;
      write()
        .then(resolve, reject)
        .finally(() => {
          backgroundRunning--;
          const next = backgroundQueue.values().next();
          if (!next.done) next.value();
        });
    };
    if (backgroundRunning < BACKGROUND_WRITE_CONCURRENCY) start();
    else backgroundQueue.add(start);
  });
  return { done, now: () => start(), drop: () => drop() };
}

/** Background leader-epoch checkpoint writes running or waiting, process-wide (the log manager's shutdown line reports them). */
export function backgroundEpochWrites(): number {
  return backgroundRunning + backgroundQueue.size;
}

export interface EpochEntry {
  epoch: number;
  startOffset: bigint;
}

export const UNDEFINED_EPOCH = -1;
export const UNDEFINED_EPOCH_OFFSET = -1n;

export const LEADER_EPOCH_CHECKPOINT_VERSION = 0;

export const EPOCH_ENTRY_FORMAT: CheckpointFormat<EpochEntry> = {
  toLine: (e) => `${e.epoch} ${e.startOffset}`,
  fromLine: (line) => {
    const parts = line.split(/\s+/);
    if (parts.length !== 2) return null;
    const [epoch, offset] = parts as [string, string];
    if (!/^-?\d+$/.test(epoch) || !/^-?\d+$/.test(offset)) return null;
    return { epoch: Number(epoch), startOffset: BigInt(offset) };
  },
};

export interface EpochEndOffset {
  epoch: number;
  endOffset: bigint;
}

export class LeaderEpochFileCache {
  private entries: EpochEntry[];
  /** The latest background write (rejected if it failed; replaced by the next one). */
  private background: Promise<void> | null = null;
  /** A background write is queued and not started: it will write the entries as they are then. */
  private backgroundQueued = false;
  /** Starts the queued background write at once (set while it waits in the process-wide queue). */
  private startQueued: (() => void) | undefined;
  /** Drops the queued background write (set while it waits). */
  private dropQueued: (() => boolean) | undefined;
  /** Entries assigned with `assignHeld` whose write waits for `releaseHeldWrite` (the log's first record). */
  private held = false;

  private constructor(
    private readonly file: CheckpointFile<EpochEntry>,
    entries: EpochEntry[],
    private readonly logger: Logger | undefined,
  ) {
    this.entries = entries;
  }

  /** Loads `path` (missing file = empty cache). */
  static async load(path: string, logger?: Logger): Promise<LeaderEpochFileCache> {
    const file = new CheckpointFile(path, LEADER_EPOCH_CHECKPOINT_VERSION, EPOCH_ENTRY_FORMAT);
    const raw = await file.read();
    const cache = new LeaderEpochFileCache(file, [], logger);
    // Re-apply through assign so a hand-edited file cannot break monotonicity.
    for (const e of raw) cache.assignInMemory(e.epoch, e.startOffset);
    return cache;
  }

  /** The cache of a new log (its directory was just created: there is no file to read). */
  static empty(path: string, logger?: Logger): LeaderEpochFileCache {
    return new LeaderEpochFileCache(new CheckpointFile(path, LEADER_EPOCH_CHECKPOINT_VERSION, EPOCH_ENTRY_FORMAT), [], logger);
  }

  get path(): string {
    return this.file.path;
  }

  /** A copy of the entries, oldest first. */
  epochEntries(): EpochEntry[] {
    return this.entries.map((e) => ({ ...e }));
  }

  get isEmpty(): boolean {
    return this.entries.length === 0;
  }

  get latestEntry(): EpochEntry | undefined {
    return this.entries.at(-1);
  }

  get latestEpoch(): number | undefined {
    return this.entries.at(-1)?.epoch;
  }

  get earliestEntry(): EpochEntry | undefined {
    return this.entries[0];
  }

  /**
   * Records that `epoch` starts at `startOffset`. A no-op if `epoch` is already the latest and does
   * not move back; entries with epoch >= `epoch` or start offset >= `startOffset` are removed first.
   * Returns whether the cache changed (it was then persisted).
   */
  async assign(epoch: number, startOffset: bigint): Promise<boolean> {
    if (!this.assignInMemory(epoch, startOffset)) return false;
    this.held = false;
    // fsynced in the background (KAFKA-15046): becoming leader of thousands of partitions must not
    // wait for thousands of fsyncs, and recovery assigns the epochs of the batches it finds again
    await this.file.write(this.entries, 'deferred');
    return true;
  }

  /**
   * `assign` for a new leadership (LeaderAndIsr): the entry is in the cache at once, the checkpoint
   * is written in the background (several assigns before the write starts share it). A leader of
   * thousands of partitions answers the controller without a file replaced per partition; the log
   * waits for the write (`written`) before its recovery point moves and when it closes, so a crash
   * before the write loses no entry that recovery could not learn again from the batches above the
   * recovery point. Returns whether the cache changed.
   */
  assignInBackground(epoch: number, startOffset: bigint): boolean {
    if (!this.assignInMemory(epoch, startOffset)) return false;
    this.held = false;
    this.queueBackgroundWrite();
    return true;
  }

  /** Queues a background write of the entries (none if one is queued and not started: it writes them). */
  private queueBackgroundWrite(): void {
    if (this.backgroundQueued) return;
    this.backgroundQueued = true;
    const dequeued = (): void => {
      this.backgroundQueued = false;
      this.startQueued = undefined;
      this.dropQueued = undefined;
    };
    const {
      done: write,
      now,
      drop,
    } = runInBackground(() => {
      dequeued();
      return this.file.write(this.entries, 'deferred');
    });
    this.startQueued = now;
    this.dropQueued = () => {
      if (!drop()) return false;
      dequeued();
      return true;
    };
    this.background = write;
    write.then(
      () => {
        if (this.background === write) this.background = null;
      },
      (err: unknown) => this.logger?.error({ err, path: this.file.path }, 'background leader epoch checkpoint write failed'),
    );
  }

  /**
   * `assignInBackground` for a log holding no records: the entry is in the cache at once, and its
   * checkpoint is written only once the log gains a record (`releaseHeldWrite`), or by any other write
   * of the file before that. Until then the entry describes no record: after a crash the next
   * leadership assigns its epoch at the same offset again, and a follower truncates no further than
   * its empty log. A broker becoming leader of thousands of new partitions writes no file for them
   * until they are used. Returns whether the cache changed.
   */
  assignHeld(epoch: number, startOffset: bigint): boolean {
    if (!this.assignInMemory(epoch, startOffset)) return false;
    // a write already queued writes the entries as they are when it starts, this one included
    if (!this.backgroundQueued) this.held = true;
    return true;
  }

  /** Whether an entry waits for the log's first record to be written (`assignHeld`). */
  get hasHeldWrite(): boolean {
    return this.held;
  }

  /** The log gained records: the held entries are written in the background (`written()` waits for it). */
  releaseHeldWrite(): void {
    if (!this.held) return;
    this.held = false;
    this.queueBackgroundWrite();
  }

  /** Forgets a held write without writing (the log closes holding no records). Returns whether one was held. */
  dropHeldWrite(): boolean {
    const was = this.held;
    this.held = false;
    return was;
  }

  /**
   * Takes a queued background write out of the queue without writing (a log holding no records
   * closes: every entry of an empty log starts at its log end offset and describes no record, and
   * the next leadership assigns its epoch at that offset, replacing them). Returns whether one was
   * queued. A write already started is left to finish.
   */
  dropQueuedWrite(): boolean {
    return this.dropQueued?.() ?? false;
  }

  /** Resolves once the background writes so far are done (rejects if the latest failed); a queued one starts now. */
  written(): Promise<void> {
    this.startQueued?.();
    return this.background ?? Promise.resolve();
  }

  private assignInMemory(epoch: number, startOffset: bigint): boolean {
    if (epoch < 0 || startOffset < 0n) throw new RangeError(`Invalid leader epoch entry (epoch ${epoch}, start offset ${startOffset})`);
    const latest = this.latestEntry;
    if (latest && !(epoch !== latest.epoch || startOffset < latest.startOffset)) return false;
    const removed: EpochEntry[] = [];
    while (this.entries.length > 0) {
      const last = this.entries.at(-1) as EpochEntry;
      if (last.epoch >= epoch || last.startOffset >= startOffset) removed.unshift(this.entries.pop() as EpochEntry);
      else break;
    }
    if (removed.length > 1 || (removed.length === 1 && removed[0]?.startOffset !== startOffset)) {
      this.logger?.warn(
        { epoch, startOffset: startOffset.toString(), removed: removed.map((e) => `${e.epoch}@${e.startOffset}`) },
        'new leader epoch entry truncated conflicting entries',
      );
    }
    this.entries.push({ epoch, startOffset });
    return true;
  }

  /**
   * OffsetForLeaderEpoch: the largest epoch <= `requestedEpoch` and the offset where the next epoch
   * starts (LEO for the latest epoch); (-1, -1) when the epoch is undefined or newer than any known.
   */
  endOffsetFor(requestedEpoch: number, logEndOffset: bigint): EpochEndOffset {
    if (requestedEpoch === UNDEFINED_EPOCH) return { epoch: UNDEFINED_EPOCH, endOffset: UNDEFINED_EPOCH_OFFSET };
    const latest = this.latestEntry;
    if (latest && latest.epoch === requestedEpoch) return { epoch: requestedEpoch, endOffset: logEndOffset };
    const higherIdx = this.entries.findIndex((e) => e.epoch > requestedEpoch);
    const higher = higherIdx >= 0 ? this.entries[higherIdx] : undefined;
    if (!higher) return { epoch: UNDEFINED_EPOCH, endOffset: UNDEFINED_EPOCH_OFFSET };
    const floor = higherIdx > 0 ? this.entries[higherIdx - 1] : undefined;
    if (!floor) return { epoch: requestedEpoch, endOffset: higher.startOffset };
    return { epoch: floor.epoch, endOffset: higher.startOffset };
  }

  /** The epoch of the leader that wrote `offset` (largest entry starting at or before it). */
  epochForOffset(offset: bigint): number | undefined {
    let epoch: number | undefined;
    for (const e of this.entries) {
      if (e.startOffset > offset) break;
      epoch = e.epoch;
    }
    return epoch;
  }

  /** Removes entries starting at or after `endOffset` (log truncated to `endOffset`). */
  async truncateFromEnd(endOffset: bigint): Promise<void> {
    if (endOffset < 0n) return;
    const before = this.entries.length;
    while (this.entries.length > 0 && (this.entries.at(-1) as EpochEntry).startOffset >= endOffset) this.entries.pop();
    if (this.entries.length !== before) await this.flush();
  }

  /**
   * The log now starts at `startOffset`: entries starting at or before it collapse into one entry
   * (the latest of them) moved to `startOffset`.
   */
  async truncateFromStart(startOffset: bigint): Promise<void> {
    let n = 0;
    while (n < this.entries.length && (this.entries[n] as EpochEntry).startOffset <= startOffset) n++;
    if (n === 0) return;
    const lastRemoved = this.entries[n - 1] as EpochEntry;
    if (n === 1 && lastRemoved.startOffset === startOffset) return;
    this.entries.splice(0, n, { epoch: lastRemoved.epoch, startOffset });
    await this.flush();
  }

  async clearAndFlush(): Promise<void> {
    this.entries = [];
    await this.flush();
  }

  async flush(): Promise<void> {
    this.held = false;
    await this.file.write(this.entries);
    // the file now holds every entry: a failed background write no longer matters (one still queued does)
    if (!this.backgroundQueued) this.background = null;
  }
}
