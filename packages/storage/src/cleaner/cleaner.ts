/**
 * Cleaner: compacts one log (Kafka's Cleaner).
 *
 * 1. Builds the offset map (key hash → latest offset) over the dirty range [firstDirtyOffset,
 *    firstUncleanableOffset), stopping early when the map is full; the map's latest offset + 1 is
 *    where this round ends (the next first dirty offset). Control batches and the batches of
 *    aborted transactions (known from the `.txnindex` files over the range) are not mapped.
 * 2. Groups the segments before that end into runs whose total log and index sizes fit one segment
 *    (segment.bytes, segment.index.bytes) so cleaned segments do not shrink forever.
 * 3. Copies each group into one `<base>.log.cleaned` segment, keeping what the batch filter keeps
 *    (offsets never change), then swaps it in for the group (`Log.replaceSegments`). One
 *    CleanedTransactionMetadata follows the transactions through the whole round (fed with the
 *    aborted transactions of each segment before it is read); the cleaned segment's `.txnindex`
 *    gets the aborted transactions whose ABORT marker it keeps because their batches were still
 *    there (Kafka's cleanSegments rebuilds the index the same way).
 *
 * Nothing here takes the log's lock except the swap: appends go on meanwhile (the active segment
 * is never cleaned), and a truncation or retention that changes the cleaned segments makes the swap
 * refuse, which aborts the round. `checkDone` is consulted between batches so a paused partition or
 * a stopping cleaner ends a round quickly.
 */
import { utimes } from 'node:fs/promises';
import type { Logger } from 'pino';
import { RecordBatch } from '@samsa/protocol';
import { analyzeRecords } from '../batch-header.js';
import { CLEANED_FILE_SUFFIX, type Clock } from '../config.js';
import { CorruptRecordError } from '../errors.js';
import { ScanStatus } from '../file-records.js';
import type { Log } from '../log.js';
import { LogSegment } from '../segment.js';
import { filterBatch, FilterOutcome, type FilterContext, type LastRecordOfProducer } from './batch-filter.js';
import { CleanedTransactionMetadata } from './cleaned-txn-metadata.js';
import { CleanerStats, LogCleaningAbortedError, segmentsInRange, type LogToClean } from './cleaner-types.js';
import type { SkimpyOffsetMap } from './offset-map.js';
import type { Throttler } from './throttler.js';

export interface CleanerOptions {
  /** For log lines (Kafka's cleaner thread id). */
  id: number;
  offsetMap: SkimpyOffsetMap;
  /** Bytes read from a segment at a time (and buffered before a write). */
  ioBufferSize: number;
  /** How full the offset map may get (log.cleaner.io.buffer.load.factor). */
  dupBufferLoadFactor: number;
  throttler: Throttler;
  clock: Clock;
  logger: Logger;
  /** Throws LogCleaningAbortedError when the cleaning of this log must stop. */
  checkDone: (log: Log) => void;
}

export interface CleanResult {
  /** The first offset not cleaned by this round (the new cleaner checkpoint). */
  endOffset: bigint;
  stats: CleanerStats;
}

export class Cleaner {
  private readonly map: SkimpyOffsetMap;
  private readonly log: Logger;

  constructor(private readonly o: CleanerOptions) {
    this.map = o.offsetMap;
    this.log = o.logger;
    if (Math.floor(this.map.slots * o.dupBufferLoadFactor) < 1) {
      throw new RangeError('The offset map is too small to hold a single key; increase log.cleaner.dedupe.buffer.size or decrease log.cleaner.threads');
    }
  }

  get offsetMap(): SkimpyOffsetMap {
    return this.map;
  }

  /** Cleans `cleanable` as of now. */
  clean(cleanable: LogToClean): Promise<CleanResult> {
    return this.doClean(cleanable, this.o.clock.now());
  }

