import net from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  API_KEYS,
  ProtocolEncodeError,
  buildApiVersionsResponse,
  encodeResponse,
  encodeUnsupportedApiVersionsResponse,
  getApi,
  supportedApiVersions,
  type MetadataResponse,
} from '@samsa/protocol';
import { Connection } from './connection.js';
import { metadataRequestBody } from './cluster.js';
import { ConnectionError, RequestTimeoutError, UnsupportedApiError } from './errors.js';
import { CLOSE_CONNECTION, FakeBroker, RawResponse } from './testing/fake-broker.js';

const brokers: FakeBroker[] = [];
const conns: Connection[] = [];
afterEach(async () => {
  await Promise.all(conns.splice(0).map((c) => c.close()));
  await Promise.all(brokers.splice(0).map((b) => b.close()));
});

async function start(opts: Parameters<typeof FakeBroker.start>[0] = {}): Promise<FakeBroker> {
  const b = await FakeBroker.start(opts);
  brokers.push(b);
  return b;
}

async function connect(b: FakeBroker, opts: Partial<Parameters<typeof Connection.connect>[0]> = {}): Promise<Connection> {
  const c = await Connection.connect({ host: b.host, port: b.port, nodeId: b.nodeId, ...opts });
  conns.push(c);
  return c;
}

/** A Metadata answer whose clusterId tells which request it answers. */
const meta = (clusterId: string): MetadataResponse => ({
  throttleTimeMs: 0,
  brokers: [],
  clusterId,
  controllerId: -1,
  topics: [],
  clusterAuthorizedOperations: -2147483648,
});

