import { randomBytes } from 'node:crypto';
import { ErrorCode, topicPartitionKey, ZERO_UUID, type ApiKey } from '@samsa/protocol';
import { FakeBroker, type FakeBrokerOptions, type FakeHandler, type FakeRequestContext } from './fake-broker.js';

export interface FakePartition {
  partition: number;
  /** -1: no leader. */
  leader: number;
  leaderEpoch: number;
  replicas: number[];
  isr: number[];
}

export interface FakeTopic {
  name: string;
  topicId: Buffer;
  isInternal: boolean;
  partitions: FakePartition[];
  /** Topic config overrides (reported as DYNAMIC_TOPIC_CONFIG). */
  configs: Record<string, string>;
}

export interface FakeReassignment {
  topic: string;
  partition: number;
  replicas: number[];
  addingReplicas: number[];
  removingReplicas: number[];
}

export interface FakeClusterOptions {
  /** Broker count (ids 0..n-1) or explicit brokers. Default 1. */
  brokers?: number | Array<{ nodeId: number; rack?: string | null }>;
  /** Default: the first broker. */
  controllerId?: number;
  clusterId?: string;
  /** Options for every broker (apiVersions, maxApiVersionsVersion, ordered). */
  brokerOptions?: Omit<FakeBrokerOptions, 'nodeId' | 'handlers' | 'port'>;
  /** Topic config defaults (reported as DEFAULT_CONFIG). */
  defaultConfigs?: Record<string, string>;
}

export const FAKE_DEFAULT_TOPIC_CONFIGS: Readonly<Record<string, string>> = {
  'cleanup.policy': 'delete',
  'min.insync.replicas': '1',
  'retention.ms': '604800000',
  'segment.bytes': '1073741824',
};

const DESCRIBE_CONFIGS_SOURCE = { topic: 1, default: 5, staticBroker: 4 } as const;
const NO_AUTHORIZED_OPERATIONS = -2147483648;

/**
 * Several FakeBrokers sharing one cluster state, answering like a ZooKeeper-mode Kafka cluster:
 * Metadata and DescribeCluster from any broker, CreateTopics/DeleteTopics/CreatePartitions/
 * ListPartitionReassignments/ElectLeaders only on the controller (NOT_CONTROLLER elsewhere), DescribeConfigs
 * for topics and brokers. Tests change `controllerId`, `live`, `topics` or override handlers
 * per broker (`broker(id).on(...)`).
 */
export class FakeCluster {
  readonly brokers: FakeBroker[];
  readonly racks = new Map<number, string | null>();
  readonly topics = new Map<string, FakeTopic>();
  /** Brokers reported alive (Metadata / DescribeCluster list only these). */
  readonly live: Set<number>;
  reassignments: FakeReassignment[] = [];
  controllerId: number;
  clusterId: string;
  defaultConfigs: Record<string, string>;
  /** Used when CreateTopics asks for -1. */
  defaultPartitions = 1;
  defaultReplicationFactor = 1;

  private constructor(brokers: FakeBroker[], opts: FakeClusterOptions) {
    this.brokers = brokers;
    this.live = new Set(brokers.map((b) => b.nodeId));
    this.controllerId = opts.controllerId ?? brokers[0]!.nodeId;
    this.clusterId = opts.clusterId ?? 'fake-cluster-id-0000000';
    this.defaultConfigs = { ...(opts.defaultConfigs ?? FAKE_DEFAULT_TOPIC_CONFIGS) };
  }

  static async start(opts: FakeClusterOptions = {}): Promise<FakeCluster> {
    const specs =
      typeof opts.brokers === 'number' || opts.brokers === undefined
        ? Array.from({ length: (opts.brokers as number | undefined) ?? 1 }, (_, i) => ({ nodeId: i, rack: null }))
        : opts.brokers;
    const brokers = await Promise.all(specs.map((s) => FakeBroker.start({ ...opts.brokerOptions, nodeId: s.nodeId })));
    const cluster = new FakeCluster(brokers, opts);
    for (const s of specs) cluster.racks.set(s.nodeId, s.rack ?? null);
    for (const b of brokers) cluster.install(b);
    return cluster;
  }

  /** Comma-separated addresses of every broker. */
  get bootstrapServers(): string {
    return this.brokers.map((b) => b.address).join(',');
  }

  broker(nodeId: number): FakeBroker {
    const b = this.brokers.find((x) => x.nodeId === nodeId);
    if (!b) throw new Error(`no fake broker ${nodeId}`);
    return b;
  }

