/**
 * Protocol fuzzing against one real broker process: random bytes, mutated valid frames (ApiVersions,
 * Metadata, Produce, Fetch at many versions), bad size prefixes, unknown api keys, unsupported
 * versions, corrupt record batches, slow and pipelined writers and many concurrent connections.
 *
 * The broker must never exit, keep answering a separate healthy connection correctly while it is
 * fuzzed, close connections where Kafka does (bad sizes, unknown keys, unsupported versions,
 * malformed requests), answer per-partition errors where Kafka does (CORRUPT_MESSAGE,
 * MESSAGE_TOO_LARGE) and still serve kcat afterwards.
 *
 * Repeatable: every worker draws from a PRNG seeded from SAMSA_FUZZ_SEED (printed); the fuzzing
 * time is SAMSA_FUZZ_MS (default 22 s). Timing makes interleavings differ between runs, but each
 * worker's sequence of inputs is the same for a given seed.
 */
import { execFile, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  API_TABLE,
  CompressionType,
  decodeResponse,
  encodeRecordBatch,
  encodeRequest,
  getApi,
  type ApiVersionsResponse,
  type FetchRequest,
  type MetadataRequest,
  type ProduceRequest,
} from '@samsa/protocol';
import { newTopicId, topicIdFromString } from '@samsa/zk-paths';
import { describeCluster, TestCluster, kcatConsume, until } from './harness.js';
import { RawConn } from './clients/raw-conn.js';

const run = promisify(execFile);

const SEED = Number(process.env['SAMSA_FUZZ_SEED'] ?? 0x5a45a) >>> 0;
const FUZZ_MS = Number(process.env['SAMSA_FUZZ_MS'] ?? 22_000);
const WORKERS = 12;
const HELD_CONNECTIONS = 64;
const MAX_REQUEST = 8 * 1024 * 1024; // socket.request.max.bytes for this broker
const TOPIC = 'fuzz';
const PARTITIONS = 3;

const CORRUPT_MESSAGE = 2;
const MESSAGE_TOO_LARGE = 10;
const UNSUPPORTED_VERSION = 35;
const INVALID_RECORD = 87;
const UNSUPPORTED_COMPRESSION_TYPE = 76;

// ---------------------------------------------------------------------------------------------
// PRNG

type Rng = {
  (): number;
  int(lo: number, hi: number): number; // inclusive
  pick<T>(xs: readonly T[]): T;
  bytes(n: number): Buffer;
  chance(p: number): boolean;
};

function mulberry32(seed: number): Rng {
  let s = seed >>> 0;
  const next = (() => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }) as Rng;
  next.int = (lo, hi) => lo + Math.floor(next() * (hi - lo + 1));
  next.pick = (xs) => xs[Math.floor(next() * xs.length)]!;
  next.bytes = (n) => {
    const b = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i++) b[i] = Math.floor(next() * 256);
    return b;
  };
  next.chance = (p) => next() < p;
  return next;
}

type Outcome = 'frame' | 'closed' | 'timeout';

// ---------------------------------------------------------------------------------------------
// Request builders

function apiVersionsFrame(version: number, corr: number): Buffer {
  return encodeRequest(18, version, corr, 'fuzz', { clientSoftwareName: 'samsa-fuzz', clientSoftwareVersion: '1.0' });
}

/** An ApiVersions request with a version above our maximum (encoded as v3 with the version patched). */
function futureApiVersionsFrame(version: number, corr: number): Buffer {
  const f = apiVersionsFrame(3, corr);
  f.writeInt16BE(version, 6);
  return f;
}

function metadataFrame(version: number, corr: number, topics: string[] | null): Buffer {
  const body: MetadataRequest = {
    topics: topics === null && version === 0 ? [] : topics === null ? null : topics.map((name) => ({ name, topicId: Buffer.alloc(16) })),
    // v0-3 cannot carry it (and mean true); auto.create.topics.enable is off for this broker anyway
    allowAutoTopicCreation: version < 4,
    includeClusterAuthorizedOperations: false,
    includeTopicAuthorizedOperations: false,
  };
  return encodeRequest(3, version, corr, 'fuzz-health', body);
}

function produceFrame(version: number, corr: number, acks: number, parts: Array<{ topic?: string; partition: number; records: Buffer | null }>): Buffer {
  const byTopic = new Map<string, Array<{ index: number; records: Buffer | null }>>();
  for (const p of parts) {
    const t = p.topic ?? TOPIC;
    if (!byTopic.has(t)) byTopic.set(t, []);
    byTopic.get(t)!.push({ index: p.partition, records: p.records });
  }
  const body: ProduceRequest = {
    transactionalId: null,
    acks,
    timeoutMs: 5000,
    topicData: [...byTopic].map(([name, partitionData]) => ({ name, partitionData })),
  };
  return encodeRequest(0, version, corr, 'fuzz', body);
}

