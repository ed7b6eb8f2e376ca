/**
 * `samsa console-producer`: Kafka's kafka-console-producer.sh. Reads lines from stdin and sends
 * each as a record (`--property parse.key=true --property key.separator=:` splits key and value).
 * Same flags and defaults as Kafka's ConsoleProducer: linger.ms from --timeout (1000 ms), acks from
 * --request-required-acks (-1), --sync waits for each record, --compression-codec (gzip when given
 * without a value).
 */
import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import { Producer, type RecordMetadata } from '@samsa/client';
import { collect, producerProps, toConfig } from '../../shared/producer-options.js';
import { parseKeyValueArgs } from '../../shared/properties.js';
import { commandBuilder, registerCommand, type CommandBuilder, type CommandIo } from '../../shared/runner.js';

interface Opts {
  bootstrapServer?: string;
  brokerList?: string;
  topic: string;
  property: string[];
  producerProperty: string[];
  /** --producer.config (commander keeps the dot in the attribute name). */
  'producer.config'?: string;
  sync?: boolean;
  compressionCodec?: string | boolean;
  timeout: string;
  requestRequiredAcks: string;
  batchSize?: string;
}

const DESCRIPTION = 'Read lines from standard input and publish them to a topic (kafka-console-producer)';

function defineConsoleProducerOptions(cmd: Command): Command {
  return cmd
    .option('--bootstrap-server <servers>', 'REQUIRED: the server(s) to connect to')
    .option('--broker-list <servers>', 'DEPRECATED, use --bootstrap-server instead')
    .requiredOption('--topic <topic>', 'REQUIRED: the topic id to produce messages to')
    .option('--property <prop>', 'line reader properties: parse.key, key.separator, ignore.error, null.marker', collect, [])
    .option('--producer-property <prop>', 'producer properties in the form key=value', collect, [])
    .option('--producer.config <file>', 'producer config properties file')
    .option('--sync', 'send each message synchronously')
    .option('--compression-codec [codec]', "'none', 'gzip', 'snappy', 'lz4', or 'zstd' (default gzip when given)")
    .option('--timeout <ms>', 'linger.ms: wait for a batch to fill at most this long', '1000')
    .option('--request-required-acks <acks>', 'acks of the producer requests', '-1')
    .option('--batch-size <n>', 'records per batch when sending asynchronously (batch.size in bytes)');
}

/**
 * The producer's properties: the tool's defaults, then the --producer.config file, then
 * --producer-property items (later wins), then --compression-codec when given.
 */
export function consoleProducerProps(o: Opts, servers: string): Record<string, string> {
  const props: Record<string, string> = {
    'bootstrap.servers': servers,
    'linger.ms': o.timeout,
    acks: o.requestRequiredAcks,
    'client.id': 'console-producer',
    ...producerProps(o['producer.config'], o.producerProperty),
  };
  if (o.compressionCodec !== undefined) props['compression.type'] = o.compressionCodec === true ? 'gzip' : String(o.compressionCodec);
  return props;
}

/** Sends each line of `io.input` (default stdin) until it ends; exit code 1 when a send failed (unless ignore.error). */
export async function executeConsoleProducerCommand(o: Opts, io: CommandIo): Promise<number> {
  const servers = o.bootstrapServer ?? o.brokerList;
  if (!servers) throw new Error('Missing required argument "[bootstrap-server]"');
  const reader = parseKeyValueArgs(o.property);
  const props = consoleProducerProps(o, servers);
  const producer = new Producer<Buffer | null, Buffer | null>({ ...toConfig(props), 'bootstrap.servers': servers });
  const pending = new Set<Promise<RecordMetadata>>();
  let failed = false;
  const onError = (err: Error) => {
    failed = true;
    io.err(`[${new Date().toISOString()}] ERROR Error when sending message to topic ${o.topic}: ${err.message}\n`);
  };
  const rl = createInterface({ input: io.input ?? process.stdin, crlfDelay: Infinity });
  for await (const line of rl) {
    const { key, value } = splitLine(line, reader);
    const p = producer.send({ topic: o.topic, key, value });
    if (o.sync) {
      await p.catch(onError);
    } else {
      pending.add(p);
      p.catch(onError).finally(() => pending.delete(p));
    }
  }
  await producer.close();
  return failed && reader['ignore.error'] !== 'true' ? 1 : 0;
}

export const consoleProducerCommand: CommandBuilder = commandBuilder('console-producer', DESCRIPTION, defineConsoleProducerOptions, (raw: Opts, io) =>
  executeConsoleProducerCommand(raw, io),
);

export function registerConsoleProducerCommand(program: Command): void {
  registerCommand(program, consoleProducerCommand);
}

/** Kafka's LineMessageReader: key and value split at key.separator (default a tab) when parse.key is set. */
export function splitLine(line: string, props: Record<string, string>): { key: Buffer | null; value: Buffer | null } {
  const nullMarker = props['null.marker'];
  const toBytes = (s: string) => (nullMarker !== undefined && s === nullMarker ? null : Buffer.from(s, 'utf8'));
  if (props['parse.key'] !== 'true') return { key: null, value: toBytes(line) };
  const sep = props['key.separator'] ?? '\t';
  const i = line.indexOf(sep);
  if (i < 0) {
    if (props['ignore.error'] === 'true') return { key: null, value: toBytes(line) };
    throw new Error(`No key separator found on line: ${line}`);
  }
  return { key: toBytes(line.slice(0, i)), value: toBytes(line.slice(i + sep.length)) };
}
