import type { Logger } from 'pino';
import { assignReplicasToBrokers } from '@samsa/server-common';
import { KafkaError } from '@samsa/protocol';
import { DeleteTopicsTopicZNode, ZkCode, isZkError, newTopicId, type KafkaZk } from '@samsa/zk-paths';
import type { MetadataCache } from '../metadata/metadata-cache.js';

export const INTERNAL_TOPICS: ReadonlySet<string> = new Set(['__consumer_offsets', '__transaction_state']);
const MAX_NAME_LENGTH = 249;
const LEGAL = /^[a-zA-Z0-9._-]+$/;

/** Kafka's Topic.validate: INVALID_TOPIC_EXCEPTION with Kafka's messages. */
export function validateTopicName(name: string): void {
  if (name.length === 0) throw new KafkaError('INVALID_TOPIC_EXCEPTION', "Topic name is illegal, it can't be empty");
  if (name === '.' || name === '..') throw new KafkaError('INVALID_TOPIC_EXCEPTION', 'Topic name cannot be "." or ".."');
  if (name.length > MAX_NAME_LENGTH) {
    throw new KafkaError('INVALID_TOPIC_EXCEPTION', `Topic name is illegal, it can't be longer than ${MAX_NAME_LENGTH} characters, topic name: ${name}`);
  }
  if (!LEGAL.test(name)) {
    throw new KafkaError(
      'INVALID_TOPIC_EXCEPTION',
      `Topic name "${name}" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'`,
    );
  }
}

export interface NewTopicSpec {
  name: string;
  /** -1: num.partitions. */
  numPartitions: number;
  /** -1: default.replication.factor. */
  replicationFactor: number;
  /** Manual assignment (partition → replicas); exclusive with numPartitions/replicationFactor. */
  assignment?: Map<number, number[]> | undefined;
  configs: Record<string, string>;
}

export interface TopicAdminSettings {
  numPartitions: number;
  defaultReplicationFactor: number;
  /** Validates topic configs; throws KafkaError(INVALID_CONFIG). */
  validateTopicConfig?: (configs: Record<string, string>) => void;
}

/**
 * Topic creation as Kafka's AdminZkClient does it in ZooKeeper mode: validate, assign replicas
 * with Kafka's algorithm (AdminUtils.assignReplicasToBrokers) over the registered brokers, write
 * /config/topics/<t> then /brokers/topics/<t>; the controller picks it up from its watch.
 */
export class TopicAdmin {
  constructor(
    private readonly kzk: KafkaZk,
    private readonly metadata: MetadataCache,
    private readonly settings: TopicAdminSettings,
    private readonly log: Logger,
  ) {}

  async createTopic(
    spec: NewTopicSpec,
    validateOnly = false,
  ): Promise<{ numPartitions: number; replicationFactor: number; assignment: Map<number, number[]> }> {
    validateTopicName(spec.name);
    if (await this.kzk.topicExists(spec.name)) throw new KafkaError('TOPIC_ALREADY_EXISTS', `Topic '${spec.name}' already exists.`);
    const all = await this.kzk.getAllTopics();
    const norm = (t: string) => t.replace(/\./g, '_');
    const collision = all.find((t) => t !== spec.name && norm(t) === norm(spec.name));
    if (collision) throw new KafkaError('INVALID_TOPIC_EXCEPTION', `Topic '${spec.name}' collides with existing topic: ${collision}`);
    const brokers = (await this.kzk.getAllBrokers()).map((b) => ({ id: b.id, rack: b.rack }));
    let assignment: Map<number, number[]>;
    if (spec.assignment && spec.assignment.size > 0) {
      if (spec.numPartitions !== -1 || spec.replicationFactor !== -1) {
        throw new KafkaError(
          'INVALID_REQUEST',
          'Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the same time.',
        );
      }
      assignment = this.validateAssignment(spec.assignment, new Set(brokers.map((b) => b.id)));
    } else {
      const n = spec.numPartitions === -1 ? this.settings.numPartitions : spec.numPartitions;
      const rf = spec.replicationFactor === -1 ? this.settings.defaultReplicationFactor : spec.replicationFactor;
      if (n <= 0) throw new KafkaError('INVALID_PARTITIONS', 'Number of partitions must be larger than 0.');
      if (rf <= 0) throw new KafkaError('INVALID_REPLICATION_FACTOR', 'Replication factor must be larger than 0.');
      assignment = assignReplicasToBrokers(brokers, n, rf);
    }
    this.settings.validateTopicConfig?.(spec.configs);
    const first = assignment.values().next().value ?? [];
    const result = { numPartitions: assignment.size, replicationFactor: first.length, assignment };
    if (validateOnly) return result;
    try {
      await this.kzk.createTopic(spec.name, newTopicId(), assignment, spec.configs);
    } catch (err) {
      if (isZkError(err, ZkCode.NODE_EXISTS)) throw new KafkaError('TOPIC_ALREADY_EXISTS', `Topic '${spec.name}' already exists.`, { cause: err });
      throw err;
    }
    this.log.info({ topic: spec.name, partitions: result.numPartitions, replicationFactor: result.replicationFactor }, 'created topic');
    return result;
  }

