/**
 * Per-partition producer state for the idempotent producer (KIP-98 without transactions): Kafka's
 * ProducerStateManager / ProducerStateEntry / ProducerAppendInfo, with the rules of Kafka 2.5+
 * (KIP-360) as they stand in 3.x.
 *
 * For every producer id seen in the log: its epoch and the metadata of its last 5 batches (first and
 * last sequence, first and last offset, max timestamp). The leader checks each idempotent batch
 * against it before appending (`checkLeaderAppend`), every replica records the batches it appends
 * (`update`), and the state is rebuilt from the log when it is loaded or truncated: from the latest
 * `<offset>.snapshot` file at or below the log end (Kafka's format), then by scanning batch headers
 * from there to the log end. Snapshots are written when a segment rolls, when the log closes and
 * after a rebuild, so a scan after a crash covers the active segment only.
 *
 * Leader rules (Kafka 3.x, `ProducerAppendInfo` with origin Client), per batch with producerId >= 0:
 * 1. same epoch as the producer's and the exact sequence range of one of its last 5 batches:
 *    a duplicate — nothing is appended and the append answers with the cached batch's offsets
 *    (NONE on the wire; Kafka has not returned DUPLICATE_SEQUENCE_NUMBER to clients since 1.0);
 * 2. epoch older than the producer's: INVALID_PRODUCER_EPOCH (Kafka 2.7+; PRODUCER_FENCED before);
 * 3. newer epoch (KIP-360 bump): the first sequence must be 0, else OUT_OF_ORDER_SEQUENCE_NUMBER;
 * 4. same epoch: the first sequence must follow the last one (Int32.MAX wraps to 0), else
 *    OUT_OF_ORDER_SEQUENCE_NUMBER;
 * 5. unknown producer id (no state: never seen, or its batches left the log): any sequence is
 *    accepted. Kafka 2.5+ no longer answers UNKNOWN_PRODUCER_ID here (KIP-360 moved the recovery to
 *    the client), so neither does Samsa.
 * Followers and log replay take batches as they are (no checks; an older epoch replaces the newer
 * one, as Kafka's Replication origin does). Origin Coordinator skips the sequence checks (rules 3-4).
 *
 * Transactions (KIP-98, Kafka 3.x ProducerAppendInfo): a transactional data batch of a producer with
 * no open transaction starts one (`currentTxnFirstOffset`, `producer-transactions.ts`); a COMMIT or
 * ABORT marker (control batch) ends it and records the coordinator epoch. Leader checks: a
 * non-transactional batch while the producer's transaction is open is INVALID_TXN_STATE; a marker
 * with an older producer epoch is INVALID_PRODUCER_EPOCH, one with an older coordinator epoch
 * TRANSACTION_COORDINATOR_FENCED. `update` answers the completed transactions with the LSO Kafka
 * writes to the transaction index for aborted ones; a rebuild with `txnIndexFrom` (recovery after an
 * unclean shutdown) rewrites the `.txnindex` files of the segments from that offset.
 */
import type { Logger } from 'pino';
import { KafkaError } from '@samsa/protocol';
import { scanSegmentHeaders, positionOf } from './log-scan.js';
import { NO_PRODUCER_EPOCH, NO_SEQUENCE, batchSizeAt, decrementSequence, hasProducerId, inSequence, readMarkerAt, readProducerBatch } from './batch-fields.js';
import { ProducerTransactions, type CompletedTxn } from './producer-transactions.js';
import type { AbortedTxn } from './transaction-index.js';
import { CorruptSnapshotError, deleteSnapshotFile, listSnapshotOffsets, readSnapshotFile, writeSnapshotFile, type SnapshotEntry } from './snapshot.js';
import type { LogSegment } from './segment.js';

/** Batches remembered per producer for duplicate detection (Kafka's NumBatchesToRetain). */
export const NUM_BATCHES_TO_RETAIN = 5;
/** Kafka's producer.id.expiration.ms default (1 day; Samsa has no such setting yet). */
export const DEFAULT_PRODUCER_ID_EXPIRATION_MS = 86_400_000;

/** One appended batch of a producer. */
export interface BatchMetadata {
  firstSeq: number;
  lastSeq: number;
  firstOffset: bigint;
  lastOffset: bigint;
  /** The batch's max timestamp (its append time under LogAppendTime). */
  timestamp: number;
}

