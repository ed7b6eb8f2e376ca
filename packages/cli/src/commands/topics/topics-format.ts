/**
 * kafka-topics.sh output and topic-name rules (Kafka 3.x TopicCommand): the describe lines, the
 * partition filters of --describe, the --topic include list, config and replica-assignment parsing.
 * Everything here is pure, so both the --bootstrap-server and the --zookeeper paths share it.
 */

/** Kafka's internal topics (Topic.INTERNAL_TOPICS). */
export const INTERNAL_TOPICS: ReadonlySet<string> = new Set(['__consumer_offsets', '__transaction_state']);

export const isInternalTopic = (topic: string): boolean => INTERNAL_TOPICS.has(topic);

/** Uuid.ZERO_UUID.toString(). */
export const ZERO_TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAA';

/** An error reported as `Error while executing topic command : <message>`, exit code 1. */
export class TopicCommandError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TopicCommandError';
  }
}

// ---- describe -------------------------------------------------------------------------------

export interface TopicSummary {
  topic: string;
  /** Omitted from the line when null or the zero id. */
  topicId: string | null;
  partitionCount: number;
  replicationFactor: number;
  /** Non-default configs, in display order. */
  configs: ReadonlyArray<readonly [string, string | null]>;
  markedForDeletion: boolean;
}

export interface PartitionSummary {
  topic: string;
  partition: number;
  /** null: no leader ("none"). */
  leader: number | null;
  replicas: readonly number[];
  isr: readonly number[];
  /** Replicas on offline brokers; the Offline column appears only when there are some. */
  offline: readonly number[];
  /** Ongoing reassignment, if any. */
  reassignment?: { replicas: readonly number[]; addingReplicas: readonly number[]; removingReplicas: readonly number[] } | undefined;
  markedForDeletion: boolean;
  /** min.insync.replicas of the topic, when known. */
  minIsr?: number | undefined;
}

/** `Topic: T\tTopicId: …\tPartitionCount: N\tReplicationFactor: R\tConfigs: k=v,…` (TopicDescription.printDescription). */
export function formatTopicLine(t: TopicSummary): string {
  let line = `Topic: ${t.topic}`;
  if (t.topicId !== null && t.topicId !== ZERO_TOPIC_ID) line += `\tTopicId: ${t.topicId}`;
  line += `\tPartitionCount: ${t.partitionCount}`;
  line += `\tReplicationFactor: ${t.replicationFactor}`;
  line += `\tConfigs: ${t.configs.map(([k, v]) => `${k}=${v}`).join(',')}`;
  if (t.markedForDeletion) line += '\tMarkedForDeletion: true';
  return line;
}

/** `\tTopic: T\tPartition: 0\tLeader: 1\tReplicas: 1,0,2\tIsr: 0,1,2` (PartitionDescription.printDescription). */
export function formatPartitionLine(p: PartitionSummary): string {
  let line = `\tTopic: ${p.topic}`;
  line += `\tPartition: ${p.partition}`;
  line += `\tLeader: ${p.leader === null ? 'none' : p.leader}`;
  line += `\tReplicas: ${p.replicas.join(',')}`;
  line += `\tIsr: ${p.isr.join(',')}`;
  if (p.offline.length > 0) line += `\tOffline: ${p.offline.join(',')}`;
  if (p.reassignment) {
    if (p.reassignment.addingReplicas.length > 0) line += `\tAdding Replicas: ${p.reassignment.addingReplicas.join(',')}`;
    if (p.reassignment.removingReplicas.length > 0) line += `\tRemoving Replicas: ${p.reassignment.removingReplicas.join(',')}`;
  }
  if (p.markedForDeletion) line += '\tMarkedForDeletion: true';
  return line;
}

/**
 * Replication factor as TopicCommand computes it: with a reassignment still in progress, the
 * target replicas minus the ones being added; otherwise the replica count.
 */
