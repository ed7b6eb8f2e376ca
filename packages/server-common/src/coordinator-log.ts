/**
 * What a coordinator (the group coordinator over `__consumer_offsets`, the transaction coordinator
 * over `__transaction_state`) needs from the replica layer for the partitions of its internal
 * topic. The broker implements it over its replicas; tests use an in-memory log.
 */
export interface CoordinatorLog {
  /** Whether this broker has the partition's log (Kafka's getMagic / getLog). */
  hasLog(partition: number): boolean;
  /**
   * Appends one batch as leader. acks=-1 resolves once the high watermark passed it (or with
   * REQUEST_TIMED_OUT after `timeoutMs`); errors are the produce path's codes.
   */
  append(partition: number, records: Buffer, requiredAcks: number, timeoutMs: number): Promise<{ errorCode: number; baseOffset: bigint }>;
  /** Log start offset, undefined when there is no log. */
  logStartOffset(partition: number): bigint | undefined;
  /** Log end offset while this broker leads the partition, else -1 (ends a load early). */
  leaderLogEndOffset(partition: number): bigint;
  /** Whole batches from `offset` (at least one, even past maxBytes). */
  read(partition: number, offset: bigint, maxBytes: number): Promise<Buffer>;
}
