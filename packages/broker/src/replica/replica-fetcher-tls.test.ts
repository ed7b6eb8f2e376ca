import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:tls';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { API_KEYS } from '@samsa/protocol';
import { generateCertificates } from '@samsa/local-cluster';
import type { BrokerConnection } from './broker-connection.js';
import { ReplicaFetcher } from './replica-fetcher.js';

describe('replica fetcher – TLS', () => {
  let dir: string;
  let server: Server;
  let port: number;
  let ca: string;
  const handshakes: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'samsa-fetcher-tls-'));
    const certs = await generateCertificates({ dir });
    ca = readFileSync(certs.caCert, 'utf8');
    server = createServer({ key: readFileSync(certs.broker.key), cert: readFileSync(certs.broker.cert) }, (s) => {
      handshakes.push(s.getProtocol() ?? 'unknown');
      s.destroy();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as { port: number }).port;
  });
  afterAll(async () => {
    await new Promise((r) => server?.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  it('replica fetcher – with tls (inter-broker SSL / SASL_SSL next to the SASL hook) its connection to the leader is TLS, host name verified', async () => {
    const fetcher = new ReplicaFetcher(
      1,
      '127.0.0.1',
      port,
      {
        brokerId: 0,
        maxWaitMs: 500,
        minBytes: 1,
        maxBytes: 1 << 20,
        partitionMaxBytes: 1 << 20,
        backoffMs: 100,
        requestTimeoutMs: 5000,
        onConnect: async () => ({ sessionLifetimeMs: 0 }),
        tls: { ca: [ca] },
      },
      pino({ level: 'silent' }),
    );
    // the fetcher's own connection (the one its fetch loop uses)
    const conn = (fetcher as unknown as { conn: BrokerConnection }).conn;
    await conn.send(API_KEYS.ApiVersions, 0, {} as never).catch(() => undefined);
    conn.close();
    await vi.waitFor(() => expect(handshakes).toHaveLength(1));
    expect(handshakes[0]).toMatch(/^TLSv1\.[23]$/);
  });
});
