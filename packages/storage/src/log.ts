/**
 * Log: one partition's replica on disk (Kafka's UnifiedLog + LocalLog without tiered storage). Its
 * producer state (idempotent and transactional producers, `producer-state-manager.ts`) is checked
 * and updated under the same lock as appends, and rebuilt when the log loads or is truncated;
 * aborted transactions go to the segments' `.txnindex` files (`log-transactions.ts`), and the last
 * stable offset bounds read_committed reads.
 *
 * Segments are kept in an array ordered by base offset (copy-on-write, so readers iterate a stable
 * snapshot while appends, rolls, retention and truncation replace it). Mutations run one at a time
 * behind an async lock; reads do not take it.
 */
import { topicPartitionKey, type TopicPartition } from '@samsa/protocol';
import { pino, type Logger } from 'pino';
import { BASE_OFFSET_OFFSET, BATCH_LENGTH_OFFSET, LOG_OVERHEAD, PARTITION_LEADER_EPOCH_OFFSET, analyzeRecords, assignOffsetsInPlace } from './batch-header.js';
import { fsyncDirectory } from './checkpoint.js';
import { CLEANED_FILE_SUFFIX, SWAP_FILE_SUFFIX, TimestampType, systemClock, validateLogConfig, type Clock, type LogConfig } from './config.js';
import { LogClosedError, OffsetOutOfRangeError, OffsetsOutOfOrderError, RecordBatchTooLargeError, UnexpectedAppendOffsetError } from './errors.js';
import { FileRecordsSlice } from './file-records.js';
import { UNDEFINED_EPOCH_OFFSET, type EpochEndOffset, type LeaderEpochFileCache } from './leader-epoch-cache.js';
import { LogLoader, maxBig, minBig, type LoadedLog } from './loader.js';
import { duplicateAppendInfo, emptyAppendInfo, type LogAppendInfo, type LogOptions, type TruncationListener } from './log-types.js';
import { ListOffsetsTimestamp, fetchOffsetByTimestamp, type OffsetForTimestamp } from './list-offsets.js';
import { planRetention } from './retention.js';
import { SegmentDeleter } from './segment-deleter.js';
import { planSegmentReplacement } from './segment-swap.js';
import { LogSegment, type FetchDataInfo, type LogOffsetMetadata } from './segment.js';
import { RecentBatches } from './recent-batches.js';
import type { OpenIndexFiles } from './open-index-files.js';
import { ProducerStateManager, type LeaderAppendOrigin } from './producer-state-manager.js';
import { abortedTransactionsForRead, collectAbortedTransactions, floorSegment, indexCompletedTxns } from './log-transactions.js';
import type { AbortedTxn } from './transaction-index.js';

export type { LogAppendInfo, LogOptions, TruncationListener };
export { ListOffsetsTimestamp, type OffsetForTimestamp };

const silentLogger: Logger = pino({ enabled: false });

export class Log {
  private segs: LogSegment[];
  private startOffset: bigint;
  private nextOffsetMeta: LogOffsetMetadata;
  private recoveryPt: bigint;
  private hw: bigint;
  private cfg: LogConfig;
  private closed = false;
  private lockTail: Promise<unknown> = Promise.resolve();
  private flushChain: Promise<void> = Promise.resolve();
  /** Work that must be on disk before the log's next record (`beforeNextAppend`); null once done. */
  private beforeAppend: (() => Promise<void>) | null = null;
  /** The run of `beforeAppend` in progress (an append and `prepareAppends` share it). */
  private beforeAppendRun: Promise<void> | null = null;
  private readonly deleter: SegmentDeleter;
  private boundCache: { segments: LogSegment[]; meta: LogOffsetMetadata } | null = null;
  private readonly recent = new RecentBatches();
  private loadedInactive: LogSegment[] = [];
  private lastFlush: number;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly maxLoadedInactive: number;
  private readonly truncationListener: TruncationListener | undefined;
  /** Bumped by every truncation: a cleaning started before one must not swap its segments in. */
  private truncations = 0;

  /** The leader epoch cache (`leader-epoch-checkpoint`). */
  readonly epochs: LeaderEpochFileCache;
  /** The cap on open index descriptors its segments use (undefined: the process-wide one). */
  readonly indexFiles: OpenIndexFiles | undefined;

  private constructor(
    private dirPath: string,
    readonly topicPartition: TopicPartition,
    loaded: LoadedLog,
    opts: LogOptions,
    clock: Clock,
    logger: Logger,
    /** Idempotent producers' epochs and last batches (`<offset>.snapshot` files). */
    readonly producerState: ProducerStateManager,
  ) {
    this.segs = loaded.segments;
    this.startOffset = loaded.logStartOffset;
    this.recoveryPt = loaded.recoveryPoint;
    this.epochs = loaded.leaderEpochCache;
    this.cfg = opts.config;
    this.clock = clock;
    this.log = logger;
    this.maxLoadedInactive = opts.maxLoadedInactiveSegments ?? 2;
    this.truncationListener = opts.truncationListener;
    this.indexFiles = opts.indexFiles;
    const active = this.activeSegment;
    this.nextOffsetMeta = { messageOffset: loaded.nextOffset, segmentBaseOffset: active.baseOffset, relativePositionInSegment: active.size };
    this.hw = this.clampHighWatermark(opts.highWatermark ?? this.startOffset);
    producerState.onHighWatermarkUpdated(this.hw);
    this.lastFlush = clock.now();
    this.deleter = new SegmentDeleter(logger, () => this.flushChain);
  }

