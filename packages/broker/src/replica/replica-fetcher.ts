import type { Logger } from 'pino';
import type { ConnectionOptions } from 'node:tls';
import { ErrorCode, errorName, topicPartitionKey, type FetchRequestForgottenTopic, type FetchRequestTopic, type FetchResponse } from '@samsa/protocol';
import { BrokerConnection, type ConnectHook } from './broker-connection.js';
import type { Partition } from './partition.js';
import type { ReplicationQuotaManager } from './replication-quota.js';
import { latencyTrace } from '../trace/latency-trace.js';
import { completeBatchesLength, prepareAppends, type Log } from '@samsa/storage';
import { FetchSessionHandler } from '../fetch-session/fetch-session-handler.js';

/** Partitions named per error in the one log line of a fetch response's partition errors. */
const PARTITION_ERROR_EXAMPLES = 5;
export interface FetcherOptions {
  brokerId: number;
  /** replica.fetch.wait.max.ms */
  maxWaitMs: number;
  /** replica.fetch.min.bytes */
  minBytes: number;
  /** replica.fetch.response.max.bytes */
  maxBytes: number;
  /** replica.fetch.max.bytes (per partition) */
  partitionMaxBytes: number;
  /** replica.fetch.backoff.ms */
  backoffMs: number;
  /** replica.socket.timeout.ms */
  requestTimeoutMs: number;
  /** The follower-side replication throttle (follower.replication.throttled.rate / .replicas). */
  quota?: ReplicationQuotaManager;
  /** Runs on each new connection to the leader (inter-broker SASL). */
  onConnect?: ConnectHook;
  /** TLS towards the leaders' inter-broker listener (SSL / SASL_SSL), else plaintext. */
  tls?: ConnectionOptions;
}

interface FetchState {
  partition: Partition;
  fetchOffset: bigint;
  leaderEpoch: number;
  truncating: boolean;
  delayedUntil: number;
  /** Kafka's isReplicaInSync: the last fetch left us at the leader's high watermark. */
  inSync: boolean;
}

const FETCH_VERSION = 11;
const OFFSET_FOR_LEADER_EPOCH_VERSION = 3;
const LIST_OFFSETS_VERSION = 4;
const ZERO_UUID = Buffer.alloc(16);
const THROTTLED_PAUSE_MS = 100;
/** Errors that only end the fetch session: the next fetch, a full one, goes out at once. */
const SESSION_ERRORS: ReadonlySet<number> = new Set([
  ErrorCode.FETCH_SESSION_ID_NOT_FOUND,
  ErrorCode.INVALID_FETCH_SESSION_EPOCH,
  ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR,
]);

/**
 * One fetcher thread's work (Kafka's ReplicaFetcherThread): for the partitions this broker follows
 * on one leader, first truncate to where the histories diverge (OffsetForLeaderEpoch, KIP-101/279 —
 * never to the high watermark alone), then fetch in a loop, appending the leader's batches unchanged
 * and taking HW = min(own LEO, leader HW).
 */
export class ReplicaFetcher {
  private readonly partitions = new Map<string, FetchState>();
  private readonly conn: BrokerConnection;
  /** The leader's fetch session (KIP-227). */
  private readonly session: FetchSessionHandler;
  private running = false;
  private wake: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  /** Tracing only: when the last fetch response was processed. */
  private lastFetchDone = 0;

  constructor(
    readonly sourceBrokerId: number,
    host: string,
    port: number,
    private readonly o: FetcherOptions,
    private readonly log: Logger,
  ) {
    this.session = new FetchSessionHandler(log.child({ fetchSessionOf: sourceBrokerId }));
    this.conn = new BrokerConnection(
      host,
      port,
      `broker-${o.brokerId}-fetcher-${sourceBrokerId}`,
      Math.max(o.requestTimeoutMs, o.maxWaitMs + 5000),
      o.onConnect,
      o.tls,
    );
  }

  get size(): number {
    return this.partitions.size;
  }

  has(key: string): boolean {
    return this.partitions.has(key);
  }