  async doClean(cleanable: LogToClean, now: number): Promise<CleanResult> {
    const log = cleanable.log;
    const truncations = log.truncationCount;
    try {
      return await this.cleanRound(cleanable, now, truncations);
    } catch (err) {
      // a read failing because the log was truncated or closed under us is an abort, not a fault
      if (!(err instanceof LogCleaningAbortedError) && (log.isClosed || log.truncationCount !== truncations)) {
        throw new LogCleaningAbortedError(`log ${log.name} changed while cleaning`, { cause: err });
      }
      throw err;
    }
  }

  private async cleanRound(cleanable: LogToClean, now: number, truncations: number): Promise<CleanResult> {
    const log = cleanable.log;
    const stats = new CleanerStats(() => this.o.clock.now());
    const upperBound = cleanable.firstUncleanableOffset;
    this.log.info({ firstDirtyOffset: cleanable.firstDirtyOffset.toString(), firstUncleanableOffset: upperBound.toString() }, 'beginning cleaning of log');

    await this.buildOffsetMap(log, cleanable.firstDirtyOffset, upperBound, stats);
    let endOffset = this.map.latestOffset + 1n;
    if (endOffset < cleanable.firstDirtyOffset) endOffset = cleanable.firstDirtyOffset;
    stats.indexDone();

    const ctx: FilterContext = {
      map: this.map,
      now,
      deleteRetentionMs: log.config.deleteRetentionMs,
      lastRecordsOfActiveProducers: lastRecordsOfActiveProducers(log),
      upperBoundOffset: upperBound,
      txn: new CleanedTransactionMetadata(),
    };
    const groups = groupSegmentsBySize(segmentsInRange(log.segments, 0n, endOffset), log.config.segmentBytes, log.config.maxIndexSize, upperBound);
    for (const group of groups) await this.cleanSegments(log, group, ctx, stats, truncations);

    stats.bufferUtilization = this.map.utilization;
    stats.allDone();
    return { endOffset, stats };
  }

  // ---- offset map --------------------------------------------------------------------------

  /** Kafka's buildOffsetMap: maps the keys of [start, end), stopping early when the map is full. */
  async buildOffsetMap(log: Log, start: bigint, end: bigint, stats: CleanerStats): Promise<void> {
    this.map.clear();
    const dirty = segmentsInRange(log.segments, start, end);
    this.log.debug({ segments: dirty.length, start: start.toString(), end: end.toString() }, 'building offset map');
    const txn = new CleanedTransactionMetadata();
    txn.addAbortedTransactions(await log.collectAbortedTransactions(start, end));
    for (let i = 0; i < dirty.length; i++) {
      const next = i + 1 < dirty.length ? (dirty[i + 1] as LogSegment).baseOffset : end;
      this.o.checkDone(log);
      const full = await this.buildOffsetMapForSegment(log, dirty[i] as LogSegment, start, next, txn, stats);
      if (full) {
        this.log.debug({ segmentsMapped: i, partialSegment: (dirty[i] as LogSegment).baseOffset.toString() }, 'offset map is full');
        break;
      }
    }
  }