  /** Loads (and if needed recovers) the partition directory. */
  static async open(opts: LogOptions): Promise<Log> {
    validateLogConfig(opts.config);
    const clock = opts.clock ?? systemClock;
    const logger = (opts.logger ?? silentLogger).child({ topic: opts.topicPartition.topic, partition: opts.topicPartition.partition });
    const load = opts.newDirectory ? LogLoader.createNew : LogLoader.load;
    const loaded = await load({
      dir: opts.dir,
      topicPartition: opts.topicPartition,
      config: opts.config,
      clock,
      logger,
      recoveryPoint: opts.recoveryPoint ?? 0n,
      logStartOffset: opts.logStartOffset,
      hadCleanShutdown: opts.hadCleanShutdown ?? false,
      indexFiles: opts.indexFiles,
    });
    const stateOptions = { dir: opts.dir, name: topicPartitionKey(opts.topicPartition), logger, now: () => clock.now() };
    const producerState = opts.newDirectory
      ? ProducerStateManager.empty(stateOptions, loaded.logStartOffset)
      : await ProducerStateManager.load(
          stateOptions,
          loaded.segments,
          loaded.logStartOffset,
          loaded.nextOffset,
          // recovered segments (the last ones) get their transaction indexes rebuilt
          loaded.recoveredSegments > 0 ? loaded.segments[Math.max(0, loaded.segments.length - loaded.recoveredSegments)]?.baseOffset : undefined,
        );
    const log = new Log(opts.dir, opts.topicPartition, loaded, opts, clock, logger, producerState);
    const loadedFields = {
      logStartOffset: log.logStartOffset.toString(),
      logEndOffset: log.logEndOffset.toString(),
      segments: log.numberOfSegments,
      recoveredSegments: loaded.recoveredSegments,
      truncatedBytes: loaded.truncatedBytes,
    };
    // a log made in a new directory has nothing loaded: its creator logs it ('created log', as Kafka's
    // "Created log for partition"), and a LeaderAndIsr creating 10,000 partitions writes no 10,000 more lines
    if (opts.newDirectory) logger.debug(loadedFields, 'loaded log');
    else logger.info(loadedFields, 'loaded log');
    return log;
  }

  // ---- state -------------------------------------------------------------------------------

  get dir(): string {
    return this.dirPath;
  }
  get name(): string {
    return topicPartitionKey(this.topicPartition);
  }
  get config(): LogConfig {
    return this.cfg;
  }
  get logStartOffset(): bigint {
    return this.startOffset;
  }
  /** LEO: the offset the next appended record gets. */
  get logEndOffset(): bigint {
    return this.nextOffsetMeta.messageOffset;
  }
  get logEndOffsetMetadata(): LogOffsetMetadata {
    return { ...this.nextOffsetMeta };
  }
  get recoveryPoint(): bigint {
    return this.recoveryPt;
  }
  get highWatermark(): bigint {
    return this.hw;
  }
  /** Kafka's lastStableOffset: the first unstable offset when below the high watermark, else the high watermark. */
  get lastStableOffset(): bigint {
    const first = this.producerState.firstUnstableOffset;
    return first !== null && first < this.hw ? first : this.hw;
  }
  get lastFlushTime(): number {
    return this.lastFlush;
  }
  get activeSegment(): LogSegment {
    return this.segs.at(-1) as LogSegment;
  }
  /** Snapshot of the segments, ascending by base offset. */
  get segments(): readonly LogSegment[] {
    return this.segs;
  }
  get numberOfSegments(): number {
    return this.segs.length;
  }
  /** Bytes in all segments. */
  get size(): number {
    let n = 0;
    for (const s of this.segs) n += s.size;
    return n;
  }
  get latestEpoch(): number | undefined {
    return this.epochs.latestEpoch;
  }
  get isClosed(): boolean {
    return this.closed;
  }
  /** How many truncations the log has seen since it was opened. */
  get truncationCount(): number {
    return this.truncations;
  }

  updateConfig(config: LogConfig): Promise<void> {
    validateLogConfig(config);
    return this.locked(async () => {
      const resize = config.maxIndexSize !== this.cfg.maxIndexSize;
      this.cfg = config;
      for (const s of this.segs) s.updateConfig(config);
      if (resize) {
        await this.activeSegment.offsetIndex.resize(config.maxIndexSize);
        await this.activeSegment.timeIndex.resize(config.maxIndexSize);
      }
    });
  }

  /** Sets the high watermark, clamped to [logStartOffset, logEndOffset]; returns the value set. */
  updateHighWatermark(offset: bigint): bigint {
    this.hw = this.clampHighWatermark(offset);
    this.producerState.onHighWatermarkUpdated(this.hw);
    return this.hw;
  }

  private clampHighWatermark(offset: bigint): bigint {
    return offset < this.startOffset ? this.startOffset : offset > this.logEndOffset ? this.logEndOffset : offset;
  }

