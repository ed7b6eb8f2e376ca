/**
 * The scenarios of Kafka's EpochDrivenReplicationProtocolAcceptanceTest (KIP-101 / KIP-279) against
 * real broker processes: leader epochs recorded per leader change, no divergent logs after a
 * leader's log lost its tail, offsets that never go backwards when a follower's log end falls in
 * the middle of a leader batch, fast leader changes, and logs that converge after a chain of
 * unclean elections. Leadership is driven explicitly (brokers stopped, killed and launched in a
 * fixed order) and replica logs are compared by reading each broker's segment files, batch by
 * batch (base offset, last offset, partition leader epoch, CRC), then byte for byte.
 */
import { readFile, readdir, truncate, unlink } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { CompressionType, decodeResponse, encodeRecordBatch, encodeRequest, recordBatches, topicPartitionKey } from '@samsa/protocol';
import { newTopicId } from '@samsa/zk-paths';
import { describeCluster, TestCluster, until } from './harness.js';
import { fetchPartition, rawRequest } from './clients/wire.js';

type Broker = TestCluster['brokers'][number];

/** Fast, deterministic leadership: no preferred-leader rebalancing behind the test's back. */
const BASE_OVERRIDES: Record<string, string> = {
  'auto.leader.rebalance.enable': 'false',
  'controlled.shutdown.max.retries': '1',
  'controlled.shutdown.retry.backoff.ms': '100',
  'replica.fetch.backoff.ms': '100',
  'replica.fetch.wait.max.ms': '200',
  'replica.high.watermark.checkpoint.interval.ms': '500',
};

const TOPIC = 'topic1';
const MSG = 'm'.repeat(1000);
const MSG_BIGGER = 'B'.repeat(10_000);

async function withCluster(overrides: Record<string, string>, fn: (c: TestCluster) => Promise<void>, brokers = 2): Promise<void> {
  const c = await TestCluster.start({ brokers, overrides: { ...BASE_OVERRIDES, ...overrides } });
  try {
    await fn(c);
  } catch (err) {
    // where the brokers' logs are (kept with SAMSA_E2E_KEEP=1)
    if (err instanceof Error) err.message += `\n(cluster dir ${c.dir})`;
    throw err;
  } finally {
    for (const b of c.brokers) b.resume();
    await c.stop();
  }
}

// ---- reading replicas from disk ------------------------------------------------------------------

const partitionDir = (b: Broker, topic = TOPIC, partition = 0) => join(b.o.dir, 'logs', topicPartitionKey(topic, partition));

async function segmentFiles(b: Broker, topic = TOPIC): Promise<string[]> {
  const dir = partitionDir(b, topic);
  const names = await readdir(dir).catch(() => [] as string[]);
  return names
    .filter((n) => n.endsWith('.log'))
    .sort()
    .map((n) => join(dir, n));
}

interface BatchSummary {
  base: bigint;
  last: bigint;
  epoch: number;
  crc: number;
}

/** Every complete batch of the replica's segment files, in file order. */
async function batchesOf(b: Broker, topic = TOPIC): Promise<BatchSummary[]> {
  const out: BatchSummary[] = [];
  for (const f of await segmentFiles(b, topic)) {
    const buf = await readFile(f).catch(() => Buffer.alloc(0));
    for (const batch of recordBatches(buf)) {
      out.push({ base: batch.baseOffset, last: batch.lastOffset, epoch: batch.partitionLeaderEpoch, crc: batch.crc >>> 0 });
    }
  }
  return out;
}

const show = (bs: BatchSummary[]) => bs.map((x) => `${x.base}-${x.last}@e${x.epoch}#${x.crc.toString(16)}`);

/** The segment files' bytes, concatenated. */
async function logBytes(b: Broker, topic = TOPIC): Promise<Buffer> {
  const parts: Buffer[] = [];
  for (const f of await segmentFiles(b, topic)) parts.push(await readFile(f));
  return Buffer.concat(parts);
}

const logEnd = (bs: BatchSummary[]) => (bs.length === 0 ? 0n : bs[bs.length - 1]!.last + 1n);

