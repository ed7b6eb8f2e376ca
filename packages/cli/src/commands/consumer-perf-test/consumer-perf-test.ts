/**
 * `samsa consumer-perf-test`: Kafka's kafka-consumer-perf-test.sh (ConsumerPerformance). Consumes
 * --messages records from --topic (or --include) in a group and prints Kafka's CSV: the header
 * `start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec,
 * rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec` and one summary line, or with
 * --show-detailed-stats a line every --reporting-interval ms (`time, threadId, ...`). On a
 * terminal a progress bar runs on stderr meanwhile.
 */
import type { Command } from 'commander';
import { Consumer } from '@samsa/client';
import { consumerProps, toConsumerConfig } from '../../shared/consumer-options.js';
import { ProgressBar } from '../../shared/progress.js';
import { commandBuilder, printer, registerCommand, type CommandBuilder, type CommandIo } from '../../shared/runner.js';

interface Opts {
  bootstrapServer?: string;
  brokerList?: string;
  topic?: string;
  include?: string;
  messages: string;
  group?: string;
  fetchSize: string;
  timeout: string;
  showDetailedStats?: boolean;
  reportingInterval: string;
  fromLatest?: boolean;
  consumerConfig?: string;
  dateFormat?: string;
  hideHeader?: boolean;
}

/** Java's SimpleDateFormat `yyyy-MM-dd HH:mm:ss:SSS` (the tool's default) in local time. */
export function formatDate(ms: number, pattern = 'yyyy-MM-dd HH:mm:ss:SSS'): string {
  const d = new Date(ms);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return pattern
    .replace('yyyy', String(d.getFullYear()))
    .replace('MM', p(d.getMonth() + 1))
    .replace('dd', p(d.getDate()))
    .replace('HH', p(d.getHours()))
    .replace('mm', p(d.getMinutes()))
    .replace('ss', p(d.getSeconds()))
    .replace('SSS', p(d.getMilliseconds(), 3));
}

export const PERF_HEADER =
  'start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec';
export const PERF_DETAILED_HEADER =
  'time, threadId, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec';

const MB = 1024 * 1024;
const f4 = (n: number) => (Number.isFinite(n) ? n.toFixed(4) : n > 0 ? 'Infinity' : 'NaN');

/** Kafka's summary line. */
export function summaryLine(o: { startMs: number; endMs: number; bytes: number; messages: number; joinMs: number; dateFormat?: string }): string {
  const elapsedSecs = (o.endMs - o.startMs) / 1000;
  const fetchTimeMs = o.endMs - o.startMs - o.joinMs;
  const mb = o.bytes / MB;
  return [
    formatDate(o.startMs, o.dateFormat),
    formatDate(o.endMs, o.dateFormat),
    f4(mb),
    f4(mb / elapsedSecs),
    String(o.messages),
    f4(o.messages / elapsedSecs),
    String(o.joinMs),
    String(fetchTimeMs),
    f4(mb / (fetchTimeMs / 1000)),
    f4(o.messages / (fetchTimeMs / 1000)),
  ].join(', ');
}

const DESCRIPTION = 'Consumer performance test (kafka-consumer-perf-test)';

function defineConsumerPerfTestOptions(cmd: Command): Command {
  return cmd
    .option('--bootstrap-server <servers>', 'REQUIRED: the server(s) to connect to')
    .option('--broker-list <servers>', 'DEPRECATED, use --bootstrap-server instead')
    .option('--topic <topic>', 'the topic to consume from')
    .option('--include <regex>', 'regular expression specifying list of topics to include for consumption')
    .requiredOption('--messages <n>', 'REQUIRED: the number of messages to consume')
    .option('--group <group>', 'the group id to consume on (default perf-consumer-N)')
    .option('--fetch-size <bytes>', 'the amount of data to fetch in a single request (max.partition.fetch.bytes)', '1048576')
    .option('--timeout <ms>', 'the maximum allowed time in milliseconds between returned records', '10000')
    .option('--show-detailed-stats', 'if set, stats are reported for each reporting interval as configured by reporting-interval')
    .option('--reporting-interval <ms>', 'interval in milliseconds at which to print progress info', '5000')
    .option(
      '--from-latest',
      'if the consumer does not already have an established offset to consume from, start with the latest message present in the log rather than the earliest message',
    )
    .option('--consumer.config <file>', 'consumer config properties file')
    .option('--date-format <format>', 'the date format to use for formatting the time field', 'yyyy-MM-dd HH:mm:ss:SSS')
    .option('--hide-header', 'if set, skips printing the header for the stats');
}