  // ---- append ------------------------------------------------------------------------------

  /**
   * Appends records produced to this leader. Checks framing (complete v2 batches, sizes, optionally
   * CRCs — the produce path has already validated them with `@samsa/protocol`), assigns offsets from
   * the LEO and stamps `leaderEpoch` in place (the CRC does not cover those fields), applies
   * LogAppendTime when the topic uses it (CRC recomputed), rolls if needed and writes.
   * Idempotent batches are checked against the producer state first: a duplicate of one of the
   * producer's last 5 batches is not written and the answer carries the original offsets;
   * INVALID_PRODUCER_EPOCH / OUT_OF_ORDER_SEQUENCE_NUMBER are thrown as KafkaError.
   */
  async appendAsLeader(records: Buffer, leaderEpoch: number, opts: { verifyCrc?: boolean; origin?: LeaderAppendOrigin } = {}): Promise<LogAppendInfo> {
    const summary = analyzeRecords(records, { maxMessageBytes: this.cfg.maxMessageBytes, verifyCrc: opts.verifyCrc ?? false });
    if (records.length > this.cfg.segmentBytes) {
      throw new RecordBatchTooLargeError(`Append of ${records.length} bytes to ${this.name} exceeds segment.bytes (${this.cfg.segmentBytes})`);
    }
    return this.locked(async () => {
      this.ensureOpen();
      const firstOffset = this.logEndOffset;
      if (summary.batchCount === 0) return emptyAppendInfo(firstOffset, this.startOffset);
      const duplicate = this.producerState.checkLeaderAppend(records, opts.origin);
      if (duplicate) return duplicateAppendInfo(duplicate, this.startOffset, this.cfg.messageTimestampType === TimestampType.LOG_APPEND_TIME);
      if (this.beforeAppend) await this.runBeforeAppend();
      const logAppendTime = this.cfg.messageTimestampType === TimestampType.LOG_APPEND_TIME ? this.clock.now() : -1;
      const { lastOffset, maxTimestamp: maxTs, offsetOfMaxTimestamp: offsetOfMaxTs } = assignOffsetsInPlace(records, firstOffset, leaderEpoch, logAppendTime);
      // no await where nothing is waited for (a roll, a large write, a new epoch entry): each would
      // cost the append a turn of the microtask queue
      const rolled = this.maybeRoll(records.length, firstOffset, lastOffset, maxTs);
      const segment = rolled instanceof Promise ? await rolled : rolled;
      const position = segment.size;
      const written = segment.append(lastOffset, maxTs, offsetOfMaxTs, records);
      if (written) await written;
      this.recent.record(segment, position, records);
      this.advanceLogEnd(lastOffset + 1n, segment);
      const completed = this.producerState.update(records, this.logEndOffset);
      if (completed) await indexCompletedTxns(segment, completed);
      if (leaderEpoch >= 0 && !this.epochCurrent(leaderEpoch, firstOffset)) await this.epochs.assign(leaderEpoch, firstOffset);
      else this.epochs.releaseHeldWrite();
      return {
        firstOffset,
        lastOffset,
        maxTimestamp: BigInt(maxTs),
        offsetOfMaxTimestamp: offsetOfMaxTs,
        logAppendTime: BigInt(logAppendTime),
        logStartOffset: this.startOffset,
        recordCount: summary.recordCount,
        batchCount: summary.batchCount,
        validBytes: records.length,
      };
    });
  }

  /**
   * Appends records fetched from the leader, keeping their offsets and epochs. The first offset must
   * be >= the LEO (UnexpectedAppendOffsetError) and batches strictly increasing
   * (OffsetsOutOfOrderError); gaps are allowed (compacted leaders). Batch sizes are not limited by
   * max.message.bytes (as in Kafka); CRCs are verified unless `verifyCrc` is false.
   */
  async appendAsFollower(records: Buffer, opts: { verifyCrc?: boolean } = {}): Promise<LogAppendInfo> {
    const summary = analyzeRecords(records, { maxMessageBytes: Number.MAX_SAFE_INTEGER, verifyCrc: opts.verifyCrc ?? true });
    if (summary.batchCount > 0 && !summary.offsetsMonotonic) {
      throw new OffsetsOutOfOrderError(`Out of order offsets found in append to ${this.name}`);
    }
    return this.locked(async () => {
      this.ensureOpen();
      if (summary.batchCount === 0) return emptyAppendInfo(this.logEndOffset, this.startOffset);
      if (summary.firstOffset < this.logEndOffset) {
        throw new UnexpectedAppendOffsetError(
          `Unexpected offset in append to ${this.name}. First offset ${summary.firstOffset} is less than the next offset ${this.logEndOffset}. ` +
            `First 10 offsets in append: ${summary.firstOffset}, last offset in append: ${summary.lastOffset}.`,
          summary.firstOffset,
          summary.lastOffset,
        );
      }
      if (summary.lastOffset - summary.firstOffset > 0x7fffffffn) {
        throw new OffsetsOutOfOrderError(`Append to ${this.name} spans offsets ${summary.firstOffset}..${summary.lastOffset}, more than one segment can hold`);
      }
      if (this.beforeAppend) await this.runBeforeAppend();
      const segment = await this.maybeRoll(records.length, summary.firstOffset, summary.lastOffset, summary.maxTimestamp);
      const position = segment.size;
      await segment.append(summary.lastOffset, summary.maxTimestamp, summary.offsetOfMaxTimestamp, records);
      this.recent.record(segment, position, records);
      this.advanceLogEnd(summary.lastOffset + 1n, segment);
      const completed = this.producerState.update(records, this.logEndOffset);
      if (completed) await indexCompletedTxns(segment, completed);
      for (let pos = 0; pos < records.length;) {
        const epoch = records.readInt32BE(pos + PARTITION_LEADER_EPOCH_OFFSET);
        if (epoch >= 0) await this.maybeAssignEpoch(epoch, records.readBigInt64BE(pos + BASE_OFFSET_OFFSET));
        pos += records.readInt32BE(pos + BATCH_LENGTH_OFFSET) + LOG_OVERHEAD;
      }
      this.epochs.releaseHeldWrite();
      return {
        firstOffset: summary.firstOffset,
        lastOffset: summary.lastOffset,
        maxTimestamp: BigInt(summary.maxTimestamp),
        offsetOfMaxTimestamp: summary.offsetOfMaxTimestamp,
        logAppendTime: -1n,
        logStartOffset: this.startOffset,
        recordCount: summary.recordCount,
        batchCount: summary.batchCount,
        validBytes: records.length,
      };
    });
  }

