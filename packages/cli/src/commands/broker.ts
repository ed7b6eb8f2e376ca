import type { Command } from 'commander';
import pino from 'pino';
import { ConfigError, KafkaServer, loadBrokerConfig } from '@samsa/broker';

/** `samsa broker start server.properties [--override k=v]…` — kafka-server-start.sh. */
export function registerBrokerCommands(program: Command): void {
  const broker = program.command('broker').description('run a Samsa broker');
  broker
    .command('start')
    .description('start a broker in the foreground (like kafka-server-start.sh); SIGTERM or Ctrl-C stops it cleanly')
    .argument('[server.properties]', 'broker configuration file (Kafka names)')
    .option('--override <key=value>', 'override a configuration (repeatable)', (v: string, acc: string[]) => [...acc, v], [] as string[])
    .action(async (file: string | undefined, opts: { override: string[] }) => {
      const logger = pino({ level: process.env['SAMSA_LOG_LEVEL'] ?? 'info', base: { pid: process.pid } });
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
      const server = new KafkaServer({ config, logger, stateChangeLogger: logger.child({ name: 'state.change.logger' }) });
      let stopping = false;
      const stop = (sig: string) => {
        if (stopping) return;
        stopping = true;
        logger.info({ signal: sig }, 'stopping broker');
        server
          .shutdown()
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
    });
}
