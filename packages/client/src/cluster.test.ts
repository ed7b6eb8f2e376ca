import { afterEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { API_KEYS, type KafkaError } from '@samsa/protocol';
import { Admin } from './admin.js';
import { Cluster } from './cluster.js';
import type { Logger } from './logger.js';
import { BatchError, ConnectionError, OperationTimeoutError } from './errors.js';
import { CLOSE_CONNECTION, FakeBroker } from './testing/fake-broker.js';
import { FakeCluster } from './testing/fake-cluster.js';

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function fakeCluster(opts: Parameters<typeof FakeCluster.start>[0] = {}): Promise<FakeCluster> {
  const fc = await FakeCluster.start(opts);
  cleanup.push(() => fc.close());
  return fc;
}

function admin(bootstrapServers: string, opts: Partial<ConstructorParameters<typeof Cluster>[0]> = {}): Admin {
  const a = new Admin({ bootstrapServers, retryBackoffMs: 10, retryBackoffMaxMs: 50, ...opts });
  cleanup.push(() => a.close());
  return a;
}

/** A port nothing listens on. */
async function deadPort(): Promise<number> {
  const b = await FakeBroker.start();
  const port = b.port;
  await b.close();
  return port;
}

describe('Cluster: bootstrap and metadata', () => {
  it('skips unreachable bootstrap servers and learns brokers, controller and cluster id', async () => {
    const fc = await fakeCluster({ brokers: [{ nodeId: 1, rack: 'r1' }, { nodeId: 2 }, { nodeId: 3 }], controllerId: 2, clusterId: 'abc' });
    const a = admin(`127.0.0.1:${await deadPort()},${fc.broker(3).address}`);
    const md = await a.cluster.connect();
    expect(md.clusterId).toBe('abc');
    expect(md.controllerId).toBe(2);
    expect(md.brokers.map((b) => [b.nodeId, b.port, b.rack])).toEqual([
      [1, fc.broker(1).port, 'r1'],
      [2, fc.broker(2).port, null],
      [3, fc.broker(3).port, null],
    ]);
    expect((await a.cluster.controllerConnection()).port).toBe(fc.broker(2).port);
    // one connection per broker id, reused
    expect(await a.cluster.connectionTo(1)).toBe(await a.cluster.connectionTo(1));
    expect(fc.broker(1).connectionCount).toBe(1);
  });

  it('gives up after the timeout when no bootstrap server answers', async () => {
    const c = new Cluster({ bootstrapServers: `127.0.0.1:${await deadPort()}`, retryBackoffMs: 10, retryBackoffMaxMs: 20 });
    cleanup.push(() => c.close());
    const t0 = Date.now();
    const err = await c.connect({ timeoutMs: 300 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OperationTimeoutError);
    expect((err as Error).message).toMatch(/^bootstrap timed out after 300 ms \(\d+ attempts\); last error: Could not connect to any broker/);
    expect((err as Error).cause).toBeInstanceOf(ConnectionError);
    expect(Date.now() - t0).toBeLessThan(2_000);
  });

  it('reconnects after a broker dropped its connections', async () => {
    const fc = await fakeCluster({ brokers: 1 });
    const a = admin(fc.bootstrapServers);
    fc.addTopic('t', [[0]]);
    expect(await a.listTopics()).toEqual(['t']);
    fc.broker(0).dropConnections();
    expect(await a.listTopics()).toEqual(['t']);
  });
});

describe('Cluster: controller requests and retries', () => {
  it('NOT_CONTROLLER: refreshes metadata and retries on the new controller', async () => {
    const fc = await fakeCluster({ brokers: 3, controllerId: 0 });
    const a = admin(fc.bootstrapServers);
    await a.cluster.connect();
    expect(a.cluster.metadata!.controllerId).toBe(0);
    fc.controllerId = 2; // the controller moves; the client's metadata is now stale
    const [created] = await a.createTopics([{ name: 'moved', numPartitions: 1, replicationFactor: 1 }]);
    expect(created!.name).toBe('moved');
    expect(fc.broker(0).requestsFor(API_KEYS.CreateTopics)).toHaveLength(1);
    expect(fc.broker(1).requestsFor(API_KEYS.CreateTopics)).toHaveLength(0);
    expect(fc.broker(2).requestsFor(API_KEYS.CreateTopics)).toHaveLength(1);
    expect(a.cluster.metadata!.controllerId).toBe(2);
    expect(fc.topics.has('moved')).toBe(true);
  });

  it('waits (with backoff) for a controller to be elected', async () => {
    const fc = await fakeCluster({ brokers: 2, controllerId: 1 });
    fc.live.delete(1); // metadata reports no controller (-1) while broker 1 is "down"
    const a = admin(fc.bootstrapServers);
    setTimeout(() => fc.live.add(1), 200);
    await a.deleteTopics([]).catch(() => undefined); // nothing to delete; still goes to the controller
    expect(fc.broker(1).requestsFor(API_KEYS.DeleteTopics)).toHaveLength(1);
    expect(fc.broker(0).requestsFor(API_KEYS.Metadata).length + fc.broker(1).requestsFor(API_KEYS.Metadata).length).toBeGreaterThan(2);
  });

  it('bounds retries by the operation timeout, reporting the last error', async () => {
    const fc = await fakeCluster({ brokers: 2, controllerId: 0 });
    // every broker claims not to be the controller
    fc.broker(0).on(API_KEYS.CreateTopics, (req) => ({
      throttleTimeMs: 0,
      topics: req.topics.map((t) => ({
        name: t.name,
        topicId: Buffer.alloc(16),
        errorCode: 41,
        errorMessage: null,
        topicConfigErrorCode: 0,
        numPartitions: -1,
        replicationFactor: -1,
        configs: null,
      })),
    }));
    const a = admin(fc.bootstrapServers);
    const t0 = Date.now();
    const err = await a.createTopics([{ name: 'x', numPartitions: 1, replicationFactor: 1 }], { timeoutMs: 400 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OperationTimeoutError);
    expect((err as Error).message).toMatch(/^createTopics timed out after 400 ms \(\d+ attempts\); last error: Broker .* \(node 0\) is not the controller$/);
    expect(((err as Error).cause as KafkaError).errorName).toBe('NOT_CONTROLLER');
    expect(Date.now() - t0).toBeLessThan(1_500);
    expect(fc.broker(0).requestsFor(API_KEYS.CreateTopics).length).toBeGreaterThan(2);
  });

  it('retries a request whose connection was lost', async () => {
    const fc = await fakeCluster({ brokers: 1 });
    let calls = 0;
    const normal = fc.broker(0).handlers[API_KEYS.DeleteTopics]!;
    fc.broker(0).on(API_KEYS.DeleteTopics, (req, ctx) => (++calls === 1 ? CLOSE_CONNECTION : normal(req, ctx)));
    fc.addTopic('gone', [[0]]);
    const a = admin(fc.bootstrapServers);
    await a.deleteTopics(['gone']);
    expect(calls).toBe(2);
    expect(fc.topics.has('gone')).toBe(false);
  });

  it('does not retry non-retriable per-topic errors', async () => {
    const fc = await fakeCluster({ brokers: 1 });
    fc.addTopic('exists', [[0]]);
    const a = admin(fc.bootstrapServers);
    const err = await a.createTopics([{ name: 'exists', numPartitions: 1, replicationFactor: 1 }]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BatchError);
    expect(fc.broker(0).requestsFor(API_KEYS.CreateTopics)).toHaveLength(1);
  });

  it('times out a single attempt that hangs, within the operation deadline', async () => {
    const fc = await fakeCluster({ brokers: 1 });
    fc.broker(0).on(API_KEYS.CreatePartitions, () => new Promise<never>(() => undefined));
    const a = admin(fc.bootstrapServers);
    const err = await a.createPartitions([{ topic: 't', count: 2 }], { timeoutMs: 300 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OperationTimeoutError);
    expect((err as Error).message).toMatch(/^createPartitions timed out after 300 ms \(1 attempt\)/);
  });
});

describe('Cluster: logging', () => {
  it('takes a pino logger', async () => {
    const lines: string[] = [];
    const logger: Logger = pino({ level: 'trace' }, { write: (l: string) => void lines.push(l) });
    const fc = await fakeCluster({ brokers: 1 });
    const a = admin(fc.bootstrapServers, { logger });
    await a.listTopics();
    expect(lines.some((l) => l.includes('"msg":"connected"'))).toBe(true);
  });
});