/** `leader-epoch-checkpoint` as [epoch, startOffset] pairs. */
async function epochEntries(b: Broker, topic = TOPIC): Promise<Array<[number, number]>> {
  const text = await readFile(join(partitionDir(b, topic), 'leader-epoch-checkpoint'), 'utf8').catch(() => '');
  const lines = text.trim().split('\n');
  if (lines.length < 2) return [];
  return lines.slice(2, 2 + Number(lines[1])).map((l) => {
    const [e, o] = l.trim().split(/\s+/);
    return [Number(e), Number(o)];
  });
}

/** Polls until the replica's leader-epoch-checkpoint holds `expected` (it is written just after the batch that adds an entry). */
async function awaitEpochs(b: Broker, expected: Array<[number, number]>, what: string): Promise<void> {
  let last: Array<[number, number]> = [];
  await until(
    async () => {
      last = await epochEntries(b);
      return JSON.stringify(last) === JSON.stringify(expected);
    },
    `${what}: leader-epoch-checkpoint of broker ${b.id} = ${JSON.stringify(expected)}`,
    10_000,
  ).catch((err: Error) => {
    throw new Error(`${err.message} (it holds ${JSON.stringify(last)})`);
  });
}

/** Offsets strictly increase from batch to batch and inside each batch; with `contiguous`, without gaps from 0. */
function checkOffsets(bs: BatchSummary[], contiguous: boolean): void {
  let prevLast = -1n;
  for (const x of bs) {
    expect(x.last, `batch ${x.base}-${x.last}`).toBeGreaterThanOrEqual(x.base);
    expect(x.base, `offset ${x.base} after ${prevLast}: offsets went backwards`).toBeGreaterThan(prevLast);
    if (contiguous) expect(x.base, `gap after ${prevLast}`).toBe(prevLast + 1n);
    prevLast = x.last;
  }
}

/**
 * Polls (no sleeps) until every broker's replica holds the same batches (and, with `leo`, ends
 * there); then the segment files must be byte-identical. Returns the common batches.
 */