function fetchFrame(
  version: number,
  corr: number,
  topicId: Buffer,
  parts: Array<{ partition: number; offset: bigint; maxBytes: number }>,
  maxWaitMs = 0,
): Buffer {
  const body: FetchRequest = {
    clusterId: null,
    replicaId: -1,
    replicaState: { replicaId: -1, replicaEpoch: -1n },
    maxWaitMs,
    minBytes: 1,
    maxBytes: 1024 * 1024,
    isolationLevel: 0,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [
      {
        topic: TOPIC,
        topicId,
        partitions: parts.map((p) => ({
          partition: p.partition,
          currentLeaderEpoch: -1,
          fetchOffset: p.offset,
          lastFetchedEpoch: -1,
          logStartOffset: -1n,
          partitionMaxBytes: p.maxBytes,
          replicaDirectoryId: Buffer.alloc(16),
        })),
      },
    ],
    forgottenTopicsData: [],
    rackId: '',
  };
  return encodeRequest(1, version, corr, 'fuzz', body);
}

const CODECS = [CompressionType.NONE, CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4, CompressionType.ZSTD] as const;

function validBatch(rng: Rng, codec: number = CompressionType.NONE): Buffer {
  const n = rng.int(1, 5);
  const records = [];
  for (let i = 0; i < n; i++) records.push({ key: `k${rng.int(0, 99)}`, value: `v-${rng.int(0, 1e9)}` });
  return encodeRecordBatch({ records, compression: codec as CompressionType });
}

/** A valid batch with one byte changed inside the CRC-covered part (attributes onwards). */
function crcMismatchBatch(rng: Rng): Buffer {
  const b = Buffer.from(validBatch(rng));
  const at = rng.int(21, b.length - 1);
  b[at] = b[at]! ^ (1 << rng.int(0, 7));
  return b;
}

/** Garbage that can never be a complete batch: a length field promising more bytes than follow. */
function garbageRecords(rng: Rng): Buffer {
  const b = rng.bytes(rng.int(12, 60));
  b.writeInt32BE(rng.int(100, 1_000_000), 8);
  return b;
}

function oversizedBatch(): Buffer {
  return encodeRecordBatch({ records: [{ key: 'big', value: Buffer.alloc(1_100_000, 7) }] });
}

function produceErrors(version: number, frame: Buffer): Map<number, { errorCode: number; baseOffset: bigint }> {
  const body = decodeResponse(0, version, frame).body;
  const out = new Map<number, { errorCode: number; baseOffset: bigint }>();
  for (const t of body.responses) for (const p of t.partitionResponses) out.set(p.index, { errorCode: p.errorCode, baseOffset: p.baseOffset });
  return out;
}

const maxVersion = (key: number): number => getApi(key)!.maxVersion;
const minVersion = (key: number): number => getApi(key)!.minVersion;
const KNOWN_KEYS = new Set(API_TABLE.map((e) => e.apiKey));

// ---------------------------------------------------------------------------------------------

interface Stats {
  iterations: number;
  byStrategy: Map<string, Record<Outcome | 'ok', number>>;
  healthChecks: number;
  maxHealthLatencyMs: number;
  bytesSent: number;
}

