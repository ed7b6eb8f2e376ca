import { encodeResponseChunks, ErrorCode, topicPartitionKey, type FetchResponse, type FetchResponsePartition, type FetchResponseTopic } from '@samsa/protocol';
import { DelayedFetch } from '../replica/delayed-fetch.js';
import { principalOf, throttle } from '../quota/throttle.js';
import type { ApiHandler } from '../api/api-handler.js';
import type { BrokerServices } from './services.js';
import type { ReadResult } from '../replica/replica-manager.js';
import type { Partition } from '../replica/partition.js';
import { latencyTrace } from '../trace/latency-trace.js';
import { SlabPool } from '../network/slab-pool.js';

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
 * Fetch sessions (KIP-227) are not kept: session id 0 tells clients to send full requests.
 */
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
    const resolved: Array<{ t: (typeof b.topics)[number]; name: string | undefined }> = b.topics.map((t) => ({
      t,
      name: useIds ? s.metadata.topicName(t.topicId.toString('base64url')) : t.topic,
    }));
    const entries: Array<{ topic: string; partition: number; fetchOffset: bigint; maxBytes: number; currentLeaderEpoch: number; logStartOffset: bigint }> = [];
    for (const { t, name } of resolved) {
      if (name === undefined) continue;
      for (const p of t.partitions) {
        entries.push({
          topic: name,
          partition: p.partition,
          fetchOffset: p.fetchOffset,
          maxBytes: p.partitionMaxBytes,
          currentLeaderEpoch: p.currentLeaderEpoch,
          logStartOffset: p.logStartOffset,
        });
      }
    }
    const follower = replicaId >= 0;
    // isolation_level (v4+): 1 = READ_COMMITTED, up to the last stable offset; followers read to the log end
    const readCommitted = !follower && v >= 4 && b.isolationLevel === 1;
    // Kafka bounds a consumer's fetch by what its consumer_byte_rate lets it take in one go
    // (getMaxValueInQuotaWindow): a larger response would always be throttled
    const quotaBytes = s.quotas && !follower ? s.quotas.fetch.maxValueInQuotaWindow(principalOf(ctx), ctx.clientId ?? '') : Infinity;
    const maxBytes = Math.min(v >= 3 ? b.maxBytes : 0x7fffffff, Math.max(1, Math.floor(Math.min(quotaBytes, 0x7fffffff))));
    const read = () => (follower ? rm.readForFollower(replicaId, entries, maxBytes) : rm.readFromLocalLogs(entries, maxBytes, readCommitted ? 1 : 0));
    const tRead = latencyTrace?.now() ?? 0;
    let results: ReadResult[] = await read();
    if (latencyTrace) latencyTrace.since(follower ? 'fetch.follower.read' : 'fetch.consumer.read', tRead);
    if (b.maxWaitMs > 0 && entries.length > 0 && bytesRead(results) < Math.max(1, b.minBytes) && !anyError(results)) {
      // Kafka's DelayedFetch: completed by HW growth (consumers) / appends (followers), a leadership change, or max_wait_ms
      const waitStarted = performance.now();
      const tWait = latencyTrace?.now() ?? 0;
      let tDone = 0;
      await new Promise<void>((resolve) => {
        const statuses = entries.map((e) => ({ partition: rm.getPartition(e.topic, e.partition), fetchOffset: e.fetchOffset }));
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
          entries.map((e) => topicPartitionKey(e)),
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
      }
    }
    // the read answers each entry in order, and entries follow the request's known topics in order
    let next = 0;
    const buffers: Buffer[] = [];
    const responses: FetchResponseTopic[] = [];
    for (const { t, name } of resolved) {
      const partitions: FetchResponsePartition[] = [];
      for (const p of t.partitions) {
        if (name === undefined) {
          partitions.push(emptyPartition(p.partition, ErrorCode.UNKNOWN_TOPIC_ID));
          continue;
        }
        const r = results[next++];
        if (!r || r.topic !== name || r.partition !== p.partition) {
          partitions.push(emptyPartition(p.partition, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION));
          continue;
        }
        let records: Buffer = EMPTY;
        const slice = r.data?.records;
        if (slice && slice.sizeInBytes > 0) {
          records = recordBuffers.take(slice.sizeInBytes);
          const read = slice.readIntoNow(records);
          const n = typeof read === 'number' ? read : await read;
          if (n < records.length) records = records.subarray(0, n);
          buffers.push(records);
          s.metrics?.fetched(name, records.length, follower);
        }
        const aborted = readCommitted && r.errorCode === 0 ? abortedTransactionsOf(r) : null;
        partitions.push(partitionAnswer(p.partition, r.errorCode, r, aborted, records));
      }
      responses.push({ topic: name ?? t.topic, topicId: useIds ? t.topicId : ZERO_UUID, partitions });
    }
    if (throttleTimeMs > 0) await throttle(ctx, v, FETCH_KIP219_VERSION, throttleTimeMs);
    const response: FetchResponse = { throttleTimeMs, errorCode: 0, sessionId: 0, responses, nodeEndpoints: [] };
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
