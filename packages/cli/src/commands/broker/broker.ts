import type { Command } from 'commander';
import { ConfigError, KafkaServer, loadBrokerConfig } from '@samsa/broker';
import { createBrokerLoggers } from './broker-logging.js';
import { startBrokerConsole } from './broker-console.js';
import type { RunningConsole } from '@samsa/console';
import { commandBuilder, groupBuilder, registerCommand, type CommandBuilder, type CommandIo } from '../../shared/runner.js';

function defineStartOptions(cmd: Command): Command {
  return cmd
    .argument('[server.properties]', 'broker configuration file (Kafka names)')
    .option('--override <key=value>', 'override a configuration (repeatable)', (v: string, acc: string[]) => [...acc, v], [] as string[]);
}

/**
 * Starts the broker and leaves it running (exit code untouched; a signal stops it and exits); an
 * invalid configuration: the message on stderr, exit code 1.
 */
export async function executeBrokerStart(file: string | undefined, opts: { override: string[] }, io: CommandIo): Promise<number | void> {
  let config;
  try {
    config = await loadBrokerConfig({ ...(file ? { file } : {}), overrides: opts.override });
  } catch (err) {
    if (err instanceof ConfigError) {
      io.err(`samsa broker: invalid configuration: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
  const { logger, stateChangeLogger, stateChangeRing } = await createBrokerLoggers({
    level: process.env['SAMSA_LOG_LEVEL'] ?? 'info',
    stateChangeLogFile: config.get('state.change.log.file'),
  });
  const server = new KafkaServer({ config, logger, stateChangeLogger, stateChangeRing });
  let webConsole: RunningConsole | null = null;
  let stopping = false;
  const stop = (sig: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal: sig }, 'stopping broker');
    (webConsole?.stop() ?? Promise.resolve())
      .catch((err: unknown) => logger.warn({ err }, 'console stop failed'))
      .then(() => server.shutdown())
      .then(() => process.exit(0))
      .catch((err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('uncaughtException', (err) => {
    logger.fatal({ err }, 'uncaught exception');
    process.exit(1);
  });
  try {
    await server.startup();
  } catch (err) {
    logger.fatal({ err }, 'broker failed to start');
    await server.shutdown().catch(() => undefined);
    process.exit(1);
  }
  // the console is an add-on: a broker whose console cannot start (port taken) keeps serving
  webConsole = await startBrokerConsole(server, config, logger).catch((err: unknown) => {
    logger.error({ err, port: config.get('console.port') }, 'web console failed to start (console.port)');
    return null;
  });
}

const startCommand = commandBuilder(
  'start',
  'start a broker in the foreground (like kafka-server-start.sh); SIGTERM or Ctrl-C stops it cleanly',
  defineStartOptions,
  (opts: { override: string[] }, io, _cmd, args) => executeBrokerStart(args[0] as string | undefined, opts, io),
);

/** `samsa broker start server.properties [--override k=v]…` — kafka-server-start.sh. */
export const brokerCommand: CommandBuilder = groupBuilder('broker', 'run a Samsa broker', [startCommand]);

export function registerBrokerCommands(program: Command): void {
  registerCommand(program, brokerCommand);
}
