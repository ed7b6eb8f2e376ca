import { AclOperation, AclResourceType, ErrorCode, errorCodeOf, type DeleteTopicsResponseDeletableTopicResult } from '@samsa/protocol';
import { DeleteTopicsTopicZNode, ZkCode, isZkError, topicIdFromString } from '@samsa/zk-paths';
import type { ApiHandler } from '../api/api-handler.js';
import type { BrokerServices } from './services.js';
import { authorize } from '../security/authorizer.js';

const ZERO_UUID = Buffer.alloc(16);

/**
 * DeleteTopics (ZooKeeper mode): the controller marks each topic in /admin/delete_topics and the
 * answer waits (up to the timeout) until the topic is gone from this broker's metadata.
 * NOT_CONTROLLER on other brokers; TOPIC_DELETION_DISABLED when delete.topic.enable=false.
 */
export const deleteTopicsHandler: ApiHandler<20, BrokerServices> = {
  apiKey: 20,
  async handle(req, ctx, s) {
    const v = req.apiVersion;
    const wanted: Array<{ name: string | null; id: Buffer }> =
      v >= 6 ? req.body.topics.map((t) => ({ name: t.name, id: t.topicId })) : req.body.topicNames.map((n) => ({ name: n, id: ZERO_UUID }));
    const res = (name: string | null, id: Buffer, errorCode: number, errorMessage: string | null = null): DeleteTopicsResponseDeletableTopicResult => ({
      name,
      topicId: id,
      errorCode,
      errorMessage,
    });
    if (!s.controller.isActive) return { throttleTimeMs: 0, responses: wanted.map((w) => res(w.name, w.id, ErrorCode.NOT_CONTROLLER)) };
    const results: DeleteTopicsResponseDeletableTopicResult[] = [];
    const pending: string[] = [];
    for (const w of wanted) {
      let name = w.name;
      if (name === null || name === '') name = s.metadata.topicName(w.id.toString('base64url')) ?? null;
      if (name === null) {
        results.push(res(null, w.id, ErrorCode.UNKNOWN_TOPIC_ID));
        continue;
      }
      const id = s.metadata.topicId(name);
      const idBytes = id ? topicIdFromString(id) : ZERO_UUID;
      if (!s.settings.deleteTopicEnable) {
        results.push(res(name, idBytes, ErrorCode.TOPIC_DELETION_DISABLED, 'Topic deletion is disabled.'));
        continue;
      }
      if (!authorize(s, ctx, AclOperation.DELETE, AclResourceType.TOPIC, name)) {
        results.push(res(name, idBytes, ErrorCode.TOPIC_AUTHORIZATION_FAILED, 'Authorization failed.'));
        continue;
      }
      try {
        if (!(await s.kzk.topicExists(name))) {
          results.push(res(name, idBytes, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'This server does not host this topic-partition.'));
          continue;
        }
        try {
          await s.kzk.zk.create(DeleteTopicsTopicZNode.path(name), null, { mkdirp: true });
        } catch (err) {
          if (!isZkError(err, ZkCode.NODE_EXISTS)) throw err;
        }
        pending.push(name);
        results.push(res(name, idBytes, 0));
      } catch (err) {
        results.push(res(name, idBytes, errorCodeOf(err), (err as Error).message));
      }
    }
    if (pending.length > 0) {
      const gone = () => pending.every((t) => !s.metadata.hasTopic(t));
      if (!gone()) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, req.body.timeoutMs);
          const off = s.metadata.onUpdate(() => {
            if (gone()) done();
          });
          function done() {
            clearTimeout(timer);
            off();
            resolve();
          }
        });
      }
      for (const r of results) {
        if (r.errorCode === 0 && r.name && s.metadata.hasTopic(r.name)) {
          r.errorCode = ErrorCode.REQUEST_TIMED_OUT;
          r.errorMessage = `Topic ${r.name} is marked for deletion but was not deleted within ${req.body.timeoutMs} ms`;
        }
      }
    }
    return { throttleTimeMs: 0, responses: results };
  },
  errorResponse(req, code) {
    const names =
      req.apiVersion >= 6 ? req.body.topics.map((t) => ({ name: t.name, id: t.topicId })) : req.body.topicNames.map((n) => ({ name: n, id: ZERO_UUID }));
    return { throttleTimeMs: 0, responses: names.map((n) => ({ name: n.name, topicId: n.id, errorCode: code, errorMessage: null })) };
  },
};
