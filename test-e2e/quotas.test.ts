/**
 * Client quotas on a real broker: `samsa configs --zookeeper … --entity-type clients --entity-name
 * slow --alter --add-config producer_byte_rate=1048576` holds a producer with client id `slow`
 * (Samsa's wire client, Produce v9: responses carry throttle_time_ms and the channel is muted) to
 * 1 MB/s ± 20% over 20 s once the initial burst has left the 11 s quota window, while a KafkaJS producer with
 * another client id produces unthrottled at the same time.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import kafkajs from 'kafkajs';
import type { Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Connection } from '@samsa/client';
import { API_KEYS, encodeRecordBatch } from '@samsa/protocol';
import { ConfigType } from '@samsa/zk-paths';
import { TestCluster, until } from './harness.js';

const { Kafka, logLevel } = kafkajs;
const exec = promisify(execFile);
const bin = fileURLToPath(new URL('../packages/cli/bin/samsa.js', import.meta.url));
const QUOTA = 1_048_576;

describe('client quotas (1 broker)', () => {
  let c: TestCluster;
  let producer: Producer;
  let conn: Connection;

  beforeAll(async () => {
    c = await TestCluster.start({ brokers: 1 });
    const kafka = new Kafka({ clientId: 'fast', brokers: c.bootstrap.split(','), logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'q-slow', numPartitions: 1, replicationFactor: 1 }, { topic: 'q-fast', numPartitions: 1, replicationFactor: 1 }], waitForLeaders: true });
    await admin.disconnect();
    producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    const [host, port] = c.broker(0).address.split(':');
    conn = await Connection.connect({ host: host!, port: Number(port), clientId: 'slow', requestTimeoutMs: 60_000 });
  }, 120_000);

  afterAll(async () => {
    await conn?.close();
    await producer?.disconnect();
    await c?.stop();
  });

  it('quotas – producer_byte_rate holds client id "slow" to 1 MB/s ± 20% with throttle_time_ms > 0; another client id is not throttled', async () => {
    const r = await exec(process.execPath, [bin, 'configs', '--zookeeper', c.zk.connectString('/samsa'), '--entity-type', 'clients', '--entity-name', 'slow', '--alter', '--add-config', `producer_byte_rate=${QUOTA}`]);
    expect(r.stdout).toBe("Completed updating config for entity: client 'slow'.\n");
    expect(await c.admin.getEntityConfig(ConfigType.Client, 'slow')).toEqual({ producer_byte_rate: String(QUOTA) });

    const batch = encodeRecordBatch({ records: Array.from({ length: 4 }, () => ({ value: Buffer.alloc(16_000, 7) })) });
    const produceSlow = () =>
      conn.request(API_KEYS.Produce, { transactionalId: null, acks: 1, timeoutMs: 30_000, topicData: [{ name: 'q-slow', partitionData: [{ index: 0, records: batch }] }] }, { version: 9 });
    // the broker applies the quota from the change notification: the first throttled answer shows it
    const throttles: number[] = [];
    await until(async () => {
      const res = await produceSlow();
      expect(res.body.responses[0]!.partitionResponses[0]!.errorCode).toBe(0);
      throttles.push(res.body.throttleTimeMs);
      return res.body.throttleTimeMs > 0;
    }, 'a throttled produce response', 60_000, 0);

    // the first burst fills the 11 s quota window; once it has left the window, 20 s of
    // back-to-back produces: what is acknowledged stays near the quota
    const warmUpEnd = Date.now() + 12_000;
    while (Date.now() < warmUpEnd) throttles.push((await produceSlow()).body.throttleTimeMs);
    let fastBytes = 0;
    let stop = false;
    const fast = (async () => {
      const value = Buffer.alloc(16_000, 1);
      while (!stop) {
        await producer.send({ topic: 'q-fast', acks: 1, messages: Array.from({ length: 4 }, () => ({ value })) });
        fastBytes += 4 * 16_000;
      }
    })();
    const start = Date.now();
    let slowBytes = 0;
    while (Date.now() - start < 20_000) {
      const res = await produceSlow();
      expect(res.body.responses[0]!.partitionResponses[0]!.errorCode).toBe(0);
      throttles.push(res.body.throttleTimeMs);
      slowBytes += batch.length;
    }
    const seconds = (Date.now() - start) / 1000;
    stop = true;
    await fast;
    const slowRate = slowBytes / seconds;
    const fastRate = fastBytes / seconds;
    console.log(`quota ${QUOTA} B/s: slow client ${Math.round(slowRate)} B/s over ${seconds.toFixed(1)} s; fast client ${Math.round(fastRate)} B/s; max throttle ${Math.max(...throttles)} ms`);
    expect(slowRate).toBeGreaterThan(QUOTA * 0.8);
    expect(slowRate).toBeLessThan(QUOTA * 1.2);
    expect(throttles.filter((t) => t > 0).length).toBeGreaterThan(5);
    // the other client id has no quota: it is not held to the slow client's rate
    expect(fastRate).toBeGreaterThan(QUOTA * 1.5);
  }, 180_000);
});
