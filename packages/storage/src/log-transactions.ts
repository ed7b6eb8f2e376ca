/**
 * The Log's transaction reads and writes (Kafka's UnifiedLog / LocalLog transaction parts): aborted
 * transactions written to the `.txnindex` of the segment holding their marker, collected over
 * segments for read_committed fetches (collectAbortedTransactions, addAbortedTransactions). A
 * cleaned segment comes with its own transaction index, written by the cleaner (it keeps only the
 * aborted transactions whose marker and batches remain).
 */
import type { TxnCompletion } from './producer-state-manager.js';
import type { FetchDataInfo, LogSegment } from './segment.js';
import type { AbortedTxn } from './transaction-index.js';

/** Writes the aborted ones of `completed` (markers just appended to `segment`) to its transaction index. */
export async function indexCompletedTxns(segment: LogSegment, completed: readonly TxnCompletion[]): Promise<void> {
  for (const t of completed) {
    if (t.isAborted)
      await segment.txnIndex.append({ producerId: t.producerId, firstOffset: t.firstOffset, lastOffset: t.lastOffset, lastStableOffset: t.lastStableOffset });
  }
}

/**
 * Kafka's collectAbortedTransactions: the aborted transactions overlapping [startOffset,
 * upperBoundOffset), walking the segments from the one holding `startOffset` until a segment's
 * search is complete (an entry whose LSO reaches the bound).
 */
export async function collectAbortedTransactions(segments: readonly LogSegment[], startOffset: bigint, upperBoundOffset: bigint): Promise<AbortedTxn[]> {
  const out: AbortedTxn[] = [];
  for (let i = floorSegment(segments, startOffset); i < segments.length; i++) {
    const index = (segments[i] as LogSegment).txnIndex;
    // most segments have no aborted transaction: once known, no await for them
    if (index.isKnownEmpty) continue;
    const r = await index.collectAbortedTxns(startOffset, upperBoundOffset);
    for (const t of r.abortedTransactions) out.push(t);
    if (r.isComplete) break;
  }
  return out;
}

/**
 * Kafka's addAbortedTransactions for a read_committed read: the upper bound is the offset of the
 * first offset index entry past the bytes read, else the next segment's base offset, else the log
 * end offset. An empty read answers an empty list.
 */
export async function abortedTransactionsForRead(
  segments: readonly LogSegment[],
  startOffset: bigint,
  info: FetchDataInfo,
  logEndOffset: bigint,
): Promise<AbortedTxn[]> {
  const size = info.records.sizeInBytes;
  if (size === 0) return [];
  const i = segments.findIndex((s) => s.baseOffset === info.fetchOffsetMetadata.segmentBaseOffset);
  if (i < 0) return [];
  const segment = segments[i] as LogSegment;
  await segment.ensureIndexes();
  const upperBound =
    segment.offsetIndex.fetchUpperBoundOffset(info.fetchOffsetMetadata.relativePositionInSegment + size) ?? segments[i + 1]?.baseOffset ?? logEndOffset;
  return collectAbortedTransactions(segments, startOffset, upperBound);
}

/** Index of the last segment with baseOffset <= offset (0 if none). */
export function floorSegment(segs: readonly LogSegment[], offset: bigint): number {
  let lo = 0;
  let hi = segs.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if ((segs[mid] as LogSegment).baseOffset <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
