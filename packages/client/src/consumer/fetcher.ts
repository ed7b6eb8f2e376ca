/**
 * Kafka's Fetcher: one Fetch in flight per partition leader for the fetchable partitions (assigned,
 * not paused, position known), sized by fetch.min.bytes / fetch.max.wait.ms / fetch.max.bytes /
 * max.partition.fetch.bytes; answers are decoded (RecordBatch v2, every codec) into completed
 * fetches that poll() drains, at most max.poll.records at a time. Control batches are never
 * returned; with isolation.level=read_committed the batches of aborted transactions (the
 * response's abortedTransactions) are skipped too (aborted-transactions.ts). Full fetch requests (no KIP-227 session).
 */
import { API_KEYS, ErrorCode, KafkaError, recordBatches, topicPartitionKey, ZERO_UUID, type FetchResponsePartition } from '@samsa/protocol';
import type { Cluster } from '../cluster.js';
import { AbortedTransactionFilter } from './aborted-transactions.js';
import { brokerError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { ConsumerConfig } from './config.js';
import { OffsetOutOfRangeError } from './errors.js';
import type { ConsumerMetadata } from './metadata.js';
import type { SubscriptionState } from './subscription-state.js';
import { type ConsumerRecord, type Deserializer, type TopicPartition } from './types.js';

interface RawRecord {
  offset: bigint;
  timestamp: number;
  logAppendTime: boolean;
  key: Buffer | null;
  value: Buffer | null;
  headers: { key: string; value: Buffer | null }[];
  leaderEpoch: number;
}

interface CompletedFetch {
  tp: TopicPartition;
  fetchOffset: bigint;
  records: RawRecord[];
  next: number;
  /** Offset after the last complete batch (skipped control / aborted batches included). */
  endOffset: bigint;
  endLeaderEpoch: number;
  error: KafkaError | null;
  bytes: number;
}

const METADATA_ERRORS: ReadonlySet<number> = new Set([
  ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  ErrorCode.KAFKA_STORAGE_ERROR,
  ErrorCode.FENCED_LEADER_EPOCH,
  ErrorCode.UNKNOWN_LEADER_EPOCH,
  ErrorCode.LEADER_NOT_AVAILABLE,
  ErrorCode.REPLICA_NOT_AVAILABLE,
  ErrorCode.OFFSET_NOT_AVAILABLE,
]);

export interface FetchStats {
  fetches: number;
  fetchTimeMs: number;
  bytes: number;
  records: number;
}

export class Fetcher<K, V> {
  private readonly inflight = new Set<number>();
  private completed: CompletedFetch[] = [];
  private waiters: Array<() => void> = [];
  readonly stats: FetchStats = { fetches: 0, fetchTimeMs: 0, bytes: 0, records: 0 };

  constructor(
    private readonly cfg: ConsumerConfig,
    private readonly cluster: Cluster,
    private readonly metadata: ConsumerMetadata,
    private readonly subs: SubscriptionState,
    private readonly keyDeserializer: Deserializer<K>,
    private readonly valueDeserializer: Deserializer<V>,
    private readonly log: Logger,
  ) {}

  get hasCompletedFetches(): boolean {
    return this.completed.some((c) => c.error !== null || c.next < c.records.length || c.endOffset > c.fetchOffset);
  }

  /** Resolves when a fetch completes or `ms` passes. */
  waitForData(ms: number): Promise<void> {
    if (this.hasCompletedFetches || ms <= 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.waiters.push(done);
    });
  }

  /** Wakes a waiting poll (wakeup(), new assignment). */
  wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  /** Drops buffered data of partitions no longer assigned (or all). */
  clearBuffered(keep?: (tp: TopicPartition) => boolean): void {
    this.completed = keep ? this.completed.filter((c) => keep(c.tp)) : [];
  }

  /** Sends a Fetch to every leader of fetchable partitions that has none in flight and no buffered data. */
  sendFetches(): void {
    const buffered = new Set(this.completed.map((c) => topicPartitionKey(c.tp)));
    const byLeader = new Map<number, { tp: TopicPartition; offset: bigint; epoch: number }[]>();
    let missingLeader = false;
    for (const s of this.subs.fetchable()) {
      if (buffered.has(topicPartitionKey(s.tp))) continue;
      const meta = this.metadata.leaderOf(s.tp.topic, s.tp.partition);
      if (!meta || meta.leader < 0) {
        missingLeader = true;
        continue;
      }
      if (this.inflight.has(meta.leader)) continue;
      const l = byLeader.get(meta.leader) ?? [];
      l.push({ tp: s.tp, offset: s.position!.offset, epoch: meta.leaderEpoch });
      byLeader.set(meta.leader, l);
    }
    if (missingLeader) this.metadata.requestUpdate();
    for (const [leader, parts] of byLeader) void this.fetchFrom(leader, parts);
  }

  private async fetchFrom(leader: number, parts: { tp: TopicPartition; offset: bigint; epoch: number }[]): Promise<void> {
    this.inflight.add(leader);
    const started = Date.now();
    try {
      const topics = new Map<string, typeof parts>();
      for (const p of parts) topics.set(p.tp.topic, [...(topics.get(p.tp.topic) ?? []), p]);
      const conn = await this.cluster.connectionTo(leader);
      const res = await conn.send(
        API_KEYS.Fetch,
        (v) => ({
          clusterId: null,
          replicaId: -1,
          replicaState: { replicaId: -1, replicaEpoch: -1n },
          maxWaitMs: this.cfg.fetchMaxWaitMs,
          minBytes: this.cfg.fetchMinBytes,
          maxBytes: this.cfg.fetchMaxBytes,
          isolationLevel: this.cfg.isolationLevel === 'read_committed' ? 1 : 0,
          sessionId: 0,
          sessionEpoch: -1,
          topics: [...topics].map(([topic, ps]) => ({
            topic,
            topicId: ZERO_UUID,
            partitions: ps.map((p) => ({
              partition: p.tp.partition,
              currentLeaderEpoch: v >= 9 ? p.epoch : -1,
              fetchOffset: p.offset,
              lastFetchedEpoch: -1,
              logStartOffset: -1n,
              partitionMaxBytes: this.cfg.maxPartitionFetchBytes,
              replicaDirectoryId: ZERO_UUID,
            })),
          })),
          forgottenTopicsData: [],
          rackId: this.cfg.clientRack,
        }),
        // topic names on the wire: v13+ identifies topics by id
        { maxVersion: 12, timeoutMs: this.cfg.requestTimeoutMs + this.cfg.fetchMaxWaitMs },
      );
      this.stats.fetches++;
      this.stats.fetchTimeMs += Date.now() - started;
      if (res.errorCode !== ErrorCode.NONE) throw brokerError(res.errorCode);
      for (const t of res.responses) {
        for (const p of t.partitions) {
          const req = parts.find((x) => x.tp.topic === t.topic && x.tp.partition === p.partitionIndex);
          if (req) this.onPartitionData(req.tp, req.offset, p);
        }
      }
    } catch (err) {
      this.log.debug({ leader, err: (err as Error).message }, 'fetch failed');
      this.metadata.requestUpdate();
      // leave a little room before the next attempt to this leader
      await new Promise((r) => setTimeout(r, this.cfg.retryBackoffMs));
    } finally {
      this.inflight.delete(leader);
      this.wake();
    }
  }

  private onPartitionData(tp: TopicPartition, fetchOffset: bigint, p: FetchResponsePartition): void {
    if (!this.subs.isAssigned(tp)) return;
    const state = this.subs.stateOf(tp);
    if (state.position?.offset !== fetchOffset) return; // seeked meanwhile
    if (p.errorCode !== ErrorCode.NONE) {
      const err = brokerError(p.errorCode);
      if (METADATA_ERRORS.has(p.errorCode)) {
        this.log.debug({ topic: tp.topic, partition: tp.partition, error: err.errorName }, 'fetch error; refreshing metadata');
        this.metadata.requestUpdate();
      } else if (p.errorCode === ErrorCode.OFFSET_OUT_OF_RANGE) {
        if (this.cfg.autoOffsetReset === 'none') {
          this.completed.push({
            tp,
            fetchOffset,
            records: [],
            next: 0,
            endOffset: fetchOffset,
            endLeaderEpoch: -1,
            error: new OffsetOutOfRangeError(new Map([[topicPartitionKey(tp), fetchOffset]])),
            bytes: 0,
          });
        } else {
          this.log.info({ topic: tp.topic, partition: tp.partition, offset: fetchOffset.toString() }, 'fetch position is out of range; resetting offset');
          this.subs.requestReset(tp);
        }
      } else {
        this.completed.push({
          tp,
          fetchOffset,
          records: [],
          next: 0,
          endOffset: fetchOffset,
          endLeaderEpoch: -1,
          error: new KafkaError(p.errorCode, `Fetch of ${topicPartitionKey(tp)} failed: ${err.message}`, { cause: err }),
          bytes: 0,
        });
      }
      return;
    }
    state.highWatermark = p.highWatermark;
    state.lastStableOffset = p.lastStableOffset;
    state.logStartOffset = p.logStartOffset;
    const buf = p.records;
    if (!buf || buf.length === 0) return;
    const records: RawRecord[] = [];
    let endOffset = fetchOffset;
    let endLeaderEpoch = state.position.leaderEpoch;
    const filter = new AbortedTransactionFilter(p.abortedTransactions, this.cfg.isolationLevel === 'read_committed');
    try {
      for (const batch of recordBatches(buf)) {
        if (batch.magic !== 2) throw new KafkaError('CORRUPT_MESSAGE', `Unsupported record batch magic ${batch.magic} in ${topicPartitionKey(tp)}`);
        if (this.cfg.checkCrcs) batch.ensureValidCrc();
        if (batch.lastOffset < fetchOffset) continue;
        endOffset = batch.nextOffset;
        endLeaderEpoch = batch.partitionLeaderEpoch;
        if (filter.skip(batch)) continue;
        const logAppendTime = batch.timestampType === 1;
        for (const r of batch.records()) {
          if (r.offset < fetchOffset) continue;
          records.push({
            offset: r.offset,
            timestamp: Number(r.timestamp),
            logAppendTime,
            key: r.key,
            value: r.value,
            headers: r.headers.map((h) => ({ key: h.key, value: h.value })),
            leaderEpoch: batch.partitionLeaderEpoch,
          });
        }
      }
    } catch (err) {
      this.completed.push({
        tp,
        fetchOffset,
        records,
        next: 0,
        endOffset,
        endLeaderEpoch,
        error: new KafkaError('CORRUPT_MESSAGE', `Received exception when fetching the next record from ${topicPartitionKey(tp)}: ${(err as Error).message}`, {
          cause: err,
        }),
        bytes: buf.length,
      });
      return;
    }
    this.stats.bytes += buf.length;
    if (records.length === 0 && endOffset === fetchOffset) return;
    this.completed.push({ tp, fetchOffset, records, next: 0, endOffset, endLeaderEpoch, error: null, bytes: buf.length });
  }

  /** Up to `max` records from the completed fetches, advancing positions. Throws a partition's fetch error. */
  collect(max: number): ConsumerRecord<K, V>[] {
    const out: ConsumerRecord<K, V>[] = [];
    while (out.length < max && this.completed.length > 0) {
      const c = this.completed[0]!;
      const assigned = this.subs.isAssigned(c.tp);
      const state = assigned ? this.subs.stateOf(c.tp) : undefined;
      if (!state || state.paused || state.position === null || (c.next === 0 && state.position.offset !== c.fetchOffset)) {
        // revoked, paused or seeked since the fetch: drop it (paused data is fetched again on resume)
        this.completed.shift();
        continue;
      }
      if (c.error) {
        this.completed.shift();
        throw c.error;
      }
      const take = Math.min(max - out.length, c.records.length - c.next);
      for (let i = 0; i < take; i++) {
        const r = c.records[c.next++]!;
        out.push(this.toRecord(c.tp, r));
        state.position = { offset: r.offset + 1n, leaderEpoch: r.leaderEpoch };
      }
      if (c.next >= c.records.length) {
        if (c.endOffset > state.position.offset) state.position = { offset: c.endOffset, leaderEpoch: c.endLeaderEpoch };
        this.completed.shift();
      }
    }
    this.stats.records += out.length;
    return out;
  }

  private toRecord(tp: TopicPartition, r: RawRecord): ConsumerRecord<K, V> {
    let key: K;
    let value: V;
    try {
      key = this.keyDeserializer.deserialize(tp.topic, r.key);
      value = this.valueDeserializer.deserialize(tp.topic, r.value);
    } catch (err) {
      throw new KafkaError(
        'INVALID_RECORD',
        `Error deserializing key/value for partition ${topicPartitionKey(tp)} at offset ${r.offset}. If needed, please seek past the record to continue consumption.`,
        { cause: err },
      );
    }
    return {
      topic: tp.topic,
      partition: tp.partition,
      offset: r.offset,
      timestamp: r.timestamp,
      timestampType: r.logAppendTime ? 'LogAppendTime' : 'CreateTime',
      key,
      value,
      headers: r.headers,
      leaderEpoch: r.leaderEpoch,
      serializedKeySize: r.key?.length ?? -1,
      serializedValueSize: r.value?.length ?? -1,
    };
  }
}
