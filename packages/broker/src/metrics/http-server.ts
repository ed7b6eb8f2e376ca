import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Logger } from 'pino';

/** Why the broker is not ready yet (an empty list: ready). */
export type ReadinessCheck = () => string[];

export interface MetricsHttpServerOptions {
  host: string;
  port: number;
  scrape: () => Promise<{ contentType: string; body: string }>;
  readiness: ReadinessCheck;
  /** GET /state-change?since=<seq>: the newest state-change records (StateChangeRing); absent: 404. */
  stateChanges?: (since: number) => unknown;
  logger: Logger;
}

/**
 * The broker's HTTP endpoint (metrics.port): GET /metrics (Prometheus text format), /health
 * (liveness: 200 while the process serves) and /ready (200 once registered and caught up on
 * metadata, else 503 with a JSON body listing what is missing) and /state-change (the newest
 * state-change records as JSON, for the web console's timeline).
 */
export class MetricsHttpServer {
  private server: Server | undefined;
  boundPort = 0;

  constructor(private readonly o: MetricsHttpServerOptions) {}

  async start(): Promise<number> {
    const server = createServer((req, res) => void this.serve(req, res));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.o.port, this.o.host || undefined, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const addr = server.address();
    this.boundPort = addr && typeof addr === 'object' ? addr.port : this.o.port;
    this.o.logger.info({ host: this.o.host, port: this.boundPort }, 'metrics endpoint listening');
    return this.boundPort;
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const [path, query] = (req.url ?? '/').split('?') as [string, string | undefined];
    if (req.method !== 'GET' && req.method !== 'HEAD') return this.json(res, 405, { error: 'method not allowed' });
    try {
      switch (path) {
        case '/metrics': {
          const { contentType, body } = await this.o.scrape();
          res.writeHead(200, { 'content-type': contentType });
          res.end(body);
          return;
        }
        case '/health':
          return this.json(res, 200, { status: 'UP' });
        case '/ready': {
          const reasons = this.o.readiness();
          return this.json(res, reasons.length === 0 ? 200 : 503, reasons.length === 0 ? { ready: true } : { ready: false, reasons });
        }
        case '/state-change':
          if (this.o.stateChanges) return this.json(res, 200, this.o.stateChanges(Number(new URLSearchParams(query ?? '').get('since') ?? '0') || 0));
          return this.json(res, 404, { error: 'the state-change stream is not kept by this broker' });
        default:
          return this.json(res, 404, { error: `no such path ${path}`, paths: ['/metrics', '/health', '/ready', '/state-change'] });
      }
    } catch (err) {
      this.o.logger.error({ err, path }, 'metrics endpoint failed');
      return this.json(res, 500, { error: (err as Error).message });
    }
  }

  private json(res: ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
}