  /**
   * Runs `task` before the next append writes a record, and at close if the log holds records then.
   * The log manager writes partition.metadata this way: Kafka flushes it before any log data is
   * written, so records that survive a crash have their topic id on disk. A log that never holds a
   * record never runs it.
   */
  beforeNextAppend(task: () => Promise<void>): void {
    const previous = this.beforeAppend;
    this.beforeAppend = previous ? () => previous().then(task) : task;
  }

  /** Runs now what is due before the next append (shared with an append that needs it meanwhile). */
  prepareAppend(): Promise<void> {
    return this.beforeAppend ? this.runBeforeAppend() : Promise.resolve();
  }

  /** Whether nothing is due before the next append (`beforeNextAppend`); `prepareAppends` runs what is. */
  get readyToAppend(): boolean {
    return this.beforeAppend === null;
  }

  private runBeforeAppend(): Promise<void> {
    if (this.beforeAppendRun) return this.beforeAppendRun;
    const task = this.beforeAppend as () => Promise<void>;
    const run = task()
      .then(() => {
        // a failed task stays, to be tried again by the next append; one added meanwhile stays too
        if (this.beforeAppend === task) this.beforeAppend = null;
      })
      .finally(() => {
        this.beforeAppendRun = null;
      });
    this.beforeAppendRun = run;
    return run;
  }

  /**
   * A new leadership's epoch starts at the log end offset (Kafka's maybeAssignEpochStartOffset from
   * makeLeader). Its checkpoint is written in the background (`flush` and `close` wait for it), and a
   * log holding no records writes it only with its first record: a broker made leader of thousands
   * of new partitions replaces no file for them until they are used.
   */
  assignLeaderEpochStart(epoch: number): void {
    if (this.logEndOffset === this.startOffset) this.epochs.assignHeld(epoch, this.logEndOffset);
    else this.epochs.assignInBackground(epoch, this.logEndOffset);
  }

  private async maybeAssignEpoch(epoch: number, startOffset: bigint): Promise<void> {
    if (this.epochCurrent(epoch, startOffset)) return;
    await this.epochs.assign(epoch, startOffset);
  }

  /** Whether the epoch cache's latest entry already covers `epoch` from `startOffset`. */
  private epochCurrent(epoch: number, startOffset: bigint): boolean {
    const latest = this.epochs.latestEntry;
    return latest !== undefined && latest.epoch === epoch && startOffset >= latest.startOffset;
  }

  private advanceLogEnd(next: bigint, segment: LogSegment): void {
    this.nextOffsetMeta = { messageOffset: next, segmentBaseOffset: segment.baseOffset, relativePositionInSegment: segment.size };
  }

  // ---- roll / flush ------------------------------------------------------------------------

  private maybeRoll(messagesSize: number, firstOffset: bigint, maxOffset: bigint, maxTimestamp: number): LogSegment | Promise<LogSegment> {
    const seg = this.activeSegment;
    const now = this.clock.now();
    if (!seg.shouldRoll({ messagesSize, maxTimestampInMessages: maxTimestamp, maxOffsetInMessages: maxOffset, now })) return seg;
    this.log.debug(
      {
        segmentBaseOffset: seg.baseOffset.toString(),
        size: seg.size,
        offsetIndexEntries: seg.offsetIndex.entries,
        timeIndexEntries: seg.timeIndex.entries,
        timeWaitedForRoll: seg.timeWaitedForRoll(now, maxTimestamp),
      },
      'rolling new log segment',
    );
    return this.rollLocked(firstOffset);
  }

  /** Starts a new active segment at max(expectedNextOffset, LEO). */
  roll(expectedNextOffset?: bigint): Promise<LogSegment> {
    return this.locked(() => {
      this.ensureOpen();
      return this.rollLocked(expectedNextOffset);
    });
  }

