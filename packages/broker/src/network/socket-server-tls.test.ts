import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect as netConnect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect, type ConnectionOptions, type TLSSocket } from 'node:tls';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generateCertificates, type GeneratedCertificates } from '@samsa/local-cluster';
import { buildBrokerConfig } from '../config/broker-config.js';
import type { SecurityProtocol } from '../config/definitions.js';
import { serverTls } from '../security/ssl-factory.js';
import { SocketServer, type ConnectionInfo } from './socket-server.js';

const logger = pino({ level: 'silent' });
let certs: GeneratedCertificates;
let other: GeneratedCertificates;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'samsa-socket-tls-'));
  certs = await generateCertificates({ dir: join(dir, 'a'), clients: { alice: 'CN=alice,OU=eng,O=Samsa' } });
  // a second CA: its client certificate is not trusted by the broker
  other = await generateCertificates({ dir: join(dir, 'b'), clients: { mallory: 'CN=mallory,O=Elsewhere' } });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function frame(payload: Buffer): Buffer {
  const f = Buffer.allocUnsafe(4 + payload.length);
  f.writeInt32BE(payload.length, 0);
  payload.copy(f, 4);
  return f;
}

const closed = (s: Socket) => new Promise<void>((r) => (s.destroyed ? r() : s.once('close', () => r())));