  addPartition(key: string, partition: Partition, leaderEpoch: number): void {
    const log = partition.log;
    if (!log) return;
    this.partitions.set(key, { partition, fetchOffset: log.logEndOffset, leaderEpoch, truncating: true, delayedUntil: 0, inSync: false });
    this.wake?.();
  }

  removePartition(key: string): void {
    this.partitions.delete(key);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wake?.();
    this.conn.close();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (this.running) {
      const now = Date.now();
      const ready = [...this.partitions.entries()].filter(([, s]) => s.delayedUntil <= now);
      if (ready.length === 0) {
        const next = Math.min(...[...this.partitions.values()].map((s) => s.delayedUntil), now + 1000);
        await new Promise<void>((r) => {
          this.wake = r;
          setTimeout(r, Math.max(10, next - now)).unref();
        });
        this.wake = undefined;
        continue;
      }
      try {
        const truncating = ready.filter(([, s]) => s.truncating);
        if (truncating.length > 0) await this.truncate(truncating);
        const fetching = ready.filter(([k, s]) => !s.truncating && this.partitions.get(k) === s);
        // Kafka's shouldFollowerThrottle: out-of-sync throttled partitions sit out while over quota
        const q = this.o.quota;
        const allowed = q ? fetching.filter(([, s]) => s.inSync || !q.isThrottled(s.partition.topic, s.partition.partition) || !q.isQuotaExceeded()) : fetching;
        if (allowed.length > 0) await this.fetch(allowed);
        else if (fetching.length > 0 && truncating.length === 0) {
          // everything is throttled: wait for the rate to drop (a tenth of a quota sample)
          await new Promise((r) => setTimeout(r, THROTTLED_PAUSE_MS));
        }
      } catch (err) {
        if (!this.running) return;
        this.log.warn({ source: this.sourceBrokerId, err: (err as Error).message }, 'replica fetch failed; backing off');
        await new Promise((r) => setTimeout(r, this.o.backoffMs));
      }
    }
  }

  private delay(s: FetchState): void {
    s.delayedUntil = Date.now() + this.o.backoffMs;
  }

  /** Truncates each partition to the offset where its history diverges from the leader's. */
  private async truncate(entries: Array<[string, FetchState]>): Promise<void> {
    const byTopic = new Map<string, Array<{ partition: number; currentLeaderEpoch: number; leaderEpoch: number }>>();
    const noEpoch: Array<[string, FetchState]> = [];
    for (const [k, s] of entries) {
      const latest = s.partition.log?.latestEpoch;
      if (latest === undefined) {
        noEpoch.push([k, s]);
        continue;
      }
      const list = byTopic.get(s.partition.topic) ?? [];
      list.push({ partition: s.partition.partition, currentLeaderEpoch: s.leaderEpoch, leaderEpoch: latest });
      byTopic.set(s.partition.topic, list);
    }
    // nothing written under any epoch yet: fetch from our LEO
    for (const [, s] of noEpoch) this.doneTruncating(s);
    if (byTopic.size === 0) return;
    const resp = await this.conn.send(23, OFFSET_FOR_LEADER_EPOCH_VERSION, {
      replicaId: this.o.brokerId,
      topics: [...byTopic].map(([topic, partitions]) => ({ topic, partitions })),
    });
    for (const t of resp.topics) {
      for (const p of t.partitions) {
        const key = topicPartitionKey(t.topic, p.partition);
        const s = this.partitions.get(key);
        const log = s?.partition.log;
        if (!s || !log || !s.truncating) continue;
        if (p.errorCode !== 0) {
          this.log.info({ topic: t.topic, partition: p.partition, error: errorName(p.errorCode) }, 'OffsetForLeaderEpoch failed; retrying');
          this.delay(s);
          continue;
        }
        let target: bigint;
        let completed = true;
        if (p.endOffset < 0n) {
          // the leader has no epoch information: fall back to the high watermark (pre-KIP-101)
          target = log.highWatermark;
        } else {
          const mine = log.endOffsetForEpoch(p.leaderEpoch);
          if (!mine) target = p.endOffset;
          else if (mine.epoch !== p.leaderEpoch) {
            // our history has no entry for the leader's epoch: cut back and ask again (KIP-279)
            target = mine.endOffset;
            completed = false;
          } else target = p.endOffset < mine.endOffset ? p.endOffset : mine.endOffset;
        }
        if (target > log.logEndOffset) target = log.logEndOffset;
        if (target < log.logEndOffset) {
          this.log.info(
            { topic: t.topic, partition: p.partition, from: String(log.logEndOffset), to: String(target), leaderEpoch: p.leaderEpoch },
            'truncating follower log to the leader epoch end offset',
          );
          await log.truncateTo(target);
        }
        if (completed) this.doneTruncating(s);
      }
    }
  }

