/**
 * The controller's LeaderAndIsr and StopReplica, applied to this broker's partitions (Kafka's
 * ReplicaManager.becomeLeaderOrFollower / makeLeaders / makeFollowers and stopReplicas). The
 * ReplicaManager owns the state and runs these one request at a time (its replicaStateChangeLock).
 *
 * A LeaderAndIsr is applied in three steps, as Kafka's makeLeaders / makeFollowers do: the logs of
 * its partitions are created or found (file I/O, a bounded number at once), then each partition
 * becomes leader or follower in memory (no file is written on this path: the leader epoch
 * checkpoint is written in the background), then the fetchers change once for the whole request.
 */
import type { Logger } from 'pino';
import {
  ErrorCode,
  errorCodeOf,
  KafkaError,
  topicPartitionKey,
  type LeaderAndIsrRequest,
  type LeaderAndIsrResponse,
  type PartitionError,
  type StopReplicaRequest,
  type StopReplicaResponse,
  type TopicPartitionMap,
} from '@samsa/protocol';
import type { Log, LogConfig } from '@samsa/storage';
import type { TopicPartition } from '@samsa/protocol';
import { forEachBounded } from '@samsa/server-common';
import type { TopicSettings } from '../config/topic-settings.js';
import type { LeaderEndpoint, ReplicaFetcherManager } from './fetcher-manager.js';
import type { Partition } from './partition.js';

/** Partitions of one LeaderAndIsr whose logs are created or found at once (creation is file I/O). */
export const LEADER_AND_ISR_PARALLELISM = 32;

/** What the replica manager needs from the log manager. */
export interface LogProvider {
  getOrCreateLog(tp: TopicPartition, config: LogConfig, topicId: string): Promise<Log>;
  getLog(tp: TopicPartition): Log | undefined;
  /** Closes and schedules deletion (`<dir>.<uuid>-delete`, removed asynchronously). */
  deleteLog(tp: TopicPartition): Promise<void>;
}

/** A partition this broker started or stopped leading (the group coordinator follows `__consumer_offsets`). */
export interface LeadershipChange {
  topic: string;
  partition: number;
  /** The leader epoch of the change; -1 when unknown (StopReplica without one). */
  leaderEpoch: number;
  isLeader: boolean;
}

/** The ReplicaManager's state these requests change. */
export interface ReplicaStateHost {
  readonly brokerId: number;
  readonly interBrokerListenerName: string;
  readonly logs: LogProvider;
  readonly log: Logger;
  readonly stateChangeLogger: Logger;
  readonly partitions: TopicPartitionMap<Partition>;
  readonly fetchers: ReplicaFetcherManager;
  controllerEpoch: number;
  /** Controlled shutdown stopped fetching for good: partitions that move away get no fetcher. */
  fetchingStopped(): boolean;
  settingsFor(topic: string): Promise<TopicSettings>;
  forgetTopicSettings(topic: string): void;
  /** The high watermark read at startup for this partition, handed out once. */
  takeCheckpointedHw(key: string): bigint | undefined;
  /** A new Partition, registered, with its purgatory listeners. */
  newPartition(topic: string, partition: number): Partition;
  /** Leadership moved: produces, fetches and DeleteRecords waiting on the partition answer now. */
  completeDelayed(key: string): void;
  notifyLeadership(c: LeadershipChange): void;
}

type PartitionState = LeaderAndIsrRequest['partitionStates'][number];

interface Work {
  s: PartitionState;
  p: Partition;
  key: string;
  log?: Log;
  errorCode: number;
}

