import type { Command } from 'commander';
import type { DescribeFilters } from './topics-format.js';

/** The raw option values commander collects (camelCase of kafka-topics.sh's flags). */
export interface RawTopicsOptions {
  bootstrapServer?: string;
  zookeeper?: string;
  commandConfig?: string;
  list?: boolean;
  describe?: boolean;
  create?: boolean;
  delete?: boolean;
  alter?: boolean;
  topic?: string;
  partitions?: string;
  replicationFactor?: string;
  replicaAssignment?: string;
  config?: string[];
  ifExists?: boolean;
  ifNotExists?: boolean;
  excludeInternal?: boolean;
  disableRackAware?: boolean;
  underReplicatedPartitions?: boolean;
  unavailablePartitions?: boolean;
  underMinIsrPartitions?: boolean;
  atMinIsrPartitions?: boolean;
  topicsWithOverrides?: boolean;
}

export type TopicAction = 'create' | 'list' | 'describe' | 'alter' | 'delete';

/** Validated options. Config and replica-assignment strings are parsed when the action runs (as Kafka does). */
export interface TopicCommandOptions {
  action: TopicAction;
  bootstrapServer?: string | undefined;
  zookeeper?: string | undefined;
  commandConfig?: string | undefined;
  topic?: string | undefined;
  partitions?: number | undefined;
  replicationFactor?: number | undefined;
  replicaAssignment?: string | undefined;
  configs: string[];
  ifExists: boolean;
  ifNotExists: boolean;
  excludeInternal: boolean;
  disableRackAware: boolean;
  filters: DescribeFilters;
}

/** A command-line mistake: printed with a usage hint, exit code 1 (CommandLineUtils.printUsageAndExit). */
export class TopicsUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TopicsUsageError';
  }
}

const collect = (v: string, prev: string[]) => [...prev, v];

/** Defines kafka-topics.sh's options on `cmd`. */
export function defineTopicsOptions(cmd: Command): Command {
  return cmd
    .option('--bootstrap-server <servers>', 'REQUIRED (or --zookeeper): the Kafka server(s) to connect to, host:port[,host:port…]')
    .option('--zookeeper <connect>', 'ZooKeeper connection string host:port[,host:port…][/chroot]: work on ZooKeeper directly (as Kafka 2.x)')
    .option('--command-config <file>', 'property file with Admin client configs (client.id, request.timeout.ms, default.api.timeout.ms, retry.backoff.ms, …)')
    .option('--list', 'list all available topics')
    .option('--describe', 'list details for the given topics')
    .option('--create', 'create a new topic')
    .option('--delete', 'delete a topic')
    .option('--alter', 'alter the number of partitions and replica assignment')
    .option('--topic <topic>', 'the topic to create, alter, describe or delete; also a regular expression (comma-separated names allowed), except for --create')
    .option('--partitions <n>', 'the number of partitions for the topic being created or altered')
    .option('--replication-factor <n>', 'the replication factor for each partition in the topic being created')
    .option('--replica-assignment <list>', 'manual assignment: broker_id_for_part1_replica1:broker_id_for_part1_replica2,broker_id_for_part2_replica1:…')
    .option('--config <name=value>', 'a topic configuration override for the topic being created (repeatable)', collect, [])
    .option('--if-exists', 'with --alter, --delete or --describe: only act if the topic exists')
    .option('--if-not-exists', 'with --create: only create the topic if it does not exist')
    .option('--exclude-internal', 'exclude internal topics when running list or describe')
    .option('--disable-rack-aware', 'with --zookeeper: disable rack-aware replica assignment')
    .option('--under-replicated-partitions', 'with --describe: only partitions whose isr count is less than the replication factor')
    .option('--unavailable-partitions', 'with --describe: only partitions whose leader is not available')
    .option('--under-min-isr-partitions', 'with --describe: only partitions whose isr count is less than min.insync.replicas')
    .option('--at-min-isr-partitions', 'with --describe: only partitions whose isr count equals min.insync.replicas')
    .option('--topics-with-overrides', 'with --describe: only topics that have overridden configs');
}

// joptsimple prints an option as "[name]"
const opt = (name: string) => `"[${name}]"`;

function parseIntArg(v: string | undefined, name: string): number | undefined {
  if (v === undefined) return undefined;
  if (!/^[-+]?\d+$/.test(v.trim()) || Math.abs(Number(v)) > 2147483647) throw new TopicsUsageError(`Cannot parse argument '${v}' of option ${name}`);
  return Number(v);
}