export function replicationFactorOf(replicas: readonly number[], reassignment?: PartitionSummary['reassignment']): number {
  if (reassignment) {
    const changing = new Set([...reassignment.removingReplicas, ...reassignment.addingReplicas]);
    if (replicas.some((r) => changing.has(r))) return reassignment.replicas.filter((r) => !reassignment.addingReplicas.includes(r)).length;
  }
  return replicas.length;
}

export interface DescribeFilters {
  underReplicatedPartitions?: boolean;
  unavailablePartitions?: boolean;
  underMinIsrPartitions?: boolean;
  atMinIsrPartitions?: boolean;
  topicsWithOverrides?: boolean;
}

/** TopicCommand.DescribeOptions: what --describe prints under the report options. */
export class DescribeOptions {
  /** Topic lines are printed unless a partition report option is given. */
  readonly describeConfigs: boolean;
  /** Partition lines are printed unless --topics-with-overrides. */
  readonly describePartitions: boolean;

  constructor(
    private readonly f: DescribeFilters,
    private readonly liveBrokers: ReadonlySet<number>,
  ) {
    this.describeConfigs = !f.unavailablePartitions && !f.underReplicatedPartitions && !f.underMinIsrPartitions && !f.atMinIsrPartitions;
    this.describePartitions = !f.topicsWithOverrides;
  }

  shouldPrintPartition(p: PartitionSummary): boolean {
    const hasLeader = p.leader !== null;
    const rf = replicationFactorOf(p.replicas, p.reassignment);
    return (
      this.describeConfigs ||
      (!!this.f.underReplicatedPartitions && rf - p.isr.length > 0) ||
      (!!this.f.unavailablePartitions && (!hasLeader || !this.liveBrokers.has(p.leader!))) ||
      (!!this.f.underMinIsrPartitions && (!hasLeader || (p.minIsr !== undefined && p.isr.length < p.minIsr))) ||
      (!!this.f.atMinIsrPartitions && p.minIsr !== undefined && p.isr.length === p.minIsr)
    );
  }
}

// ---- topic selection --------------------------------------------------------------------

/**
 * Kafka's IncludeList: `--topic` is a regular expression matched against the whole name, with
 * commas meaning "or" (so `a,b` selects a and b), spaces and surrounding quotes dropped.
 */
