/**
 * The console's HTTP server (node:http): the page (/), its script modules (/js/*.js, compiled from
 * web/src by the project's tsc into dist/web), the JSON state (/api/state), the live updates as
 * Server-Sent Events (/api/events: a `state` event after every poll) and /health.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import type { ClusterCollector } from './collector.js';
import { PAGE_HTML, PAGE_CSS } from './page.js';

/** dist/web next to this module's directory (src/ in tests, dist/ when built). */
const WEB_DIR = fileURLToPath(new URL('../dist/web/', import.meta.url));
const SCRIPT = /^\/js\/([a-z][a-z0-9-]*\.js)$/;

export interface ConsoleHttpServerOptions {
  host: string;
  port: number;
  collector: ClusterCollector;
  logger: Logger;
}

export class ConsoleHttpServer {
  private server: Server | undefined;
  private readonly streams = new Set<ServerResponse>();
  private unsubscribe: (() => void) | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  boundPort = 0;

  constructor(private readonly o: ConsoleHttpServerOptions) {}

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
    this.unsubscribe = this.o.collector.onUpdate((s) => {
      const frame = `event: state\ndata: ${JSON.stringify(s)}\n\n`;
      for (const res of this.streams) res.write(frame);
    });
    // keeps proxies and idle timers from closing quiet streams
    this.heartbeat = setInterval(() => {
      for (const res of this.streams) res.write(': keep-alive\n\n');
    }, 15_000);
    this.heartbeat.unref();
    this.o.logger.info({ host: this.o.host, port: this.boundPort }, 'console listening');
    return this.boundPort;
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (req.method !== 'GET' && req.method !== 'HEAD') return this.send(res, 405, 'application/json', JSON.stringify({ error: 'method not allowed' }));
    try {
      if (path === '/' || path === '/index.html') return this.send(res, 200, 'text/html; charset=utf-8', PAGE_HTML);
      if (path === '/style.css') return this.send(res, 200, 'text/css; charset=utf-8', PAGE_CSS);
      if (path === '/health') return this.send(res, 200, 'application/json', JSON.stringify({ status: 'UP' }));
      if (path === '/api/state') return this.send(res, 200, 'application/json', JSON.stringify(this.o.collector.state));
      if (path === '/api/events') return this.stream(req, res);
      const script = SCRIPT.exec(path);
      if (script) {
        const body = await readFile(WEB_DIR + script[1]).catch(() => null);
        if (body === null) return this.send(res, 404, 'text/plain', `no such script ${path} (is the console built? npx tsc -b)`);
        return this.send(res, 200, 'text/javascript; charset=utf-8', body);
      }
      return this.send(res, 404, 'application/json', JSON.stringify({ error: `no such path ${path}` }));
    } catch (err) {
      this.o.logger.error({ err, path }, 'console request failed');
      return this.send(res, 500, 'application/json', JSON.stringify({ error: (err as Error).message }));
    }
  }

  private stream(req: IncomingMessage, res: ServerResponse): void {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    res.write(`retry: 2000\nevent: state\ndata: ${JSON.stringify(this.o.collector.state)}\n\n`);
    this.streams.add(res);
    req.on('close', () => this.streams.delete(res));
  }

  private send(res: ServerResponse, status: number, type: string, body: string | Buffer): void {
    res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
    res.end(body);
  }

  async stop(): Promise<void> {
    this.unsubscribe?.();
    if (this.heartbeat) clearInterval(this.heartbeat);
    for (const res of this.streams) res.end();
    this.streams.clear();
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
}
