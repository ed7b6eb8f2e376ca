import { API_KEYS, ErrorCode, KafkaError, topicPartitionKey, type TopicPartition } from '@samsa/protocol';
import type { BrokerNode, Cluster } from './cluster.js';
import type { Connection } from './connection.js';
import { CONSUMER_PROTOCOL_TYPE, decodeConsumerAssignment, decodeConsumerSubscription, type TopicPartitions } from './consumer-protocol.js';
import { BatchError, brokerError } from './errors.js';

/**
 * The consumer-group half of the Admin client (Kafka's listConsumerGroups, describeConsumerGroups,
 * listConsumerGroupOffsets, alterConsumerGroupOffsets, deleteConsumerGroups,
 * deleteConsumerGroupOffsets) and listOffsets. Group requests go to the group's coordinator, found
 * with FindCoordinator before every attempt, so a coordinator that moved (NOT_COORDINATOR,
 * COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS: retriable) is found again on the retry.
 */

export interface GroupOperationOptions {
  /** Deadline of the whole operation, retries included. Default: the cluster's defaultApiTimeoutMs. */
  timeoutMs?: number;
}

export interface ListGroupsOptions extends GroupOperationOptions {
  /** Only groups in these states (ListGroups v4+, case-insensitive). Default: every state. */
  states?: readonly string[];
}

export interface GroupListing {
  groupId: string;
  /** `consumer`, `connect`, ... or '' for groups that only store offsets. */
  protocolType: string;
  /** The group state (ListGroups v4+), else null. */
  state: string | null;
}

export interface MemberDescription {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  /** As the broker reports it (e.g. `/127.0.0.1`). */
  host: string;
  /** The partitions assigned to the member (consumer protocol; empty otherwise or before SyncGroup). */
  assignment: TopicPartitions[];
  /** The topics the member subscribes to (consumer protocol, Stable groups), else null. */
  subscription: string[] | null;
}

export interface GroupDescription {
  groupId: string;
  /** No members and no protocol type: a group that only stores offsets (Kafka's isSimpleConsumerGroup). */
  isSimpleConsumerGroup: boolean;
  protocolType: string;
  /** The assignor (DescribeGroups protocolData), '' when not Stable. */
  partitionAssignor: string;
  /** Stable, PreparingRebalance, CompletingRebalance, Empty, Dead (unknown groups are Dead). */
  state: string;
  coordinator: BrokerNode;
  members: MemberDescription[];
}

export interface CommittedOffset extends TopicPartition {
  offset: bigint;
  /** -1 when unknown. */
  leaderEpoch: number;
  metadata: string | null;
}

export interface NewCommittedOffset extends TopicPartition {
  offset: bigint;
  leaderEpoch?: number;
  metadata?: string | null;
}

/** Earliest (-2), latest (-1) or the first offset whose timestamp is ≥ the given one (ms). */
export type OffsetSpec = 'earliest' | 'latest' | { timestamp: number | bigint };

export interface ListOffsetsRequest extends TopicPartition {
  spec: OffsetSpec;
}

export interface ListedOffset extends TopicPartition {
  /** -1 when no record has a timestamp at or after the one asked for. */
  offset: bigint;
  timestamp: bigint;
  leaderEpoch: number;
}

export interface PartitionResult extends TopicPartition {
  error: KafkaError | null;
}

const tpKey = (tp: TopicPartition) => topicPartitionKey(tp);
const byTopicPartition = (a: TopicPartition, b: TopicPartition) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition);

/** Requested partitions grouped by topic, in first-seen order. */
function groupByTopic<T extends TopicPartition>(items: readonly T[]): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const it of items) {
    const list = m.get(it.topic) ?? [];
    list.push(it);
    m.set(it.topic, list);
  }
  return m;
}

/** Kafka's FindCoordinator key types. */
export const CoordinatorType = { GROUP: 0, TRANSACTION: 1 } as const;
export type CoordinatorType = (typeof CoordinatorType)[keyof typeof CoordinatorType];

/** The coordinator of `groupId` (FindCoordinator, key type GROUP). One attempt. */
export function findGroupCoordinator(cluster: Cluster, groupId: string): Promise<BrokerNode> {
  return findCoordinator(cluster, groupId, CoordinatorType.GROUP);
}