  /** Returns true when the map filled up inside this segment. */
  private async buildOffsetMapForSegment(
    log: Log,
    segment: LogSegment,
    start: bigint,
    nextSegmentStart: bigint,
    txn: CleanedTransactionMetadata,
    stats: CleanerStats,
  ): Promise<boolean> {
    const maxDesiredMapSize = Math.floor(this.map.slots * this.o.dupBufferLoadFactor);
    let position = 0;
    if (start > segment.baseOffset) {
      const wasLoaded = segment.indexesLoaded;
      const found = await segment.translateOffset(start);
      if (!wasLoaded) segment.releaseIndexes();
      position = found ? found.position : segment.size;
    }
    const scanner = segment.log.scan(position, { chunkSize: this.o.ioBufferSize });
    for (;;) {
      const st = await scanner.next();
      if (st === ScanStatus.END) break;
      if (st !== ScanStatus.BATCH)
        throw new CorruptRecordError(
          `Cannot read ${segment.log.path} at position ${scanner.position} while building the offset map: ${scanner.corruption ?? st}`,
        );
      this.o.checkDone(log);
      const bytes = await scanner.batchBytes();
      if (!bytes) throw new LogCleaningAbortedError(`${segment.log.path} shrank while building the offset map`);
      stats.mapBytesRead += bytes.length;
      const batch = new RecordBatch(bytes);
      if (batch.isControl) {
        txn.onControlBatchRead(batch);
        stats.mapMessagesRead++;
      } else if (txn.onBatchRead(batch)) {
        // an aborted transaction's records are discarded: they do not shadow older values
        stats.mapMessagesRead += batch.recordCount;
      } else {
        for (const record of batch.records()) {
          stats.mapMessagesRead++;
          if (record.key === null || record.offset < start) continue;
          if (this.map.size >= maxDesiredMapSize) return true;
          this.map.put(record.key, record.offset);
        }
      }
      if (scanner.lastOffset >= start) this.map.updateLatestOffset(scanner.lastOffset);
      await this.o.throttler.maybeThrottle(bytes.length);
    }
    // offsets may have gaps: everything below the next segment is covered
    this.map.updateLatestOffset(nextSegmentStart - 1n);
    return false;
  }

  // ---- copying -----------------------------------------------------------------------------

  /** Cleans a group of segments into one `.cleaned` segment and swaps it in. */
  private async cleanSegments(log: Log, group: readonly LogSegment[], ctx: FilterContext, stats: CleanerStats, truncations: number): Promise<void> {
    const first = group[0] as LogSegment;
    const cleaned = await LogSegment.create(log.dir, first.baseOffset, {
      config: log.config,
      clock: this.o.clock,
      logger: this.log,
      fileSuffix: CLEANED_FILE_SUFFIX,
      indexFiles: log.indexFiles,
    });
    let swapped = false;
    try {
      for (const segment of group) {
        this.o.checkDone(log);
        // the aborted transactions over the whole segment: the cleaned transaction index is rebuilt from them
        const segs = log.segments;
        const at = segs.indexOf(segment);
        if (at < 0) throw new LogCleaningAbortedError(`segment ${segment.baseOffset} of ${log.name} was removed while cleaning`);
        const upper = segs[at + 1]?.baseOffset ?? log.logEndOffset;
        ctx.txn.addAbortedTransactions(await log.collectAbortedTransactions(segment.baseOffset, upper));
        await this.cleanInto(log, segment, cleaned, ctx, stats);
      }
      for (const t of ctx.txn.takeRetainedAborted()) await cleaned.txnIndex.append(t);
      await cleaned.onBecomeInactive();
      await cleaned.flush();
      // keep the last modified time of the originals (retention and Kafka's legacy horizon use it)
      const modified = await (group.at(-1) as LogSegment).log.lastModified();
      await utimes(cleaned.log.path, new Date(), new Date(modified));
      this.o.checkDone(log);
      swapped = await log.replaceSegments([cleaned], group, truncations);
      if (!swapped) throw new LogCleaningAbortedError(`log ${log.name} changed while cleaning; not swapping in the cleaned segment`);
      cleaned.releaseIndexes();
      this.log.debug({ segments: group.map((s) => s.baseOffset.toString()), size: cleaned.size }, 'cleaned segments');
    } finally {
      if (!swapped) await cleaned.deleteFiles().catch((err: unknown) => this.log.warn({ err }, 'could not delete an unused cleaned segment'));
    }
  }

