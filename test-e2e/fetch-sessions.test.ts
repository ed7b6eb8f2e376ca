/**
 * Fetch sessions (KIP-227) on a real cluster: the Fetch wire exchange of a session (full, then
 * incremental answers carrying only what changed, session errors), and followers replicating
 * through sessions across a leader kill, a restart and a preferred election.
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { API_KEYS, type FetchRequest, type FetchResponse } from '@samsa/protocol';
import { Connection } from '@samsa/client';
import { PreferredReplicaElectionZNode, newTopicId } from '@samsa/zk-paths';
import { connect } from 'node:net';
import kafkajs from 'kafkajs';
import { describeCluster, TestCluster, kcatConsume, until, type Broker } from './harness.js';
import { WireLog } from './clients/wire.js';

const run = promisify(execFile);
const ZERO = Buffer.alloc(16);

/** A consumer Fetch v11 (topic names) of `partitions` of `topic`, all from `offset`. */
function fetchRequest(sessionId: number, sessionEpoch: number, topic: string, partitions: number[], offset = 0n, forget: number[] = []): FetchRequest {
  return {
    clusterId: null,
    replicaId: -1,
    replicaState: { replicaId: -1, replicaEpoch: -1n },
    maxWaitMs: 10,
    minBytes: 1,
    maxBytes: 1 << 20,
    isolationLevel: 0,
    sessionId,
    sessionEpoch,
    topics:
      partitions.length === 0
        ? []
        : [
            {
              topic,
              topicId: ZERO,
              partitions: partitions.map((partition) => ({
                partition,
                currentLeaderEpoch: -1,
                fetchOffset: offset,
                lastFetchedEpoch: -1,
                logStartOffset: -1n,
                partitionMaxBytes: 1 << 20,
                replicaDirectoryId: ZERO,
              })),
            },
          ],
    forgottenTopicsData: forget.length === 0 ? [] : [{ topic, topicId: ZERO, partitions: forget }],
    rackId: '',
  };
}

/** The partitions a response answers, with their record byte counts. */
const answered = (r: FetchResponse) => r.responses.flatMap((t) => t.partitions.map((p) => ({ partition: p.partitionIndex, bytes: p.records?.length ?? 0 })));

