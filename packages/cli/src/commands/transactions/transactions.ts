import { Command, InvalidArgumentError } from 'commander';
import { BatchError, KafkaError, topicPartitionKey, type Admin, type TopicPartition, type TransactionDescription } from '@samsa/client';
import { fileReader, openAdmin, readCommandConfig, type AdminToolDeps } from '../../shared/admin-client.js';
import { errorMessage, printer, registerCommand, runCommand, type CommandBuilder, type CommandIo } from '../../shared/runner.js';
import {
  DESCRIBE_HEADERS,
  DESCRIBE_PRODUCERS_HEADERS,
  FIND_HANGING_HEADERS,
  LIST_HEADERS,
  candidateOpenTransactions,
  describeProducersRows,
  describeRow,
  filterHangingTransactions,
  findHangingRows,
  listRows,
  prettyPrintTable,
  type OpenTransaction,
} from './transactions-format.js';

/**
 * `samsa transactions`: Kafka's kafka-transactions.sh (TransactionsCommand, KIP-664) — analyse the
 * transactional state of producers and recover from hanging transactions:
 *   --bootstrap-server <host:port> [--command-config <file>] <command>
 *   list                                  the transactions every coordinator knows
 *   describe --transactional-id <id>      one transactional id's state at its coordinator
 *   describe-producers --topic --partition [--broker-id]   a partition's active producers
 *   find-hanging (--broker-id | --topic [--partition]) [--max-transaction-timeout <min>]
 *   abort --topic --partition (--start-offset | --producer-id --producer-epoch --coordinator-epoch)
 * Failures print Kafka's `<what failed>: <cause>. Enable debug logging for additional detail.` on
 * stderr with exit code 1.
 */

export type TransactionsIo = CommandIo;

export interface TransactionsDeps extends AdminToolDeps {
  /** The clock of transaction durations. Default: Date.now. */
  now?: () => number;
}

interface GlobalOptions {
  bootstrapServer?: string;
  commandConfig?: string;
}

/** find-hanging asks about partitions and producers this many at a time (Kafka's MAX_BATCH_SIZE). */
const MAX_BATCH_SIZE = 500;

/** What ends a command: printed on stderr, exit code 1. */
class CommandFailure extends Error {}

/** Kafka's printErrorAndExit(message, cause). */
function failure(message: string, cause: unknown): CommandFailure {
  const inner = cause instanceof BatchError && cause.errors.size === 1 ? [...cause.errors.values()][0]! : cause;
  return new CommandFailure(`${message}: ${errorMessage(inner)}. Enable debug logging for additional detail.`, { cause });
}

/** argparse4j's Integer / Long / Short arguments. */
function integer(kind: 'Integer' | 'Long' | 'Short'): (v: string) => number | bigint {
  const [min, max] = kind === 'Short' ? [-32768n, 32767n] : kind === 'Integer' ? [-2147483648n, 2147483647n] : [-(2n ** 63n), 2n ** 63n - 1n];
  return (v) => {
    const n = /^[+-]?\d+$/.test(v) ? BigInt(v) : null;
    if (n === null || n < min || n > max) throw new InvalidArgumentError(`could not convert '${v}' to ${kind} (For input string: "${v}")`);
    return kind === 'Long' ? n : Number(n);
  };
}
const int = integer('Integer');
const long = integer('Long');
const short = integer('Short');

type Action = (admin: Admin, opts: Record<string, unknown>, io: CommandIo, now: () => number) => Promise<void>;

async function list(admin: Admin, _opts: Record<string, unknown>, io: CommandIo): Promise<void> {
  const listings = await admin.listTransactions().catch((err: unknown) => {
    throw failure('Failed to list transactions', err);
  });
  for (const l of prettyPrintTable(LIST_HEADERS, listRows(listings))) printer(io)(l);
}