describeCluster(
  'protocol fuzzing a single broker',
  () => {
    let c: TestCluster;
    let port = 0;
    let topicId: Buffer;
    const stats: Stats = { iterations: 0, byStrategy: new Map(), healthChecks: 0, maxHealthLatencyMs: 0, bytesSent: 0 };

    beforeAll(async () => {
      console.log(`[fuzz] seed ${SEED} (0x${SEED.toString(16)}; set SAMSA_FUZZ_SEED to repeat), ${FUZZ_MS} ms, ${WORKERS} workers`);
      c = await TestCluster.start({
        brokers: 1,
        overrides: {
          // random Metadata topic names must not create topics
          'auto.create.topics.enable': 'false',
          'socket.request.max.bytes': String(MAX_REQUEST),
        },
      });
      port = c.brokers[0]!.o.port;
      const id = newTopicId();
      topicId = topicIdFromString(id);
      await c.admin.createTopic(TOPIC, id, new Map(Array.from({ length: PARTITIONS }, (_, p) => [p, [0]])), {});
      await c.admin.createTopic('fuzz-roundtrip', newTopicId(), new Map([0, 1].map((p) => [p, [0]])), {});
      await c.waitForLeaders(TOPIC, PARTITIONS);
      await c.waitForLeaders('fuzz-roundtrip', 2);
      // the broker knows the topic (metadata propagated) before fuzzing starts
      const conn = await RawConn.open(port);
      await until(async () => {
        conn.write(metadataFrame(9, 1, [TOPIC]));
        const t = decodeResponse(3, 9, await conn.response()).body.topics[0];
        return t?.errorCode === 0 && t.partitions.every((p) => p.leaderId === 0);
      }, 'topic in the broker metadata');
      conn.destroy();
    });
    afterAll(async () => {
      await c?.stop();
    });

    it('ApiVersions above our maximum answers UNSUPPORTED_VERSION with the supported list in v0 format (KIP-511)', async () => {
      const conn = await RawConn.open(port);
      for (const v of [maxVersion(18) + 1, 100, 0x7fff]) {
        conn.write(futureApiVersionsFrame(v, 1000 + v));
        const frame = await conn.response();
        const { header, body } = decodeResponse(18, 0, frame);
        expect(header.correlationId).toBe(1000 + v);
        expect(body.errorCode).toBe(UNSUPPORTED_VERSION);
        const av = body.apiKeys.find((k) => k.apiKey === 18);
        expect(av).toEqual(expect.objectContaining({ minVersion: 0, maxVersion: maxVersion(18) }));
        for (const key of [0, 1, 3]) expect(body.apiKeys.map((k) => k.apiKey)).toContain(key);
      }
      // the connection stays usable and the client can retry with the highest version listed
      conn.write(apiVersionsFrame(maxVersion(18), 7));
      const ok = decodeResponse(18, maxVersion(18), await conn.response()).body as ApiVersionsResponse;
      expect(ok.errorCode).toBe(0);
      conn.destroy();
    });

    it('Produce: a CRC-mismatched batch is CORRUPT_MESSAGE, garbage is CORRUPT_MESSAGE, an oversized batch is MESSAGE_TOO_LARGE, per partition; the connection stays usable', async () => {
      const rng = mulberry32(SEED ^ 0xc0ffee);
      const conn = await RawConn.open(port);
      for (const v of [3, 7, 9, maxVersion(0)]) {
        conn.write(
          produceFrame(v, 1, -1, [
            { partition: 0, records: crcMismatchBatch(rng) },
            { partition: 1, records: validBatch(rng) },
            { partition: 2, records: garbageRecords(rng) },
          ]),
        );
        const r = produceErrors(v, await conn.response());
        expect(r.get(0)?.errorCode, `v${v} crc mismatch`).toBe(CORRUPT_MESSAGE);
        expect(r.get(1)?.errorCode, `v${v} valid batch`).toBe(0);
        expect(r.get(1)?.baseOffset).toBeGreaterThanOrEqual(0n);
        expect(r.get(2)?.errorCode, `v${v} garbage`).toBe(CORRUPT_MESSAGE);
        conn.write(produceFrame(v, 2, 1, [{ partition: 0, records: oversizedBatch() }]));
        expect(produceErrors(v, await conn.response()).get(0)?.errorCode, `v${v} oversized`).toBe(MESSAGE_TOO_LARGE);
        // same connection, next request
        conn.write(metadataFrame(9, 3, [TOPIC]));
        expect(decodeResponse(3, 9, await conn.response()).body.topics[0]?.errorCode).toBe(0);
      }
      expect(conn.closed).toBe(false);
      conn.destroy();
    });

    it(`survives ${FUZZ_MS} ms of fuzzing while a healthy connection keeps getting correct Metadata`, async () => {
      const proc = c.brokers[0]!;
      const deadline = Date.now() + FUZZ_MS;
      const failures: string[] = [];
      const note = (strategy: string, o: Outcome | 'ok') => {
        let s = stats.byStrategy.get(strategy);
        if (!s) stats.byStrategy.set(strategy, (s = { ok: 0, frame: 0, closed: 0, timeout: 0 }));
        s[o]++;
      };
      const fail = (msg: string) => {
        if (failures.length < 20) failures.push(msg);
      };

      // --- health checker: its own connection, a Metadata request every 200 ms
      const health = (async () => {
        const conn = await RawConn.open(port);
        try {
          const rng = mulberry32(SEED ^ 0x4ea17);
          let corr = 0;
          while (Date.now() < deadline && failures.length === 0) {
            if (proc.pid === undefined) {
              fail('broker process exited during fuzzing');
              return;
            }
            const v = rng.int(0, maxVersion(3));
            const t0 = Date.now();
            conn.write(metadataFrame(v, ++corr, [TOPIC]));
            const r = await conn.next(5000);
            const ms = Date.now() - t0;
            if (r.outcome !== 'frame') {
              fail(`health check ${corr} (Metadata v${v}): connection ${r.outcome} after ${ms} ms`);
              return;
            }
            const { header, body } = decodeResponse(3, v, r.frame);
            const t = body.topics[0];
            if (
              header.correlationId !== corr ||
              body.brokers.length !== 1 ||
              body.brokers[0]!.nodeId !== 0 ||
              body.brokers[0]!.port !== port ||
              body.topics.length !== 1 ||
              t?.name !== TOPIC ||
              t.errorCode !== 0 ||
              t.partitions.length !== PARTITIONS ||
              !t.partitions.every((p) => p.leaderId === 0 && p.errorCode === 0)
            ) {
              fail(`health check ${corr} (Metadata v${v}) wrong answer: ${JSON.stringify(body, (_k, x: unknown) => (typeof x === 'bigint' ? String(x) : x))}`);
            }
            stats.healthChecks++;
            stats.maxHealthLatencyMs = Math.max(stats.maxHealthLatencyMs, ms);
            await new Promise((res) => setTimeout(res, 200));
          }
        } catch (e) {
          fail(`health check: ${(e as Error).stack ?? String(e)}`);
        } finally {
          conn.destroy();
        }
      })();

      // --- connections held open (idle, or with half a frame) through the whole run
      const held: RawConn[] = [];
      {
        const rng = mulberry32(SEED ^ 0x401d);
        for (let i = 0; i < HELD_CONNECTIONS; i++) {
          const conn = await RawConn.open(port);
          const f = metadataFrame(rng.int(0, 12), i, [TOPIC]);
          if (rng.chance(0.5)) conn.write(f.subarray(0, rng.int(1, f.length - 1)));
          held.push(conn);
        }
      }

      // --- fuzz workers
      const worker = async (w: number) => {
        const rng = mulberry32((SEED ^ Math.imul(w + 1, 0x9e3779b9)) >>> 0);
        let corr = 0;
        /** `erroneous`: an acks=0 produce naming a partition that does not exist (Kafka closes the connection). */
        const randomValidFrame = (): { key: number; version: number; frame: Buffer; corr: number; acks?: number; erroneous?: boolean } => {
          const id = ++corr;
          switch (rng.int(0, 3)) {
            case 0: {
              const version = rng.int(0, maxVersion(18));
              return { key: 18, version, corr: id, frame: apiVersionsFrame(version, id) };
            }
            case 1: {
              const version = rng.int(0, maxVersion(3));
              const topics = rng.chance(0.3) ? null : rng.chance(0.5) ? [TOPIC] : [TOPIC, `nope-${rng.int(0, 9)}`];
              return { key: 3, version, corr: id, frame: metadataFrame(version, id, topics) };
            }
            case 2: {
              const version = rng.int(3, maxVersion(0));
              const acks = rng.pick([-1, 1, 1, 0]);
              const codec = version >= 7 ? rng.pick(CODECS) : rng.pick(CODECS.slice(0, 4));
              const parts = [{ partition: rng.int(0, PARTITIONS - 1), records: validBatch(rng, codec) }];
              const erroneous = rng.chance(0.2);
              if (erroneous) parts.push({ partition: rng.int(PARTITIONS, 50), records: validBatch(rng) });
              return { key: 0, version, corr: id, acks, erroneous, frame: produceFrame(version, id, acks, parts) };
            }
            default: {
              const version = rng.int(minVersion(1), maxVersion(1));
              const parts = [{ partition: rng.int(0, PARTITIONS), offset: BigInt(rng.int(-2, 50)), maxBytes: rng.pick([0, 1, 100, 65536, 0x7fffffff]) }];
              return { key: 1, version, corr: id, frame: fetchFrame(version, id, topicId, parts, rng.pick([0, 0, 10])) };
            }
          }
        };
        /** Sends `bytes`, then a probe; resolves with what happened within `ms`. */
        const probeAfter = async (conn: RawConn, ms: number): Promise<Outcome> => {
          const probeCorr = 0x70000000 + ++corr;
          conn.write(apiVersionsFrame(0, probeCorr));
          const until = Date.now() + ms;
          for (;;) {
            const r = await conn.next(until - Date.now());
            if (r.outcome !== 'frame') return r.outcome;
            if (r.frame.length >= 4 && r.frame.readInt32BE(0) === probeCorr) return 'frame';
          }
        };
        const send = (conn: RawConn, b: Buffer) => {
          stats.bytesSent += b.length;
          conn.write(b);
        };

        while (Date.now() < deadline && failures.length === 0) {
          stats.iterations++;
          const conn = await RawConn.open(port).catch((e: Error) => {
            fail(`worker ${w}: cannot connect: ${e.message}`);
            return undefined;
          });
          if (!conn) return;
          const strategy = rng.pick([
            'valid',
            'valid',
            'bitflip',
            'bitflip',
            'truncate',
            'size-off',
            'size-huge',
            'size-negative',
            'unknown-key',
            'bad-version',
            'future-apiversions',
            'random-frame',
            'random-stream',
            'produce-crc',
            'produce-garbage',
            'produce-oversized',
            'produce-bitflip-records',
            'slow-writer',
            'pipelined',
            'edge-values',
            'abandon',
          ]);
          const ctx = `seed ${SEED} worker ${w} iteration ${stats.iterations} (${strategy})`;
          try {
            switch (strategy) {
              case 'valid': {
                const v = randomValidFrame();
                send(conn, v.frame);
                if (v.acks === 0) {
                  // an error in an acks=0 produce closes the connection (Kafka); otherwise it stays open, unanswered
                  const o = await probeAfter(conn, 5000);
                  const expected = v.erroneous ? 'closed' : 'frame';
                  if (o !== expected) fail(`${ctx}: acks=0 produce v${v.version}${v.erroneous ? ' to a missing partition' : ''} then probe: ${o}`);
                  note(strategy, o);
                  break;
                }
                const r = await conn.next(5000);
                if (r.outcome !== 'frame') {
                  fail(`${ctx}: valid api ${v.key} v${v.version}: ${r.outcome}`);
                  break;
                }
                const d = decodeResponse(v.key as 0 | 1 | 3 | 18, v.version, r.frame);
                if (d.header.correlationId !== v.corr) fail(`${ctx}: correlation id ${d.header.correlationId} != ${v.corr}`);
                if (v.key === 0) {
                  const errs = produceErrors(v.version, r.frame);
                  for (const [p, e] of errs)
                    if (p < PARTITIONS && e.errorCode !== 0) fail(`${ctx}: valid produce v${v.version} partition ${p} error ${e.errorCode}`);
                }
                note(strategy, 'ok');
                break;
              }
              case 'bitflip': {
                const v = randomValidFrame();
                const f = Buffer.from(v.frame);
                const flips = rng.int(1, 8);
                for (let i = 0; i < flips; i++) {
                  const at = rng.int(4, f.length - 1);
                  f[at] = f[at]! ^ (1 << rng.int(0, 7));
                }
                send(conn, f);
                note(strategy, await probeAfter(conn, 1000));
                break;
              }
              case 'truncate': {
                // a shorter body with a consistent size prefix can never decode: Kafka closes
                const v = randomValidFrame();
                const len = rng.int(0, v.frame.length - 5);
                const f = Buffer.from(v.frame.subarray(0, 4 + len));
                f.writeInt32BE(len, 0);
                send(conn, f);
                const closed = await conn.waitClosed(5000);
                if (!closed) fail(`${ctx}: truncated api ${v.key} v${v.version} frame (${len} of ${v.frame.length - 4} bytes) did not close the connection`);
                note(strategy, closed ? 'closed' : 'timeout');
                break;
              }
              case 'size-off': {
                const v = randomValidFrame();
                const f = Buffer.from(v.frame);
                f.writeInt32BE(Math.max(0, f.length - 4 + rng.pick([-3, -2, -1, 1, 2, 7, 100])), 0);
                send(conn, f);
                note(strategy, await probeAfter(conn, 800));
                break;
              }
              case 'size-huge': {
                const size = rng.chance(0.5) ? MAX_REQUEST + rng.int(1, 10) : rng.int(MAX_REQUEST + 1, 0x7fffffff);
                const head = Buffer.alloc(4 + rng.int(0, 64));
                head.writeInt32BE(size, 0);
                send(conn, head);
                const closed = await conn.waitClosed(5000);
                if (!closed) fail(`${ctx}: size prefix ${size} > socket.request.max.bytes did not close the connection`);
                note(strategy, closed ? 'closed' : 'timeout');
                break;
              }
              case 'size-negative': {
                const head = Buffer.alloc(4 + rng.int(0, 16));
                head.writeInt32BE(rng.pick([-1, -2, -0x80000000, -rng.int(1, 0x7fffffff)]), 0);
                send(conn, head);
                const closed = await conn.waitClosed(5000);
                if (!closed) fail(`${ctx}: negative size prefix did not close the connection`);
                note(strategy, closed ? 'closed' : 'timeout');
                break;
              }
              case 'unknown-key': {
                const v = randomValidFrame();
                const f = Buffer.from(v.frame);
                let key: number;
                do key = rng.int(-0x8000, 0x7fff);
                while ((KNOWN_KEYS as ReadonlySet<number>).has(key));
                f.writeInt16BE(key, 4);
                send(conn, f);
                const closed = await conn.waitClosed(5000);
                if (!closed) fail(`${ctx}: unknown api key ${key} did not close the connection`);
                note(strategy, closed ? 'closed' : 'timeout');
                break;
              }
              case 'bad-version': {
                let v = randomValidFrame();
                while (v.key === 18) v = randomValidFrame();
                const f = Buffer.from(v.frame);
                const version = rng.chance(0.5) ? rng.int(maxVersion(v.key) + 1, 0x7fff) : rng.int(-0x8000, minVersion(v.key) - 1);
                f.writeInt16BE(version, 6);
                send(conn, f);
                const closed = await conn.waitClosed(5000);
                if (!closed) fail(`${ctx}: api ${v.key} v${version} did not close the connection`);
                note(strategy, closed ? 'closed' : 'timeout');
                break;
              }
              case 'future-apiversions': {
                const version = rng.int(maxVersion(18) + 1, 0x7fff);
                const id = ++corr;
                send(conn, futureApiVersionsFrame(version, id));
                const r = await conn.next(5000);
                if (r.outcome !== 'frame') {
                  fail(`${ctx}: ApiVersions v${version}: ${r.outcome}`);
                  break;
                }
                const d = decodeResponse(18, 0, r.frame);
                if (
                  d.header.correlationId !== id ||
                  d.body.errorCode !== UNSUPPORTED_VERSION ||
                  !d.body.apiKeys.some((k) => k.apiKey === 18 && k.maxVersion === maxVersion(18))
                ) {
                  fail(`${ctx}: ApiVersions v${version}: unexpected answer error ${d.body.errorCode}`);
                }
                note(strategy, 'ok');
                break;
              }
              case 'random-frame': {
                const body = rng.bytes(rng.int(0, 300));
                if (body.length >= 2 && rng.chance(0.7)) body.writeInt16BE(rng.pick([0, 1, 3, 18]), 0); // mostly known keys
                if (body.length >= 4 && rng.chance(0.5)) body.writeInt16BE(rng.int(0, 12), 2);
                const f = Buffer.alloc(4 + body.length);
                f.writeInt32BE(body.length, 0);
                body.copy(f, 4);
                send(conn, f);
                note(strategy, await probeAfter(conn, 800));
                break;
              }
              case 'random-stream': {
                send(conn, rng.bytes(rng.int(1, 4096)));
                note(strategy, await probeAfter(conn, 500));
                break;
              }
              case 'produce-crc':
              case 'produce-garbage':
              case 'produce-oversized': {
                const version = rng.int(3, maxVersion(0));
                const partition = rng.int(0, PARTITIONS - 1);
                const records = strategy === 'produce-crc' ? crcMismatchBatch(rng) : strategy === 'produce-garbage' ? garbageRecords(rng) : oversizedBatch();
                const want = strategy === 'produce-oversized' ? MESSAGE_TOO_LARGE : CORRUPT_MESSAGE;
                send(conn, produceFrame(version, ++corr, rng.pick([-1, 1]), [{ partition, records }]));
                const r = await conn.next(10_000);
                if (r.outcome !== 'frame') {
                  fail(`${ctx}: produce v${version}: ${r.outcome}`);
                  break;
                }
                const code = produceErrors(version, r.frame).get(partition)?.errorCode;
                if (code !== want) fail(`${ctx}: produce v${version}: error ${code}, expected ${want}`);
                // and the connection is still usable
                const o = await probeAfter(conn, 5000);
                if (o !== 'frame') fail(`${ctx}: connection not usable after the produce error: ${o}`);
                note(strategy, o === 'frame' ? 'ok' : o);
                break;
              }
              case 'produce-bitflip-records': {
                // a valid frame whose batch bytes are damaged anywhere (header fields included)
                const version = rng.int(3, maxVersion(0));
                const partition = rng.int(0, PARTITIONS - 1);
                const batch = Buffer.from(validBatch(rng, version >= 7 ? rng.pick(CODECS) : rng.pick(CODECS.slice(0, 4))));
                const flips = rng.int(1, 4);
                for (let i = 0; i < flips; i++) {
                  const at = rng.int(0, batch.length - 1);
                  batch[at] = batch[at]! ^ (1 << rng.int(0, 7));
                }
                send(conn, produceFrame(version, ++corr, 1, [{ partition, records: batch }]));
                const r = await conn.next(10_000);
                if (r.outcome !== 'frame') {
                  fail(`${ctx}: produce v${version} with damaged batch: ${r.outcome}`);
                  break;
                }
                const code = produceErrors(version, r.frame).get(partition)?.errorCode;
                // flips in baseOffset (not CRC-covered) or magic 0/1 are INVALID_RECORD; a codec turned into
                // zstd is UNSUPPORTED_COMPRESSION_TYPE below v7 (checked before the CRC, as Kafka does);
                // partitionLeaderEpoch is neither CRC-covered nor checked
                if (code === undefined || ![0, CORRUPT_MESSAGE, INVALID_RECORD, UNSUPPORTED_COMPRESSION_TYPE].includes(code))
                  fail(`${ctx}: damaged batch answered error ${code}`);
                note(strategy, 'ok');
                break;
              }
              case 'slow-writer': {
                const v = randomValidFrame();
                const f = v.frame;
                for (let i = 0; i < f.length;) {
                  const n = rng.int(1, 3);
                  send(conn, f.subarray(i, i + n));
                  i += n;
                  if (rng.chance(0.3)) await new Promise((r) => setTimeout(r, 2));
                }
                if (v.acks === 0) {
                  note(strategy, await probeAfter(conn, 5000));
                  break;
                }
                const r = await conn.next(5000);
                if (r.outcome !== 'frame' || r.frame.readInt32BE(0) !== v.corr) fail(`${ctx}: byte-by-byte api ${v.key} v${v.version}: ${r.outcome}`);
                note(strategy, r.outcome === 'frame' ? 'ok' : r.outcome);
                break;
              }
              case 'pipelined': {
                const n = rng.int(5, 60);
                const frames: Array<{ corr: number; key: number; version: number }> = [];
                const parts: Buffer[] = [];
                for (let i = 0; i < n; i++) {
                  let v = randomValidFrame();
                  while (v.acks === 0) v = randomValidFrame();
                  frames.push(v);
                  parts.push(v.frame);
                }
                send(conn, Buffer.concat(parts));
                for (const v of frames) {
                  const r = await conn.next(10_000);
                  if (r.outcome !== 'frame') {
                    fail(`${ctx}: pipelined api ${v.key} v${v.version}: ${r.outcome}`);
                    break;
                  }
                  const d = decodeResponse(v.key as 0 | 1 | 3 | 18, v.version, r.frame);
                  if (d.header.correlationId !== v.corr) {
                    fail(`${ctx}: pipelined responses out of order (${d.header.correlationId} != ${v.corr})`);
                    break;
                  }
                }
                note(strategy, 'ok');
                break;
              }
              case 'edge-values': {
                // well-formed requests with extreme field values: each must get an answer (error codes), never a hang or a close
                const id = ++corr;
                const kind = rng.int(0, 3);
                const edge = () => rng.pick([-0x80000000, -1, 0, 1, 0x7fffffff]);
                let key: 0 | 1 | 3;
                let version: number;
                let frame: Buffer;
                if (kind === 0) {
                  key = 1;
                  version = rng.int(4, 12);
                  frame = fetchFrame(version, id, topicId, [
                    { partition: rng.pick([-1, 0, 0x7fffffff]), offset: rng.pick([-(2n ** 63n), -1n, 0n, 2n ** 63n - 1n]), maxBytes: edge() },
                    { partition: 1, offset: 0n, maxBytes: edge() },
                  ]);
                } else if (kind === 1) {
                  key = 0;
                  version = rng.int(3, maxVersion(0));
                  const acks = rng.pick([-2, 2, 100, -1, 1]);
                  const b = validBatch(rng);
                  // duplicate partitions, null and empty records, a negative partition
                  frame = produceFrame(version, id, acks, [
                    { partition: 0, records: b },
                    { partition: 0, records: b },
                    { partition: 1, records: rng.chance(0.5) ? null : Buffer.alloc(0) },
                    { partition: -1, records: b },
                    { topic: rng.pick(['', '.', 'x'.repeat(300)]), partition: 0, records: b },
                  ]);
                } else if (kind === 2) {
                  key = 3;
                  version = rng.int(1, maxVersion(3));
                  frame = metadataFrame(
                    version,
                    id,
                    Array.from({ length: rng.int(0, 2000) }, (_, i) =>
                      i % 3 === 0 ? TOPIC : rng.pick(['', '.', '..', `t${i}`, 'x'.repeat(rng.int(200, 400))]),
                    ),
                  );
                } else {
                  key = 1;
                  version = rng.int(13, maxVersion(1));
                  // topic ids nobody knows, the zero id
                  frame = fetchFrame(version, id, rng.chance(0.5) ? Buffer.alloc(16) : rng.bytes(16), [{ partition: 0, offset: 0n, maxBytes: 1024 }]);
                }
                send(conn, frame);
                const r = await conn.next(10_000);
                if (r.outcome !== 'frame') {
                  fail(`${ctx}: api ${key} v${version} kind ${kind}: ${r.outcome}`);
                  break;
                }
                const d = decodeResponse(key, version, r.frame);
                if (d.header.correlationId !== id) fail(`${ctx}: correlation id ${d.header.correlationId} != ${id}`);
                note(strategy, 'ok');
                break;
              }
              case 'abandon': {
                // requests whose answers nobody reads: connection reset / half-closed mid-flight
                const v = randomValidFrame();
                send(conn, Buffer.concat([v.frame, fetchFrame(rng.int(4, 12), ++corr, topicId, [{ partition: 0, offset: 0n, maxBytes: 1 << 20 }])]));
                if (rng.chance(0.5)) conn.sock.end();
                else conn.sock.resetAndDestroy();
                note(strategy, 'closed');
                break;
              }
            }
          } catch (e) {
            fail(`${ctx}: ${(e as Error).stack ?? String(e)}`);
          } finally {
            conn.destroy();
          }
          // a burst of concurrent connections now and then
          if (rng.chance(0.01)) {
            const burst = await Promise.all(Array.from({ length: 100 }, () => RawConn.open(port).catch(() => undefined)));
            for (const b of burst) b?.write(rng.bytes(rng.int(1, 8)));
            for (const b of burst) b?.destroy();
            note('burst-100', 'ok');
          }
        }
      };

      await Promise.all([health, ...Array.from({ length: WORKERS }, (_, w) => worker(w))]);
      const stillOpen = held.filter((h) => !h.closed).length;
      for (const h of held) h.destroy();

      const table = [...stats.byStrategy].map(([k, v]) => `${k}: ok ${v.ok} frame ${v.frame} closed ${v.closed} timeout ${v.timeout}`);
      console.log(
        `[fuzz] seed ${SEED}: ${stats.iterations} iterations, ${(stats.bytesSent / 1e6).toFixed(1)} MB sent, ${stats.healthChecks} health checks ` +
          `(max latency ${stats.maxHealthLatencyMs} ms), held connections still open ${stillOpen}/${HELD_CONNECTIONS}\n  ${table.join('\n  ')}`,
      );
      expect(failures).toEqual([]);
      expect(proc.pid, 'broker process still running').toBeDefined();
      expect(stats.healthChecks).toBeGreaterThan(FUZZ_MS / 1000);
      expect(stillOpen).toBe(HELD_CONNECTIONS);
    });

    it('after fuzzing: kcat -L works and a kcat produce/consume round trip is complete', async () => {
      expect(c.brokers[0]!.pid).toBeDefined();
      const { stdout } = await run('kcat', ['-L', '-b', c.bootstrap], { timeout: 20_000 });
      expect(stdout).toContain(' 1 brokers:');
      expect(stdout).toContain(`topic "${TOPIC}" with ${PARTITIONS} partitions`);
      const n = 2000;
      const input = Array.from({ length: n }, (_, i) => `after-fuzz-${i}`).join('\n') + '\n';
      await new Promise<void>((resolve, reject) => {
        const p = spawn('kcat', ['-P', '-b', c.bootstrap, '-t', 'fuzz-roundtrip', '-X', 'acks=all']);
        let err = '';
        p.stderr.on('data', (d: Buffer) => (err += d.toString()));
        p.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`kcat -P exited ${code}: ${err}`))));
        p.stdin.end(input);
      });
      const rows = (await kcatConsume(c.bootstrap, 'fuzz-roundtrip', '%p\t%o\t%s\n')).split('\n').filter(Boolean);
      expect(rows).toHaveLength(n);
      expect(new Set(rows.map((r) => r.split('\t')[2])).size).toBe(n);
    });

    it('a slow reader of pipelined multi-megabyte Fetch responses gets them all, in order (backpressure)', async () => {
      const topic = 'fuzz-big';
      const id = newTopicId();
      await c.admin.createTopic(topic, id, new Map([[0, [0]]]), {});
      await c.waitForLeaders(topic, 1);
      const conn = await RawConn.open(port);
      const batches = 2;
      await until(async () => {
        conn.write(metadataFrame(9, 1, [topic]));
        return decodeResponse(3, 9, await conn.response()).body.topics[0]?.partitions[0]?.leaderId === 0;
      }, `${topic} in the broker metadata`);
      for (let i = 0; i < batches; i++) {
        const records = encodeRecordBatch({ records: [{ key: `big-${i}`, value: Buffer.alloc(900_000, i) }] });
        conn.write(produceFrame(9, 100 + i, -1, [{ topic, partition: 0, records }]));
        expect(produceErrors(9, await conn.response()).get(0)).toEqual({ errorCode: 0, baseOffset: BigInt(i) });
      }
      // more backpressure episodes on one connection than EventEmitter's default listener limit (10)
      const n = 16;
      const frames = Array.from({ length: n }, (_, i) => {
        const body: FetchRequest = {
          clusterId: null,
          replicaId: -1,
          replicaState: { replicaId: -1, replicaEpoch: -1n },
          maxWaitMs: 0,
          minBytes: 1,
          maxBytes: 8 << 20,
          isolationLevel: 0,
          sessionId: 0,
          sessionEpoch: -1,
          topics: [
            {
              topic,
              topicId: Buffer.alloc(16),
              partitions: [
                {
                  partition: 0,
                  currentLeaderEpoch: -1,
                  fetchOffset: 0n,
                  lastFetchedEpoch: -1,
                  logStartOffset: -1n,
                  partitionMaxBytes: 8 << 20,
                  replicaDirectoryId: Buffer.alloc(16),
                },
              ],
            },
          ],
          forgottenTopicsData: [],
          rackId: '',
        };
        return encodeRequest(1, 11, 1000 + i, 'fuzz', body);
      });
      conn.sock.pause();
      conn.write(Buffer.concat(frames));
      // the broker fills the socket buffers and has to wait for us
      await new Promise((r) => setTimeout(r, 300));
      conn.sock.resume();
      for (let i = 0; i < n; i++) {
        const { header, body } = decodeResponse(1, 11, await conn.response(30_000));
        expect(header.correlationId).toBe(1000 + i);
        const p = body.responses[0]!.partitions[0]!;
        expect(p.errorCode).toBe(0);
        expect(p.records?.length ?? 0).toBeGreaterThan(batches * 900_000);
      }
      conn.destroy();
    });

    it('the broker log has no uncaught exceptions, fatal lines or failed request handlers', async () => {
      const text = await readFile(join(c.brokers[0]!.o.dir, 'broker.log'), 'utf8');
      const bad: string[] = [];
      let closes = 0;
      for (const line of text.split('\n')) {
        if (!line) continue;
        let rec: { level?: number; msg?: string };
        try {
          rec = JSON.parse(line) as { level?: number; msg?: string };
        } catch {
          bad.push(`not a pino line: ${line.slice(0, 300)}`);
          continue;
        }
        if ((rec.level ?? 0) >= 50 || /uncaught|unhandled/i.test(rec.msg ?? '')) bad.push(line.slice(0, 600));
        if (rec.msg === 'closing connection' || rec.msg?.startsWith('request size out of range')) closes++;
      }
      console.log(`[fuzz] broker.log: ${closes} connections closed for protocol errors, ${bad.length} bad lines`);
      expect(bad.slice(0, 10)).toEqual([]);
      expect(closes).toBeGreaterThan(0);
    });
  },
  { processesOnly: 'checks the broker process and its log file' },
);
