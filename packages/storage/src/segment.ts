/**
 * LogSegment: one `<baseOffset 20 digits>.log` file with its `.index`, `.timeindex` and (once a
 * transaction aborts in it) `.txnindex`.
 *
 * Works on batch headers only: appends index every index.interval.bytes, reads translate an offset
 * to a file position (index lookup + forward header scan) and return a FileRecordsSlice instead of
 * bytes, recovery re-validates batches (magic, sizes, CRC, offsets) and rebuilds the indexes.
 */
import { join } from 'node:path';
import type { Logger } from 'pino';
import { INT32_MAX } from './abstract-index.js';
import {
  BASE_OFFSET_OFFSET,
  BATCH_LENGTH_OFFSET,
  LAST_OFFSET_DELTA_OFFSET,
  LOG_OVERHEAD,
  isBatchCrcValid,
  searchBatchForTimestamp,
  type TimestampAndOffset,
} from './batch-header.js';
import {
  INDEX_FILE_SUFFIX,
  LOG_FILE_SUFFIX,
  TIME_INDEX_FILE_SUFFIX,
  TXN_INDEX_FILE_SUFFIX,
  filenamePrefixFromOffset,
  type Clock,
  type LogConfig,
} from './config.js';
import { CorruptIndexError, CorruptRecordError } from './errors.js';
import { FileRecords, FileRecordsSlice, ScanStatus } from './file-records.js';
import { OffsetIndex } from './offset-index.js';
import type { OpenIndexFiles } from './open-index-files.js';
import { TimeIndex } from './time-index.js';
import { TransactionIndex } from './transaction-index.js';

/** Where an offset lives: the offset, the base offset of its segment and the batch position in it. */
export interface LogOffsetMetadata {
  messageOffset: bigint;
  segmentBaseOffset: bigint;
  relativePositionInSegment: number;
}

/** Result of a read: where it started and the slice of file to send. */
export interface FetchDataInfo {
  fetchOffsetMetadata: LogOffsetMetadata;
  records: FileRecordsSlice;
  /** True when maxBytes cut the first batch (minOneMessage was false). */
  firstEntryIncomplete: boolean;
}

/** The batch found for an offset: its last offset, position and size. */
export interface LogOffsetPosition {
  baseOffset: bigint;
  lastOffset: bigint;
  position: number;
  size: number;
}

export interface SegmentOptions {
  config: LogConfig;
  clock: Clock;
  logger?: Logger | undefined;
  /** Suffix after `.log` / `.index` / `.timeindex` (e.g. `.deleted`). Default ''. */
  fileSuffix?: string;
  /** The cap on open index descriptors (the LogManager's); default a process-wide one. */
  indexFiles?: OpenIndexFiles | undefined;
}

export interface RollParams {
  messagesSize: number;
  maxTimestampInMessages: number;
  maxOffsetInMessages: bigint;
  now: number;
}

export function segmentFilePaths(dir: string, baseOffset: bigint, suffix = ''): { log: string; index: string; timeIndex: string; txnIndex: string } {
  const p = join(dir, filenamePrefixFromOffset(baseOffset));
  const f = (ext: string) => `${p}${ext}${suffix}`;
  return { log: f(LOG_FILE_SUFFIX), index: f(INDEX_FILE_SUFFIX), timeIndex: f(TIME_INDEX_FILE_SUFFIX), txnIndex: f(TXN_INDEX_FILE_SUFFIX) };
}

const RECOVERY_CHUNK = 1024 * 1024;
const LOOKUP_CHUNK = 8 * 1024;

export class LogSegment {
  private bytesSinceLastIndexEntry = 0;
  private maxTs = -1;
  private offsetOfMaxTs: bigint;
  private maxTsKnown: boolean;
  private rollingBasedTimestamp: number | null = null;
  private rollingBasedTimestampKnown: boolean;
  private created: number;
  private readonly rollJitterMs: number;
  private loadingIndexes: Promise<void> | null = null;
  /** >0 while an operation relies on the indexes staying in memory across awaits. */
  private busy = 0;
  private config: LogConfig;
  private readonly clock: Clock;
  private readonly logger: Logger | undefined;