async function awaitLogsMatch(brokers: Broker[], leo?: bigint, timeoutMs = 30_000): Promise<BatchSummary[]> {
  let last: string[][] = [];
  try {
    await until(
      async () => {
        const all = await Promise.all(brokers.map((b) => batchesOf(b)));
        last = all.map(show);
        const first = JSON.stringify(last[0]);
        if (!last.every((s) => JSON.stringify(s) === first)) return false;
        return leo === undefined ? all[0]!.length > 0 : logEnd(all[0]!) === leo;
      },
      'replica logs to converge',
      timeoutMs,
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}\n${brokers.map((b, i) => `broker ${b.id}: ${last[i]?.join(' ')}`).join('\n')}`);
  }
  const bytes = await Promise.all(brokers.map((b) => logBytes(b)));
  for (let i = 1; i < bytes.length; i++)
    expect(bytes[i]!.equals(bytes[0]!), `segment bytes of broker ${brokers[i]!.id} vs broker ${brokers[0]!.id}`).toBe(true);
  return batchesOf(brokers[0]!);
}

// ---- driving the cluster -----------------------------------------------------------------------

/** Error codes a produce gets back without anything having been written. */
const RETRIABLE = new Set([3, 5, 6, 19, 74, 75]);

/**
 * One batch to the leader `leaderId` (waited for in ZooKeeper, then until it serves). Retries only
 * answers that mean nothing was written. Returns the batch's base offset.
 */
async function produce(c: TestCluster, leaderId: number, acks: number, values: string[], compression: CompressionType = CompressionType.NONE): Promise<bigint> {
  await until(async () => (await c.leaderOf(TOPIC, 0)) === leaderId, `broker ${leaderId} to lead ${TOPIC}-0`);
  const records = encodeRecordBatch({ records: values.map((value) => ({ value })), compression });
  return until(
    async () => {
      let r;
      try {
        r = await rawRequest(c.broker(leaderId).address, 0, 9, {
          transactionalId: null,
          acks,
          timeoutMs: 10_000,
          topicData: [{ name: TOPIC, partitionData: [{ index: 0, records }] }],
        });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ECONNREFUSED') return undefined;
        throw err;
      }
      const p = r.responses[0]!.partitionResponses[0]!;
      if (p.errorCode === 0) return p.baseOffset;
      if (RETRIABLE.has(p.errorCode)) return undefined;
      throw new Error(`produce to broker ${leaderId} failed with error code ${p.errorCode}`);
    },
    `produce accepted by broker ${leaderId}`,
    30_000,
  );
}

async function createTopic(c: TestCluster, configs: Record<string, string> = {}, replicas = [0, 1]): Promise<void> {
  await c.admin.createTopic(TOPIC, newTopicId(), new Map([[0, replicas]]), configs);
  await c.waitForLeaders(TOPIC, 1);
}

const stateOf = async (c: TestCluster) => (await c.admin.getPartitionState({ topic: TOPIC, partition: 0 }))!.state;

async function awaitIsr(c: TestCluster, size = 2): Promise<{ leader: number; leaderEpoch: number; isr: number[] }> {
  return until(
    async () => {
      const s = await c.admin.getPartitionState({ topic: TOPIC, partition: 0 });
      return s && s.state.leader >= 0 && s.state.isr.length === size ? s.state : undefined;
    },
    `ISR of ${TOPIC}-0 of size ${size}`,
    30_000,
  );
}

async function start(b: Broker): Promise<void> {
  await b.launch();
  await b.waitReady();
}

/** Kafka's bounce(): an orderly shutdown (controlled shutdown moves leadership away), then a restart. */
async function bounce(b: Broker): Promise<void> {
  await b.stop();
  await start(b);
}

/** What ZooKeeper says the leader is, once it is `expected` (or anyone live if undefined). */
async function awaitLeader(c: TestCluster, expected: number): Promise<{ leader: number; leaderEpoch: number; isr: number[] }> {
  return until(
    async () => {
      const s = await stateOf(c);
      return s.leader === expected ? s : undefined;
    },
    `broker ${expected} elected leader`,
    30_000,
  );
}

/**
 * One persistent connection sending Produce v9 requests one at a time (a client keeps its
 * connection: a request can be waiting in the broker's socket the moment it takes leadership).
 */
class ProduceConnection {
  private buf = Buffer.alloc(0);
  private pending: { resolve: (frame: Buffer) => void; reject: (err: Error) => void } | undefined;
  private failed: Error | undefined;
  private correlationId = 0;

  private constructor(private readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buf = Buffer.concat([this.buf, chunk]);
      while (this.buf.length >= 4 && this.buf.length >= 4 + this.buf.readInt32BE(0)) {
        const frame = this.buf.subarray(4, 4 + this.buf.readInt32BE(0));
        this.buf = this.buf.subarray(4 + frame.length);
        const p = this.pending;
        this.pending = undefined;
        p?.resolve(frame);
      }
    });
    const fail = (err: Error) => {
      this.failed ??= err;
      const p = this.pending;
      this.pending = undefined;
      p?.reject(err);
    };
    socket.on('error', fail);
    socket.on('close', () => fail(new Error('connection closed')));
  }

  static open(address: string): Promise<ProduceConnection> {
    const i = address.lastIndexOf(':');
    return new Promise((resolve, reject) => {
      const socket = connect({ host: address.slice(0, i), port: Number(address.slice(i + 1)) }, () => {
        socket.off('error', reject);
        resolve(new ProduceConnection(socket));
      });
      socket.once('error', reject);
    });
  }

  /** The partition's error code and base offset. */
  async produce(acks: number, value: string): Promise<{ errorCode: number; baseOffset: bigint }> {
    if (this.failed) throw this.failed;
    const body = {
      transactionalId: null,
      acks,
      timeoutMs: 5000,
      topicData: [{ name: TOPIC, partitionData: [{ index: 0, records: encodeRecordBatch({ records: [{ value }] }) }] }],
    };
    const frame = await new Promise<Buffer>((resolve, reject) => {
      this.pending = { resolve, reject };
      this.socket.write(encodeRequest(0, 9, ++this.correlationId, 'epoch-e2e', body));
    });
    const p = decodeResponse(0, 9, frame).body.responses[0]!.partitionResponses[0]!;
    return { errorCode: p.errorCode, baseOffset: p.baseOffset };
  }

  close(): void {
    this.socket.destroy();
  }
}

/** A small seeded PRNG (mulberry32): the same choices on every run. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// ---- the scenarios -------------------------------------------------------------------------------

describeCluster(
  'epoch-driven replication (Kafka EpochDrivenReplicationProtocolAcceptanceTest)',
  () => {
    it('shouldFollowLeaderEpochBasicWorkflow – each leader change is recorded in leader-epoch-checkpoint on the leader at once, on the follower with the first batch of the epoch', async () => {
      await withCluster({}, async (c) => {
        await createTopic(c);
        const [b0, b1] = [c.broker(0), c.broker(1)];
        await awaitIsr(c);

        // one record written to the leader: epoch 0 stamped on it on both replicas, (0, 0) recorded on both
        await produce(c, 0, -1, [MSG]);
        await awaitLogsMatch([b0, b1], 1n);
        for (const b of [b0, b1]) {
          expect((await batchesOf(b)).at(-1)!.epoch).toBe(0);
          await awaitEpochs(b, [[0, 0]], 'first record');
        }

        // bounce the follower: the leader's epoch moves on (controller ISR change), recorded at once on the leader only
        await bounce(b1);
        const s1 = await awaitIsr(c);
        expect(s1.leader).toBe(0);
        expect(s1.leaderEpoch).toBe(1);
        await awaitEpochs(
          b0,
          [
            [0, 0],
            [1, 1],
          ],
          'follower bounced',
        );
        expect(await epochEntries(b1)).toEqual([[0, 0]]);

        // a record: epoch 1 propagates to the follower with it
        await produce(c, 0, -1, [MSG]);
        await awaitLogsMatch([b0, b1], 2n);
        for (const b of [b0, b1]) {
          expect((await batchesOf(b)).at(-1)!.epoch).toBe(1);
          await awaitEpochs(
            b,
            [
              [0, 0],
              [1, 1],
            ],
            'second record',
          );
        }

        // bounce the leader: broker 1 leads in epoch 2 (controlled shutdown), recorded on it at once, not on broker 0 yet
        await bounce(b0);
        const s2 = await awaitIsr(c);
        expect(s2.leader).toBe(1);
        expect(s2.leaderEpoch).toBe(2);
        await awaitEpochs(
          b1,
          [
            [0, 0],
            [1, 1],
            [2, 2],
          ],
          'leader bounced',
        );
        expect(await epochEntries(b0)).toEqual([
          [0, 0],
          [1, 1],
        ]);

        // a record: epoch 2 reaches the follower
        await produce(c, 1, -1, [MSG]);
        const bs = await awaitLogsMatch([b0, b1], 3n);
        expect(bs.map((x) => x.epoch)).toEqual([0, 1, 2]);
        for (const b of [b0, b1])
          await awaitEpochs(
            b,
            [
              [0, 0],
              [1, 1],
              [2, 2],
            ],
            'third record',
          );
      });
    });

    it('shouldNotAllowDivergentLogs – a leader that lost its log tail in a crash leads again; the follower truncates to it instead of keeping a divergent log', async () => {
      await withCluster({}, async (c) => {
        await createTopic(c);
        const [b0, b1] = [c.broker(0), c.broker(1)];
        await awaitIsr(c);
        // ten records, one batch each (so the log can lose some in the middle)
        for (let i = 0; i < 10; i++) await produce(c, 0, -1, [`${i}:${MSG}`]);
        await awaitLogsMatch([b0, b1], 10n);

        // stop broker 1 first (broker 0 stays leader, ISR [0]), then broker 0
        await b1.stop();
        await until(async () => JSON.stringify((await stateOf(c)).isr) === '[0]', 'ISR [0]');
        await b0.stop();

        // simulate a crash of broker 0 that lost its last 5 batches: no clean-shutdown marker, the
        // segment cut inside the 6th batch (recovery drops the torn batch)
        await unlink(join(b0.o.dir, 'logs', '.kafka_cleanshutdown'));
        const seg = (await segmentFiles(b0))[0]!;
        const buf = await readFile(seg);
        let pos = 0;
        const it = recordBatches(buf);
        for (let i = 0; i < 5; i++) pos += it.next().value!.sizeInBytes;
        await truncate(seg, pos + 30);

        // broker 0 comes back alone and leads (it is the ISR), with 5 records
        await start(b0);
        const s = await awaitLeader(c, 0);
        expect(s.isr).toEqual([0]);
        expect(logEnd(await batchesOf(b0))).toBe(5n);
        // nine more records: offsets 5..13 in the new epoch
        for (let i = 11; i < 20; i++) await produce(c, 0, -1, [`${i}:${MSG}`]);

        // broker 1 (10 records of epoch 0) must truncate to 5 and take the leader's records, not keep its own 5..9
        expect(logEnd(await batchesOf(b1))).toBe(10n);
        await start(b1);
        const bs = await awaitLogsMatch([b0, b1], 14n);
        checkOffsets(bs, true);
        expect(bs.map((x) => x.epoch)).toEqual([0, 0, 0, 0, 0, ...Array<number>(9).fill(s.leaderEpoch)]);
        expect((await readFile((await segmentFiles(b1))[0]!)).length).toBe((await readFile((await segmentFiles(b0))[0]!)).length);
      });
    });

    it('offsetsShouldNotGoBackwards – a follower whose log end falls inside a leader batch truncates to the epoch boundary before fetching', async () => {
      // the restarted broker 0 leads while the ISR is [1] (unclean), as in Kafka's test
      await withCluster({}, async (c) => {
        await createTopic(c, { 'unclean.leader.election.enable': 'true' });
        const [b0, b1] = [c.broker(0), c.broker(1)];
        await awaitIsr(c);
        for (let i = 0; i < 100; i++) await produce(c, 0, -1, [MSG]);
        await awaitLogsMatch([b0, b1], 100n);

        // stop both brokers (broker 0 first: broker 1 leads in epoch 1 with ISR [1], then stops)
        await b0.stop();
        await awaitLeader(c, 1);
        await b1.stop();

        // broker 0 crashed and lost half its log file: recovery leaves ~50 records
        await unlink(join(b0.o.dir, 'logs', '.kafka_cleanshutdown'));
        const seg = (await segmentFiles(b0))[0]!;
        const size = (await readFile(seg)).length;
        await truncate(seg, Math.floor(size / 2));
        await start(b0);
        const s = await awaitLeader(c, 0);
        const kept = logEnd(await batchesOf(b0));
        expect(kept).toBeGreaterThan(40n);
        expect(kept).toBeLessThan(60n);

        // two large compressed batches of 77 records: broker 1's log end (100) falls inside the first one
        await produce(
          c,
          0,
          -1,
          Array.from({ length: 77 }, () => MSG),
          CompressionType.GZIP,
        );
        await produce(
          c,
          0,
          -1,
          Array.from({ length: 77 }, () => MSG),
          CompressionType.GZIP,
        );
        const leaderBatches = await batchesOf(b0);
        const big = leaderBatches.at(-2)!;
        expect(big.base).toBe(kept);
        expect(big.base < 100n && big.last >= 100n).toBe(true);
        expect(leaderBatches.at(-1)!.epoch).toBe(s.leaderEpoch);

        // broker 1 restarts as a follower: it must truncate to the leader epoch end (kept), not fetch from 100
        await start(b1);
        const bs = await awaitLogsMatch([b0, b1], kept + 154n);
        checkOffsets(bs, true);

        // broker 0 leaves; read everything from broker 1: offsets strictly increasing, none missing
        await awaitIsr(c, 2);
        await b0.stop();
        await awaitLeader(c, 1);
        const read = await until(async () => {
          const r = await fetchPartition(b1.address, TOPIC, 0).catch(() => undefined);
          return r && BigInt(r.highWatermark) === kept + 154n ? r : undefined;
        }, 'broker 1 serving up to the end');
        expect(read.records.length).toBe(Number(kept) + 154);
        read.records.forEach((r, i) => expect(r.offset).toBe(i));
        await start(b0);
      });
    });

    it('shouldSurviveFastLeaderChange – five rounds of bouncing the follower then the leader lose nothing and leave identical, contiguous logs', async () => {
      await withCluster({}, async (c) => {
        await createTopic(c);
        await awaitIsr(c);
        await produce(c, 0, -1, [MSG]);
        let written = 1n;
        for (let round = 0; round < 5; round++) {
          const { leader } = await awaitIsr(c);
          const follower = 1 - leader;
          await produce(c, leader, -1, [MSG]);
          written++;
          // as soon as it replicated (acks=all), bounce the follower, then the leader
          await bounce(c.broker(follower));
          await awaitIsr(c);
          await bounce(c.broker(leader));
          const s = await awaitIsr(c);
          expect(s.leader, `round ${round}: leadership moved off the bounced leader`).toBe(follower);
          // no data lost: both replicas end at the number of records written
          for (const b of c.brokers) expect(logEnd(await batchesOf(b)), `round ${round}: broker ${b.id} log end`).toBe(written);
        }
        const bs = await awaitLogsMatch(c.brokers, written);
        checkOffsets(bs, true);
        // epochs never go backwards along the log
        for (let i = 1; i < bs.length; i++) expect(bs[i]!.epoch).toBeGreaterThanOrEqual(bs[i - 1]!.epoch);
      });
    });

    it('fast leader changes under continuous acks=all produce (3 brokers, min.insync.replicas=2, seeded bounces): identical contiguous logs, every acknowledged record kept', async () => {
      await withCluster(
        { 'min.insync.replicas': '2' },
        async (c) => {
          await createTopic(c, {}, [0, 1, 2]);
          await awaitIsr(c, 3);
          // four producers: one record per request, acks=all, to whoever ZooKeeper says leads; retrying at
          // once, so that a newly elected leader gets requests while it is still taking over
          const acked: Array<{ offset: bigint; value: string }> = [];
          let running = true;
          const produceLoop = async (name: string) => {
            let conn: ProduceConnection | undefined;
            for (let n = 0; running; n++) {
              const value = `${name}-${n}`;
              try {
                if (!conn) {
                  const leader = await c.leaderOf(TOPIC, 0);
                  if (leader >= 0) conn = await ProduceConnection.open(c.broker(leader).address);
                }
                const r = conn ? await conn.produce(-1, value) : undefined;
                if (r?.errorCode === 0) {
                  acked.push({ offset: r.baseOffset, value });
                  continue;
                }
                if (r && r.errorCode !== 6 && r.errorCode !== 3) {
                  // NOT_ENOUGH_REPLICAS and the like: this leader, a little later
                  await new Promise((res) => setTimeout(res, 5));
                  continue;
                }
                // not (yet) the leader: retry at once, it may be taking over; ask ZooKeeper now and then
                if (r && n % 50 !== 0) continue;
              } catch {
                // the broker went away: ask ZooKeeper again
              }
              conn?.close();
              conn = undefined;
              await new Promise((r) => setTimeout(r, 5));
            }
            conn?.close();
          };
          const producer = Promise.all(['p', 'q', 'r', 's'].map(produceLoop));
          const rnd = seeded(0x6b1d);
          const plan: string[] = [];
          try {
            await until(() => acked.length >= 20, 'first acknowledged records');
            for (let step = 0; step < 6; step++) {
              const s = await stateOf(c);
              // mostly the leader, sometimes a follower: a seeded order, the same on every run
              const followers = [0, 1, 2].filter((id) => id !== s.leader);
              const victim = rnd() < 0.75 ? s.leader : followers[Math.floor(rnd() * followers.length)]!;
              plan.push(`${victim === s.leader ? 'leader' : 'follower'} ${victim} (epoch ${s.leaderEpoch})`);
              const before = acked.length;
              await c.broker(victim).stop();
              if (victim === s.leader)
                await until(async () => {
                  const x = await stateOf(c);
                  return x.leader >= 0 && x.leader !== victim;
                }, 'a new leader');
              await start(c.broker(victim));
              // writes flow again (acks=all needs 2 in-sync replicas) before the next change
              await until(() => acked.length >= before + 20, `records acknowledged after step ${step} (${plan.at(-1)})`, 60_000);
            }
          } finally {
            running = false;
            await producer;
          }
          const s = await awaitIsr(c, 3);
          const leo = logEnd(await batchesOf(c.broker(s.leader)));
          const bs = await awaitLogsMatch(c.brokers, leo);
          checkOffsets(bs, true);
          for (let i = 1; i < bs.length; i++) expect(bs[i]!.epoch, 'epochs along the log').toBeGreaterThanOrEqual(bs[i - 1]!.epoch);
          // every acknowledged record is at the offset it was acknowledged with
          const read = await fetchPartition(c.broker(s.leader).address, TOPIC, 0);
          const byOffset = new Map(read.records.map((r) => [BigInt(r.offset), r.value]));
          for (const a of acked) expect(byOffset.get(a.offset), `acknowledged ${a.value} at ${a.offset}`).toBe(a.value);
          expect(read.records.length).toBe(Number(leo));
          expect(s.leaderEpoch, `leader changes: ${plan.join(', ')}`).toBeGreaterThanOrEqual(4);
        },
        3,
      );
    });

    it('logsShouldNotDivergeOnUncleanLeaderElections – alternating unclean leaders, each writing its own history; the logs converge on the last leader', async () => {
      await withCluster({ 'unclean.leader.election.enable': 'true' }, async (c) => {
        await createTopic(c, { 'min.insync.replicas': '1' });
        const [b0, b1] = [c.broker(0), c.broker(1)];
        await awaitIsr(c);
        // one record while both are up; with acks=1 wait for the follower to have it
        await produce(c, 0, 1, [MSG]);
        await awaitLogsMatch([b0, b1], 1n);

        // broker 0 down: broker 1 leads (clean) and takes one record
        await b0.stop();
        await produce(c, 1, 1, [MSG]);
        // broker 1 down, broker 0 up: unclean election, three bigger records on top of offset 1
        await b1.stop();
        await start(b0);
        for (let i = 0; i < 3; i++) await produce(c, 0, 1, [MSG_BIGGER]);
        // broker 0 down, broker 1 up: unclean again, one record on its own history
        await b0.stop();
        await start(b1);
        await produce(c, 1, 1, [MSG]);
        // broker 1 down, broker 0 up: unclean again, two bigger records
        await b1.stop();
        await start(b0);
        for (let i = 0; i < 2; i++) await produce(c, 0, 1, [MSG_BIGGER]);
        expect(logEnd(await batchesOf(b0))).toBe(6n);
        expect(logEnd(await batchesOf(b1))).toBe(3n);

        // broker 1 rejoins: it must drop its offsets 1..2 (epochs broker 0 never had) and copy broker 0
        await start(b1);
        const bs = await awaitLogsMatch([b0, b1], 6n);
        checkOffsets(bs, true);
        const crcs = async (b: Broker) => (await batchesOf(b)).map((x) => x.crc);
        expect(await crcs(b1)).toEqual(await crcs(b0));
        await awaitEpochs(
          b1,
          (await epochEntries(b0)).filter(([, o]) => o < 6),
          'converged',
        );
      });
    });

    it('no divergent logs after a crashed follower becomes leader through an unclean election (SIGKILL, acks=1, min.insync.replicas=1)', async () => {
      // a short lag window: the leader drops the dead follower from the ISR itself, whichever broker is
      // the controller (a controller failing over does not take dead brokers out of ISRs)
      await withCluster({ 'replica.lag.time.max.ms': '3000' }, async (c) => {
        await createTopic(c, { 'unclean.leader.election.enable': 'true', 'min.insync.replicas': '1' });
        const [b0, b1] = [c.broker(0), c.broker(1)];
        await awaitIsr(c);
        for (let i = 0; i < 3; i++) await produce(c, 0, -1, [`a${i}`]);
        await awaitLogsMatch([b0, b1], 3n);

        // the follower crashes; once the controller has dropped it from the ISR the leader writes on alone
        await b1.kill();
        await until(async () => JSON.stringify((await stateOf(c)).isr) === '[0]', 'ISR shrunk to [0]');
        for (let i = 0; i < 4; i++) await produce(c, 0, 1, [`b${i}`]);
        // the leader crashes too; the follower comes back and is elected uncleanly
        await b0.kill();
        await start(b1);
        const s = await awaitLeader(c, 1);
        expect(s.isr).toEqual([1]);
        for (let i = 0; i < 2; i++) await produce(c, 1, 1, [`c${i}`]);
        expect(logEnd(await batchesOf(b1))).toBe(5n);
        expect(logEnd(await batchesOf(b0))).toBe(7n);

        // the old leader returns as a follower: its b0..b3 (offsets 3..6) are dropped for c0, c1
        await start(b0);
        const bs = await awaitLogsMatch([b0, b1], 5n);
        checkOffsets(bs, true);
        expect(bs.map((x) => x.epoch)).toEqual([0, 0, 0, s.leaderEpoch, s.leaderEpoch]);
        await awaitIsr(c, 2);
        const read = await fetchPartition(b1.address, TOPIC, 0);
        expect(read.records.map((r) => r.value)).toEqual(['a0', 'a1', 'a2', 'c0', 'c1']);
      });
    });
  },
  { processesOnly: "reads and edits the brokers' segment files" },
);