async function describe(admin: Admin, opts: Record<string, unknown>, io: CommandIo, now: () => number): Promise<void> {
  const id = opts['transactionalId'] as string;
  const [d] = await admin.describeTransactions([id]).catch((err: unknown) => {
    throw failure(`Failed to describe transaction state of transactional-id \`${id}\``, err);
  });
  for (const l of prettyPrintTable(DESCRIBE_HEADERS, [describeRow(d!, now())])) printer(io)(l);
}

async function describeProducers(admin: Admin, opts: Record<string, unknown>, io: CommandIo): Promise<void> {
  const tp = { topic: opts['topic'] as string, partition: opts['partition'] as number };
  const brokerId = opts['brokerId'] as number | undefined;
  const [r] = await admin.describeProducers([tp], brokerId === undefined ? {} : { brokerId }).catch((err: unknown) => {
    throw failure(`Failed to describe producers for partition ${topicPartitionKey(tp)} on ${brokerId === undefined ? 'leader' : `broker ${brokerId}`}`, err);
  });
  for (const l of prettyPrintTable(DESCRIBE_PRODUCERS_HEADERS, describeProducersRows(r!.activeProducers))) printer(io)(l);
}

async function abort(admin: Admin, opts: Record<string, unknown>): Promise<void> {
  const tp = { topic: opts['topic'] as string, partition: opts['partition'] as number };
  const startOffset = opts['startOffset'] as bigint | undefined;
  const producerId = opts['producerId'] as bigint | undefined;
  if (startOffset === undefined && producerId === undefined) {
    throw new CommandFailure(
      'The transaction to abort must be identified either with --start-offset (for brokers on 3.0 or above) or with --producer-id, --producer-epoch, and --coordinator-epoch (for older brokers)',
    );
  }
  let spec;
  if (startOffset === undefined) {
    const producerEpoch = opts['producerEpoch'] as number | undefined;
    if (producerEpoch === undefined) throw new CommandFailure('Missing required argument --producer-epoch');
    const coordinatorEpoch = opts['coordinatorEpoch'] as number | undefined;
    if (coordinatorEpoch === undefined) throw new CommandFailure('Missing required argument --coordinator-epoch');
    // a transaction that hung before its producer's first marker has coordinator epoch -1: 0 is
    // at or below any epoch the partition may have recorded
    spec = { ...tp, producerId: producerId!, producerEpoch, coordinatorEpoch: Math.max(coordinatorEpoch, 0) };
  } else {
    const [state] = await admin.describeProducers([tp]).catch((err: unknown) => {
      throw failure(`Failed to validate producer state for partition ${topicPartitionKey(tp)}`, err);
    });
    const p = state!.activeProducers.find((x) => x.currentTransactionStartOffset === startOffset);
    if (!p) throw new CommandFailure(`Could not find any open transactions starting at offset ${startOffset} on partition ${topicPartitionKey(tp)}`);
    spec = { ...tp, producerId: p.producerId, producerEpoch: p.producerEpoch, coordinatorEpoch: p.coordinatorEpoch ?? 0 };
  }
  await admin.abortTransaction(spec).catch((err: unknown) => {
    throw failure(
      `Failed to abort transaction AbortTransactionSpec(topicPartition=${topicPartitionKey(tp)}, producerId=${spec.producerId}, producerEpoch=${spec.producerEpoch}, coordinatorEpoch=${spec.coordinatorEpoch})`,
      err,
    );
  });
}

function batches<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += MAX_BATCH_SIZE) out.push(items.slice(i, i + MAX_BATCH_SIZE));
  return out;
}

/** The partitions find-hanging searches: the one given, or those of the topic(s) with a replica on the broker. */
async function partitionsToSearch(
  admin: Admin,
  topic: string | undefined,
  partition: number | undefined,
  brokerId: number | undefined,
): Promise<TopicPartition[]> {
  if (topic !== undefined && partition !== undefined) return [{ topic, partition }];
  const topics =
    topic !== undefined
      ? [topic]
      : await admin.listTopics({ listInternal: true }).catch((err: unknown) => {
          throw failure('Failed to list topics', err);
        });
  const out: TopicPartition[] = [];
  for (const batch of batches(topics)) {
    const described = await admin.describeTopics(batch).catch((err: unknown) => {
      throw failure(`Failed to describe ${batch.length} topics`, err);
    });
    for (const t of described)
      for (const p of t.partitions) if (brokerId === undefined || p.replicas.includes(brokerId)) out.push({ topic: t.name, partition: p.partition });
  }
  return out;
}

