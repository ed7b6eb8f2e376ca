import { encodeResponseChunks, ErrorCode, topicPartitionKey, type FetchResponse, type FetchResponsePartition, type FetchResponseTopic } from '@samsa/protocol';
import { DelayedFetch } from '../replica/delayed-fetch.js';
import { principalOf, throttle } from '../quota/throttle.js';
import type { ApiHandler } from '../api/api-handler.js';
import type { BrokerServices } from './services.js';
import type { FetchEntry, ReadResult } from '../replica/replica-manager.js';
import { FetchManager, type FetchContext } from '../fetch-session/fetch-manager.js';
import { FetchSessionCache, type CachedPartition } from '../fetch-session/fetch-session-cache.js';
import type { Partition } from '../replica/partition.js';
import { latencyTrace } from '../trace/latency-trace.js';
import { SlabPool } from '../network/slab-pool.js';
import { fetchDeniedTopics } from '../security/fetch-auth.js';

const ZERO_UUID = Buffer.alloc(16);
const EPOCH_END = { epoch: -1, endOffset: -1n };
const NO_LEADER = { leaderId: -1, leaderEpoch: -1 };
const NO_SNAPSHOT = { endOffset: -1n, epoch: -1 };
const EMPTY = Buffer.alloc(0);
type AbortedTransactions = FetchResponsePartition['abortedTransactions'];
/** A read_committed answer with no aborted transactions: one shared, frozen list. */
const NO_ABORTED: AbortedTransactions = Object.freeze([]) as unknown as AbortedTransactions;

/**
 * Fetch v4+'s aborted_transactions, as Kafka answers it: null for read_uncommitted consumers,
 * followers and errors; for read_committed consumers the aborted transactions of the range read.
 */
function abortedTransactionsOf(r: ReadResult): AbortedTransactions {
  const list = r.data?.abortedTransactions;
  if (!list || list.length === 0) return NO_ABORTED;
  return list.map((t) => ({ producerId: t.producerId, firstOffset: t.firstOffset }));
}

function partitionAnswer(
  partitionIndex: number,
  errorCode: number,
  offsets: { highWatermark: bigint; lastStableOffset: bigint; logStartOffset: bigint } | null,
  abortedTransactions: FetchResponsePartition['abortedTransactions'],
  records: Buffer,
): FetchResponsePartition {
  return {
    partitionIndex,
    errorCode,
    highWatermark: offsets ? offsets.highWatermark : -1n,
    lastStableOffset: offsets ? offsets.lastStableOffset : -1n,
    logStartOffset: offsets ? offsets.logStartOffset : -1n,
    divergingEpoch: EPOCH_END,
    currentLeader: NO_LEADER,
    snapshotId: NO_SNAPSHOT,
    abortedTransactions,
    preferredReadReplica: -1,
    records,
  };
}

function emptyPartition(partitionIndex: number, errorCode: number): FetchResponsePartition {
  return partitionAnswer(partitionIndex, errorCode, null, null, EMPTY);
}

/** Record buffers the response holds by reference (not copied into the frame). */
const referenced = new WeakMap<FetchResponse, Buffer[]>();
/** Where record data is read into (answers up to 16 KiB share 64 KiB slabs): it lives until the response is written. */
const recordBuffers = new SlabPool();

function bytesRead(results: ReadResult[]): number {
  let n = 0;
  for (const r of results) n += r.data?.records.sizeInBytes ?? 0;
  return n;
}

function anyError(results: ReadResult[]): boolean {
  for (const r of results) if (r.errorCode !== 0) return true;
  return false;
}

/**
 * Fetch. Consumers read each partition from its leader log up to the high watermark (read_committed
 * ones up to the last stable offset, with the aborted transactions of what they read); followers
 * (replica_id >= 0) read up to the log end offset and their fetch offset advances the ISR and the
 * high watermark. Both honour
 * max_bytes with KIP-74's first-batch rule; waits up to max_wait_ms for min_bytes. Record data is
 * read from the segment file into one buffer and written to the socket from there (no second copy).
 * Fetch sessions (KIP-227, v7+): `fetch-session/` decides which partitions are read and answered.
 */
type RecordSlice = NonNullable<ReadResult['data']>['records'];

/** One partition of the response, with the records still to read into it. */
interface FetchAnswer {
  topicKey: string;
  topic: string;
  topicId: Buffer;
  partition: FetchResponsePartition;
  slice: RecordSlice | undefined;
}

/**
 * The response's partitions: each partition read (results follow the partitions with a known
 * topic, in order) that the session context includes (all of them without a context).
 */