  private doneTruncating(s: FetchState): void {
    s.truncating = false;
    s.fetchOffset = s.partition.log?.logEndOffset ?? s.fetchOffset;
  }

  private async fetch(entries: Array<[string, FetchState]>): Promise<void> {
    // KIP-227: with a session, only partitions whose fetch parameters changed are listed
    const builder = this.session.newBuilder();
    for (const [key, s] of entries) {
      const log = s.partition.log;
      if (!log) continue;
      builder.add(key, s.partition.topic, s.partition.partition, s.fetchOffset, log.logStartOffset, this.o.partitionMaxBytes, s.leaderEpoch, -1);
    }
    const data = builder.build();
    if (data.sessionSize === 0 && data.toForget.length === 0) return;
    const topics = new Map<string, FetchRequestTopic>();
    for (const p of data.toSend) {
      let t = topics.get(p.topic);
      if (!t) {
        t = { topic: p.topic, topicId: ZERO_UUID, partitions: [] };
        topics.set(p.topic, t);
      }
      t.partitions.push({
        partition: p.partition,
        currentLeaderEpoch: p.currentLeaderEpoch,
        fetchOffset: p.fetchOffset,
        lastFetchedEpoch: p.lastFetchedEpoch,
        logStartOffset: p.logStartOffset,
        partitionMaxBytes: p.maxBytes,
        replicaDirectoryId: ZERO_UUID,
      });
    }
    const forgotten = new Map<string, FetchRequestForgottenTopic>();
    for (const p of data.toForget) {
      let t = forgotten.get(p.topic);
      if (!t) {
        t = { topic: p.topic, topicId: ZERO_UUID, partitions: [] };
        forgotten.set(p.topic, t);
      }
      t.partitions.push(p.partition);
    }
    const tSend = latencyTrace?.now() ?? 0;
    if (latencyTrace && this.lastFetchDone > 0) latencyTrace.record('fetcher.gap', tSend - this.lastFetchDone);
    let resp;
    try {
      resp = await this.conn.send(1, FETCH_VERSION, {
        clusterId: null,
        replicaId: this.o.brokerId,
        replicaState: { replicaId: -1, replicaEpoch: -1n },
        maxWaitMs: this.o.maxWaitMs,
        minBytes: this.o.minBytes,
        maxBytes: this.o.maxBytes,
        isolationLevel: 0,
        sessionId: data.sessionId,
        sessionEpoch: data.epoch,
        topics: [...topics.values()],
        forgottenTopicsData: [...forgotten.values()],
        rackId: '',
      });
    } catch (err) {
      this.session.handleError();
      throw err;
    }
    if (!this.session.handleResponse(resp, topicPartitionKey)) {
      // a session error: the next fetch is a full one, at once; other errors back off
      if (resp.errorCode === 0 || SESSION_ERRORS.has(resp.errorCode)) return;
      throw new Error(`fetch failed: ${errorName(resp.errorCode)}`);
    }
    const tResp = latencyTrace?.now() ?? 0;
    let gotData = false;
    if (latencyTrace) latencyTrace.record('fetcher.roundTrip', tResp - tSend);
    let prepared = false;
    // partition errors are logged once per response (after a leadership move thousands come at once)
    let errored: { count: number; byError: Map<string, string[]> } | undefined;
    for (const t of resp.responses) {
      for (const p of t.partitions) {
        const s = this.partitions.get(topicPartitionKey(t.topic, p.partitionIndex));
        const log = s?.partition.log;
        if (!s || !log || s.truncating) continue;
        switch (p.errorCode) {
          case ErrorCode.NONE: {
            // a response cut at the fetch's byte limit may end in a partial batch: left for the next fetch
            const records = p.records && p.records.length > 0 ? p.records.subarray(0, completeBatchesLength(p.records)) : undefined;
            if (records && records.length > 0) {
              if (s.fetchOffset !== log.logEndOffset) break; // truncated meanwhile: refetch
              gotData = true;
              // the first new log met: the partition.metadata of every new log in the response, at once
              if (!prepared && !log.readyToAppend) {
                prepared = true;
                await this.prepareNewLogs(resp);
              }
              await log.appendAsFollower(records);
              if (this.o.quota?.isThrottled(t.topic, p.partitionIndex)) this.o.quota.record(records.length);
            }
            s.fetchOffset = log.logEndOffset;
            s.inSync = log.logEndOffset >= p.highWatermark;
            const hw = p.highWatermark < log.logEndOffset ? p.highWatermark : log.logEndOffset;
            if (hw > log.highWatermark) log.updateHighWatermark(hw);
            if (p.logStartOffset > log.logStartOffset) await log.maybeIncrementLogStartOffset(p.logStartOffset, 'leader log start offset');
            break;
          }
          case ErrorCode.OFFSET_OUT_OF_RANGE:
            await this.handleOutOfRange(s);
            break;
          default: {
            errored ??= { count: 0, byError: new Map() };
            errored.count++;
            const name = errorName(p.errorCode);
            const examples = errored.byError.get(name) ?? [];
            if (examples.length < PARTITION_ERROR_EXAMPLES) examples.push(topicPartitionKey(t.topic, p.partitionIndex));
            errored.byError.set(name, examples);
            this.delay(s);
          }
        }
      }
    }
    if (errored) {
      this.log.info({ partitions: errored.count, errors: Object.fromEntries(errored.byError) }, 'replica fetch partition errors; backing off');
    }
    if (latencyTrace) {
      this.lastFetchDone = latencyTrace.now();
      latencyTrace.record(gotData ? 'fetcher.process' : 'fetcher.processEmpty', this.lastFetchDone - tResp);
    }
  }

