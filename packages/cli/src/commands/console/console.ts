import type { Command } from 'commander';
import pino from 'pino';
import { startConsole } from '@samsa/console';
import { commandBuilder, registerCommand, type CommandBuilder, type CommandIo } from '../../shared/runner.js';

/**
 * `samsa console --bootstrap-server host:port [--port 8080] [--host 127.0.0.1] [--metrics-urls …]`:
 * the web console (@samsa/console) in the foreground; Ctrl-C or SIGTERM stops it.
 */

export interface ConsoleCommandOptions {
  bootstrapServers: string;
  port: number;
  host: string;
  metricsUrls?: string;
  pollIntervalMs: number;
}

export class ConsoleUsageError extends Error {}

/** Validates the raw flags (commander leaves them strings). */
export function parseConsoleOptions(raw: {
  bootstrapServer?: string;
  port?: string;
  host?: string;
  metricsUrls?: string;
  pollIntervalMs?: string;
}): ConsoleCommandOptions {
  if (!raw.bootstrapServer || raw.bootstrapServer.trim() === '') throw new ConsoleUsageError('Missing required argument "[bootstrap-server]"');
  const port = Number(raw.port ?? '8080');
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConsoleUsageError(`--port must be a port number (0-65535), not ${raw.port}`);
  const poll = Number(raw.pollIntervalMs ?? '1000');
  if (!Number.isInteger(poll) || poll < 100) throw new ConsoleUsageError(`--poll-interval-ms must be an integer of at least 100, not ${raw.pollIntervalMs}`);
  return {
    bootstrapServers: raw.bootstrapServer.trim(),
    port,
    host: raw.host ?? '127.0.0.1',
    pollIntervalMs: poll,
    ...(raw.metricsUrls ? { metricsUrls: raw.metricsUrls } : {}),
  };
}

type RawConsoleOptions = { bootstrapServer?: string; port?: string; host?: string; metricsUrls?: string; pollIntervalMs?: string };

function defineConsoleOptions(cmd: Command): Command {
  return cmd
    .option('--bootstrap-server <host:port>', 'REQUIRED: the server(s) to connect to (comma-separated)')
    .option('--port <port>', 'HTTP port of the console (0: any free port)', '8080')
    .option('--host <host>', 'interface to bind (0.0.0.0: all)', '127.0.0.1')
    .option('--metrics-urls <urls>', "brokers' metrics endpoints, comma-separated (default: discovered from each broker's metrics.port)")
    .option('--poll-interval-ms <ms>', 'how often the cluster is polled', '1000');
}

/** Starts the console and leaves it running (exit code untouched); a bad flag: the message on stderr, exit code 1. */
export async function executeConsoleCommand(raw: RawConsoleOptions, io: CommandIo): Promise<number | void> {
  let opts: ConsoleCommandOptions;
  try {
    opts = parseConsoleOptions(raw);
  } catch (err) {
    if (!(err instanceof ConsoleUsageError)) throw err;
    io.err(`samsa console: ${err.message}\n`);
    return 1;
  }
  const logger = pino({ level: process.env['SAMSA_LOG_LEVEL'] ?? 'info', base: { pid: process.pid } }, pino.destination(2));
  const running = await startConsole({ ...opts, logger });
  io.out(`Samsa console on ${running.url} (cluster ${opts.bootstrapServers}); Ctrl-C stops it\n`);
  const stop = () => {
    void running.stop().then(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

export const consoleCommand: CommandBuilder = commandBuilder(
  'console',
  'web console: cluster overview, topics and partition map, consumer groups and lag, controller event timeline, throughput',
  defineConsoleOptions,
  (raw: RawConsoleOptions, io) => executeConsoleCommand(raw, io),
);

export function registerConsoleCommand(program: Command): void {
  registerCommand(program, consoleCommand);
}