  private async rollLocked(expectedNextOffset?: bigint): Promise<LogSegment> {
    const newOffset = maxBig(expectedNextOffset ?? 0n, this.logEndOffset);
    const active = this.activeSegment;
    let segs = this.segs;
    if (segs.some((s) => s.baseOffset === newOffset)) {
      if (active.baseOffset === newOffset && active.size === 0) {
        this.log.warn({ offset: newOffset.toString() }, 'rolling a new segment at the base offset of the empty active segment; replacing it');
        segs = segs.slice(0, -1);
        await active.deleteFiles();
      } else {
        throw new Error(`Trying to roll a new log segment for ${this.name} with start offset ${newOffset} while it already exists`);
      }
    } else if (newOffset < active.baseOffset) {
      throw new Error(`Trying to roll a new log segment for ${this.name} with start offset ${newOffset} lower than the active segment's ${active.baseOffset}`);
    } else {
      await active.onBecomeInactive();
    }
    const seg = await LogSegment.create(this.dirPath, newOffset, { config: this.cfg, clock: this.clock, logger: this.log, indexFiles: this.indexFiles });
    this.segs = [...segs, seg];
    await this.producerState.onRoll(newOffset);
    this.nextOffsetMeta = { messageOffset: this.logEndOffset, segmentBaseOffset: seg.baseOffset, relativePositionInSegment: 0 };
    this.log.info({ baseOffset: newOffset.toString() }, 'rolled new log segment');
    // Flush the segments before it in the background (Kafka schedules the same), then move the recovery point.
    void this.flush(newOffset).catch((err: unknown) => this.log.error({ err }, 'background flush after roll failed'));
    return seg;
  }

  /**
   * fsyncs every segment holding offsets in [recoveryPoint, offset) and moves the recovery point to
   * `offset` (default: the LEO, i.e. everything). Flushes run one at a time.
   */
  flush(offset?: bigint): Promise<void> {
    const run = async (): Promise<void> => {
      const upTo = offset ?? this.logEndOffset;
      if (upTo <= this.recoveryPt) return;
      const segs = this.segs;
      for (let i = 0; i < segs.length; i++) {
        const seg = segs[i] as LogSegment;
        const next = segs[i + 1];
        if (seg.baseOffset >= upTo) break;
        if (next && next.baseOffset <= this.recoveryPt) continue;
        if (seg.log.isOpen) await seg.flush();
      }
      // a leader epoch entry written in the background is in its file before the recovery point passes it
      await this.epochs.written();
      if (upTo > this.recoveryPt) this.recoveryPt = minBig(upTo, this.logEndOffset);
      this.lastFlush = this.clock.now();
    };
    const p = this.flushChain.then(run);
    this.flushChain = p.catch(() => undefined);
    return p;
  }

  // ---- read --------------------------------------------------------------------------------

  /**
   * `read` at the log end offset, answered without a turn of the event loop: nothing to read (a
   * caught-up follower's fetch, most partitions of a fetch session). Undefined at any other offset.
   */
  readAtLogEnd(startOffset: bigint): FetchDataInfo | undefined {
    const leo = this.nextOffsetMeta;
    return startOffset === leo.messageOffset && !this.closed ? empty(leo) : undefined;
  }

  /**
   * Reads from `startOffset`: up to `maxBytes` (but the whole first batch when `minOneMessage`,
   * KIP-74), never at or past `maxOffset` (the high watermark for consumers; default the LEO).
   * Returns a file slice, not bytes. OffsetOutOfRangeError outside [logStartOffset, LEO].
   */
  async read(startOffset: bigint, maxBytes: number, maxOffset?: bigint, minOneMessage = false): Promise<FetchDataInfo> {
    if (this.closed) throw new LogClosedError(`Log ${this.name} is closed`);
    const leo = this.nextOffsetMeta;
    const segs = this.segs;
    if (startOffset === leo.messageOffset) return empty(leo);
    if (startOffset > leo.messageOffset || startOffset < this.startOffset) {
      throw new OffsetOutOfRangeError(
        `Received request for offset ${startOffset} for partition ${this.name}, but we only have log segments from offset ${this.startOffset} up to ${leo.messageOffset}.`,
      );
    }
    const bound = maxOffset === undefined || maxOffset >= leo.messageOffset ? leo : await this.offsetMetadata(maxOffset, segs);
    if (startOffset >= bound.messageOffset) {
      // Kafka answers beyond the bound with "message offset only" metadata (segment and position unknown).
      return empty(startOffset === bound.messageOffset ? bound : { messageOffset: startOffset, segmentBaseOffset: -1n, relativePositionInSegment: -1 });
    }
    const first = floorSegment(segs, startOffset);
    const known = this.recentBatch(startOffset, segs, first);
    for (let i = first; i < segs.length; i++) {
      const seg = segs[i] as LogSegment;
      if (seg.baseOffset > bound.segmentBaseOffset) break;
      const maxPosition = seg.baseOffset < bound.segmentBaseOffset ? seg.size : bound.relativePositionInSegment;
      const info =
        known && i === first
          ? seg.readAt(known, startOffset, maxBytes, maxPosition, minOneMessage)
          : await seg.read(startOffset, maxBytes, maxPosition, minOneMessage);
      if (seg !== segs.at(-1)) this.touchInactive(seg);
      if (info) return info;
    }
    return empty(leo);
  }