/** A completed transaction with the LSO recorded for it in the transaction index when aborted. */
export interface TxnCompletion extends CompletedTxn {
  lastStableOffset: bigint;
}

/** Who appends as leader: a producer, or a coordinator (markers; no sequence checks). */
export type LeaderAppendOrigin = 'client' | 'coordinator';

interface PendingProducer {
  epoch: number;
  lastSeq: number;
  inTxn: boolean;
  coordinatorEpoch: number;
}

/** What Kafka keeps per producer id. */
export class ProducerStateEntry {
  /** Oldest first, at most NUM_BATCHES_TO_RETAIN, all of `producerEpoch`. */
  readonly batches: BatchMetadata[] = [];
  /** First offset of the producer's open transaction, -1 when none. */
  currentTxnFirstOffset = -1n;
  /** Epoch of the coordinator that wrote the producer's last marker, -1 before any. */
  coordinatorEpoch = -1;

  constructor(
    readonly producerId: bigint,
    public producerEpoch = NO_PRODUCER_EPOCH,
    public lastTimestamp = -1,
  ) {}

  get lastSeq(): number {
    return this.batches.at(-1)?.lastSeq ?? NO_SEQUENCE;
  }

  get lastDataOffset(): bigint {
    return this.batches.at(-1)?.lastOffset ?? -1n;
  }

  /** A new epoch forgets the old epoch's batches. */
  maybeUpdateProducerEpoch(epoch: number): void {
    if (epoch !== this.producerEpoch) {
      this.batches.length = 0;
      this.producerEpoch = epoch;
    }
  }

  addBatch(epoch: number, batch: BatchMetadata): void {
    this.maybeUpdateProducerEpoch(epoch);
    if (this.batches.length === NUM_BATCHES_TO_RETAIN) this.batches.shift();
    this.batches.push(batch);
    this.lastTimestamp = batch.timestamp;
  }

  /** The cached batch with exactly this epoch and sequence range (Kafka's findDuplicateBatch). */
  findDuplicate(epoch: number, firstSeq: number, lastSeq: number): BatchMetadata | undefined {
    if (epoch !== this.producerEpoch) return undefined;
    return this.batches.find((b) => b.firstSeq === firstSeq && b.lastSeq === lastSeq);
  }
}

export interface ProducerStateOptions {
  /** The partition directory (snapshot files live next to the segments). */
  dir: string;
  /** `<topic>-<partition>`, for messages. */
  name: string;
  logger?: Logger | undefined;
  now?: () => number;
  /** Producers idle longer than this (by their last batch timestamp) are dropped at load and roll. */
  producerIdExpirationMs?: number;
}

export class ProducerStateManager {
  private readonly producers = new Map<bigint, ProducerStateEntry>();
  private readonly txns = new ProducerTransactions();
  /** Offsets of the snapshot files on disk, ascending. */
  private snapshots: bigint[];
  /** The state covers the log up to here (exclusive): the log end offset once loaded. */
  private lastMapOffset = 0n;
  private lastSnapOffset = 0n;
  private readonly now: () => number;
  private readonly expirationMs: number;

  private constructor(
    private readonly o: ProducerStateOptions,
    snapshots: bigint[],
  ) {
    this.snapshots = snapshots;
    this.now = o.now ?? Date.now;
    this.expirationMs = o.producerIdExpirationMs ?? DEFAULT_PRODUCER_ID_EXPIRATION_MS;
  }

  /**
   * Builds the state of a freshly loaded log whose segments (recovered, ascending) hold
   * [logStartOffset, logEndOffset): from the latest snapshot in range, then a header scan.
   */
  static async load(
    o: ProducerStateOptions,
    segments: readonly LogSegment[],
    logStartOffset: bigint,
    logEndOffset: bigint,
    /** The first recovered segment's base offset after an unclean shutdown: its and later `.txnindex` files are rebuilt. */
    txnIndexFrom?: bigint,
  ): Promise<ProducerStateManager> {
    const m = new ProducerStateManager(o, await listSnapshotOffsets(o.dir));
    await m.rebuild(segments, logStartOffset, logEndOffset, txnIndexFrom);
    return m;
  }

  /** The state of a log just created in an empty directory (no snapshot files to list, nothing to scan). */
  static empty(o: ProducerStateOptions, logStartOffset: bigint): ProducerStateManager {
    const m = new ProducerStateManager(o, []);
    m.lastMapOffset = logStartOffset;
    m.lastSnapOffset = logStartOffset;
    return m;
  }

