import { AclOperation, AclResourceType, ErrorCode, errorCodeOf, type CreatePartitionsResponseTopicResult } from '@samsa/protocol';
import type { ApiHandler } from '../api/api-handler.js';
import type { BrokerServices } from './services.js';
import { authorizedNames } from '../security/authorizer.js';

/**
 * CreatePartitions (controller only, NOT_CONTROLLER elsewhere): new partitions are assigned and
 * written to the topic znode; the controller's partition-modification watch brings them online; the
 * answer waits until this broker's metadata shows them with leaders (or the timeout).
 */
export const createPartitionsHandler: ApiHandler<37, BrokerServices> = {
  apiKey: 37,
  async handle(req, ctx, s) {
    const b = req.body;
    const res = (name: string, errorCode: number, errorMessage: string | null = null): CreatePartitionsResponseTopicResult => ({
      name,
      errorCode,
      errorMessage,
    });
    if (!s.controller.isActive) return { throttleTimeMs: 0, results: b.topics.map((t) => res(t.name, ErrorCode.NOT_CONTROLLER)) };
    const counts = new Map<string, number>();
    for (const t of b.topics) counts.set(t.name, (counts.get(t.name) ?? 0) + 1);
    const results: CreatePartitionsResponseTopicResult[] = [];
    const alterable = authorizedNames(s, ctx, AclOperation.ALTER, AclResourceType.TOPIC, counts.keys());
    const grown: Array<{ name: string; partitions: number }> = [];
    for (const t of b.topics) {
      if ((counts.get(t.name) ?? 0) > 1) {
        results.push(res(t.name, ErrorCode.INVALID_REQUEST, 'Duplicate topic in request.'));
        continue;
      }
      if (!alterable.has(t.name)) {
        results.push(res(t.name, ErrorCode.TOPIC_AUTHORIZATION_FAILED, 'The topic authorization is failed.'));
        continue;
      }
      try {
        const n = await s.topicAdmin.createPartitions(t.name, t.count, t.assignments?.map((a) => a.brokerIds) ?? null, b.validateOnly);
        if (!b.validateOnly) grown.push({ name: t.name, partitions: n });
        results.push(res(t.name, 0));
      } catch (err) {
        results.push(res(t.name, errorCodeOf(err), (err as Error).message));
      }
    }
    if (grown.length > 0) {
      await s.topicAdmin.waitForMetadata(grown, b.timeoutMs);
      for (const r of results) {
        const g = grown.find((x) => x.name === r.name);
        if (g && r.errorCode === 0 && s.metadata.partitions(g.name).filter((p) => p.leader >= 0).length < g.partitions) {
          r.errorCode = ErrorCode.REQUEST_TIMED_OUT;
          r.errorMessage = `The new partitions of ${g.name} had no leader within ${b.timeoutMs} ms`;
        }
      }
    }
    return { throttleTimeMs: 0, results };
  },
  errorResponse(req, code) {
    return { throttleTimeMs: 0, results: req.body.topics.map((t) => ({ name: t.name, errorCode: code, errorMessage: null })) };
  },
};