/** TopicCommandOptions.checkArgs (Kafka 3.x, plus --zookeeper as in 2.x). */
export function validateTopicsOptions(o: RawTopicsOptions): TopicCommandOptions {
  const given = Object.entries(o).filter(([k, v]) => v !== undefined && v !== false && !(k === 'config' && Array.isArray(v) && v.length === 0));
  if (given.length === 0) throw new TopicsUsageError('Create, delete, describe, or change a topic.');
  const actions = (['create', 'list', 'alter', 'describe', 'delete'] as const).filter((a) => o[a]);
  if (actions.length !== 1) throw new TopicsUsageError('Command must include exactly one action: --list, --describe, --create, --alter or --delete');
  const action = actions[0]!;

  if (o.bootstrapServer !== undefined && o.zookeeper !== undefined)
    throw new TopicsUsageError('Only one of --bootstrap-server or --zookeeper must be specified');
  if (o.bootstrapServer === undefined && o.zookeeper === undefined) throw new TopicsUsageError('One of --bootstrap-server or --zookeeper must be specified');
  if (o.zookeeper !== undefined && o.commandConfig !== undefined)
    throw new TopicsUsageError(`Option ${opt('command-config')} can't be used with option ${opt('zookeeper')}`);

  if (action === 'describe' && o.ifExists && o.topic === undefined) throw new TopicsUsageError('--topic or --topic-id is required to describe a topic');
  if (action !== 'list' && action !== 'describe' && o.topic === undefined) throw new TopicsUsageError(`Missing required argument ${opt('topic')}`);
  const configs = o.config ?? [];
  if (action === 'alter') {
    if (o.bootstrapServer !== undefined && configs.length > 0) {
      throw new TopicsUsageError(
        `Option combination "[bootstrap-server],[config]" can't be used with option "[alter]" (the kafka-configs CLI supports altering topic configs with a --bootstrap-server option)`,
      );
    }
    if (o.zookeeper !== undefined && configs.length > 0) {
      throw new TopicsUsageError(`Altering topic configs is not supported by samsa topics; option ${opt('config')} can't be used with option ${opt('alter')}`);
    }
    if (o.partitions === undefined) throw new TopicsUsageError(`Missing required argument ${opt('partitions')}`);
  }
  if (action === 'create' && o.zookeeper !== undefined && o.replicaAssignment === undefined) {
    if (o.partitions === undefined) throw new TopicsUsageError(`Missing required argument ${opt('partitions')}`);
    if (o.replicationFactor === undefined) throw new TopicsUsageError(`Missing required argument ${opt('replication-factor')}`);
  }

  // options only valid with some actions
  const allowed: Array<[keyof RawTopicsOptions, string, readonly TopicAction[]]> = [
    ['config', 'config', ['create', 'alter']],
    ['partitions', 'partitions', ['create', 'alter']],
    ['replicationFactor', 'replication-factor', ['create']],
    ['replicaAssignment', 'replica-assignment', ['create', 'alter']],
    ['ifExists', 'if-exists', ['alter', 'delete', 'describe']],
    ['ifNotExists', 'if-not-exists', ['create']],
    ['excludeInternal', 'exclude-internal', ['list', 'describe']],
    ['disableRackAware', 'disable-rack-aware', ['create', 'alter']],
    ['underReplicatedPartitions', 'under-replicated-partitions', ['describe']],
    ['unavailablePartitions', 'unavailable-partitions', ['describe']],
    ['underMinIsrPartitions', 'under-min-isr-partitions', ['describe']],
    ['atMinIsrPartitions', 'at-min-isr-partitions', ['describe']],
    ['topicsWithOverrides', 'topics-with-overrides', ['describe']],
  ];
  for (const [key, name, actionsOk] of allowed) {
    const v = o[key];
    const used = Array.isArray(v) ? v.length > 0 : v !== undefined && v !== false;
    if (used && !actionsOk.includes(action)) throw new TopicsUsageError(`Option ${opt(name)} can't be used with option ${opt(action)}`);
  }
  if (action === 'create' && o.replicaAssignment !== undefined) {
    if (o.partitions !== undefined) throw new TopicsUsageError(`Option ${opt('replica-assignment')} can't be used with option ${opt('partitions')}`);
    if (o.replicationFactor !== undefined)
      throw new TopicsUsageError(`Option ${opt('replica-assignment')} can't be used with option ${opt('replication-factor')}`);
  }
  const reports: Array<[keyof RawTopicsOptions, string]> = [
    ['underReplicatedPartitions', 'under-replicated-partitions'],
    ['unavailablePartitions', 'unavailable-partitions'],
    ['underMinIsrPartitions', 'under-min-isr-partitions'],
    ['atMinIsrPartitions', 'at-min-isr-partitions'],
    ['topicsWithOverrides', 'topics-with-overrides'],
  ];
  const usedReports = reports.filter(([k]) => o[k]);
  if (usedReports.length > 1) throw new TopicsUsageError(`Option ${opt(usedReports[0]![1])} can't be used with option ${opt(usedReports[1]![1])}`);

  return {
    action,
    bootstrapServer: o.bootstrapServer,
    zookeeper: o.zookeeper,
    commandConfig: o.commandConfig,
    topic: o.topic,
    partitions: parseIntArg(o.partitions, 'partitions'),
    replicationFactor: parseIntArg(o.replicationFactor, 'replication-factor'),
    replicaAssignment: o.replicaAssignment,
    configs,
    ifExists: !!o.ifExists,
    ifNotExists: !!o.ifNotExists,
    excludeInternal: !!o.excludeInternal,
    disableRackAware: !!o.disableRackAware,
    filters: {
      underReplicatedPartitions: !!o.underReplicatedPartitions,
      unavailablePartitions: !!o.unavailablePartitions,
      underMinIsrPartitions: !!o.underMinIsrPartitions,
      atMinIsrPartitions: !!o.atMinIsrPartitions,
      topicsWithOverrides: !!o.topicsWithOverrides,
    },
  };
}