/** The coordinator of a group id or (key type 1) a transactional id. One attempt. */
export async function findCoordinator(cluster: Cluster, key: string, keyType: CoordinatorType): Promise<BrokerNode> {
  const conn = await cluster.anyConnection();
  const what = keyType === CoordinatorType.GROUP ? 'group' : 'transactional id';
  // key type 1 needs FindCoordinator v1+
  const res = await conn.request(API_KEYS.FindCoordinator, (v) => ({ key: v < 4 ? key : '', keyType, coordinatorKeys: v >= 4 ? [key] : [] }), {
    minVersion: keyType === CoordinatorType.GROUP ? 0 : 1,
  });
  if (res.version >= 4) {
    const c = res.body.coordinators.find((x) => x.key === key);
    if (!c) throw new KafkaError('COORDINATOR_NOT_AVAILABLE', `The FindCoordinator response has no coordinator for ${what} '${key}'`);
    if (c.errorCode !== ErrorCode.NONE) throw brokerError(c.errorCode, c.errorMessage);
    return { nodeId: c.nodeId, host: c.host, port: c.port, rack: null };
  }
  if (res.body.errorCode !== ErrorCode.NONE) throw brokerError(res.body.errorCode, res.body.errorMessage);
  return { nodeId: res.body.nodeId, host: res.body.host, port: res.body.port, rack: null };
}

/** Runs `fn` against the coordinator of `groupId`, finding it again on every retry. */
function withCoordinator<T>(
  cluster: Cluster,
  operation: string,
  groupId: string,
  opts: GroupOperationOptions,
  fn: (conn: Connection, node: BrokerNode) => Promise<T>,
): Promise<T> {
  return cluster.retry(
    operation,
    async () => {
      const node = await findGroupCoordinator(cluster, groupId);
      return fn(await cluster.connectionTo(node.nodeId), node);
    },
    opts,
  );
}

/** A coordinator error (retriable or not) for the group, as a thrown KafkaError. */
function throwIfError(code: number, message?: string | null): void {
  if (code !== ErrorCode.NONE) throw brokerError(code, message);
}

/** Groups of every broker (ListGroups to each), merged and sorted by group id. */
export async function listGroups(cluster: Cluster, opts: ListGroupsOptions = {}): Promise<GroupListing[]> {
  const states = opts.states ? [...opts.states] : [];
  const meta = await cluster.retry('listGroups', () => cluster.refreshMetadata(), opts);
  const perBroker = await Promise.all(
    meta.brokers.map((b) =>
      cluster.retry(
        'listGroups',
        async () => {
          const conn = await cluster.connectionTo(b.nodeId);
          const res = await conn.request(API_KEYS.ListGroups, { statesFilter: states, typesFilter: [] }, { minVersion: states.length > 0 ? 4 : 0 });
          throwIfError(res.body.errorCode);
          return res.body.groups.map((g) => ({ groupId: g.groupId, protocolType: g.protocolType, state: res.version >= 4 ? g.groupState : null }));
        },
        opts,
      ),
    ),
  );
  const merged = new Map<string, GroupListing>();
  for (const list of perBroker) for (const g of list) merged.set(g.groupId, g);
  return [...merged.values()].sort((a, b) => (a.groupId < b.groupId ? -1 : a.groupId > b.groupId ? 1 : 0));
}

/** Whether a listing is a consumer group (Kafka's listConsumerGroups keeps `consumer` and '' groups). */
export function isConsumerGroupListing(g: Pick<GroupListing, 'protocolType'>): boolean {
  return g.protocolType === CONSUMER_PROTOCOL_TYPE || g.protocolType === '';
}

/**
 * Describes groups (DescribeGroups to each group's coordinator), in the order asked; members of
 * consumer-protocol groups come with their decoded assignment. Unknown groups are described as
 * Dead. Rejects with BatchError (keyed by group id) if any group failed.
 */
export async function describeGroups(cluster: Cluster, groupIds: readonly string[], opts: GroupOperationOptions = {}): Promise<GroupDescription[]> {
  const ids = [...new Set(groupIds)];
  const errors = new Map<string, KafkaError>();
  const out = new Map<string, GroupDescription>();
  await Promise.all(
    ids.map(async (groupId) => {
      try {
        out.set(
          groupId,
          await withCoordinator(cluster, 'describeGroups', groupId, opts, async (conn, node) => {
            const res = await conn.request(API_KEYS.DescribeGroups, { groups: [groupId], includeAuthorizedOperations: false });
            const g = res.body.groups.find((x) => x.groupId === groupId);
            if (!g) throw new KafkaError('UNKNOWN_SERVER_ERROR', `The DescribeGroups response has no result for group '${groupId}'`);
            throwIfError(g.errorCode);
            return toGroupDescription(g, node);
          }),
        );
      } catch (err) {
        if (!(err instanceof KafkaError)) throw err;
        errors.set(groupId, err);
      }
    }),
  );
  if (errors.size > 0)
    throw new BatchError(
      'describeGroups',
      errors,
      ids.filter((g) => out.has(g)),
    );
  return ids.map((g) => out.get(g)!);
}