export async function applyLeaderAndIsr(h: ReplicaStateHost, req: LeaderAndIsrRequest): Promise<LeaderAndIsrResponse> {
  const scl = h.stateChangeLogger;
  if (req.controllerEpoch < h.controllerEpoch) {
    scl.warn(
      { controllerId: req.controllerId, controllerEpoch: req.controllerEpoch, latest: h.controllerEpoch },
      'ignoring LeaderAndIsr from a stale controller',
    );
    throw new KafkaError('STALE_CONTROLLER_EPOCH', `controller epoch ${req.controllerEpoch} is older than ${h.controllerEpoch}`);
  }
  h.controllerEpoch = req.controllerEpoch;
  const started = Date.now();
  const work: Work[] = [];
  for (const s of req.partitionStates) work.push(checkState(h, s));
  // 1. logs: created (file I/O) or found; partitions are independent, so a few at once
  const applicable = work.filter((w) => w.errorCode === ErrorCode.NONE);
  await forEachBounded(applicable, LEADER_AND_ISR_PARALLELISM, async (w) => {
    try {
      const settings = await h.settingsFor(w.s.topic);
      w.log = await h.logs.getOrCreateLog({ topic: w.s.topic, partition: w.s.partition }, settings.logConfig, w.s.topicId);
    } catch (e) {
      h.log.error({ err: e, topic: w.s.topic, partition: w.s.partition }, 'failed to apply LeaderAndIsr');
      w.errorCode = e instanceof KafkaError ? errorCodeOf(e) : ErrorCode.KAFKA_STORAGE_ERROR;
    }
  });
  // 2. leader or follower, in memory (each waits only for a leader append in progress on its partition);
  // new leaders stop fetching first, so no fetched batch lands in a leader's log
  const ready = applicable.filter((w) => w.log !== undefined && w.errorCode === ErrorCode.NONE);
  h.fetchers.removePartitions(ready.filter((w) => w.s.leader === h.brokerId).map((w) => w.key));
  await Promise.all(ready.map((w) => makeLeaderOrFollower(h, w)));
  // 3. the followers' fetchers, once for the request (Kafka's removeFetcherForPartitions / addFetcherForPartitions)
  changeFollowerFetchers(h, req, ready);
  for (const w of ready) {
    if (w.errorCode !== ErrorCode.NONE) continue;
    // per partition at debug; one info line per request (below), as Kafka 1.1 stopped logging every partition
    scl.debug(
      { topic: w.s.topic, partition: w.s.partition, leader: w.s.leader, leaderEpoch: w.s.leaderEpoch, isr: w.s.isr, controllerEpoch: req.controllerEpoch },
      'applied LeaderAndIsr',
    );
    h.completeDelayed(w.key);
    h.notifyLeadership({ topic: w.s.topic, partition: w.s.partition, leaderEpoch: w.s.leaderEpoch, isLeader: w.s.leader === h.brokerId });
  }
  const errors: PartitionError[] = work.map((w) => ({ topic: w.s.topic, topicId: w.s.topicId, partition: w.s.partition, errorCode: w.errorCode }));
  const leaders = req.partitionStates.filter((s) => s.leader === h.brokerId).length;
  scl.info(
    {
      controllerId: req.controllerId,
      controllerEpoch: req.controllerEpoch,
      partitions: req.partitionStates.length,
      leaders,
      followers: req.partitionStates.length - leaders,
      errors: errors.filter((e) => e.errorCode !== ErrorCode.NONE).length,
      ms: Date.now() - started,
    },
    'applied LeaderAndIsr request',
  );
  return { errorCode: 0, partitionErrors: errors };
}