  // ---- queries -----------------------------------------------------------------------------

  lastEntry(producerId: bigint): ProducerStateEntry | undefined {
    return this.producers.get(producerId);
  }

  get activeProducers(): ReadonlyMap<bigint, ProducerStateEntry> {
    return this.producers;
  }

  get mapEndOffset(): bigint {
    return this.lastMapOffset;
  }

  get snapshotOffsets(): readonly bigint[] {
    return this.snapshots;
  }

  /** Ongoing and unreplicated transactions. */
  get transactions(): ProducerTransactions {
    return this.txns;
  }

  /** Smallest first offset of an ongoing or not yet replicated transaction (null when none). */
  get firstUnstableOffset(): bigint | null {
    return this.txns.firstUnstableOffset;
  }

  /** Transactions completed below the new high watermark are stable. */
  onHighWatermarkUpdated(highWatermark: bigint): void {
    this.txns.removeUnreplicatedBelow(highWatermark);
  }

  onLogStartOffsetIncremented(logStartOffset: bigint): void {
    this.txns.removeUnreplicatedBelow(logStartOffset);
  }

  // ---- appends -----------------------------------------------------------------------------

  /**
   * The leader's checks for records about to be appended (see the rules above). Returns the cached
   * metadata of a duplicate batch (the caller appends nothing and answers with its offsets), null
   * when the records may be appended, or throws KafkaError INVALID_PRODUCER_EPOCH /
   * OUT_OF_ORDER_SEQUENCE_NUMBER / INVALID_TXN_STATE / TRANSACTION_COORDINATOR_FENCED. Looks at
   * batch headers only (and at the record of a marker).
   */
  checkLeaderAppend(records: Buffer, origin: LeaderAppendOrigin = 'client'): BatchMetadata | null {
    // several batches of one producer in one append chain on each other (Produce v3+ sends one)
    let pending: Map<bigint, PendingProducer> | undefined;
    for (let pos = 0; pos < records.length;) {
      const size = batchSizeAt(records, pos);
      if (hasProducerId(records, pos)) {
        const b = readProducerBatch(records, pos);
        const entry = this.producers.get(b.producerId);
        const p = pending?.get(b.producerId);
        const knownEpoch = entry?.producerEpoch ?? NO_PRODUCER_EPOCH;
        const currentEpoch = p?.epoch ?? knownEpoch;
        const coordinatorEpoch = p?.coordinatorEpoch ?? entry?.coordinatorEpoch ?? -1;
        const inTxn = p ? p.inTxn : (entry?.currentTxnFirstOffset ?? -1n) >= 0n;
        const currentLastSeq = p ? p.lastSeq : entry && b.producerEpoch === entry.producerEpoch ? entry.lastSeq : NO_SEQUENCE;
        const at = `at offset ${this.lastMapOffset} in partition ${this.o.name}`;
        if (!b.isControl && origin === 'client') {
          const duplicate = entry?.findDuplicate(b.producerEpoch, b.firstSeq, b.lastSeq);
          if (duplicate) return duplicate;
        }
        if (b.producerEpoch < currentEpoch) {
          throw new KafkaError(
            'INVALID_PRODUCER_EPOCH',
            `Epoch of producer ${b.producerId} ${at} is ${b.producerEpoch}, which is smaller than the last seen epoch ${currentEpoch}`,
          );
        }
        let next: PendingProducer;
        if (b.isControl) {
          const marker = readMarkerAt(records, pos);
          if (marker && coordinatorEpoch > marker.coordinatorEpoch) {
            throw new KafkaError(
              'TRANSACTION_COORDINATOR_FENCED',
              `Invalid coordinator epoch for producerId ${b.producerId} ${at}: ${marker.coordinatorEpoch} (zombie), ${coordinatorEpoch} (current)`,
            );
          }
          const lastSeq = b.producerEpoch === currentEpoch ? currentLastSeq : NO_SEQUENCE;
          next = marker
            ? { epoch: b.producerEpoch, lastSeq, inTxn: false, coordinatorEpoch: marker.coordinatorEpoch }
            : { epoch: currentEpoch, lastSeq: currentLastSeq, inTxn, coordinatorEpoch };
        } else {
          if (origin === 'client') this.checkSequence(b.producerId, b.producerEpoch, b.firstSeq, currentEpoch, knownEpoch, currentLastSeq, at);
          if (inTxn && !b.isTransactional) {
            throw new KafkaError('INVALID_TXN_STATE', `Expected transactional write from producer ${b.producerId} ${at}`);
          }
          next = { epoch: b.producerEpoch, lastSeq: b.lastSeq, inTxn: inTxn || b.isTransactional, coordinatorEpoch };
        }
        if (pos + size < records.length) (pending ??= new Map()).set(b.producerId, next);
      }
      pos += size;
    }
    return null;
  }