function toGroupDescription(
  g: {
    groupId: string;
    groupState: string;
    protocolType: string;
    protocolData: string;
    members: Array<{
      memberId: string;
      groupInstanceId: string | null;
      clientId: string;
      clientHost: string;
      memberMetadata: Buffer;
      memberAssignment: Buffer;
    }>;
  },
  coordinator: BrokerNode,
): GroupDescription {
  const consumer = g.protocolType === CONSUMER_PROTOCOL_TYPE;
  const members = g.members.map((m) => {
    let assignment: TopicPartitions[] = [];
    let subscription: string[] | null = null;
    if (consumer) {
      try {
        assignment = decodeConsumerAssignment(m.memberAssignment).partitions;
      } catch (err) {
        throw new KafkaError('UNKNOWN_SERVER_ERROR', `Group '${g.groupId}': member ${m.memberId} has an unreadable consumer assignment`, { cause: err });
      }
      if (m.memberMetadata.length > 0) {
        try {
          subscription = decodeConsumerSubscription(m.memberMetadata).topics;
        } catch {
          subscription = null;
        }
      }
    }
    return { memberId: m.memberId, groupInstanceId: m.groupInstanceId, clientId: m.clientId, host: m.clientHost, assignment, subscription };
  });
  return {
    groupId: g.groupId,
    isSimpleConsumerGroup: g.protocolType === '',
    protocolType: g.protocolType,
    partitionAssignor: g.protocolData,
    state: g.groupState,
    coordinator,
    members,
  };
}

/**
 * Committed offsets of a group (OffsetFetch to its coordinator): of `partitions`, or all of them
 * (null). Partitions without a committed offset are left out. Sorted by topic, partition.
 */
export async function listGroupOffsets(
  cluster: Cluster,
  groupId: string,
  partitions: readonly TopicPartition[] | null = null,
  opts: GroupOperationOptions = {},
): Promise<CommittedOffset[]> {
  const topics = partitions === null ? null : [...groupByTopic(partitions)].map(([name, ps]) => ({ name, partitionIndexes: ps.map((p) => p.partition) }));
  return withCoordinator(cluster, 'listGroupOffsets', groupId, opts, async (conn) => {
    const res = await conn.request(
      API_KEYS.OffsetFetch,
      (v) =>
        v >= 8
          ? { groupId: '', topics: [], groups: [{ groupId, memberId: null, memberEpoch: -1, topics }], requireStable: false }
          : { groupId, topics, groups: [], requireStable: false },
      // v2+: top-level error, all partitions with a null topic list
      { minVersion: 2 },
    );
    let resultTopics: Array<{
      name: string;
      partitions: Array<{ partitionIndex: number; committedOffset: bigint; committedLeaderEpoch: number; metadata: string | null; errorCode: number }>;
    }>;
    if (res.version >= 8) {
      const g = res.body.groups.find((x) => x.groupId === groupId);
      if (!g) throw new KafkaError('UNKNOWN_SERVER_ERROR', `The OffsetFetch response has no result for group '${groupId}'`);
      throwIfError(g.errorCode);
      resultTopics = g.topics;
    } else {
      throwIfError(res.body.errorCode);
      resultTopics = res.body.topics;
    }
    const out: CommittedOffset[] = [];
    for (const t of resultTopics) {
      for (const p of t.partitions) {
        throwIfError(p.errorCode);
        if (p.committedOffset < 0n) continue;
        out.push({
          topic: t.name,
          partition: p.partitionIndex,
          offset: p.committedOffset,
          leaderEpoch: res.version >= 5 ? p.committedLeaderEpoch : -1,
          metadata: p.metadata,
        });
      }
    }
    return out.sort(byTopicPartition);
  });
}

/**
 * Commits offsets for a group as Kafka's admin does (OffsetCommit with generation -1 and no member
 * id): accepted only while the group has no members (else UNKNOWN_MEMBER_ID); creates the group if
 * it does not exist. Rejects with BatchError (keyed `topic-partition`) if any partition failed.
 */
