import { API_KEYS, ErrorCode, KafkaError, topicPartitionKey, type TopicPartition } from '@samsa/protocol';
import type { Cluster } from './cluster.js';
import { BatchError, brokerError } from './errors.js';

/**
 * The transactions half of the Admin client (KIP-664; Kafka's Admin.listTransactions,
 * describeTransactions, describeProducers, abortTransaction), what `kafka-transactions.sh` is
 * built on:
 * - listTransactions: ListTransactions to every broker (each lists the transactional ids it
 *   coordinates);
 * - describeTransactions: DescribeTransactions to each id's coordinator, found with
 *   FindCoordinator key type 1 (TRANSACTION) before every attempt;
 * - describeProducers: DescribeProducers to each partition's leader, or to one given broker
 *   (any replica answers; NOT_LEADER_OR_FOLLOWER from it is then final, as in Kafka);
 * - abortTransaction: an ABORT marker for one partition, written with WriteTxnMarkers sent to the
 *   partition's leader with the producer id / epoch and coordinator epoch of the open transaction
 *   (as describeProducers reports them) — how a hanging transaction is closed.
 */

export interface TransactionOperationOptions {
  /** Deadline of the whole operation, retries included. Default: the cluster's defaultApiTimeoutMs. */
  timeoutMs?: number;
}

export interface ListTransactionsOptions extends TransactionOperationOptions {
  /** Only transactions in these states (Kafka's names: Ongoing, PrepareCommit, ...). Default: all. */
  states?: readonly string[];
  /** Only transactions of these producer ids. Default: all. */
  producerIds?: readonly bigint[];
}

/** Kafka's TransactionListing, with the broker that listed it (allByBrokerId). */
export interface TransactionListing {
  transactionalId: string;
  producerId: bigint;
  /** Kafka's TransactionState name: Ongoing, PrepareAbort, PrepareCommit, CompleteAbort, CompleteCommit, Empty, PrepareEpochFence. */
  state: string;
  /** The coordinator that listed it. */
  coordinatorId: number;
}

/** Kafka's TransactionDescription. */
export interface TransactionDescription {
  transactionalId: string;
  coordinatorId: number;
  state: string;
  producerId: bigint;
  producerEpoch: number;
  transactionTimeoutMs: number;
  /** When the current transaction started; null when none is open (the broker's -1). */
  transactionStartTimeMs: bigint | null;
  /** The partitions of the ongoing transaction (or those still waiting for markers), sorted. */
  topicPartitions: TopicPartition[];
}

/** Kafka's ProducerState (DescribeProducersResult). */
export interface ProducerState {
  producerId: bigint;
  producerEpoch: number;
  lastSequence: number;
  lastTimestamp: bigint;
  /** The epoch of the coordinator that wrote the producer's last marker; null before any. */
  coordinatorEpoch: number | null;
  /** The first offset of the producer's open transaction; null when none is open. */
  currentTransactionStartOffset: bigint | null;
}

export interface PartitionProducerState extends TopicPartition {
  activeProducers: ProducerState[];
}

export interface DescribeProducersOptions extends TransactionOperationOptions {
  /** Ask this broker (any replica) instead of each partition's leader. */
  brokerId?: number;
}

/** Kafka's AbortTransactionSpec: the open transaction of one partition to end with an ABORT marker. */
export interface AbortTransactionSpec extends TopicPartition {
  producerId: bigint;
  producerEpoch: number;
  coordinatorEpoch: number;
}

/** An error that ends the operation although its code is retriable (a partition the metadata does not have, a NOT_LEADER_OR_FOLLOWER from a broker the caller chose). */
class FinalError extends KafkaError {
  override get retriable(): boolean {
    return false;
  }
}

/** FindCoordinator key type TRANSACTION. */
const TRANSACTION_KEY_TYPE = 1;

