import type { Command } from 'commander';
import { ElectionType, KafkaError, topicPartitionKey, type Admin, type ElectionResult, type TopicPartition } from '@samsa/client';
import { fileReader, openAdmin, readCommandConfig, type AdminToolDeps } from '../../shared/admin-client.js';
import {
  commandBuilder,
  errorMessage,
  noOptionsGiven,
  printUsage,
  printer,
  registerCommand,
  runCommand,
  type CommandBuilder,
  type CommandIo,
} from '../../shared/runner.js';
import { javaExceptionName, javaToString } from '../../shared/java-errors.js';

/**
 * `samsa leader-election`: Kafka's kafka-leader-election.sh (LeaderElectionCommand). Same flags,
 * same stdout lines, exit code 0 when every partition got (or already had) a valid leader, 1 on a
 * usage error or when any election failed (the reason on stderr).
 */

export type LeaderElectionIo = CommandIo;

/** readFile reads --path-to-json-file and --command-config. */
export type LeaderElectionDeps = AdminToolDeps;

/** The raw values commander collects. */
export interface RawLeaderElectionOptions {
  bootstrapServer?: string;
  electionType?: string;
  allTopicPartitions?: boolean;
  topic?: string;
  partition?: string;
  pathToJsonFile?: string;
  commandConfig?: string;
  'admin.config'?: string;
}

export type ElectionTypeName = 'PREFERRED' | 'UNCLEAN';

export interface LeaderElectionOptions {
  bootstrapServer: string;
  electionType: ElectionTypeName;
  /** --topic/--partition as one partition; --path-to-json-file is read when the command runs. */
  topic?: string | undefined;
  partition?: number | undefined;
  pathToJsonFile?: string | undefined;
  allTopicPartitions: boolean;
  /** --command-config, or the deprecated --admin.config. */
  commandConfig?: string | undefined;
  deprecatedAdminConfig: boolean;
}

/** A command-line mistake (Kafka: AdminCommandFailedException / joptsimple's OptionException): message on stderr, exit 1. */
export class LeaderElectionUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LeaderElectionUsageError';
  }
}

/** Kafka's AdminOperationException / AdminCommandFailedException: message on stderr, exit 1. */
export class LeaderElectionCommandError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'LeaderElectionCommandError';
  }
}

const DESCRIPTION =
  'This tool attempts to elect a new leader for a set of topic partitions. The type of elections supported are preferred replicas and unclean replicas.';

export function defineLeaderElectionOptions(cmd: Command): Command {
  return cmd
    .option(
      '--bootstrap-server <host:port>',
      'A hostname and port for the broker to connect to, in the form host:port. Multiple comma separated URLs can be given. REQUIRED.',
    )
    .option('--command-config <file>', 'Config properties file to pass to the admin client.')
    .option('--admin.config <file>', '(DEPRECATED) Configuration properties files to pass to the admin client. Use --command-config instead.')
    .option(
      '--path-to-json-file <file>',
      'The JSON file with the list of partitions for which leader elections should be performed, e.g. {"partitions": [{"topic": "foo", "partition": 1}, {"topic": "foobar", "partition": 2}]}. Not allowed if --all-topic-partitions or --topic flags are specified.',
    )
    .option('--topic <topic>', 'Name of topic for which to perform an election. Not allowed if --path-to-json-file or --all-topic-partitions is specified.')
    .option('--partition <id>', 'Partition id for which to perform an election. REQUIRED if --topic is specified.')
    .option(
      '--all-topic-partitions',
      'Perform election on all of the eligible topic partitions based on the type of election (see the --election-type flag). Not allowed if --topic or --path-to-json-file is specified.',
    )
    .option(
      '--election-type <type>',
      'Type of election to attempt. Possible values are "preferred" for preferred leader election or "unclean" for unclean leader election. If preferred election is selected, the election is only performed if the current leader is not the preferred leader for the topic partition. If unclean election is selected, the election is only performed if there is no leader for the topic partition. REQUIRED.',
    );
}

