/**
 * LogLoader: brings a partition directory `<topic>-<partition>` back to a consistent state, the way
 * Kafka's LogLoader does:
 *
 * 1. removes `.deleted` files, `.cleaned` files, and `.swap` files of an interrupted split
 *    (base offset >= the smallest `.cleaned` offset); completes the remaining swaps by deleting the
 *    segments they replace and renaming them;
 * 2. opens every `<offset>.log` segment (orphaned index files are deleted; indexes load lazily and
 *    are rebuilt when missing or corrupt);
 * 3. after an unclean shutdown, recovers every segment from the one holding the recovery point:
 *    batches are re-validated, a torn or corrupt tail is truncated (structured warn) and the
 *    segments after it are deleted, indexes are rebuilt, leader epochs re-learned;
 * 4. works out the log end offset, log start offset and recovery point.
 */
import type { TopicPartition } from '@samsa/protocol';
import { mkdir, readdir, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import {
  CLEANED_FILE_SUFFIX,
  DELETED_FILE_SUFFIX,
  INDEX_FILE_SUFFIX,
  LEADER_EPOCH_CHECKPOINT_FILE,
  LOG_FILE_SUFFIX,
  SWAP_FILE_SUFFIX,
  TIME_INDEX_FILE_SUFFIX,
  TXN_INDEX_FILE_SUFFIX,
  offsetFromFileName,
  type Clock,
  type LogConfig,
} from './config.js';
import { LeaderEpochFileCache } from './leader-epoch-cache.js';
import type { OpenIndexFiles } from './open-index-files.js';
import { LogSegment, type SegmentOptions } from './segment.js';

export interface LoadLogParams {
  dir: string;
  topicPartition: TopicPartition;
  config: LogConfig;
  clock: Clock;
  logger?: Logger | undefined;
  /** Offset up to which the log is known to be flushed (recovery-point-offset-checkpoint). */
  recoveryPoint: bigint;
  /** From log-start-offset-checkpoint; default 0. */
  logStartOffset?: bigint | undefined;
  /** `.kafka_cleanshutdown` was present: skip re-validation. */
  hadCleanShutdown: boolean;
  /** The cap on open index descriptors; default a process-wide one. */
  indexFiles?: OpenIndexFiles | undefined;
}

export interface LoadedLog {
  /** Ascending by base offset; the last one is active (indexes writable). */
  segments: LogSegment[];
  nextOffset: bigint;
  logStartOffset: bigint;
  recoveryPoint: bigint;
  leaderEpochCache: LeaderEpochFileCache;
  /** Segments re-validated by recovery (0 after a clean shutdown). */
  recoveredSegments: number;
  /** Bytes cut from torn or corrupt tails. */
  truncatedBytes: number;
}

const isIndexName = (n: string): boolean => n.endsWith(INDEX_FILE_SUFFIX) || n.endsWith(TIME_INDEX_FILE_SUFFIX);
const isTxnIndexName = (n: string): boolean => n.endsWith(TXN_INDEX_FILE_SUFFIX);

export class LogLoader {
  private readonly log: Logger | undefined;

  private constructor(private readonly p: LoadLogParams) {
    this.log = p.logger;
  }

  static load(params: LoadLogParams): Promise<LoadedLog> {
    return new LogLoader(params).load();
  }

  /**
   * A log in a directory just created (LogManager, new partition): nothing to list, read or
   * recover — one empty segment at the log start offset, its `.log` created and its index files
   * left until the first index entry is written (`LogSegment.create` with `newDirectory`).
   */
  static async createNew(p: LoadLogParams): Promise<LoadedLog> {
    const start = p.logStartOffset ?? 0n;
    const seg = await LogSegment.create(p.dir, start, { config: p.config, clock: p.clock, logger: p.logger, indexFiles: p.indexFiles }, { newDirectory: true });
    await seg.makeActive();
    return {
      segments: [seg],
      nextOffset: start,
      logStartOffset: start,
      recoveryPoint: start,
      leaderEpochCache: LeaderEpochFileCache.empty(join(p.dir, LEADER_EPOCH_CHECKPOINT_FILE), p.logger),
      recoveredSegments: 0,
      truncatedBytes: 0,
    };
  }

  private segOpts(fileSuffix = ''): SegmentOptions {
    return { config: this.p.config, clock: this.p.clock, logger: this.log, fileSuffix, indexFiles: this.p.indexFiles };
  }

  private async load(): Promise<LoadedLog> {
    const { dir, config } = this.p;
    await mkdir(dir, { recursive: true });
    const swapFiles = await this.removeTempFilesAndCollectSwapFiles();
    await this.completeSwaps(swapFiles);
    const segments = await this.loadSegmentFiles();

    const epochCache = await LeaderEpochFileCache.load(join(dir, LEADER_EPOCH_CHECKPOINT_FILE), this.log);
    let recoveredSegments = 0;
    let truncatedBytes = 0;
    const checkpointStart = this.p.logStartOffset ?? 0n;

    if (!this.p.hadCleanShutdown && segments.length > 0) {
      let from = 0;
      for (let i = 0; i < segments.length; i++) if ((segments[i] as LogSegment).baseOffset <= this.p.recoveryPoint) from = i;
      for (let i = from; i < segments.length; i++) {
        const seg = segments[i] as LogSegment;
        const epochs: { epoch: number; offset: bigint }[] = [];
        let latest = epochCache.latestEpoch ?? -1;
        this.log?.info({ segment: seg.log.path, baseOffset: seg.baseOffset.toString() }, 'recovering unflushed segment');
        const truncated = await seg.recover(config.maxMessageBytes, (epoch, offset) => {
          if (epoch >= 0 && epoch > latest) {
            epochs.push({ epoch, offset });
            latest = epoch;
          }
        });
        recoveredSegments++;
        for (const e of epochs) await epochCache.assign(e.epoch, e.offset);
        if (truncated > 0) {
          truncatedBytes += truncated;
          const dropped = segments.splice(i + 1);
          this.log?.warn(
            {
              topic: this.p.topicPartition.topic,
              partition: this.p.topicPartition.partition,
              segment: seg.log.path,
              bytesTruncated: truncated,
              nextOffset: (await seg.readNextOffset()).toString(),
              segmentsDeleted: dropped.map((s) => s.baseOffset.toString()),
            },
            'corruption found in log segment; truncated it to the last valid batch',
          );
          for (const d of dropped) await d.deleteFiles();
          break;
        }
      }
    }

    // A log start offset beyond the end of the log (records deleted past it): start afresh there.
    if (segments.length > 0) {
      const end = await (segments.at(-1) as LogSegment).readNextOffset();
      if (checkpointStart > end) {
        this.log?.info(
          { logStartOffset: checkpointStart.toString(), logEndOffset: end.toString() },
          'log start offset is beyond the log end; deleting all segments',
        );
        for (const s of segments.splice(0)) await s.deleteFiles();
        await epochCache.clearAndFlush();
      }
    }
    if (segments.length === 0) segments.push(await LogSegment.create(dir, checkpointStart, this.segOpts()));

    const active = segments.at(-1) as LogSegment;
    await active.makeActive();
    const nextOffset = await active.readNextOffset();
    const recoveryPoint = this.p.hadCleanShutdown && recoveredSegments === 0 ? nextOffset : minBig(this.p.recoveryPoint, nextOffset);
    const first = segments[0] as LogSegment;
    const logStartOffset = maxBig(checkpointStart, first.baseOffset);
    await epochCache.truncateFromEnd(nextOffset);
    await epochCache.truncateFromStart(logStartOffset);
    return { segments, nextOffset, logStartOffset, recoveryPoint, leaderEpochCache: epochCache, recoveredSegments, truncatedBytes };
  }

  /** Kafka's removeTempFilesAndCollectSwapFiles. Returns the swap files to complete. */
  private async removeTempFilesAndCollectSwapFiles(): Promise<string[]> {
    const { dir } = this.p;
    const cleaned: string[] = [];
    const swaps: string[] = [];
    let minCleaned: bigint | null = null;
    for (const ent of await readdir(dir, { withFileTypes: true })) {
      if (!ent.isFile()) continue;
      const name = ent.name;
      if (name.endsWith(DELETED_FILE_SUFFIX) || name.endsWith('.tmp')) {
        this.log?.debug({ file: name }, 'deleting stray temporary file');
        await unlinkQuiet(join(dir, name));
      } else if (name.endsWith(CLEANED_FILE_SUFFIX)) {
        const off = offsetFromFileName(name);
        if (off !== null && (minCleaned === null || off < minCleaned)) minCleaned = off;
        cleaned.push(name);
      } else if (name.endsWith(SWAP_FILE_SUFFIX)) {
        swaps.push(name);
      }
    }
    const valid: string[] = [];
    for (const name of swaps) {
      const off = offsetFromFileName(name);
      if (off === null || (minCleaned !== null && off >= minCleaned)) {
        this.log?.info({ file: name }, 'deleting swap file of an incomplete split');
        await unlinkQuiet(join(dir, name));
      } else valid.push(name);
    }
    for (const name of cleaned) await unlinkQuiet(join(dir, name));
    return valid;
  }

  /**
   * The swap files left are complete results of a compaction or split: delete the segments they
   * replace (base offsets in [min swap base, max swap next offset)) and rename them into place.
   */
  private async completeSwaps(swapFiles: string[]): Promise<void> {
    if (swapFiles.length === 0) return;
    const { dir } = this.p;
    let min: bigint | null = null;
    let max: bigint | null = null;
    for (const name of swapFiles) {
      if (!name.endsWith(`${LOG_FILE_SUFFIX}${SWAP_FILE_SUFFIX}`)) continue;
      const base = offsetFromFileName(name) as bigint;
      const seg = await LogSegment.open(dir, base, this.segOpts(SWAP_FILE_SUFFIX));
      const next = await seg.readNextOffset();
      await seg.close();
      this.log?.info({ file: name }, 'found log file from an interrupted swap; recovering it by renaming');
      if (min === null || base < min) min = base;
      if (max === null || next > max) max = next;
    }
    for (const ent of await readdir(dir, { withFileTypes: true })) {
      if (!ent.isFile() || ent.name.endsWith(SWAP_FILE_SUFFIX) || min === null || max === null) continue;
      const off = offsetFromFileName(ent.name);
      if (off !== null && off >= min && off < max) {
        this.log?.info({ file: ent.name }, 'deleting segment file replaced by a swap segment');
        await unlinkQuiet(join(dir, ent.name));
      }
    }
    for (const ent of await readdir(dir, { withFileTypes: true })) {
      if (!ent.isFile() || !ent.name.endsWith(SWAP_FILE_SUFFIX)) continue;
      const target = ent.name.slice(0, -SWAP_FILE_SUFFIX.length);
      // Offset and time index swaps are dropped: they are rebuilt from the renamed log. A
      // `.txnindex` is renamed (it cannot be rebuilt from the segment alone).
      if (isIndexName(target)) await unlinkQuiet(join(dir, ent.name));
      else await rename(join(dir, ent.name), join(dir, target));
    }
  }

  private async loadSegmentFiles(): Promise<LogSegment[]> {
    const { dir } = this.p;
    const names = new Set<string>();
    for (const ent of await readdir(dir, { withFileTypes: true })) if (ent.isFile()) names.add(ent.name);
    const bases: bigint[] = [];
    for (const name of names) {
      const off = offsetFromFileName(name);
      if (off === null) continue;
      if (isIndexName(name) || isTxnIndexName(name)) {
        const stem = name.slice(0, name.lastIndexOf('.'));
        if (!names.has(`${stem}${LOG_FILE_SUFFIX}`)) {
          this.log?.warn({ file: name }, 'found an orphaned index file; deleting it');
          await unlinkQuiet(join(dir, name));
        }
      } else if (name.endsWith(LOG_FILE_SUFFIX)) {
        bases.push(off);
      }
    }
    bases.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const segments: LogSegment[] = [];
    for (const base of bases) segments.push(await LogSegment.open(dir, base, this.segOpts()));
    return segments;
  }
}

async function unlinkQuiet(path: string): Promise<void> {
  await unlink(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
  });
}

export function minBig(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}

export function maxBig(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}
