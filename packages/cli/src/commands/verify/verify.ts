/**
 * `samsa verify`: the verify workload and checker (@samsa/client verify) against any
 * Kafka-compatible cluster. Creates the topic when missing (RF, min.insync.replicas, partitions),
 * produces unique sequenced values for a duration or a message count, reads everything back with
 * Fetch, prints the summary table and exits 1 on any violation (lost acknowledged writes,
 * duplicates with idempotence, reordering, offsets going backwards, divergent replicas when
 * --log-dirs names each broker's log.dirs). With --transactional the producers write transactions
 * of --transaction-size records, aborting every --abort-every-th, and the read-back is
 * read_committed: aborted records read, partially visible transactions and records of committed
 * transactions missing are violations too.
 */
import type { Command } from 'commander';
import pino from 'pino';
import { KafkaError, type Logger } from '@samsa/client';
import { checkTopic, formatReport, startWorkload, type VerifyReport, type WorkloadOptions } from '@samsa/client/verify';
import { fileReader, openAdmin, readCommandConfig, type AdminToolDeps } from '../../shared/admin-client.js';
import { clientSecurityFromProperties, type ClientSecurityOptions } from '../../shared/client-security.js';
import { commandBuilder, printer, registerCommand, type CommandBuilder, type CommandIo } from '../../shared/runner.js';
import { parseAcks, parseCompression, parseDuration, parseIntOption, parseLogDirs } from './verify-options.js';

export interface VerifyRunOptions {
  bootstrap: string;
  topic: string;
  partitions: number;
  replicationFactor: number;
  minInsyncReplicas: number;
  durationMs?: number;
  messages?: number;
  producers: number;
  idempotent: boolean;
  compression: NonNullable<WorkloadOptions['compression']>;
  acks: -1 | 0 | 1;
  rate: number;
  /** Transactions of `size` records, every `abortEvery`-th aborted (0: none). */
  transactional?: { size: number; abortEvery: number };
  logDirs?: Record<number, string>;
  checkTimeoutMs: number;
  logger?: Logger;
  /** Runs while the workload produces (samsa chaos injects its faults here); the workload stops when both it and the duration are over. */
  during?: (stats: () => { acknowledged: number }) => Promise<void>;
  out: (s: string) => void;
  /** How the Admin that creates the topic is built (shared/admin-client.ts). */
  adminDeps?: AdminToolDeps;
  /** TLS / SASL of every connection (the admin, the producers, the checker): --command-config's security.protocol, ssl.*, sasl.*. */
  security?: ClientSecurityOptions;
}

/** Creates the topic unless it exists. */
export async function ensureVerifyTopic(
  o: Pick<VerifyRunOptions, 'bootstrap' | 'topic' | 'partitions' | 'replicationFactor' | 'minInsyncReplicas' | 'out' | 'adminDeps' | 'security'>,
): Promise<void> {
  const defaults = { bootstrapServers: o.bootstrap, clientId: 'samsa-verify', ...o.security };
  const admin = openAdmin(defaults, o.adminDeps ?? {});
  try {
    await admin.createTopics(
      [{ name: o.topic, numPartitions: o.partitions, replicationFactor: o.replicationFactor, configs: { 'min.insync.replicas': String(o.minInsyncReplicas) } }],
      { timeoutMs: 60_000 },
    );
    o.out(`Created topic ${o.topic} (partitions ${o.partitions}, replication factor ${o.replicationFactor}, min.insync.replicas ${o.minInsyncReplicas}).`);
  } catch (err) {
    const e = (err as { errors?: unknown[] }).errors?.[0] ?? err;
    if (!(e instanceof KafkaError && e.errorName === 'TOPIC_ALREADY_EXISTS') && !/already exists/i.test((e as Error).message)) throw err;
    o.out(`Topic ${o.topic} exists; using it.`);
  } finally {
    await admin.close();
  }
  // metadata propagates: wait until every partition has a leader
  const admin2 = openAdmin(defaults, o.adminDeps ?? {});
  try {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const [d] = await admin2.describeTopics([o.topic]).catch(() => [undefined]);
      if (d && d.partitions.length > 0 && d.partitions.every((p) => p.leader !== null)) break;
      if (Date.now() > deadline) throw new Error(`topic ${o.topic}: not every partition has a leader after 60 s`);
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    await admin2.close();
  }
}

