// End-to-end latency at a paced rate: a producer creates `valueSize`-byte records at `mbps`
// (MB = 10^6 bytes) and sends them with Produce (one connection per leader, up to `inflight`
// requests outstanding each, a request carrying one batch per partition that has records waiting,
// as a Kafka producer's sender does with linger.ms=0); consumers long-poll Fetch on each leader
// (one connection per leader, all its partitions). Each record's value starts with the time it
// was due to be sent (performance.now(), a float64: the schedule, so a late timer or a blocked
// request counts); latency = arrival of the Fetch response that carries it minus that time.
import { RecordSetIterator, decodeResponse, encodeRecordBatch, encodeRequest } from '@samsa/protocol';
import { performance } from 'node:perf_hooks';
import { Conn, checkProduceResponse, produceRequest, produceVersion } from './producer.mjs';

const FETCH = 1;
const API_VERSIONS = 18;

async function fetchVersion(conn, max) {
  const frame = await conn.request(0, [encodeRequest(API_VERSIONS, 0, 0, 'samsa-bench', {})]);
  const { body } = decodeResponse(API_VERSIONS, 0, frame);
  const fetch = body.apiKeys.find((k) => k.apiKey === FETCH);
  if (body.errorCode !== 0 || !fetch) throw new Error(`ApiVersions: error ${body.errorCode}, fetch ${JSON.stringify(fetch)}`);
  const v = Math.min(max, fetch.maxVersion);
  if (v < 4) throw new Error(`the broker's Fetch versions ${fetch.minVersion}-${fetch.maxVersion} stop below v4`);
  return v;
}

function fetchRequest(version, correlationId, { topic, offsets, maxWaitMs, partitionMaxBytes }) {
  return encodeRequest(FETCH, version, correlationId, 'samsa-bench-consumer', {
    clusterId: null,
    replicaId: -1,
    replicaState: { replicaId: -1, replicaEpoch: -1n },
    maxWaitMs,
    minBytes: 1,
    maxBytes: 52_428_800,
    isolationLevel: 0,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [
      {
        topic,
        topicId: Buffer.alloc(16),
        partitions: [...offsets].map(([partition, fetchOffset]) => ({
          partition,
          currentLeaderEpoch: -1,
          fetchOffset,
          lastFetchedEpoch: -1,
          logStartOffset: -1n,
          partitionMaxBytes,
          replicaDirectoryId: Buffer.alloc(16),
        })),
      },
    ],
    forgottenTopicsData: [],
    rackId: '',
  });
}

/** Sorted-array percentile (nearest rank). */
export function percentile(sorted, q) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

function summarize(xs) {
  const s = Float64Array.from(xs).sort();
  const mean = s.reduce((a, b) => a + b, 0) / (s.length || 1);
  return {
    count: s.length,
    mean,
    p50: percentile(s, 0.5),
    p90: percentile(s, 0.9),
    p99: percentile(s, 0.99),
    p999: percentile(s, 0.999),
    max: s.length ? s[s.length - 1] : NaN,
  };
}

/**
 * Runs the paced load for `warmupSeconds` + `seconds`; latencies of records due in the first
 * `warmupSeconds` are left out. `leaders`: [{ host, port, partitions: [ids] }] (the partitions of
 * `topic` each broker leads; records go round-robin over all of them). Returns
 * { latency: {count, mean, p50, p90, p99, p999, max} (ms), produceAck: the same for Produce
 * request → response, records, consumed, lost (not fetched by the end), requests, mbps, seconds,
 * timeline }.
 */
