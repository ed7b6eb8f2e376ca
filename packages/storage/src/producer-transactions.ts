/**
 * The transactions of a partition's producers (Kafka's ProducerStateManager ongoingTxns /
 * unreplicatedTxns): a transactional data batch of a producer with no open transaction starts one
 * (ongoing, keyed by its first offset); its COMMIT or ABORT marker completes it, and it stays
 * "unreplicated" until the high watermark passes the marker. The first unstable offset — the
 * smallest first offset of both sets — bounds what read_committed consumers see (the LSO).
 */

/** A transaction the log has seen start; `lastOffset` (its marker) once completed. */
export interface TxnMetadata {
  producerId: bigint;
  firstOffset: bigint;
  lastOffset: bigint | null;
}

/** A marker just appended that ends a non-empty transaction (Kafka's CompletedTxn). */
export interface CompletedTxn {
  producerId: bigint;
  firstOffset: bigint;
  /** The marker's offset. */
  lastOffset: bigint;
  isAborted: boolean;
}

export class ProducerTransactions {
  /** Ascending by first offset (transactions start in log order). */
  private readonly ongoing = new Map<bigint, TxnMetadata>();
  private readonly unreplicated = new Map<bigint, TxnMetadata>();
  /** Cached min first offset of both sets; undefined when stale. */
  private firstUnstable: bigint | null | undefined = null;

  get ongoingTxns(): ReadonlyMap<bigint, TxnMetadata> {
    return this.ongoing;
  }

  get unreplicatedTxns(): ReadonlyMap<bigint, TxnMetadata> {
    return this.unreplicated;
  }

  /** The smallest first offset of an ongoing or unreplicated transaction, null when none. */
  get firstUnstableOffset(): bigint | null {
    if (this.firstUnstable === undefined) {
      let min: bigint | null = null;
      for (const k of this.ongoing.keys()) {
        min = k;
        break;
      }
      for (const k of this.unreplicated.keys()) if (min === null || k < min) min = k;
      this.firstUnstable = min;
    }
    return this.firstUnstable;
  }

  /** A transaction starts at `firstOffset` (appended after every ongoing one). */
  start(producerId: bigint, firstOffset: bigint): void {
    this.ongoing.set(firstOffset, { producerId, firstOffset, lastOffset: null });
    this.firstUnstable = undefined;
  }

  /** Transactions restored from a snapshot (any order). */
  restore(txns: { producerId: bigint; firstOffset: bigint }[]): void {
    for (const t of [...txns].sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0)))
      this.start(t.producerId, t.firstOffset);
  }

  /**
   * Kafka's lastStableOffset(completedTxn), computed before the transaction leaves the ongoing set:
   * the first offset of the oldest ongoing transaction of another producer, else the offset after
   * the marker. It is what the transaction index records with an aborted transaction.
   */
  lastStableOffset(completed: CompletedTxn): bigint {
    for (const t of this.ongoing.values()) if (t.producerId !== completed.producerId) return t.firstOffset;
    return completed.lastOffset + 1n;
  }

  /** The marker was appended: the transaction waits for the high watermark. False if it was not ongoing. */
  complete(completed: CompletedTxn): boolean {
    const t = this.ongoing.get(completed.firstOffset);
    if (!t) return false;
    this.ongoing.delete(completed.firstOffset);
    t.lastOffset = completed.lastOffset;
    this.unreplicated.set(completed.firstOffset, t);
    this.firstUnstable = undefined;
    return true;
  }

  /** Completed transactions whose marker is below `offset` (the high watermark, or a new log start) are stable. */
  removeUnreplicatedBelow(offset: bigint): void {
    if (this.unreplicated.size === 0) return;
    for (const [first, t] of this.unreplicated) {
      if (t.lastOffset !== null && t.lastOffset < offset) {
        this.unreplicated.delete(first);
        this.firstUnstable = undefined;
      }
    }
  }

  clear(): void {
    this.ongoing.clear();
    this.unreplicated.clear();
    this.firstUnstable = null;
  }
}
