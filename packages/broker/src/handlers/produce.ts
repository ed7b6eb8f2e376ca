import { AclOperation, AclResourceType, ErrorCode, KafkaError, errorName, type ProduceResponseTopic } from '@samsa/protocol';
import { authorizedNames } from '../security/authorizer.js';
import { produceRequestAuthError } from '../security/produce-auth.js';
import { AppendOrigin, answerAll } from '../replica/produce-response.js';
import { principalOf, throttle } from '../quota/throttle.js';
import type { ApiHandler } from '../api/api-handler.js';
import { CloseConnection } from '../network/socket-server.js';
import type { BrokerServices } from './services.js';

/** Produce v6+: clients throttle themselves on throttle_time_ms (KIP-219). */
const PRODUCE_KIP219_VERSION = 6;

/**
 * Produce (Kafka's KafkaApis.handleProduceRequest): the producer byte-rate quota, then
 * ReplicaManager.appendRecords, which validates, appends and decides when to answer (acks).
 * While an acks=-1 answer waits for the high watermark, the connection is released: the client's
 * next Produce is appended and replicated alongside (answers stay in order); a throttled client's
 * is not (its channel is muted once this answer is out).
 */
function closeForAcks0(errorCodes: readonly number[]): CloseConnection {
  const counts: Record<string, number> = {};
  for (const c of errorCodes) counts[errorName(c)] = (counts[errorName(c)] ?? 0) + 1;
  return new CloseConnection(`Closing connection due to error during produce request with acks=0: ${JSON.stringify(counts)}`);
}

export const produceHandler: ApiHandler<0, BrokerServices> = {
  apiKey: 0,
  async handle(req, ctx, s) {
    const { acks, timeoutMs } = req.body;
    // authorization (Kafka's order: transactional id / idempotence, then WRITE per topic)
    const requestAuthError = produceRequestAuthError(s, ctx, req.body.transactionalId, req.body.topicData);
    if (requestAuthError !== 0) {
      if (acks === 0) throw closeForAcks0([requestAuthError]);
      throw new KafkaError(requestAuthError);
    }
    // WRITE per topic; without an authorizer the request goes through as it came (no copies)
    let topicData = req.body.topicData;
    let unauthorized: ProduceResponseTopic[] = [];
    if (s.authorizer) {
      const writable = authorizedNames(
        s,
        ctx,
        AclOperation.WRITE,
        AclResourceType.TOPIC,
        topicData.map((t) => t.name),
      );
      unauthorized = answerAll(
        topicData.filter((t) => !writable.has(t.name)),
        ErrorCode.TOPIC_AUTHORIZATION_FAILED,
      );
      topicData = topicData.filter((t) => writable.has(t.name));
    }
    // producer_byte_rate (Kafka's quotas.produce), on the request's record bytes
    let throttleTimeMs = 0;
    if (s.quotas) {
      let bytes = 0;
      for (const t of topicData) for (const p of t.partitionData) bytes += p.records?.length ?? 0;
      throttleTimeMs = s.quotas.produce.recordAndGetThrottleTimeMs(principalOf(ctx), ctx.clientId ?? '', bytes);
    }
    let waitStarted = 0;
    const appended =
      topicData.length === 0
        ? []
        : await new Promise<ProduceResponseTopic[]>((resolve) =>
            s.replicaManager.appendRecords(timeoutMs, acks, AppendOrigin.Client, req.apiVersion, topicData, resolve, () => {
              waitStarted = performance.now();
              if (throttleTimeMs <= 0) ctx.release?.();
            }),
          );
    const responses = unauthorized.length === 0 ? appended : [...unauthorized, ...appended];
    if (waitStarted > 0 && ctx.timing) ctx.timing.remoteMs += performance.now() - waitStarted;
    if (acks === 0) {
      // Kafka: an acks=0 producer learns of an error only by losing its connection (it then
      // refreshes its metadata), so any partition error closes it
      const errors: number[] = [];
      for (const t of responses) for (const p of t.partitionResponses) if (p.errorCode !== 0) errors.push(p.errorCode);
      if (errors.length > 0) throw closeForAcks0(errors);
      // no response to carry a throttle time: the channel is muted instead, and Kafka does not
      // apply the request quota to acks=0 produces
      if (throttleTimeMs > 0) ctx.conn.mutedUntilMs = Date.now() + throttleTimeMs;
      ctx.requestQuotaDone = true;
      return null;
    }
    if (throttleTimeMs > 0) await throttle(ctx, req.apiVersion, PRODUCE_KIP219_VERSION, throttleTimeMs);
    return { responses, throttleTimeMs, nodeEndpoints: [] };
  },
  errorResponse(req, code) {
    return { responses: answerAll(req.body.topicData, code), throttleTimeMs: 0, nodeEndpoints: [] };
  },
};
