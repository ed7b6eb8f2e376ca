/**
 * What `samsa transactions` prints, as Kafka's TransactionsCommand does: every table through
 * ToolsUtils.prettyPrintTable (each cell padded with spaces to its column's width, then a tab —
 * after the last column too), absent values as `None` or -1 where Kafka prints them so; and the
 * pure half of `find-hanging` (which open transactions are candidates, which are hanging).
 */
import {
  topicPartitionKey,
  type PartitionProducerState,
  type ProducerState,
  type TopicPartition,
  type TransactionDescription,
  type TransactionListing,
} from '@samsa/client';

export const LIST_HEADERS = ['TransactionalId', 'Coordinator', 'ProducerId', 'TransactionState'] as const;

export const DESCRIBE_HEADERS = [
  'CoordinatorId',
  'TransactionalId',
  'ProducerId',
  'ProducerEpoch',
  'TransactionState',
  'TransactionTimeoutMs',
  'CurrentTransactionStartTimeMs',
  'TransactionDurationMs',
  'TopicPartitions',
] as const;

export const DESCRIBE_PRODUCERS_HEADERS = [
  'ProducerId',
  'ProducerEpoch',
  'LatestCoordinatorEpoch',
  'LastSequence',
  'LastTimestamp',
  'CurrentTransactionStartOffset',
] as const;

export const FIND_HANGING_HEADERS = [
  'Topic',
  'Partition',
  'ProducerId',
  'ProducerEpoch',
  'CoordinatorEpoch',
  'StartOffset',
  'LastTimestamp',
  'Duration(min)',
] as const;

/** Kafka's ToolsUtils.prettyPrintTable: the header line, then one line per row. */
export function prettyPrintTable(headers: readonly string[], rows: ReadonlyArray<readonly string[]>): string[] {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => `${c.padEnd(widths[i]!)}\t`).join('');
  return [line(headers), ...rows.map(line)];
}

export function listRows(listings: readonly TransactionListing[]): string[][] {
  return listings.map((l) => [l.transactionalId, String(l.coordinatorId), String(l.producerId), l.state]);
}

export function describeRow(d: TransactionDescription, nowMs: number): string[] {
  const start = d.transactionStartTimeMs;
  return [
    String(d.coordinatorId),
    d.transactionalId,
    String(d.producerId),
    String(d.producerEpoch),
    d.state,
    String(d.transactionTimeoutMs),
    start === null ? 'None' : String(start),
    start === null ? 'None' : String(BigInt(nowMs) - start),
    d.topicPartitions.map((tp) => topicPartitionKey(tp)).join(','),
  ];
}

export function describeProducersRows(producers: readonly ProducerState[]): string[][] {
  return producers.map((p) => [
    String(p.producerId),
    String(p.producerEpoch),
    String(p.coordinatorEpoch ?? -1),
    String(p.lastSequence),
    String(p.lastTimestamp),
    p.currentTransactionStartOffset === null ? 'None' : String(p.currentTransactionStartOffset),
  ]);
}

/** An open transaction of one partition (Kafka's FindHangingTransactionsCommand.OpenTransaction). */
export interface OpenTransaction extends TopicPartition {
  producer: ProducerState;
}

/**
 * The candidates of find-hanging: open transactions whose producer last wrote longer than
 * `maxTransactionTimeoutMs` ago (no transaction may stay open longer than the coordinator's
 * transaction.max.timeout.ms without being aborted by it).
 */
export function candidateOpenTransactions(states: readonly PartitionProducerState[], maxTransactionTimeoutMs: number, nowMs: number): OpenTransaction[] {
  const out: OpenTransaction[] = [];
  for (const s of states) {
    for (const p of s.activeProducers) {
      if (p.currentTransactionStartOffset !== null && BigInt(nowMs) - p.lastTimestamp > BigInt(maxTransactionTimeoutMs)) {
        out.push({ topic: s.topic, partition: s.partition, producer: p });
      }
    }
  }
  return out;
}

/**
 * Kafka's filterHangingTransactions: an open transaction hangs when no coordinator lists its
 * producer id, when its transactional id is no longer described (TRANSACTIONAL_ID_NOT_FOUND:
 * `null` here), or when the coordinator's transaction does not include the partition (the
 * coordinator will never write its marker there).
 */
export function filterHangingTransactions(
  candidates: readonly OpenTransaction[],
  transactionalIds: ReadonlyMap<bigint, string>,
  descriptions: ReadonlyMap<string, TransactionDescription | null>,
): OpenTransaction[] {
  return candidates.filter((c) => {
    const id = transactionalIds.get(c.producer.producerId);
    if (id === undefined) return true;
    const d = descriptions.get(id);
    if (!d) return true;
    return !d.topicPartitions.some((tp) => tp.topic === c.topic && tp.partition === c.partition);
  });
}

export function findHangingRows(hanging: readonly OpenTransaction[], nowMs: number): string[][] {
  return hanging.map((t) => [
    t.topic,
    String(t.partition),
    String(t.producer.producerId),
    String(t.producer.producerEpoch),
    String(t.producer.coordinatorEpoch ?? -1),
    String(t.producer.currentTransactionStartOffset ?? -1),
    String(t.producer.lastTimestamp),
    // TimeUnit.MILLISECONDS.toMinutes: truncated
    String((BigInt(nowMs) - t.producer.lastTimestamp) / 60_000n),
  ]);
}
