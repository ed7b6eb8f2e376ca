import type { BrokerConfig, KafkaServer } from '@samsa/broker';
import { startConsole, type RunningConsole } from '@samsa/console';
import type { Logger } from 'pino';

/**
 * The broker's hook for `console.port`: once the broker serves, the web console runs in the same
 * process, bootstrapping from this broker's own inter-broker (client-serving) listener and binding
 * to `metrics.host` (empty: all interfaces). `console.port=0` takes any free port (logged).
 * Unset: nothing runs. The console is a client of the cluster like any other (admin client and
 * metrics endpoints); @samsa/broker does not depend on it.
 */
export async function startBrokerConsole(server: KafkaServer, config: BrokerConfig, logger: Logger): Promise<RunningConsole | null> {
  const port = config.get('console.port');
  if (port === null || port < 0) return null;
  const endpoints = server.brokerInfo().endpoints;
  const own = endpoints.find((e) => e.listenerName === config.interBrokerListenerName) ?? endpoints[0];
  if (!own) throw new Error('console.port is set but the broker has no listener to bootstrap the console from');
  const running = await startConsole({
    bootstrapServers: `${own.host}:${own.port}`,
    port,
    host: config.get('metrics.host'),
    logger: logger.child({ component: 'console' }),
  });
  logger.info({ url: running.url, port: running.port }, 'web console started (console.port)');
  return running;
}
