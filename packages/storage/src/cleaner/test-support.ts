/**
 * Test-only helpers for the log cleaner: keyed batches, reading a log back record by record, and a
 * Cleaner wired with a silent logger. Not exported from the package.
 */
import { pino } from 'pino';
import { CompressionType, ControlRecordType, RecordBatch, encodeRecordBatch, readControlRecordType } from '@samsa/protocol';
import type { Clock } from '../config.js';
import type { Log } from '../log.js';
import { Cleaner } from './cleaner.js';
import { cleanableOffsets, toLogToClean } from './cleaner-manager.js';
import type { CleanResult } from './cleaner.js';
import { LogCleaningAbortedError } from './cleaner-types.js';
import { BYTES_PER_ENTRY, SkimpyOffsetMap } from './offset-map.js';
import { Throttler } from './throttler.js';

export interface KeyedRecord {
  key: string | null;
  value: string | null;
  timestamp?: number;
}

export interface KeyedBatchOptions {
  compression?: CompressionType;
  producerId?: bigint;
  producerEpoch?: number;
  baseSequence?: number;
  timestamp?: number;
  control?: boolean;
  transactional?: boolean;
}

export function keyedBatch(records: readonly KeyedRecord[], o: KeyedBatchOptions = {}): Buffer {
  const ts = o.timestamp ?? 1_700_000_000_000;
  return encodeRecordBatch({
    records: records.map((r) => ({ key: r.key, value: r.value, timestamp: r.timestamp ?? ts, headers: [{ key: 'h', value: Buffer.from(r.key ?? '-') }] })),
    baseTimestamp: ts,
    compression: o.compression ?? CompressionType.NONE,
    producerId: o.producerId ?? -1n,
    producerEpoch: o.producerEpoch ?? -1,
    baseSequence: o.baseSequence ?? -1,
    control: o.control ?? false,
    transactional: o.transactional ?? false,
  });
}

export interface ReadRecord {
  offset: bigint;
  key: string | null;
  value: string | null;
  timestamp: bigint;
  headers: string[];
}

export interface ReadBatch {
  baseOffset: bigint;
  lastOffset: bigint;
  compression: number;
  recordCount: number;
  hasDeleteHorizon: boolean;
  crcValid: boolean;
  producerId: bigint;
  producerEpoch: number;
  control: boolean;
  transactional: boolean;
}

/** Every batch and record of the log from its start to its end, as a consumer would see them. */
export async function readLog(log: Log): Promise<{ records: ReadRecord[]; batches: ReadBatch[] }> {
  const records: ReadRecord[] = [];
  const batches: ReadBatch[] = [];
  let next = log.logStartOffset;
  while (next < log.logEndOffset) {
    const info = await log.read(next, 1 << 20, undefined, true);
    const buf = await info.records.read();
    if (buf.length === 0) break;
    for (let pos = 0; pos + 61 <= buf.length;) {
      const size = buf.readInt32BE(pos + 8) + 12;
      if (pos + size > buf.length) break;
      const b = new RecordBatch(buf.subarray(pos, pos + size));
      if (b.lastOffset >= next) {
        batches.push({
          baseOffset: b.baseOffset,
          lastOffset: b.lastOffset,
          compression: b.compression,
          recordCount: b.recordCount,
          hasDeleteHorizon: b.hasDeleteHorizon,
          crcValid: b.isValidCrc(),
          producerId: b.producerId,
          producerEpoch: b.producerEpoch,
          control: b.isControl,
          transactional: b.isTransactional,
        });
        for (const r of b.records()) {
          if (r.offset < next) continue;
          records.push({
            offset: r.offset,
            key: r.key?.toString() ?? null,
            value: r.value?.toString() ?? null,
            timestamp: r.timestamp,
            headers: r.headers.map((h) => `${h.key}=${h.value?.toString() ?? ''}`),
          });
        }
        next = b.nextOffset;
      }
      pos += size;
    }
  }
  return { records, batches };
}

/**
 * What a read_committed consumer sees of the log (records below the last stable offset, without the
 * records of aborted transactions, as KafkaJS and librdkafka filter them with the aborted
 * transactions that Log.readCommitted answers), as [offset, key, value].
 */
export async function readCommittedView(log: Log): Promise<Array<[bigint, string | null, string | null]>> {
  const out: Array<[bigint, string | null, string | null]> = [];
  const pending = new Map<string, { producerId: bigint; firstOffset: bigint }>();
  const abortedProducers = new Set<bigint>();
  let next = log.logStartOffset;
  while (next < log.lastStableOffset) {
    const info = await log.readCommitted(next, 1 << 20, true);
    const buf = await info.records.read();
    if (buf.length === 0) break;
    for (const t of info.abortedTransactions) pending.set(`${t.producerId}:${t.firstOffset}`, t);
    for (let pos = 0; pos + 61 <= buf.length;) {
      const size = buf.readInt32BE(pos + 8) + 12;
      if (pos + size > buf.length) break;
      const b = new RecordBatch(buf.subarray(pos, pos + size));
      pos += size;
      if (b.lastOffset < next) continue;
      next = b.nextOffset;
      for (const [k, t] of pending) {
        if (t.firstOffset <= b.lastOffset) {
          abortedProducers.add(t.producerId);
          pending.delete(k);
        }
      }
      if (b.isControl) {
        const first = b.records().next();
        if (!first.done && readControlRecordType(first.value.key) === ControlRecordType.ABORT) abortedProducers.delete(b.producerId);
        continue;
      }
      if (b.isTransactional && abortedProducers.has(b.producerId)) continue;
      for (const r of b.records()) out.push([r.offset, r.key?.toString() ?? null, r.value?.toString() ?? null]);
    }
  }
  return out;
}

export const silent = process.env.CLEANER_TEST_LOG ? pino({ level: 'debug' }) : pino({ enabled: false });

export function makeCleaner(clock: Clock, opts: { mapEntries?: number; checkDone?: (log: Log) => void; ioBufferSize?: number } = {}): Cleaner {
  return new Cleaner({
    id: 0,
    offsetMap: new SkimpyOffsetMap((opts.mapEntries ?? 10_000) * BYTES_PER_ENTRY),
    ioBufferSize: opts.ioBufferSize ?? 4096,
    dupBufferLoadFactor: 0.9,
    throttler: new Throttler(Number.MAX_VALUE),
    clock,
    logger: silent,
    checkDone:
      opts.checkDone ??
      ((log) => {
        if (log.isClosed) throw new LogCleaningAbortedError();
      }),
  });
}

/** Cleans `log` from `firstDirtyOffset` (default its start) up to what is cleanable now. */
export async function cleanLog(cleaner: Cleaner, log: Log, clock: Clock, firstDirtyOffset?: bigint): Promise<CleanResult> {
  const o = await cleanableOffsets(log, firstDirtyOffset, clock.now());
  return cleaner.clean(toLogToClean(log, o.firstDirtyOffset, o.firstUncleanableDirtyOffset, false));
}
