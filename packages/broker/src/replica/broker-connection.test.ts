import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeRequest, encodeResponse } from '@samsa/protocol';
import { BrokerConnection } from './broker-connection.js';

const API_VERSIONS = 18;

/** A server answering ApiVersions v0 requests, except those `silent` picks (left unanswered). */
async function server(silent: (n: number) => boolean): Promise<{ srv: Server; port: number; sockets: Socket[] }> {
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
        s.write(encodeResponse(API_VERSIONS, 0, req.header.correlationId, { errorCode: 0, apiKeys: [{ apiKey: 0, minVersion: 0, maxVersion: 9 }], throttleTimeMs: 0, supportedFeatures: [], finalizedFeaturesEpoch: -1n, finalizedFeatures: [], zkMigrationReady: false }));
      }
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const addr = srv.address();
  return { srv, port: typeof addr === 'object' && addr ? addr.port : 0, sockets };
}

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

describe('broker connection', () => {
  it('broker connection – answered requests in a row, then one the server never answers times out after timeoutMs', async () => {
    const { srv, port, sockets } = await server((n) => n === 3);
    const conn = new BrokerConnection('127.0.0.1', port, 'test', 300);
    cleanups.push(() => {
      conn.close();
      sockets.forEach((s) => s.destroy());
      srv.close();
    });
    for (let i = 0; i < 3; i++) expect((await conn.send(API_VERSIONS, 0, {} as never)).errorCode).toBe(0);
    const t0 = Date.now();
    await expect(conn.send(API_VERSIONS, 0, {} as never)).rejects.toThrow(/^request 18 to 127\.0\.0\.1:\d+ timed out after 300 ms$/);
    // the timer was armed by the first request and re-armed for each: the wait counts from the last one
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
    // the timed-out connection was dropped: the next request reconnects and is answered
    expect((await conn.send(API_VERSIONS, 0, {} as never)).errorCode).toBe(0);
  });

  it('broker connection – a request sent after the timer fired idle still gets its full timeout', async () => {
    const { srv, port, sockets } = await server((n) => n === 1);
    const conn = new BrokerConnection('127.0.0.1', port, 'test', 200);
    cleanups.push(() => {
      conn.close();
      sockets.forEach((s) => s.destroy());
      srv.close();
    });
    expect((await conn.send(API_VERSIONS, 0, {} as never)).errorCode).toBe(0);
    // let the timer armed for the first request fire with nothing pending
    await new Promise((r) => setTimeout(r, 300));
    const t0 = Date.now();
    await expect(conn.send(API_VERSIONS, 0, {} as never)).rejects.toThrow(/timed out after 200 ms/);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(190);
  });

  it('broker connection – a request answered just before its timeout is not failed by the timer of an earlier one', async () => {
    // the server answers each request 120 ms late; timeout 200 ms: a timer armed for request 1 and
    // not re-armed would fire during request 2
    const sockets: Socket[] = [];
    const srv = createServer((s) => {
      sockets.push(s);
      s.on('data', (d: Buffer) => {
        const req = decodeRequest(d.subarray(4));
        if (!req.ok) throw new Error('bad request');
        setTimeout(() => s.write(encodeResponse(API_VERSIONS, 0, req.header.correlationId, { errorCode: 0, apiKeys: [], throttleTimeMs: 0, supportedFeatures: [], finalizedFeaturesEpoch: -1n, finalizedFeatures: [], zkMigrationReady: false })), 120);
      });
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
    const addr = srv.address();
    const conn = new BrokerConnection('127.0.0.1', typeof addr === 'object' && addr ? addr.port : 0, 'test', 200);
    cleanups.push(() => {
      conn.close();
      sockets.forEach((s) => s.destroy());
      srv.close();
    });
    for (let i = 0; i < 4; i++) expect((await conn.send(API_VERSIONS, 0, {} as never)).errorCode).toBe(0);
  });
});