  private constructor(
    readonly dir: string,
    readonly baseOffset: bigint,
    readonly log: FileRecords,
    readonly offsetIndex: OffsetIndex,
    readonly timeIndex: TimeIndex,
    /** Aborted transactions whose markers are in this segment (`.txnindex`, created on first use). */
    readonly txnIndex: TransactionIndex,
    opts: SegmentOptions,
    fresh: boolean,
  ) {
    this.config = opts.config;
    this.clock = opts.clock;
    this.logger = opts.logger;
    this.created = opts.clock.now();
    this.rollJitterMs = opts.config.segmentJitterMs > 0 ? Math.floor(Math.random() * opts.config.segmentJitterMs) : 0;
    this.offsetOfMaxTs = baseOffset;
    this.maxTsKnown = fresh;
    this.rollingBasedTimestampKnown = fresh;
  }

  /**
   * Creates a new empty segment (replacing leftover files of the same name); indexes are writable
   * but their (empty) files are not kept open until entries are written. With `newDirectory` (the
   * partition directory was just created, so no file can exist) the `.log` is created without a
   * look at what is there, and the index files only when their first entry is written: an empty
   * index and a missing one are the same to the loader (creating files is the cost of a new partition).
   */
  static async create(dir: string, baseOffset: bigint, opts: SegmentOptions, how: { newDirectory?: boolean } = {}): Promise<LogSegment> {
    const paths = segmentFilePaths(dir, baseOffset, opts.fileSuffix ?? '');
    if (how.newDirectory) {
      const seg = new LogSegment(
        dir,
        baseOffset,
        await FileRecords.create(paths.log),
        new OffsetIndex(paths.index, baseOffset, opts.config.maxIndexSize, opts.indexFiles),
        new TimeIndex(paths.timeIndex, baseOffset, opts.config.maxIndexSize, opts.indexFiles),
        new TransactionIndex(paths.txnIndex, baseOffset),
        opts,
        true,
      );
      seg.offsetIndex.startEmpty();
      seg.timeIndex.startEmpty();
      return seg;
    }
    const log = await FileRecords.open(paths.log);
    if (log.sizeInBytes > 0) {
      opts.logger?.warn({ segment: paths.log, bytes: log.sizeInBytes }, 'newly created segment file already exists; emptying it');
      await log.truncateTo(0);
    }
    const seg = new LogSegment(
      dir,
      baseOffset,
      log,
      new OffsetIndex(paths.index, baseOffset, opts.config.maxIndexSize, opts.indexFiles),
      new TimeIndex(paths.timeIndex, baseOffset, opts.config.maxIndexSize, opts.indexFiles),
      new TransactionIndex(paths.txnIndex, baseOffset),
      opts,
      true,
    );
    await Promise.all([seg.offsetIndex.createEmpty(), seg.timeIndex.createEmpty()]);
    return seg;
  }

  /** Opens an existing segment; its indexes load lazily (sanity-checked, rebuilt when corrupt or missing). */
  static async open(dir: string, baseOffset: bigint, opts: SegmentOptions): Promise<LogSegment> {
    const paths = segmentFilePaths(dir, baseOffset, opts.fileSuffix ?? '');
    const log = await FileRecords.open(paths.log);
    return new LogSegment(
      dir,
      baseOffset,
      log,
      new OffsetIndex(paths.index, baseOffset, opts.config.maxIndexSize, opts.indexFiles),
      new TimeIndex(paths.timeIndex, baseOffset, opts.config.maxIndexSize, opts.indexFiles),
      new TransactionIndex(paths.txnIndex, baseOffset),
      opts,
      false,
    );
  }

  get size(): number {
    return this.log.sizeInBytes;
  }

  updateConfig(config: LogConfig): void {
    this.config = config;
  }

  // ---- indexes ----------------------------------------------------------------------------

