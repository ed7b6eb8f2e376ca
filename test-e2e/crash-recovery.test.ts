/**
 * kill -9 recovery: brokers SIGKILLed while producers write must come back with every acknowledged
 * record at its acknowledged offset; a segment whose tail was torn mid-batch is truncated to the
 * last valid batch at startup (with a log line saying so) and appends continue at the right offset.
 *
 * The producer is a small raw-protocol one (Produce v9, acks=all, pipelined, mixed codecs) so the
 * test knows exactly which records were acknowledged at which offsets.
 */
import { readFile, readdir, stat, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  CompressionType,
  decodeResponse,
  encodeRecordBatch,
  encodeRequest,
  recordBatches,
  topicPartitionKey,
  type FetchRequest,
  type ProduceRequest,
} from '@samsa/protocol';
import { newTopicId } from '@samsa/zk-paths';
import { describeCluster, type Broker, TestCluster, until } from './harness.js';
import { RawConn } from './clients/raw-conn.js';

const TOPIC = 'crash';
const PARTITIONS = 6;
const BROKERS = 3;
/** Kill once this many records are acknowledged (producers keep going until the kill). */
const ACKED_BEFORE_KILL = 20_000;
const IN_FLIGHT = 4;
const SEED = 0xc4a5;

// ---------------------------------------------------------------------------------------------

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function produceFrame(corr: number, partition: number, records: Buffer): Buffer {
  const body: ProduceRequest = {
    transactionalId: null,
    acks: -1,
    timeoutMs: 10_000,
    topicData: [{ name: TOPIC, partitionData: [{ index: partition, records }] }],
  };
  return encodeRequest(0, 9, corr, 'crash-producer', body);
}

function produceResult(frame: Buffer): { errorCode: number; baseOffset: bigint } {
  const p = decodeResponse(0, 9, frame).body.responses[0]!.partitionResponses[0]!;
  return { errorCode: p.errorCode, baseOffset: p.baseOffset };
}

function fetchFrame(corr: number, partition: number, offset: bigint): Buffer {
  const body: FetchRequest = {
    clusterId: null,
    replicaId: -1,
    replicaState: { replicaId: -1, replicaEpoch: -1n },
    maxWaitMs: 0,
    minBytes: 1,
    maxBytes: 4 << 20,
    isolationLevel: 0,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [
      {
        topic: TOPIC,
        topicId: Buffer.alloc(16),
        partitions: [
          {
            partition,
            currentLeaderEpoch: -1,
            fetchOffset: offset,
            lastFetchedEpoch: -1,
            logStartOffset: -1n,
            partitionMaxBytes: 4 << 20,
            replicaDirectoryId: Buffer.alloc(16),
          },
        ],
      },
    ],
    forgottenTopicsData: [],
    rackId: '',
  };
  return encodeRequest(1, 12, corr, 'crash-reader', body);
}

/** Every record of a partition, offset → value, read with raw Fetch v12 up to the high watermark. */
async function readPartition(port: number, partition: number, timeoutMs = 30_000): Promise<{ values: Map<bigint, string>; highWatermark: bigint }> {
  const conn = await RawConn.open(port);
  try {
    let corr = 0;
    // the partition is served once the restarted broker has been made its leader
    const first = await until(
      async () => {
        const p = decodeResponse(1, 12, await conn.request(fetchFrame(++corr, partition, 0n))).body.responses[0]!.partitions[0]!;
        return p.errorCode === 0 ? p : null;
      },
      `partition ${partition} served`,
      timeoutMs,
      100,
    );
    const hw = first.highWatermark;
    const values = new Map<bigint, string>();
    let offset = 0n;
    let records = first.records;
    for (;;) {
      let progressed = false;
      for (const b of recordBatches(records ?? Buffer.alloc(0))) {
        for (const r of b) {
          if (r.offset < offset) continue;
          if (values.has(r.offset)) throw new Error(`partition ${partition}: offset ${r.offset} twice`);
          values.set(r.offset, r.value?.toString() ?? '');
        }
        if (b.nextOffset > offset) {
          offset = b.nextOffset;
          progressed = true;
        }
      }
      if (offset >= hw) break;
      if (!progressed) throw new Error(`partition ${partition}: fetch at ${offset} made no progress (high watermark ${hw})`);
      const p = decodeResponse(1, 12, await conn.request(fetchFrame(++corr, partition, offset))).body.responses[0]!.partitions[0]!;
      if (p.errorCode !== 0) throw new Error(`partition ${partition}: fetch at ${offset} failed with error ${p.errorCode}`);
      records = p.records;
    }
    return { values, highWatermark: hw };
  } finally {
    conn.destroy();
  }
}

