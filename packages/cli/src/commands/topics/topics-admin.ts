import type { Admin } from '@samsa/client';
import { BatchError, ConfigResourceType, KafkaError, topicPartitionKey, type ConfigEntry, type PartitionReassignment } from '@samsa/client';
import {
  COLLISION_WARNING,
  DescribeOptions,
  TopicCommandError,
  ensureTopicExists,
  formatPartitionLine,
  formatTopicLine,
  hasCollisionChars,
  parseReplicaAssignment,
  parseTopicConfigs,
  replicationFactorOf,
  selectTopics,
  type PartitionSummary,
} from './topics-format.js';
import type { TopicCommandOptions } from './topics-options.js';

const SHORT_MAX = 32767;

/** The first per-topic error of a batch (what TopicCommand reports: the failed future's cause). */
function unwrap(err: unknown): unknown {
  if (err instanceof BatchError) return err.errors.values().next().value ?? err;
  return err;
}

/**
 * kafka-topics.sh with --bootstrap-server (TopicCommand.TopicService of Kafka 3.x) over the
 * Admin client.
 */
export class AdminTopicService {
  constructor(
    private readonly admin: Admin,
    private readonly println: (line: string) => void,
  ) {}

  async close(): Promise<void> {
    await this.admin.close();
  }

  /** Sorted topic names, filtered by --topic (a regex list) and --exclude-internal. */
  private async getTopics(include: string | undefined, excludeInternal: boolean): Promise<string[]> {
    const all = await this.admin.listTopics({ listInternal: !excludeInternal });
    return selectTopics(all, include, excludeInternal);
  }

  async createTopic(o: TopicCommandOptions): Promise<void> {
    const name = o.topic!;
    if (hasCollisionChars(name)) this.println(COLLISION_WARNING);
    if (o.replicationFactor !== undefined && (o.replicationFactor > SHORT_MAX || o.replicationFactor < 1)) {
      throw new TopicCommandError(`The replication factor must be between 1 and ${SHORT_MAX} inclusive`);
    }
    if (o.partitions !== undefined && o.partitions < 1) throw new TopicCommandError('The partitions must be greater than 0');
    const configs = parseTopicConfigs(o.configs);
    const replicaAssignment = o.replicaAssignment !== undefined ? parseReplicaAssignment(o.replicaAssignment) : undefined;
    try {
      await this.admin.createTopics([
        replicaAssignment
          ? { name, replicaAssignment, configs }
          : { name, numPartitions: o.partitions ?? -1, replicationFactor: o.replicationFactor ?? -1, configs },
      ]);
      this.println(`Created topic ${name}.`);
    } catch (err) {
      const e = unwrap(err);
      if (o.ifNotExists && e instanceof KafkaError && e.errorName === 'TOPIC_ALREADY_EXISTS') return;
      throw e;
    }
  }

  async listTopics(o: TopicCommandOptions): Promise<void> {
    // Kafka prints the joined names with println: an empty line when there are none
    this.println((await this.getTopics(o.topic, o.excludeInternal)).join('\n'));
  }

  async alterTopic(o: TopicCommandOptions): Promise<void> {
    const topics = await this.getTopics(o.topic, o.excludeInternal);
    ensureTopicExists(topics, o.topic, !o.ifExists);
    if (topics.length === 0) return;
    const assignment = o.replicaAssignment !== undefined ? parseReplicaAssignment(o.replicaAssignment) : undefined;
    let current = new Map<string, number>();
    if (assignment) {
      const described = await this.admin.describeTopics(topics).catch((e: unknown) => Promise.reject(unwrap(e)));
      current = new Map(described.map((d) => [d.name, d.partitions.length]));
    }
    try {
      await this.admin.createPartitions(
        topics.map((topic) => ({
          topic,
          count: o.partitions!,
          assignments: assignment ? [...assignment].filter(([p]) => p >= (current.get(topic) ?? 0)).map(([, replicas]) => replicas) : undefined,
        })),
      );
    } catch (err) {
      throw unwrap(err);
    }
  }

  async deleteTopic(o: TopicCommandOptions): Promise<void> {
    const topics = await this.getTopics(o.topic, o.excludeInternal);
    ensureTopicExists(topics, o.topic, !o.ifExists);
    if (topics.length === 0) return;
    try {
      await this.admin.deleteTopics(topics);
    } catch (err) {
      throw unwrap(err);
    }
  }

  async describeTopic(o: TopicCommandOptions): Promise<void> {
    const topics = await this.getTopics(o.topic, o.excludeInternal);
    ensureTopicExists(topics, o.topic, !o.ifExists);
    if (topics.length === 0) return;
    let descriptions;
    let configs;
    try {
      descriptions = await this.admin.describeTopics(topics);
      configs = await this.admin.describeConfigs(descriptions.map((d) => ({ type: ConfigResourceType.Topic, name: d.name })));
    } catch (err) {
      throw unwrap(err);
    }
    const configsOf = new Map(configs.map((c) => [c.name, c.entries]));
    const cluster = await this.admin.describeCluster();
    const describeOptions = new DescribeOptions(o.filters, new Set(cluster.brokers.map((b) => b.nodeId)));
    const reassignments = await this.listReassignments(descriptions.map((d) => ({ topic: d.name, partitions: d.partitions.map((p) => p.partition) })));

    for (const td of descriptions) {
      const entries: ConfigEntry[] = configsOf.get(td.name) ?? [];
      const overrides = entries.filter((e) => !e.isDefault);
      const minIsrValue = entries.find((e) => e.name === 'min.insync.replicas')?.value;
      const minIsr = minIsrValue != null && /^\d+$/.test(minIsrValue) ? Number(minIsrValue) : undefined;
      const first = td.partitions[0];
      if (describeOptions.describeConfigs && (!o.filters.topicsWithOverrides || overrides.length > 0)) {
        this.println(
          formatTopicLine({
            topic: td.name,
            topicId: td.topicId,
            partitionCount: td.partitions.length,
            replicationFactor: first ? replicationFactorOf(first.replicas, reassignments.get(topicPartitionKey(td.name, first.partition))) : 0,
            configs: overrides.map((e) => [e.name, e.value] as const),
            markedForDeletion: false,
          }),
        );
      }
      if (describeOptions.describePartitions) {
        for (const p of td.partitions) {
          const summary: PartitionSummary = {
            topic: td.name,
            partition: p.partition,
            leader: p.leader,
            replicas: p.replicas,
            isr: p.isr,
            offline: p.offline,
            reassignment: reassignments.get(topicPartitionKey(td.name, p.partition)),
            markedForDeletion: false,
            minIsr,
          };
          if (describeOptions.shouldPrintPartition(summary)) this.println(formatPartitionLine(summary));
        }
      }
    }
  }

  /** Ongoing reassignments; none when the broker does not support listing them (as TopicCommand). */
  private async listReassignments(partitions: Array<{ topic: string; partitions: number[] }>): Promise<Map<string, PartitionReassignment>> {
    let list: PartitionReassignment[];
    try {
      list = await this.admin.listPartitionReassignments(partitions);
    } catch (err) {
      if (err instanceof KafkaError && (err.errorName === 'UNSUPPORTED_VERSION' || err.errorName === 'CLUSTER_AUTHORIZATION_FAILED')) return new Map();
      throw err;
    }
    return new Map(list.map((r) => [topicPartitionKey(r), r]));
  }
}
