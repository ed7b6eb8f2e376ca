/**
 * Log compaction against a 3-broker cluster: a cleanup.policy=compact topic (RF 3, 4 KiB segments,
 * min.cleanable.dirty.ratio 0.01, delete.retention.ms 0, brokers with log.cleaner.backoff.ms 100)
 * gets 10,000 updates over 100 keys from a KafkaJS producer (acks=all, every other batch gzip) and a tombstone for 10 of
 * the keys half way through. Every replica compacts on its own (each broker's
 * cleaner-offset-checkpoint moves past the tombstones, then past later updates, so the tombstones
 * are gone too); kcat and a KafkaJS consumer then read exactly 90 live keys, each at its latest value
 * and at the offset it was acknowledged at, offsets strictly increasing — from each of the three
 * brokers as leader in turn.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import kafkajs from 'kafkajs';
import type { Admin, Kafka as KafkaT, Producer } from 'kafkajs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { TestCluster, kcatConsume, until, describeCluster } from './harness.js';
import { waitForBrokerMetadata } from './clients/wire.js';

const { Kafka, logLevel, CompressionTypes } = kafkajs;

const TOPIC = 'compacted-updates';
const KEYS = 100;
const TOMBSTONED = 10;
const UPDATES = 10_000;
const PER_SEND = 50;
/** Updates sent once every replica has cleaned past the tombstones: uncompressed, enough to roll several 4 KiB segments. */
const TAIL = 400;

interface Consumed {
  offset: bigint;
  key: string;
  value: string | null;
}

