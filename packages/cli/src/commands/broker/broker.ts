import type { Command } from 'commander';
import { ConfigError, KafkaServer, loadBrokerConfig } from '@samsa/broker';
import { createBrokerLoggers } from './broker-logging.js';
import { startBrokerConsole } from './broker-console.js';
import type { RunningConsole } from '@samsa/console';

/** `samsa broker start server.properties [--override k=v]…` — kafka-server-start.sh. */
export function registerBrokerCommands(program: Command): void {
  const broker = program.command('broker').description('run a Samsa broker');
  broker
    .command('start')
    .description('start a broker in the foreground (like kafka-server-start.sh); SIGTERM or Ctrl-C stops it cleanly')
    .argument('[server.properties]', 'broker configuration file (Kafka names)')
    .option('--override <key=value>', 'override a configuration (repeatable)', (v: string, acc: string[]) => [...acc, v], [] as string[])
    .action(async (file: string | undefined, opts: { override: string[] }) => {
      let config;
      try {
        config = await loadBrokerConfig({ ...(file ? { file } : {}), overrides: opts.override });
      } catch (err) {
        if (err instanceof ConfigError) {
          process.stderr.write(`samsa broker: invalid configuration: ${err.message}\n`);
          process.exit(1);
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
    });
}
