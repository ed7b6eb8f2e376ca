/**
 * LogCleanerManager (Kafka's): which compacted log to clean next, the `cleaner-offset-checkpoint`
 * file of each log dir, and each partition's cleaning state, so that cleaning, retention,
 * truncation and deletion of a partition never run over each other:
 *
 *   (none) ──grab──▶ in progress ──done──▶ (none)
 *                        │ abortAndPause
 *                        ▼
 *                     aborted ──done──▶ paused(n) ──resume──▶ paused(n-1) … (none)
 *
 * A paused partition is not cleaned; pauses nest (truncation and deletion may pause at once). An
 * aborted cleaning stops at its next check and does not move the checkpoint. Partitions whose
 * cleaning failed unexpectedly are marked uncleanable and skipped until restart.
 */
import { topicPartitionKey, type TopicPartition } from '@samsa/protocol';
import { dirname, join, resolve } from 'node:path';
import type { Logger } from 'pino';
import { OffsetCheckpointFile, type TopicPartitionOffset } from '../checkpoint.js';
import { ScanStatus } from '../file-records.js';
import type { Log } from '../log.js';
import type { LogSegment } from '../segment.js';
import {
  CLEANER_OFFSET_CHECKPOINT_FILE,
  LogCleaningAbortedError,
  nonActiveSegmentsFrom,
  segmentsInRange,
  totalBytes,
  type LogToClean,
} from './cleaner-types.js';

type CleaningState =
  | { kind: 'in-progress' }
  /** Abort requested by `pauses` callers; becomes paused(pauses) when the cleaning ends. */
  | { kind: 'aborted'; pauses: number }
  | { kind: 'paused'; count: number };

export interface CleanerManagerOptions {
  /** The log dirs (each holds a cleaner-offset-checkpoint). */
  logDirs: readonly string[];
  /** The logs to consider, as of now. */
  logs: () => Iterable<Log>;
  logger: Logger;
  /** Extra condition for cleaning to go on (false once the cleaner stops). */
  isRunning?: () => boolean;
}

interface DirCheckpoint {
  file: OffsetCheckpointFile;
  offsets: Map<string, TopicPartitionOffset>;
}

/** The first offset this cleaning may not touch, and the first dirty one (Kafka's OffsetsToClean). */
export interface OffsetsToClean {
  firstDirtyOffset: bigint;
  firstUncleanableDirtyOffset: bigint;
  /** The checkpoint was out of the log's range and is reset to firstDirtyOffset. */
  forceUpdateCheckpoint: boolean;
}

export class CleanerManager {
  private readonly states = new Map<string, CleaningState>();
  /** Resolved when the cleaning (or deletion pass) of a partition in progress ends. */
  private readonly finished = new Map<string, { promise: Promise<void>; resolve: () => void }>();
  private readonly uncleanable = new Map<string, Set<string>>();
  private readonly checkpoints = new Map<string, DirCheckpoint>();
  private grabbing: Promise<unknown> = Promise.resolve();
  private readonly log: Logger;
  /** Cleanable ratio of the dirtiest log at the last pick (Kafka's max-dirty-percent). */
  dirtiestLogCleanableRatio = 0;
  timeOfLastRun = 0;

  private constructor(private readonly o: CleanerManagerOptions) {
    this.log = o.logger;
    for (const d of o.logDirs) {
      const path = resolve(d);
      this.checkpoints.set(path, { file: new OffsetCheckpointFile(join(path, CLEANER_OFFSET_CHECKPOINT_FILE)), offsets: new Map() });
    }
  }

  /** Reads the checkpoints of every log dir (an unreadable one is treated as empty). */
  static async open(o: CleanerManagerOptions): Promise<CleanerManager> {
    const m = new CleanerManager(o);
    for (const [dir, cp] of m.checkpoints) {
      try {
        for (const e of await cp.file.readEntries()) cp.offsets.set(topicPartitionKey(e), e);
      } catch (err) {
        m.log.error({ err, dir }, 'cannot read cleaner-offset-checkpoint; cleaning every compacted log in the dir from its start');
      }
    }
    return m;
  }

  // ---- checkpoints -------------------------------------------------------------------------

  /** Checkpointed first dirty offset of every partition, keyed by `topic-partition`. */
  allCleanerCheckpoints(): Map<string, bigint> {
    const out = new Map<string, bigint>();
    for (const cp of this.checkpoints.values()) for (const [key, e] of cp.offsets) out.set(key, e.offset);
    return out;
  }