/** One sample of a broker's /metrics. */
async function metric(b: Broker, name: string): Promise<number> {
  const text = await (await fetch(`${(b as { metricsUrl?: string }).metricsUrl!}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? NaN : Number(line.slice(name.length + 1));
}

describeCluster(
  'fetch sessions (KIP-227), 3 brokers',
  () => {
    let c: TestCluster;

    beforeAll(async () => {
      c = await TestCluster.start({
        brokers: 3,
        metrics: true,
        overrides: { 'min.insync.replicas': '2', 'default.replication.factor': '3', 'replica.lag.time.max.ms': '4000' },
      });
    });
    afterAll(async () => {
      await c?.stop();
    });

    it('fetch sessions – a consumer session: the full fetch opens it, incremental fetches answer only partitions with new data; wrong epoch 71, unknown id 70; forgetting every partition closes it', async () => {
      const topic = 'fs-wire';
      // one replica, on broker 0 (acks=1: min.insync.replicas is 2 here)
      await c.admin.createTopic(topic, newTopicId(), new Map([0, 1, 2].map((p) => [p, [0]])), {});
      await c.waitForLeaders(topic, 3);
      const b = c.broker(0);
      const conn = await Connection.connect({ host: '127.0.0.1', port: b.o.port, clientId: 'e2e-fetch-session', requestTimeoutMs: 10_000 });
      try {
        const send = async (req: FetchRequest) => (await conn.request(API_KEYS.Fetch, req, { version: 11 })).body;
        // until broker 0 serves the three partitions (a sessionless fetch without errors)
        await until(
          async () => (await send(fetchRequest(0, -1, topic, [0, 1, 2]))).responses.every((t) => t.partitions.every((p) => p.errorCode === 0)),
          'broker 0 leading the partitions',
          10_000,
        );
        const full = await send(fetchRequest(0, 0, topic, [0, 1, 2]));
        expect(full.errorCode).toBe(0);
        expect(full.sessionId).toBeGreaterThan(0);
        expect(answered(full).map((p) => p.partition)).toEqual([0, 1, 2]);
        const id = full.sessionId;
        // nothing changed: an incremental fetch listing nothing is answered with no partitions
        const quiet = await send(fetchRequest(id, 1, topic, []));
        expect([quiet.errorCode, quiet.sessionId, answered(quiet)]).toEqual([0, id, []]);
        // one record on partition 1: only partition 1 is answered, with it
        await new Promise<void>((resolve, reject) => {
          const p = execFile('kcat', ['-P', '-b', c.bootstrap, '-t', topic, '-p', '1', '-X', 'acks=1'], { timeout: 30_000 }, (err) =>
            err ? reject(err) : resolve(),
          );
          p.stdin!.end('hello\n');
        });
        let epoch = 2;
        const withData = await until(
          async () => {
            const r = await send(fetchRequest(id, epoch++, topic, []));
            return answered(r).length > 0 ? r : undefined;
          },
          'the incremental fetch answering partition 1',
          10_000,
        );
        expect(answered(withData)).toEqual([{ partition: 1, bytes: expect.any(Number) }]);
        expect(answered(withData)[0]!.bytes).toBeGreaterThan(0);
        // a retried (stale) epoch and an unknown id are session errors, answered without partitions
        const stale = await send(fetchRequest(id, epoch - 1, topic, []));
        expect([stale.errorCode, stale.sessionId, stale.responses]).toEqual([71, 0, []]);
        const unknown = await send(fetchRequest(id + 1 === 0x7fffffff ? 1 : id + 1, 1, topic, []));
        expect(unknown.errorCode).toBe(70);
        // forgetting every partition closes the session: answered sessionless
        const closed = await send(fetchRequest(id, epoch, topic, [], 0n, [0, 1, 2]));
        expect([closed.errorCode, closed.sessionId]).toEqual([0, 0]);
        expect((await send(fetchRequest(id, epoch + 1, topic, []))).errorCode).toBe(70);
      } finally {
        await conn.close();
      }
    });

    it('fetch sessions – followers replicate through sessions across a leader kill, a restart and a preferred election; no acknowledged record is lost', async () => {
      const topic = 'fs-repl';
      const assignment = new Map([0, 1, 2, 3, 4, 5].map((p) => [p, [p % 3, (p + 1) % 3, (p + 2) % 3]]));
      await c.admin.createTopic(topic, newTopicId(), assignment, {});
      await c.waitForLeaders(topic, 6);
      const produce = async (from: number, n: number) => {
        const file = join(c.dir, `in-${from}.txt`);
        await writeFile(file, Array.from({ length: n }, (_, i) => `m-${from + i}`).join('\n') + '\n');
        const alive = c.brokers.filter((b) => b.pid !== undefined).map((b) => b.address);
        await run('kcat', ['-P', '-b', alive.join(','), '-t', topic, '-X', 'acks=all', '-l', file], { timeout: 120_000 });
      };
      await produce(0, 3000);
      await c.waitForFullIsr(topic, 6);
      // every broker leads 2 partitions; each of the 2 others follows them through one session
      for (const b of c.brokers) {
        await until(
          async () =>
            (await metric(b, 'kafka_server_fetchsessioncache_numincrementalfetchsessions')) >= 2 &&
            (await metric(b, 'kafka_server_fetchsessioncache_numincrementalfetchpartitionscached')) >= 4,
          `broker ${b.id}: follower sessions`,
          20_000,
          200,
        );
      }
      const victim = await c.leaderOf(topic, 0);
      await c.broker(victim).kill();
      await until(
        async () => {
          for (let p = 0; p < 6; p++) {
            const st = await c.admin.getPartitionState({ topic, partition: p });
            if (!st || st.state.leader === victim || st.state.leader < 0 || st.state.isr.includes(victim)) return false;
          }
          return true;
        },
        'new leaders and shrunk ISRs',
        30_000,
      );
      // acks=all with min.insync.replicas=2: every append needs the remaining follower to fetch from the new leader
      await produce(3000, 3000);
      await c.startBroker(victim);
      await c.waitForFullIsr(topic, 6);
      await c.admin.zk.create(
        PreferredReplicaElectionZNode.path,
        PreferredReplicaElectionZNode.encode([0, 1, 2, 3, 4, 5].map((partition) => ({ topic, partition }))),
      );
      await until(
        async () => {
          for (let p = 0; p < 6; p++) if ((await c.leaderOf(topic, p)) !== p % 3) return false;
          return true;
        },
        'preferred leaders back',
        30_000,
        200,
      );
      await produce(6000, 3000);
      await c.waitForFullIsr(topic, 6);
      // the restarted broker leads again: the two others follow it through new sessions (its cache started empty)
      const restarted = c.broker(victim);
      await until(
        async () =>
          (await metric(restarted, 'kafka_server_fetchsessioncache_numincrementalfetchsessions')) === 2 &&
          (await metric(restarted, 'kafka_server_fetchsessioncache_numincrementalfetchpartitionscached')) === 4,
        'two follower sessions of 2 partitions each on the restarted leader',
        20_000,
        200,
      );
      const got = (await kcatConsume(c.bootstrap, topic, '%s\n')).split('\n').filter(Boolean);
      expect(got.length).toBe(9000);
      expect(new Set(got).size).toBe(9000);
    });

    it('fetch sessions – KafkaJS 2.2.4 fetches sessionless (session id 0, epoch -1 on every Fetch) and consumes everything; kcat (librdkafka 2.0.2, its golden Fetch v11 frame: 0/-1) too', async () => {
      const topic = 'fs-clients';
      await c.admin.createTopic(topic, newTopicId(), new Map([0, 1, 2].map((p) => [p, [p, (p + 1) % 3, (p + 2) % 3]])), {});
      await c.waitForLeaders(topic, 3);
      const file = join(c.dir, 'clients.txt');
      await writeFile(file, Array.from({ length: 300 }, (_, i) => `k-${i}`).join('\n') + '\n');
      await run('kcat', ['-P', '-b', c.bootstrap, '-t', topic, '-X', 'acks=all', '-l', file], { timeout: 60_000 });
      const wire = new WireLog();
      const kafka = new kafkajs.Kafka({
        clientId: 'fetch-session-e2e',
        brokers: c.bootstrap.split(','),
        socketFactory: ({ host, port, onConnect }) => wire.tap(connect({ host, port }, onConnect)),
        logLevel: kafkajs.logLevel.NOTHING,
      });
      const consumer = kafka.consumer({ groupId: 'fs-kafkajs', maxWaitTimeInMs: 200 });
      const seen = new Set<string>();
      try {
        await consumer.connect();
        await consumer.subscribe({ topic, fromBeginning: true });
        await consumer.run({ eachMessage: async ({ message }) => void seen.add(message.value!.toString()) });
        await until(() => seen.size === 300, 'KafkaJS consuming the 300 records', 60_000, 100);
      } finally {
        await consumer.disconnect();
      }
      const fetches = wire.requests<typeof API_KEYS.Fetch>('Fetch');
      expect(fetches.length).toBeGreaterThan(0);
      for (const f of fetches) expect([f.sessionId, f.sessionEpoch]).toEqual([0, -1]);
      for (const r of wire.responses<typeof API_KEYS.Fetch>('Fetch')) expect(r.sessionId).toBe(0);
      const got = (await kcatConsume(c.bootstrap, topic, '%s\n')).split('\n').filter(Boolean);
      expect(new Set(got).size).toBe(300);
    });
  },
  { processesOnly: "it reads the brokers' /metrics and connects to their ports directly" },
);
