/**
 * Observability against a real 3-broker cluster: the brokers' /metrics (Prometheus text), /health
 * and /ready endpoints, read over HTTP while a partition leader is killed with -9 and restarted,
 * while KafkaJS produces and consumes, and while a broker waits for its registration.
 */
import kafkajs from 'kafkajs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BrokerProcess, freePorts } from '@samsa/local-cluster';
import { newTopicId } from '@samsa/zk-paths';
import { join } from 'node:path';
import { TestCluster, describeCluster, until } from './harness.js';
import { waitForBrokerMetadata } from './clients/wire.js';

const { Kafka, Partitioners, logLevel } = kafkajs;

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the Prometheus text exposition format (what a Prometheus server reads). */
function parseExposition(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!m) throw new Error(`unparsable exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

/** Sum of the samples named `name` whose labels include `labels`. */
function total(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((n, s) => n + s.value, 0);
}

async function scrape(b: BrokerProcess): Promise<Sample[]> {
  const res = await fetch(`${b.metricsUrl!}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
  return parseExposition(await res.text());
}

/** Scrapes every broker that answers (a killed one does not). */
async function scrapeLive(brokers: BrokerProcess[]): Promise<Map<number, Sample[]>> {
  const out = new Map<number, Sample[]>();
  await Promise.all(
    brokers.map(async (b) => {
      if (b.pid === undefined) return;
      try {
        out.set(b.id, await scrape(b));
      } catch {
        /* not serving (killed, restarting) */
      }
    }),
  );
  return out;
}

const sumOver = (scrapes: Map<number, Sample[]>, name: string, labels: Record<string, string> = {}) =>
  [...scrapes.values()].reduce((n, s) => n + total(s, name, labels), 0);

/** Java's String.hashCode: Kafka places a group on offsets partition abs(hash) % partitions. */
function javaHash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0;
  return h;
}

