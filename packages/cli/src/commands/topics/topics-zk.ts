import { KafkaError, topicPartitionKey } from '@samsa/client';
import { assignReplicasToBrokers } from '@samsa/server-common';
import {
  DeleteTopicsTopicZNode,
  KafkaZk,
  TopicZNode,
  ZkClient,
  ZkCode,
  isZkError,
  newTopicId,
  type LeaderIsrAndControllerEpoch,
  type TopicAssignment,
} from '@samsa/zk-paths';
import {
  COLLISION_WARNING,
  DescribeOptions,
  INTERNAL_TOPICS,
  TOPIC_CONFIG_NAMES,
  TopicCommandError,
  ensureTopicExists,
  formatPartitionLine,
  formatTopicLine,
  hasCollisionChars,
  isInternalTopic,
  parseReplicaAssignment,
  parseTopicConfigs,
  selectTopics,
  topicsCollide,
  validateTopicName,
  type PartitionSummary,
} from './topics-format.js';
import type { TopicCommandOptions } from './topics-options.js';

/** The ZooKeeper reads and writes `samsa topics --zookeeper` needs (an in-memory one in tests). */
export interface ZkTopicStore {
  /** Registered brokers (/brokers/ids), sorted by id. */
  getBrokers(): Promise<Array<{ id: number; rack: string | null }>>;
  /** Children of /brokers/topics. */
  getAllTopics(): Promise<string[]>;
  /** /brokers/topics/T with its zkVersion, or null. */
  getTopicAssignment(topic: string): Promise<{ assignment: TopicAssignment; version: number } | null>;
  /** Partition state znodes that exist, by partition. */
  getPartitionStates(topic: string, partitions: readonly number[]): Promise<Map<number, LeaderIsrAndControllerEpoch>>;
  /** /config/topics/T ({} when absent). */
  getTopicConfig(topic: string): Promise<Record<string, string>>;
  /** Whether /admin/delete_topics/T exists. */
  isMarkedForDeletion(topic: string): Promise<boolean>;
  /** Writes /config/topics/T then /brokers/topics/T; TopicExistsError if the latter exists. */
  createTopic(topic: string, topicId: string, assignment: Map<number, number[]>, config: Record<string, string>): Promise<void>;
  /** Creates /admin/delete_topics/T; false when it already exists. */
  markForDeletion(topic: string): Promise<boolean>;
  /** Rewrites /brokers/topics/T if still at `expectedVersion`. */
  setTopicAssignment(topic: string, assignment: TopicAssignment, expectedVersion: number): Promise<void>;
  close(): Promise<void>;
}

/** TopicExistsException. */
export class TopicExistsError extends TopicCommandError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TopicExistsError';
  }
}

/** ZkTopicStore over a real ZooKeeper (KafkaZk). */
export class KafkaZkTopicStore implements ZkTopicStore {
  private constructor(
    private readonly zk: ZkClient,
    private readonly kzk: KafkaZk,
  ) {}

  static async connect(connectString: string, opts: { sessionTimeoutMs?: number; connectionTimeoutMs?: number } = {}): Promise<KafkaZkTopicStore> {
    const zk = await ZkClient.connect({
      connectString,
      sessionTimeoutMs: opts.sessionTimeoutMs ?? 30_000,
      connectionTimeoutMs: opts.connectionTimeoutMs ?? 30_000,
    });
    return new KafkaZkTopicStore(zk, new KafkaZk(zk));
  }

  async getBrokers(): Promise<Array<{ id: number; rack: string | null }>> {
    return (await this.kzk.getAllBrokers()).map((b) => ({ id: b.id, rack: b.rack })).sort((a, b) => a.id - b.id);
  }

  getAllTopics(): Promise<string[]> {
    return this.kzk.getAllTopics();
  }

  async getTopicAssignment(topic: string): Promise<{ assignment: TopicAssignment; version: number } | null> {
    const n = await this.zk.getOrNull(TopicZNode.path(topic));
    return n ? { assignment: TopicZNode.decode(topic, n.data), version: n.stat.version } : null;
  }

