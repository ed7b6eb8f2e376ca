import { AclOperation, AclResourceType, ErrorCode, errorByCode, type FindCoordinatorResponse, type FindCoordinatorResponseCoordinator } from '@samsa/protocol';
import { GROUP_METADATA_TOPIC_NAME, offsetsTopicConfigs, offsetsTopicReplicationFactor } from '@samsa/group-coordinator';
import { TRANSACTION_STATE_TOPIC_NAME } from '@samsa/transaction-coordinator';
import type { ApiHandler, RequestContext } from '../api/api-handler.js';
import type { BrokerServices } from './services.js';
import { authorize } from '../security/authorizer.js';

/** Kafka's CoordinatorType. */
const CoordinatorType = { GROUP: 0, TRANSACTION: 1, SHARE: 2 } as const;

interface Answer {
  error: number;
  nodeId: number;
  host: string;
  port: number;
}

const noNode = (error: number): Answer => ({ error, nodeId: -1, host: '', port: -1 });

/** One creation of each internal topic at a time per broker. */
const creating = new WeakMap<BrokerServices, Map<string, Promise<void>>>();

interface InternalTopic {
  name: string;
  numPartitions: number;
  replicationFactor: number;
  configs: Record<string, string>;
}

/**
 * Kafka creates `__consumer_offsets` on the first FindCoordinator for a group, and
 * `__transaction_state` on the first for a transactional id: their configured partition counts and
 * replication factors (capped at the live brokers), compacted. Another broker creating it at the
 * same time is fine.
 */
function createInternalTopic(s: BrokerServices, topic: (liveBrokers: number) => InternalTopic): void {
  let m = creating.get(s);
  if (!m) {
    m = new Map();
    creating.set(s, m);
  }
  const live = s.metadata.aliveBrokers().length;
  if (live === 0) return;
  const spec = topic(live);
  if (m.has(spec.name)) return;
  const p = s.topicAdmin
    .createTopic(spec)
    .then(
      () => undefined,
      (err: unknown) => {
        if ((err as { errorName?: string }).errorName !== 'TOPIC_ALREADY_EXISTS') s.log.warn({ err, topic: spec.name }, 'could not create an internal topic');
      },
    )
    .finally(() => m.delete(spec.name));
  m.set(spec.name, p);
}

const offsetsTopic =
  (s: BrokerServices) =>
  (live: number): InternalTopic => ({
    name: GROUP_METADATA_TOPIC_NAME,
    numPartitions: s.config.get('offsets.topic.num.partitions'),
    replicationFactor: offsetsTopicReplicationFactor(s.config.get('offsets.topic.replication.factor'), live),
    configs: offsetsTopicConfigs(s.config.get('offsets.topic.segment.bytes')),
  });

const transactionStateTopic =
  (s: BrokerServices) =>
  (live: number): InternalTopic => ({
    name: TRANSACTION_STATE_TOPIC_NAME,
    numPartitions: s.config.get('transaction.state.log.num.partitions'),
    replicationFactor: offsetsTopicReplicationFactor(s.config.get('transaction.state.log.replication.factor'), live),
    configs: s.transactionCoordinator.transactionTopicConfigs(),
  });

/** Kafka's KafkaApis.getCoordinator for one key. */
function coordinatorFor(s: BrokerServices, ctx: RequestContext, keyType: number, key: string): Answer {
  const listener = ctx.listener;
  // DESCRIBE on the group / transactional id the coordinator is asked for
  if (keyType === CoordinatorType.GROUP && !authorize(s, ctx, AclOperation.DESCRIBE, AclResourceType.GROUP, key)) {
    return noNode(ErrorCode.GROUP_AUTHORIZATION_FAILED);
  }
  if (keyType === CoordinatorType.TRANSACTION && !authorize(s, ctx, AclOperation.DESCRIBE, AclResourceType.TRANSACTIONAL_ID, key)) {
    return noNode(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
  }
  let topic: string;
  let partition: number;
  let create: (live: number) => InternalTopic;
  switch (keyType) {
    case CoordinatorType.GROUP:
      topic = GROUP_METADATA_TOPIC_NAME;
      partition = s.groupCoordinator.partitionFor(key);
      create = offsetsTopic(s);
      break;
    case CoordinatorType.TRANSACTION:
      topic = TRANSACTION_STATE_TOPIC_NAME;
      partition = s.transactionCoordinator.partitionFor(key);
      create = transactionStateTopic(s);
      break;
    case CoordinatorType.SHARE:
      // share groups (KIP-932) need v6 and a share coordinator, which a ZooKeeper-mode broker has not
      return noNode(ErrorCode.INVALID_REQUEST);
    default:
      return noNode(ErrorCode.INVALID_REQUEST);
  }
  if (!s.metadata.hasTopic(topic)) {
    createInternalTopic(s, create);
    return noNode(ErrorCode.COORDINATOR_NOT_AVAILABLE);
  }
  const leader = s.metadata.leader(topic, partition);
  const e = leader >= 0 ? s.metadata.endpoint(leader, listener) : undefined;
  if (!e) return noNode(ErrorCode.COORDINATOR_NOT_AVAILABLE);
  return { error: ErrorCode.NONE, nodeId: leader, host: e.host, port: e.port };
}

/** Kafka's Errors.message(): the exception's default message ("NONE" for no error). */
const messageOf = (code: number) => (code === ErrorCode.NONE ? 'NONE' : (errorByCode(code)?.message ?? null));

/**
 * FindCoordinator v0–v6 (v4+: batched keys). Any broker answers: the coordinator of a group is
 * the leader of `__consumer_offsets` partition abs(hash(groupId)) % partitions, that of a
 * transactional id (key type 1) the leader of `__transaction_state` partition
 * abs(hash(transactionalId)) % partitions, given with its endpoint on the listener the request
 * came in on. COORDINATOR_NOT_AVAILABLE while the topic is being created or the partition has no
 * leader; requests sent to another broker answer NOT_COORDINATOR (and COORDINATOR_LOAD_IN_PROGRESS
 * while the coordinator loads the partition).
 */
export const findCoordinatorHandler: ApiHandler<10, BrokerServices> = {
  apiKey: 10,
  async handle(req, ctx, s) {
    const v = req.apiVersion;
    const keyType = v >= 1 ? req.body.keyType : CoordinatorType.GROUP;
    if (v >= 4) {
      const coordinators: FindCoordinatorResponseCoordinator[] = req.body.coordinatorKeys.map((key) => {
        const a = coordinatorFor(s, ctx, keyType, key);
        return { key, nodeId: a.nodeId, host: a.host, port: a.port, errorCode: a.error, errorMessage: null };
      });
      // v4+ carries only `coordinators`; the v0-3 fields keep their defaults
      return { throttleTimeMs: 0, errorCode: 0, errorMessage: null, nodeId: 0, host: '', port: 0, coordinators };
    }
    const a = coordinatorFor(s, ctx, keyType, req.body.key);
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