  /** Loads the indexes if needed; a missing or corrupt index is rebuilt from the log. */
  ensureIndexes(): Promise<void> {
    if (this.offsetIndex.isLoaded && this.timeIndex.isLoaded) return Promise.resolve();
    this.loadingIndexes ??= this.loadIndexes().finally(() => {
      this.loadingIndexes = null;
    });
    return this.loadingIndexes;
  }

  private async loadIndexes(): Promise<void> {
    try {
      // an empty segment's missing index files are empty indexes (see `create`), not rebuilt (which writes them)
      const empty = this.log.sizeInBytes === 0;
      if (!this.offsetIndex.isLoaded) await this.offsetIndex.load(this.log.sizeInBytes, empty);
      if (!this.timeIndex.isLoaded) await this.timeIndex.load(undefined, empty);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (!(err instanceof CorruptIndexError) && code !== 'ENOENT') throw err;
      const fields = { segment: this.log.path, baseOffset: this.baseOffset.toString(), reason: (err as Error).message };
      const msg = code === 'ENOENT' ? 'index file missing; rebuilding indexes' : 'corrupt index found; rebuilding indexes';
      // a segment too small for an index entry may never have had its index files (see `create`)
      if (code === 'ENOENT' && this.log.sizeInBytes <= this.config.indexIntervalBytes) this.logger?.debug(fields, msg);
      else this.logger?.warn(fields, msg);
      await this.rebuildIndexes();
    }
    if (!this.maxTsKnown) this.adoptTimeIndexMax();
  }

  /** Rebuilds both indexes from the batch headers of the log (no CRC checks; see `recover`). */
  async rebuildIndexes(): Promise<void> {
    await this.offsetIndex.reset();
    await this.timeIndex.reset();
    this.maxTs = -1;
    this.offsetOfMaxTs = this.baseOffset;
    let sinceLast = 0;
    let prevLast = this.baseOffset - 1n;
    const scanner = this.log.scan(0, { chunkSize: RECOVERY_CHUNK });
    for (;;) {
      const st = await scanner.next();
      if (st !== ScanStatus.BATCH) {
        if (st !== ScanStatus.END) {
          this.logger?.warn(
            { segment: this.log.path, position: scanner.position, status: st, reason: scanner.corruption },
            'stopped index rebuild at an invalid batch',
          );
        }
        break;
      }
      if (scanner.baseOffset <= prevLast || !this.canConvertToRelativeOffset(scanner.lastOffset)) {
        this.logger?.warn({ segment: this.log.path, position: scanner.position }, 'stopped index rebuild at a batch with out-of-order offsets');
        break;
      }
      prevLast = scanner.lastOffset;
      if (scanner.maxTimestamp > this.maxTs) {
        this.maxTs = scanner.maxTimestamp;
        this.offsetOfMaxTs = scanner.lastOffset;
      }
      if (sinceLast > this.config.indexIntervalBytes) {
        this.offsetIndex.append(scanner.lastOffset, scanner.position);
        this.timeIndex.maybeAppend(this.maxTs, this.offsetOfMaxTs, true);
        sinceLast = 0;
      }
      sinceLast += scanner.size;
    }
    this.timeIndex.maybeAppend(this.maxTs, this.offsetOfMaxTs, true);
    this.bytesSinceLastIndexEntry = sinceLast;
    this.maxTsKnown = true;
    await this.persistIndexes();
  }

  private async persistIndexes(): Promise<void> {
    for (const idx of [this.offsetIndex, this.timeIndex]) {
      if (idx.isWritable) await idx.writeDirty();
      else await idx.writeAll();
    }
  }

  private adoptTimeIndexMax(): void {
    const last = this.timeIndex.lastEntry;
    this.maxTs = last.timestamp;
    this.offsetOfMaxTs = last.offset;
    this.maxTsKnown = true;
  }

  /** Drops the in-memory indexes of an inactive segment (reloaded on next use). */
  releaseIndexes(): void {
    if (this.offsetIndex.isWritable || this.timeIndex.isWritable || this.loadingIndexes || this.busy > 0) return;
    this.offsetIndex.release();
    this.timeIndex.release();
  }