  private checkSequence(
    producerId: bigint,
    epoch: number,
    firstSeq: number,
    currentEpoch: number,
    knownEpoch: number,
    currentLastSeq: number,
    at: string,
  ): void {
    if (epoch !== currentEpoch) {
      if (firstSeq !== 0 && currentEpoch !== NO_PRODUCER_EPOCH) {
        throw new KafkaError(
          'OUT_OF_ORDER_SEQUENCE_NUMBER',
          `Invalid sequence number for new epoch of producer ${producerId} ${at}: ${epoch} (request epoch), ${firstSeq} (seq. number), ${currentEpoch} (current producer epoch)`,
        );
      }
    } else if (knownEpoch !== NO_PRODUCER_EPOCH && !inSequence(currentLastSeq, firstSeq)) {
      throw new KafkaError(
        'OUT_OF_ORDER_SEQUENCE_NUMBER',
        `Out of order sequence number for producer ${producerId} ${at}: ${firstSeq} (incoming seq. number), ${currentLastSeq} (current end sequence number)`,
      );
    }
  }

  /**
   * Records the producer batches of records just appended (offsets assigned) and moves the map end
   * to `nextOffset` (the log end offset). Leader and follower appends alike; no checks.
   */
  update(records: Buffer, nextOffset: bigint): TxnCompletion[] | null {
    let done: TxnCompletion[] | null = null;
    for (let pos = 0; pos < records.length; pos += batchSizeAt(records, pos)) {
      const completed = this.applyBatch(records, pos);
      if (completed) (done ??= []).push(this.completeTxn(completed));
    }
    this.lastMapOffset = nextOffset;
    return done;
  }

  /** Kafka's lastStableOffset(completedTxn) then completeTxn: the transaction leaves the ongoing set. */
  private completeTxn(c: CompletedTxn): TxnCompletion {
    const lastStableOffset = this.txns.lastStableOffset(c);
    if (!this.txns.complete(c)) {
      this.o.logger?.warn({ producerId: c.producerId.toString(), firstOffset: c.firstOffset.toString() }, 'completed a transaction that was not ongoing');
    }
    return { ...c, lastStableOffset };
  }

  /** Applies one batch to its producer's entry; a marker that ends a transaction answers it. */
  private applyBatch(buf: Buffer, pos: number): CompletedTxn | null {
    if (!hasProducerId(buf, pos)) return null;
    const b = readProducerBatch(buf, pos);
    let e = this.producers.get(b.producerId);
    if (!e) {
      e = new ProducerStateEntry(b.producerId);
      this.producers.set(b.producerId, e);
    }
    if (b.isControl) {
      const marker = readMarkerAt(buf, pos);
      // an empty control batch: the cleaner removed its transaction
      if (!marker) return null;
      const first = e.currentTxnFirstOffset;
      e.maybeUpdateProducerEpoch(b.producerEpoch);
      e.currentTxnFirstOffset = -1n;
      e.coordinatorEpoch = marker.coordinatorEpoch;
      e.lastTimestamp = marker.timestamp;
      // a marker with no data before it changes nothing for readers (Kafka emits no CompletedTxn)
      return first >= 0n ? { producerId: b.producerId, firstOffset: first, lastOffset: b.firstOffset, isAborted: !marker.commit } : null;
    }
    e.addBatch(b.producerEpoch, { firstSeq: b.firstSeq, lastSeq: b.lastSeq, firstOffset: b.firstOffset, lastOffset: b.lastOffset, timestamp: b.maxTimestamp });
    if (b.isTransactional && e.currentTxnFirstOffset < 0n) {
      e.currentTxnFirstOffset = b.firstOffset;
      this.txns.start(b.producerId, b.firstOffset);
    }
    return null;
  }

  // ---- log events --------------------------------------------------------------------------