  /** Sets (or with `offset` null removes) a partition's checkpoint in `dir` and rewrites the file. */
  async updateCheckpoint(dir: string, tp: TopicPartition, offset: bigint | null): Promise<void> {
    const cp = this.checkpoints.get(resolve(dir));
    if (!cp) return;
    const key = topicPartitionKey(tp);
    if (offset === null) cp.offsets.delete(key);
    else cp.offsets.set(key, { topic: tp.topic, partition: tp.partition, offset });
    await this.writeCheckpoint(resolve(dir), cp);
  }

  /** Lowers a partition's checkpoint to `offset` if it is above it (after a truncation). */
  async maybeTruncateCheckpoint(dir: string, tp: TopicPartition, offset: bigint): Promise<void> {
    const cp = this.checkpoints.get(resolve(dir));
    const e = cp?.offsets.get(topicPartitionKey(tp));
    if (cp && e && e.offset > offset) await this.updateCheckpoint(dir, tp, offset);
  }

  private async writeCheckpoint(dir: string, cp: DirCheckpoint): Promise<void> {
    // entries of partitions no longer in the dir are dropped (as Kafka's updateCheckpoints does)
    const present = new Set<string>();
    for (const l of this.o.logs()) if (resolve(dirname(l.dir)) === dir) present.add(l.name);
    for (const key of [...cp.offsets.keys()]) if (!present.has(key)) cp.offsets.delete(key);
    try {
      await cp.file.write([...cp.offsets.values()]);
    } catch (err) {
      this.log.error({ err, dir }, 'failed to write cleaner-offset-checkpoint');
    }
  }

  // ---- picking logs ------------------------------------------------------------------------

  /**
   * Kafka's grabFilthiestCompactedLog: among compacted logs that are not being cleaned, paused or
   * uncleanable, the one with the highest dirty ratio above its min.cleanable.dirty.ratio (or with
   * max.compaction.lag.ms passed and something to clean); marks it in progress.
   */
  grabFilthiestCompactedLog(now: number): Promise<LogToClean | null> {
    const run = this.grabbing.then(() => this.grab(now));
    this.grabbing = run.catch(() => undefined);
    return run;
  }

  private async grab(now: number): Promise<LogToClean | null> {
    this.timeOfLastRun = now;
    const dirty: LogToClean[] = [];
    for (const log of this.o.logs()) {
      if (!log.config.compact || log.isClosed || this.states.has(log.name) || this.isUncleanable(log)) continue;
      const offsets = await cleanableOffsets(log, this.checkpointOf(log), now, this.log);
      if (offsets.forceUpdateCheckpoint) await this.updateCheckpoint(dirname(log.dir), log.topicPartition, offsets.firstDirtyOffset);
      const needCompactionNow = (await maxCompactionDelay(log, offsets.firstDirtyOffset, now)) > 0;
      const ltc = toLogToClean(log, offsets.firstDirtyOffset, offsets.firstUncleanableDirtyOffset, needCompactionNow);
      if (totalBytes(ltc) > 0) dirty.push(ltc);
    }
    this.dirtiestLogCleanableRatio = dirty.reduce((m, l) => Math.max(m, l.cleanableRatio), 0);
    const cleanable = dirty.filter((l) => (l.needCompactionNow && l.cleanableBytes > 0) || l.cleanableRatio > l.log.config.minCleanableRatio);
    let filthiest: LogToClean | null = null;
    for (const l of cleanable) if (!filthiest || l.cleanableRatio > filthiest.cleanableRatio) filthiest = l;
    // the state may have changed while segments were read
    if (!filthiest || this.states.has(filthiest.log.name) || filthiest.log.isClosed) return null;
    this.markInProgress(filthiest.log.name);
    return filthiest;
  }

  /** Compacted logs for the cleaner's retention pass (marked in progress; call `doneDeleting`). */
  deletableLogs(): Log[] {
    const out: Log[] = [];
    for (const log of this.o.logs()) {
      if (!log.config.compact || log.isClosed || this.states.has(log.name) || this.isUncleanable(log)) continue;
      this.markInProgress(log.name);
      out.push(log);
    }
    return out;
  }

  /** Non-compacted logs for the log manager's retention pass: paused meanwhile (call `resumeCleaning`). */
  pauseCleaningForNonCompactedPartitions(): Log[] {
    const out: Log[] = [];
    for (const log of this.o.logs()) {
      if (log.config.compact || this.states.has(log.name)) continue;
      this.states.set(log.name, { kind: 'paused', count: 1 });
      out.push(log);
    }
    return out;
  }

  private markInProgress(key: string): void {
    this.states.set(key, { kind: 'in-progress' });
    let resolveDone!: () => void;
    const promise = new Promise<void>((r) => (resolveDone = r));
    this.finished.set(key, { promise, resolve: resolveDone });
  }