describe('socket server tls', () => {
  const servers: SocketServer[] = [];
  const sockets: Socket[] = [];
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    for (const s of servers.splice(0)) await s.stop();
  });

  /** An echo server on a TLS listener; `seen` collects the ConnectionInfo of each request. */
  async function start(props: Record<string, string> = {}, securityProtocol: SecurityProtocol = 'SSL', handshakeMs?: number) {
    const config = buildBrokerConfig({
      properties: {
        'zookeeper.connect': '127.0.0.1:2181',
        'ssl.keystore.type': 'PEM',
        'ssl.keystore.location': certs.broker.keystore,
        'ssl.truststore.type': 'PEM',
        'ssl.truststore.location': certs.caCert,
        ...props,
      },
    });
    const seen: ConnectionInfo[] = [];
    const srv = new SocketServer({
      listener: 'SSL',
      securityProtocol,
      tls: serverTls(config, 'SSL'),
      ...(handshakeMs !== undefined ? { tlsHandshakeTimeoutMs: handshakeMs } : {}),
      host: '127.0.0.1',
      port: 0,
      maxRequestSize: 1024 * 1024,
      idleTimeoutMs: 60_000,
      logger,
      handle: async (f, conn) => {
        seen.push({ ...conn });
        return frame(f);
      },
    });
    servers.push(srv);
    return { port: await srv.start(), seen };
  }

  const ca = () => [readFileSync(certs.caCert, 'utf8')];
  const asClient = (name: 'alice', set = certs) => ({ key: readFileSync(set.clients[name]!.key), cert: readFileSync(set.clients[name]!.cert) });

  async function tlsClient(port: number, o: ConnectionOptions = {}): Promise<TLSSocket> {
    const s = tlsConnect({ host: '127.0.0.1', port, ca: ca(), ...o });
    sockets.push(s);
    await new Promise<void>((resolve, reject) => {
      s.once('secureConnect', () => resolve());
      s.once('error', reject);
    });
    return s;
  }

  /** Sends one frame and resolves with the echoed payload. */
  async function roundTrip(s: Socket, payload: string): Promise<string> {
    const answer = new Promise<string>((resolve, reject) => {
      let buf = Buffer.alloc(0);
      s.on('data', (d: Buffer) => {
        buf = Buffer.concat([buf, d]);
        if (buf.length >= 4 && buf.length >= 4 + buf.readInt32BE(0)) resolve(buf.subarray(4, 4 + buf.readInt32BE(0)).toString());
      });
      s.once('close', () => reject(new Error('closed before the answer')));
    });
    s.write(frame(Buffer.from(payload)));
    return answer;
  }

  it('socket server tls – an SSL listener answers framed requests over TLS; ConnectionInfo carries SSL and, without client auth, no principal', async () => {
    const { port, seen } = await start();
    const s = await tlsClient(port);
    expect(await roundTrip(s, 'hello')).toBe('hello');
    expect(seen[0]).toMatchObject({ listener: 'SSL', securityProtocol: 'SSL' });
    expect(seen[0]!.principal).toBeUndefined();
  });

  it("socket server tls – ssl.client.auth=required: the client certificate's DN (RFC 2253) is the principal, User:CN=alice,OU=eng,O=Samsa", async () => {
    const { port, seen } = await start({ 'ssl.client.auth': 'required' });
    expect(await roundTrip(await tlsClient(port, asClient('alice')), 'x')).toBe('x');
    expect(seen[0]!.principal).toEqual({ principalType: 'User', name: 'CN=alice,OU=eng,O=Samsa' });
  });

  it('socket server tls – ssl.principal.mapping.rules map the DN: RULE:^CN=(.*?),OU=(.*?),.*$/$1@$2/U gives User:ALICE@ENG', async () => {
    const { port, seen } = await start({ 'ssl.client.auth': 'required', 'ssl.principal.mapping.rules': 'RULE:^CN=(.*?),OU=(.*?),.*$/$1@$2/U,DEFAULT' });
    await roundTrip(await tlsClient(port, asClient('alice')), 'x');
    expect(seen[0]!.principal).toEqual({ principalType: 'User', name: 'ALICE@ENG' });
  });

  it('socket server tls – a DN no mapping rule matches fails authentication: the connection is closed', async () => {
    const { port } = await start({ 'ssl.client.auth': 'required', 'ssl.principal.mapping.rules': 'RULE:^CN=(.*?),OU=ops.*$/$1/' });
    const s = tlsConnect({ host: '127.0.0.1', port, ca: ca(), ...asClient('alice') });
    sockets.push(s);
    s.on('error', () => undefined);
    await closed(s);
  });

  it('socket server tls – required: a client without a certificate or with an untrusted one fails the handshake; the listener keeps serving', async () => {
    const { port, seen } = await start({ 'ssl.client.auth': 'required' });
    for (const o of [{}, asClient('mallory' as 'alice', other)]) {
      const s = tlsConnect({ host: '127.0.0.1', port, ca: ca(), ...o });
      sockets.push(s);
      s.on('error', () => undefined);
      // TLS 1.3: the server's verdict on the certificate comes after the client's handshake is done
      s.on('secureConnect', () => s.write(frame(Buffer.from('nope'))));
      await closed(s);
    }
    expect(seen).toHaveLength(0);
    expect(await roundTrip(await tlsClient(port, asClient('alice')), 'still')).toBe('still');
  });

  it('socket server tls – requested: no certificate is served as User:ANONYMOUS (no principal), an untrusted one is closed', async () => {
    const { port, seen } = await start({ 'ssl.client.auth': 'requested' });
    expect(await roundTrip(await tlsClient(port), 'anon')).toBe('anon');
    expect(seen[0]!.principal).toBeUndefined();
    const bad = tlsConnect({ host: '127.0.0.1', port, ca: ca(), ...asClient('mallory' as 'alice', other) });
    sockets.push(bad);
    bad.on('error', () => undefined);
    await closed(bad);
    expect(await roundTrip(await tlsClient(port, asClient('alice')), 'alice')).toBe('alice');
    expect(seen[1]!.principal?.name).toBe('CN=alice,OU=eng,O=Samsa');
  });

  it('socket server tls – a plaintext Kafka request to the TLS port closes that connection; the listener keeps serving', async () => {
    const { port, seen } = await start();
    const s = netConnect({ host: '127.0.0.1', port });
    sockets.push(s);
    s.on('error', () => undefined);
    await new Promise((r) => s.once('connect', r));
    // an ApiVersions v0 request, as a plaintext client would send it
    const req = Buffer.alloc(14);
    req.writeInt16BE(18, 0);
    req.writeInt16BE(0, 2);
    req.writeInt32BE(1, 4);
    req.writeInt16BE(2, 8);
    req.write('me', 10);
    s.write(frame(req.subarray(0, 12)));
    await closed(s);
    expect(seen).toHaveLength(0);
    expect(await roundTrip(await tlsClient(port), 'ok')).toBe('ok');
  });

  it('socket server tls – a peer that never completes the handshake is closed after tlsHandshakeTimeoutMs', async () => {
    const { port } = await start({}, 'SSL', 200);
    const s = netConnect({ host: '127.0.0.1', port });
    sockets.push(s);
    s.on('error', () => undefined);
    const t0 = Date.now();
    await closed(s);
    expect(Date.now() - t0).toBeLessThan(5_000);
  });

  it('socket server tls – 200 garbage handshakes (random bytes, truncated and corrupted TLS records) are all closed quickly; the listener keeps serving', async () => {
    const { port } = await start({ 'ssl.client.auth': 'requested' });
    const hello = Buffer.from([0x16, 0x03, 0x01, 0x00, 0xc8, 0x01, 0x00, 0x00, 0xc4, 0x03, 0x03]);
    const t0 = Date.now();
    let seed = 7;
    const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff);
    for (let batch = 0; batch < 10; batch++) {
      await Promise.all(
        Array.from({ length: 20 }, async (_, i) => {
          const s = netConnect({ host: '127.0.0.1', port });
          s.on('error', () => undefined);
          await new Promise((r) => s.once('connect', r));
          const junk = Buffer.from(Array.from({ length: 1 + (rnd() % 600) }, () => rnd() & 0xff));
          // half start like a ClientHello record, then go wrong
          s.end(i % 2 === 0 ? Buffer.concat([hello, junk]) : junk);
          // read what the server answers (alerts): a socket with unread data never gets to 'close'
          s.resume();
          // 'close' after our FIN means the server closed its side too
          await closed(s);
        }),
      );
    }
    expect(Date.now() - t0).toBeLessThan(15_000);
    expect(servers[0]!.connectionCount).toBe(0);
    expect(await roundTrip(await tlsClient(port), 'alive')).toBe('alive');
  });

  it('socket server tls – on a SASL_SSL listener the certificate does not set the principal (SASL does)', async () => {
    const { port, seen } = await start({ 'ssl.client.auth': 'required' }, 'SASL_SSL');
    await roundTrip(await tlsClient(port, asClient('alice')), 'x');
    expect(seen[0]).toMatchObject({ securityProtocol: 'SASL_SSL' });
    expect(seen[0]!.principal).toBeUndefined();
  });
});
