import { ErrorCode, errorByCode, type FindCoordinatorResponse, type FindCoordinatorResponseCoordinator } from '@samsa/protocol';
import { GROUP_METADATA_TOPIC_NAME, offsetsTopicConfigs, offsetsTopicReplicationFactor } from '@samsa/group-coordinator';
import type { ApiHandler } from '../api/api-handler.js';
import type { BrokerServices } from './services.js';

/** Kafka's CoordinatorType. */
const CoordinatorType = { GROUP: 0, TRANSACTION: 1, SHARE: 2 } as const;

interface Answer {
  error: number;
  nodeId: number;
  host: string;
  port: number;
}

const noNode = (error: number): Answer => ({ error, nodeId: -1, host: '', port: -1 });

/** One `__consumer_offsets` creation at a time per broker. */
const creating = new WeakMap<BrokerServices, Promise<void>>();

/**
 * Kafka creates `__consumer_offsets` on the first FindCoordinator for a group:
 * offsets.topic.num.partitions partitions, offsets.topic.replication.factor replicas (capped at
 * the live brokers), compacted. Another broker creating it at the same time is fine.
 */
function createOffsetsTopic(s: BrokerServices): void {
  if (creating.has(s)) return;
  const live = s.metadata.aliveBrokers().length;
  if (live === 0) return;
  const cfg = s.config;
  const p = s.topicAdmin
    .createTopic({
      name: GROUP_METADATA_TOPIC_NAME,
      numPartitions: cfg.get('offsets.topic.num.partitions'),
      replicationFactor: offsetsTopicReplicationFactor(cfg.get('offsets.topic.replication.factor'), live),
      configs: offsetsTopicConfigs(cfg.get('offsets.topic.segment.bytes')),
    })
    .then(
      () => undefined,
      (err: unknown) => {
        if ((err as { errorName?: string }).errorName !== 'TOPIC_ALREADY_EXISTS')
          s.log.warn({ err, topic: GROUP_METADATA_TOPIC_NAME }, 'could not create the offsets topic');
      },
    )
    .finally(() => creating.delete(s));
  creating.set(s, p);
}

/** Kafka's KafkaApis.getCoordinator for one key. */
function coordinatorFor(s: BrokerServices, listener: string, keyType: number, key: string): Answer {
  switch (keyType) {
    case CoordinatorType.GROUP:
      break;
    case CoordinatorType.TRANSACTION:
      // no transaction coordinator (and no __transaction_state) in Samsa: clients retry
      return noNode(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    case CoordinatorType.SHARE:
      // share groups (KIP-932) need v6 and a share coordinator, which a ZooKeeper-mode broker has not
      return noNode(ErrorCode.INVALID_REQUEST);
    default:
      return noNode(ErrorCode.INVALID_REQUEST);
  }
  const partition = s.groupCoordinator.partitionFor(key);
  if (!s.metadata.hasTopic(GROUP_METADATA_TOPIC_NAME)) {
    createOffsetsTopic(s);
    return noNode(ErrorCode.COORDINATOR_NOT_AVAILABLE);
  }
  const leader = s.metadata.leader(GROUP_METADATA_TOPIC_NAME, partition);
  const e = leader >= 0 ? s.metadata.endpoint(leader, listener) : undefined;
  if (!e) return noNode(ErrorCode.COORDINATOR_NOT_AVAILABLE);
  return { error: ErrorCode.NONE, nodeId: leader, host: e.host, port: e.port };
}

/** Kafka's Errors.message(): the exception's default message ("NONE" for no error). */
const messageOf = (code: number) => (code === ErrorCode.NONE ? 'NONE' : (errorByCode(code)?.message ?? null));

/**
 * FindCoordinator v0–v6 (v4+: batched keys). Any broker answers: the coordinator of a group is
 * the leader of `__consumer_offsets` partition abs(hash(groupId)) % partitions, given with its
 * endpoint on the listener the request came in on. COORDINATOR_NOT_AVAILABLE while the topic is
 * being created or the partition has no leader; group requests sent to another broker answer
 * NOT_COORDINATOR (and COORDINATOR_LOAD_IN_PROGRESS while the coordinator loads the partition).
 * Transactional ids get COORDINATOR_NOT_AVAILABLE (no transaction coordinator).
 */
export const findCoordinatorHandler: ApiHandler<10, BrokerServices> = {
  apiKey: 10,
  async handle(req, ctx, s) {
    const v = req.apiVersion;
    const keyType = v >= 1 ? req.body.keyType : CoordinatorType.GROUP;
    if (v >= 4) {
      const coordinators: FindCoordinatorResponseCoordinator[] = req.body.coordinatorKeys.map((key) => {
        const a = coordinatorFor(s, ctx.listener, keyType, key);
        return { key, nodeId: a.nodeId, host: a.host, port: a.port, errorCode: a.error, errorMessage: null };
      });
      // v4+ carries only `coordinators`; the v0-3 fields keep their defaults
      return { throttleTimeMs: 0, errorCode: 0, errorMessage: null, nodeId: 0, host: '', port: 0, coordinators };
    }
    const a = coordinatorFor(s, ctx.listener, keyType, req.body.key);
    if (a.error !== ErrorCode.NONE) return this.errorResponse(req, a.error);
    const r: FindCoordinatorResponse = {
      throttleTimeMs: 0,
      errorCode: 0,
      errorMessage: v >= 1 ? 'NONE' : null,
      nodeId: a.nodeId,
      host: a.host,
      port: a.port,
      coordinators: [],
    };
    return r;
  },
  errorResponse(req, code) {
    const message = messageOf(code);
    if (req.apiVersion >= 4) {
      return {
        throttleTimeMs: 0,
        errorCode: 0,
        errorMessage: null,
        nodeId: 0,
        host: '',
        port: 0,
        coordinators: req.body.coordinatorKeys.map((key) => ({ key, nodeId: -1, host: '', port: -1, errorCode: code, errorMessage: message })),
      };
    }
    return { throttleTimeMs: 0, errorCode: code, errorMessage: req.apiVersion >= 1 ? message : null, nodeId: -1, host: '', port: -1, coordinators: [] };
  },
};
