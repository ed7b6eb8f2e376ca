/**
 * Wire helpers for client-compatibility tests:
 *  - `WireLog` taps a client's sockets and decodes, with @samsa/protocol, every request it writes
 *    (api key, version) and every response it reads (body, matched by correlation id), so a test
 *    can name the versions a client negotiated and see the broker's error codes as they were sent;
 *  - `fetchAll` reads partitions back with raw Fetch requests (no consumer groups needed).
 */
import { connect, type Socket } from 'node:net';
import type { RecordBatch } from '@samsa/protocol';
import {
  compressionName,
  decodeRequest,
  decodeResponse,
  encodeRequest,
  getApi,
  recordBatches,
  topicPartitionKey,
  type ApiKey,
  type ApiRequestMap,
  type ApiResponseMap,
} from '@samsa/protocol';

export interface WireExchange {
  socket: string;
  apiKey: number;
  api: string;
  apiVersion: number;
  correlationId: number;
  clientId: string | null;
  /** Set when the request did not decode with @samsa/protocol. */
  requestError?: string;
  /** The decoded request body. */
  request?: unknown;
  /** host:port of the broker that answered. */
  broker?: string;
  /** The decoded response body, once it arrived. */
  response?: unknown;
  responseError?: string;
}

/** Splits a byte stream into Kafka frames (4-byte size prefix). */
class Frames {
  private buf: Buffer = Buffer.alloc(0);
  constructor(private readonly onFrame: (frame: Buffer) => void) {}
  push(chunk: Buffer): void {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    while (this.buf.length >= 4) {
      const size = this.buf.readInt32BE(0);
      if (this.buf.length < 4 + size) break;
      const frame = Buffer.from(this.buf.subarray(4, 4 + size)); // copy: clients may reuse their buffers
      this.buf = this.buf.subarray(4 + size);
      this.onFrame(frame);
    }
  }
}

function toBuffer(chunk: unknown, encoding?: unknown): Buffer | null {
  if (Buffer.isBuffer(chunk)) return chunk;
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  if (typeof chunk === 'string') return Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
  return null;
}

export class WireLog {
  readonly exchanges: WireExchange[] = [];
  private readonly tapped = new WeakSet<Socket>();
  private sockets = 0;

  /** Records what `socket` writes (requests) and reads (responses). Idempotent per socket. */
  tap(socket: Socket): Socket {
    if (this.tapped.has(socket)) return socket;
    this.tapped.add(socket);
    const name = `socket-${++this.sockets}`;
    const pending = new Map<number, WireExchange>();
    const requests = new Frames((frame) => {
      const d = decodeRequest(frame);
      const h = d.header;
      const apiKey = h?.apiKey ?? frame.readInt16BE(0);
      const apiVersion = h?.apiVersion ?? frame.readInt16BE(2);
      const x: WireExchange = {
        socket: name,
        apiKey,
        api: getApi(apiKey)?.name ?? `api-${apiKey}`,
        apiVersion,
        correlationId: h?.correlationId ?? frame.readInt32BE(4),
        clientId: h?.clientId ?? null,
      };
      if (d.ok) x.request = d.body;
      else x.requestError = d.error === 'MALFORMED' ? `MALFORMED: ${d.cause.message}` : d.error;
      this.exchanges.push(x);
      pending.set(x.correlationId, x);
    });
    const responses = new Frames((frame) => {
      const x = pending.get(frame.readInt32BE(0));
      if (!x) return;
      pending.delete(x.correlationId);
      x.broker = `${socket.remoteAddress}:${socket.remotePort}`;
      try {
        x.response = decodeResponse(x.apiKey as ApiKey, x.apiVersion, frame).body;
      } catch (e) {
        x.responseError = String(e);
      }
    });
    const write = socket.write;
    socket.write = function (this: Socket, chunk: unknown, ...rest: unknown[]) {
      const b = toBuffer(chunk, rest[0]);
      if (b) requests.push(b);
      return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
    } as Socket['write'];
    socket.on('data', (c: Buffer) => responses.push(c));
    return socket;
  }