export async function executeConsumerPerfTestCommand(o: Opts & { 'consumer.config'?: string }, io: CommandIo): Promise<void> {
  const servers = o.bootstrapServer ?? o.brokerList;
  if (!servers) throw new Error('Missing required argument "[bootstrap-server]"');
  if ((o.topic ? 1 : 0) + (o.include ? 1 : 0) !== 1) throw new Error('Exactly one of the following arguments is required: [topic], [include]');
  await runConsumerPerfTest({
    props: {
      'auto.offset.reset': o.fromLatest ? 'latest' : 'earliest',
      'max.partition.fetch.bytes': o.fetchSize,
      'client.id': 'perf-consumer-client',
      ...consumerProps(o.consumerConfig ?? o['consumer.config'], []),
      'bootstrap.servers': servers,
      'group.id': o.group ?? `perf-consumer-${Math.floor(Math.random() * 100000)}`,
    },
    topics: o.topic ? [o.topic] : new RegExp(`^(?:${o.include!})$`),
    messages: Number(o.messages),
    timeoutMs: Number(o.timeout),
    detailed: o.showDetailedStats === true,
    reportingIntervalMs: Number(o.reportingInterval),
    dateFormat: o.dateFormat,
    hideHeader: o.hideHeader === true,
    out: printer(io),
    err: io.err,
  });
}

export const consumerPerfTestCommand: CommandBuilder = commandBuilder(
  'consumer-perf-test',
  DESCRIPTION,
  defineConsumerPerfTestOptions,
  (raw: Opts & { 'consumer.config'?: string }, io) => executeConsumerPerfTestCommand(raw, io),
);

export function registerConsumerPerfTestCommand(program: Command): void {
  registerCommand(program, consumerPerfTestCommand);
}

export interface ConsumerPerfOptions {
  props: Record<string, string>;
  topics: string[] | RegExp;
  messages: number;
  timeoutMs: number;
  detailed: boolean;
  reportingIntervalMs: number;
  dateFormat?: string;
  hideHeader: boolean;
  out: (line: string) => void;
  /** Where the timeout warning goes (raw string). Default: stderr. */
  err?: (s: string) => void;
  tty?: boolean;
}

export async function runConsumerPerfTest(o: ConsumerPerfOptions): Promise<{ messages: number; bytes: number }> {
  const consumer = new Consumer<Buffer | null, Buffer | null>(toConsumerConfig(o.props));
  let joinStart = 0;
  let joinMs = 0;
  let periodicJoinMs = 0;
  consumer.subscribe(o.topics, {
    onPartitionsRevoked: () => void (joinStart = Date.now()),
    onPartitionsAssigned: () => {
      const t = Date.now() - joinStart;
      joinMs += t;
      periodicJoinMs += t;
    },
  });
  if (!o.hideHeader) o.out(o.detailed ? PERF_DETAILED_HEADER : PERF_HEADER);
  const bar = new ProgressBar({ total: o.messages, unit: 'msgs', tty: o.tty });
  let messages = 0;
  let bytes = 0;
  let lastMessages = 0;
  let lastBytes = 0;
  joinStart = Date.now();
  const startMs = Date.now();
  let lastReport = startMs;
  let lastConsumed = startMs;
  let endMs = startMs;
  while (messages < o.messages && Date.now() - lastConsumed <= o.timeoutMs) {
    const records = await consumer.poll(100);
    const now = Date.now();
    if (records.length > 0) lastConsumed = now;
    for (const r of records) {
      messages++;
      bytes += (r.key?.length ?? 0) + (r.value?.length ?? 0);
      if (messages >= o.messages) break;
    }
    endMs = now;
    bar.update(messages);
    // as Kafka's tool, which checks the interval while it handles records: no row for a poll that
    // brought none (a first interval spent joining the group prints nothing)
    if (o.detailed && records.length > 0 && now - lastReport >= o.reportingIntervalMs) {
      bar.done();
      const elapsedMs = now - lastReport;
      const mbInterval = (bytes - lastBytes) / MB;
      const fetchTimeMs = elapsedMs - periodicJoinMs;
      o.out(
        [
          formatDate(now, o.dateFormat),
          '0',
          f4(bytes / MB),
          f4((mbInterval * 1000) / elapsedMs),
          String(messages),
          f4(((messages - lastMessages) * 1000) / elapsedMs),
          String(periodicJoinMs),
          String(fetchTimeMs),
          f4((mbInterval * 1000) / fetchTimeMs),
          f4(((messages - lastMessages) * 1000) / fetchTimeMs),
        ].join(', '),
      );
      lastReport = now;
      lastBytes = bytes;
      lastMessages = messages;
      periodicJoinMs = 0;
    }
  }
  bar.done();
  if (messages < o.messages)
    (o.err ?? ((e: string) => void process.stderr.write(e)))(
      `WARNING: Exiting before consuming the expected number of messages: timeout (${o.timeoutMs} ms) exceeded. You can use the --timeout option to increase the timeout.\n`,
    );
  await consumer.close();
  if (!o.detailed) o.out(summaryLine({ startMs, endMs, bytes, messages, joinMs, dateFormat: o.dateFormat }));
  return { messages, bytes };
}