export function topicMatcher(include: string): (topic: string) => boolean {
  const regex = include
    .trim()
    .replace(/,/g, '|')
    .replace(/ /g, '')
    .replace(/^["']+/, '')
    .replace(/["']+$/, '');
  let re: RegExp;
  try {
    re = new RegExp(`^(?:${regex})$`);
  } catch (err) {
    throw new TopicCommandError(`Invalid topic regular expression ${JSON.stringify(include)}: ${(err as Error).message}`, { cause: err });
  }
  return (topic) => re.test(topic);
}

/** TopicCommand.doGetTopics: sorted names, filtered by the include list and --exclude-internal. */
export function selectTopics(all: readonly string[], include: string | undefined, excludeInternal: boolean): string[] {
  const sorted = [...all].sort();
  const match = include !== undefined ? topicMatcher(include) : () => true;
  return sorted.filter((t) => match(t) && !(excludeInternal && isInternalTopic(t)));
}

/** TopicCommand.ensureTopicExists. */
export function ensureTopicExists(found: readonly string[], requested: string | undefined, requireExists: boolean): void {
  if (requested !== undefined && requireExists && found.length === 0) throw new TopicCommandError(`Topic '${requested}' does not exist as expected`);
}

// ---- names ------------------------------------------------------------------------------

export const MAX_TOPIC_NAME_LENGTH = 249;

/** Topic.validate: throws INVALID_TOPIC_EXCEPTION's messages. */
export function validateTopicName(topic: string): void {
  if (topic.length === 0) throw new TopicCommandError("Topic name is illegal, it can't be empty");
  if (topic === '.' || topic === '..') throw new TopicCommandError('Topic name cannot be "." or ".."');
  if (topic.length > MAX_TOPIC_NAME_LENGTH) {
    throw new TopicCommandError(`Topic name is illegal, it can't be longer than ${MAX_TOPIC_NAME_LENGTH} characters, Topic name: ${topic}`);
  }
  if (!/^[a-zA-Z0-9._-]+$/.test(topic)) {
    throw new TopicCommandError(`Topic name "${topic}" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'`);
  }
}

/** Topic.hasCollisionChars. */
export const hasCollisionChars = (topic: string): boolean => topic.includes('_') || topic.includes('.');

/** Topic.hasCollision: equal once '.' is read as '_'. */
export const topicsCollide = (a: string, b: string): boolean => a.replace(/\./g, '_') === b.replace(/\./g, '_');

export const COLLISION_WARNING =
  "WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') could collide. To avoid issues it is best to use either, but not both.";

// ---- option values ----------------------------------------------------------------------

/** Java's String.split: trailing empty strings dropped. */
function javaSplit(s: string, re: RegExp): string[] {
  const parts = s.split(re);
  while (parts.length > 0 && parts[parts.length - 1] === '') parts.pop();
  return parts;
}

/** TopicCommand.parseTopicConfigsToBeAdded: each `--config` is `key=value` (spaces around `=` allowed). */
export function parseTopicConfigs(entries: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of entries) {
    const pair = javaSplit(e, /\s*=\s*/);
    if (pair.length !== 2) throw new TopicCommandError('requirement failed: Invalid topic config: all configs to be added must be in the format "key=val".');
    out[pair[0]!.trim()] = pair[1]!.trim();
  }
  return out;
}

/** Kafka's Integer.parseInt message. */
function parseBrokerId(s: string): number {
  const t = s.trim();
  if (!/^[-+]?\d+$/.test(t) || Math.abs(Number(t)) > 2147483647) throw new TopicCommandError(`For input string: "${t}"`);
  return Number(t);
}

/**
 * TopicCommand.parseReplicaAssignment: partitions separated by commas, the replicas of each by
 * colons (`0:1,1:2,2:0`). Returns partition → replicas, partitions numbered from 0.
 */
export function parseReplicaAssignment(s: string): Map<number, number[]> {
  const ret = new Map<number, number[]>();
  const partitions = javaSplit(s, /,/);
  for (let i = 0; i < partitions.length; i++) {
    const brokers = javaSplit(partitions[i]!, /:/).map(parseBrokerId);
    const dups = [...new Set(brokers.filter((b, j) => brokers.indexOf(b) !== j))];
    if (dups.length > 0) throw new TopicCommandError(`Partition replica lists may not contain duplicate entries: ${dups.join(',')}`);
    ret.set(i, brokers);
    if (brokers.length !== ret.get(0)!.length) throw new TopicCommandError(`Partition ${i} has different replication factor: ${brokers.join(',')}`);
  }
  return ret;
}

/** Topic-level configs Kafka 3.x knows (TopicConfig); the ZooKeeper path validates names against it. */
export const TOPIC_CONFIG_NAMES: ReadonlySet<string> = new Set([
  'cleanup.policy',
  'compression.type',
  'delete.retention.ms',
  'file.delete.delay.ms',
  'flush.messages',
  'flush.ms',
  'follower.replication.throttled.replicas',
  'index.interval.bytes',
  'leader.replication.throttled.replicas',
  'local.retention.bytes',
  'local.retention.ms',
  'max.compaction.lag.ms',
  'max.message.bytes',
  'message.downconversion.enable',
  'message.format.version',
  'message.timestamp.after.max.ms',
  'message.timestamp.before.max.ms',
  'message.timestamp.difference.max.ms',
  'message.timestamp.type',
  'min.cleanable.dirty.ratio',
  'min.compaction.lag.ms',
  'min.insync.replicas',
  'preallocate',
  'remote.storage.enable',
  'retention.bytes',
  'retention.ms',
  'segment.bytes',
  'segment.index.bytes',
  'segment.jitter.ms',
  'segment.ms',
  'unclean.leader.election.enable',
]);