  /** Versions used for `api` ("Produce", "Metadata", ...), sorted, distinct. */
  versions(api: string): number[] {
    return [...new Set(this.exchanges.filter((x) => x.api === api).map((x) => x.apiVersion))].sort((a, b) => a - b);
  }

  /** { api: [versions] } for everything seen. */
  summary(): Record<string, number[]> {
    const out: Record<string, number[]> = {};
    for (const api of [...new Set(this.exchanges.map((x) => x.api))].sort()) out[api] = this.versions(api);
    return out;
  }

  /** Responses (decoded) to requests of `api`, in request order, once they all arrived. */
  responses<K extends ApiKey>(api: string): Array<ApiResponseMap[K]> {
    return this.exchanges.filter((x) => x.api === api && x.response !== undefined).map((x) => x.response as ApiResponseMap[K]);
  }

  /** Decoded requests of `api`, in order. */
  requests<K extends ApiKey>(api: string): Array<ApiRequestMap[K]> {
    return this.exchanges.filter((x) => x.api === api && x.request !== undefined).map((x) => x.request as ApiRequestMap[K]);
  }

  /** Exchanges recorded from index `mark` on (take `exchanges.length` before an operation). */
  since(mark: number): WireLog {
    const view = new WireLog();
    view.exchanges.push(...this.exchanges.slice(mark));
    return view;
  }

  /** Requests that failed to decode or whose responses failed to decode. */
  problems(): WireExchange[] {
    return this.exchanges.filter((x) => x.requestError !== undefined || x.responseError !== undefined);
  }

  clear(): void {
    this.exchanges.length = 0;
  }
}

