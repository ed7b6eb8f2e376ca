// A minimal raw-protocol producer for load generation: one TCP (or, with `tls`, TLS) connection, Produce requests built
// once with @samsa/protocol (encodeRequest + encodeRecordBatch) and re-sent with a fresh
// correlation id, `inflight` requests pipelined. The batches stay CRC-valid: the broker assigns
// offsets by rewriting its own copy's base offset and leader epoch, which the CRC does not cover.
import { randomFillSync } from 'node:crypto';
import { connect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { decodeResponse, encodeRecordBatch, encodeRequest } from '@samsa/protocol';

const PRODUCE = 0;
const API_VERSIONS = 18;
const CORRELATION_ID_OFFSET = 8; // [size:4][apiKey:2][apiVersion:2][correlationId:4]

/** `count` records of `valueSize` random bytes (no key, no headers) in one uncompressed v2 batch. */
export function makeBatch(count, valueSize) {
  const values = Buffer.allocUnsafe(count * valueSize);
  randomFillSync(values);
  const now = Date.now();
  const records = [];
  for (let i = 0; i < count; i++) records.push({ value: values.subarray(i * valueSize, (i + 1) * valueSize), timestamp: now + i });
  return encodeRecordBatch({ records });
}

/**
 * A Produce request for `records` on `topic`-`partition`, or, with `partitionData`
 * ([{ index, records }]), for several partitions of `topic` in one request.
 */
export function produceRequest(version, { topic, partition, acks, timeoutMs, records, partitionData }, correlationId = 0) {
  return encodeRequest(PRODUCE, version, correlationId, 'samsa-bench', {
    transactionalId: null,
    acks,
    timeoutMs,
    topicData: [{ name: topic, partitionData: partitionData ?? [{ index: partition, records }] }],
  });
}

/** A connection that sends size-prefixed frames and hands back response frames in order. */
export class Conn {
  constructor(socket) {
    this.socket = socket;
    this.pending = [];
    this.buf = Buffer.alloc(0);
    this.error = null;
    socket.on('data', (d) => this.onData(d));
    const fail = (err) => {
      this.error ??= err;
      for (const p of this.pending.splice(0)) p.reject(this.error);
    };
    socket.on('error', fail);
    socket.on('close', () => fail(new Error('connection closed by the broker')));
  }

  /** A connection to `host`:`port`; with `tls` (Node's TLS client options, e.g. `{ ca }`) over TLS, for an SSL listener. */
  static open(host, port, tls) {
    return new Promise((res, rej) => {
      const s = tls ? tlsConnect({ ...tls, host, port }).setNoDelay(true) : connect({ host, port, noDelay: true });
      s.once(tls ? 'secureConnect' : 'connect', () => {
        s.off('error', rej);
        res(new Conn(s));
      });
      s.once('error', rej);
    });
  }

  onData(d) {
    // chunks are joined once the frame is complete: joining on every chunk would copy a large
    // Fetch response over and over (quadratic), slowing the load generator's consumers
    if (this.buf.length === 0) this.buf = d;
    else {
      (this.chunks ??= []).push(d);
      this.buffered = (this.buffered ?? 0) + d.length;
      const have = this.buf.length + this.buffered;
      if (have < 4) return;
      if (this.buf.length < 4) this.join();
      if (have < 4 + this.buf.readInt32BE(0)) return;
      this.join();
    }
    while (this.buf.length >= 4) {
      const size = this.buf.readInt32BE(0);
      if (this.buf.length < 4 + size) break;
      const frame = this.buf.subarray(4, 4 + size);
      this.buf = this.buf.subarray(4 + size);
      const p = this.pending.shift();
      if (!p) {
        this.socket.destroy(new Error('response without a request'));
        return;
      }
      if (frame.readInt32BE(0) !== p.correlationId) {
        p.reject(new Error(`correlation id ${frame.readInt32BE(0)} where ${p.correlationId} was expected`));
        continue;
      }
      p.resolve(frame);
    }
  }

  join() {
    if (!this.chunks?.length) return;
    this.buf = Buffer.concat([this.buf, ...this.chunks]);
    this.chunks.length = 0;
    this.buffered = 0;
  }

  /** Writes `parts` as one request; resolves with the response frame (without its size). */
  request(correlationId, parts) {
    if (this.error) return Promise.reject(this.error);
    return new Promise((resolve, reject) => {
      this.pending.push({ correlationId, resolve, reject });
      this.socket.cork();
      for (const p of parts) this.socket.write(p);
      this.socket.uncork();
    });
  }

  close() {
    this.socket.destroy();
  }
}

/** The broker's highest Produce version (ApiVersions v0), capped at `max`. */
export async function produceVersion(conn, max) {
  const frame = await conn.request(0, [encodeRequest(API_VERSIONS, 0, 0, 'samsa-bench', {})]);
  const { body } = decodeResponse(API_VERSIONS, 0, frame);
  const produce = body.apiKeys.find((k) => k.apiKey === PRODUCE);
  if (body.errorCode !== 0 || !produce) throw new Error(`ApiVersions: error ${body.errorCode}, produce ${JSON.stringify(produce)}`);
  const v = Math.min(max, produce.maxVersion);
  if (v < 7) throw new Error(`the broker's Produce versions ${produce.minVersion}-${produce.maxVersion} stop below v7`);
  return v;
}

export function checkProduceResponse(version, frame) {
  const { body } = decodeResponse(PRODUCE, version, frame);
  for (const t of body.responses) {
    for (const p of t.partitionResponses) {
      if (p.errorCode !== 0) return { errorCode: p.errorCode, message: p.errorMessage };
    }
  }
  return null;
}

/**
 * Sends a small batch until the partition accepts it (leadership may still be on its way),
 * up to `timeoutMs`.
 */
export async function waitUntilProducible({ host, port, tls, topic, partition = 0, timeoutMs = 30_000 }) {
  const deadline = Date.now() + timeoutMs;
  const conn = await Conn.open(host, port, tls);
  try {
    const version = await produceVersion(conn, 9);
    const records = makeBatch(1, 16);
    for (let id = 1; ; id++) {
      const err = checkProduceResponse(version, await conn.request(id, [produceRequest(version, { topic, partition, acks: 1, timeoutMs: 5000, records }, id)]));
      if (!err) return;
      if (Date.now() > deadline)
        throw new Error(`${topic}-${partition} still not producible after ${timeoutMs} ms: error ${err.errorCode} ${err.message ?? ''}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    conn.close();
  }
}

/**
 * Produces until `totalBytes` of record batches are acknowledged (or `maxSeconds` pass), keeping
 * `inflight` requests outstanding. Figures are client-side: from the first send to the last ack.
 * With `partitions` (an array of partition ids), each request carries one batch of
 * `recordsPerBatch` records for each of them (as a Kafka producer's request to one broker does).
 */
export async function produceLoad({
  host,
  port,
  topic,
  partition = 0,
  partitions = [partition],
  acks = 1,
  inflight = 5,
  totalBytes,
  maxSeconds = Infinity,
  recordsPerBatch = 1000,
  valueSize = 1024,
  distinctBatches = 4,
  maxVersion = 9,
  /** TLS client options (an SSL listener); plaintext without. */
  tls,
}) {
  const conn = await Conn.open(host, port, tls);
  try {
    const version = await produceVersion(conn, maxVersion);
    const frames = [];
    for (let i = 0; i < distinctBatches; i++) {
      const partitionData = partitions.map((index) => ({ index, records: makeBatch(recordsPerBatch, valueSize) }));
      const frame = produceRequest(version, { topic, acks, timeoutMs: 30_000, partitionData });
      const bytes = partitionData.reduce((n, d) => n + d.records.length, 0);
      frames.push({ head: frame.subarray(0, CORRELATION_ID_OFFSET + 4), rest: frame.subarray(CORRELATION_ID_OFFSET + 4), batchBytes: bytes });
    }
    const batchBytes = frames[0].batchBytes;
    const wantRequests = Math.max(1, Math.round(totalBytes / batchBytes));
    const maxMs = maxSeconds * 1000;

    let sent = 0;
    let acked = 0;
    let sentBytes = 0;
    let ackedBatchBytes = 0;
    let stopSending = false;
    let failure = null;
    const t0 = process.hrtime.bigint();
    const elapsedMs = () => Number(process.hrtime.bigint() - t0) / 1e6;

    await new Promise((resolve, reject) => {
      const sendOne = () => {
        const f = frames[sent % frames.length];
        const correlationId = sent + 1;
        // a fresh 12-byte head per request: the shared body may still be queued in the socket
        const head = Buffer.from(f.head);
        head.writeInt32BE(correlationId, CORRELATION_ID_OFFSET);
        sent++;
        sentBytes += head.length + f.rest.length;
        conn
          .request(correlationId, [head, f.rest])
          .then((resp) => {
            const err = checkProduceResponse(version, resp);
            if (err) throw new Error(`produce failed: error ${err.errorCode} ${err.message ?? ''}`);
            acked++;
            ackedBatchBytes += f.batchBytes;
            if (elapsedMs() >= maxMs) stopSending = true;
            if (!stopSending && sent < wantRequests) sendOne();
            else if (acked === sent) resolve();
          })
          .catch((err) => {
            failure ??= err;
            reject(failure);
          });
      };
      for (let i = 0; i < Math.min(inflight, wantRequests); i++) sendOne();
    });
    const seconds = elapsedMs() / 1000;
    return {
      produceVersion: version,
      requests: acked,
      records: acked * recordsPerBatch * partitions.length,
      batchBytes: ackedBatchBytes,
      wireBytes: sentBytes,
      seconds,
      mbps: ackedBatchBytes / seconds / 1e6,
      recordsPerSec: (acked * recordsPerBatch * partitions.length) / seconds,
      batchSize: batchBytes,
    };
  } finally {
    conn.close();
  }
}