  async getPartitionStates(topic: string, partitions: readonly number[]): Promise<Map<number, LeaderIsrAndControllerEpoch>> {
    const states = await this.kzk.getPartitionStates(partitions.map((partition) => ({ topic, partition })));
    const out = new Map<number, LeaderIsrAndControllerEpoch>();
    for (const p of partitions) {
      const s = states.get(topicPartitionKey(topic, p));
      if (s) out.set(p, s.state);
    }
    return out;
  }

  getTopicConfig(topic: string): Promise<Record<string, string>> {
    return this.kzk.getTopicConfig(topic);
  }

  async isMarkedForDeletion(topic: string): Promise<boolean> {
    return (await this.zk.exists(DeleteTopicsTopicZNode.path(topic))) !== null;
  }

  async createTopic(topic: string, topicId: string, assignment: Map<number, number[]>, config: Record<string, string>): Promise<void> {
    try {
      await this.kzk.createTopic(topic, topicId, assignment, config);
    } catch (err) {
      if (isZkError(err, ZkCode.NODE_EXISTS)) throw new TopicExistsError(`Topic '${topic}' already exists.`, { cause: err });
      throw err;
    }
  }

  async markForDeletion(topic: string): Promise<boolean> {
    try {
      await this.zk.create(DeleteTopicsTopicZNode.path(topic), null, { mkdirp: true });
      return true;
    } catch (err) {
      if (isZkError(err, ZkCode.NODE_EXISTS)) return false;
      throw err;
    }
  }

  async setTopicAssignment(topic: string, assignment: TopicAssignment, expectedVersion: number): Promise<void> {
    try {
      await this.zk.set(TopicZNode.path(topic), TopicZNode.encode(assignment), expectedVersion);
    } catch (err) {
      if (isZkError(err, ZkCode.BAD_VERSION)) throw new TopicCommandError(`The assignment of topic ${topic} changed meanwhile; try again`, { cause: err });
      throw err;
    }
  }

  async close(): Promise<void> {
    await this.zk.close();
  }
}

/** kafka-topics.sh --zookeeper (Kafka 2.x's ZookeeperTopicService): reads and writes ZooKeeper directly. */
export class ZkTopicService {
  constructor(
    private readonly store: ZkTopicStore,
    private readonly println: (line: string) => void,
    /** Randomness of the replica assignment (tests pin it). */
    private readonly random?: (n: number) => number,
  ) {}

  async close(): Promise<void> {
    await this.store.close();
  }

  private async getTopics(include: string | undefined, excludeInternal: boolean): Promise<string[]> {
    return selectTopics(await this.store.getAllTopics(), include, excludeInternal);
  }

  async createTopic(o: TopicCommandOptions): Promise<void> {
    const topic = o.topic!;
    if (hasCollisionChars(topic)) this.println(COLLISION_WARNING);
    const configs = parseTopicConfigs(o.configs);
    for (const name of Object.keys(configs)) if (!TOPIC_CONFIG_NAMES.has(name)) throw new TopicCommandError(`Unknown topic config name: ${name}`);
    try {
      let assignment: Map<number, number[]>;
      if (o.replicaAssignment !== undefined) {
        assignment = parseReplicaAssignment(o.replicaAssignment);
      } else {
        const brokers = (await this.store.getBrokers()).map((b) => ({ id: b.id, rack: o.disableRackAware ? null : b.rack }));
        assignment = kafkaErrorAsCommandError(() =>
          assignReplicasToBrokers(brokers, o.partitions!, o.replicationFactor!, this.random ? { random: this.random } : {}),
        );
      }
      await this.validateTopicCreate(topic, assignment);
      await this.store.createTopic(topic, newTopicId(), assignment, configs);
      this.println(`Created topic ${topic}.`);
    } catch (err) {
      if (err instanceof TopicExistsError && o.ifNotExists) return;
      throw err;
    }
  }