  private checkpointOf(log: Log): bigint | undefined {
    return this.checkpoints.get(resolve(dirname(log.dir)))?.offsets.get(log.name)?.offset;
  }

  // ---- states ------------------------------------------------------------------------------

  /** The cleaning state of a partition ('none' when idle). */
  cleaningState(tp: TopicPartition): string {
    const s = this.states.get(topicPartitionKey(tp));
    return !s ? 'none' : s.kind === 'paused' ? `paused(${s.count})` : s.kind;
  }

  /** Throws LogCleaningAbortedError when the cleaning of `log` must stop. */
  checkCleaningAborted(log: Log): void {
    if (this.states.get(log.name)?.kind === 'aborted' || log.isClosed || (this.o.isRunning && !this.o.isRunning())) {
      throw new LogCleaningAbortedError(`cleaning of ${log.name} aborted`);
    }
  }

  /** Stops a cleaning of the partition in progress (waiting for it) and pauses further ones. */
  async abortAndPauseCleaning(tp: TopicPartition): Promise<void> {
    const key = topicPartitionKey(tp);
    const s = this.states.get(key);
    if (!s) {
      this.states.set(key, { kind: 'paused', count: 1 });
      return;
    }
    if (s.kind === 'paused') {
      s.count++;
      return;
    }
    if (s.kind === 'in-progress') this.states.set(key, { kind: 'aborted', pauses: 1 });
    else s.pauses++;
    this.log.info({ topic: tp.topic, partition: tp.partition }, 'the cleaning of the partition is aborted and paused');
    await this.finished.get(key)?.promise;
  }

  /** Stops a cleaning in progress without leaving the partition paused. */
  async abortCleaning(tp: TopicPartition): Promise<void> {
    await this.abortAndPauseCleaning(tp);
    this.resumeCleaning([tp]);
  }

  /** Undoes one pause of each partition. */
  resumeCleaning(tps: readonly TopicPartition[]): void {
    for (const tp of tps) {
      const key = topicPartitionKey(tp);
      const s = this.states.get(key);
      if (s?.kind !== 'paused') {
        this.log.error({ topic: tp.topic, partition: tp.partition, state: s?.kind ?? 'none' }, 'cannot resume the cleaning of a partition that is not paused');
        continue;
      }
      if (s.count <= 1) this.states.delete(key);
      else s.count--;
    }
  }

  /** A cleaning ended: saves `endOffset` as the checkpoint unless it was aborted. */
  async doneCleaning(log: Log, endOffset: bigint): Promise<void> {
    const key = log.name;
    const s = this.states.get(key);
    if (s?.kind === 'in-progress') {
      this.states.delete(key);
      await this.updateCheckpoint(dirname(log.dir), log.topicPartition, endOffset);
    } else if (s?.kind === 'aborted') {
      this.states.set(key, { kind: 'paused', count: s.pauses });
    } else {
      this.log.error(
        { topic: log.topicPartition.topic, partition: log.topicPartition.partition, state: s?.kind ?? 'none' },
        'cleaning ended in an unexpected state',
      );
    }
    this.settle(key);
  }

  /** The cleaner's retention pass over `logs` ended. */
  doneDeleting(logs: readonly Log[]): void {
    for (const log of logs) {
      const key = log.name;
      const s = this.states.get(key);
      if (s?.kind === 'in-progress') this.states.delete(key);
      else if (s?.kind === 'aborted') this.states.set(key, { kind: 'paused', count: s.pauses });
      this.settle(key);
    }
  }

  private settle(key: string): void {
    const f = this.finished.get(key);
    this.finished.delete(key);
    f?.resolve();
  }

  markPartitionUncleanable(log: Log): void {
    const dir = resolve(dirname(log.dir));
    let set = this.uncleanable.get(dir);
    if (!set) {
      set = new Set();
      this.uncleanable.set(dir, set);
    }
    set.add(log.name);
  }

  isUncleanable(log: Log): boolean {
    return this.uncleanable.get(resolve(dirname(log.dir)))?.has(log.name) ?? false;
  }

  /** Forgets a deleted partition (its uncleanable mark and checkpoint). */
  async removePartition(dir: string, tp: TopicPartition): Promise<void> {
    this.uncleanable.get(resolve(dir))?.delete(topicPartitionKey(tp));
    await this.updateCheckpoint(dir, tp, null);
  }
}

/**
 * Kafka's cleanableOffsets: the first dirty offset is the checkpoint (reset to the log start when
 * it is below the log start or beyond the log end); cleaning stops before the active segment, the
 * last stable offset (the high watermark, or the first offset of the oldest open transaction when
 * lower: open transactions are never cleaned) and the first segment with records younger than
 * min.compaction.lag.ms.
 */
