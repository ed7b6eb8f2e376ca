/**
 * The transaction state of one cleaning round (Kafka's CleanedTransactionMetadata): fed with the
 * aborted transactions of the range being read (from the `.txnindex` files) and with every batch in
 * offset order, it tells which batches may be discarded:
 *
 * - a data batch of an aborted transaction (one whose first offset is at or before the batch and
 *   whose ABORT marker has not been read yet) is discardable;
 * - a COMMIT marker is discardable when no batch of its transaction was read in this round;
 * - an ABORT marker is discardable when no batch of its transaction was read in this round; when
 *   some were (they are being removed now), the marker stays one more round and its aborted
 *   transaction is kept for the cleaned segment's transaction index (`retainedAborted`);
 * - an empty control batch (an earlier cleaning emptied it) is discardable.
 *
 * Discardable markers are not dropped at once: the batch filter gives them a delete horizon first.
 */
import { ControlRecordType, readControlRecordType, type RecordBatch } from '@samsa/protocol';
import type { AbortedTxn } from '../transaction-index.js';

export class CleanedTransactionMetadata {
  /** Producers whose transaction (not known aborted) had a batch read since its last marker. */
  private readonly ongoingCommittedTxns = new Set<bigint>();
  /** Aborted transactions whose first offset was reached, with whether a batch of theirs was read. */
  private readonly ongoingAbortedTxns = new Map<bigint, { txn: AbortedTxn; batchSeen: boolean }>();
  /** Aborted transactions not reached yet, by first offset. */
  private pending: AbortedTxn[] = [];
  private retained: AbortedTxn[] = [];

  /** Adds aborted transactions of the range about to be read (duplicates are harmless). */
  addAbortedTransactions(txns: readonly AbortedTxn[]): void {
    if (txns.length === 0) return;
    this.pending.push(...txns);
    this.pending.sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0));
  }

  /** A data batch was read: true when it belongs to an aborted transaction (Kafka's onBatchRead). */
  onBatchRead(batch: RecordBatch): boolean {
    this.consumeAbortedTxnsUpTo(batch.lastOffset);
    if (!batch.isTransactional) return false;
    const aborted = this.ongoingAbortedTxns.get(batch.producerId);
    if (aborted) {
      aborted.batchSeen = true;
      return true;
    }
    this.ongoingCommittedTxns.add(batch.producerId);
    return false;
  }

  /** A control batch was read: true when it may be discarded (Kafka's onControlBatchRead). */
  onControlBatchRead(batch: RecordBatch): boolean {
    this.consumeAbortedTxnsUpTo(batch.lastOffset);
    const first = batch.records().next();
    // a control batch emptied by an earlier cleaning
    if (first.done) return true;
    const producerId = batch.producerId;
    switch (readControlRecordType(first.value.key)) {
      case ControlRecordType.ABORT: {
        const aborted = this.ongoingAbortedTxns.get(producerId);
        this.ongoingAbortedTxns.delete(producerId);
        // keep the marker (and its index entry) until every batch of the transaction is gone
        if (aborted?.batchSeen) {
          this.retained.push(aborted.txn);
          return false;
        }
        return true;
      }
      case ControlRecordType.COMMIT:
        return !this.ongoingCommittedTxns.delete(producerId);
      default:
        return false;
    }
  }

  /** The aborted transactions whose marker was kept since the last call, in marker order. */
  takeRetainedAborted(): AbortedTxn[] {
    const out = this.retained;
    this.retained = [];
    return out;
  }

  private consumeAbortedTxnsUpTo(offset: bigint): void {
    let n = 0;
    while (n < this.pending.length && (this.pending[n] as AbortedTxn).firstOffset <= offset) {
      const txn = this.pending[n] as AbortedTxn;
      if (!this.ongoingAbortedTxns.has(txn.producerId)) this.ongoingAbortedTxns.set(txn.producerId, { txn, batchSeen: false });
      n++;
    }
    if (n > 0) this.pending = this.pending.slice(n);
  }
}