interface AckedBatch {
  partition: number;
  baseOffset: bigint;
  values: string[];
}

interface ProducerStats {
  sent: number;
  acked: number;
  failed: number;
}

/**
 * Produces to one partition until its connection dies (or `stop()`), keeping IN_FLIGHT requests
 * pipelined; records every acknowledged batch with the offset the broker gave it.
 */
async function producePartition(port: number, partition: number, acked: AckedBatch[], stats: ProducerStats, stop: () => boolean, tag: string): Promise<void> {
  const conn = await RawConn.open(port);
  const random = rng(SEED + partition);
  const codecs = [CompressionType.NONE, CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4, CompressionType.ZSTD];
  const inflight: Array<{ corr: number; values: string[] }> = [];
  let corr = 0;
  let seq = 0;
  try {
    for (;;) {
      while (inflight.length < IN_FLIGHT && !stop() && !conn.closed) {
        const n = 1 + Math.floor(random() * 40);
        const values = Array.from({ length: n }, () => `${tag}-p${partition}-${seq++}`);
        const records = encodeRecordBatch({ records: values.map((v) => ({ value: v })), compression: codecs[Math.floor(random() * codecs.length)]! });
        conn.write(produceFrame(++corr, partition, records));
        inflight.push({ corr, values });
        stats.sent += n;
      }
      if (inflight.length === 0) return;
      const got = await conn.next(15_000);
      if (got.outcome !== 'frame') {
        if (got.outcome === 'timeout') throw new Error(`partition ${partition}: no response within 15000 ms`);
        return; // the broker died: whatever is in flight is unacknowledged
      }
      const frame = got.frame;
      const req = inflight.shift()!;
      const { header } = decodeResponse(0, 9, frame);
      if (header.correlationId !== req.corr) throw new Error(`partition ${partition}: response ${header.correlationId} for request ${req.corr}`);
      const r = produceResult(frame);
      if (r.errorCode === 0) {
        acked.push({ partition, baseOffset: r.baseOffset, values: req.values });
        stats.acked += req.values.length;
      } else {
        stats.failed += req.values.length;
      }
    }
  } finally {
    conn.destroy();
  }
}

/** Lines appended to a broker's broker.log since `from` bytes, parsed. */
async function logLinesSince(b: Broker, from: number): Promise<Array<Record<string, unknown>>> {
  const text = (await readFile(join(b.o.dir, 'broker.log'))).subarray(from).toString();
  const out: Array<Record<string, unknown>> = [];
  for (const l of text.split('\n')) {
    if (!l.startsWith('{')) continue;
    try {
      out.push(JSON.parse(l) as Record<string, unknown>);
    } catch {
      /* a line being written */
    }
  }
  return out;
}

async function logSize(b: Broker): Promise<number> {
  return (await stat(join(b.o.dir, 'broker.log')).catch(() => ({ size: 0 }))).size;
}

