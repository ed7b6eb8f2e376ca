import { createServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { decodeRequest, encodeResponse } from '@samsa/protocol';
import { BrokerConnection, type ConnectHook } from './broker-connection.js';

const API_VERSIONS = 18;

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/**
 * A BrokerConnection (request timeout `timeoutMs`) to a server answering ApiVersions v0 requests
 * `delayMs` late, except those `silent` picks (left unanswered); both closed after the test.
 */
async function connection(
  timeoutMs: number,
  { silent = () => false, delayMs = 0, onConnect }: { silent?: (n: number) => boolean; delayMs?: number; onConnect?: ConnectHook } = {},
): Promise<BrokerConnection> {
  const sockets: Socket[] = [];
  let n = 0;
  const srv = createServer((s) => {
    sockets.push(s);
    let buf = Buffer.alloc(0);
    s.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      while (buf.length >= 4 && buf.length >= 4 + buf.readInt32BE(0)) {
        const frame = buf.subarray(4, 4 + buf.readInt32BE(0));
        buf = buf.subarray(4 + frame.length);
        const req = decodeRequest(frame);
        if (!req.ok) throw new Error('bad request');
        if (silent(n++)) continue;
        const answer = encodeResponse(API_VERSIONS, 0, req.header.correlationId, {
          errorCode: 0,
          apiKeys: [{ apiKey: 0, minVersion: 0, maxVersion: 9 }],
          throttleTimeMs: 0,
          supportedFeatures: [],
          finalizedFeaturesEpoch: -1n,
          finalizedFeatures: [],
          zkMigrationReady: false,
        });
        if (delayMs > 0) setTimeout(() => s.write(answer), delayMs);
        else s.write(answer);
      }
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const addr = srv.address();
  const conn = new BrokerConnection('127.0.0.1', typeof addr === 'object' && addr ? addr.port : 0, 'test', timeoutMs, onConnect);
  cleanups.push(() => {
    conn.close();
    sockets.forEach((s) => s.destroy());
    srv.close();
  });
  return conn;
}

const apiVersions = (conn: BrokerConnection) => conn.send(API_VERSIONS, 0, {} as never);

describe('broker connection', () => {
  it('broker connection – answered requests in a row, then one the server never answers times out after timeoutMs', async () => {
    const conn = await connection(300, { silent: (n) => n === 3 });
    for (let i = 0; i < 3; i++) expect((await apiVersions(conn)).errorCode).toBe(0);
    const t0 = Date.now();
    await expect(apiVersions(conn)).rejects.toThrow(/^request 18 to 127\.0\.0\.1:\d+ timed out after 300 ms$/);
    // the timer was armed by the first request and re-armed for each: the wait counts from the last one
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
    // the timed-out connection was dropped: the next request reconnects and is answered
    expect((await apiVersions(conn)).errorCode).toBe(0);
  });

  it('broker connection – a request sent after the timer fired idle still gets its full timeout', async () => {
    const conn = await connection(200, { silent: (n) => n === 1 });
    expect((await apiVersions(conn)).errorCode).toBe(0);
    // let the timer armed for the first request fire with nothing pending
    await new Promise((r) => setTimeout(r, 300));
    const t0 = Date.now();
    await expect(apiVersions(conn)).rejects.toThrow(/timed out after 200 ms/);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(190);
  });

  it('broker connection – a request answered just before its timeout is not failed by the timer of an earlier one', async () => {
    // each answer comes 120 ms late, the timeout is 200 ms: a timer armed for request 1 and not
    // re-armed would fire during request 2
    const conn = await connection(200, { delayMs: 120 });
    for (let i = 0; i < 4; i++) expect((await apiVersions(conn)).errorCode).toBe(0);
  });
});

describe('broker connection – connect hook (inter-broker SASL)', () => {
  it('broker connection – the hook runs on each new connection before its first request; a failing hook fails the request; a session lifetime renews the connection', async () => {
    const seen: string[] = [];
    let fail = false;
    let lifetime = 0;
    const conn = await connection(2_000, {
      onConnect: async (send) => {
        seen.push('hook');
        await send(API_VERSIONS, 0, {} as never);
        if (fail) throw new Error('SASL authentication failed');
        return { sessionLifetimeMs: lifetime };
      },
    });
    await apiVersions(conn);
    await apiVersions(conn);
    expect(seen).toEqual(['hook']);

    // a lifetime: the connection is replaced (re-authenticated) once 85 % of it has passed
    conn.close();
    const renewing = await connection(2_000, {
      onConnect: async (send) => {
        seen.push('renew');
        await send(API_VERSIONS, 0, {} as never);
        if (fail) throw new Error('SASL authentication failed');
        return { sessionLifetimeMs: lifetime };
      },
    });
    lifetime = 1000;
    const t0 = Date.now();
    const now = vi.spyOn(Date, 'now');
    try {
      now.mockReturnValue(t0);
      await apiVersions(renewing);
      now.mockReturnValue(t0 + 800);
      await apiVersions(renewing);
      expect(seen.filter((s) => s === 'renew')).toHaveLength(1);
      now.mockReturnValue(t0 + 900);
      fail = true;
      await expect(apiVersions(renewing)).rejects.toThrow(/SASL authentication failed/);
      expect(seen.filter((s) => s === 'renew')).toHaveLength(2);
    } finally {
      now.mockRestore();
    }
  });
});