const metadataOf = (topic: string) => (v: number) => metadataRequestBody([topic], v);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('Connection: ApiVersions negotiation', () => {
  it('sends ApiVersions v3 with the client software name and uses the highest common versions', async () => {
    const b = await start({
      apiVersions: [
        { apiKey: 18, minVersion: 0, maxVersion: 4 },
        { apiKey: 3, minVersion: 1, maxVersion: 99 },
        { apiKey: 19, minVersion: 0, maxVersion: 3 },
        { apiKey: 1000, minVersion: 0, maxVersion: 1 },
      ],
    });
    const c = await connect(b);
    const av = b.requestsFor(API_KEYS.ApiVersions);
    expect(av.map((r) => r.version)).toEqual([3]);
    expect(av[0]!.body).toMatchObject({ clientSoftwareName: 'samsa-client', clientSoftwareVersion: '0.1.0' });
    expect(av[0]!.clientId).toBe('samsa-client');
    expect(c.apiVersionsVersion).toBe(3);
    // capped to what @samsa/protocol knows
    expect(c.negotiatedVersion(API_KEYS.Metadata)).toBe(getApi(3)!.maxVersion);
    expect(c.negotiatedVersion(API_KEYS.CreateTopics)).toBe(3);
    expect(c.negotiatedVersion(API_KEYS.CreateTopics, { maxVersion: 1 })).toBe(1);
    expect(c.brokerApiVersions().get(1000)).toEqual({ minVersion: 0, maxVersion: 1 });
    expect(c.supports(API_KEYS.DeleteTopics)).toBe(false);
    expect(() => c.negotiatedVersion(API_KEYS.CreateTopics, { minVersion: 4 })).toThrow(
      /No usable CreateTopics version >= 4 .*the broker supports CreateTopics v0-3, this client v0-7/,
    );
  });

  it('KIP-511: falls back to the ApiVersions version listed in the v0 error answer', async () => {
    const b = await start({ maxApiVersionsVersion: 1 });
    const c = await connect(b);
    expect(b.requestsFor(API_KEYS.ApiVersions).map((r) => r.version)).toEqual([3, 1]);
    expect(c.apiVersionsVersion).toBe(1);
    expect(c.supports(API_KEYS.Metadata)).toBe(true);
    // the connection works normally afterwards
    b.on(API_KEYS.Metadata, () => meta('after-fallback'));
    expect((await c.send(API_KEYS.Metadata, metadataOf('t'))).clusterId).toBe('after-fallback');
  });

  it('KIP-511: a broker newer than the client answers our version normally, an older one without a list gets v0', async () => {
    const b = await start();
    b.on(API_KEYS.ApiVersions, (_req, ctx) =>
      ctx.version > 0
        ? new RawResponse(encodeUnsupportedApiVersionsResponse(ctx.correlationId, []))
        : buildApiVersionsResponse({ apiKeys: supportedApiVersions() }),
    );
    const c = await connect(b);
    expect(b.requestsFor(API_KEYS.ApiVersions).map((r) => r.version)).toEqual([3, 0]);
    expect(c.apiVersionsVersion).toBe(0);
  });

  it('a failed ApiVersions answer fails the connect', async () => {
    const b = await start();
    b.on(API_KEYS.ApiVersions, () => buildApiVersionsResponse({ errorCode: 31, apiKeys: [] }));
    await expect(Connection.connect({ host: b.host, port: b.port })).rejects.toMatchObject({ errorName: 'CLUSTER_AUTHORIZATION_FAILED' });
  });

  it('refuses APIs the broker does not advertise, naming them', async () => {
    const b = await start({ apiVersions: supportedApiVersions((k) => k !== API_KEYS.CreateTopics) });
    const c = await connect(b);
    const err = await c.send(API_KEYS.CreateTopics, { topics: [], timeoutMs: 1000, validateOnly: false }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnsupportedApiError);
    expect((err as UnsupportedApiError).message).toMatch(/does not support CreateTopics \(api key 19\): it is not advertised/);
    expect((err as UnsupportedApiError).errorName).toBe('UNSUPPORTED_VERSION');
    expect(b.requestsFor(API_KEYS.CreateTopics)).toHaveLength(0);
  });

  it('uses the broker maximum when it is below ours, and an explicit version when asked', async () => {
    const b = await start({
      apiVersions: [
        { apiKey: 18, minVersion: 0, maxVersion: 3 },
        { apiKey: 3, minVersion: 0, maxVersion: 5 },
      ],
    });
    b.on(API_KEYS.Metadata, (_req, ctx) => meta(`v${ctx.version}`));
    const c = await connect(b);
    expect((await c.send(API_KEYS.Metadata, metadataOf('t'))).clusterId).toBe('v5');
    const res = await c.request(API_KEYS.Metadata, metadataOf('t'), { version: 2 });
    expect(res.version).toBe(2);
    expect(res.body.clusterId).toBe('v2');
    await expect(c.send(API_KEYS.Metadata, metadataOf('t'), { version: 7 })).rejects.toThrow(/Metadata v7 cannot be used/);
  });

  it('rejects a body the chosen version cannot carry without touching the connection', async () => {
    const b = await start();
    const c = await connect(b);
    await expect(c.send(API_KEYS.CreateTopics, { topics: [], timeoutMs: 1, validateOnly: true }, { version: 0 })).rejects.toBeInstanceOf(ProtocolEncodeError);
    expect(c.isOpen).toBe(true);
    expect(c.inFlight).toBe(0);
  });
});

