/**
 * `samsa end-to-end-latency`: Kafka's kafka.tools.EndToEndLatency. Positional arguments:
 * broker_list topic num_messages producer_acks message_size_bytes [properties_file]. Sends one
 * random message at a time (acks 1 or all, synchronously), waits for the consumer (assigned every
 * partition, positioned at the end, fetch.max.wait.ms 0) to read it back, checks it is the same
 * and the only one; prints `i<TAB>latency-ms` every 1000 messages, then `Avg latency: X ms` and
 * `Percentiles: 50th = a, 99th = b, 99.9th = c` like Kafka. On a terminal a progress bar runs on
 * stderr. A missing topic is created (1 partition, replication factor 1), as Kafka's tool does.
 */
import type { Command } from 'commander';
import { Consumer, Producer } from '@samsa/client';
import { openAdmin, type AdminToolDeps } from '../../shared/admin-client.js';
import { toConsumerConfig } from '../../shared/consumer-options.js';
import { toConfig } from '../../shared/producer-options.js';
import { ProgressBar } from '../../shared/progress.js';
import { readPropertiesFile } from '../../shared/properties.js';
import { commandBuilder, printer, registerCommand, type CommandBuilder } from '../../shared/runner.js';

const POLL_TIMEOUT_MS = 60_000;

const DESCRIPTION = 'End-to-end latency: produce a message, wait until the consumer reads it, repeat (kafka.tools.EndToEndLatency)';

function defineEndToEndLatencyArguments(cmd: Command): Command {
  return cmd
    .argument('<broker_list>')
    .argument('<topic>')
    .argument('<num_messages>')
    .argument('<producer_acks>')
    .argument('<message_size_bytes>')
    .argument('[properties_file]');
}

/** The builder; `deps` builds the Admin that creates a missing topic (shared/admin-client.ts). */
export const endToEndLatencyCommand = (deps: AdminToolDeps = {}): CommandBuilder =>
  commandBuilder('end-to-end-latency', DESCRIPTION, defineEndToEndLatencyArguments, async (_raw: object, io, _cmd, args) => {
    const [brokers, topic, num, acks, size, file] = args as [string, string, string, string, string, string | undefined];
    await runEndToEndLatency({
      brokers,
      topic,
      numMessages: Number(num),
      acks,
      messageSize: Number(size),
      props: file ? readPropertiesFile(file) : {},
      out: printer(io),
      err: io.err,
      adminDeps: deps,
    });
  });

export function registerEndToEndLatencyCommand(program: Command): void {
  registerCommand(program, endToEndLatencyCommand());
}

export interface EndToEndLatencyOptions {
  brokers: string;
  topic: string;
  numMessages: number;
  acks: string;
  messageSize: number;
  props: Record<string, string>;
  out: (line: string) => void;
  /** Where the topic-creation notice goes (raw string). Default: stderr. */
  err?: (s: string) => void;
  /** How the Admin that creates a missing topic is built. */
  adminDeps?: AdminToolDeps;
  tty?: boolean;
}

export interface LatencyResult {
  avgMs: number;
  p50: number;
  p99: number;
  p999: number;
}

/** Kafka's percentile picks: sorted whole-ms latencies at index floor(n * p). */
export function latencyPercentiles(latenciesMs: readonly number[]): { p50: number; p99: number; p999: number } {
  const s = [...latenciesMs].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.floor(s.length * p))] ?? 0;
  return { p50: at(0.5), p99: at(0.99), p999: at(0.999) };
}

export async function runEndToEndLatency(o: EndToEndLatencyOptions): Promise<LatencyResult> {
  if (o.acks !== '1' && o.acks !== 'all') throw new Error('Latency testing requires synchronous acknowledgement. Please use 1 or all');
  if (!Number.isInteger(o.numMessages) || o.numMessages <= 0) throw new Error('num_messages must be a positive integer');
  // the properties file configures the admin, the consumer and the producer, as Kafka's tool does
  const admin = openAdmin({ bootstrapServers: o.brokers }, o.adminDeps ?? {}, o.props);
  try {
    const existing = await admin.listTopics();
    if (!existing.includes(o.topic)) {
      (o.err ?? ((e: string) => void process.stderr.write(e)))(
        `Topic "${o.topic}" does not exist. Will create topic with 1 partition(s) and replication factor = 1\n`,
      );
      await admin.createTopics([{ name: o.topic, numPartitions: 1, replicationFactor: 1 }]);
    }
  } finally {
    await admin.close();
  }
  const consumer = new Consumer<Buffer | null, Buffer | null>({
    ...toConsumerConfig(o.props),
    'bootstrap.servers': o.brokers,
    'group.id': `test-group-${Date.now()}`,
    'enable.auto.commit': false,
    'auto.offset.reset': 'latest',
    'fetch.max.wait.ms': 0,
  });
  const producer = new Producer<Buffer, Buffer>({
    ...toConfig(o.props),
    'bootstrap.servers': o.brokers,
    'linger.ms': 0,
    acks: o.acks as 'all' | '1',
  });
  const bar = new ProgressBar({ total: o.numMessages, unit: 'msgs', tty: o.tty });
  try {
    // a topic just created may have no partitions (or leaders) in metadata yet
    let parts = await consumer.partitionsFor(o.topic);
    for (const end = Date.now() + 60_000; (parts.length === 0 || parts.some((p) => p.leader < 0)) && Date.now() < end;) {
      await new Promise((r) => setTimeout(r, 100));
      parts = await consumer.partitionsFor(o.topic);
    }
    if (parts.length === 0) throw new Error(`Topic ${o.topic} has no partitions in metadata after 60000 ms`);
    const tps = parts.map((p) => ({ topic: o.topic, partition: p.partition }));
    consumer.assign(tps);
    consumer.seekToEnd(tps);
    for (const tp of tps) await consumer.position(tp);
    const latencies: number[] = [];
    let totalNs = 0n;
    for (let i = 0; i < o.numMessages; i++) {
      const message = Buffer.alloc(o.messageSize);
      for (let j = 0; j < message.length; j++) message[j] = 65 + Math.floor(Math.random() * 26);
      const begin = process.hrtime.bigint();
      await producer.send({ topic: o.topic, value: message });
      const records = await consumer.poll(POLL_TIMEOUT_MS);
      const elapsed = process.hrtime.bigint() - begin;
      if (records.length === 0) throw new Error(`poll() timed out before finding a result (timeout:[${POLL_TIMEOUT_MS}])`);
      const read = records[0]!.value?.toString('utf8') ?? '';
      if (read !== message.toString('utf8')) throw new Error(`The message read [${read}] did not match the message sent [${message.toString('utf8')}]`);
      if (records.length > 1) throw new Error(`Only one result was expected during this test. We found [${records.length}]`);
      if (i % 1000 === 0) {
        bar.done();
        o.out(`${i}\t${Number(elapsed) / 1e6}`);
      }
      bar.update(i + 1);
      totalNs += elapsed;
      latencies.push(Number(elapsed / 1_000_000n));
    }
    bar.done();
    const avgMs = Number(totalNs) / o.numMessages / 1e6;
    o.out(`Avg latency: ${avgMs.toFixed(4)} ms\n`);
    const p = latencyPercentiles(latencies);
    o.out(`Percentiles: 50th = ${p.p50}, 99th = ${p.p99}, 99.9th = ${p.p999}`);
    return { avgMs, ...p };
  } finally {
    bar.done();
    await producer.close({ timeoutMs: 5000 });
    await consumer.close({ timeoutMs: 5000 });
  }
}