  /**
   * A read_committed read (Kafka's FetchIsolation TXN_COMMITTED): up to the last stable offset, with
   * the aborted transactions overlapping the bytes read.
   */
  async readCommitted(startOffset: bigint, maxBytes: number, minOneMessage = false): Promise<FetchDataInfo & { abortedTransactions: AbortedTxn[] }> {
    const info = await this.read(startOffset, maxBytes, this.lastStableOffset, minOneMessage);
    return { ...info, abortedTransactions: await abortedTransactionsForRead(this.segs, startOffset, info, this.logEndOffset) };
  }

  /** The aborted transactions overlapping [startOffset, upperBoundOffset) (Kafka's collectAbortedTransactions). */
  collectAbortedTransactions(startOffset: bigint, upperBoundOffset: bigint): Promise<AbortedTxn[]> {
    return collectAbortedTransactions(this.segs, startOffset, upperBoundOffset);
  }

  /** Position metadata of `offset` (the batch holding it), cached for the high watermark. */
  private async offsetMetadata(offset: bigint, segs: LogSegment[]): Promise<LogOffsetMetadata> {
    const cached = this.boundCache;
    if (cached && cached.segments === segs && cached.meta.messageOffset === offset) return cached.meta;
    let meta: LogOffsetMetadata | null = null;
    const first = floorSegment(segs, offset);
    const known = this.recentBatch(offset, segs, first);
    if (known) meta = { messageOffset: offset, segmentBaseOffset: known.segment.baseOffset, relativePositionInSegment: known.position };
    for (let i = Math.max(0, first); i < segs.length && !meta; i++) {
      const seg = segs[i] as LogSegment;
      const found = await seg.translateOffset(offset);
      if (found) meta = { messageOffset: offset, segmentBaseOffset: seg.baseOffset, relativePositionInSegment: found.position };
    }
    meta ??= { ...this.nextOffsetMeta, messageOffset: offset };
    this.boundCache = { segments: segs, meta };
    return meta;
  }

  /** The recently appended batch starting at `offset`, if it is in segs[index] (not deleted or replaced). */
  private recentBatch(offset: bigint, segs: readonly LogSegment[], index: number) {
    const known = this.recent.find(offset);
    return known && segs[index] === known.segment ? known : undefined;
  }

  /** Keeps at most `maxLoadedInactiveSegments` inactive segments' indexes in memory. */
  private touchInactive(seg: LogSegment): void {
    const list = this.loadedInactive;
    const i = list.indexOf(seg);
    if (i >= 0) list.splice(i, 1);
    list.push(seg);
    while (list.length > this.maxLoadedInactive) list.shift()?.releaseIndexes();
  }

  // ---- ListOffsets / OffsetForLeaderEpoch --------------------------------------------------

  /**
   * ListOffsets: -1 latest (LEO), -2 earliest (log start), -3 max timestamp, -4 earliest local, or
   * the first record with timestamp >= `timestamp`. Null when no record qualifies.
   */
  async offsetForTimestamp(timestamp: bigint): Promise<OffsetForTimestamp | null> {
    if (this.closed) throw new LogClosedError(`Log ${this.name} is closed`);
    return fetchOffsetByTimestamp(timestamp, {
      segments: this.segs,
      logStartOffset: this.startOffset,
      logEndOffset: this.logEndOffset,
      epochs: this.epochs,
      touched: (seg) => this.touchInactive(seg),
    });
  }

  /** OffsetForLeaderEpoch: (largest epoch <= `epoch`, end offset of it), or null if unknown. */
  endOffsetForEpoch(epoch: number): EpochEndOffset | null {
    const r = this.epochs.endOffsetFor(epoch, this.logEndOffset);
    return r.endOffset === UNDEFINED_EPOCH_OFFSET ? null : r;
  }

  // ---- retention / log start offset --------------------------------------------------------

  /**
   * Deletes whole inactive segments below the high watermark that are entirely before the log start
   * offset, or beyond retention.bytes, or older than retention.ms. Returns how many were deleted.
   */
  deleteOldSegments(): Promise<number> {
    return this.locked(async () => {
      if (this.closed) return 0;
      const steps = await planRetention(this.segs, {
        highWatermark: this.hw,
        logStartOffset: this.startOffset,
        retentionBytes: this.cfg.retentionBytes,
        retentionMs: this.cfg.retentionMs,
        now: this.clock.now(),
      });
      let n = 0;
      for (const step of steps) n += await this.deleteLeadingSegments(step.count, step.reason);
      return n;
    });
  }

  private async deleteLeadingSegments(n: number, reason: string): Promise<number> {
    const segs = this.segs;
    n = Math.min(n, segs.length - 1);
    if (n <= 0) return 0;
    const deleted = segs.slice(0, n);
    this.segs = segs.slice(n);
    this.log.info({ reason, segments: deleted.map((s) => s.baseOffset.toString()) }, 'deleting segments');
    const first = (this.segs[0] as LogSegment).baseOffset;
    if (first > this.startOffset) {
      this.startOffset = first;
      await this.epochs.truncateFromStart(first);
    }
    await this.producerState.deleteSnapshotsBefore(first);
    await this.asyncDeleteSegments(deleted);
    return n;
  }