  get indexesLoaded(): boolean {
    return this.offsetIndex.isLoaded && this.timeIndex.isLoaded;
  }

  /** Makes this the active segment: indexes loaded and writable (their files open on first write). */
  async makeActive(): Promise<void> {
    this.busy++;
    try {
      await this.ensureIndexes();
      this.offsetIndex.openWritable();
      this.timeIndex.openWritable();
    } finally {
      this.busy--;
    }
    await this.loadFirstBatchTimestamp();
    if (this.bytesSinceLastIndexEntry === 0 && this.size > 0) {
      // Bytes after the last index entry (approximate after a clean reopen, as in Kafka).
      this.bytesSinceLastIndexEntry = Math.max(0, this.size - this.offsetIndex.lastPosition);
    }
  }

  /** The segment stops being active: final time index entry, indexes trimmed and closed. */
  async onBecomeInactive(): Promise<void> {
    if (this.timeIndex.isLoaded && this.maxTsKnown) this.timeIndex.maybeAppend(this.maxTs, this.offsetOfMaxTs, true);
    await this.offsetIndex.closeWritable();
    await this.timeIndex.closeWritable();
  }

  // ---- timestamps --------------------------------------------------------------------------

  /** Largest batch maxTimestamp seen (-1 if none). */
  async maxTimestampSoFar(): Promise<TimestampAndOffset> {
    if (!this.maxTsKnown) {
      const wasLoaded = this.indexesLoaded;
      await this.ensureIndexes();
      if (!this.maxTsKnown) this.adoptTimeIndexMax();
      if (!wasLoaded) this.releaseIndexes();
    }
    return { timestamp: this.maxTs, offset: this.offsetOfMaxTs };
  }

  /** What time retention compares: the largest record timestamp, else the file's mtime. */
  async largestTimestamp(): Promise<number> {
    const { timestamp } = await this.maxTimestampSoFar();
    return timestamp >= 0 ? timestamp : this.log.lastModified();
  }

  private async loadFirstBatchTimestamp(): Promise<void> {
    if (this.rollingBasedTimestampKnown) return;
    if (this.size > 0) {
      const scanner = this.log.scan(0, { chunkSize: 64 });
      if ((await scanner.next()) === ScanStatus.BATCH) this.rollingBasedTimestamp = scanner.maxTimestamp;
    }
    this.rollingBasedTimestampKnown = true;
  }

  /** Time used for segment.ms: record time since the first batch when known, else wall time since creation. */
  timeWaitedForRoll(now: number, messageTimestamp: number): number {
    const t = this.rollingBasedTimestamp;
    return t !== null && t >= 0 ? messageTimestamp - t : now - this.created;
  }

  shouldRoll(p: RollParams): boolean {
    const reachedRollMs = this.timeWaitedForRoll(p.now, p.maxTimestampInMessages) > this.config.segmentMs - this.rollJitterMs;
    return (
      this.size > this.config.segmentBytes - p.messagesSize ||
      (this.size > 0 && reachedRollMs) ||
      this.offsetIndex.isFull ||
      this.timeIndex.isFull ||
      !this.canConvertToRelativeOffset(p.maxOffsetInMessages)
    );
  }

  canConvertToRelativeOffset(offset: bigint): boolean {
    const rel = offset - this.baseOffset;
    return rel >= 0n && rel <= BigInt(INT32_MAX);
  }

  // ---- append / read -----------------------------------------------------------------------

