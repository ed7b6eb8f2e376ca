import {
  ErrorCode,
  validateRecords,
  type ProduceResponsePartition,
  type ProduceResponseTopic,
} from '@samsa/protocol';
import { INTERNAL_TOPICS } from '../admin/topic-admin.js';
import { DelayedProduce, type ProducePartitionStatus } from '../purgatory/delayed-produce.js';
import { principalOf, throttle } from '../quota/throttle.js';
import type { ApiHandler } from '../server/request-handler.js';
import type { BrokerServices } from '../server/services.js';
import { latencyTrace } from '../trace/latency-trace.js';

const NO_LEADER = { leaderId: -1, leaderEpoch: -1 };

function partitionResponse(index: number, errorCode: number, errorMessage: string | null = null): ProduceResponsePartition {
  return { index, errorCode, baseOffset: -1n, logAppendTimeMs: -1n, logStartOffset: -1n, recordErrors: [], errorMessage, currentLeader: NO_LEADER };
}

/**
 * Produce: validate each partition's records (framing, CRC, magic, sizes, timestamps) with
 * @samsa/protocol, append on the leader, then answer — at once for acks=0/1, or for acks=-1 once
 * the high watermark passes the appended batches (or REQUEST_TIMED_OUT at the request timeout).
 * While an acks=-1 request waits, it releases its connection: the client's next Produce is appended
 * and replicated alongside (Kafka would hold it until this answer), and answers stay in order.
 */
/** Produce v6+: clients throttle themselves on throttle_time_ms (KIP-219). */
const PRODUCE_KIP219_VERSION = 6;

/**
 * TEST ONLY — breaks the acks=all guarantee on purpose. With SAMSA_TEST_UNSAFE_ACK_BEFORE_HW=true in
 * the broker's environment, the leader acknowledges acks=all writes as soon as they are in its own
 * log, before the high watermark covers them (as acks=1 would). It exists so the chaos suite can prove
 * that `samsa verify` catches lost acknowledged writes (test-e2e/chaos/broken-broker.chaos.test.ts).
 * Never set it anywhere else.
 */
export const UNSAFE_ACK_BEFORE_HW = process.env['SAMSA_TEST_UNSAFE_ACK_BEFORE_HW'] === 'true';