  /** AdminZkClient.validateTopicCreate. */
  private async validateTopicCreate(topic: string, assignment: Map<number, number[]>): Promise<void> {
    validateTopicName(topic);
    if (await this.store.isMarkedForDeletion(topic)) throw new TopicExistsError(`Topic '${topic}' is marked for deletion.`);
    if (await this.store.getTopicAssignment(topic)) throw new TopicExistsError(`Topic '${topic}' already exists.`);
    if (hasCollisionChars(topic)) {
      const all = await this.store.getAllTopics();
      if (all.includes(topic)) throw new TopicExistsError(`Topic '${topic}' already exists.`);
      const colliding = all.filter((t) => topicsCollide(topic, t));
      if (colliding.length > 0) throw new TopicCommandError(`Topic '${topic}' collides with existing topics: ${colliding.join(', ')}`);
    }
    const sizes = new Set([...assignment.values()].map((r) => r.length));
    if (sizes.size !== 1) throw new TopicCommandError('All partitions should have the same number of replicas');
    for (const replicas of assignment.values()) {
      if (new Set(replicas).size !== replicas.length) throw new TopicCommandError(`Duplicate replica assignment found: ${formatAssignment(assignment)}`);
    }
    const keys = [...assignment.keys()].sort((a, b) => a - b);
    if (keys.some((k, i) => k !== i)) throw new TopicCommandError('partitions should be a consecutive 0-based integer sequence');
  }

  async listTopics(o: TopicCommandOptions): Promise<void> {
    for (const topic of await this.getTopics(o.topic, o.excludeInternal)) {
      this.println((await this.store.isMarkedForDeletion(topic)) ? `${topic} - marked for deletion` : topic);
    }
  }

  async deleteTopic(o: TopicCommandOptions): Promise<void> {
    const topics = await this.getTopics(o.topic, o.excludeInternal);
    ensureTopicExists(topics, o.topic, !o.ifExists);
    for (const topic of topics) {
      if (isInternalTopic(topic)) throw new TopicCommandError(`Topic ${topic} is a kafka internal topic and is not allowed to be marked for deletion.`);
      if (await this.store.markForDeletion(topic)) {
        this.println(`Topic ${topic} is marked for deletion.`);
        this.println('Note: This will have no impact if delete.topic.enable is not set to true.');
      } else {
        this.println(`Topic ${topic} is already marked for deletion.`);
      }
    }
  }

  async alterTopic(o: TopicCommandOptions): Promise<void> {
    const topics = await this.getTopics(o.topic, o.excludeInternal);
    ensureTopicExists(topics, o.topic, !o.ifExists);
    const proposed = o.replicaAssignment !== undefined ? parseReplicaAssignment(o.replicaAssignment) : undefined;
    for (const topic of topics) {
      if (isInternalTopic(topic)) {
        throw new TopicCommandError(`The number of partitions for the internal topics(${[...INTERNAL_TOPICS].join(', ')}) cannot be changed.`);
      }
      this.println('WARNING: If partitions are increased for a topic that has a key, the partition logic or ordering of the messages will be affected');
      const current = await this.store.getTopicAssignment(topic);
      if (!current || current.assignment.partitions.size === 0) throw new TopicCommandError(`The topic ${topic} does not exist`);
      const existing = current.assignment.partitions;
      const partition0 = existing.get(0);
      if (!partition0) throw new TopicCommandError(`Unexpected existing replica assignment for topic '${topic}', partition id 0 is missing`);
      const toAdd = o.partitions! - existing.size;
      if (toAdd <= 0) {
        throw new TopicCommandError(
          `The number of partitions for a topic can only be increased. Topic ${topic} currently has ${existing.size} partitions, ${o.partitions} would not be an increase.`,
        );
      }
      const brokers = (await this.store.getBrokers()).map((b) => ({ id: b.id, rack: o.disableRackAware ? null : b.rack }));
      let added: Map<number, number[]>;
      const given = proposed ? new Map([...proposed].filter(([p]) => p >= existing.size)) : undefined;
      if (given && given.size > 0) {
        validateNewReplicas(given, partition0.length, new Set(brokers.map((b) => b.id)), existing.size, toAdd);
        added = given;
      } else {
        // AdminZkClient.createNewPartitionsAssignment: continue the round-robin from partition 0's leader
        const startIndex = Math.max(
          0,
          brokers.findIndex((b) => b.id >= partition0[0]!),
        );
        added = kafkaErrorAsCommandError(() =>
          assignReplicasToBrokers(brokers, toAdd, partition0.length, {
            fixedStartIndex: startIndex,
            startPartitionId: existing.size,
            ...(this.random ? { random: this.random } : {}),
          }),
        );
      }
      const partitions = new Map(existing);
      for (const [p, replicas] of added) partitions.set(p, replicas);
      await this.store.setTopicAssignment(topic, { ...current.assignment, partitions }, current.version);
      this.println('Adding partitions succeeded!');
    }
  }