  /** Runs what new logs need before their first records (`prepareAppends`) for all partitions of `resp` with data. */
  private async prepareNewLogs(resp: FetchResponse): Promise<void> {
    const unprepared: Log[] = [];
    for (const t of resp.responses) {
      for (const p of t.partitions) {
        if (p.errorCode !== ErrorCode.NONE || !p.records || p.records.length === 0) continue;
        const log = this.partitions.get(topicPartitionKey(t.topic, p.partitionIndex))?.partition.log;
        if (log && !log.readyToAppend) unprepared.push(log);
      }
    }
    await prepareAppends(unprepared);
  }

  /**
   * Our fetch offset is outside the leader's log: if the leader's LEO is behind ours (an unclean
   * leader), truncate to it; if we are behind its log start, start over at its log start.
   */
  private async handleOutOfRange(s: FetchState): Promise<void> {
    const log = s.partition.log!;
    const query = async (timestamp: bigint) => {
      const r = await this.conn.send(2, LIST_OFFSETS_VERSION, {
        replicaId: this.o.brokerId,
        isolationLevel: 0,
        topics: [
          { name: s.partition.topic, partitions: [{ partitionIndex: s.partition.partition, currentLeaderEpoch: s.leaderEpoch, timestamp, maxNumOffsets: 1 }] },
        ],
      });
      const p = r.topics[0]?.partitions[0];
      if (!p || p.errorCode !== 0) throw new Error(`ListOffsets failed: ${errorName(p?.errorCode ?? -1)}`);
      return p.offset;
    };
    const leaderEnd = await query(-1n);
    if (leaderEnd < log.logEndOffset) {
      this.log.warn({ topic: s.partition.topic, partition: s.partition.partition, to: String(leaderEnd) }, 'leader log end is behind ours; truncating');
      await log.truncateTo(leaderEnd);
    } else {
      const leaderStart = await query(-2n);
      this.log.warn(
        { topic: s.partition.topic, partition: s.partition.partition, to: String(leaderStart) },
        'behind the leader log start; restarting the log there',
      );
      await log.truncateFullyAndStartAt(leaderStart);
    }
    s.fetchOffset = log.logEndOffset;
  }
}