  /**
   * Appends validated, offset-assigned batches. Adds an offset index entry (keyed by the batch's
   * last offset) and a time index entry for each batch that starts more than index.interval.bytes
   * after the previous entry (kept in memory until a flush, see below). One positional write for
   * the records; a promise only when that write is asynchronous.
   */
  append(largestOffset: bigint, largestTimestamp: number, offsetOfMaxTimestamp: bigint, records: Buffer): void | Promise<void> {
    if (records.length === 0) return;
    const physicalPosition = this.log.sizeInBytes;
    if (physicalPosition === 0) {
      this.rollingBasedTimestamp = largestTimestamp;
      this.rollingBasedTimestampKnown = true;
    }
    if (!this.canConvertToRelativeOffset(largestOffset)) {
      throw new RangeError(`Offset ${largestOffset} is out of range for segment with base offset ${this.baseOffset}`);
    }
    if (largestTimestamp > this.maxTs) {
      this.maxTs = largestTimestamp;
      this.offsetOfMaxTs = offsetOfMaxTimestamp;
    }
    let pos = 0;
    while (pos < records.length) {
      const size = records.readInt32BE(pos + BATCH_LENGTH_OFFSET) + LOG_OVERHEAD;
      if (this.bytesSinceLastIndexEntry > this.config.indexIntervalBytes) {
        const lastOffset = records.readBigInt64BE(pos + BASE_OFFSET_OFFSET) + BigInt(records.readInt32BE(pos + LAST_OFFSET_DELTA_OFFSET));
        this.offsetIndex.append(lastOffset, physicalPosition + pos);
        this.timeIndex.maybeAppend(this.maxTs, this.offsetOfMaxTs);
        this.bytesSinceLastIndexEntry = 0;
      }
      this.bytesSinceLastIndexEntry += size;
      pos += size;
    }
    // Index entries stay in memory (dirty) and reach the file on flush, roll and close: a small
    // positional write per append cost as much as the append itself. After a crash, segments past
    // the recovery point (the last flush) have their indexes rebuilt, so nothing relies on them.
    const written = this.log.append(records);
    if (typeof written !== 'number') return written.then(() => undefined);
  }

  /**
   * The first batch whose last offset is >= `offset`, scanning from the index position (or
   * `startingPosition` if later); null if the segment holds no such batch.
   */
  async translateOffset(offset: bigint, startingPosition = 0): Promise<LogOffsetPosition | null> {
    await this.ensureIndexes();
    const pos = Math.max(this.offsetIndex.lookupPosition(offset), startingPosition);
    const scanner = this.log.scan(pos, { chunkSize: LOOKUP_CHUNK });
    for (;;) {
      const st = await scanner.next();
      if (st === ScanStatus.BATCH) {
        if (scanner.lastOffset >= offset) {
          return { baseOffset: scanner.baseOffset, lastOffset: scanner.lastOffset, position: scanner.position, size: scanner.size };
        }
        continue;
      }
      if (st === ScanStatus.CORRUPT) throw new CorruptRecordError(`Corrupt batch in ${this.log.path}: ${scanner.corruption ?? ''}`);
      return null;
    }
  }

  /**
   * Reads from the batch holding `startOffset`: at most `maxSize` bytes (but the whole first batch
   * when `minOneMessage`, KIP-74) and never past `maxPosition`. Returns null when the segment holds
   * nothing at or after `startOffset`.
   */
  async read(startOffset: bigint, maxSize: number, maxPosition = this.size, minOneMessage = false): Promise<FetchDataInfo | null> {
    if (maxSize < 0) throw new RangeError(`Invalid max size ${maxSize} for log read from segment ${this.log.path}`);
    const found = await this.translateOffset(startOffset);
    if (!found) return null;
    return this.readAt(found, startOffset, maxSize, maxPosition, minOneMessage);
  }

  /** `read` from a batch already located (its position and size known, e.g. from a recent append). */
  readAt(found: LogOffsetPosition, startOffset: bigint, maxSize: number, maxPosition = this.size, minOneMessage = false): FetchDataInfo {
    if (maxSize < 0) throw new RangeError(`Invalid max size ${maxSize} for log read from segment ${this.log.path}`);
    const fetchOffsetMetadata: LogOffsetMetadata = {
      messageOffset: startOffset,
      segmentBaseOffset: this.baseOffset,
      relativePositionInSegment: found.position,
    };
    const adjustedMaxSize = minOneMessage ? Math.max(maxSize, found.size) : maxSize;
    if (adjustedMaxSize === 0) return { fetchOffsetMetadata, records: FileRecordsSlice.EMPTY, firstEntryIncomplete: false };
    const fetchSize = Math.min(maxPosition - found.position, adjustedMaxSize);
    return {
      fetchOffsetMetadata,
      records: this.log.slice(found.position, fetchSize),
      firstEntryIncomplete: adjustedMaxSize < found.size,
    };
  }