/** Runs the workload, then the check; returns the report (the caller prints it and picks the exit code). */
export async function runVerify(o: VerifyRunOptions): Promise<VerifyReport> {
  await ensureVerifyTopic(o);
  const started = Date.now();
  const w = startWorkload({
    bootstrap: o.bootstrap,
    topic: o.topic,
    producers: o.producers,
    idempotent: o.idempotent,
    compression: o.compression,
    acks: o.acks,
    messagesPerSec: o.rate,
    ...(o.transactional ? { transactional: o.transactional } : {}),
    ...(o.messages !== undefined ? { maxMessages: o.messages } : {}),
    ...(o.logger ? { logger: o.logger } : {}),
    ...o.security,
  });
  o.out(
    `Producing to ${o.topic} (run ${w.runId}): ${o.producers} producers, ${o.transactional ? `transactional (transactions of ${o.transactional.size}, ${o.transactional.abortEvery ? `1 in ${o.transactional.abortEvery}` : 'none'} aborted)` : o.idempotent ? 'idempotent' : 'not idempotent'}, acks=${o.acks === -1 ? 'all' : o.acks}, compression ${o.compression}, ${o.rate || 'unlimited'} msgs/s, ${o.messages !== undefined ? `${o.messages} messages` : `for ${Math.round((o.durationMs ?? 0) / 1000)} s`}.`,
  );
  const progress = setInterval(() => {
    const s = w.stats();
    o.out(
      `  ${Math.round((Date.now() - started) / 1000)} s: ${s.attempted} sent, ${s.acknowledged} acknowledged, ${s.failed} failed, ${s.outstanding} in flight`,
    );
  }, 10_000);
  try {
    const waits: Promise<unknown>[] = [];
    if (o.messages !== undefined) waits.push(w.done);
    else waits.push(new Promise((r) => setTimeout(r, o.durationMs ?? 60_000)));
    if (o.during) waits.push(o.during(() => w.stats()));
    await Promise.all(waits);
  } finally {
    clearInterval(progress);
  }
  const result = await w.stop();
  o.out(`Stopped: ${result.attempted} sent, ${result.acked.length} acknowledged, ${result.failed} failed. Reading ${o.topic} back...`);
  return checkTopic({
    bootstrap: o.bootstrap,
    topic: o.topic,
    acked: result,
    ...(o.logDirs ? { replicaLogDirs: o.logDirs } : {}),
    timeoutMs: o.checkTimeoutMs,
    ...(o.logger ? { logger: o.logger } : {}),
    ...o.security,
  });
}

export interface RawVerifyOptions {
  bootstrapServer?: string;
  topic?: string;
  partitions: string;
  replicationFactor: string;
  minInsyncReplicas: string;
  duration?: string;
  messages?: string;
  producers: string;
  idempotence: boolean;
  compression: string;
  acks: string;
  rate: string;
  transactional?: boolean;
  transactionSize?: string;
  abortEvery?: string;
  logDirs?: string;
  checkTimeout: string;
  json?: boolean;
  verbose?: boolean;
  commandConfig?: string;
}

