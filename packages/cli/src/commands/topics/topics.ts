import type { Command } from 'commander';
import { KafkaError } from '@samsa/client';
import { fileReader, openAdmin, readCommandConfig, type AdminToolDeps } from '../../shared/admin-client.js';
import { commandBuilder, errorMessage, printer, registerCommand, runCommand, type CommandBuilder, type CommandIo } from '../../shared/runner.js';
import { AdminTopicService } from './topics-admin.js';
import { TopicCommandError } from './topics-format.js';
import { TopicsUsageError, defineTopicsOptions, validateTopicsOptions, type RawTopicsOptions, type TopicCommandOptions } from './topics-options.js';
import { KafkaZkTopicStore, ZkTopicService, type ZkTopicStore } from './topics-zk.js';

/** Where the command writes: raw strings (newlines included). */
export type TopicsIo = CommandIo;

/** Injection points for tests and embedders. */
export interface TopicsDeps extends Omit<AdminToolDeps, 'readFile'> {
  /** Opens the store for --zookeeper. Default: a ZooKeeper connection. */
  openZk?: (connectString: string) => Promise<ZkTopicStore>;
  /** Randomness of --zookeeper replica assignment. */
  random?: (n: number) => number;
}

const DESCRIPTION = "Create, delete, describe, or change a topic (Kafka's kafka-topics.sh)";

const topicsCommand = (deps: TopicsDeps): CommandBuilder =>
  commandBuilder('topics', DESCRIPTION, defineTopicsOptions, (raw: RawTopicsOptions, io) => executeTopicsCommand(raw, io, deps));

/**
 * Runs `samsa topics <argv…>` (argv without the `topics` word) writing to `io`; resolves with the
 * exit code (0 success, 1 usage or command error).
 */
export function runTopicsCommand(argv: readonly string[], io: TopicsIo, deps: TopicsDeps = {}): Promise<number> {
  return runCommand(topicsCommand(deps), argv, io);
}

/** Adds `samsa topics` to the program (exit code through process.exitCode). */
export function registerTopicsCommand(program: Command, deps: TopicsDeps = {}): void {
  registerCommand(program, topicsCommand(deps));
}

/** Validates the options and runs the action; returns the exit code. */
export async function executeTopicsCommand(raw: RawTopicsOptions, io: TopicsIo, deps: TopicsDeps = {}): Promise<number> {
  let opts: TopicCommandOptions;
  try {
    opts = validateTopicsOptions(raw);
  } catch (err) {
    if (!(err instanceof TopicsUsageError)) throw err;
    io.err(`${err.message}\n`);
    io.err('Run `samsa topics --help` for the options.\n');
    return 1;
  }
  const println = printer(io);
  let service: AdminTopicService | ZkTopicService | undefined;
  try {
    if (opts.zookeeper !== undefined) {
      const store = await (deps.openZk ?? ((c: string) => KafkaZkTopicStore.connect(c)))(opts.zookeeper);
      service = new ZkTopicService(store, println, deps.random);
    } else {
      const admin = openAdmin({ bootstrapServers: opts.bootstrapServer!, clientId: 'samsa-topics' }, deps, readProperties(opts.commandConfig));
      service = new AdminTopicService(admin, println);
    }
    switch (opts.action) {
      case 'create':
        await service.createTopic(opts);
        break;
      case 'list':
        await service.listTopics(opts);
        break;
      case 'describe':
        await service.describeTopic(opts);
        break;
      case 'alter':
        await service.alterTopic(opts);
        break;
      case 'delete':
        await service.deleteTopic(opts);
        break;
    }
    return 0;
  } catch (err) {
    // TopicCommand: the message on stdout, the details in the (stderr) log
    println(`Error while executing topic command : ${errorMessage(err)}`);
    io.err(`ERROR ${describeError(err)}\n`);
    return 1;
  } finally {
    await service?.close().catch(() => undefined);
  }
}

/** `Name [ERROR_NAME]: message`, then the cause chain. */
function describeError(err: unknown): string {
  const parts: string[] = [];
  let e: unknown = err;
  for (let depth = 0; e !== undefined && depth < 8; depth++) {
    if (e instanceof Error) {
      const code = e instanceof KafkaError ? ` [${e.errorName}]` : '';
      parts.push(`${e.name}${code}: ${e.message}`);
      e = e.cause;
    } else {
      parts.push(String(e));
      break;
    }
  }
  return parts.join('\n  caused by: ');
}

/** --command-config's properties; a file that cannot be read is a command error. */
function readProperties(file: string | undefined): Record<string, string> {
  try {
    return readCommandConfig(file, fileReader({}));
  } catch (err) {
    throw new TopicCommandError(`Cannot read --command-config ${file}: ${(err as Error).message}`, { cause: err });
  }
}
