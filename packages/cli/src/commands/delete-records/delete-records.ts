import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { Admin, type AdminOptions, type DeleteRecordsRequestEntry, type DeleteRecordsResult } from '@samsa/client';
import { javaToString } from '../../shared/java-errors.js';
import { adminOptionsFromProperties, parseProperties } from '../topics/topics.js';

/**
 * `samsa delete-records`: Kafka's kafka-delete-records.sh (DeleteRecordsCommand). Reads
 * `{"partitions":[{"topic":"t","partition":0,"offset":5}],"version":1}` (offset -1: up to the high
 * watermark) and prints one line per partition: its new low watermark or the error.
 */

export interface DeleteRecordsIo {
  out: (s: string) => void;
  err: (s: string) => void;
}

export interface DeleteRecordsDeps {
  adminOptions?: Partial<AdminOptions>;
  readFile?: (path: string) => string;
}

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
    const k = `${e.topic}-${e.partition}`;
    if (seen.has(k)) dups.add(k);
    seen.add(k);
  }
  if (dups.size > 0) throw new Error(`Offset json file contains duplicate topic partitions: ${[...dups].join(',')}`);
  return out;
}

/** Kafka's report lines. */
export function formatDeleteRecordsResults(results: readonly DeleteRecordsResult[]): string[] {
  return results.map((r) =>
    r.error === undefined ? `partition: ${r.topic}-${r.partition}\tlow_watermark: ${r.lowWatermark}` : `partition: ${r.topic}-${r.partition}\terror: ${javaToString(r.error)}`,
  );
}

export async function executeDeleteRecordsCommand(raw: RawDeleteRecordsOptions, io: DeleteRecordsIo, deps: DeleteRecordsDeps = {}): Promise<number> {
  const println = (line: string) => io.out(`${line}\n`);
  const fail = (message: string) => {
    io.err(`${message}\n`);
    return 1;
  };
  const missing = [raw.bootstrapServer === undefined ? 'bootstrap-server' : null, raw.offsetJsonFile === undefined ? 'offset-json-file' : null].filter((x) => x !== null);
  if (missing.length > 0) return fail(`Missing required option(s): ${missing.join(', ')}`);
  const read = deps.readFile ?? ((p: string) => readFileSync(p, 'utf8'));
  let entries: DeleteRecordsRequestEntry[];
  let props: Record<string, string> = {};
  try {
    entries = parseOffsetJson(read(raw.offsetJsonFile!));
    if (raw.commandConfig !== undefined) props = parseProperties(read(raw.commandConfig));
  } catch (err) {
    return fail(err instanceof Error ? err.message : String(err));
  }
  const admin = new Admin({ bootstrapServers: raw.bootstrapServer!, clientId: 'samsa-delete-records', defaultApiTimeoutMs: 60_000, requestTimeoutMs: 30_000, ...deps.adminOptions, ...adminOptionsFromProperties(props) });
  try {
    println('Executing records delete operation');
    const results = await admin.deleteRecords(entries);
    println('Records delete operation completed:');
    for (const l of formatDeleteRecordsResults(results)) println(l);
    return 0;
  } catch (err) {
    return fail(err instanceof Error ? err.message : String(err));
  } finally {
    await admin.close().catch(() => undefined);
  }
}

export function registerDeleteRecordsCommand(program: Command, deps: DeleteRecordsDeps = {}): void {
  const io: DeleteRecordsIo = { out: (s) => void process.stdout.write(s), err: (s) => void process.stderr.write(s) };
  program.addCommand(
    new Command('delete-records')
      .description('Delete records of the given partitions down to the specified offset (kafka-delete-records.sh).')
      .option('--bootstrap-server <host:port>', 'REQUIRED: The server to connect to.')
      .option('--offset-json-file <file>', 'REQUIRED: The JSON file with offset per partition. The format to use is:\n{"partitions":\n  [{"topic": "foo", "partition": 1, "offset": 1}],\n "version":1\n}')
      .option('--command-config <file>', 'A property file containing configs to be passed to Admin Client.')
      .action(async (o: RawDeleteRecordsOptions) => {
        process.exitCode = await executeDeleteRecordsCommand(o, io, deps);
      }),
  );
}