/** The coordinator of `transactionalId` (FindCoordinator, key type TRANSACTION). One attempt. */
export async function findTransactionCoordinator(cluster: Cluster, transactionalId: string): Promise<number> {
  const conn = await cluster.anyConnection();
  const res = await conn.request(API_KEYS.FindCoordinator, (v) => ({
    key: v < 4 ? transactionalId : '',
    keyType: TRANSACTION_KEY_TYPE,
    coordinatorKeys: v >= 4 ? [transactionalId] : [],
  }));
  if (res.version >= 4) {
    const c = res.body.coordinators.find((x) => x.key === transactionalId);
    if (!c) throw new KafkaError('COORDINATOR_NOT_AVAILABLE', `The FindCoordinator response has no coordinator for transactional id '${transactionalId}'`);
    if (c.errorCode !== ErrorCode.NONE) throw brokerError(c.errorCode, c.errorMessage);
    return c.nodeId;
  }
  if (res.body.errorCode !== ErrorCode.NONE) throw brokerError(res.body.errorCode, res.body.errorMessage);
  return res.body.nodeId;
}

/** The transactions every broker coordinates (ListTransactions to each), by broker id, then as listed. */
export async function listTransactions(cluster: Cluster, opts: ListTransactionsOptions = {}): Promise<TransactionListing[]> {
  const meta = await cluster.retry('listTransactions', () => cluster.refreshMetadata(), opts);
  const body = { stateFilters: [...(opts.states ?? [])], producerIdFilters: [...(opts.producerIds ?? [])] };
  const perBroker = await Promise.all(
    [...meta.brokers]
      .sort((a, b) => a.nodeId - b.nodeId)
      .map((b) =>
        cluster.retry(
          'listTransactions',
          async () => {
            const conn = await cluster.connectionTo(b.nodeId);
            const res = await conn.request(API_KEYS.ListTransactions, body);
            if (res.body.errorCode !== ErrorCode.NONE) throw brokerError(res.body.errorCode);
            return res.body.transactionStates.map((t) => ({
              transactionalId: t.transactionalId,
              producerId: t.producerId,
              state: t.transactionState,
              coordinatorId: b.nodeId,
            }));
          },
          opts,
        ),
      ),
  );
  return perBroker.flat();
}

const byTopicPartition = (a: TopicPartition, b: TopicPartition) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition);

/**
 * Describes transactional ids (DescribeTransactions to each id's coordinator), in the order asked.
 * Rejects with BatchError (keyed by transactional id) if any failed: TRANSACTIONAL_ID_NOT_FOUND for
 * ids no coordinator knows; NOT_COORDINATOR and loading coordinators are looked up again and retried.
 */
export async function describeTransactions(
  cluster: Cluster,
  transactionalIds: readonly string[],
  opts: TransactionOperationOptions = {},
): Promise<TransactionDescription[]> {
  const ids = [...new Set(transactionalIds)];
  const errors = new Map<string, KafkaError>();
  const out = new Map<string, TransactionDescription>();
  await Promise.all(
    ids.map(async (transactionalId) => {
      try {
        const d = await cluster.retry(
          'describeTransactions',
          async () => {
            const coordinatorId = await findTransactionCoordinator(cluster, transactionalId);
            const conn = await cluster.connectionTo(coordinatorId);
            const res = await conn.request(API_KEYS.DescribeTransactions, { transactionalIds: [transactionalId] });
            const s = res.body.transactionStates.find((x) => x.transactionalId === transactionalId);
            if (!s) throw new KafkaError('UNKNOWN_SERVER_ERROR', `The DescribeTransactions response has no result for transactional id '${transactionalId}'`);
            if (s.errorCode === ErrorCode.TRANSACTIONAL_ID_NOT_FOUND) {
              throw new KafkaError(
                s.errorCode,
                `DescribeTransactions request for transactionalId \`${transactionalId}\` failed because the ID could not be found`,
              );
            }
            if (s.errorCode !== ErrorCode.NONE) throw brokerError(s.errorCode);
            return {
              transactionalId,
              coordinatorId,
              state: s.transactionState,
              producerId: s.producerId,
              producerEpoch: s.producerEpoch,
              transactionTimeoutMs: s.transactionTimeoutMs,
              transactionStartTimeMs: s.transactionStartTimeMs < 0n ? null : s.transactionStartTimeMs,
              topicPartitions: s.topics.flatMap((t) => t.partitions.map((partition) => ({ topic: t.topic, partition }))).sort(byTopicPartition),
            };
          },
          opts,
        );
        out.set(transactionalId, d);
      } catch (err) {
        if (!(err instanceof KafkaError)) throw err;
        errors.set(transactionalId, err);
      }
    }),
  );
  if (errors.size > 0)
    throw new BatchError(
      'describeTransactions',
      errors,
      ids.filter((id) => out.has(id)),
    );
  return ids.map((id) => out.get(id)!);
}