/** LeaderElectionCommandOptions: argument conversion (joptsimple) first, then validate(). */
export function validateLeaderElectionOptions(o: RawLeaderElectionOptions): LeaderElectionOptions {
  // joptsimple converts values while parsing: ElectionType by case-insensitive name, partition as Integer
  let electionType: ElectionTypeName | undefined;
  if (o.electionType !== undefined) {
    const v = o.electionType.toUpperCase();
    if (v !== 'PREFERRED' && v !== 'UNCLEAN') throw new LeaderElectionUsageError(`Cannot parse argument '${o.electionType}' of option election-type`);
    electionType = v;
  }
  let partition: number | undefined;
  if (o.partition !== undefined) {
    if (!/^[-+]?\d+$/.test(o.partition) || Math.abs(Number(o.partition)) > 2147483647)
      throw new LeaderElectionUsageError(`Cannot parse argument '${o.partition}' of option partition`);
    partition = Number(o.partition);
  }
  const missing = [o.bootstrapServer === undefined ? 'bootstrap-server' : null, electionType === undefined ? 'election-type' : null].filter((x) => x !== null);
  if (missing.length > 0) throw new LeaderElectionUsageError(`Missing required option(s): ${missing.join(', ')}`);
  if (o['admin.config'] !== undefined && o.commandConfig !== undefined)
    throw new LeaderElectionUsageError('Option "[admin.config]" can\'t be used with option "[command-config]"');
  const exclusive = [o.topic !== undefined, !!o.allTopicPartitions, o.pathToJsonFile !== undefined].filter(Boolean).length;
  if (exclusive !== 1)
    throw new LeaderElectionUsageError('One and only one of the following options is required: topic, all-topic-partitions, path-to-json-file');
  if (o.topic !== undefined && partition === undefined) throw new LeaderElectionUsageError('Missing required option(s): partition');
  if (o.topic === undefined && partition !== undefined) throw new LeaderElectionUsageError('Option partition is only allowed if topic is used');
  return {
    bootstrapServer: o.bootstrapServer!,
    electionType: electionType!,
    topic: o.topic,
    partition,
    pathToJsonFile: o.pathToJsonFile,
    allTopicPartitions: !!o.allTopicPartitions,
    commandConfig: o.commandConfig ?? o['admin.config'],
    deprecatedAdminConfig: o['admin.config'] !== undefined,
  };
}

/** Kafka's replica election JSON: {"partitions": [{"topic": "t", "partition": 0}, …]}; duplicates are an error. */
export function parseReplicaElectionData(text: string): TopicPartition[] {
  let js: unknown;
  try {
    js = JSON.parse(text);
  } catch {
    // Kafka's Json.parseFull answers empty for unparseable input
    throw new LeaderElectionCommandError('Replica election data is empty');
  }
  if (typeof js !== 'object' || js === null || Array.isArray(js))
    throw new LeaderElectionCommandError(`Replica election data: expected a JSON object, got ${JSON.stringify(js)}`);
  const list = (js as Record<string, unknown>)['partitions'];
  if (list === undefined) throw new LeaderElectionCommandError('Replica election data is missing "partitions" field');
  if (!Array.isArray(list)) throw new LeaderElectionCommandError(`Replica election data: "partitions" should be an array, got ${JSON.stringify(list)}`);
  const out: TopicPartition[] = [];
  for (const [i, raw] of list.entries()) {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
      throw new LeaderElectionCommandError(`Replica election data: partitions[${i}] should be an object, got ${JSON.stringify(raw)}`);
    const e = raw as Record<string, unknown>;
    if (typeof e['topic'] !== 'string')
      throw new LeaderElectionCommandError(`Replica election data: partitions[${i}].topic should be a string, got ${JSON.stringify(e['topic'])}`);
    const p = e['partition'];
    if (typeof p !== 'number' || !Number.isInteger(p) || Math.abs(p) > 2147483647) {
      throw new LeaderElectionCommandError(`Replica election data: partitions[${i}].partition should be an int, got ${JSON.stringify(p)}`);
    }
    out.push({ topic: e['topic'], partition: p });
  }
  const seen = new Set<string>();
  const dups = new Set<string>();
  for (const tp of out) {
    const k = topicPartitionKey(tp);
    if (seen.has(k)) dups.add(k);
    seen.add(k);
  }
  if (dups.size > 0) throw new LeaderElectionCommandError(`Replica election data contains duplicate partitions: [${[...dups].join(', ')}]`);
  return out;
}

export { javaExceptionName };

/**
 * LeaderElectionCommand.electLeaders's report: succeeded partitions, then those that needed no
 * election (ELECTION_NOT_NEEDED), then one line per failure. `failed` counts the failures.
 */