  /** Adds a topic: partition p gets `assignment[p]`, the first replica leads, every replica in sync. */
  addTopic(name: string, assignment: number[][], opts: { configs?: Record<string, string>; isInternal?: boolean; topicId?: Buffer } = {}): FakeTopic {
    const topic: FakeTopic = {
      name,
      topicId: opts.topicId ?? randomBytes(16),
      isInternal: opts.isInternal ?? name.startsWith('__'),
      partitions: assignment.map((replicas, partition) => ({
        partition,
        leader: replicas[0] ?? -1,
        leaderEpoch: 0,
        replicas: [...replicas],
        isr: [...replicas],
      })),
      configs: { ...opts.configs },
    };
    this.topics.set(name, topic);
    return topic;
  }

  async close(): Promise<void> {
    await Promise.all(this.brokers.map((b) => b.close()));
  }

  // ---- handlers -------------------------------------------------------------------------

  private install(b: FakeBroker): void {
    const on = <K extends ApiKey>(k: K, h: FakeHandler<K>) => b.on(k, h);
    on(3, (req, ctx) => this.metadata(req.topics === null || (ctx.version === 0 && req.topics.length === 0) ? null : req.topics.map((t) => t.name ?? '')));
    on(60, () => ({
      throttleTimeMs: 0,
      errorCode: 0,
      errorMessage: null,
      endpointType: 1,
      clusterId: this.clusterId,
      controllerId: this.controllerId,
      brokers: this.liveBrokers().map((x) => ({ brokerId: x.nodeId, host: x.host, port: x.port, rack: this.racks.get(x.nodeId) ?? null })),
      clusterAuthorizedOperations: NO_AUTHORIZED_OPERATIONS,
    }));
    on(19, (req, ctx) => {
      const notController = !this.isController(ctx);
      return {
        throttleTimeMs: 0,
        topics: req.topics.map((t) => {
          const base = { name: t.name, topicId: ZERO_UUID, topicConfigErrorCode: 0, numPartitions: -1, replicationFactor: -1, configs: null };
          const fail = (code: number, msg: string) => ({ ...base, errorCode: code, errorMessage: msg });
          if (notController) return fail(ErrorCode.NOT_CONTROLLER, 'This is not the correct controller for this cluster.');
          if (this.topics.has(t.name)) return fail(ErrorCode.TOPIC_ALREADY_EXISTS, `Topic '${t.name}' already exists.`);
          if (!/^[a-zA-Z0-9._-]{1,249}$/.test(t.name) || t.name === '.' || t.name === '..') {
            return fail(
              ErrorCode.INVALID_TOPIC_EXCEPTION,
              `Topic name "${t.name}" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'`,
            );
          }
          let assignment: number[][];
          if (t.assignments.length > 0) {
            assignment = [...t.assignments].sort((a, c) => a.partitionIndex - c.partitionIndex).map((a) => a.brokerIds);
          } else {
            const n = t.numPartitions === -1 ? this.defaultPartitions : t.numPartitions;
            const rf = t.replicationFactor === -1 ? this.defaultReplicationFactor : t.replicationFactor;
            if (n <= 0) return fail(ErrorCode.INVALID_PARTITIONS, 'Number of partitions must be larger than 0.');
            if (rf <= 0) return fail(ErrorCode.INVALID_REPLICATION_FACTOR, 'Replication factor must be larger than 0.');
            const ids = this.liveBrokers().map((x) => x.nodeId);
            if (rf > ids.length) return fail(ErrorCode.INVALID_REPLICATION_FACTOR, `Replication factor: ${rf} larger than available brokers: ${ids.length}.`);
            assignment = Array.from({ length: n }, (_, p) => Array.from({ length: rf }, (_, i) => ids[(p + i) % ids.length]!));
          }
          const configs = Object.fromEntries(t.configs.map((c) => [c.name, c.value ?? '']));
          const topicId = randomBytes(16);
          if (!req.validateOnly) this.addTopic(t.name, assignment, { configs, topicId });
          return {
            ...base,
            topicId: req.validateOnly ? ZERO_UUID : topicId,
            errorCode: 0,
            errorMessage: null,
            numPartitions: assignment.length,
            replicationFactor: assignment[0]?.length ?? 0,
            configs: [],
          };
        }),
      };
    });
    on(20, (req, ctx) => {
      const names = ctx.version >= 6 ? req.topics.map((t) => t.name ?? '') : req.topicNames;
      return {
        throttleTimeMs: 0,
        responses: names.map((name) => {
          let errorCode = 0;
          if (!this.isController(ctx)) errorCode = ErrorCode.NOT_CONTROLLER;
          else if (!this.topics.has(name)) errorCode = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
          else this.topics.delete(name);
          return { name, topicId: ZERO_UUID, errorCode, errorMessage: null };
        }),
      };
    });
    on(37, (req, ctx) => ({
      throttleTimeMs: 0,
      results: req.topics.map((t) => {
        const fail = (errorCode: number, errorMessage: string | null) => ({ name: t.name, errorCode, errorMessage });
        if (!this.isController(ctx)) return fail(ErrorCode.NOT_CONTROLLER, null);
        const topic = this.topics.get(t.name);
        if (!topic) return fail(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `The topic '${t.name}' does not exist.`);
        const current = topic.partitions.length;
        if (t.count <= current)
          return fail(ErrorCode.INVALID_PARTITIONS, `Topic currently has ${current} partitions, which is higher than the requested ${t.count}.`);
        if (t.assignments && t.assignments.length !== t.count - current) {
          return fail(
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            `Increasing the number of partitions by ${t.count - current} but ${t.assignments.length} assignments provided.`,
          );
        }
        if (!req.validateOnly) {
          const rf = topic.partitions[0]?.replicas.length ?? 1;
          const ids = this.liveBrokers().map((x) => x.nodeId);
          for (let p = current; p < t.count; p++) {
            const replicas = t.assignments?.[p - current]?.brokerIds ?? Array.from({ length: rf }, (_, i) => ids[(p + i) % ids.length]!);
            topic.partitions.push({ partition: p, leader: replicas[0] ?? -1, leaderEpoch: 0, replicas: [...replicas], isr: [...replicas] });
          }
        }
        return fail(0, null);
      }),
    }));
    on(32, (req, ctx) => ({
      throttleTimeMs: 0,
      results: req.resources.map((r) => {
        const entry = (name: string, value: string, source: number) => ({
          name,
          value,
          readOnly: false,
          isDefault: ctx.version === 0 && source === DESCRIBE_CONFIGS_SOURCE.default,
          configSource: source,
          isSensitive: false,
          synonyms: [],
          configType: 0,
          documentation: null,
        });
        const result = (errorCode: number, errorMessage: string | null, configs: ReturnType<typeof entry>[]) => ({
          errorCode,
          errorMessage,
          resourceType: r.resourceType,
          resourceName: r.resourceName,
          configs: r.configurationKeys ? configs.filter((c) => r.configurationKeys!.includes(c.name)) : configs,
        });
        if (r.resourceType === 2) {
          const topic = this.topics.get(r.resourceName);
          if (!topic) return result(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Topic ${r.resourceName} does not exist.`, []);
          const names = [...new Set([...Object.keys(this.defaultConfigs), ...Object.keys(topic.configs)])].sort();
          return result(
            0,
            null,
            names.map((n) =>
              n in topic.configs
                ? entry(n, topic.configs[n]!, DESCRIBE_CONFIGS_SOURCE.topic)
                : entry(n, this.defaultConfigs[n]!, DESCRIBE_CONFIGS_SOURCE.default),
            ),
          );
        }
        if (r.resourceType === 4) {
          if (Number(r.resourceName) !== ctx.broker.nodeId)
            return result(ErrorCode.INVALID_REQUEST, `Unexpected broker id, expected ${ctx.broker.nodeId} but received ${r.resourceName}`, []);
          return result(0, null, [
            entry('broker.id', String(ctx.broker.nodeId), DESCRIBE_CONFIGS_SOURCE.staticBroker),
            entry('num.partitions', String(this.defaultPartitions), DESCRIBE_CONFIGS_SOURCE.default),
          ]);
        }
        return result(ErrorCode.INVALID_REQUEST, `Unsupported resource type ${r.resourceType}`, []);
      }),
    }));
    on(43, (req, ctx) => {
      const type = ctx.version === 0 ? 0 : req.electionType;
      if (!this.isController(ctx)) return { throttleTimeMs: 0, errorCode: ErrorCode.NOT_CONTROLLER, replicaElectionResults: [] };
      const wanted =
        req.topicPartitions === null
          ? [...this.topics.values()].flatMap((t) => t.partitions.map((p) => ({ topic: t.name, partition: p.partition })))
          : req.topicPartitions.flatMap((t) => t.partitions.map((partition) => ({ topic: t.topic, partition })));
      const byTopic = new Map<string, Array<{ partitionId: number; errorCode: number; errorMessage: string | null }>>();
      for (const { topic, partition } of wanted) {
        const p = this.topics.get(topic)?.partitions.find((x) => x.partition === partition);
        const result = (errorCode: number, errorMessage: string | null) =>
          byTopic.set(topic, [...(byTopic.get(topic) ?? []), { partitionId: partition, errorCode, errorMessage }]);
        if (!p) {
          result(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'The partition does not exist.');
          continue;
        }
        const leaderLive = p.leader >= 0 && this.live.has(p.leader);
        if (type === 0) {
          const preferred = p.replicas[0] ?? -1;
          if (p.leader === preferred && leaderLive) result(ErrorCode.ELECTION_NOT_NEEDED, 'Leader election not needed for topic partition.');
          else if (!this.live.has(preferred) || !p.isr.includes(preferred)) {
            result(
              ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE,
              `Failed to elect leader for partition ${topicPartitionKey(topic, partition)} under strategy PreferredReplicaPartitionLeaderElectionStrategy`,
            );
          } else {
            p.leader = preferred;
            p.leaderEpoch++;
            result(0, null);
          }
        } else if (leaderLive) result(ErrorCode.ELECTION_NOT_NEEDED, 'Leader election not needed for topic partition.');
        else {
          const next = p.replicas.find((r) => this.live.has(r));
          if (next === undefined)
            result(
              ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE,
              `Failed to elect leader for partition ${topicPartitionKey(topic, partition)} under strategy OfflinePartitionLeaderElectionStrategy(true)`,
            );
          else {
            p.leader = next;
            p.leaderEpoch++;
            p.isr = [next];
            result(0, null);
          }
        }
      }
      // KafkaApis: an election over every partition leaves out those that needed none
      const results = [...byTopic]
        .map(([topic, rs]) => ({ topic, partitionResult: req.topicPartitions === null ? rs.filter((r) => r.errorCode !== ErrorCode.ELECTION_NOT_NEEDED) : rs }))
        .filter((t) => t.partitionResult.length > 0);
      return { throttleTimeMs: 0, errorCode: 0, replicaElectionResults: results };
    });
    on(46, (req, ctx) => {
      if (!this.isController(ctx)) return { throttleTimeMs: 0, errorCode: ErrorCode.NOT_CONTROLLER, errorMessage: null, topics: [] };
      const wanted = req.topics ? new Set(req.topics.flatMap((t) => t.partitionIndexes.map((p) => topicPartitionKey(t.name, p)))) : null;
      const byTopic = new Map<string, FakeReassignment[]>();
      for (const r of this.reassignments) {
        if (wanted && !wanted.has(topicPartitionKey(r))) continue;
        byTopic.set(r.topic, [...(byTopic.get(r.topic) ?? []), r]);
      }
      return {
        throttleTimeMs: 0,
        errorCode: 0,
        errorMessage: null,
        topics: [...byTopic].map(([name, rs]) => ({
          name,
          partitions: rs.map((r) => ({
            partitionIndex: r.partition,
            replicas: r.replicas,
            addingReplicas: r.addingReplicas,
            removingReplicas: r.removingReplicas,
          })),
        })),
      };
    });
  }

  private isController(ctx: FakeRequestContext): boolean {
    return ctx.broker.nodeId === this.controllerId;
  }

  private liveBrokers(): FakeBroker[] {
    return this.brokers.filter((b) => this.live.has(b.nodeId)).sort((a, b) => a.nodeId - b.nodeId);
  }

  private metadata(names: string[] | null) {
    const topics = names === null ? [...this.topics.values()] : names.map((n) => this.topics.get(n) ?? n);
    return {
      throttleTimeMs: 0,
      brokers: this.liveBrokers().map((b) => ({ nodeId: b.nodeId, host: b.host, port: b.port, rack: this.racks.get(b.nodeId) ?? null })),
      clusterId: this.clusterId,
      controllerId: this.live.has(this.controllerId) ? this.controllerId : -1,
      clusterAuthorizedOperations: NO_AUTHORIZED_OPERATIONS,
      topics: topics.map((t) =>
        typeof t === 'string'
          ? {
              errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
              name: t,
              topicId: ZERO_UUID,
              isInternal: false,
              partitions: [],
              topicAuthorizedOperations: NO_AUTHORIZED_OPERATIONS,
            }
          : {
              errorCode: 0,
              name: t.name,
              topicId: t.topicId,
              isInternal: t.isInternal,
              topicAuthorizedOperations: NO_AUTHORIZED_OPERATIONS,
              partitions: t.partitions.map((p) => ({
                errorCode: p.leader >= 0 && this.live.has(p.leader) ? 0 : ErrorCode.LEADER_NOT_AVAILABLE,
                partitionIndex: p.partition,
                leaderId: p.leader >= 0 && this.live.has(p.leader) ? p.leader : -1,
                leaderEpoch: p.leaderEpoch,
                replicaNodes: p.replicas,
                isrNodes: p.isr,
                offlineReplicas: p.replicas.filter((r) => !this.live.has(r)),
              })),
            },
      ),
    };
  }
}