  /** Copies what the filter keeps from `source` into `dest`, buffering about ioBufferSize bytes per write. */
  private async cleanInto(log: Log, source: LogSegment, dest: LogSegment, ctx: FilterContext, stats: CleanerStats): Promise<void> {
    const scanner = source.log.scan(0, { chunkSize: this.o.ioBufferSize });
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    const write = async (): Promise<void> => {
      if (pendingBytes === 0) return;
      const records = pending.length === 1 ? (pending[0] as Buffer) : Buffer.concat(pending, pendingBytes);
      const s = analyzeRecords(records, { maxMessageBytes: Number.MAX_SAFE_INTEGER, verifyCrc: false });
      await dest.append(s.lastOffset, s.maxTimestamp, s.offsetOfMaxTimestamp, records);
      stats.bytesWritten += records.length;
      pending = [];
      pendingBytes = 0;
    };
    for (;;) {
      const st = await scanner.next();
      if (st === ScanStatus.END) break;
      if (st !== ScanStatus.BATCH)
        throw new CorruptRecordError(`Cannot read ${source.log.path} at position ${scanner.position} while cleaning: ${scanner.corruption ?? st}`);
      this.o.checkDone(log);
      const bytes = await scanner.batchBytes();
      if (!bytes) throw new LogCleaningAbortedError(`${source.log.path} shrank while cleaning`);
      stats.bytesRead += bytes.length;
      const r = filterBatch(bytes, ctx);
      stats.messagesRead += r.recordsRead;
      stats.messagesWritten += r.recordsRetained;
      // `bytes` may be a view into the scanner's buffer: copy what is kept
      const out = r.outcome === FilterOutcome.ORIGINAL ? Buffer.from(bytes) : r.outcome === FilterOutcome.REWRITTEN ? (r.bytes as Buffer) : null;
      if (out) {
        pending.push(out);
        pendingBytes += out.length;
        if (pendingBytes >= this.o.ioBufferSize) await write();
      }
      await this.o.throttler.maybeThrottle(bytes.length);
    }
    await write();
  }
}

/** Kafka's lastRecordsOfActiveProducers: each producer with state, its last data offset and epoch. */
function lastRecordsOfActiveProducers(log: Log): Map<bigint, LastRecordOfProducer> {
  const out = new Map<bigint, LastRecordOfProducer>();
  for (const [pid, entry] of log.producerState.activeProducers) {
    out.set(pid, { lastDataOffset: entry.lastDataOffset >= 0n ? entry.lastDataOffset : null, producerEpoch: entry.producerEpoch });
  }
  return out;
}

/**
 * Kafka's groupSegmentsBySize: consecutive segments whose log sizes add up to at most `maxSize`,
 * whose index sizes add up to at most `maxIndexSize`, and whose offsets fit one segment (relative
 * offsets are 32-bit), each group becoming one cleaned segment.
 */
export function groupSegmentsBySize(segments: readonly LogSegment[], maxSize: number, maxIndexSize: number, firstUncleanableOffset: bigint): LogSegment[][] {
  const grouped: LogSegment[][] = [];
  let i = 0;
  while (i < segments.length) {
    const first = segments[i] as LogSegment;
    const group = [first];
    let logSize = first.size;
    let indexSize = first.offsetIndex.sizeInBytes;
    let timeIndexSize = first.timeIndex.sizeInBytes;
    i++;
    while (i < segments.length) {
      const s = segments[i] as LogSegment;
      const lastOffset = i + 1 < segments.length ? (segments[i + 1] as LogSegment).baseOffset - 1n : firstUncleanableOffset - 1n;
      if (
        logSize + s.size > maxSize ||
        indexSize + s.offsetIndex.sizeInBytes > maxIndexSize ||
        timeIndexSize + s.timeIndex.sizeInBytes > maxIndexSize ||
        (s.size > 0 && lastOffset - first.baseOffset > 0x7fffffffn)
      ) {
        break;
      }
      group.push(s);
      logSize += s.size;
      indexSize += s.offsetIndex.sizeInBytes;
      timeIndexSize += s.timeIndex.sizeInBytes;
      i++;
    }
    grouped.push(group);
  }
  return grouped;
}