  async describeTopic(o: TopicCommandOptions): Promise<void> {
    const topics = await this.getTopics(o.topic, o.excludeInternal);
    ensureTopicExists(topics, o.topic, !o.ifExists);
    const live = new Set((await this.store.getBrokers()).map((b) => b.id));
    const describeOptions = new DescribeOptions(o.filters, live);
    for (const topic of topics) {
      const found = await this.store.getTopicAssignment(topic);
      if (!found) {
        this.println(`Topic ${topic} doesn't exist!`);
        continue;
      }
      const a = found.assignment;
      const markedForDeletion = await this.store.isMarkedForDeletion(topic);
      const configs = await this.store.getTopicConfig(topic);
      const minIsrValue = configs['min.insync.replicas'];
      const minIsr = minIsrValue !== undefined && /^\d+$/.test(minIsrValue) ? Number(minIsrValue) : undefined;
      const partitions = [...a.partitions].sort((x, y) => x[0] - y[0]);
      if (describeOptions.describeConfigs && (!o.filters.topicsWithOverrides || Object.keys(configs).length > 0)) {
        this.println(
          formatTopicLine({
            topic,
            topicId: a.topicId,
            partitionCount: partitions.length,
            replicationFactor: partitions[0]?.[1].length ?? 0,
            configs: Object.entries(configs),
            markedForDeletion,
          }),
        );
      }
      if (!describeOptions.describePartitions) continue;
      const states = await this.store.getPartitionStates(
        topic,
        partitions.map(([p]) => p),
      );
      for (const [partition, replicas] of partitions) {
        const state = states.get(partition);
        const adding = a.addingReplicas.get(partition) ?? [];
        const removing = a.removingReplicas.get(partition) ?? [];
        const summary: PartitionSummary = {
          topic,
          partition,
          leader: state && state.leader >= 0 ? state.leader : null,
          replicas,
          isr: state?.isr ?? [],
          offline: replicas.filter((r) => !live.has(r)),
          reassignment: adding.length > 0 || removing.length > 0 ? { replicas, addingReplicas: adding, removingReplicas: removing } : undefined,
          markedForDeletion,
          minIsr,
        };
        if (describeOptions.shouldPrintPartition(summary)) this.println(formatPartitionLine(summary));
      }
    }
  }
}

function kafkaErrorAsCommandError<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof KafkaError) throw new TopicCommandError(err.message, { cause: err });
    throw err;
  }
}

/** Scala's Map.toString of an assignment, as Kafka's messages print it. */
function formatAssignment(a: Map<number, number[]>): string {
  return `Map(${[...a].map(([p, r]) => `${p} -> List(${r.join(', ')})`).join(', ')})`;
}

/** AdminZkClient.validateReplicaAssignment for the partitions being added. */
function validateNewReplicas(added: Map<number, number[]>, expectedRf: number, brokerIds: ReadonlySet<number>, existing: number, toAdd: number): void {
  for (const [p, replicas] of added) {
    if (replicas.length === 0) throw new TopicCommandError(`Cannot have replication factor of 0 for partition id ${p}.`);
    if (new Set(replicas).size !== replicas.length) {
      throw new TopicCommandError(`Duplicate brokers not allowed in replica assignment: ${replicas.join(', ')} for partition id ${p}.`);
    }
    if (!replicas.every((r) => brokerIds.has(r))) {
      throw new TopicCommandError(
        `Some brokers specified for partition id ${p} are not available. Specified brokers: ${replicas.join(', ')}, available brokers: ${[...brokerIds].join(', ')}.`,
      );
    }
    if (replicas.length !== expectedRf) {
      throw new TopicCommandError(
        `Inconsistent replication factor between partitions, partition 0 has ${expectedRf} while partition ${p} has ${replicas.length}.`,
      );
    }
  }
  if (added.size !== toAdd) {
    throw new TopicCommandError(`Increasing the number of partitions by ${toAdd} but ${added.size} assignments provided.`);
  }
  const keys = [...added.keys()].sort((a, b) => a - b);
  if (keys.some((k, i) => k !== existing + i)) throw new TopicCommandError(`Unexpected partition ids in the replica assignment: ${keys.join(', ')}`);
}