async function findHanging(admin: Admin, opts: Record<string, unknown>, io: CommandIo, now: () => number): Promise<void> {
  const brokerId = opts['brokerId'] as number | undefined;
  const topic = opts['topic'] as string | undefined;
  const partition = opts['partition'] as number | undefined;
  if (topic === undefined && brokerId === undefined) {
    throw new CommandFailure('The `find-hanging` command requires either --topic or --broker-id to limit the scope of the search');
  }
  if (partition !== undefined && topic === undefined) throw new CommandFailure('The --partition argument requires --topic to be provided');
  const maxTransactionTimeoutMs = (opts['maxTransactionTimeout'] as number) * 60_000;
  const partitions = await partitionsToSearch(admin, topic, partition, brokerId);
  const candidates: OpenTransaction[] = [];
  for (const batch of batches(partitions)) {
    const states = await admin.describeProducers(batch, brokerId === undefined ? {} : { brokerId }).catch((err: unknown) => {
      throw failure(
        `Failed to describe producers for ${batch.length} partitions on broker ${brokerId === undefined ? 'Optional.empty' : `Optional[${brokerId}]`}`,
        err,
      );
    });
    candidates.push(...candidateOpenTransactions(states, maxTransactionTimeoutMs, now()));
  }
  let hanging: OpenTransaction[] = [];
  if (candidates.length > 0) {
    const producerIds = [...new Set(candidates.map((c) => c.producer.producerId))];
    const listings = await admin.listTransactions({ producerIds }).catch((err: unknown) => {
      throw failure(`Failed to list transactions for ${producerIds.length} producers`, err);
    });
    const transactionalIds = new Map(listings.filter((l) => producerIds.includes(l.producerId)).map((l) => [l.producerId, l.transactionalId]));
    const ids = [...new Set(transactionalIds.values())];
    const descriptions = new Map<string, TransactionDescription | null>();
    await Promise.all(
      ids.map(async (id) => {
        try {
          descriptions.set(id, (await admin.describeTransactions([id]))[0]!);
        } catch (err) {
          const inner = err instanceof BatchError ? err.errors.get(id) : err;
          if (inner instanceof KafkaError && inner.errorName === 'TRANSACTIONAL_ID_NOT_FOUND') descriptions.set(id, null);
          else throw failure(`Failed to describe ${ids.length} transactions`, err);
        }
      }),
    );
    hanging = filterHangingTransactions(candidates, transactionalIds, descriptions);
  }
  for (const l of prettyPrintTable(FIND_HANGING_HEADERS, findHangingRows(hanging, now()))) printer(io)(l);
}

function subcommand(
  name: string,
  description: string,
  defineOptions: (cmd: Command) => unknown,
  action: Action,
  io: CommandIo,
  setExitCode: (code: number) => void,
  deps: TransactionsDeps,
): Command {
  const cmd = new Command(name).description(description);
  defineOptions(cmd);
  cmd.action(async () => setExitCode(await execute(cmd.optsWithGlobals(), action, io, deps)));
  return cmd;
}