export function formatElectionResults(type: ElectionTypeName, results: readonly ElectionResult[]): { lines: string[]; failed: number } {
  const ok = results.filter((r) => r.error === null);
  const noop = results.filter((r) => r.error?.errorName === 'ELECTION_NOT_NEEDED');
  const failed = results.filter((r) => r.error !== null && r.error.errorName !== 'ELECTION_NOT_NEEDED');
  const lines: string[] = [];
  if (ok.length > 0) lines.push(`Successfully completed leader election (${type}) for partitions ${ok.map((r) => topicPartitionKey(r)).join(', ')}`);
  if (noop.length > 0) lines.push(`Valid replica already elected for partitions ${noop.map((r) => topicPartitionKey(r)).join(', ')}`);
  for (const r of failed) lines.push(`Error completing leader election (${type}) for partition: ${topicPartitionKey(r)}: ${javaToString(r.error!)}`);
  return { lines, failed: failed.length };
}

const leaderElectionCommand = (deps: LeaderElectionDeps): CommandBuilder =>
  commandBuilder(
    'leader-election',
    "Elect preferred or unclean partition leaders (Kafka's kafka-leader-election.sh)",
    defineLeaderElectionOptions,
    (raw: RawLeaderElectionOptions, io, cmd) => executeLeaderElectionCommand(raw, io, deps, cmd),
  );

/** Runs `samsa leader-election <argv…>` writing to `io`; resolves with the exit code. */
export function runLeaderElectionCommand(argv: readonly string[], io: LeaderElectionIo, deps: LeaderElectionDeps = {}): Promise<number> {
  return runCommand(leaderElectionCommand(deps), argv, io);
}

/** Adds `samsa leader-election` to the program (exit code through process.exitCode). */
export function registerLeaderElectionCommand(program: Command, deps: LeaderElectionDeps = {}): void {
  registerCommand(program, leaderElectionCommand(deps));
}

/** Validates the options, runs the elections and prints Kafka's report; returns the exit code. */
export async function executeLeaderElectionCommand(
  raw: RawLeaderElectionOptions,
  io: LeaderElectionIo,
  deps: LeaderElectionDeps = {},
  cmd?: Command,
): Promise<number> {
  const println = printer(io);
  const fail = (message: string) => {
    io.err(`${message}\n`);
    return 1;
  };
  // CommandLineUtils.maybePrintHelpOrVersion: no arguments → the description and the usage, exit 1
  if (noOptionsGiven(raw)) return printUsage(io, DESCRIPTION, cmd);
  let opts: LeaderElectionOptions;
  try {
    opts = validateLeaderElectionOptions(raw);
  } catch (err) {
    if (err instanceof LeaderElectionUsageError) return fail(err.message);
    throw err;
  }
  const read = fileReader(deps);
  let partitions: TopicPartition[] | null = null;
  let props: Record<string, string> = {};
  try {
    if (opts.pathToJsonFile !== undefined) partitions = parseReplicaElectionData(read(opts.pathToJsonFile));
    else if (opts.topic !== undefined) partitions = [{ topic: opts.topic, partition: opts.partition! }];
    if (opts.deprecatedAdminConfig) println('Option --admin.config has been deprecated and will be removed in a future version. Use --command-config instead.');
    props = readCommandConfig(opts.commandConfig, read);
  } catch (err) {
    return fail(errorMessage(err));
  }

  let admin: Admin | undefined;
  try {
    // the tool's defaults: 30 s for the whole call, half of it per request
    admin = openAdmin(
      { bootstrapServers: opts.bootstrapServer, clientId: 'samsa-leader-election', defaultApiTimeoutMs: 30_000, requestTimeoutMs: 15_000 },
      deps,
      props,
    );
    let results: ElectionResult[];
    try {
      results = await admin.electLeaders(partitions, opts.electionType === 'PREFERRED' ? ElectionType.PREFERRED : ElectionType.UNCLEAN);
    } catch (err) {
      if (err instanceof KafkaError && err.errorName === 'REQUEST_TIMED_OUT') {
        println('Timeout waiting for election results');
        return fail(`Timeout waiting for election results: ${err.message}`);
      }
      if (err instanceof KafkaError && err.errorName === 'CLUSTER_AUTHORIZATION_FAILED') {
        println('Not authorized to perform leader election');
        return fail('Not authorized to perform leader election');
      }
      if (err instanceof KafkaError) return fail(`java.util.concurrent.ExecutionException: ${javaToString(err)}`);
      throw err;
    }
    const { lines, failed } = formatElectionResults(opts.electionType, results);
    for (const l of lines) println(l);
    if (failed > 0) return fail(`${failed} replica(s) could not be elected`);
    return 0;
  } catch (err) {
    return fail(errorMessage(err));
  } finally {
    await admin?.close().catch(() => undefined);
  }
}