describe('Connection: pipelining', () => {
  it('keeps many requests in flight and matches each answer to its request', async () => {
    const b = await start();
    let seen = 0;
    let release!: () => void;
    const allIn = new Promise<void>((r) => (release = r));
    b.on(API_KEYS.Metadata, async (req) => {
      if (++seen === 50) release();
      await allIn; // nothing is answered before all 50 requests arrived
      await sleep(Math.random() * 5);
      return meta(req.topics![0]!.name!);
    });
    const c = await connect(b);
    const names = Array.from({ length: 50 }, (_, i) => `topic-${i}`);
    const pending = names.map((n) => c.send(API_KEYS.Metadata, metadataOf(n)));
    expect(c.inFlight).toBe(50);
    const answers = await Promise.all(pending);
    expect(answers.map((a) => a.clusterId)).toEqual(names);
    expect(c.inFlight).toBe(0);
    // correlation ids are consecutive on the wire
    const ids = b.requestsFor(API_KEYS.Metadata).map((r) => r.correlationId);
    expect(ids).toEqual(ids.map((_, i) => ids[0]! + i));
  });

  it('treats an answer out of request order as a protocol violation and fails every pending request', async () => {
    const b = await start({ ordered: false });
    b.on(API_KEYS.Metadata, async (req) => {
      // the first request is answered last
      await sleep(req.topics![0]!.name === 'first' ? 100 : 10);
      return meta(req.topics![0]!.name!);
    });
    const c = await connect(b);
    const closed = vi.fn();
    c.onClose(closed);
    const results = await Promise.allSettled([c.send(API_KEYS.Metadata, metadataOf('first')), c.send(API_KEYS.Metadata, metadataOf('second'))]);
    for (const r of results) {
      expect(r.status).toBe('rejected');
      const reason = (r as PromiseRejectedResult).reason as ConnectionError;
      expect(reason).toBeInstanceOf(ConnectionError);
      expect(reason.message).toMatch(/Correlation id for response \(\d+\) does not match request \(\d+, Metadata v12\)/);
    }
    expect(c.isOpen).toBe(false);
    expect(closed).toHaveBeenCalledOnce();
  });

  it('reads responses split across TCP chunks and several responses in one chunk', async () => {
    // a hand-written broker: answers two requests at once, byte by byte
    const server = net.createServer((s) => {
      let buf = Buffer.alloc(0);
      const frames: Buffer[] = [];
      s.on('data', (d: Buffer) => {
        buf = Buffer.concat([buf, d]);
        while (buf.length >= 4 && buf.length >= 4 + buf.readInt32BE(0)) {
          const size = buf.readInt32BE(0);
          const f = buf.subarray(4, 4 + size);
          buf = buf.subarray(4 + size);
          const apiKey = f.readInt16BE(0);
          const version = f.readInt16BE(2);
          const cid = f.readInt32BE(4);
          if (apiKey === 18) s.write(encodeResponse(18, version, cid, buildApiVersionsResponse()));
          else frames.push(encodeResponse(3, version, cid, meta(`cid-${cid}`)));
          if (frames.length === 2) {
            const all = Buffer.concat(frames.splice(0));
            let i = 0;
            const drip = () => {
              if (i >= all.length) return;
              s.write(all.subarray(i, i + 7));
              i += 7;
              setImmediate(drip);
            };
            drip();
          }
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    try {
      const c = await Connection.connect({ host: '127.0.0.1', port: (server.address() as net.AddressInfo).port });
      const [a, b] = await Promise.all([c.send(API_KEYS.Metadata, metadataOf('a')), c.send(API_KEYS.Metadata, metadataOf('b'))]);
      expect([a.clusterId, b.clusterId]).toEqual(['cid-1', 'cid-2']);
      await c.close();
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});

describe('Connection: failures', () => {
  it('rejects every pending request when the broker drops the connection', async () => {
    const b = await start();
    b.on(API_KEYS.Metadata, () => new Promise<never>(() => undefined));
    const c = await connect(b);
    const closed = new Promise<ConnectionError>((r) => c.onClose(r));
    const pending = [1, 2, 3].map((i) => c.send(API_KEYS.Metadata, metadataOf(`t${i}`)).catch((e: unknown) => e));
    await vi.waitFor(() => expect(b.requestsFor(API_KEYS.Metadata)).toHaveLength(3));
    b.dropConnections();
    const errors = await Promise.all(pending);
    for (const e of errors) {
      expect(e).toBeInstanceOf(ConnectionError);
      expect((e as ConnectionError).message).toMatch(
        /^Metadata request \(correlation id \d+\) failed: Connection to 127\.0\.0\.1:\d+ \(node 0\) was closed by the broker$/,
      );
      expect((e as ConnectionError).retriable).toBe(true);
    }
    expect((await closed).message).toMatch(/closed by the broker/);
    expect(c.isOpen).toBe(false);
    await expect(c.send(API_KEYS.Metadata, metadataOf('late'))).rejects.toThrow(/Cannot send Metadata: Connection to .* was closed by the broker/);
  });

  it('times a request out, failing it with RequestTimeoutError and closing the connection', async () => {
    const b = await start();
    b.on(API_KEYS.Metadata, (req) => (req.topics![0]!.name === 'slow' ? new Promise<never>(() => undefined) : meta('fast')));
    const c = await connect(b, { requestTimeoutMs: 5_000 });
    const t0 = Date.now();
    const slow = c.send(API_KEYS.Metadata, metadataOf('slow'), { timeoutMs: 150 }).catch((e: unknown) => e);
    const behind = c.send(API_KEYS.Metadata, metadataOf('fast')).catch((e: unknown) => e);
    const err = await slow;
    expect(err).toBeInstanceOf(RequestTimeoutError);
    expect((err as RequestTimeoutError).message).toMatch(/^Metadata v12 request \(correlation id \d+\) to 127\.0\.0\.1:\d+ \(node 0\) timed out after 150 ms$/);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
    // the answer queued behind the stuck one can never arrive: it fails too
    expect(await behind).toBeInstanceOf(ConnectionError);
    expect(c.isOpen).toBe(false);
  });

  it('times out a request whose timeout is shorter than that of an earlier pending request', async () => {
    // one timer per connection: it must be moved earlier for the second request
    const b = await start();
    b.on(API_KEYS.Metadata, () => new Promise<never>(() => undefined));
    const c = await connect(b, { requestTimeoutMs: 5_000 });
    const t0 = Date.now();
    const first = c.send(API_KEYS.Metadata, metadataOf('a'), { timeoutMs: 4_000 }).catch((e: unknown) => e);
    const second = c.send(API_KEYS.Metadata, metadataOf('b'), { timeoutMs: 150 }).catch((e: unknown) => e);
    const err = await second;
    expect(err).toBeInstanceOf(RequestTimeoutError);
    expect((err as RequestTimeoutError).message).toMatch(/timed out after 150 ms$/);
    expect(Date.now() - t0).toBeLessThan(3_000);
    expect(await first).toBeInstanceOf(ConnectionError);
  });

  it('close() rejects pending requests as closed by the client', async () => {
    const b = await start();
    b.on(API_KEYS.Metadata, () => new Promise<never>(() => undefined));
    const c = await connect(b);
    const p = c.send(API_KEYS.Metadata, metadataOf('x')).catch((e: unknown) => e);
    await c.close();
    expect(((await p) as Error).message).toMatch(/closed by the client/);
  });

  it('a broker closing the connection instead of answering', async () => {
    const b = await start();
    b.on(API_KEYS.Metadata, () => CLOSE_CONNECTION);
    const c = await connect(b);
    await expect(c.send(API_KEYS.Metadata, metadataOf('x'))).rejects.toBeInstanceOf(ConnectionError);
  });

  it('fails to connect to a closed port with a ConnectionError', async () => {
    const b = await start();
    const port = b.port;
    await b.close();
    brokers.length = 0;
    const err = await Connection.connect({ host: '127.0.0.1', port }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionError);
    expect((err as Error).message).toMatch(new RegExp(`^Connection to 127\\.0\\.0\\.1:${port} failed: .*ECONNREFUSED`));
  });

  it('times out connecting to a broker that accepts but never answers ApiVersions', async () => {
    const b = await start();
    b.on(API_KEYS.ApiVersions, () => new Promise<never>(() => undefined));
    await expect(Connection.connect({ host: b.host, port: b.port, requestTimeoutMs: 100 })).rejects.toBeInstanceOf(RequestTimeoutError);
  });
});
