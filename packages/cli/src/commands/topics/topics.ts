import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { Admin, KafkaError, type AdminOptions } from '@samsa/client';
import { AdminTopicService } from './topics-admin.js';
import { TopicCommandError } from './topics-format.js';
import { TopicsUsageError, defineTopicsOptions, validateTopicsOptions, type RawTopicsOptions, type TopicCommandOptions } from './topics-options.js';
import { KafkaZkTopicStore, ZkTopicService, type ZkTopicStore } from './topics-zk.js';

/** Where the command writes: raw strings (newlines included). */
export interface TopicsIo {
  out: (s: string) => void;
  err: (s: string) => void;
}

/** Injection points for tests and embedders. */
export interface TopicsDeps {
  /** Builds the Admin for --bootstrap-server. Default: `new Admin(opts)`. */
  createAdmin?: (opts: AdminOptions) => Admin;
  /** Admin options applied under --command-config (e.g. shorter timeouts in tests). */
  adminOptions?: Partial<AdminOptions>;
  /** Opens the store for --zookeeper. Default: a ZooKeeper connection. */
  openZk?: (connectString: string) => Promise<ZkTopicStore>;
  /** Randomness of --zookeeper replica assignment. */
  random?: (n: number) => number;
}

const DESCRIPTION = "Create, delete, describe, or change a topic (Kafka's kafka-topics.sh)";

function buildTopicsCommand(io: TopicsIo, deps: TopicsDeps, setExitCode: (code: number) => void): Command {
  const cmd = new Command('topics').description(DESCRIPTION);
  defineTopicsOptions(cmd);
  cmd.action(async (raw: RawTopicsOptions) => setExitCode(await executeTopicsCommand(raw, io, deps)));
  return cmd;
}

/**
 * Runs `samsa topics <argv…>` (argv without the `topics` word) writing to `io`; resolves with the
 * exit code (0 success, 1 usage or command error).
 */
export async function runTopicsCommand(argv: readonly string[], io: TopicsIo, deps: TopicsDeps = {}): Promise<number> {
  let code = 0;
  const cmd = buildTopicsCommand(io, deps, (c) => (code = c));
  cmd.exitOverride().configureOutput({ writeOut: io.out, writeErr: io.err });
  try {
    await cmd.parseAsync([...argv], { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode;
    throw err;
  }
  return code;
}

/** Adds `samsa topics` to the program (exit code through process.exitCode). */
export function registerTopicsCommand(program: Command, deps: TopicsDeps = {}): void {
  const io: TopicsIo = { out: (s) => void process.stdout.write(s), err: (s) => void process.stderr.write(s) };
  program.addCommand(buildTopicsCommand(io, deps, (code) => (process.exitCode = code)));
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
  const println = (line: string) => io.out(`${line}\n`);
  let service: AdminTopicService | ZkTopicService | undefined;
  try {
    if (opts.zookeeper !== undefined) {
      const store = await (deps.openZk ?? ((c: string) => KafkaZkTopicStore.connect(c)))(opts.zookeeper);
      service = new ZkTopicService(store, println, deps.random);
    } else {
      const adminOpts: AdminOptions = {
        bootstrapServers: opts.bootstrapServer!,
        clientId: 'samsa-topics',
        ...deps.adminOptions,
        ...(opts.commandConfig !== undefined ? adminOptionsFromProperties(readProperties(opts.commandConfig)) : {}),
      };
      service = new AdminTopicService((deps.createAdmin ?? ((o: AdminOptions) => new Admin(o)))(adminOpts), println);
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
    println(`Error while executing topic command : ${err instanceof Error ? err.message : String(err)}`);
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

/** A Java .properties file (key=value or key: value, # and ! comments); enough for --command-config. */
export function parseProperties(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const rawLine of text.split(/\r?\n/)) {
    const line = rawLine.trim();
    if (line === '' || line.startsWith('#') || line.startsWith('!')) continue;
    const m = /^([^=:\s]+)\s*[=:\s]\s*(.*)$/.exec(line);
    if (m) out[m[1]!] = m[2]!;
    else out[line] = '';
  }
  return out;
}

function readProperties(file: string): Record<string, string> {
  try {
    return parseProperties(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new TopicCommandError(`Cannot read --command-config ${file}: ${(err as Error).message}`, { cause: err });
  }
}

/** The Admin client settings of a --command-config file that this client has. */
export function adminOptionsFromProperties(p: Record<string, string>): Partial<AdminOptions> {
  const num = (key: string): number | undefined => {
    const v = p[key];
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new TopicCommandError(`Invalid value ${v} for configuration ${key}: Not a number of type INT`);
    return n;
  };
  const out: Partial<AdminOptions> = {};
  if (p['client.id'] !== undefined) out.clientId = p['client.id'];
  const map: Array<[string, keyof AdminOptions]> = [
    ['request.timeout.ms', 'requestTimeoutMs'],
    ['default.api.timeout.ms', 'defaultApiTimeoutMs'],
    ['retry.backoff.ms', 'retryBackoffMs'],
    ['retry.backoff.max.ms', 'retryBackoffMaxMs'],
    ['socket.connection.setup.timeout.ms', 'connectTimeoutMs'],
    ['metadata.max.age.ms', 'metadataMaxAgeMs'],
  ];
  for (const [key, field] of map) {
    const v = num(key);
    if (v !== undefined) (out as Record<string, unknown>)[field] = v;
  }
  return out;
}
