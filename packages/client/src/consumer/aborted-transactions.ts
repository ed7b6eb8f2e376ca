/**
 * read_committed filtering of one partition's fetched batches (the Java Fetcher's algorithm): the
 * Fetch response lists the aborted transactions overlapping the fetched range, each as
 * (producerId, firstOffset). Walking the batches in offset order, a producer's aborted transaction
 * becomes "open" once a batch reaches its first offset and stays open until that producer's ABORT
 * marker (a control batch); the producer's transactional batches inside that range are skipped.
 * Control batches (COMMIT and ABORT markers) are never returned to the user.
 */
import { ControlRecordType, readControlRecordType, type RecordBatch } from '@samsa/protocol';

export interface AbortedTransaction {
  producerId: bigint;
  firstOffset: bigint;
}

/** The subset of a RecordBatch the filter looks at (hand-built in tests). */
export type FilterableBatch = Pick<RecordBatch, 'isControl' | 'isTransactional' | 'producerId' | 'lastOffset' | 'records'>;

export class AbortedTransactionFilter {
  /** Aborted transactions not reached yet, by first offset. */
  private readonly pending: AbortedTransaction[];
  /** Producers whose aborted transaction is open at the current batch. */
  private readonly open = new Set<bigint>();

  /** `aborted`: the response's abortedTransactions; null / undefined with read_uncommitted. */
  constructor(
    aborted: readonly AbortedTransaction[] | null | undefined,
    private readonly readCommitted: boolean,
  ) {
    this.pending = readCommitted && aborted ? [...aborted].sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0)) : [];
  }

  /**
   * Whether `batch` is skipped: every control batch, and with read_committed the transactional
   * batches of a producer inside one of its aborted transactions. Call once per batch, in offset order.
   */
  skip(batch: FilterableBatch): boolean {
    if (this.readCommitted) {
      // the aborted transactions that started at or before this batch's end are open now
      while (this.pending.length > 0 && this.pending[0]!.firstOffset <= batch.lastOffset) this.open.add(this.pending.shift()!.producerId);
      if (batch.isControl) {
        if (batch.isTransactional && isAbortMarker(batch)) this.open.delete(batch.producerId);
        return true;
      }
      return batch.isTransactional && this.open.has(batch.producerId);
    }
    return batch.isControl;
  }
}

/** Whether a control batch holds an ABORT marker (its first record's key). */
export function isAbortMarker(batch: Pick<RecordBatch, 'records'>): boolean {
  for (const r of batch.records()) {
    try {
      return readControlRecordType(r.key) === ControlRecordType.ABORT;
    } catch {
      return false;
    }
  }
  return false;
}