/** Parses the command's options into a run (no I/O but reading the --command-config file and the files it names, through `read`). */
export function verifyRunOptions(raw: RawVerifyOptions, out: (s: string) => void, read: (path: string) => string | Buffer = fileReader({})): VerifyRunOptions {
  if (!raw.bootstrapServer) throw new Error('Missing required option --bootstrap-server');
  const security = clientSecurityFromProperties(
    readCommandConfig(raw.commandConfig, (f) => read(f).toString()),
    read,
  );
  const acks = parseAcks(raw.acks);
  if (raw.transactional && (!raw.idempotence || acks !== -1)) throw new Error('--transactional needs idempotence and --acks all');
  return {
    bootstrap: raw.bootstrapServer,
    topic: raw.topic ?? `samsa-verify-${Date.now()}`,
    partitions: parseIntOption('--partitions', raw.partitions, 1),
    replicationFactor: parseIntOption('--replication-factor', raw.replicationFactor, 1),
    minInsyncReplicas: parseIntOption('--min-insync-replicas', raw.minInsyncReplicas, 1),
    ...(raw.messages !== undefined ? { messages: parseIntOption('--messages', raw.messages, 1) } : { durationMs: parseDuration(raw.duration ?? '60s') }),
    producers: parseIntOption('--producers', raw.producers, 1),
    idempotent: raw.idempotence,
    compression: parseCompression(raw.compression),
    acks,
    rate: parseIntOption('--rate', raw.rate, 0),
    ...(raw.transactional
      ? {
          transactional: {
            size: parseIntOption('--transaction-size', raw.transactionSize ?? '10', 1),
            abortEvery: parseIntOption('--abort-every', raw.abortEvery ?? '7', 0),
          },
        }
      : {}),
    ...(raw.logDirs ? { logDirs: parseLogDirs(raw.logDirs) } : {}),
    checkTimeoutMs: parseDuration(raw.checkTimeout),
    ...(security.tls || security.sasl ? { security } : {}),
    ...(raw.verbose ? { logger: pino({ level: 'info' }, pino.destination(2)) as unknown as Logger } : {}),
    out,
  };
}

/** The options samsa verify and samsa chaos share. */
export function addVerifyOptions(cmd: Command): Command {
  return cmd
    .option('--topic <name>', 'topic to write and check (created when missing; default samsa-verify-<time>)')
    .option('--partitions <n>', 'partitions when creating the topic', '3')
    .option('--replication-factor <n>', 'replication factor when creating the topic', '3')
    .option('--min-insync-replicas <n>', 'min.insync.replicas when creating the topic', '2')
    .option('--messages <n>', 'stop after this many messages (instead of --duration)')
    .option('--producers <n>', 'producer instances', '2')
    .option('--no-idempotence', 'enable.idempotence=false (duplicates are then allowed)')
    .option('--compression <codec>', 'none, gzip, snappy, lz4 or zstd', 'none')
    .option('--acks <acks>', 'all, -1, 1 or 0', 'all')
    .option('--rate <msgs/s>', 'total messages per second (0: unlimited)', '500')
    .option('--transactional', 'transactional producers (transactional.id per producer); read back with read_committed')
    .option('--transaction-size <n>', 'records per transaction (--transactional)', '10')
    .option('--abort-every <k>', 'abort every k-th transaction of each producer, 0: never (--transactional)', '7')
    .option('--log-dirs <id=dir,...>', "each broker's log.dirs, to compare the replicas' logs (divergence check)")
    .option('--check-timeout <duration>', 'how long the read-back may take', '120s')
    .option('--command-config <file>', 'client properties (security.protocol, ssl.*, sasl.mechanism, sasl.jaas.config) for every connection')
    .option('--json', 'print the report as JSON after the table')
    .option('--verbose', 'client logs (pino) on stderr');
}

const DESCRIPTION =
  'Write unique sequenced values (acks=all, idempotent), read everything back and report lost acknowledged writes, duplicates, reordering and divergent replicas; exits 1 on any violation';

function defineVerifyOptions(cmd: Command): Command {
  return addVerifyOptions(
    cmd.option('--bootstrap-server <servers>', 'the cluster (host:port,...)').option('--duration <duration>', 'how long to produce (e.g. 60s, 5m)', '60s'),
  );
}

/** Runs the workload and the check, prints the table (and --json); exit code 1 on any violation. */
export async function executeVerifyCommand(raw: RawVerifyOptions, io: CommandIo, deps: AdminToolDeps = {}): Promise<number> {
  const out = printer(io);
  const report = await runVerify({ ...verifyRunOptions(raw, out, deps.readFile), adminDeps: deps });
  out('');
  out(formatReport(report));
  if (raw.json) out(JSON.stringify(report, null, 2));
  return report.ok ? 0 : 1;
}

export const verifyCommand = (deps: AdminToolDeps = {}): CommandBuilder =>
  commandBuilder('verify', DESCRIPTION, defineVerifyOptions, (raw: RawVerifyOptions, io) => executeVerifyCommand(raw, io, deps));

export function registerVerifyCommand(program: Command): void {
  registerCommand(program, verifyCommand());
}
