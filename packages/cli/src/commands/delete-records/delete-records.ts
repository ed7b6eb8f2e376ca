import type { Command } from 'commander';
import { topicPartitionKey, type DeleteRecordsRequestEntry, type DeleteRecordsResult } from '@samsa/client';
import { fileReader, openAdmin, readCommandConfig, type AdminToolDeps } from '../../shared/admin-client.js';
import { commandBuilder, errorMessage, printer, registerCommand, runCommand, type CommandBuilder, type CommandIo } from '../../shared/runner.js';
import { javaToString } from '../../shared/java-errors.js';

/**
 * `samsa delete-records`: Kafka's kafka-delete-records.sh (DeleteRecordsCommand). Reads
 * `{"partitions":[{"topic":"t","partition":0,"offset":5}],"version":1}` (offset -1: up to the high
 * watermark) and prints one line per partition: its new low watermark or the error.
 */

export type DeleteRecordsIo = CommandIo;

/** readFile reads --offset-json-file and --command-config. */
export type DeleteRecordsDeps = AdminToolDeps;

export interface RawDeleteRecordsOptions {
  bootstrapServer?: string;
  offsetJsonFile?: string;
  commandConfig?: string;
}

/** Parses the offset JSON file (Kafka's DeleteRecordsCommand.parseOffsetJsonStringWithoutDedup, then the duplicate check). */
export function parseOffsetJson(text: string): DeleteRecordsRequestEntry[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Error('The input string is not a valid JSON', { cause: err });
  }
  const partitions = (json as { partitions?: unknown } | null)?.partitions;
  if (!Array.isArray(partitions)) throw new Error('Missing partitions field');
  const out: DeleteRecordsRequestEntry[] = partitions.map((p: unknown) => {
    const e = p as { topic?: unknown; partition?: unknown; offset?: unknown };
    if (typeof e.topic !== 'string' || !Number.isInteger(e.partition) || (typeof e.offset !== 'number' && typeof e.offset !== 'string')) {
      throw new Error(`Invalid partition entry ${JSON.stringify(p)}: expected topic, partition and offset`);
    }
    return { topic: e.topic, partition: e.partition as number, offset: BigInt(e.offset) };
  });
  const seen = new Set<string>();
  const dups = new Set<string>();
  for (const e of out) {
    const k = topicPartitionKey(e);
    if (seen.has(k)) dups.add(k);
    seen.add(k);
  }
  if (dups.size > 0) throw new Error(`Offset json file contains duplicate topic partitions: ${[...dups].join(',')}`);
  return out;
}

/** Kafka's report lines. */
export function formatDeleteRecordsResults(results: readonly DeleteRecordsResult[]): string[] {
  return results.map((r) =>
    r.error === undefined
      ? `partition: ${topicPartitionKey(r)}\tlow_watermark: ${r.lowWatermark}`
      : `partition: ${topicPartitionKey(r)}\terror: ${javaToString(r.error)}`,
  );
}

export async function executeDeleteRecordsCommand(raw: RawDeleteRecordsOptions, io: DeleteRecordsIo, deps: DeleteRecordsDeps = {}): Promise<number> {
  const println = printer(io);
  const fail = (message: string) => {
    io.err(`${message}\n`);
    return 1;
  };
  const missing = [raw.bootstrapServer === undefined ? 'bootstrap-server' : null, raw.offsetJsonFile === undefined ? 'offset-json-file' : null].filter(
    (x) => x !== null,
  );
  if (missing.length > 0) return fail(`Missing required option(s): ${missing.join(', ')}`);
  const read = fileReader(deps);
  let entries: DeleteRecordsRequestEntry[];
  let admin: ReturnType<typeof openAdmin>;
  try {
    entries = parseOffsetJson(read(raw.offsetJsonFile!));
    admin = openAdmin(
      { bootstrapServers: raw.bootstrapServer!, clientId: 'samsa-delete-records', defaultApiTimeoutMs: 60_000, requestTimeoutMs: 30_000 },
      deps,
      readCommandConfig(raw.commandConfig, read),
    );
  } catch (err) {
    return fail(errorMessage(err));
  }
  try {
    println('Executing records delete operation');
    const results = await admin.deleteRecords(entries);
    println('Records delete operation completed:');
    for (const l of formatDeleteRecordsResults(results)) println(l);
    return 0;
  } catch (err) {
    return fail(errorMessage(err));
  } finally {
    await admin.close().catch(() => undefined);
  }
}

function defineDeleteRecordsOptions(cmd: Command): Command {
  return cmd
    .option('--bootstrap-server <host:port>', 'REQUIRED: The server to connect to.')
    .option(
      '--offset-json-file <file>',
      'REQUIRED: The JSON file with offset per partition. The format to use is:\n{"partitions":\n  [{"topic": "foo", "partition": 1, "offset": 1}],\n "version":1\n}',
    )
    .option('--command-config <file>', 'A property file containing configs to be passed to Admin Client.');
}

const deleteRecordsCommand = (deps: DeleteRecordsDeps): CommandBuilder =>
  commandBuilder(
    'delete-records',
    'Delete records of the given partitions down to the specified offset (kafka-delete-records.sh).',
    defineDeleteRecordsOptions,
    (raw: RawDeleteRecordsOptions, io) => executeDeleteRecordsCommand(raw, io, deps),
  );

/** Runs `samsa delete-records <argv…>` writing to `io`; resolves with the exit code. */
export function runDeleteRecordsCommand(argv: readonly string[], io: DeleteRecordsIo, deps: DeleteRecordsDeps = {}): Promise<number> {
  return runCommand(deleteRecordsCommand(deps), argv, io);
}

export function registerDeleteRecordsCommand(program: Command, deps: DeleteRecordsDeps = {}): void {
  registerCommand(program, deleteRecordsCommand(deps));
}