/** One request/response over a fresh connection to `address` ("host:port"). */
export async function rawRequest<K extends ApiKey>(
  address: string,
  apiKey: K,
  apiVersion: number,
  body: ApiRequestMap[K],
  timeoutMs = 15_000,
): Promise<ApiResponseMap[K]> {
  const i = address.lastIndexOf(':');
  const socket = connect({ host: address.slice(0, i), port: Number(address.slice(i + 1)) });
  try {
    return await new Promise<ApiResponseMap[K]>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer from ${address} within ${timeoutMs} ms`)), timeoutMs);
      const frames = new Frames((frame) => {
        clearTimeout(timer);
        try {
          resolve(decodeResponse(apiKey, apiVersion, frame).body);
        } catch (e) {
          reject(e as Error);
        }
      });
      socket.on('data', (c: Buffer) => frames.push(c));
      socket.on('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
      socket.on('close', () => {
        clearTimeout(timer);
        reject(new Error(`${address} closed the connection`));
      });
      socket.write(encodeRequest(apiKey, apiVersion, 1, 'samsa-e2e-reader', body));
    });
  } finally {
    socket.destroy();
  }
}

export interface FetchedRecord {
  partition: number;
  offset: number;
  key: string | null;
  value: string | null;
  headers: Array<[string, string | null]>;
  timestamp: number;
  /** Codec of the batch the record came in. */
  compression: string;
  batchBaseOffset: number;
}

const FETCH_VERSION = 12; // flexible, topic names (v13+ uses topic ids)

/**
 * Reads partition `partition` of `topic` from `leaderAddress` with raw Fetch v12 requests, from
 * offset 0 to the high watermark. CRCs are checked.
 */
export async function fetchPartition(leaderAddress: string, topic: string, partition: number): Promise<{ records: FetchedRecord[]; highWatermark: number }> {
  const records: FetchedRecord[] = [];
  let offset = 0n;
  for (let round = 0; round < 1000; round++) {
    const res = await rawRequest(leaderAddress, 1, FETCH_VERSION, {
      clusterId: null,
      replicaId: -1,
      replicaState: { replicaId: -1, replicaEpoch: -1n },
      maxWaitMs: 0,
      minBytes: 0,
      maxBytes: 8 * 1024 * 1024,
      isolationLevel: 0,
      sessionId: 0,
      sessionEpoch: -1,
      topics: [
        {
          topic,
          topicId: Buffer.alloc(16),
          partitions: [
            {
              partition,
              currentLeaderEpoch: -1,
              fetchOffset: offset,
              lastFetchedEpoch: -1,
              logStartOffset: -1n,
              partitionMaxBytes: 4 * 1024 * 1024,
              replicaDirectoryId: Buffer.alloc(16),
            },
          ],
        },
      ],
      forgottenTopicsData: [],
      rackId: '',
    });
    if (res.errorCode !== 0) throw new Error(`Fetch ${topicPartitionKey(topic, partition)}: top-level error ${res.errorCode}`);
    const p = res.responses[0]?.partitions[0];
    if (!p) throw new Error(`Fetch ${topicPartitionKey(topic, partition)}: no partition in the answer`);
    if (p.errorCode !== 0) throw new Error(`Fetch ${topicPartitionKey(topic, partition)}: error ${p.errorCode}`);
    const hw = p.highWatermark;
    let progressed = false;
    for (const batch of recordBatches(p.records ?? Buffer.alloc(0)) as Iterable<RecordBatch>) {
      batch.ensureValidCrc();
      if (batch.nextOffset <= offset) continue;
      for (const r of batch.records()) {
        if (r.offset < offset) continue;
        records.push({
          partition,
          offset: Number(r.offset),
          key: r.key === null ? null : r.key.toString(),
          value: r.value === null ? null : r.value.toString(),
          headers: r.headers.map((h) => [h.key, h.value === null ? null : h.value.toString()]),
          timestamp: Number(r.timestamp),
          compression: compressionName(batch.compression as never),
          batchBaseOffset: Number(batch.baseOffset),
        });
      }
      offset = batch.nextOffset;
      progressed = true;
    }
    if (offset >= hw) return { records, highWatermark: Number(hw) };
    if (!progressed) throw new Error(`Fetch ${topicPartitionKey(topic, partition)}: no progress at offset ${offset} (high watermark ${hw})`);
  }
  throw new Error(`Fetch ${topicPartitionKey(topic, partition)}: too many rounds`);
}

/** Reads every partition of `topic` from its leader (found in ZooKeeper), records sorted by partition then offset. */
export async function readTopic(
  c: { leaderOf(topic: string, partition: number): Promise<number>; broker(id: number): { address: string } },
  topic: string,
  partitions: number,
): Promise<{ records: FetchedRecord[]; highWatermarks: number[] }> {
  const records: FetchedRecord[] = [];
  const highWatermarks: number[] = [];
  for (let p = 0; p < partitions; p++) {
    const leader = await c.leaderOf(topic, p);
    if (leader < 0) throw new Error(`${topicPartitionKey(topic, p)} has no leader`);
    const r = await fetchPartition(c.broker(leader).address, topic, p);
    records.push(...r.records);
    highWatermarks.push(r.highWatermark);
  }
  return { records, highWatermarks };
}

/**
 * Waits until the leader of each partition of `topic` serves it (a Fetch answers without error):
 * a leader elected in ZooKeeper only serves once its LeaderAndIsr arrived.
 */
export async function waitForPartitionsServed(
  c: { leaderOf(topic: string, partition: number): Promise<number>; broker(id: number): { address: string } },
  topic: string,
  partitions: number,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let p = 0; p < partitions;) {
    const leader = await c.leaderOf(topic, p);
    const ok =
      leader >= 0 &&
      (await fetchPartition(c.broker(leader).address, topic, p).then(
        () => true,
        () => false,
      ));
    if (ok) p++;
    else if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${topicPartitionKey(topic, p)} to be served by its leader`);
    else await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Waits until every broker's metadata (what its Metadata answers hold, fed by the controller's
 * UpdateMetadata) lists all `addresses`' brokers and the controller. Until then a client's first
 * Metadata answer may have no brokers or no controller, as with Kafka right after startup.
 */
export async function waitForBrokerMetadata(addresses: string[], controllerId: () => Promise<number | null>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const controller = await controllerId();
    let ready = controller !== null;
    for (const a of addresses) {
      if (!ready) break;
      const md = await rawRequest(a, 3, 12, {
        topics: [],
        allowAutoTopicCreation: false,
        includeClusterAuthorizedOperations: false,
        includeTopicAuthorizedOperations: false,
      });
      ready = md.brokers.length === addresses.length && md.controllerId === controller;
    }
    if (ready) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for every broker's metadata`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