  /** A new segment starts at `newOffset`: drop expired producers and snapshot the state there. */
  async onRoll(newOffset: bigint): Promise<void> {
    if (newOffset > this.lastMapOffset) this.lastMapOffset = newOffset;
    this.removeExpiredProducers(this.now());
    await this.takeSnapshot();
  }

  /** The log closes: snapshot at the map end so the next load needs no scan. */
  async onClose(): Promise<void> {
    await this.takeSnapshot();
  }

  /**
   * The log was truncated to [logStartOffset, logEndOffset): reload from the latest snapshot in that
   * range and rescan (Kafka's truncateAndReload + rebuildProducerState).
   */
  async truncateAndReload(segments: readonly LogSegment[], logStartOffset: bigint, logEndOffset: bigint): Promise<void> {
    await this.rebuild(segments, logStartOffset, logEndOffset);
  }

  /** Every segment was replaced by an empty one at `offset`. */
  async truncateFullyAndStartAt(offset: bigint): Promise<void> {
    this.producers.clear();
    this.txns.clear();
    for (const s of this.snapshots) await deleteSnapshotFile(this.o.dir, s);
    this.snapshots = [];
    this.lastSnapOffset = 0n;
    this.lastMapOffset = offset;
  }

  /** Segments below `firstSegmentBaseOffset` were deleted: so are their snapshots (the newest is kept). */
  async deleteSnapshotsBefore(firstSegmentBaseOffset: bigint): Promise<void> {
    const keep = this.snapshots.at(-1);
    for (const s of this.snapshots) if (s < firstSegmentBaseOffset && s !== keep) await deleteSnapshotFile(this.o.dir, s);
    this.snapshots = this.snapshots.filter((s) => s >= firstSegmentBaseOffset || s === keep);
  }

  removeExpiredProducers(now: number): void {
    for (const [id, e] of this.producers) if (this.isExpired(now, e)) this.producers.delete(id);
  }

  /** Producers with an open transaction never expire (Kafka's isProducerExpired). */
  private isExpired(now: number, e: { lastTimestamp: number; currentTxnFirstOffset: bigint }): boolean {
    return e.currentTxnFirstOffset < 0n && now - e.lastTimestamp >= this.expirationMs;
  }

  // ---- snapshots ---------------------------------------------------------------------------

  /** Writes `<mapEndOffset>.snapshot` unless a snapshot at or past it exists. */
  async takeSnapshot(): Promise<void> {
    const offset = this.lastMapOffset;
    if (offset <= this.lastSnapOffset) return;
    const entries: SnapshotEntry[] = [];
    for (const e of this.producers.values()) {
      const last = e.batches.at(-1);
      entries.push({
        producerId: e.producerId,
        producerEpoch: e.producerEpoch,
        lastSequence: last?.lastSeq ?? NO_SEQUENCE,
        lastOffset: last?.lastOffset ?? -1n,
        offsetDelta: last ? Number(last.lastOffset - last.firstOffset) : 0,
        timestamp: e.lastTimestamp,
        coordinatorEpoch: e.coordinatorEpoch,
        currentTxnFirstOffset: e.currentTxnFirstOffset,
      });
    }
    this.lastSnapOffset = offset;
    await writeSnapshotFile(this.o.dir, offset, entries);
    if (!this.snapshots.includes(offset)) this.snapshots = [...this.snapshots, offset].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    this.o.logger?.debug({ offset: offset.toString(), producers: entries.length }, 'wrote producer state snapshot');
  }

  private async removeSnapshot(offset: bigint): Promise<void> {
    this.snapshots = this.snapshots.filter((s) => s !== offset);
    await deleteSnapshotFile(this.o.dir, offset);
  }