/** Leaders of `partitions` from fresh metadata (-1: none); partitions the cluster does not have are absent. */
async function leadersOf(cluster: Cluster, partitions: readonly TopicPartition[]): Promise<Map<string, number>> {
  const md = await cluster.fetchMetadata([...new Set(partitions.map((p) => p.topic))]);
  const leaders = new Map<string, number>();
  for (const t of md.body.topics) {
    if (t.name === null) continue;
    if (t.errorCode !== ErrorCode.NONE && t.errorCode !== ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) throw brokerError(t.errorCode);
    for (const p of t.partitions) leaders.set(topicPartitionKey(t.name, p.partitionIndex), p.leaderId);
  }
  return leaders;
}

const unknownPartition = (k: string) => new FinalError('UNKNOWN_TOPIC_OR_PARTITION', `Topic partition ${k} does not exist`);
const noLeader = (k: string) => new KafkaError('LEADER_NOT_AVAILABLE', `No leader for ${k}`);

function toProducerState(p: {
  producerId: bigint;
  producerEpoch: number;
  lastSequence: number;
  lastTimestamp: bigint;
  coordinatorEpoch: number;
  currentTxnStartOffset: bigint;
}): ProducerState {
  return {
    producerId: p.producerId,
    producerEpoch: p.producerEpoch,
    lastSequence: p.lastSequence,
    lastTimestamp: p.lastTimestamp,
    coordinatorEpoch: p.coordinatorEpoch < 0 ? null : p.coordinatorEpoch,
    currentTransactionStartOffset: p.currentTxnStartOffset < 0n ? null : p.currentTxnStartOffset,
  };
}

/**
 * The active producers of each partition (DescribeProducers to its leader, or to `opts.brokerId`),
 * in the order asked. NOT_LEADER_OR_FOLLOWER from a leader looks the leader up again; from a given
 * broker it is final. Rejects with BatchError (keyed by `topic-partition`) if any partition failed.
 */
export async function describeProducers(
  cluster: Cluster,
  partitions: readonly TopicPartition[],
  opts: DescribeProducersOptions = {},
): Promise<PartitionProducerState[]> {
  const wanted = new Map(partitions.map((p) => [topicPartitionKey(p), { topic: p.topic, partition: p.partition }]));
  const done = new Map<string, PartitionProducerState>();
  const errors = new Map<string, KafkaError>();
  if (wanted.size === 0) return [];
  try {
    await cluster.retry(
      'describeProducers',
      async () => {
        const pending = [...wanted].filter(([k]) => !done.has(k) && !errors.has(k)).map(([, p]) => p);
        const targets = new Map<number, TopicPartition[]>();
        let retry: KafkaError | null = null;
        if (opts.brokerId !== undefined) targets.set(opts.brokerId, pending);
        else {
          const leaders = await leadersOf(cluster, pending);
          for (const p of pending) {
            const k = topicPartitionKey(p);
            const leader = leaders.get(k);
            if (leader === undefined) errors.set(k, unknownPartition(k));
            else if (leader < 0) retry = noLeader(k);
            else targets.set(leader, [...(targets.get(leader) ?? []), p]);
          }
        }
        await Promise.all(
          [...targets].map(async ([brokerId, list]) => {
            const topics = new Map<string, number[]>();
            for (const p of list) topics.set(p.topic, [...(topics.get(p.topic) ?? []), p.partition]);
            const conn = await cluster.connectionTo(brokerId);
            const res = await conn.request(API_KEYS.DescribeProducers, { topics: [...topics].map(([name, partitionIndexes]) => ({ name, partitionIndexes })) });
            for (const t of res.body.topics) {
              for (const p of t.partitions) {
                const k = topicPartitionKey(t.name, p.partitionIndex);
                if (!wanted.has(k)) continue;
                if (p.errorCode === ErrorCode.NONE) {
                  done.set(k, { topic: t.name, partition: p.partitionIndex, activeProducers: p.activeProducers.map(toProducerState) });
                  continue;
                }
                const err = brokerError(p.errorCode, p.errorMessage);
                if (p.errorCode === ErrorCode.NOT_LEADER_OR_FOLLOWER && opts.brokerId !== undefined) {
                  errors.set(k, new FinalError(p.errorCode, `Failed to describe active producers for partition ${k} on brokerId ${brokerId}`));
                } else if (err.retriable) retry = err;
                else errors.set(k, err);
              }
            }
          }),
        );
        if (retry) throw retry;
      },
      opts,
    );
  } catch (err) {
    if (!(err instanceof KafkaError)) throw err;
    for (const k of wanted.keys()) if (!done.has(k) && !errors.has(k)) errors.set(k, err);
  }
  if (errors.size > 0) throw new BatchError('describeProducers', errors, [...done.keys()]);
  return [...wanted.keys()].map((k) => done.get(k)!);
}

