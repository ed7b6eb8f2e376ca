/**
 * `samsa console-consumer`: Kafka's kafka-console-consumer.sh. Consumes a topic (--topic), topics
 * matching a regex (--include) or one partition (--partition, --offset) and prints each record
 * with Kafka's DefaultMessageFormatter (`--property print.key=true`, print.timestamp,
 * print.partition, print.offset, print.headers, print.value, key.separator, line.separator,
 * headers.separator, null.literal). Without --group a random `console-consumer-N` group is used
 * with auto commit off, as in Kafka. Stops after --max-messages, after --timeout-ms without a
 * record, or on SIGINT/SIGTERM, then prints "Processed a total of N messages" on stderr.
 */
import type { Command } from 'commander';
import { Consumer, topicPartitionKey, type ConsumerRecord } from '@samsa/client';
import { collect } from '../../shared/producer-options.js';
import { consumerProps, toConsumerConfig, toolLogLine } from '../../shared/consumer-options.js';
import { parseKeyValueArgs } from '../../shared/properties.js';
import { commandBuilder, registerCommand, type CommandBuilder, type CommandIo } from '../../shared/runner.js';

interface Opts {
  bootstrapServer?: string;
  topic?: string;
  include?: string;
  whitelist?: string;
  group?: string;
  fromBeginning?: boolean;
  partition?: string;
  offset: string;
  maxMessages?: string;
  timeoutMs?: string;
  property: string[];
  consumerProperty: string[];
  consumerConfig?: string;
  isolationLevel?: string;
  skipMessageOnError?: boolean;
}

export interface FormatterProps {
  printKey: boolean;
  printValue: boolean;
  printTimestamp: boolean;
  printPartition: boolean;
  printOffset: boolean;
  printHeaders: boolean;
  keySeparator: string;
  lineSeparator: string;
  headersSeparator: string;
  nullLiteral: string;
}

/** Kafka's DefaultMessageFormatter properties (defaults: value only, tab separator, newline). */
export function formatterProps(items: Record<string, string>): FormatterProps {
  const b = (k: string, d: boolean) => (items[k] === undefined ? d : items[k]!.trim().toLowerCase() === 'true');
  const unescape = (s: string) => s.replace(/\\t/g, '\t').replace(/\\n/g, '\n').replace(/\\r/g, '\r');
  return {
    printKey: b('print.key', false),
    printValue: b('print.value', true),
    printTimestamp: b('print.timestamp', false),
    printPartition: b('print.partition', false),
    printOffset: b('print.offset', false),
    printHeaders: b('print.headers', false),
    keySeparator: unescape(items['key.separator'] ?? '\t'),
    lineSeparator: unescape(items['line.separator'] ?? '\n'),
    headersSeparator: unescape(items['headers.separator'] ?? ','),
    nullLiteral: items['null.literal'] ?? 'null',
  };
}

/** One record as Kafka's DefaultMessageFormatter writes it. */
export function formatRecord(r: ConsumerRecord<Buffer | null, Buffer | null>, p: FormatterProps): string {
  let out = '';
  const text = (b: Buffer | null) => (b === null ? p.nullLiteral : b.toString('utf8'));
  const sep = (more: boolean) => {
    if (more) out += p.keySeparator;
  };
  if (p.printTimestamp) {
    out += `${r.timestampType}:${r.timestamp}`;
    sep(p.printPartition || p.printOffset || p.printHeaders || p.printKey || p.printValue);
  }
  if (p.printPartition) {
    out += `Partition:${r.partition}`;
    sep(p.printOffset || p.printHeaders || p.printKey || p.printValue);
  }
  if (p.printOffset) {
    out += `Offset:${r.offset}`;
    sep(p.printHeaders || p.printKey || p.printValue);
  }
  if (p.printHeaders) {
    out += r.headers.length === 0 ? 'NO_HEADERS' : r.headers.map((h) => `${h.key}:${text(h.value)}`).join(p.headersSeparator);
    sep(p.printKey || p.printValue);
  }
  if (p.printKey) {
    out += text(r.key);
    sep(p.printValue);
  }
  if (p.printValue) out += text(r.value);
  return out + p.lineSeparator;
}

const DESCRIPTION = 'Consume records from a topic and print them to standard output (kafka-console-consumer)';

function defineConsoleConsumerOptions(cmd: Command): Command {
  return cmd
    .option('--bootstrap-server <servers>', 'REQUIRED: the server(s) to connect to')
    .option('--topic <topic>', 'the topic to consume on')
    .option('--include <regex>', 'regular expression specifying list of topics to include for consumption')
    .option('--whitelist <regex>', 'DEPRECATED, use --include instead')
    .option('--group <group>', 'the consumer group id of the consumer')
    .option('--from-beginning', 'start with the earliest message present in the log rather than the latest message (when the group has no committed offset)')
    .option('--partition <n>', 'the partition to consume from; consumption starts from the end of the partition unless --offset is specified')
    .option('--offset <offset>', "the offset to consume from (a non-negative number), or 'earliest' or 'latest'", 'latest')
    .option('--max-messages <n>', 'the maximum number of messages to consume before exiting')
    .option('--timeout-ms <ms>', 'if specified, exit if no message is available for consumption for the specified interval')
    .option(
      '--property <prop>',
      'message formatter properties: print.key, print.timestamp, print.partition, print.offset, print.headers, print.value, key.separator, line.separator, headers.separator, null.literal',
      collect,
      [],
    )
    .option('--consumer-property <prop>', 'consumer properties in the form key=value', collect, [])
    .option('--consumer.config <file>', 'consumer config properties file')
    .option('--isolation-level <level>', "'read_committed' or 'read_uncommitted' (default)")
    .option('--skip-message-on-error', 'skip a message that cannot be processed instead of halting');
}