function answerPartitions(
  partitions: readonly CachedPartition[],
  results: ReadResult[],
  session: FetchContext | null,
  readCommittedOf: (r: ReadResult) => boolean,
  denied: ReadonlySet<string> | null,
): FetchAnswer[] {
  const out: FetchAnswer[] = [];
  let next = 0;
  for (const p of partitions) {
    const name = p.topic;
    let r: ReadResult | undefined;
    let errorCode: number = ErrorCode.UNKNOWN_TOPIC_ID;
    let slice: RecordSlice | undefined;
    if (name !== undefined && denied?.has(name)) {
      errorCode = ErrorCode.TOPIC_AUTHORIZATION_FAILED;
    } else if (name !== undefined) {
      r = results[next++];
      if (!r || r.topic !== name || r.partition !== p.partition) {
        r = undefined;
        errorCode = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
      } else {
        errorCode = r.errorCode;
        const data = r.data?.records;
        if (data && data.sizeInBytes > 0) slice = data;
      }
    }
    // decided before the answer is built: an incremental fetch leaves most partitions out
    if (session && !session.include(p, errorCode, r ? r.highWatermark : -1n, r ? r.logStartOffset : -1n, slice ? slice.sizeInBytes : 0)) continue;
    const answer = r
      ? partitionAnswer(p.partition, errorCode, r, readCommittedOf(r) ? abortedTransactionsOf(r) : null, EMPTY)
      : emptyPartition(p.partition, errorCode);
    out.push({ topicKey: p.topicKey, topic: name ?? '', topicId: p.topicId, partition: answer, slice });
  }
  return out;
}

/** Consecutive partitions of one topic share a response topic (as Kafka's FetchResponse groups them). */
function groupByTopic(answered: FetchAnswer[], useIds: boolean): FetchResponseTopic[] {
  const out: FetchResponseTopic[] = [];
  let last: FetchResponseTopic | undefined;
  let lastKey: string | undefined;
  for (const a of answered) {
    if (!last || lastKey !== a.topicKey) {
      last = { topic: a.topic, topicId: useIds ? a.topicId : ZERO_UUID, partitions: [] };
      lastKey = a.topicKey;
      out.push(last);
    }
    last.partitions.push(a.partition);
  }
  return out;
}

/** Without a broker's session cache (handler tests): no slots, so every fetch is sessionless. */
const NO_SESSIONS = new FetchManager(new FetchSessionCache({ maxEntries: 0 }));

/** Fetch v8+: clients throttle themselves on throttle_time_ms (KIP-219). */
const FETCH_KIP219_VERSION = 8;

