/**
 * Reads partitions back with Fetch by explicit assignment (no consumer group): from offset 0 (or
 * the log start) to the high watermark, from each partition's current leader, following leader
 * changes. A read ends when the high watermark reached covers `until` (the highest acknowledged
 * offset + 1) and the whole log up to it was read, or at the deadline. With `readCommitted` the
 * Fetch asks for isolation level 1 (answers end at the last stable offset) and the batches of
 * aborted transactions are dropped as a read_committed consumer drops them.
 */
import { API_KEYS, KafkaError, recordBatches, topicPartitionKey, type RecordBatch } from '@samsa/protocol';
import { Admin } from '../admin.js';
import type { Cluster } from '../cluster.js';
import type { Logger } from '../logger.js';
import { AbortedTransactionFilter } from '../consumer/aborted-transactions.js';

export interface ConsumedRecord {
  offset: number;
  value: string | null;
  /** Leader epoch of the record's batch. */
  epoch: number;
}

export interface PartitionRead {
  partition: number;
  records: ConsumedRecord[];
  highWatermark: number;
  logStartOffset: number;
  /** Set when the read did not finish (deadline), with the last error. */
  incomplete: string | null;
  /** Records that came back at an offset at or below one read before (should never happen). */
  backwards: number;
}

const FETCH_MAX_VERSION = 12; // topic names, not ids
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The error name of a Fetch error code (retriable ones mean: look the leader up again). */
function codeError(code: number, what: string): KafkaError {
  return new KafkaError(code, `${what}: error code ${code}`);
}

export async function readPartition(
  cluster: Cluster,
  admin: Admin,
  topic: string,
  partition: number,
  until: number,
  deadline: number,
  log: Logger,
  readCommitted = false,
  /** The leader as already known (readTopic's Metadata): the first Fetch goes there without a Metadata request of its own. */
  knownLeader: number | null = null,
): Promise<PartitionRead> {
  const records: ConsumedRecord[] = [];
  let offset = 0;
  let hw = -1;
  let logStart = 0;
  let backwards = 0;
  let lastError = '';
  let leader: number | null = knownLeader !== null && knownLeader >= 0 ? knownLeader : null;
  for (let attempt = 0; ; attempt++) {
    if (Date.now() > deadline) return { partition, records, highWatermark: hw, logStartOffset: logStart, incomplete: lastError || 'deadline', backwards };
    try {
      if (leader === null) {
        const [d] = await admin.describeTopics([topic], { timeoutMs: Math.max(1000, Math.min(15_000, deadline - Date.now())) });
        leader = d?.partitions.find((p) => p.partition === partition)?.leader ?? null;
        if (leader === null) throw new Error(`no leader for ${topicPartitionKey(topic, partition)}`);
      }
      const conn = await cluster.connectionTo(leader);
      const res = await conn.send(
        API_KEYS.Fetch,
        {
          clusterId: null,
          replicaId: -1,
          replicaState: { replicaId: -1, replicaEpoch: -1n },
          maxWaitMs: 200,
          minBytes: 1,
          maxBytes: 16 * 1024 * 1024,
          isolationLevel: readCommitted ? 1 : 0,
          sessionId: 0,
          sessionEpoch: -1,
          topics: [
            {
              topic,
              topicId: Buffer.alloc(16),
              partitions: [
                {
                  partition,
                  currentLeaderEpoch: -1,
                  fetchOffset: BigInt(offset),
                  lastFetchedEpoch: -1,
                  logStartOffset: -1n,
                  partitionMaxBytes: 8 * 1024 * 1024,
                  replicaDirectoryId: Buffer.alloc(16),
                },
              ],
            },
          ],
          forgottenTopicsData: [],
          rackId: '',
        },
        { maxVersion: FETCH_MAX_VERSION, timeoutMs: 30_000 },
      );
      if (res.errorCode !== 0) throw codeError(res.errorCode, `Fetch ${topicPartitionKey(topic, partition)}`);
      const p = res.responses[0]?.partitions[0];
      if (!p) throw new Error(`Fetch ${topicPartitionKey(topic, partition)}: no partition in the answer`);
      if (p.errorCode === 1 /* OFFSET_OUT_OF_RANGE */ && offset === 0 && Number(p.logStartOffset) > 0) {
        offset = Number(p.logStartOffset);
        continue;
      }
      if (p.errorCode !== 0) throw codeError(p.errorCode, `Fetch ${topicPartitionKey(topic, partition)} from broker ${leader}`);
      hw = Number(p.highWatermark);
      logStart = Number(p.logStartOffset);
      const filter = new AbortedTransactionFilter(p.abortedTransactions, readCommitted);
      for (const batch of recordBatches(p.records ?? Buffer.alloc(0)) as Iterable<RecordBatch>) {
        batch.ensureValidCrc();
        if (Number(batch.nextOffset) <= offset) continue;
        if (!filter.skip(batch)) {
          for (const r of batch.records()) {
            const off = Number(r.offset);
            if (off < offset) continue;
            const last = records.at(-1);
            if (last && off <= last.offset) backwards++;
            records.push({ offset: off, value: r.value === null ? null : r.value.toString('utf8'), epoch: batch.partitionLeaderEpoch });
          }
        }
        offset = Number(batch.nextOffset);
      }
      if (offset >= hw && hw >= until) return { partition, records, highWatermark: hw, logStartOffset: logStart, incomplete: null, backwards };
    } catch (err) {
      lastError = (err as Error).message;
      if (attempt % 20 === 0) log.debug({ partition, leader, err: lastError }, 'fetch retry');
      leader = null;
      await sleep(200);
    }
  }
}

/**
 * Reads every partition of `topic` (concurrently). `until[p]`: the end offset the read must reach.
 * One Metadata request names every partition's leader; a partition's reader looks its leader up
 * again only after an error (a topic of thousands of partitions costs one Metadata, not one each).
 */
export async function readTopic(
  cluster: Cluster,
  topic: string,
  until: ReadonlyMap<number, number>,
  timeoutMs: number,
  log: Logger,
  readCommitted = false,
): Promise<PartitionRead[]> {
  const admin = new Admin({ cluster });
  const deadline = Date.now() + timeoutMs;
  const [d] = await admin.describeTopics([topic], { timeoutMs });
  if (!d) throw new Error(`topic ${topic} not found`);
  return Promise.all(
    d.partitions.map((p) => readPartition(cluster, admin, topic, p.partition, until.get(p.partition) ?? 0, deadline, log, readCommitted, p.leader)),
  );
}