  /** Offset after the last batch (baseOffset when empty). */
  async readNextOffset(): Promise<bigint> {
    await this.ensureIndexes();
    const scanner = this.log.scan(this.offsetIndex.lastPosition, { chunkSize: LOOKUP_CHUNK * 8 });
    let next = this.baseOffset;
    while ((await scanner.next()) === ScanStatus.BATCH) next = scanner.lastOffset + 1n;
    return next;
  }

  /** ListOffsets by time: first record with timestamp >= target and offset >= startingOffset. */
  async findOffsetByTimestamp(target: number, startingOffset: bigint): Promise<TimestampAndOffset | null> {
    await this.ensureIndexes();
    const fromIndex = this.timeIndex.lookup(target);
    const pos = this.offsetIndex.lookupPosition(fromIndex.offset > startingOffset ? fromIndex.offset : startingOffset);
    const scanner = this.log.scan(pos, { chunkSize: LOOKUP_CHUNK * 8 });
    for (;;) {
      const st = await scanner.next();
      if (st === ScanStatus.CORRUPT) throw new CorruptRecordError(`Corrupt batch in ${this.log.path}: ${scanner.corruption ?? ''}`);
      if (st !== ScanStatus.BATCH) return null;
      if (scanner.maxTimestamp < target || scanner.lastOffset < startingOffset) continue;
      const bytes = await scanner.batchBytes();
      if (!bytes) return null;
      const found = searchBatchForTimestamp(bytes, target, startingOffset);
      if (found) return found;
    }
  }

  // ---- recovery / truncation ---------------------------------------------------------------

  /**
   * Re-validates every batch (size within maxMessageSize, magic 2, CRC, offsets increasing and
   * within this segment), rebuilds both indexes and truncates the file after the last valid batch.
   * `onBatch` sees each valid batch's (partitionLeaderEpoch, baseOffset). Returns the bytes truncated.
   */
  async recover(maxMessageSize: number, onBatch?: (partitionLeaderEpoch: number, baseOffset: bigint) => void): Promise<number> {
    this.busy++;
    try {
      return await this.recoverPinned(maxMessageSize, onBatch);
    } finally {
      this.busy--;
    }
  }

  private async recoverPinned(maxMessageSize: number, onBatch?: (partitionLeaderEpoch: number, baseOffset: bigint) => void): Promise<number> {
    await this.offsetIndex.reset();
    await this.timeIndex.reset();
    this.maxTs = -1;
    this.offsetOfMaxTs = this.baseOffset;
    this.maxTsKnown = true;
    let validBytes = 0;
    let lastIndexEntry = 0;
    let prevLast = this.baseOffset - 1n;
    let problem: string | null = null;
    const scanner = this.log.scan(0, { chunkSize: RECOVERY_CHUNK, maxBatchSize: maxMessageSize });
    for (;;) {
      const st = await scanner.next();
      if (st === ScanStatus.END) break;
      if (st === ScanStatus.PARTIAL) {
        problem = `incomplete batch at position ${scanner.position}`;
        break;
      }
      if (st === ScanStatus.CORRUPT) {
        problem = scanner.corruption;
        break;
      }
      const bytes = await scanner.batchBytes();
      if (!bytes) {
        problem = `batch at position ${scanner.position} could not be read completely`;
        break;
      }
      if (!isBatchCrcValid(bytes, 0, bytes.length)) {
        problem = `batch at position ${scanner.position} fails its CRC check`;
        break;
      }
      if (scanner.baseOffset <= prevLast || !this.canConvertToRelativeOffset(scanner.lastOffset)) {
        problem = `batch at position ${scanner.position} has offsets ${scanner.baseOffset}..${scanner.lastOffset} out of order or out of range (previous last offset ${prevLast}, base offset ${this.baseOffset})`;
        break;
      }
      if (scanner.maxTimestamp > this.maxTs) {
        this.maxTs = scanner.maxTimestamp;
        this.offsetOfMaxTs = scanner.lastOffset;
      }
      if (validBytes - lastIndexEntry > this.config.indexIntervalBytes) {
        this.offsetIndex.append(scanner.lastOffset, validBytes);
        this.timeIndex.maybeAppend(this.maxTs, this.offsetOfMaxTs, true);
        lastIndexEntry = validBytes;
      }
      validBytes += scanner.size;
      prevLast = scanner.lastOffset;
      onBatch?.(scanner.partitionLeaderEpoch, scanner.baseOffset);
    }
    if (problem !== null) {
      this.logger?.debug({ segment: this.log.path, validBytes, reason: problem }, 'recovery stopped at an invalid batch');
    }
    const truncated = await this.log.truncateTo(validBytes);
    this.timeIndex.maybeAppend(this.maxTs, this.offsetOfMaxTs, true);
    this.bytesSinceLastIndexEntry = validBytes - lastIndexEntry;
    if (validBytes === 0) {
      this.rollingBasedTimestamp = null;
      this.rollingBasedTimestampKnown = true;
    } else {
      this.rollingBasedTimestampKnown = false;
    }
    await this.persistIndexes();
    return truncated;
  }