async function getJson(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describeCluster(
  'metrics, health and readiness endpoints (3 brokers, RF=3)',
  () => {
    let c: TestCluster;
    const extra: BrokerProcess[] = [];

    beforeAll(async () => {
      c = await TestCluster.start({ brokers: 3, metrics: true, overrides: { 'replica.lag.time.max.ms': '2000' } });
      await waitForBrokerMetadata(c.bootstrap.split(','), () => c.controllerId());
    });
    afterAll(async () => {
      await Promise.all(extra.map((b) => b.stop(10_000)));
      await c?.stop();
    });

    it('metrics – the active-controller count sums to exactly 1 over the brokers, and each one exposes the Kafka gauges', async () => {
      const scrapes = await until(async () => {
        const s = await scrapeLive(c.brokers as BrokerProcess[]);
        return s.size === 3 && sumOver(s, 'kafka_controller_kafkacontroller_activecontrollercount') === 1 ? s : undefined;
      }, 'one active controller');
      const controller = (await c.controllerId())!;
      expect(total(scrapes.get(controller)!, 'kafka_controller_kafkacontroller_activecontrollercount')).toBe(1);
      expect(total(scrapes.get(controller)!, 'kafka_controller_kafkacontroller_controllerepoch')).toBeGreaterThanOrEqual(1);
      for (const s of scrapes.values()) {
        expect(total(s, 'kafka_server_sessionexpirelistener_sessionstate', { state: 'CONNECTED' })).toBe(1);
        expect(total(s, 'kafka_server_zookeeperclientmetrics_zookeeperrequestlatencyms_count')).toBeGreaterThan(0);
        expect(s.some((x) => x.name === 'kafka_server_delayedoperationpurgatory_purgatorysize' && x.labels['delayedoperation'] === 'Produce')).toBe(true);
      }
      // the controller processed its startup events and timed them per type
      expect(total(scrapes.get(controller)!, 'kafka_controller_controllerstats_eventtimems_count', { event: 'Startup' })).toBeGreaterThanOrEqual(1);
    });

    it('metrics – a kill -9 of a leader raises under-replicated partitions and an ISR shrink; after its restart they fall back with an ISR expand', async () => {
      const topic = 'metrics-failover';
      const assignment = new Map<number, number[]>();
      for (let p = 0; p < 6; p++) assignment.set(p, [p % 3, (p + 1) % 3, (p + 2) % 3]);
      await c.admin.createTopic(topic, newTopicId(), assignment, {});
      await c.waitForLeaders(topic, 6);
      // all replicas in sync before the kill
      await until(
        async () => {
          const s = await scrapeLive(c.brokers as BrokerProcess[]);
          return (
            s.size === 3 &&
            sumOver(s, 'kafka_server_replicamanager_leadercount') >= 6 &&
            sumOver(s, 'kafka_server_replicamanager_underreplicatedpartitions') === 0
          );
        },
        'no under-replicated partitions',
        30_000,
        200,
      );

      const victim = c.broker(await c.leaderOf(topic, 0));
      const survivors = (c.brokers as BrokerProcess[]).filter((b) => b !== victim);
      const before = await scrapeLive(survivors);
      const shrinksBefore = sumOver(before, 'kafka_server_replicamanager_isrshrinks_total');
      const expandsBefore = sumOver(before, 'kafka_server_replicamanager_isrexpands_total');

      await victim.kill();
      // the survivors' leaders drop the dead follower after replica.lag.time.max.ms
      const during = await until(
        async () => {
          const s = await scrapeLive(survivors);
          return s.size === 2 &&
            sumOver(s, 'kafka_server_replicamanager_underreplicatedpartitions') > 0 &&
            sumOver(s, 'kafka_server_replicamanager_isrshrinks_total') > shrinksBefore
            ? s
            : undefined;
        },
        'under-replicated partitions and an ISR shrink after the kill',
        30_000,
        200,
      );
      expect(sumOver(during, 'kafka_server_replicamanager_underreplicatedpartitions')).toBeLessThanOrEqual(6);
      // whoever is controller now, exactly one of the live brokers says so
      await until(
        async () => {
          const s = await scrapeLive(survivors);
          return s.size === 2 && sumOver(s, 'kafka_controller_kafkacontroller_activecontrollercount') === 1;
        },
        'one active controller among the survivors',
        30_000,
        200,
      );

      // restart once the old registration is gone (its ZooKeeper session expired)
      await until(async () => !(await c.admin.getBrokerIds()).includes(victim.id), 'dead broker unregistered', 30_000, 200);
      await victim.launch();
      await victim.waitReady();
      const after = await until(
        async () => {
          const s = await scrapeLive(c.brokers as BrokerProcess[]);
          return s.size === 3 &&
            sumOver(s, 'kafka_server_replicamanager_underreplicatedpartitions') === 0 &&
            sumOver(new Map([...s].filter(([id]) => id !== victim.id)), 'kafka_server_replicamanager_isrexpands_total') > expandsBefore
            ? s
            : undefined;
        },
        'under-replicated back to 0 with an ISR expand',
        60_000,
        250,
      );
      expect(sumOver(after, 'kafka_controller_kafkacontroller_activecontrollercount')).toBe(1);
      // every partition is hosted three times over, led once
      expect(sumOver(after, 'kafka_server_replicamanager_partitioncount')).toBeGreaterThanOrEqual(18);
      expect(sumOver(after, 'kafka_log_log_size', { topic })).toBeGreaterThanOrEqual(0);
      expect([...after.values()].filter((s) => s.some((x) => x.name === 'kafka_log_log_size' && x.labels['topic'] === topic)).length).toBe(3);
    });

    it('metrics – KafkaJS produce and consume move the Produce/Fetch request counters, latency histograms, topic byte counters; the coordinator reports the group and its exact lag', async () => {
      const topic = 'metrics-traffic';
      const group = 'metrics-group';
      const before = await scrapeLive(c.brokers as BrokerProcess[]);
      const kafka = new Kafka({
        clientId: 'metrics-e2e',
        brokers: c.bootstrap.split(','),
        retry: { retries: 5, initialRetryTime: 200 },
        logLevel: logLevel.NOTHING,
      });
      const admin = kafka.admin();
      await admin.connect();
      // the group's first FindCoordinator creates __consumer_offsets; the topic is then placed so that
      // the group's coordinator leads it, which is where its lag is computed
      await until(
        async () =>
          await admin
            .describeGroups([group])
            .then(() => true)
            .catch(() => false),
        'group coordinator available',
        60_000,
        200,
      );
      await c.waitForLeaders('__consumer_offsets', 50, 60_000);
      const coordinator = await c.leaderOf('__consumer_offsets', Math.abs(javaHash(group)) % 50);
      await admin.disconnect();
      await c.admin.createTopic(topic, newTopicId(), new Map([[0, [coordinator, ...[0, 1, 2].filter((b) => b !== coordinator)]]]), {});
      await c.waitForLeaders(topic, 1);
      const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
      await producer.connect();
      const n = 20;
      await producer.send({ topic, acks: -1, messages: Array.from({ length: n }, (_, i) => ({ key: `k${i}`, value: `value-${i}` })) });
      await producer.disconnect();
      const consumer = kafka.consumer({ groupId: group });
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      let seen = 0;
      void consumer.run({ eachMessage: async () => void seen++ });
      await until(() => seen >= n, 'consumed everything', 60_000, 100);
      await consumer.disconnect(); // commits

      const leader = c.broker(await c.leaderOf(topic, 0));
      const after = await until(async () => {
        const s = await scrapeLive(c.brokers as BrokerProcess[]);
        return s.size === 3 && total(s.get(leader.id)!, 'kafka_server_brokertopicmetrics_messagesin_total', { topic }) >= n ? s : undefined;
      }, 'messages in counted on the leader');
      const d = (name: string, labels: Record<string, string>) => sumOver(after, name, labels) - sumOver(before, name, labels);
      expect(d('kafka_network_requestmetrics_requests_total', { request: 'Produce' })).toBeGreaterThanOrEqual(1);
      expect(d('kafka_network_requestmetrics_requests_total', { request: 'Fetch' })).toBeGreaterThanOrEqual(1);
      expect(d('kafka_network_requestmetrics_totaltimems_count', { request: 'Produce' })).toBeGreaterThanOrEqual(1);
      expect(d('kafka_network_requestmetrics_totaltimems_count', { request: 'Fetch' })).toBeGreaterThanOrEqual(1);
      expect(d('kafka_network_requestmetrics_remotetimems_count', { request: 'Fetch' })).toBeGreaterThanOrEqual(1);
      expect(d('kafka_network_requestmetrics_errors_total', { request: 'Produce', error: 'NONE' })).toBeGreaterThanOrEqual(1);
      expect(total(after.get(leader.id)!, 'kafka_server_brokertopicmetrics_messagesin_total', { topic })).toBe(n);
      expect(total(after.get(leader.id)!, 'kafka_server_brokertopicmetrics_bytesin_total', { topic })).toBeGreaterThan(0);
      expect(total(after.get(leader.id)!, 'kafka_server_brokertopicmetrics_bytesout_total', { topic })).toBeGreaterThan(0);
      // the acks=-1 produce waited for the followers in the produce purgatory: a remote time was measured
      expect(sumOver(after, 'kafka_network_requestmetrics_remotetimems_sum', { request: 'Produce' })).toBeGreaterThan(0);
      // the coordinator knows the (now empty) group and, if it leads the topic's partition, its lag is 0
      expect(sumOver(after, 'kafka_coordinator_group_groupmetadatamanager_numgroups', { state: 'Empty' })).toBeGreaterThanOrEqual(1);
      const lagOf = (s: Map<number, Sample[]>) => total(s.get(coordinator)!, 'kafka_coordinator_group_consumerlag', { group, topic, partition: '0' });
      await until(
        async () =>
          (await scrapeLive(c.brokers as BrokerProcess[]))
            .get(coordinator)
            ?.some((x) => x.name === 'kafka_coordinator_group_consumerlag' && x.labels['group'] === group),
        'lag series on the coordinator',
      );
      expect(lagOf(await scrapeLive(c.brokers as BrokerProcess[]))).toBe(0);
      // more records after the last commit: the lag is exactly their count once the high watermark moves
      const more = 7;
      const p2 = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
      await p2.connect();
      await p2.send({ topic, acks: -1, messages: Array.from({ length: more }, (_, i) => ({ value: `more-${i}` })) });
      await p2.disconnect();
      await until(async () => lagOf(await scrapeLive(c.brokers as BrokerProcess[])) === more, `lag of ${more}`, 30_000, 200);
    });

    it('health – /health answers 200 at once; /ready stays 503 naming the missing registration until the broker registers', async () => {
      const [port, controlPort, metricsPort] = await freePorts(3);
      const b = new BrokerProcess({
        id: 9,
        port: port!,
        controlPort: controlPort!,
        metricsPort: metricsPort!,
        zookeeperConnect: c.zk.connectString('/samsa'),
        dir: join(c.dir, 'broker-9'),
        logToFile: true,
      });
      extra.push(b);
      // a registration held by the test's own session: the broker waits for it to go away
      await c.admin.registerBroker({
        id: 9,
        endpoints: [{ listenerName: 'PLAINTEXT', host: '127.0.0.1', port: 1, securityProtocol: 'PLAINTEXT' }],
        rack: null,
        jmxPort: -1,
        timestamp: String(Date.now()),
        features: {},
        version: 5,
      });
      await b.launch();
      const health = await until(async () => getJson(`${b.metricsUrl!}/health`).catch(() => undefined), '/health answering', 30_000, 100);
      expect(health.status).toBe(200);
      const notReady = await until(
        async () => {
          const r = await getJson(`${b.metricsUrl!}/ready`).catch(() => undefined);
          return r && (r.body['reasons'] as string[] | undefined)?.includes('not registered in /brokers/ids') ? r : undefined;
        },
        '/ready naming the missing registration',
        30_000,
        100,
      );
      expect(notReady.status).toBe(503);
      expect(notReady.body['ready']).toBe(false);
      // nothing answers on the Kafka port's behalf being ready: the broker really is not registered
      expect((await c.admin.getBroker(9))?.endpoints[0]?.port).toBe(1);

      await c.admin.zk.delete('/brokers/ids/9');
      const ready = await until(
        async () => {
          const r = await getJson(`${b.metricsUrl!}/ready`);
          return r.status === 200 ? r : undefined;
        },
        '/ready 200 after registration and UpdateMetadata',
        30_000,
        100,
      );
      expect(ready.body).toEqual({ ready: true });
      expect((await c.admin.getBroker(9))?.endpoints[0]?.port).toBe(port);
      expect((await getJson(`${b.metricsUrl!}/nope`)).status).toBe(404);
    });
  },
  { processesOnly: 'starts an extra broker process and reads metrics ports of broker processes' },
);
