import { createServer, type Socket } from 'node:net';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { ReplicaFetcher, type FetcherOptions } from './replica-fetcher.js';
import type { Partition } from './partition.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

/** A TCP server that reports the first bytes each connection sends. */
async function firstBytesServer(): Promise<{ port: number; first: Promise<Buffer> }> {
  const sockets: Socket[] = [];
  let resolve!: (b: Buffer) => void;
  const first = new Promise<Buffer>((r) => (resolve = r));
  const srv = createServer((s) => {
    sockets.push(s);
    s.once('data', (d: Buffer) => resolve(d));
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  cleanups.push(() => {
    sockets.forEach((s) => s.destroy());
    srv.close();
  });
  const addr = srv.address();
  return { port: typeof addr === 'object' && addr ? addr.port : 0, first };
}

const options = (extra: Partial<FetcherOptions>): FetcherOptions => ({
  brokerId: 1,
  maxWaitMs: 500,
  minBytes: 1,
  maxBytes: 1 << 20,
  partitionMaxBytes: 1 << 20,
  backoffMs: 50,
  requestTimeoutMs: 5_000,
  ...extra,
});

/** Just what the first truncation step reads: a log with an epoch, so OffsetForLeaderEpoch goes out. */
const partition = { topic: 't', partition: 0, log: { logEndOffset: 0n, latestEpoch: 0 } } as unknown as Partition;

describe('replica fetcher tls', () => {
  for (const tls of [true, false]) {
    it(`replica fetcher tls – ${tls ? 'with tls options the connection to the leader starts with a TLS handshake (SSL / SASL_SSL inter-broker listener)' : 'without, it speaks Kafka frames in the clear'}`, async () => {
      const server = await firstBytesServer();
      const fetcher = new ReplicaFetcher(0, '127.0.0.1', server.port, options(tls ? { tls: { rejectUnauthorized: false } } : {}), pino({ level: 'silent' }));
      cleanups.push(() => fetcher.stop());
      fetcher.addPartition('t-0', partition, 0);
      fetcher.start();
      const first = await server.first;
      // 0x16: a TLS handshake record; a Kafka request starts with its 4-byte size (0x00 for anything this small)
      expect(first[0]).toBe(tls ? 0x16 : 0x00);
    });
  }
});