  /**
   * Removes the batch holding `offset` and everything after it; returns the bytes removed. The
   * segment's indexes stay loaded (the caller makes it the active segment).
   */
  async truncateTo(offset: bigint): Promise<number> {
    this.busy++;
    try {
      return await this.truncateToPinned(offset);
    } finally {
      this.busy--;
    }
  }

  private async truncateToPinned(offset: bigint): Promise<number> {
    const mapping = await this.translateOffset(offset);
    await this.ensureIndexes();
    this.offsetIndex.truncateTo(offset);
    this.timeIndex.truncateTo(offset);
    await this.txnIndex.truncateTo(offset);
    const removed = mapping ? await this.log.truncateTo(mapping.position) : 0;
    if (this.log.sizeInBytes === 0) {
      this.created = this.clock.now();
      this.rollingBasedTimestamp = null;
      this.rollingBasedTimestampKnown = true;
    }
    this.bytesSinceLastIndexEntry = 0;
    this.adoptTimeIndexMax();
    await this.persistIndexes();
    return removed;
  }

  // ---- lifecycle ---------------------------------------------------------------------------

  /** fsync of the log and both index files. */
  async flush(): Promise<void> {
    await this.log.flush();
    await this.offsetIndex.flush();
    await this.timeIndex.flush();
    await this.txnIndex.flush();
  }

  async close(): Promise<void> {
    if (this.timeIndex.isWritable && this.maxTsKnown) this.timeIndex.maybeAppend(this.maxTs, this.offsetOfMaxTs, true);
    await this.offsetIndex.close();
    await this.timeIndex.close();
    await this.txnIndex.close();
    await this.log.close();
  }

  /** Renames the three files, replacing suffix `oldSuffix` with `newSuffix` (e.g. '' → '.deleted'). */
  async changeFileSuffixes(oldSuffix: string, newSuffix: string): Promise<void> {
    const from = segmentFilePaths(this.dir, this.baseOffset, oldSuffix);
    const to = segmentFilePaths(this.dir, this.baseOffset, newSuffix);
    if (this.log.path !== from.log) throw new Error(`Segment ${this.log.path} does not have suffix '${oldSuffix}'`);
    await this.log.renameTo(to.log);
    await this.offsetIndex.renameTo(to.index);
    await this.timeIndex.renameTo(to.timeIndex);
    await this.txnIndex.renameTo(to.txnIndex);
  }

  /** Closes and removes the files. */
  async deleteFiles(): Promise<void> {
    await this.offsetIndex.deleteFile();
    await this.timeIndex.deleteFile();
    await this.txnIndex.deleteIfExists();
    await this.log.deleteFile();
  }

  toString(): string {
    return `LogSegment(baseOffset=${this.baseOffset}, size=${this.size}, path=${this.log.path})`;
  }
}