  /**
   * Moves the log start offset forward (DeleteRecords); segments wholly below it go at the next
   * retention run. OffsetOutOfRangeError if beyond the high watermark.
   */
  async maybeIncrementLogStartOffset(newLogStartOffset: bigint, reason = 'client delete records'): Promise<boolean> {
    return this.locked(async () => {
      this.ensureOpen();
      if (newLogStartOffset > this.hw) {
        throw new OffsetOutOfRangeError(
          `Cannot increment the log start offset to ${newLogStartOffset} of partition ${this.name} since it is larger than the high watermark ${this.hw}`,
        );
      }
      if (newLogStartOffset <= this.startOffset) return false;
      this.log.info({ logStartOffset: newLogStartOffset.toString(), reason }, 'incremented log start offset');
      this.startOffset = newLogStartOffset;
      this.producerState.onLogStartOffsetIncremented(newLogStartOffset);
      await this.epochs.truncateFromStart(newLogStartOffset);
      return true;
    });
  }

  // ---- truncation --------------------------------------------------------------------------

  /** Removes everything at and after `targetOffset` (a follower diverged); false if nothing to do. */
  async truncateTo(targetOffset: bigint): Promise<boolean> {
    if (targetOffset < 0n) throw new RangeError(`Cannot truncate partition ${this.name} to a negative offset (${targetOffset})`);
    if (targetOffset >= this.logEndOffset || !this.truncationListener) return this.truncateToLocked(targetOffset);
    return this.aroundTruncation(() => this.truncateToLocked(targetOffset));
  }

  private truncateToLocked(targetOffset: bigint): Promise<boolean> {
    return this.locked(async () => {
      this.ensureOpen();
      if (targetOffset >= this.logEndOffset) {
        this.log.info(
          { targetOffset: targetOffset.toString(), logEndOffset: this.logEndOffset.toString() },
          'truncation has no effect: target is at or beyond the log end',
        );
        return false;
      }
      this.log.info({ targetOffset: targetOffset.toString() }, 'truncating log');
      this.truncations++;
      if ((this.segs[0] as LogSegment).baseOffset > targetOffset) {
        await this.truncateFullyLocked(targetOffset);
        return true;
      }
      const keep = this.segs.filter((s) => s.baseOffset <= targetOffset);
      const drop = this.segs.filter((s) => s.baseOffset > targetOffset);
      this.segs = keep;
      this.boundCache = null;
      this.recent.clear();
      await this.asyncDeleteSegments(drop);
      const active = keep.at(-1) as LogSegment;
      await active.truncateTo(targetOffset);
      await active.makeActive();
      this.loadedInactive = this.loadedInactive.filter((s) => s !== active);
      this.advanceLogEnd(await active.readNextOffset(), active);
      await this.epochs.truncateFromEnd(this.logEndOffset);
      this.startOffset = minBig(this.startOffset, this.logEndOffset);
      this.recoveryPt = minBig(this.recoveryPt, this.logEndOffset);
      this.hw = minBig(this.hw, this.logEndOffset);
      await this.producerState.truncateAndReload(this.segs, this.startOffset, this.logEndOffset);
      this.producerState.onHighWatermarkUpdated(this.hw);
      return true;
    });
  }

  /** Deletes every segment and starts an empty log at `newOffset` (also the new log start offset). */
  async truncateFullyAndStartAt(newOffset: bigint): Promise<void> {
    if (newOffset < 0n) throw new RangeError(`Cannot start partition ${this.name} at a negative offset (${newOffset})`);
    const run = () =>
      this.locked(async () => {
        this.ensureOpen();
        await this.truncateFullyLocked(newOffset);
      });
    return this.truncationListener ? this.aroundTruncation(run) : run();
  }

  private async aroundTruncation<T>(truncate: () => Promise<T>): Promise<T> {
    const listener = this.truncationListener as TruncationListener;
    await listener.beforeTruncation(this);
    try {
      return await truncate();
    } finally {
      await listener.afterTruncation(this);
    }
  }

  private async truncateFullyLocked(newOffset: bigint): Promise<void> {
    this.log.info({ newOffset: newOffset.toString() }, 'truncating fully and starting at offset');
    this.truncations++;
    const old = this.segs;
    await this.activeSegment.onBecomeInactive();
    // The old files are renamed to .deleted first, so the new segment may reuse a base offset.
    await this.asyncDeleteSegments(old);
    const seg = await LogSegment.create(this.dirPath, newOffset, { config: this.cfg, clock: this.clock, logger: this.log, indexFiles: this.indexFiles });
    this.segs = [seg];
    this.boundCache = null;
    this.recent.clear();
    this.loadedInactive = [];
    this.advanceLogEnd(newOffset, seg);
    await this.epochs.clearAndFlush();
    await this.producerState.truncateFullyAndStartAt(newOffset);
    this.startOffset = newOffset;
    this.recoveryPt = minBig(this.recoveryPt, newOffset);
    this.hw = newOffset;
  }