export async function alterGroupOffsets(
  cluster: Cluster,
  groupId: string,
  offsets: readonly NewCommittedOffset[],
  opts: GroupOperationOptions = {},
): Promise<void> {
  if (offsets.length === 0) return;
  const topics = [...groupByTopic(offsets)].map(([name, ps]) => ({
    name,
    partitions: ps.map((p) => ({
      partitionIndex: p.partition,
      committedOffset: p.offset,
      committedLeaderEpoch: p.leaderEpoch ?? -1,
      commitTimestamp: -1n,
      committedMetadata: p.metadata ?? '',
    })),
  }));
  const res = await withCoordinator(cluster, 'alterGroupOffsets', groupId, opts, async (conn) => {
    // v0 stores offsets in ZooKeeper; v2+ in the coordinator without commit timestamps
    const r = await conn.request(
      API_KEYS.OffsetCommit,
      { groupId, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, retentionTimeMs: -1n, topics },
      { minVersion: 2 },
    );
    // the coordinator moved while committing: find it again
    for (const t of r.body.topics) for (const p of t.partitions) if (isCoordinatorError(p.errorCode)) throwIfError(p.errorCode);
    return r;
  });
  const errors = new Map<string, KafkaError>();
  const ok: string[] = [];
  for (const t of res.body.topics) {
    for (const p of t.partitions) {
      const key = tpKey({ topic: t.name, partition: p.partitionIndex });
      if (p.errorCode !== ErrorCode.NONE) errors.set(key, brokerError(p.errorCode));
      else ok.push(key);
    }
  }
  if (errors.size > 0) throw new BatchError('alterGroupOffsets', errors, ok);
}

function isCoordinatorError(code: number): boolean {
  return code === ErrorCode.NOT_COORDINATOR || code === ErrorCode.COORDINATOR_NOT_AVAILABLE || code === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS;
}

/** Deletes groups (DeleteGroups to each coordinator): Empty groups only. Rejects with BatchError (keyed by group id) if any failed. */
export async function deleteGroups(cluster: Cluster, groupIds: readonly string[], opts: GroupOperationOptions = {}): Promise<void> {
  const ids = [...new Set(groupIds)];
  const errors = new Map<string, KafkaError>();
  await Promise.all(
    ids.map(async (groupId) => {
      try {
        await withCoordinator(cluster, 'deleteGroups', groupId, opts, async (conn) => {
          const res = await conn.request(API_KEYS.DeleteGroups, { groupNames: [groupId] });
          const r = res.body.results.find((x) => x.groupId === groupId);
          if (!r) throw new KafkaError('UNKNOWN_SERVER_ERROR', `The DeleteGroups response has no result for group '${groupId}'`);
          throwIfError(r.errorCode);
        });
      } catch (err) {
        if (!(err instanceof KafkaError)) throw err;
        errors.set(groupId, err);
      }
    }),
  );
  if (errors.size > 0)
    throw new BatchError(
      'deleteGroups',
      errors,
      ids.filter((g) => !errors.has(g)),
    );
}

/**
 * Deletes a group's committed offsets of `partitions` (OffsetDelete, KIP-496). A group-level error
 * (GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP, ...) rejects with its KafkaError; per-partition outcomes
 * (GROUP_SUBSCRIBED_TO_TOPIC, UNKNOWN_TOPIC_OR_PARTITION) come back as results, sorted.
 */
export async function deleteGroupOffsets(
  cluster: Cluster,
  groupId: string,
  partitions: readonly TopicPartition[],
  opts: GroupOperationOptions = {},
): Promise<PartitionResult[]> {
  const topics = [...groupByTopic(partitions)].map(([name, ps]) => ({
    name,
    partitions: [...new Set(ps.map((p) => p.partition))].map((partitionIndex) => ({ partitionIndex })),
  }));
  const res = await withCoordinator(cluster, 'deleteGroupOffsets', groupId, opts, async (conn) => {
    const r = await conn.request(API_KEYS.OffsetDelete, { groupId, topics });
    throwIfError(r.body.errorCode);
    return r;
  });
  const out: PartitionResult[] = [];
  const seen = new Set<string>();
  for (const t of res.body.topics) {
    for (const p of t.partitions) {
      const tp = { topic: t.name, partition: p.partitionIndex };
      seen.add(tpKey(tp));
      out.push({ ...tp, error: p.errorCode === ErrorCode.NONE ? null : brokerError(p.errorCode) });
    }
  }
  for (const t of topics) {
    for (const p of t.partitions) {
      const tp = { topic: t.name, partition: p.partitionIndex };
      if (!seen.has(tpKey(tp))) out.push({ ...tp, error: new KafkaError('UNKNOWN_SERVER_ERROR', `The OffsetDelete response has no result for ${tpKey(tp)}`) });
    }
  }
  return out.sort(byTopicPartition);
}

const specTimestamp = (s: OffsetSpec): bigint => (s === 'earliest' ? -2n : s === 'latest' ? -1n : BigInt(s.timestamp));