  private validateAssignment(a: Map<number, number[]>, live: Set<number>): Map<number, number[]> {
    const parts = [...a.keys()].sort((x, y) => x - y);
    parts.forEach((p, i) => {
      if (p !== i) throw new KafkaError('INVALID_REPLICA_ASSIGNMENT', 'Partitions should be a consecutive 0-based integer sequence');
    });
    let rf = -1;
    for (const p of parts) {
      const replicas = a.get(p)!;
      if (replicas.length === 0) throw new KafkaError('INVALID_REPLICA_ASSIGNMENT', `Replica assignment of partition ${p} is empty`);
      if (new Set(replicas).size !== replicas.length)
        throw new KafkaError('INVALID_REPLICA_ASSIGNMENT', `Duplicate replica assignment found: ${p} -> ${replicas.join(',')}`);
      if (rf !== -1 && replicas.length !== rf) throw new KafkaError('INVALID_REPLICA_ASSIGNMENT', 'All partitions should have the same number of replicas');
      rf = replicas.length;
      const unknown = replicas.filter((r) => !live.has(r));
      if (unknown.length > 0) throw new KafkaError('BROKER_NOT_AVAILABLE', `Unknown broker(s) in replica assignment: ${unknown.join(', ')}.`);
    }
    return new Map(parts.map((p) => [p, a.get(p)!]));
  }

  /**
   * Partition increase (Kafka's AdminZkClient.createPartitions): new partitions get Kafka's
   * replica assignment starting after partition 0's first replica, existing ones are untouched; fewer or as
   * many partitions as today → INVALID_PARTITIONS. Written conditionally on the topic znode version.
   */
  async createPartitions(topic: string, count: number, assignments: number[][] | null, validateOnly = false, attempt = 0): Promise<number> {
    const current = await this.kzk.getTopicAssignmentWithVersion(topic);
    if (!current) throw new KafkaError('UNKNOWN_TOPIC_OR_PARTITION', `The topic '${topic}' does not exist.`);
    if (await this.kzk.zk.exists(DeleteTopicsTopicZNode.path(topic)))
      throw new KafkaError('INVALID_TOPIC_EXCEPTION', `The topic '${topic}' is queued for deletion.`);
    const a = current.assignment;
    if (a.addingReplicas.size > 0 || a.removingReplicas.size > 0)
      throw new KafkaError('REASSIGNMENT_IN_PROGRESS', `A partition reassignment is in progress for the topic '${topic}'.`);
    const existing = a.partitions.size;
    if (count < existing)
      throw new KafkaError('INVALID_PARTITIONS', `Topic currently has ${existing} partitions, which is higher than the requested ${count}.`);
    if (count === existing) throw new KafkaError('INVALID_PARTITIONS', `Topic already has ${existing} partitions.`);
    const brokers = (await this.kzk.getAllBrokers()).map((b) => ({ id: b.id, rack: b.rack })).sort((x, y) => x.id - y.id);
    const p0 = a.partitions.get(0) ?? [...a.partitions.values()][0] ?? [];
    const toAdd = count - existing;
    let added: Map<number, number[]>;
    if (assignments && assignments.length > 0) {
      if (assignments.length !== toAdd) {
        throw new KafkaError('INVALID_REPLICA_ASSIGNMENT', `Increasing the number of partitions by ${toAdd} but ${assignments.length} assignments provided.`);
      }
      added = new Map(assignments.map((r, i) => [existing + i, r]));
      const live = new Set(brokers.map((b) => b.id));
      for (const [p, r] of added) {
        if (r.length !== p0.length)
          throw new KafkaError(
            'INVALID_REPLICA_ASSIGNMENT',
            `Inconsistent replication factor between partitions, partition 0 has ${p0.length} while partition ${p} has replicas ${r.join(',')}.`,
          );
        if (new Set(r).size !== r.length)
          throw new KafkaError('INVALID_REPLICA_ASSIGNMENT', `Duplicate brokers not allowed in replica assignment: ${r.join(', ')} for partition id ${p}.`);
        const unknown = r.filter((b) => !live.has(b));
        if (unknown.length > 0) throw new KafkaError('INVALID_REPLICA_ASSIGNMENT', `Unknown broker(s) in replica assignment: ${unknown.join(', ')}.`);
      }
    } else {
      const startIndex = Math.max(
        0,
        brokers.findIndex((b) => b.id >= (p0[0] ?? 0)),
      );
      added = assignReplicasToBrokers(brokers, toAdd, p0.length, { fixedStartIndex: startIndex, startPartitionId: existing });
    }
    if (validateOnly) return count;
    const partitions = new Map(a.partitions);
    for (const [p, r] of added) partitions.set(p, r);
    try {
      await this.kzk.updateTopicAssignment(topic, { ...a, partitions, version: 3 }, current.zkVersion);
    } catch (err) {
      // the topic changed between our read and write: recompute from the new assignment
      if (isZkError(err, ZkCode.BAD_VERSION) && attempt < 3) return this.createPartitions(topic, count, assignments, validateOnly, attempt + 1);
      throw err;
    }
    this.log.info({ topic, from: existing, to: count }, 'increased partitions');
    return count;
  }

  /** Metadata with auto.create.topics.enable: create with broker defaults; an existing topic is fine. */
  async autoCreate(name: string): Promise<void> {
    try {
      await this.createTopic({ name, numPartitions: -1, replicationFactor: -1, configs: {} });
    } catch (err) {
      if (err instanceof KafkaError && err.errorName === 'TOPIC_ALREADY_EXISTS') return;
      throw err;
    }
  }

  /** Resolves when the metadata cache knows every partition of `topics` with a leader, or at the deadline. */
  waitForMetadata(topics: Array<{ name: string; partitions: number }>, timeoutMs: number): Promise<void> {
    const ready = () =>
      topics.every((t) => {
        const ps = this.metadata.partitions(t.name);
        return ps.length >= t.partitions && ps.every((p) => p.leader >= 0);
      });
    if (ready() || timeoutMs <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        off();
        resolve();
      };
      const off = this.metadata.onUpdate(() => {
        if (ready()) done();
      });
      const timer = setTimeout(done, timeoutMs);
    });
  }
}