/** A partition state this broker can apply: assigned here, not an older leader epoch. Creates the Partition. */
function checkState(h: ReplicaStateHost, s: PartitionState): Work {
  const scl = h.stateChangeLogger;
  const key = topicPartitionKey(s.topic, s.partition);
  let p = h.partitions.get(s.topic, s.partition);
  const refused = (errorCode: number): Work => ({ s, p: p as Partition, key, errorCode });
  if (!s.replicas.includes(h.brokerId)) {
    scl.warn({ topic: s.topic, partition: s.partition, replicas: s.replicas }, 'LeaderAndIsr for a partition not assigned to this broker');
    return refused(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  }
  if (p && s.leaderEpoch < p.leaderEpoch) {
    scl.warn(
      { topic: s.topic, partition: s.partition, leaderEpoch: s.leaderEpoch, current: p.leaderEpoch },
      'ignoring LeaderAndIsr with an older leader epoch',
    );
    return refused(ErrorCode.STALE_CONTROLLER_EPOCH);
  }
  p ??= h.newPartition(s.topic, s.partition);
  return { s, p, key, errorCode: ErrorCode.NONE };
}

async function makeLeaderOrFollower(h: ReplicaStateHost, w: Work): Promise<void> {
  const log = w.log as Log;
  try {
    const hw = h.takeCheckpointedHw(w.key);
    if (hw !== undefined && hw > log.highWatermark) log.updateHighWatermark(hw);
    if (w.s.leader === h.brokerId) await w.p.makeLeader(w.s, log);
    else await w.p.makeFollower(w.s, log);
  } catch (e) {
    h.log.error({ err: e, topic: w.s.topic, partition: w.s.partition }, 'failed to apply LeaderAndIsr');
    w.errorCode = e instanceof KafkaError ? errorCodeOf(e) : ErrorCode.KAFKA_STORAGE_ERROR;
  }
}

/** Followers fetch from their leader's inter-broker endpoint (none while shutting down). */
function changeFollowerFetchers(h: ReplicaStateHost, req: LeaderAndIsrRequest, applied: readonly Work[]): void {
  const remove: string[] = [];
  const add: Array<{ partition: Partition; leader: LeaderEndpoint; leaderEpoch: number }> = [];
  const endpoints = new Map<number, LeaderEndpoint | null>();
  const endpointOf = (brokerId: number): LeaderEndpoint | null => {
    let e = endpoints.get(brokerId);
    if (e === undefined) {
      const b = req.liveLeaders.find((x) => x.brokerId === brokerId);
      const ep = b?.endpoints.find((x) => x.listener === h.interBrokerListenerName);
      e = ep ? { brokerId, host: ep.host || '127.0.0.1', port: ep.port } : null;
      endpoints.set(brokerId, e);
    }
    return e;
  };
  for (const w of applied) {
    const s = w.s;
    if (w.errorCode !== ErrorCode.NONE || s.leader === h.brokerId) continue;
    // shutting down: following again would put this broker back into the new leader's ISR
    if (h.fetchingStopped()) continue;
    const leader = endpointOf(s.leader);
    if (leader) add.push({ partition: w.p, leader, leaderEpoch: s.leaderEpoch });
    else {
      remove.push(w.key);
      if (s.leader >= 0) h.stateChangeLogger.warn({ topic: s.topic, partition: s.partition, leader: s.leader }, 'no endpoint for the leader; not fetching');
    }
  }
  h.fetchers.removePartitions(remove);
  h.fetchers.addPartitions(add);
}

/** StopReplica requests larger than this log one summary line instead of a line per partition. */
export const STOP_REPLICA_PER_PARTITION_INFO_LIMIT = 100;

export async function applyStopReplica(h: ReplicaStateHost, req: StopReplicaRequest): Promise<StopReplicaResponse> {
  if (req.controllerEpoch < h.controllerEpoch) {
    throw new KafkaError('STALE_CONTROLLER_EPOCH', `controller epoch ${req.controllerEpoch} is older than ${h.controllerEpoch}`);
  }
  h.controllerEpoch = req.controllerEpoch;
  const started = performance.now();
  const partitionErrors: PartitionError[] = [];
  // a line per partition for small requests; a large one (a controlled shutdown's followers) gets one summary
  const perPartition = req.partitions.length <= STOP_REPLICA_PER_PARTITION_INFO_LIMIT;
  let stopped = 0;
  let deleted = 0;
  for (const s of req.partitions) {
    const p = h.partitions.get(s.topic, s.partition);
    if (p && s.leaderEpoch >= 0 && s.leaderEpoch < p.leaderEpoch) {
      partitionErrors.push({ topic: s.topic, topicId: '', partition: s.partition, errorCode: ErrorCode.FENCED_LEADER_EPOCH });
      continue;
    }
    const key = topicPartitionKey(s.topic, s.partition);
    h.partitions.delete(s.topic, s.partition);
    h.fetchers.removePartition(key);
    p?.stopLeading();
    if (p) h.notifyLeadership({ topic: s.topic, partition: s.partition, leaderEpoch: s.leaderEpoch, isLeader: false });
    h.completeDelayed(key);
    if (s.deletePartition) {
      try {
        await h.logs.deleteLog(s);
        h.forgetTopicSettings(s.topic);
      } catch (e) {
        h.log.error({ err: e, topic: s.topic, partition: s.partition }, 'failed to delete log');
        partitionErrors.push({ topic: s.topic, topicId: '', partition: s.partition, errorCode: ErrorCode.KAFKA_STORAGE_ERROR });
        continue;
      }
    }
    if (perPartition) h.stateChangeLogger.info({ topic: s.topic, partition: s.partition, deletePartition: s.deletePartition }, 'stopped replica');
    else h.stateChangeLogger.debug({ topic: s.topic, partition: s.partition, deletePartition: s.deletePartition }, 'stopped replica');
    stopped++;
    if (s.deletePartition) deleted++;
    partitionErrors.push({ topic: s.topic, topicId: '', partition: s.partition, errorCode: ErrorCode.NONE });
  }
  if (!perPartition) {
    h.stateChangeLogger.info(
      {
        controllerEpoch: req.controllerEpoch,
        partitions: req.partitions.length,
        stopped,
        deleted,
        errors: req.partitions.length - stopped,
        ms: Math.round(performance.now() - started),
      },
      'applied StopReplica request',
    );
  }
  return { errorCode: 0, partitionErrors };
}
