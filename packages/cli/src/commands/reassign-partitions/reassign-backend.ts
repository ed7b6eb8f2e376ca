import type { Admin, TopicPartition } from '@samsa/client';
import { BatchError, ConfigResourceType, KafkaError, topicPartitionKey } from '@samsa/client';
import { ConfigType, KafkaZk, ReassignPartitionsZNode, ZkClient, ZkCode, isZkError } from '@samsa/zk-paths';

/** A topic partition (the one TopicPartition of @samsa/protocol). */
export type TP = TopicPartition;

export interface OngoingReassignment extends TP {
  replicas: number[];
  addingReplicas: number[];
  removingReplicas: number[];
}

/** A command-level failure: its message is printed (Kafka's TerseReassignmentFailureException), exit 1. */
export class ReassignCommandError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ReassignCommandError';
  }
}

/** Throttle config names (broker: bytes/s; topic: partition:broker lists). */
export const LEADER_RATE = 'leader.replication.throttled.rate';
export const FOLLOWER_RATE = 'follower.replication.throttled.rate';
export const LEADER_REPLICAS = 'leader.replication.throttled.replicas';
export const FOLLOWER_REPLICAS = 'follower.replication.throttled.replicas';

/** What the reassign-partitions command needs from the cluster: over the Admin API or ZooKeeper. */
export interface ReassignBackend {
  brokers(): Promise<Array<{ id: number; rack: string | null }>>;
  /** Current replicas of every partition of `topics` (missing topics: an error). */
  topicAssignments(topics: string[]): Promise<Map<string, { tp: TP; replicas: number[] }>>;
  /** Ongoing reassignments (of `tps`, or all). */
  ongoing(tps: TP[] | null): Promise<OngoingReassignment[]>;
  /** Starts (replicas) or cancels (null) reassignments; errors per partition (topicPartitionKey). */
  alter(reassignments: Array<TP & { replicas: number[] | null }>): Promise<Map<string, string>>;
  setTopicThrottles(topic: string, leader: string, follower: string): Promise<void>;
  setBrokerThrottle(brokerIds: number[], rate: number): Promise<void>;
  clearBrokerThrottles(brokerIds: number[]): Promise<void>;
  clearTopicThrottles(topics: string[]): Promise<void>;
  close(): Promise<void>;
}

function firstError(err: unknown): unknown {
  return err instanceof BatchError ? (err.errors.values().next().value ?? err) : err;
}

/** --bootstrap-server: the Admin client (AlterPartitionReassignments, IncrementalAlterConfigs, ...). */
export class AdminReassignBackend implements ReassignBackend {
  constructor(private readonly admin: Admin) {}

  async brokers() {
    return (await this.admin.describeCluster()).brokers.map((b) => ({ id: b.nodeId, rack: b.rack ?? null }));
  }

  async topicAssignments(topics: string[]) {
    const out = new Map<string, { tp: TP; replicas: number[] }>();
    if (topics.length === 0) return out;
    let descs;
    try {
      descs = await this.admin.describeTopics(topics);
    } catch (err) {
      const e = firstError(err);
      throw new ReassignCommandError(
        e instanceof KafkaError && e.errorName === 'UNKNOWN_TOPIC_OR_PARTITION'
          ? `Topic ${[...((err as BatchError).errors?.keys() ?? [])].join(',')} not found`
          : (e as Error).message,
        { cause: err },
      );
    }
    for (const d of descs)
      for (const p of d.partitions)
        out.set(topicPartitionKey({ topic: d.name, partition: p.partition }), { tp: { topic: d.name, partition: p.partition }, replicas: p.replicas });
    return out;
  }

  async ongoing(tps: TP[] | null) {
    const byTopic = new Map<string, number[]>();
    for (const tp of tps ?? []) byTopic.set(tp.topic, [...(byTopic.get(tp.topic) ?? []), tp.partition]);
    return this.admin.listPartitionReassignments(tps === null ? null : [...byTopic].map(([topic, partitions]) => ({ topic, partitions })));
  }

  async alter(reassignments: Array<TP & { replicas: number[] | null }>) {
    const errors = await this.admin.alterPartitionReassignments(reassignments);
    return new Map([...errors].map(([k, e]) => [k, e.message]));
  }

  async setTopicThrottles(topic: string, leader: string, follower: string) {
    await this.admin
      .incrementalAlterConfigs([
        {
          type: ConfigResourceType.Topic,
          name: topic,
          configs: [
            { name: LEADER_REPLICAS, value: leader },
            { name: FOLLOWER_REPLICAS, value: follower },
          ],
        },
      ])
      .catch((err: unknown) => {
        throw firstError(err);
      });
  }

  async setBrokerThrottle(brokerIds: number[], rate: number) {
    await this.admin
      .incrementalAlterConfigs(
        brokerIds.map((id) => ({
          type: ConfigResourceType.Broker,
          name: String(id),
          configs: [
            { name: LEADER_RATE, value: String(rate) },
            { name: FOLLOWER_RATE, value: String(rate) },
          ],
        })),
      )
      .catch((err: unknown) => {
        throw firstError(err);
      });
  }