export async function pacedEndToEnd({
  leaders,
  topic,
  mbps = 10,
  valueSize = 1024,
  acks = -1,
  inflight = 5,
  seconds = 20,
  warmupSeconds = 2,
  tickMs = 1,
  /** Records per batch at most (a partition's further records wait for the next request), like a Kafka producer's batch.size. */
  maxBatchRecords = 256,
  drainMs = 10_000,
  fetchMaxWaitMs = 500,
  /** Where the consumers start (records before it, e.g. a readiness probe's, are not ours). */
  startOffset = 0n,
  /** TLS client options (an SSL listener); plaintext without. */
  tls,
}) {
  const partitions = leaders.flatMap((l) => l.partitions);
  const producers = await Promise.all(leaders.map((l) => Conn.open(l.host, l.port, tls)));
  const consumers = await Promise.all(leaders.map((l) => Conn.open(l.host, l.port, tls)));
  const closeAll = () => [...producers, ...consumers].forEach((c) => c.close());
  try {
    const pv = await produceVersion(producers[0], 9);
    const fv = await fetchVersion(consumers[0], 11);
    const filler = Buffer.alloc(valueSize, 0x61);
    const recordIntervalMs = (valueSize / (mbps * 1e6)) * 1000;
    const totalMs = (warmupSeconds + seconds) * 1000;
    const measureFrom = warmupSeconds * 1000; // relative to t0
    const latencies = [];
    const ackLatencies = [];
    // per second of the schedule: [records, max end-to-end ms, max Produce ack ms]
    const timeline = Array.from({ length: Math.ceil(totalMs / 1000) + 1 }, () => [0, 0, 0]);
    const second = (t) => timeline[Math.min(timeline.length - 1, Math.max(0, Math.floor((t - t0) / 1000)))];
    let failure = null;
    let created = 0;
    let consumed = 0;
    let requests = 0;
    let drainDeadline = Infinity;
    // per partition: due times (ms, performance.now()) of records not yet sent
    const waiting = new Map(partitions.map((p) => [p, []]));
    const outstanding = leaders.map(() => 0);
    let nextCorrelation = 1;
    const t0 = performance.now() + 20;
    let producing = true;

    const fail = (err) => {
      failure ??= err;
    };

    const sendFrom = (li) => {
      while (outstanding[li] < inflight) {
        const partitionData = [];
        for (const p of leaders[li].partitions) {
          const due = waiting.get(p);
          if (due.length === 0) continue;
          const now = Date.now();
          const take = due.length > maxBatchRecords ? due.splice(0, maxBatchRecords) : due;
          if (take === due) waiting.set(p, []);
          const records = take.map((t) => {
            const value = Buffer.from(filler);
            value.writeDoubleBE(t, 0);
            return { value, timestamp: now };
          });
          partitionData.push({ index: p, records: encodeRecordBatch({ records }) });
        }
        if (partitionData.length === 0) return;
        const id = nextCorrelation++;
        const sentAt = performance.now();
        outstanding[li]++;
        requests++;
        producers[li]
          .request(id, [produceRequest(pv, { topic, acks, timeoutMs: 30_000, partitionData }, id)])
          .then((frame) => {
            outstanding[li]--;
            const err = checkProduceResponse(pv, frame);
            if (err) throw new Error(`produce failed: error ${err.errorCode} ${err.message ?? ''}`);
            const ms = performance.now() - sentAt;
            ackLatencies.push(ms);
            const sec = second(sentAt);
            sec[2] = Math.max(sec[2], ms);
            sendFrom(li);
          })
          .catch(fail);
      }
    };

    // the pacer: on every tick, create the records due by now, then send what the in-flight limit allows
    const done = new Promise((resolve) => {
      const tick = () => {
        if (failure) return resolve();
        const now = performance.now();
        const elapsed = Math.min(now - t0, totalMs);
        const due = Math.floor(elapsed / recordIntervalMs);
        for (; created < due; created++) waiting.get(partitions[created % partitions.length]).push(t0 + created * recordIntervalMs);
        leaders.forEach((_, li) => sendFrom(li));
        if (now - t0 >= totalMs) return resolve();
        setTimeout(tick, tickMs);
      };
      setTimeout(tick, Math.max(0, t0 - performance.now()));
    });

    // the consumers: one long-poll Fetch at a time per leader, from `startOffset`
    const offsets = leaders.map((l) => new Map(l.partitions.map((p) => [p, startOffset])));
    const consume = async (li) => {
      while (producing || consumed < created) {
        const id = nextCorrelation++;
        const frame = await consumers[li].request(id, [
          fetchRequest(fv, id, { topic, offsets: offsets[li], maxWaitMs: fetchMaxWaitMs, partitionMaxBytes: 1_048_576 }),
        ]);
        const arrived = performance.now();
        const { body } = decodeResponse(FETCH, fv, frame);
        if (body.errorCode) throw new Error(`fetch failed: error ${body.errorCode}`);
        for (const t of body.responses) {
          for (const p of t.partitions) {
            if (p.errorCode) throw new Error(`fetch ${topic}-${p.partitionIndex} failed: error ${p.errorCode}`);
            if (!p.records || p.records.length === 0) continue;
            const it = new RecordSetIterator(p.records);
            for (const batch of it) {
              // a batch may start before the fetch offset: skip the records already seen
              const from = offsets[li].get(p.partitionIndex);
              for (const r of batch.records()) {
                if (r.offset < from || r.value?.length !== valueSize) continue;
                const due = r.value.readDoubleBE(0);
                consumed++;
                if (due - t0 >= measureFrom) latencies.push(arrived - due);
                const sec = second(due);
                sec[0]++;
                sec[1] = Math.max(sec[1], arrived - due);
              }
              offsets[li].set(p.partitionIndex, batch.nextOffset);
            }
          }
        }
        if (performance.now() > drainDeadline) break;
      }
    };
    const consumersDone = leaders.map((_, li) => consume(li).catch(fail));

    await done;
    // let the in-flight requests finish, then the consumers catch up
    const tEnd = performance.now();
    while (!failure && outstanding.some((n) => n > 0) && performance.now() - tEnd < drainMs) await new Promise((r) => setTimeout(r, 5));
    producing = false;
    drainDeadline = performance.now() + drainMs;
    await Promise.race([Promise.all(consumersDone), new Promise((r) => setTimeout(r, drainMs + fetchMaxWaitMs + 1000).unref())]);
    if (failure) throw failure;
    return {
      latency: summarize(latencies),
      produceAck: summarize(ackLatencies),
      records: created,
      consumed,
      lost: created - consumed,
      requests,
      /** value bytes created per second of the schedule */
      mbps: (created * valueSize) / totalMs / 1e3,
      seconds: totalMs / 1000,
      /** per second of the schedule: [records fetched, max end-to-end ms, max Produce ack ms] */
      timeline: timeline.map(([n, e2e, ack]) => [n, Math.round(e2e * 10) / 10, Math.round(ack * 10) / 10]),
    };
  } finally {
    closeAll();
  }
}
