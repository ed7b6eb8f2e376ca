import { API_KEYS, ErrorCode, KafkaError, topicPartitionKey, type ApiRequestMap } from '@samsa/protocol';
import type { Cluster } from './cluster.js';
import { brokerError } from './errors.js';

export interface DeleteRecordsRequestEntry {
  topic: string;
  partition: number;
  /** Delete records below this offset; -1 means up to the high watermark. */
  offset: bigint;
}

/** One partition's outcome: the new low watermark, or the error. */
export type DeleteRecordsResult =
  | { topic: string; partition: number; lowWatermark: bigint; error?: undefined }
  | { topic: string; partition: number; lowWatermark?: undefined; error: KafkaError };

const tpKey = (t: string, p: number) => topicPartitionKey(t, p);

/**
 * Kafka's Admin.deleteRecords: each partition's request goes to its leader (from metadata, looked
 * up again on NOT_LEADER_OR_FOLLOWER and other retriable errors until the deadline). Per-partition
 * outcomes are returned, not thrown.
 */
export async function deleteRecords(
  cluster: Cluster,
  entries: readonly DeleteRecordsRequestEntry[],
  opts: { timeoutMs?: number; operationTimeoutMs?: number } = {},
): Promise<DeleteRecordsResult[]> {
  const done = new Map<string, DeleteRecordsResult>();
  const serverTimeout = opts.operationTimeoutMs ?? 30_000;
  if (entries.length === 0) return [];
  await cluster.retry(
    'deleteRecords',
    async () => {
      const pending = entries.filter((e) => !done.has(tpKey(e.topic, e.partition)));
      const md = await cluster.fetchMetadata([...new Set(pending.map((e) => e.topic))]);
      const leaders = new Map<string, number>();
      for (const t of md.body.topics) {
        if (t.name === null) continue;
        if (t.errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) {
          for (const e of pending)
            if (e.topic === t.name)
              done.set(tpKey(e.topic, e.partition), {
                topic: e.topic,
                partition: e.partition,
                error: new KafkaError(t.errorCode, `Topic '${t.name}' does not exist`),
              });
        }
        for (const p of t.partitions) leaders.set(tpKey(t.name, p.partitionIndex), p.leaderId);
      }
      const byLeader = new Map<number, DeleteRecordsRequestEntry[]>();
      let retry: KafkaError | null = null;
      for (const e of pending) {
        const k = tpKey(e.topic, e.partition);
        if (done.has(k)) continue;
        const leader = leaders.get(k);
        if (leader === undefined || leader < 0) {
          retry = new KafkaError('LEADER_NOT_AVAILABLE', `No leader for ${k}`);
          continue;
        }
        byLeader.set(leader, [...(byLeader.get(leader) ?? []), e]);
      }
      await Promise.all(
        [...byLeader].map(async ([leader, list]) => {
          const topics = new Map<string, DeleteRecordsRequestEntry[]>();
          for (const e of list) topics.set(e.topic, [...(topics.get(e.topic) ?? []), e]);
          const body: ApiRequestMap[21] = {
            topics: [...topics].map(([name, ps]) => ({ name, partitions: ps.map((p) => ({ partitionIndex: p.partition, offset: p.offset })) })),
            timeoutMs: serverTimeout,
          };
          const conn = await cluster.connectionTo(leader);
          const res = await conn.request(API_KEYS.DeleteRecords, body, { timeoutMs: Math.max(cluster.requestTimeoutMs, serverTimeout + 5_000) });
          for (const t of res.body.topics) {
            for (const p of t.partitions) {
              const k = tpKey(t.name, p.partitionIndex);
              if (p.errorCode === ErrorCode.NONE) done.set(k, { topic: t.name, partition: p.partitionIndex, lowWatermark: p.lowWatermark });
              else {
                const err = brokerError(p.errorCode);
                if (err.retriable) retry = err;
                else done.set(k, { topic: t.name, partition: p.partitionIndex, error: err });
              }
            }
          }
        }),
      );
      if (retry) throw retry;
    },
    opts,
  );
  return entries.map(
    (e) =>
      done.get(tpKey(e.topic, e.partition)) ?? {
        topic: e.topic,
        partition: e.partition,
        error: new KafkaError('UNKNOWN_SERVER_ERROR', `No DeleteRecords result for ${tpKey(e.topic, e.partition)}`),
      },
  );
}