export async function cleanableOffsets(log: Log, lastCleanOffset: bigint | undefined, now: number, logger?: Logger): Promise<OffsetsToClean> {
  const logStart = log.logStartOffset;
  const checkpoint = lastCleanOffset ?? logStart;
  let firstDirtyOffset = checkpoint;
  let forceUpdateCheckpoint = false;
  if (checkpoint < logStart) {
    if (log.config.retentionMs < 0 && log.config.retentionBytes < 0) {
      logger?.warn(
        { log: log.name, checkpoint: checkpoint.toString(), logStartOffset: logStart.toString() },
        'resetting the first dirty offset to the log start offset: the checkpointed offset is invalid',
      );
    }
    firstDirtyOffset = logStart;
    forceUpdateCheckpoint = true;
  } else if (checkpoint > log.logEndOffset) {
    logger?.warn(
      { log: log.name, checkpoint: checkpoint.toString(), logEndOffset: log.logEndOffset.toString() },
      'the checkpointed dirty offset is beyond the log end offset; cleaning the whole log',
    );
    firstDirtyOffset = logStart;
    forceUpdateCheckpoint = true;
  }
  const segments = log.segments;
  let uncleanable = log.lastStableOffset;
  const activeBase = (segments.at(-1) as LogSegment).baseOffset;
  if (activeBase < uncleanable) uncleanable = activeBase;
  const lag = Math.max(0, log.config.minCompactionLagMs);
  if (lag > 0) {
    for (const seg of nonActiveSegmentsFrom(segments, firstDirtyOffset)) {
      if ((await seg.largestTimestamp()) > now - lag) {
        if (seg.baseOffset < uncleanable) uncleanable = seg.baseOffset;
        break;
      }
    }
  }
  return { firstDirtyOffset, firstUncleanableDirtyOffset: uncleanable > firstDirtyOffset ? uncleanable : firstDirtyOffset, forceUpdateCheckpoint };
}

/** Kafka's LogToClean sizes: bytes before the dirty range, bytes of the cleanable segments, their ratio. */
export function toLogToClean(log: Log, firstDirtyOffset: bigint, uncleanableOffset: bigint, needCompactionNow: boolean): LogToClean {
  const segments = log.segments;
  const cleanBytes = sumSizes(segmentsInRange(segments, -1n, firstDirtyOffset));
  const firstUncleanableSegment = nonActiveSegmentsFrom(segments, uncleanableOffset)[0] ?? (segments.at(-1) as LogSegment);
  const firstUncleanableOffset = firstUncleanableSegment.baseOffset;
  const from = firstDirtyOffset < firstUncleanableOffset ? firstDirtyOffset : firstUncleanableOffset;
  const cleanableBytes = sumSizes(segmentsInRange(segments, from, firstUncleanableOffset));
  const total = cleanBytes + cleanableBytes;
  return {
    topicPartition: log.topicPartition,
    log,
    firstDirtyOffset,
    firstUncleanableOffset: uncleanableOffset,
    cleanBytes,
    cleanableBytes,
    cleanableRatio: total === 0 ? 0 : cleanableBytes / total,
    needCompactionNow,
  };
}

function sumSizes(segments: readonly LogSegment[]): number {
  let n = 0;
  for (const s of segments) n += s.size;
  return n;
}

/**
 * Kafka's maxCompactionDelay: how long ago the oldest dirty (inactive) segment's first batch became
 * due for compaction under max.compaction.lag.ms (0 when none is due or the lag is unlimited).
 */
export async function maxCompactionDelay(log: Log, firstDirtyOffset: bigint, now: number): Promise<number> {
  const maxLag = log.config.maxCompactionLagMs;
  if (maxLag >= Number.MAX_SAFE_INTEGER) return 0;
  let earliest = Number.POSITIVE_INFINITY;
  for (const seg of nonActiveSegmentsFrom(log.segments, firstDirtyOffset)) {
    const ts = await firstBatchTimestamp(seg);
    if (ts > 0 && ts < earliest) earliest = ts;
  }
  const cleanUntil = now - Math.max(0, maxLag);
  return earliest < cleanUntil ? cleanUntil - earliest : 0;
}

/** The max timestamp of a segment's first batch (-1 when empty): Kafka's getFirstBatchTimestamp. */
async function firstBatchTimestamp(seg: LogSegment): Promise<number> {
  const scanner = seg.log.scan(0, { chunkSize: 64 });
  return (await scanner.next()) === ScanStatus.BATCH ? scanner.maxTimestamp : -1;
}