export const produceHandler: ApiHandler<0, BrokerServices> = {
  apiKey: 0,
  async handle(req, ctx, s) {
    const { acks, timeoutMs, topicData } = req.body;
    if (acks !== 0 && acks !== 1 && acks !== -1) {
      return { responses: topicData.map((t) => ({ name: t.name, partitionResponses: t.partitionData.map((p) => partitionResponse(p.index, ErrorCode.INVALID_REQUIRED_ACKS)) })), throttleTimeMs: 0, nodeEndpoints: [] };
    }
    const rm = s.replicaManager;
    // answers by position (topic index, partition index), as the request lists them
    const results: Array<Array<ProduceResponsePartition | undefined>> = topicData.map((t) => new Array(t.partitionData.length));
    const toAppend: Array<{ topic: string; partition: number; records: Buffer; ti: number; pi: number }> = [];
    for (let ti = 0; ti < topicData.length; ti++) {
      const t = topicData[ti]!;
      const out = results[ti]!;
      for (let pi = 0; pi < t.partitionData.length; pi++) {
        const p = t.partitionData[pi]!;
        if (INTERNAL_TOPICS.has(t.name)) {
          out[pi] = partitionResponse(p.index, ErrorCode.INVALID_TOPIC_EXCEPTION, `Cannot append to internal topic ${t.name}`);
          continue;
        }
        const partition = rm.getPartition(t.name, p.index);
        if (!partition && !s.metadata.hasTopic(t.name)) {
          out[pi] = partitionResponse(p.index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
          continue;
        }
        if (!partition || !partition.isLeader) {
          out[pi] = partitionResponse(p.index, ErrorCode.NOT_LEADER_OR_FOLLOWER);
          continue;
        }
        if (!p.records || p.records.length === 0) {
          out[pi] = partitionResponse(p.index, ErrorCode.CORRUPT_MESSAGE, 'empty record set');
          continue;
        }
        const ts = rm.cachedSettings(t.name) ?? (await rm.settingsFor(t.name));
        const v = validateRecords(p.records, {
          produceVersion: req.apiVersion,
          maxMessageBytes: ts.logConfig.maxMessageBytes,
          segmentBytes: ts.logConfig.segmentBytes,
          timestampType: ts.logConfig.messageTimestampType === 'LogAppendTime' ? 1 : 0,
          timestampBeforeMaxMs: ts.timestampBeforeMaxMs,
          timestampAfterMaxMs: ts.timestampAfterMaxMs,
          compactedTopic: ts.compacted,
          // compressed batches are decompressed only when a record-level rule needs it
          deepCompressed: ts.compacted,
        });
        if (!v.ok) {
          const r = partitionResponse(p.index, v.errorCode, v.message);
          r.recordErrors = v.recordErrors.map((e) => ({ batchIndex: e.batchIndex, batchIndexErrorMessage: e.message }));
          out[pi] = r;
          continue;
        }
        toAppend.push({ topic: t.name, partition: p.index, records: p.records, ti, pi });
      }
    }
    const tAppend = latencyTrace?.now() ?? 0;
    const appended = await rm.appendRecords(acks, toAppend);
    if (latencyTrace) latencyTrace.since('produce.append', tAppend);
    const waiting: ProducePartitionStatus[] = [];
    const waitingResponse: ProduceResponsePartition[] = [];
    for (let i = 0; i < appended.length; i++) {
      // appendRecords answers each entry, in order
      const a = appended[i]!;
      const { ti, pi } = toAppend[i]!;
      if (a.errorCode !== 0 || !a.info) {
        results[ti]![pi] = partitionResponse(a.partition, a.errorCode, a.errorMessage);
        continue;
      }
      // counted per partition append from the batch headers' totals, never per record
      s.metrics?.produced(a.topic, a.info.validBytes, a.info.recordCount);
      const r: ProduceResponsePartition = {
        index: a.partition,
        errorCode: 0,
        baseOffset: a.info.firstOffset,
        logAppendTimeMs: a.info.logAppendTime,
        logStartOffset: a.info.logStartOffset,
        recordErrors: [],
        errorMessage: null,
        currentLeader: NO_LEADER,
      };
      results[ti]![pi] = r;
      const partition = rm.getPartition(a.topic, a.partition);
      if (acks === -1 && partition && !UNSAFE_ACK_BEFORE_HW) {
        const st: ProducePartitionStatus = {
          partition,
          requiredOffset: a.info.lastOffset + 1n,
          minInsyncReplicas: (rm.cachedSettings(a.topic) ?? (await rm.settingsFor(a.topic))).minInsyncReplicas,
          errorCode: undefined,
        };
        waiting.push(st);
        waitingResponse.push(r);
      }
    }
    // producer_byte_rate (Kafka's quotas.produce): the data is appended, then the client is throttled
    let throttleTimeMs = 0;
    if (s.quotas) {
      const bytes = topicData.reduce((n, t) => n + t.partitionData.reduce((m, p) => m + (p.records?.length ?? 0), 0), 0);
      throttleTimeMs = s.quotas.produce.recordAndGetThrottleTimeMs(principalOf(ctx), ctx.clientId ?? '', bytes);
      if (acks === 0) {
        ctx.conn.mutedUntilMs = Date.now() + throttleTimeMs;
        // Kafka does not apply the request quota to acks=0 produces (no response to carry it)
        ctx.requestQuotaDone = true;
      }
    }
    if (acks === 0) return null;
    if (waiting.length > 0) {
      // Kafka's DelayedProduce: completed by HW growth, leadership loss or the timeout
      const waitStarted = performance.now();
      const tWait = latencyTrace?.now() ?? 0;
      // appended: the connection's next Produce may go ahead while this one waits (answers stay in
      // order); a throttled client's does not: its channel is muted once this answer is out
      if (throttleTimeMs <= 0) ctx.release?.();
      // completed by a later event (HW growth, leadership loss, the timer), never synchronously
      // after tryCompleteElseWatch returned false: `wake` is set by then
      let wake: (() => void) | undefined;
      const op = new DelayedProduce(timeoutMs, waiting, () => wake?.());
      const keys = waiting.map((w) => `${w.partition.topic}-${w.partition.partition}`);
      // already covered by the high watermark (an ISR of one, followers ahead): no promise to await
      if (!rm.producePurgatory.tryCompleteElseWatch(op, keys)) await new Promise<void>((resolve) => (wake = resolve));
      if (ctx.timing) ctx.timing.remoteMs += performance.now() - waitStarted;
      if (latencyTrace) latencyTrace.since('produce.awaitHw', tWait);
      for (let i = 0; i < waiting.length; i++) {
        const st = waiting[i]!;
        const r = waitingResponse[i]!;
        if (st.errorCode !== 0 && st.errorCode !== undefined) {
          r.errorCode = st.errorCode;
          if (st.errorCode !== ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND) r.baseOffset = -1n;
        }
      }
    }
    const responses: ProduceResponseTopic[] = topicData.map((t, ti) => ({
      name: t.name,
      partitionResponses: t.partitionData.map((p, pi) => results[ti]![pi] ?? partitionResponse(p.index, ErrorCode.UNKNOWN_SERVER_ERROR)),
    }));
    if (throttleTimeMs > 0) await throttle(ctx, req.apiVersion, PRODUCE_KIP219_VERSION, throttleTimeMs);
    return { responses, throttleTimeMs, nodeEndpoints: [] };
  },
  errorResponse(req, code) {
    return {
      responses: req.body.topicData.map((t) => ({ name: t.name, partitionResponses: t.partitionData.map((p) => partitionResponse(p.index, code)) })),
      throttleTimeMs: 0,
      nodeEndpoints: [],
    };
  },
};