  /** Kafka's loadFromSnapshot: the latest readable snapshot, else empty state at the log start. */
  private async loadFromSnapshot(logStartOffset: bigint): Promise<void> {
    for (;;) {
      const latest = this.snapshots.at(-1);
      if (latest === undefined) {
        this.lastSnapOffset = logStartOffset;
        this.lastMapOffset = logStartOffset;
        return;
      }
      try {
        const entries = await readSnapshotFile(this.o.dir, latest);
        const now = this.now();
        const open: { producerId: bigint; firstOffset: bigint }[] = [];
        for (const s of entries) {
          const e = new ProducerStateEntry(s.producerId, s.producerEpoch, s.timestamp);
          e.coordinatorEpoch = s.coordinatorEpoch;
          e.currentTxnFirstOffset = s.currentTxnFirstOffset;
          if (this.isExpired(now, e)) continue;
          if (e.currentTxnFirstOffset >= 0n) open.push({ producerId: s.producerId, firstOffset: e.currentTxnFirstOffset });
          if (s.lastOffset >= 0n) {
            e.batches.push({
              firstSeq: decrementSequence(s.lastSequence, s.offsetDelta),
              lastSeq: s.lastSequence,
              firstOffset: s.lastOffset - BigInt(s.offsetDelta),
              lastOffset: s.lastOffset,
              timestamp: s.timestamp,
            });
          }
          this.producers.set(s.producerId, e);
        }
        this.txns.restore(open);
        this.lastSnapOffset = latest;
        this.lastMapOffset = latest;
        return;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (!(err instanceof CorruptSnapshotError) && code !== 'ENOENT') throw err;
        this.o.logger?.warn({ offset: latest.toString(), reason: (err as Error).message }, 'failed to load producer state snapshot; deleting it');
        await this.removeSnapshot(latest);
      }
    }
  }

  /**
   * Kafka's rebuildProducerState (without its upgrade shortcut): drop snapshots outside
   * (logStartOffset, logEndOffset], reload from the latest one and scan the batch headers from
   * there to the log end; snapshots are taken at the bases of the last two segments on the way and
   * at the log end. A log with no producers whose end did not move past the state skips the scan.
   */
  private async rebuild(segments: readonly LogSegment[], logStartOffset: bigint, logEndOffset: bigint, txnIndexFrom?: bigint): Promise<void> {
    const emptyBefore = this.producers.size === 0 && this.lastMapOffset >= logEndOffset;
    for (const s of [...this.snapshots]) if (s > logEndOffset || s <= logStartOffset) await this.removeSnapshot(s);
    if (txnIndexFrom !== undefined) {
      // Kafka's recoverSegment: the state as of the first recovered segment, replayed over it and
      // the segments after it, rebuilding their transaction indexes
      for (const s of [...this.snapshots]) if (s > txnIndexFrom) await this.removeSnapshot(s);
      for (const seg of segments) if (seg.baseOffset >= txnIndexFrom) await seg.txnIndex.reset();
    }
    if (logEndOffset !== this.lastMapOffset) {
      this.producers.clear();
      this.txns.clear();
      await this.loadFromSnapshot(logStartOffset);
    } else {
      this.lastSnapOffset = this.snapshots.at(-1) ?? logStartOffset;
    }
    if (logEndOffset > this.lastMapOffset && !emptyBefore) {
      const snapshotAt = new Set(segments.slice(-2).map((s) => s.baseOffset));
      const started = Date.now();
      let scanned = 0;
      for (let i = 0; i < segments.length; i++) {
        const seg = segments[i] as LogSegment;
        const next = segments[i + 1];
        if (next && next.baseOffset <= this.lastMapOffset) continue;
        if (seg.baseOffset >= logEndOffset) break;
        let from = seg.baseOffset;
        if (this.lastMapOffset > from) from = this.lastMapOffset;
        if (logStartOffset > from) from = logStartOffset;
        this.lastMapOffset = from;
        if (from === seg.baseOffset && snapshotAt.has(seg.baseOffset)) await this.takeSnapshot();
        const position = await positionOf(seg, from);
        if (position === null) continue;
        const aborted: AbortedTxn[] = [];
        await scanSegmentHeaders(seg, position, logEndOffset, (buf, at) => {
          const completed = this.applyBatch(buf, at);
          if (!completed) return;
          const t = this.completeTxn(completed);
          if (t.isAborted)
            aborted.push({ producerId: t.producerId, firstOffset: t.firstOffset, lastOffset: t.lastOffset, lastStableOffset: t.lastStableOffset });
        });
        if (txnIndexFrom !== undefined && seg.baseOffset >= txnIndexFrom) for (const t of aborted) await seg.txnIndex.append(t);
        scanned++;
      }
      this.o.logger?.info(
        { logEndOffset: logEndOffset.toString(), segmentsScanned: scanned, producers: this.producers.size, ms: Date.now() - started },
        'rebuilt producer state from the log',
      );
    }
    this.lastMapOffset = logEndOffset;
    await this.takeSnapshot();
  }
}