export const fetchHandler: ApiHandler<1, BrokerServices> = {
  apiKey: 1,
  async handle(req, ctx, s) {
    const b = req.body;
    const rm = s.replicaManager;
    const v = req.apiVersion;
    const replicaId = v >= 15 ? b.replicaState.replicaId : b.replicaId;
    const useIds = v >= 13;
    const follower = replicaId >= 0;
    // KIP-227: which partitions this fetch reads (an incremental fetch: its whole session) and answers
    const session = (s.fetchSessions ?? NO_SESSIONS).newContext(v, b.sessionId, b.sessionEpoch, follower, b.topics, b.forgottenTopicsData, (id) =>
      s.metadata.topicName(id),
    );
    if (session.errorCode !== 0) return { throttleTimeMs: 0, errorCode: session.errorCode, sessionId: 0, responses: [], nodeEndpoints: [] };
    const partitions = session.partitions;
    // the read entries are the partitions themselves (those whose topic id names a topic here)
    // READ on each topic (consumers), CLUSTER_ACTION (followers): denied topics are answered, not read
    const denied = fetchDeniedTopics(s, ctx, follower, partitions);
    const entries: CachedPartition[] = [];
    for (const p of partitions) if (p.topic !== undefined && !denied?.has(p.topic)) entries.push(p);
    const readEntries = entries as FetchEntry[];
    // isolation_level (v4+): 1 = READ_COMMITTED, up to the last stable offset; followers read to the log end
    const readCommitted = !follower && v >= 4 && b.isolationLevel === 1;
    // Kafka bounds a consumer's fetch by what its consumer_byte_rate lets it take in one go
    // (getMaxValueInQuotaWindow): a larger response would always be throttled
    const quotaBytes = s.quotas && !follower ? s.quotas.fetch.maxValueInQuotaWindow(principalOf(ctx), ctx.clientId ?? '') : Infinity;
    const maxBytes = Math.min(v >= 3 ? b.maxBytes : 0x7fffffff, Math.max(1, Math.floor(Math.min(quotaBytes, 0x7fffffff))));
    const read = () => (follower ? rm.readForFollower(replicaId, readEntries, maxBytes) : rm.readFromLocalLogs(readEntries, maxBytes, readCommitted ? 1 : 0));
    const tRead = latencyTrace?.now() ?? 0;
    let results: ReadResult[] = await read();
    if (latencyTrace) latencyTrace.since(follower ? 'fetch.follower.read' : 'fetch.consumer.read', tRead);
    if (b.maxWaitMs > 0 && entries.length > 0 && bytesRead(results) < Math.max(1, b.minBytes) && !anyError(results)) {
      // Kafka's DelayedFetch: completed by HW growth (consumers) / appends (followers), a leadership change, or max_wait_ms
      const waitStarted = performance.now();
      const tWait = latencyTrace?.now() ?? 0;
      let tDone = 0;
      await new Promise<void>((resolve) => {
        const statuses = entries.map((e) => ({
          partition: rm.getPartition(e.topic!, e.partition),
          fetchOffset: e.fetchOffset,
          leaderEpoch: e.currentLeaderEpoch,
        }));
        const excluded = follower ? (p: Partition) => rm.shouldLeaderThrottle(p, replicaId) : undefined;
        const done = latencyTrace
          ? () => {
              tDone = latencyTrace!.now();
              resolve();
            }
          : resolve;
        const op = new DelayedFetch(b.maxWaitMs, b.minBytes, follower, statuses, done, excluded, readCommitted);
        rm.fetchPurgatory.tryCompleteElseWatch(
          op,
          entries.map((e) => topicPartitionKey(e.topic!, e.partition)),
        );
      });
      if (ctx.timing) ctx.timing.remoteMs += performance.now() - waitStarted;
      if (latencyTrace) {
        // wait: in the purgatory; wake: from its completion until this handler runs again
        latencyTrace.record(follower ? 'fetch.follower.wait' : 'fetch.consumer.wait', tDone - tWait);
        latencyTrace.since(follower ? 'fetch.follower.wake' : 'fetch.consumer.wake', tDone);
      }
      results = await read();
    }
    // consumer_byte_rate (Kafka's quotas.fetch) and request_percentage: a fetch that takes the
    // client over either is answered without data (its bytes unrecorded) and the client throttled
    let throttleTimeMs = 0;
    let throttled = false;
    if (s.quotas && !follower) {
      const user = principalOf(ctx);
      const n = bytesRead(results);
      throttleTimeMs = s.quotas.fetch.recordAndGetThrottleTimeMs(user, ctx.clientId ?? '', n);
      const t = ctx.timing;
      const handlerMs = t ? performance.now() - t.startedAt - t.remoteMs : 0;
      const requestThrottleMs = s.quotas.requestThrottleTimeMs(ctx, handlerMs);
      ctx.requestQuotaDone = true;
      if (throttleTimeMs > 0 || requestThrottleMs > 0) {
        s.quotas.fetch.unrecord(user, ctx.clientId ?? '', n);
        results = results.map((r) => ({ ...r, data: undefined }));
        throttleTimeMs = Math.max(throttleTimeMs, requestThrottleMs);
        throttled = true;
      }
    }
    const committed = (r: ReadResult) => readCommitted && r.errorCode === 0;
    let errorCode = 0;
    let sessionId = 0;
    let answered: FetchAnswer[] = [];
    if (throttled) {
      // Kafka's getThrottledResponse: an incremental fetch gets no partitions (its session unchanged)
      const t = session.throttledResponse();
      if (t) ({ errorCode, sessionId } = t);
      else answered = answerPartitions(partitions, results, null, committed, denied);
    } else {
      errorCode = session.beginResponse();
      if (errorCode === 0) answered = answerPartitions(partitions, results, session, committed, denied);
      sessionId = session.endResponse();
    }
    // record data: read from the segments once, into buffers the response writes by reference
    const buffers: Buffer[] = [];
    for (const a of answered) {
      const slice = a.slice;
      if (!slice) continue;
      let records = recordBuffers.take(slice.sizeInBytes);
      const n0 = slice.readIntoNow(records);
      const n = typeof n0 === 'number' ? n0 : await n0;
      if (n < records.length) records = records.subarray(0, n);
      buffers.push(records);
      a.partition.records = records;
      s.metrics?.fetched(a.topic, records.length, follower);
    }
    if (throttleTimeMs > 0) await throttle(ctx, v, FETCH_KIP219_VERSION, throttleTimeMs);
    const response: FetchResponse = { throttleTimeMs, errorCode, sessionId, responses: groupByTopic(answered, useIds), nodeEndpoints: [] };
    referenced.set(response, buffers);
    return response;
  },
  encode(req, response) {
    return encodeResponseChunks(1, req.apiVersion, req.header.correlationId, response, referenced.get(response) ?? []);
  },
  errorResponse(req, code) {
    return {
      throttleTimeMs: 0,
      errorCode: req.apiVersion >= 7 ? code : 0,
      sessionId: 0,
      responses: req.body.topics.map((t) => ({ topic: t.topic, topicId: t.topicId, partitions: t.partitions.map((p) => emptyPartition(p.partition, code)) })),
      nodeEndpoints: [],
    };
  },
};