export const consoleConsumerCommand: CommandBuilder = commandBuilder(
  'console-consumer',
  DESCRIPTION,
  defineConsoleConsumerOptions,
  (raw: Opts & { 'consumer.config'?: string }, io) => executeConsoleConsumerCommand(raw, io),
);

export function registerConsoleConsumerCommand(program: Command): void {
  registerCommand(program, consoleConsumerCommand);
}

/** Consumes until --max-messages, --timeout-ms without a record, or SIGINT/SIGTERM; leaves the exit code as it is. */
export async function executeConsoleConsumerCommand(o: Opts & { 'consumer.config'?: string }, io: CommandIo): Promise<void> {
  const servers = o.bootstrapServer;
  if (!servers) throw new Error('Missing required argument "[bootstrap-server]"');
  const include = o.include ?? o.whitelist;
  if ((o.topic ? 1 : 0) + (include ? 1 : 0) !== 1) throw new Error('Exactly one of --include/--topic is required.');
  if (o.partition !== undefined && !o.topic) throw new Error('The topic is required when partition is specified.');
  if (o.fromBeginning && o.partition !== undefined && o.offset !== 'latest') throw new Error('Options from-beginning and offset cannot be specified together.');
  const props: Record<string, string> = { ...consumerProps(o.consumerConfig ?? o['consumer.config'], o.consumerProperty) };
  if (o.group) {
    if (props['group.id'] && props['group.id'] !== o.group)
      throw new Error(
        `The group ids provided in different places (directly using '--group', via '--consumer-property', or via '--consumer.config') do not match. Detected group ids: '${o.group}', '${props['group.id']}'`,
      );
    props['group.id'] = o.group;
  }
  const groupGiven = props['group.id'] !== undefined;
  if (!groupGiven && o.partition === undefined) {
    props['group.id'] = `console-consumer-${Math.floor(Math.random() * 100000)}`;
    props['enable.auto.commit'] ??= 'false';
  }
  if (o.isolationLevel) props['isolation.level'] = o.isolationLevel;
  props['auto.offset.reset'] ??= o.fromBeginning ? 'earliest' : 'latest';
  props['client.id'] ??= 'console-consumer';
  const consumer = new Consumer<Buffer | null, Buffer | null>({ ...toConsumerConfig(props), 'bootstrap.servers': servers });
  const fmt = formatterProps(parseKeyValueArgs(o.property));
  const max = o.maxMessages !== undefined ? Number(o.maxMessages) : Infinity;
  const timeoutMs = o.timeoutMs !== undefined ? Number(o.timeoutMs) : Infinity;
  let count = 0;
  let stop = false;
  const onSignal = () => {
    stop = true;
    consumer.wakeup();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    if (o.partition !== undefined) {
      const tp = { topic: o.topic!, partition: Number(o.partition) };
      consumer.assign([tp]);
      const off = o.fromBeginning ? 'earliest' : o.offset;
      if (off === 'earliest') consumer.seekToBeginning([tp]);
      else if (off === 'latest') consumer.seekToEnd([tp]);
      else if (/^\d+$/.test(off)) consumer.seek(tp, BigInt(off));
      else throw new Error(`The provided offset value '${off}' is incorrect. Valid values are 'earliest', 'latest', or a non-negative long.`);
    } else {
      consumer.subscribe(include ? new RegExp(`^(?:${include})$`) : [o.topic!]);
    }
    let lastRecord = Date.now();
    while (!stop && count < max) {
      const wait = Number.isFinite(timeoutMs) ? Math.max(0, Math.min(1000, lastRecord + timeoutMs - Date.now())) : 1000;
      let records: ConsumerRecord<Buffer | null, Buffer | null>[];
      try {
        records = await consumer.poll(wait);
      } catch (err) {
        if ((err as Error).name === 'WakeupError') break;
        throw err;
      }
      if (records.length === 0 && Number.isFinite(timeoutMs) && Date.now() - lastRecord >= timeoutMs) {
        io.err(
          toolLogLine('ERROR', 'Error processing message, terminating consumer process: ', 'kafka.tools.ConsoleConsumer$') +
            'org.apache.kafka.common.errors.TimeoutException\n',
        );
        break;
      }
      if (records.length > 0) lastRecord = Date.now();
      let chunk = '';
      const unprinted = new Map<string, ConsumerRecord<Buffer | null, Buffer | null>>();
      for (const r of records) {
        if (count >= max) {
          if (!unprinted.has(topicPartitionKey(r))) unprinted.set(topicPartitionKey(r), r);
          continue;
        }
        chunk += formatRecord(r, fmt);
        count++;
      }
      // records not printed are not consumed: the committed position stays at the first of them
      for (const r of unprinted.values()) consumer.seek({ topic: r.topic, partition: r.partition }, r.offset);
      if (chunk) {
        io.out(chunk);
        await io.outDrained?.();
      }
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await consumer.close().catch(() => undefined);
    io.err(`Processed a total of ${count} messages\n`);
  }
}