  // ---- compaction --------------------------------------------------------------------------

  /**
   * Swaps cleaned segments (files with the `.cleaned` suffix) in for the contiguous inactive
   * segments `oldSegments`, crash-safely as Kafka's replaceSegments: `.cleaned` → `.swap`, the
   * segment list replaced, the old files renamed to `.deleted` (removed after file.delete.delay.ms,
   * so readers holding them finish), `.swap` → final name. Each new segment brings all its files,
   * its `.txnindex` included (the cleaner writes the aborted transactions it keeps into it, as
   * Kafka's cleanSegments does; the old segments' indexes go with them). Returns false, changing nothing, when the
   * log was closed or truncated since `truncationCount` was `expectedTruncations`, or when the old
   * segments are no longer (all) in the log.
   */
  replaceSegments(newSegments: readonly LogSegment[], oldSegments: readonly LogSegment[], expectedTruncations: number): Promise<boolean> {
    return this.locked(async () => {
      if (this.closed || this.truncations !== expectedTruncations) return false;
      const plan = planSegmentReplacement(this.segs, newSegments, oldSegments);
      if (!plan) return false;
      const sortedNew = [...newSegments].sort((a, b) => (a.baseOffset < b.baseOffset ? -1 : 1));
      for (const s of [...sortedNew].reverse()) await s.changeFileSuffixes(CLEANED_FILE_SUFFIX, SWAP_FILE_SUFFIX);
      this.segs = plan;
      this.boundCache = null;
      await this.asyncDeleteSegments([...oldSegments]);
      for (const s of sortedNew) await s.changeFileSuffixes(SWAP_FILE_SUFFIX, '');
      await fsyncDirectory(this.dirPath);
      this.log.info(
        { segments: oldSegments.map((s) => s.baseOffset.toString()), cleaned: sortedNew.map((s) => s.baseOffset.toString()) },
        'swapped in cleaned segments',
      );
      return true;
    });
  }

  // ---- deletion of segment files -----------------------------------------------------------

  /** Renames the segments' files to `.deleted` now and removes them after file.delete.delay.ms. */
  private async asyncDeleteSegments(segments: LogSegment[]): Promise<void> {
    if (segments.length === 0) return;
    this.loadedInactive = this.loadedInactive.filter((s) => !segments.includes(s));
    await this.deleter.schedule(segments, this.cfg.fileDeleteDelayMs);
  }

  /** Resolves when every scheduled segment deletion has run. */
  awaitPendingDeletes(): Promise<void> {
    return this.deleter.awaitAll();
  }

  // ---- lifecycle ---------------------------------------------------------------------------

  /** Closes all files (no flush; call `flush()` first for a clean shutdown). Pending deletions run now. */
  close(): Promise<void> {
    return this.locked(async () => {
      if (this.closed) return;
      this.closed = true;
      await this.flushChain;
      // a log holding no records has nothing its queued epoch checkpoint would describe (a broker
      // stopped soon after becoming leader of thousands of new partitions skips thousands of files)
      if (this.logEndOffset === this.logStartOffset && (this.epochs.dropHeldWrite() || this.epochs.dropQueuedWrite())) {
        this.log.debug({ logEndOffset: String(this.logEndOffset) }, 'queued leader epoch checkpoint dropped at close: the log holds no records');
      }
      await this.epochs.written().catch((err: unknown) => this.log.warn({ err }, 'leader epoch checkpoint not written at close'));
      if (this.beforeAppend && this.logEndOffset > this.logStartOffset) {
        await this.runBeforeAppend().catch((err: unknown) => this.log.warn({ err }, 'could not write what was due before the next append at close'));
      }
      // a snapshot at the log end spares the next load a scan (Kafka takes it in close() too)
      await this.producerState.onClose().catch((err: unknown) => this.log.warn({ err }, 'could not write the producer state snapshot at close'));
      await this.deleter.runAll();
      for (const s of this.segs) await s.close();
    });
  }

  private ensureOpen(): void {
    if (this.closed) throw new LogClosedError(`Log ${this.name} is closed`);
  }

  private locked<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.lockTail.then(fn);
    this.lockTail = run.catch(() => undefined);
    return run;
  }

  toString(): string {
    return `Log(dir=${this.dirPath}, logStartOffset=${this.startOffset}, logEndOffset=${this.logEndOffset})`;
  }
}

/**
 * Runs what is due before the next append of each log (`beforeNextAppend`: a new log's
 * partition.metadata) for all of them together, `concurrency` at a time. A produce request or a
 * replica fetch appending to thousands of new partitions one after the other then waits for their
 * files' fsyncs at once, not for one pair after the other. Failures are left to the appends, which
 * run the work again and report them.
 */
export async function prepareAppends(logs: readonly Log[], concurrency = 32): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < logs.length) {
      const log = logs[next++] as Log;
      if (!log.readyToAppend) await log.prepareAppend().catch(() => undefined);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, logs.length) }, worker));
}

function empty(meta: LogOffsetMetadata): FetchDataInfo {
  return { fetchOffsetMetadata: meta, records: FileRecordsSlice.EMPTY, firstEntryIncomplete: false };
}
