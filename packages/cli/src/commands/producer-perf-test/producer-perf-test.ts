/**
 * `samsa producer-perf-test`: Kafka's kafka-producer-perf-test.sh. Sends --num-records records of
 * --record-size random bytes at --throughput records/sec (-1: unthrottled) and prints Kafka's
 * 5-second window lines and final summary (records/sec, MB/sec, avg/max latency, percentiles).
 */
import type { Command } from 'commander';
import { Producer, type Callback, type RecordMetadata } from '@samsa/client';
import { producerProps, toConfig } from '../../shared/producer-options.js';
import { commandBuilder, printer, registerCommand, type CommandBuilder, type CommandIo } from '../../shared/runner.js';

interface Opts {
  topic: string;
  numRecords: string;
  recordSize?: string;
  throughput: string;
  producerProps: string[];
  /** --producer.config (commander keeps the dot in the attribute name). */
  'producer.config'?: string;
}

const REPORTING_INTERVAL_MS = 5000;

/** Kafka's perf-test Stats: a window printed every 5 s and the totals with latency percentiles. */
export class PerfStats {
  private readonly start = Date.now();
  private windowStart = Date.now();
  private count = 0;
  private bytes = 0;
  private maxLatency = 0;
  private totalLatency = 0;
  private wCount = 0;
  private wBytes = 0;
  private wMax = 0;
  private wTotal = 0;
  private readonly latencies: number[] = [];
  private readonly sampling: number;

  constructor(
    numRecords: number,
    private readonly out: (line: string) => void,
  ) {
    this.sampling = Math.max(1, Math.floor(numRecords / 500000));
  }

  /** One completed record; latency samples are taken by completion number (every `sampling`-th). */
  record(latency: number, bytes: number, now: number): void {
    const iter = this.count;
    this.count++;
    this.bytes += bytes;
    this.totalLatency += latency;
    this.maxLatency = Math.max(this.maxLatency, latency);
    this.wCount++;
    this.wBytes += bytes;
    this.wTotal += latency;
    this.wMax = Math.max(this.wMax, latency);
    if (iter % this.sampling === 0) this.latencies.push(latency);
    if (now - this.windowStart >= REPORTING_INTERVAL_MS) {
      this.printWindow(now);
      this.windowStart = now;
      this.wCount = this.wBytes = this.wMax = this.wTotal = 0;
    }
  }

  private printWindow(now: number): void {
    const elapsed = now - this.windowStart;
    const rps = (1000 * this.wCount) / elapsed;
    const mbps = (1000 * this.wBytes) / elapsed / (1024 * 1024);
    this.out(
      `${this.wCount} records sent, ${rps.toFixed(1)} records/sec (${mbps.toFixed(2)} MB/sec), ${(this.wTotal / this.wCount).toFixed(1)} ms avg latency, ${this.wMax.toFixed(1)} ms max latency.`,
    );
  }

  /** The final line; returns records/sec. */
  printTotal(): number {
    const elapsed = Date.now() - this.start;
    const rps = (1000 * this.count) / elapsed;
    const mbps = (1000 * this.bytes) / elapsed / (1024 * 1024);
    const sorted = [...this.latencies].sort((a, b) => a - b);
    const pct = (p: number) => (sorted.length ? (sorted[Math.floor(p * sorted.length)] ?? sorted[sorted.length - 1]!) : 0);
    this.out(
      `${this.count} records sent, ${rps.toFixed(6)} records/sec (${mbps.toFixed(2)} MB/sec), ${(this.totalLatency / Math.max(1, this.count)).toFixed(2)} ms avg latency, ${this.maxLatency.toFixed(2)} ms max latency, ${pct(0.5)} ms 50th, ${pct(0.95)} ms 95th, ${pct(0.99)} ms 99th, ${pct(0.999)} ms 99.9th.`,
    );
    return rps;
  }
}

const DESCRIPTION = 'Producer performance test (kafka-producer-perf-test)';

function defineProducerPerfTestOptions(cmd: Command): Command {
  return cmd
    .requiredOption('--topic <topic>', 'produce messages to this topic')
    .requiredOption('--num-records <n>', 'number of messages to produce')
    .option('--record-size <bytes>', 'message size in bytes')
    .requiredOption('--throughput <n>', 'throttle maximum message throughput to approximately this many messages/sec; -1 for no throttling')
    .option('--producer-props <props...>', 'kafka producer related configuration properties like bootstrap.servers,client.id etc.', [])
    .option('--producer.config <file>', 'producer config properties file');
}

