import type { Logger } from 'pino';
import { ClusterCollector } from './collector.js';
import { parseMetricsUrls, type MetricsEndpoint } from './metrics-endpoints.js';
import { ConsoleHttpServer } from './server.js';

export * from './state.js';
export { ClusterCollector, unreachableHint, type CollectorOptions } from './collector.js';
export { ConsoleHttpServer } from './server.js';
export { parseMetricsUrls, normalizeMetricsUrl, endpointFromConfig, type MetricsEndpoint } from './metrics-endpoints.js';
export { diffSnapshots, type ClusterSnapshot } from './timeline.js';
export { groupLag, partitionLag } from './lag.js';
export { counterRate, ratesBetween } from './rates.js';
export { parsePrometheusText } from './prom-text.js';

export interface ConsoleOptions {
  bootstrapServers: string;
  /** 0: any free port. */
  port: number;
  /** Interface to bind; '' means all. */
  host?: string;
  /** Comma-separated metrics URLs; default: discovered from the brokers' metrics.port. */
  metricsUrls?: string;
  pollIntervalMs?: number;
  logger: Logger;
}

export interface RunningConsole {
  port: number;
  /** e.g. http://127.0.0.1:8080/ */
  url: string;
  collector: ClusterCollector;
  stop(): Promise<void>;
}

/** Starts the web console: the collector polling the cluster and the HTTP server showing it. */
export async function startConsole(o: ConsoleOptions): Promise<RunningConsole> {
  const metricsEndpoints: MetricsEndpoint[] | undefined = o.metricsUrls ? parseMetricsUrls(o.metricsUrls) : undefined;
  const collector = new ClusterCollector({
    bootstrapServers: o.bootstrapServers,
    logger: o.logger.child({ component: 'console-collector' }),
    ...(metricsEndpoints ? { metricsEndpoints } : {}),
    ...(o.pollIntervalMs ? { pollIntervalMs: o.pollIntervalMs } : {}),
  });
  const server = new ConsoleHttpServer({ host: o.host ?? '', port: o.port, collector, logger: o.logger.child({ component: 'console-http' }) });
  const port = await server.start();
  collector.start();
  const shownHost = !o.host || o.host === '0.0.0.0' || o.host === '::' ? '127.0.0.1' : o.host;
  return {
    port,
    url: `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${port}/`,
    collector,
    stop: async () => {
      await server.stop();
      await collector.stop();
    },
  };
}
