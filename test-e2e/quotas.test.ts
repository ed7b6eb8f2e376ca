/**
 * Client quotas on a real broker: `samsa configs --zookeeper … --entity-type clients --entity-name
 * slow --alter --add-config producer_byte_rate=1048576` holds a producer with client id `slow`
 * (Samsa's wire client, Produce v9: responses carry throttle_time_ms and the channel is muted) to
 * 1 MB/s ± 20% over 20 s once its initial burst is spent, while kcat (client.id=fast) produces
 * unthrottled at the same time; consumer_byte_rate likewise for fetches; request_percentage by
 * handler time. @platformatic/kafka's Admin sets and reads quotas with AlterClientQuotas /
 * DescribeClientQuotas v1 (flexible).
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import kafkajs from 'kafkajs';
import type { Admin } from 'kafkajs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Connection } from '@samsa/client';
import { API_KEYS, encodeRecordBatch } from '@samsa/protocol';
import { ConfigType } from '@samsa/zk-paths';
import { TestCluster, until, describeCluster } from './harness.js';
import './clients/promise-with-resolvers.js';

const { Kafka, logLevel } = kafkajs;
const { Admin: PltAdmin } = await import('@platformatic/kafka');
const exec = promisify(execFile);
const bin = fileURLToPath(new URL('../packages/cli/bin/samsa.js', import.meta.url));
const QUOTA = 1_048_576;

describeCluster(
  'client quotas (1 broker)',
  () => {
    let c: TestCluster;
    let fastAdmin: Admin;
    let conn: Connection;

    beforeAll(async () => {
      c = await TestCluster.start({ brokers: 1 });
      const kafka = new Kafka({ clientId: 'fast', brokers: c.bootstrap.split(','), logLevel: logLevel.NOTHING });
      const admin = kafka.admin();
      await admin.connect();
      // right after startup KafkaJS may not know the controller yet (controller id -1): retry
      await until(
        () =>
          admin
            .createTopics({
              topics: [
                { topic: 'q-slow', numPartitions: 1, replicationFactor: 1 },
                { topic: 'q-fast', numPartitions: 1, replicationFactor: 1 },
              ],
              waitForLeaders: true,
            })
            .then(
              () => true,
              () => false,
            ),
        'topics q-slow and q-fast created',
        60_000,
        200,
      );
      fastAdmin = admin;
      const [host, port] = c.broker(0).address.split(':');
      conn = await Connection.connect({ host: host!, port: Number(port), clientId: 'slow', requestTimeoutMs: 60_000 });
    }, 120_000);

    afterAll(async () => {
      await conn?.close();
      await fastAdmin?.disconnect();
      await c?.stop();
    });

    it('quotas – producer_byte_rate holds client id "slow" to 1 MB/s ± 20% with throttle_time_ms > 0; another client id is not throttled', async () => {
      const r = await exec(process.execPath, [
        bin,
        'configs',
        '--zookeeper',
        c.zk.connectString('/samsa'),
        '--entity-type',
        'clients',
        '--entity-name',
        'slow',
        '--alter',
        '--add-config',
        `producer_byte_rate=${QUOTA}`,
      ]);
      expect(r.stdout).toBe("Completed updating config for entity: client 'slow'.\n");
      expect(await c.admin.getEntityConfig(ConfigType.Client, 'slow')).toEqual({ producer_byte_rate: String(QUOTA) });

      const batch = encodeRecordBatch({ records: Array.from({ length: 4 }, () => ({ value: Buffer.alloc(16_000, 7) })) });
      const produceSlow = () =>
        conn.request(
          API_KEYS.Produce,
          { transactionalId: null, acks: 1, timeoutMs: 30_000, topicData: [{ name: 'q-slow', partitionData: [{ index: 0, records: batch }] }] },
          { version: 9 },
        );
      // the broker applies the quota from the change notification: the first throttled answer shows it
      const throttles: number[] = [];
      await until(
        async () => {
          const res = await produceSlow();
          expect(res.body.responses[0]!.partitionResponses[0]!.errorCode).toBe(0);
          throttles.push(res.body.throttleTimeMs);
          return res.body.throttleTimeMs > 0;
        },
        'a throttled produce response',
        60_000,
        0,
      );

      // warm-up: the first throttled answer means the bucket's burst (11 s × the quota) is spent;
      // from then on the client gets the quota's rate. Measure 20 s of back-to-back produces.
      // the unthrottled client: kcat (librdkafka, client.id=fast) in its own process, run again and again
      const file = join(c.dir, 'fast.txt');
      await writeFile(file, `${'f'.repeat(10_000)}\n`.repeat(2000));
      let stop = false;
      const fast = (async () => {
        while (!stop) await exec('kcat', ['-P', '-b', c.bootstrap, '-t', 'q-fast', '-X', 'client.id=fast', '-l', file], { timeout: 120_000 });
      })();
      const fastStart = await fastAdmin.fetchTopicOffsets('q-fast');
      const start = Date.now();
      let slowBytes = 0;
      while (Date.now() - start < 20_000) {
        const res = await produceSlow();
        expect(res.body.responses[0]!.partitionResponses[0]!.errorCode).toBe(0);
        throttles.push(res.body.throttleTimeMs);
        slowBytes += batch.length;
      }
      const seconds = (Date.now() - start) / 1000;
      const fastEnd = await fastAdmin.fetchTopicOffsets('q-fast');
      const fastBytes = (Number(fastEnd[0]!.high) - Number(fastStart[0]!.high)) * 10_000;
      stop = true;
      await fast;
      const slowRate = slowBytes / seconds;
      const fastRate = fastBytes / seconds;
      console.log(
        `quota ${QUOTA} B/s: slow client ${Math.round(slowRate)} B/s (${(slowRate / QUOTA).toFixed(3)}x) over ${seconds.toFixed(1)} s; fast client ${Math.round(fastRate)} B/s; max throttle ${Math.max(...throttles)} ms`,
      );
      expect(slowRate).toBeGreaterThan(QUOTA * 0.8);
      expect(slowRate).toBeLessThan(QUOTA * 1.2);
      expect(throttles.filter((t) => t > 0).length).toBeGreaterThan(5);
      // the other client id has no quota: it is not held to the slow client's rate
      expect(fastRate).toBeGreaterThan(QUOTA * 1.5);
    }, 180_000);

    it('quotas – consumer_byte_rate holds fetches of client id "slowc" to its rate ± 20% over 20 s: over-quota fetches come back empty with throttle_time_ms > 0', async () => {
      const RATE = 524_288;
      // 24 MB to fetch: the burst (11 s × the rate) plus 20 s at the rate, with room to spare
      await fastAdmin.createTopics({ topics: [{ topic: 'q-fetch', numPartitions: 1, replicationFactor: 1 }], waitForLeaders: true });
      const file = join(c.dir, 'fetch.txt');
      await writeFile(file, `${'c'.repeat(10_000)}\n`.repeat(2400));
      await exec('kcat', ['-P', '-b', c.bootstrap, '-t', 'q-fetch', '-X', 'client.id=loader', '-X', 'batch.size=30000', '-l', file], { timeout: 120_000 });
      await exec(process.execPath, [
        bin,
        'configs',
        '--zookeeper',
        c.zk.connectString('/samsa'),
        '--entity-type',
        'clients',
        '--entity-name',
        'slowc',
        '--alter',
        '--add-config',
        `consumer_byte_rate=${RATE}`,
      ]);
      const [host, port] = c.broker(0).address.split(':');
      const fc = await Connection.connect({ host: host!, port: Number(port), clientId: 'slowc', requestTimeoutMs: 60_000 });
      try {
        let offset = 0n;
        let empty = 0;
        const throttles: number[] = [];
        const fetchOnce = async (): Promise<number> => {
          const res = await fc.request(
            API_KEYS.Fetch,
            {
              clusterId: null,
              replicaId: -1,
              replicaState: { replicaId: -1, replicaEpoch: -1n },
              maxWaitMs: 0,
              minBytes: 0,
              maxBytes: 32 * 1024,
              isolationLevel: 0,
              sessionId: 0,
              sessionEpoch: -1,
              topics: [
                {
                  topic: 'q-fetch',
                  topicId: Buffer.alloc(16),
                  partitions: [
                    {
                      partition: 0,
                      currentLeaderEpoch: -1,
                      fetchOffset: offset,
                      lastFetchedEpoch: -1,
                      logStartOffset: -1n,
                      partitionMaxBytes: 32 * 1024,
                      replicaDirectoryId: Buffer.alloc(16),
                    },
                  ],
                },
              ],
              forgottenTopicsData: [],
              rackId: '',
            },
            { version: 12 },
          );
          const p = res.body.responses[0]!.partitions[0]!;
          expect(p.errorCode).toBe(0);
          throttles.push(res.body.throttleTimeMs);
          const data = p.records as Buffer | null;
          if (!data || data.length === 0) {
            empty++;
            return 0;
          }
          // next offset: after the last complete batch (baseOffset + lastOffsetDelta + 1)
          let pos = 0;
          while (pos + 61 <= data.length) {
            const len = data.readInt32BE(pos + 8);
            if (pos + 12 + len > data.length) break;
            offset = data.readBigInt64BE(pos) + BigInt(data.readInt32BE(pos + 23)) + 1n;
            pos += 12 + len;
          }
          // the quota counts what the broker sends, a partial trailing batch included
          return data.length;
        };
        await until(async () => (await fetchOnce(), throttles.some((t) => t > 0)), 'a throttled fetch', 60_000, 0);
        const start = Date.now();
        let bytes = 0;
        empty = 0;
        while (Date.now() - start < 20_000) bytes += await fetchOnce();
        const rate = bytes / ((Date.now() - start) / 1000);
        console.log(`consumer quota ${RATE} B/s: fetched ${Math.round(rate)} B/s (${(rate / RATE).toFixed(3)}x), ${empty} empty throttled answers`);
        expect(rate).toBeGreaterThan(RATE * 0.8);
        expect(rate).toBeLessThan(RATE * 1.2);
        expect(empty).toBeGreaterThan(0);
      } finally {
        await fc.close();
      }
    }, 180_000);

    it('quotas – request_percentage throttles client id "busy" by its request handler time (throttle_time_ms > 0, at most one window; a throttled Fetch has no data); another client id is not throttled', async () => {
      const r = await exec(process.execPath, [
        bin,
        'configs',
        '--bootstrap-server',
        c.bootstrap,
        '--entity-type',
        'clients',
        '--entity-name',
        'busy',
        '--alter',
        '--add-config',
        'request_percentage=0.1',
      ]);
      expect(r.stdout).toBe('Completed updating config for client busy.\n');
      const [host, port] = c.broker(0).address.split(':');
      const busy = await Connection.connect({ host: host!, port: Number(port), clientId: 'busy', requestTimeoutMs: 60_000 });
      const idle = await Connection.connect({ host: host!, port: Number(port), clientId: 'idle', requestTimeoutMs: 60_000 });
      const metadata = (conn: Connection) =>
        conn.request(
          API_KEYS.Metadata,
          {
            topics: [{ topicId: Buffer.alloc(16), name: 'q-slow' }],
            allowAutoTopicCreation: false,
            includeClusterAuthorizedOperations: false,
            includeTopicAuthorizedOperations: false,
          },
          { version: 9 },
        );
      try {
        // 0.1 % of one thread: the bucket holds 11 × 0.1 %·s = 11 ms of handler time, refilled at 1 ms/s.
        // Requests go 8 at a time: one at a time, a warm broker's few microseconds of Metadata handling
        // can stay below the refill rate over a loaded box's round trips, and the client never runs out.
        let requests = 0;
        const throttle = await until(
          async () => {
            requests += 8;
            const answers = await Promise.all(Array.from({ length: 8 }, () => metadata(busy)));
            const t = Math.max(...answers.map((a) => a.body.throttleTimeMs));
            return t > 0 ? t : null;
          },
          'a throttled Metadata answer for client id busy',
          120_000,
          0,
        );
        console.log(`request_percentage=0.1: throttled after ${requests} Metadata requests for ${throttle} ms`);
        expect(throttle).toBeLessThanOrEqual(1000);
        // the same number of requests from another client id: never throttled
        for (let i = 0; i < Math.min(requests, 2000); i++) expect((await metadata(idle)).body.throttleTimeMs).toBe(0);
        // a Fetch over the request quota comes back without data (Kafka's handleFetch), others with it
        const batch = encodeRecordBatch({ records: [{ value: Buffer.from('request-quota') }] });
        await idle.request(
          API_KEYS.Produce,
          { transactionalId: null, acks: 1, timeoutMs: 10_000, topicData: [{ name: 'q-slow', partitionData: [{ index: 0, records: batch }] }] },
          { version: 9 },
        );
        const fetch = (conn: Connection) =>
          conn.request(
            API_KEYS.Fetch,
            {
              clusterId: null,
              replicaId: -1,
              replicaState: { replicaId: -1, replicaEpoch: -1n },
              maxWaitMs: 0,
              minBytes: 0,
              maxBytes: 1 << 20,
              isolationLevel: 0,
              sessionId: 0,
              sessionEpoch: -1,
              topics: [
                {
                  topic: 'q-slow',
                  topicId: Buffer.alloc(16),
                  partitions: [
                    {
                      partition: 0,
                      currentLeaderEpoch: -1,
                      fetchOffset: 0n,
                      lastFetchedEpoch: -1,
                      logStartOffset: -1n,
                      partitionMaxBytes: 1 << 20,
                      replicaDirectoryId: Buffer.alloc(16),
                    },
                  ],
                },
              ],
              forgottenTopicsData: [],
              rackId: '',
            },
            { version: 12 },
          );
        const size = (res: Awaited<ReturnType<typeof fetch>>) => (res.body.responses[0]!.partitions[0]!.records as Buffer | null)?.length ?? 0;
        const throttledFetch = await until(
          async () => {
            const res = await fetch(busy);
            return res.body.throttleTimeMs > 0 ? res : null;
          },
          'a throttled Fetch for client id busy',
          60_000,
          0,
        );
        expect(size(throttledFetch)).toBe(0);
        expect(size(await fetch(idle))).toBeGreaterThan(0);
      } finally {
        await busy.close();
        await idle.close();
      }
    }, 180_000);

    it("quotas – @platformatic/kafka's Admin alters and describes client quotas (v1, flexible); the broker applies them", async () => {
      const plt = new PltAdmin({ clientId: 'plt-quotas', bootstrapBrokers: c.bootstrap.split(','), retries: 2, retryDelay: 100, timeout: 20_000 });
      try {
        const altered = await plt.alterClientQuotas({
          entries: [
            { entities: [{ entityType: 'client-id', entityName: 'plt' }], ops: [{ key: 'producer_byte_rate', value: 2048, remove: false }] },
            {
              entities: [
                { entityType: 'user', entityName: 'bob' },
                { entityType: 'client-id', entityName: null },
              ],
              ops: [{ key: 'request_percentage', value: 12.5, remove: false }],
            },
          ],
        });
        expect(altered.map((e) => e.errorCode)).toEqual([0, 0]);
        // an unknown key is INVALID_REQUEST for its entry, which the client raises
        const bad = plt.alterClientQuotas({
          entries: [
            { entities: [{ entityType: 'client-id', entityName: 'plt' }], ops: [{ key: 'no_such_quota' as 'producer_byte_rate', value: 1, remove: false }] },
          ],
        });
        await expect(bad).rejects.toThrow(/Altering client quotas failed|AlterClientQuotas/);
        expect(await c.admin.getEntityConfig(ConfigType.Client, 'plt')).toEqual({ producer_byte_rate: '2048' });
        expect(await c.admin.getEntityConfig(ConfigType.User, 'bob/clients/<default>')).toEqual({ request_percentage: '12.5' });
        const described = await plt.describeClientQuotas({ components: [{ entityType: 'client-id', matchType: 0, match: 'plt' }], strict: true });
        expect(described).toEqual([{ entity: [{ entityType: 'client-id', entityName: 'plt' }], values: [{ key: 'producer_byte_rate', value: 2048 }] }]);
        const pairs = await plt.describeClientQuotas({
          components: [
            { entityType: 'user', matchType: 2 },
            { entityType: 'client-id', matchType: 1 },
          ],
          strict: true,
        });
        expect(pairs).toEqual([
          {
            entity: [
              { entityType: 'user', entityName: 'bob' },
              { entityType: 'client-id', entityName: null },
            ],
            values: [{ key: 'request_percentage', value: 12.5 }],
          },
        ]);
      } finally {
        await plt.close();
      }
    }, 120_000);
  },
  { processesOnly: 'reads broker files or starts broker processes; not yet run on containers' },
);