/** Runs one subcommand's action with the tool's Admin; resolves with the exit code. */
async function execute(opts: Record<string, unknown> & GlobalOptions, action: Action, io: CommandIo, deps: TransactionsDeps): Promise<number> {
  if (opts.bootstrapServer === undefined) {
    io.err('kafka-transactions.sh: error: argument --bootstrap-server is required\n');
    return 1;
  }
  let props: Record<string, string>;
  try {
    props = readCommandConfig(opts.commandConfig, fileReader(deps));
  } catch (err) {
    io.err(`Failed to load admin client properties: ${errorMessage(err)}. Enable debug logging for additional detail.\n`);
    return 1;
  }
  let admin: Admin;
  try {
    admin = openAdmin(
      { bootstrapServers: opts.bootstrapServer, clientId: 'samsa-transactions', defaultApiTimeoutMs: 60_000, requestTimeoutMs: 30_000 },
      deps,
      props,
    );
  } catch (err) {
    // Admin.create's ConfigException
    io.err(`Unexpected error: ${errorMessage(err)}
`);
    return 1;
  }
  try {
    await action(admin, opts, io, deps.now ?? Date.now);
    return 0;
  } catch (err) {
    io.err(`${err instanceof CommandFailure ? err.message : `Unexpected error: ${errorMessage(err)}`}\n`);
    return 1;
  } finally {
    await admin.close().catch(() => undefined);
  }
}

const transactionsCommand =
  (deps: TransactionsDeps): CommandBuilder =>
  (io, setExitCode) => {
    const sub = (name: string, description: string, defineOptions: (cmd: Command) => unknown, action: Action) =>
      subcommand(name, description, defineOptions, action, io, setExitCode, deps);
    const topicPartition = (cmd: Command) =>
      cmd.requiredOption('--topic <topic>', 'topic name').requiredOption('--partition <partition>', 'partition number', int);
    return new Command('transactions')
      .description(
        'This tool is used to analyze the transactional state of producers in the cluster. It can be used to detect and recover from hanging transactions (kafka-transactions.sh).',
      )
      .option('--command-config <FILE>', 'property file containing configs to be passed to admin client')
      .option(
        '--bootstrap-server <host:port>',
        'hostname and port for the broker to connect to, in the form `host:port`  (multiple comma-separated entries can be given)',
      )
      .addCommand(sub('list', 'list transactions', () => undefined, list))
      .addCommand(
        sub('describe', 'describe the state of an active transactional-id', (c) => c.requiredOption('--transactional-id <id>', 'transactional id'), describe),
      )
      .addCommand(
        sub(
          'describe-producers',
          'describe the states of active producers for a topic partition',
          (c) => topicPartition(c.option('--broker-id <id>', 'optional broker id to describe the producer state on a specific replica', int)),
          describeProducers,
        ),
      )
      .addCommand(
        sub(
          'abort',
          'abort a hanging transaction (requires administrative privileges)',
          (c) =>
            topicPartition(c)
              .option('--start-offset <offset>', 'start offset of the transaction to abort (brokers on versions 3.0 and above)', long)
              .option('--producer-id <id>', 'producer id (brokers on versions older than 3.0)', long)
              .option('--producer-epoch <epoch>', 'producer epoch (brokers on versions older than 3.0)', short)
              .option('--coordinator-epoch <epoch>', 'coordinator epoch (brokers on versions older than 3.0)', int),
          abort,
        ),
      )
      .addCommand(
        sub(
          'find-hanging',
          'find hanging transactions',
          (c) =>
            c
              .option('--broker-id <id>', 'broker id to search for hanging transactions', int)
              .option(
                '--max-transaction-timeout <minutes>',
                'maximum transaction timeout in minutes to limit the scope of the search (15 minutes by default)',
                int,
                15,
              )
              .option('--topic <topic>', 'topic name to limit search to (required if --partition is specified)')
              .option('--partition <partition>', 'partition number', int),
          findHanging,
        ),
      );
  };

/** Runs `samsa transactions <argv…>` writing to `io`; resolves with the exit code. */
export function runTransactionsCommand(argv: readonly string[], io: TransactionsIo, deps: TransactionsDeps = {}): Promise<number> {
  return runCommand(transactionsCommand(deps), argv, io);
}

export function registerTransactionsCommand(program: Command, deps: TransactionsDeps = {}): void {
  registerCommand(program, transactionsCommand(deps));
}