  async clearBrokerThrottles(brokerIds: number[]) {
    await this.admin
      .incrementalAlterConfigs(
        brokerIds.map((id) => ({
          type: ConfigResourceType.Broker,
          name: String(id),
          configs: [
            { name: LEADER_RATE, value: null },
            { name: FOLLOWER_RATE, value: null },
          ],
        })),
      )
      .catch((err: unknown) => {
        throw firstError(err);
      });
  }

  async clearTopicThrottles(topics: string[]) {
    await this.admin
      .incrementalAlterConfigs(
        topics.map((t) => ({
          type: ConfigResourceType.Topic,
          name: t,
          configs: [
            { name: LEADER_REPLICAS, value: null },
            { name: FOLLOWER_REPLICAS, value: null },
          ],
        })),
      )
      .catch((err: unknown) => {
        throw firstError(err);
      });
  }

  close() {
    return this.admin.close();
  }
}

/**
 * --zookeeper (kafka-reassign-partitions.sh of Kafka 2.x): reads topic znodes, writes
 * /admin/reassign_partitions (refused while one is pending) and the throttle configs with their
 * /config/changes notifications. Cancelling needs --bootstrap-server.
 */
export class ZkReassignBackend implements ReassignBackend {
  constructor(
    private readonly kzk: KafkaZk,
    private readonly closeZk: () => Promise<void> = async () => undefined,
  ) {}

  static async connect(connectString: string): Promise<ZkReassignBackend> {
    const zk = await ZkClient.connect({ connectString, sessionTimeoutMs: 30_000, connectionTimeoutMs: 30_000 });
    return new ZkReassignBackend(new KafkaZk(zk), () => zk.close());
  }

  async brokers() {
    return (await this.kzk.getAllBrokers()).map((b) => ({ id: b.id, rack: b.rack }));
  }

  async topicAssignments(topics: string[]) {
    const out = new Map<string, { tp: TP; replicas: number[] }>();
    for (const topic of topics) {
      const t = await this.kzk.getTopicAssignment(topic);
      if (!t) throw new ReassignCommandError(`Topic ${topic} not found`);
      for (const [partition, replicas] of t.partitions) out.set(topicPartitionKey({ topic, partition }), { tp: { topic, partition }, replicas });
    }
    return out;
  }

  async ongoing(tps: TP[] | null) {
    const out = new Map<string, OngoingReassignment>();
    const pending = await this.kzk.getPartitionReassignment().catch(() => null);
    const topics = tps ? [...new Set(tps.map((t) => t.topic))] : await this.kzk.getAllTopics();
    for (const topic of topics) {
      const t = await this.kzk.getTopicAssignment(topic);
      if (!t) continue;
      for (const [partition, replicas] of t.partitions) {
        const adding = t.addingReplicas.get(partition) ?? [];
        const removing = t.removingReplicas.get(partition) ?? [];
        if (adding.length + removing.length > 0)
          out.set(topicPartitionKey({ topic, partition }), { topic, partition, replicas, addingReplicas: adding, removingReplicas: removing });
      }
    }
    // submitted but not picked up by the controller yet
    for (const e of pending?.partitions ?? []) {
      const k = topicPartitionKey(e);
      if (!out.has(k) && (!tps || tps.some((tp) => topicPartitionKey(tp) === k)))
        out.set(k, { topic: e.topic, partition: e.partition, replicas: e.replicas, addingReplicas: [], removingReplicas: [] });
    }
    return [...out.values()];
  }

  async alter(reassignments: Array<TP & { replicas: number[] | null }>) {
    if (reassignments.some((r) => r.replicas === null)) throw new ReassignCommandError('Cancelling reassignments needs --bootstrap-server.');
    try {
      await this.kzk.createPartitionReassignment(reassignments.map((r) => ({ topic: r.topic, partition: r.partition, replicas: r.replicas! })));
    } catch (err) {
      if (isZkError(err, ZkCode.NODE_EXISTS))
        throw new ReassignCommandError(`There is an existing assignment running (${ReassignPartitionsZNode.path} exists).`, { cause: err });
      throw err;
    }
    return new Map<string, string>();
  }

  private async update(type: ConfigType, name: string, change: Record<string, string | null>): Promise<void> {
    const cfg = await this.kzk.getEntityConfig(type, name);
    for (const [k, v] of Object.entries(change)) {
      if (v === null) delete cfg[k];
      else cfg[k] = v;
    }
    await this.kzk.changeEntityConfig(type, name, cfg);
  }

  async setTopicThrottles(topic: string, leader: string, follower: string) {
    await this.update(ConfigType.Topic, topic, { [LEADER_REPLICAS]: leader, [FOLLOWER_REPLICAS]: follower });
  }

  async setBrokerThrottle(brokerIds: number[], rate: number) {
    for (const id of brokerIds) await this.update(ConfigType.Broker, String(id), { [LEADER_RATE]: String(rate), [FOLLOWER_RATE]: String(rate) });
  }

  async clearBrokerThrottles(brokerIds: number[]) {
    for (const id of brokerIds) await this.update(ConfigType.Broker, String(id), { [LEADER_RATE]: null, [FOLLOWER_RATE]: null });
  }

  async clearTopicThrottles(topics: string[]) {
    for (const t of topics) await this.update(ConfigType.Topic, t, { [LEADER_REPLICAS]: null, [FOLLOWER_REPLICAS]: null });
  }

  close() {
    return this.closeZk();
  }
}