describeCluster(
  'kill -9 recovery',
  () => {
    let c: TestCluster;
    const acked: AckedBatch[] = [];
    const leaderOf = (p: number) => c.brokers[p % BROKERS]!;

    /** Waits until ZooKeeper forgot the killed brokers (their sessions expired), then starts them again. */
    async function restart(bs: Broker[]): Promise<number[]> {
      await until(
        async () => {
          const ids = await c.admin.getBrokerIds();
          return bs.every((b) => !ids.includes(b.id));
        },
        'registrations of the killed brokers to expire',
        30_000,
        200,
      );
      const from = await Promise.all(bs.map((b) => logSize(b)));
      await Promise.all(bs.map((b) => b.launch()));
      await Promise.all(bs.map((b) => b.waitReady()));
      await until(
        async () => {
          const ids = await c.admin.getBrokerIds();
          return bs.every((b) => ids.includes(b.id)) && (await c.controllerId()) !== null;
        },
        'restarted brokers registered',
        30_000,
        100,
      );
      return from;
    }

    function check(partition: number, values: Map<bigint, string>, below = BigInt(Number.MAX_SAFE_INTEGER)): { checked: number; problems: string[] } {
      const problems: string[] = [];
      let checked = 0;
      for (const a of acked) {
        if (a.partition !== partition) continue;
        a.values.forEach((v, i) => {
          const off = a.baseOffset + BigInt(i);
          if (off >= below) return;
          checked++;
          const got = values.get(off);
          if (got !== v && problems.length < 10) problems.push(`partition ${partition} offset ${off}: acknowledged ${v}, read ${got ?? 'nothing'}`);
        });
      }
      return { checked, problems };
    }

    beforeAll(async () => {
      c = await TestCluster.start({ brokers: BROKERS });
      await c.admin.createTopic(TOPIC, newTopicId(), new Map(Array.from({ length: PARTITIONS }, (_, p) => [p, [p % BROKERS]])), {});
      await c.waitForLeaders(TOPIC, PARTITIONS);
      // every leader serves its partitions before producing starts
      for (let p = 0; p < PARTITIONS; p++) await readPartition(leaderOf(p).o.port, p);
    });
    afterAll(async () => {
      await c?.stop();
    });

    it('SIGKILL of every broker mid-produce: every acknowledged record is read back at its acknowledged offset', async () => {
      const stats: ProducerStats = { sent: 0, acked: 0, failed: 0 };
      const producers = Array.from({ length: PARTITIONS }, (_, p) => producePartition(leaderOf(p).o.port, p, acked, stats, () => false, 'a'));
      // let the producers run, then kill every broker while requests are in flight
      await until(() => stats.acked >= ACKED_BEFORE_KILL, `${ACKED_BEFORE_KILL} acknowledged records`, 60_000, 10);
      const ackedAtKill = stats.acked;
      await Promise.all(c.brokers.map((b) => b.kill()));
      await Promise.all(producers);
      expect(stats.failed).toBe(0);
      expect(ackedAtKill).toBeGreaterThanOrEqual(ACKED_BEFORE_KILL);

      const logFrom = await restart(c.brokers);
      // the restart was unclean: logs were recovered
      for (const [i, b] of c.brokers.entries()) {
        const lines = await logLinesSince(b, logFrom[i]!);
        const loaded = lines.find((l) => l['msg'] === 'loaded logs in log dir');
        expect(loaded?.['hadCleanShutdown'], `broker ${b.id} loaded its logs after an unclean shutdown`).toBe(false);
        expect(lines.some((l) => l['msg'] === 'recovering unflushed segment')).toBe(true);
      }

      let recovered = 0;
      let checked = 0;
      const problems: string[] = [];
      const perPartition: string[] = [];
      for (let p = 0; p < PARTITIONS; p++) {
        const { values, highWatermark } = await readPartition(leaderOf(p).o.port, p);
        // offsets are dense from 0 to the high watermark
        expect(values.size, `partition ${p} has every offset below its high watermark`).toBe(Number(highWatermark));
        const r = check(p, values);
        checked += r.checked;
        problems.push(...r.problems);
        recovered += values.size;
        const ackedHere = acked.filter((a) => a.partition === p).reduce((n, a) => n + a.values.length, 0);
        perPartition.push(`p${p}: acked ${ackedHere}, in log ${values.size}`);
      }
      console.log(
        `[crash] ${stats.sent} records sent, ${stats.acked} acknowledged (${acked.length} batches), ${recovered} in the logs after recovery; ${perPartition.join(', ')}`,
      );
      expect(problems).toEqual([]);
      expect(checked).toBe(stats.acked);
      expect(recovered).toBeGreaterThanOrEqual(stats.acked);
    });

    it('segments torn mid-batch are truncated to the last valid batch at startup; earlier records stay readable and appends continue at the right offset', async () => {
      const b0 = c.brokers[0]!;
      // broker 0 leads partitions 0 and 3: one loses the last 7 bytes (the tail of its last batch's
      // records), the other keeps only 5 bytes of its last batch (not even the length field)
      const tears = [
        { partition: 0, cut: (size: number) => Math.min(7, size - 1) },
        { partition: 3, cut: (size: number) => size - 5 },
      ];
      // a few more acknowledged batches on the restarted broker, so each tail is a known batch
      for (const { partition } of tears) {
        const stats: ProducerStats = { sent: 0, acked: 0, failed: 0 };
        let batches = 0;
        await producePartition(b0.o.port, partition, acked, stats, () => ++batches > 8, 'b');
        expect(stats.failed).toBe(0);
        expect(stats.acked).toBeGreaterThan(0);
      }
      await b0.kill();

      const torn: Array<{
        partition: number;
        segment: string;
        last: { position: number; size: number; baseOffset: bigint; lastOffset: bigint };
        cut: number;
        size: number;
      }> = [];
      for (const { partition, cut: cutOf } of tears) {
        // the active segment: the highest base offset
        const dir = join(b0.o.dir, 'logs', topicPartitionKey(TOPIC, partition));
        const logs = (await readdir(dir)).filter((n) => n.endsWith('.log')).sort();
        const segment = join(dir, logs.at(-1)!);
        const bytes = await readFile(segment);
        let pos = 0;
        let last = { position: 0, size: 0, baseOffset: 0n, lastOffset: 0n };
        while (pos + 12 <= bytes.length) {
          const size = 12 + bytes.readInt32BE(pos + 8);
          last = { position: pos, size, baseOffset: bytes.readBigInt64BE(pos), lastOffset: bytes.readBigInt64BE(pos) + BigInt(bytes.readInt32BE(pos + 23)) };
          pos += size;
        }
        expect(pos, 'the segment ends at a batch boundary before it is torn').toBe(bytes.length);
        const cut = cutOf(last.size);
        expect(cut).toBeGreaterThan(0);
        expect(cut).toBeLessThan(last.size);
        await truncate(segment, bytes.length - cut);
        torn.push({ partition, segment, last, cut, size: bytes.length });
      }

      const [from] = await restart([b0]);
      const MSG = 'corruption found in log segment; truncated it to the last valid batch';
      const lines = await until(
        async () => {
          const ls = await logLinesSince(b0, from!);
          return torn.every((t) => ls.some((l) => l['msg'] === MSG && l['topic'] === TOPIC && l['partition'] === t.partition)) ? ls : null;
        },
        'the truncation log lines',
        30_000,
        100,
      );

      for (const t of torn) {
        const line = lines.find((l) => l['msg'] === MSG && l['topic'] === TOPIC && l['partition'] === t.partition)!;
        const truncated = t.last.size - t.cut;
        console.log(
          `[crash] torn tail of ${topicPartitionKey(TOPIC, t.partition)}: cut ${t.cut} bytes of the ${t.last.size}-byte batch at offsets ${t.last.baseOffset}..${t.last.lastOffset} ` +
            `(${truncated} bytes of it left); broker logged ${JSON.stringify(line)}`,
        );
        expect(line['level']).toBe(40);
        expect(line['bytesTruncated']).toBe(truncated);
        expect(line['nextOffset']).toBe(String(t.last.baseOffset));
        expect(line['segment']).toBe(t.segment);
        expect((await stat(t.segment)).size).toBe(t.last.position);

        // everything before the torn batch is there, at its acknowledged offset
        const { values, highWatermark } = await readPartition(b0.o.port, t.partition);
        expect(highWatermark).toBe(t.last.baseOffset);
        expect(values.size).toBe(Number(t.last.baseOffset));
        const r = check(t.partition, values, t.last.baseOffset);
        expect(r.problems).toEqual([]);
        expect(r.checked).toBeGreaterThan(0);

        // producing continues at the offset of the torn batch
        const conn = await RawConn.open(b0.o.port);
        const res = produceResult(
          await conn.request(produceFrame(1, t.partition, encodeRecordBatch({ records: [{ value: 'after-torn-tail' }, { value: 'after-torn-tail-2' }] }))),
        );
        conn.destroy();
        expect(res).toEqual({ errorCode: 0, baseOffset: t.last.baseOffset });
        const after = await readPartition(b0.o.port, t.partition);
        expect(after.highWatermark).toBe(t.last.baseOffset + 2n);
        expect(after.values.get(t.last.baseOffset)).toBe('after-torn-tail');
        expect(after.values.get(t.last.baseOffset + 1n)).toBe('after-torn-tail-2');
        console.log(
          `[crash] ${topicPartitionKey(TOPIC, t.partition)}: ${r.checked} earlier acknowledged records intact, next append at offset ${res.baseOffset}`,
        );
      }
      // only the torn partitions were truncated
      expect(
        lines
          .filter((l) => l['msg'] === MSG)
          .map((l) => l['partition'])
          .sort(),
      ).toEqual(torn.map((t) => t.partition).sort());
    });
  },
  { processesOnly: "reads the brokers' log files and segment files" },
);