/**
 * Offsets of partitions (ListOffsets to each partition's leader, read uncommitted): earliest, latest
 * (the high watermark) or by timestamp. Retries while leaders move; rejects with BatchError (keyed
 * `topic-partition`) for partitions that failed otherwise (e.g. UNKNOWN_TOPIC_OR_PARTITION).
 * Results in the order asked.
 */
export async function listOffsets(cluster: Cluster, requests: readonly ListOffsetsRequest[], opts: GroupOperationOptions = {}): Promise<ListedOffset[]> {
  const results = new Map<string, ListedOffset>();
  const errors = new Map<string, KafkaError>();
  const topics = [...new Set(requests.map((r) => r.topic))];
  if (requests.length === 0) return [];
  await cluster.retry(
    'listOffsets',
    async () => {
      const pending = requests.filter((r) => !results.has(tpKey(r)) && !errors.has(tpKey(r)));
      const md = await cluster.fetchMetadata(topics);
      const leaders = new Map<string, number>();
      for (const t of md.body.topics) {
        if (t.name === null) continue;
        if (t.errorCode !== ErrorCode.NONE && t.errorCode !== ErrorCode.LEADER_NOT_AVAILABLE) {
          const err =
            t.errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION ? new KafkaError(t.errorCode, `Topic '${t.name}' does not exist`) : brokerError(t.errorCode);
          // an unknown topic is final here (Kafka's admin fails it at once)
          if (!err.retriable || t.errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
            for (const r of pending) if (r.topic === t.name) errors.set(tpKey(r), err);
          continue;
        }
        for (const p of t.partitions) leaders.set(tpKey({ topic: t.name, partition: p.partitionIndex }), p.leaderId);
      }
      const byLeader = new Map<number, ListOffsetsRequest[]>();
      let retry = null as KafkaError | null;
      for (const r of pending) {
        if (errors.has(tpKey(r))) continue;
        const leader = leaders.get(tpKey(r));
        if (leader === undefined) {
          if (md.body.topics.some((t) => t.name === r.topic && t.errorCode === ErrorCode.NONE)) {
            errors.set(tpKey(r), new KafkaError('UNKNOWN_TOPIC_OR_PARTITION', `Partition ${tpKey(r)} does not exist`));
          } else retry = new KafkaError('LEADER_NOT_AVAILABLE', `No metadata for ${tpKey(r)} yet`);
          continue;
        }
        if (leader < 0) {
          retry = new KafkaError('LEADER_NOT_AVAILABLE', `Partition ${tpKey(r)} has no leader`);
          continue;
        }
        const list = byLeader.get(leader) ?? [];
        list.push(r);
        byLeader.set(leader, list);
      }
      await Promise.all(
        [...byLeader].map(async ([leader, reqs]) => {
          const conn = await cluster.connectionTo(leader);
          const body = {
            replicaId: -1,
            isolationLevel: 0,
            topics: [...groupByTopic(reqs)].map(([name, ps]) => ({
              name,
              partitions: ps.map((p) => ({ partitionIndex: p.partition, currentLeaderEpoch: -1, timestamp: specTimestamp(p.spec), maxNumOffsets: 1 })),
            })),
          };
          const res = await conn.request(API_KEYS.ListOffsets, body, { minVersion: 1 });
          for (const t of res.body.topics) {
            for (const p of t.partitions) {
              const key = tpKey({ topic: t.name, partition: p.partitionIndex });
              if (p.errorCode === ErrorCode.NONE) {
                results.set(key, {
                  topic: t.name,
                  partition: p.partitionIndex,
                  offset: p.offset,
                  timestamp: p.timestamp,
                  leaderEpoch: res.version >= 4 ? p.leaderEpoch : -1,
                });
              } else if (isRetriableCode(p.errorCode)) {
                retry = brokerError(p.errorCode);
              } else {
                errors.set(key, brokerError(p.errorCode));
              }
            }
          }
        }),
      );
      if (retry) throw retry;
    },
    opts,
  );
  for (const r of requests) {
    if (!results.has(tpKey(r)) && !errors.has(tpKey(r)))
      errors.set(tpKey(r), new KafkaError('UNKNOWN_SERVER_ERROR', `The ListOffsets response has no result for ${tpKey(r)}`));
  }
  if (errors.size > 0) throw new BatchError('listOffsets', errors, [...results.keys()]);
  return requests.map((r) => results.get(tpKey(r))!);
}

function isRetriableCode(code: number): boolean {
  return new KafkaError(code).retriable;
}