describeCluster(
  'log compaction against a 3-broker cluster',
  () => {
    let c: TestCluster;
    let kafka: KafkaT;
    let admin: Admin;
    let producer: Producer;
    /** Acknowledged offset of every update (by its unique value) and of every tombstone (by key). */
    const ackedOffset = new Map<string, bigint>();
    const tombstoneOffset = new Map<string, bigint>();
    /** Latest value of each key as acknowledged. */
    const latest = new Map<string, { value: string | null; offset: bigint }>();

    beforeAll(async () => {
      c = await TestCluster.start({
        brokers: 3,
        overrides: { 'log.cleaner.backoff.ms': '100', 'log.cleaner.dedupe.buffer.size': '4194304', 'auto.leader.rebalance.enable': 'false' },
      });
      await waitForBrokerMetadata(c.bootstrap.split(','), () => c.controllerId());
      kafka = new Kafka({
        clientId: 'compaction-e2e',
        brokers: c.bootstrap.split(','),
        retry: { retries: 8, initialRetryTime: 200 },
        logLevel: logLevel.NOTHING,
      });
      admin = kafka.admin();
      producer = kafka.producer({ allowAutoTopicCreation: false });
      await admin.connect();
      await producer.connect();
    });

    afterAll(async () => {
      await producer?.disconnect();
      await admin?.disconnect();
      await c?.stop();
    });

    const key = (k: number): string => `key-${String(k).padStart(3, '0')}`;

    /** Sends `messages` to partition 0 and records the offset each was acknowledged at. */
    async function send(messages: Array<{ key: string; value: string | null }>, gzip = false): Promise<void> {
      const [meta] = await producer.send({
        topic: TOPIC,
        acks: -1,
        ...(gzip ? { compression: CompressionTypes.GZIP } : {}),
        messages: messages.map((m) => ({ ...m, partition: 0 })),
      });
      const base = BigInt(meta!.baseOffset!);
      messages.forEach((m, i) => {
        const offset = base + BigInt(i);
        if (m.value === null) tombstoneOffset.set(m.key, offset);
        else ackedOffset.set(m.value, offset);
        latest.set(m.key, { value: m.value, offset });
      });
    }

    /** Updates number from..to-1, round robin over the first `keys` keys; with `gzip`, every other batch compressed. */
    async function sendUpdates(from: number, to: number, keys: number, gzip = true): Promise<void> {
      for (let i = from; i < to; i += PER_SEND) {
        const batch = [];
        for (let j = i; j < Math.min(to, i + PER_SEND); j++) batch.push({ key: key(j % keys), value: `${key(j % keys)}=v${j}` });
        await send(batch, gzip && (i / PER_SEND) % 2 === 1);
      }
    }

    /** The offset in a broker's cleaner-offset-checkpoint for the topic's partition 0 (-1 if none). */
    async function cleanerCheckpoint(broker: number): Promise<bigint> {
      try {
        const text = await readFile(join(c.dir, `broker-${broker}`, 'logs', 'cleaner-offset-checkpoint'), 'utf8');
        const lines = text.split('\n');
        expect(lines[0]).toBe('0');
        expect(Number(lines[1])).toBe(lines.slice(2).filter(Boolean).length);
        const line = lines.slice(2).find((l) => l.startsWith(`${TOPIC} 0 `));
        return line ? BigInt(line.split(' ')[2]!) : -1n;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return -1n;
        throw err;
      }
    }

    async function waitForCheckpoints(past: bigint, what: string): Promise<bigint[]> {
      let seen: bigint[] = [];
      try {
        await until(
          async () => {
            seen = await Promise.all([0, 1, 2].map((b) => cleanerCheckpoint(b)));
            return seen.every((o) => o > past);
          },
          `every replica's cleaner checkpoint past ${past} (${what})`,
          120_000,
          250,
        );
      } catch (err) {
        throw new Error(`${(err as Error).message}; last seen ${seen.join(',')}`, { cause: err });
      }
      return seen;
    }

    async function kcatRead(): Promise<Consumed[]> {
      const out = await kcatConsume(c.bootstrap, TOPIC, '%o|%k|%S|%s\n');
      return out
        .split('\n')
        .filter(Boolean)
        .map((line) => {
          const [offset, k, size, ...rest] = line.split('|');
          return { offset: BigInt(offset!), key: k!, value: size === '-1' ? null : rest.join('|') };
        });
    }

    /** The checks every read must pass: acknowledged offsets, increasing offsets, 90 live keys at their latest values. */
    function checkCompactedView(records: readonly Consumed[]): Map<string, Consumed> {
      for (let i = 1; i < records.length; i++) expect(records[i]!.offset).toBeGreaterThan(records[i - 1]!.offset);
      for (const r of records) {
        const acked = r.value === null ? tombstoneOffset.get(r.key) : ackedOffset.get(r.value);
        expect(acked, `${r.key}=${r.value} at ${r.offset}`).toBe(r.offset);
      }
      const last = new Map<string, Consumed>();
      for (const r of records) last.set(r.key, r);
      const live = [...last.values()].filter((r) => r.value !== null);
      expect(live.length).toBe(KEYS - TOMBSTONED);
      for (const r of live) expect({ key: r.key, value: r.value, offset: r.offset }).toEqual({ key: r.key, ...latest.get(r.key) });
      // the tombstoned keys are gone altogether: their tombstones passed delete.retention.ms=0
      for (let k = KEYS - TOMBSTONED; k < KEYS; k++) expect(last.has(key(k))).toBe(false);
      // compaction happened: far fewer records than were written
      expect(records.length).toBeLessThan(UPDATES / 4);
      return last;
    }

    it('compaction – 10,000 updates over 100 keys and 10 tombstones compact on every replica: 90 live keys at their latest values and acknowledged offsets', async () => {
      await admin.createTopics({
        waitForLeaders: true,
        topics: [
          {
            topic: TOPIC,
            numPartitions: 1,
            replicationFactor: 3,
            configEntries: [
              { name: 'cleanup.policy', value: 'compact' },
              { name: 'segment.bytes', value: '4096' },
              { name: 'min.cleanable.dirty.ratio', value: '0.01' },
              { name: 'delete.retention.ms', value: '0' },
            ],
          },
        ],
      });
      await c.waitForLeaders(TOPIC, 1);

      await sendUpdates(0, UPDATES / 2, KEYS);
      await send(Array.from({ length: TOMBSTONED }, (_, i) => ({ key: key(KEYS - TOMBSTONED + i), value: null })));
      const lastTombstone = [...tombstoneOffset.values()].reduce((a, b) => (a > b ? a : b));
      // the rest goes to the 90 live keys; the tail only once every replica cleaned past the tombstones
      await sendUpdates(UPDATES / 2, UPDATES - TAIL, KEYS - TOMBSTONED);
      const first = await waitForCheckpoints(lastTombstone, 'tombstones cleaned once: delete horizon set');
      const tailStart = BigInt((await admin.fetchTopicOffsets(TOPIC))[0]!.high);
      await sendUpdates(UPDATES - TAIL, UPDATES, KEYS - TOMBSTONED, false);
      expect(ackedOffset.size).toBe(UPDATES);
      const second = await waitForCheckpoints(tailStart, 'a later round, past the horizon');
      for (let b = 0; b < 3; b++) expect(second[b]).toBeGreaterThan(first[b]!);

      const records = await kcatRead();
      const last = checkCompactedView(records);
      console.log(`compaction e2e: ${records.length} records left of ${UPDATES + TOMBSTONED}; cleaner checkpoints ${first.join(',')} then ${second.join(',')}`);
      // the last record of the log is the last update (never cleaned: it is in the active segment)
      expect(records.at(-1)!.offset).toBe(BigInt(UPDATES + TOMBSTONED - 1));
      expect(last.size).toBe(KEYS - TOMBSTONED);
    });

    it('compaction – a KafkaJS consumer reads the compacted topic: the same 90 keys at the same offsets', async () => {
      const high = BigInt((await admin.fetchTopicOffsets(TOPIC))[0]!.high);
      const consumer = kafka.consumer({ groupId: 'compaction-reader', maxWaitTimeInMs: 200 });
      const seen: Consumed[] = [];
      try {
        await consumer.connect();
        await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
        await consumer.run({
          eachMessage: async ({ message }) => {
            seen.push({ offset: BigInt(message.offset), key: message.key!.toString(), value: message.value === null ? null : message.value.toString() });
          },
        });
        await until(() => seen.length > 0 && seen.at(-1)!.offset === high - 1n, `KafkaJS reaching offset ${high - 1n}`, 60_000, 100);
      } finally {
        await consumer.disconnect();
      }
      checkCompactedView(seen);
      expect(seen).toEqual(await kcatRead());
    });

    it('compaction – each replica compacted on its own: with each broker as leader in turn, consumers see the same keys, values and offsets', async () => {
      const reference = checkCompactedView(await kcatRead());
      const leaders: number[] = [await c.leaderOf(TOPIC, 0)];
      const stopped: number[] = [];
      try {
        for (let step = 0; step < 2; step++) {
          const leader = leaders.at(-1)!;
          await c.broker(leader).stop(30_000);
          stopped.push(leader);
          const next = await until(
            async () => {
              const l = await c.leaderOf(TOPIC, 0);
              return l >= 0 && !stopped.includes(l) ? l : null;
            },
            `a new leader after stopping broker ${leader}`,
            60_000,
            200,
          );
          leaders.push(next);
          const view = checkCompactedView(await kcatRead());
          expect(new Map([...view].map(([k, r]) => [k, `${r.offset}:${r.value}`]))).toEqual(
            new Map([...reference].map(([k, r]) => [k, `${r.offset}:${r.value}`])),
          );
        }
        expect(new Set(leaders).size).toBe(3);
      } finally {
        for (const b of stopped) await c.broker(b).launch();
        await Promise.all(stopped.map((b) => c.broker(b).waitReady()));
      }
    });
  },
  { processesOnly: 'reads broker files or starts broker processes; not yet run on containers' },
);