/**
 * Aborts the open transaction of one partition (Kafka's Admin.abortTransaction): WriteTxnMarkers
 * with an ABORT marker for the spec's producer id / epoch and coordinator epoch, sent to the
 * partition's leader (looked up again on NOT_LEADER_OR_FOLLOWER and other retriable errors).
 * INVALID_PRODUCER_EPOCH and TRANSACTION_COORDINATOR_FENCED reject.
 */
export async function abortTransaction(cluster: Cluster, spec: AbortTransactionSpec, opts: TransactionOperationOptions = {}): Promise<void> {
  const k = topicPartitionKey(spec);
  await cluster.retry(
    'abortTransaction',
    async () => {
      const leader = (await leadersOf(cluster, [spec])).get(k);
      if (leader === undefined) throw unknownPartition(k);
      if (leader < 0) throw noLeader(k);
      const conn = await cluster.connectionTo(leader);
      const res = await conn.request(API_KEYS.WriteTxnMarkers, {
        markers: [
          {
            producerId: spec.producerId,
            producerEpoch: spec.producerEpoch,
            transactionResult: false,
            coordinatorEpoch: spec.coordinatorEpoch,
            topics: [{ name: spec.topic, partitionIndexes: [spec.partition] }],
          },
        ],
      });
      const marker = res.body.markers.length === 1 ? res.body.markers[0] : undefined;
      const p =
        marker?.producerId === spec.producerId && marker.topics.length === 1 && marker.topics[0]!.name === spec.topic ? marker.topics[0]!.partitions : [];
      if (p.length !== 1 || p[0]!.partitionIndex !== spec.partition) {
        throw new KafkaError('UNKNOWN_SERVER_ERROR', `The WriteTxnMarkers response has no single result for producer ${spec.producerId} on ${k}`);
      }
      const code = p[0]!.errorCode;
      if (code === ErrorCode.TRANSACTION_COORDINATOR_FENCED) {
        throw new KafkaError(
          code,
          `WriteTxnMarkers request with ${describeSpec(spec)} failed since the provided coordinator epoch ${spec.coordinatorEpoch} has been fenced by the active coordinator`,
        );
      }
      if (code === ErrorCode.INVALID_PRODUCER_EPOCH)
        throw new KafkaError(code, `WriteTxnMarkers request with ${describeSpec(spec)} failed due an invalid producer epoch`);
      if (code !== ErrorCode.NONE) throw brokerError(code);
    },
    opts,
  );
}

/** Kafka's AbortTransactionSpec.toString. */
export function describeSpec(spec: AbortTransactionSpec): string {
  return (
    `AbortTransactionSpec(topicPartition=${topicPartitionKey(spec)}, producerId=${spec.producerId}, ` +
    `producerEpoch=${spec.producerEpoch}, coordinatorEpoch=${spec.coordinatorEpoch})`
  );
}