export async function executeProducerPerfTestCommand(o: Opts, io: CommandIo): Promise<void> {
  const props = producerProps(o['producer.config'], o.producerProps.flatMap((p) => p.split(/\s+/)).filter(Boolean));
  if (!props['bootstrap.servers']) throw new Error('bootstrap.servers must be given in --producer-props or --producer.config');
  const numRecords = Number(o.numRecords);
  const recordSize = Number(o.recordSize ?? 100);
  const throughput = Number(o.throughput);
  await runPerfTest({ props, topic: o.topic, numRecords, recordSize, throughput, out: printer(io), err: io.err });
}

export const producerPerfTestCommand: CommandBuilder = commandBuilder('producer-perf-test', DESCRIPTION, defineProducerPerfTestOptions, (raw: Opts, io) =>
  executeProducerPerfTestCommand(raw, io),
);

export function registerProducerPerfTestCommand(program: Command): void {
  registerCommand(program, producerPerfTestCommand);
}

/**
 * The callback of the records sent in one millisecond (the Java perf test's PerfCallback, which
 * holds only the send time): latency is measured to the millisecond, so the records sent within
 * the same one share a callback object instead of each holding one until its batch is answered
 * (at full speed ~100 records per object; buffer.memory holds tens of thousands of records, whose
 * per-record objects every scavenge had to copy). Send times are milliseconds since the run's
 * start, small integers (not boxed).
 */
class PerfCallback implements Callback {
  constructor(
    private readonly run: PerfRun,
    readonly sentAt: number,
  ) {}

  onCompletion(_metadata: RecordMetadata | null, exception: Error | null): void {
    this.run.completed(this.sentAt, exception);
  }
}

/** The send loop's state shared by every record's callback. */
class PerfRun {
  readonly start = Date.now();
  waiting = false;
  wake: (() => void) | undefined;
  firstError: Error | undefined;

  constructor(
    private readonly producer: Producer<Buffer, Buffer>,
    private readonly stats: PerfStats,
    private readonly recordSize: number,
    /** Buffer memory needed for one more batch. */
    readonly batchSize: number,
  ) {}

  completed(sentAt: number, err: Error | null): void {
    if (err) this.firstError ??= err;
    else {
      const now = Date.now();
      this.stats.record(now - this.start - sentAt, this.recordSize, now);
    }
    // acknowledged batches have freed their memory by now: wake the loop once a few batches'
    // worth is free (waking it per acknowledged record cost a promise per record)
    if (!this.waiting || this.producer.bufferAvailableBytes < 2 * this.batchSize) return;
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }
}

export async function runPerfTest(o: {
  props: Record<string, string>;
  topic: string;
  numRecords: number;
  recordSize: number;
  throughput: number;
  out: (line: string) => void;
  /** Where the first send error goes (raw string). Default: stderr. */
  err?: (s: string) => void;
}): Promise<number> {
  const producer = new Producer<Buffer, Buffer>({ ...toConfig(o.props), 'bootstrap.servers': o.props['bootstrap.servers']! });
  const payload = Buffer.allocUnsafe(o.recordSize);
  for (let i = 0; i < payload.length; i++) payload[i] = 65 + Math.floor(Math.random() * 26);
  const stats = new PerfStats(o.numRecords, o.out);
  // Java's send() blocks while buffer.memory has no room for a new batch; here the loop waits
  // (on acknowledgements) instead of handing the producer sends that would each wait for memory
  const run = new PerfRun(producer, stats, o.recordSize, Math.max(producer.config.batchSize, o.recordSize + 128));
  const { start, batchSize } = run;
  let callback = new PerfCallback(run, 0);
  for (let i = 0; i < o.numRecords; i++) {
    if (o.throughput > 0) {
      const due = start + (i * 1000) / o.throughput;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
    if (producer.bufferAvailableBytes < batchSize) {
      run.waiting = true;
      while (producer.bufferAvailableBytes < batchSize) await new Promise<void>((r) => (run.wake = r));
      run.waiting = false;
    }
    // Kafka's perf test passes a callback to send(): no promise per record
    const sentAt = Date.now() - start;
    if (sentAt !== callback.sentAt) callback = new PerfCallback(run, sentAt);
    producer.send({ topic: o.topic, value: payload }, callback);
    if (i % 500 === 499) await new Promise((r) => setImmediate(r));
  }
  await producer.close();
  if (run.firstError) (o.err ?? ((e: string) => void process.stderr.write(e)))(`Error: ${run.firstError.message}\n`);
  return stats.printTotal();
}
