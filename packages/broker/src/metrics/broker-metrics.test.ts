import { TopicPartitionMap } from '@samsa/protocol';
import { readFileSync } from 'node:fs';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { ReplicaManager } from '../replica/replica-manager.js';
import { BrokerMetrics } from './broker-metrics.js';
import { MetricsHttpServer } from './http-server.js';
import { FetchSessionCache } from '../fetch-session/fetch-session-cache.js';

/** The value of one sample line (`name{labels} value`) in an exposition, or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** A replica manager stand-in: what the scrape-time gauges read. */
function fakeReplicaManager(
  parts: Array<{ topic: string; partition: number; leader: boolean; isr: number[]; replicas: number[]; size: number }>,
  minIsr: Record<string, number>,
): ReplicaManager {
  const partitions = new TopicPartitionMap<object>();
  for (const p of parts)
    partitions.set(p.topic, p.partition, {
      topic: p.topic,
      partition: p.partition,
      isLeader: p.leader,
      isr: p.isr,
      replicas: p.replicas,
      log: { size: p.size },
      highWatermark: 10n,
    });
  return {
    partitions,
    cachedSettings: (t: string) => (minIsr[t] === undefined ? undefined : { minInsyncReplicas: minIsr[t] }),
    getPartition: (t: string, p: number) => partitions.get(t, p),
  } as unknown as ReplicaManager;
}

describe('BrokerMetrics', () => {
  it('metrics – replica-manager gauges are computed at scrape time from the hosted partitions and min.insync.replicas', async () => {
    const m = new BrokerMetrics({ defaultMinIsr: 2 });
    m.sources.replicaManager = fakeReplicaManager(
      [
        { topic: 'a', partition: 0, leader: true, isr: [0], replicas: [0, 1, 2], size: 100 },
        { topic: 'a', partition: 1, leader: false, isr: [1, 0], replicas: [1, 0, 2], size: 50 },
        { topic: 'b', partition: 0, leader: true, isr: [0, 1], replicas: [0, 1], size: 7 },
      ],
      { b: 3 },
    );
    let text = (await m.scrape()).body;
    expect(sample(text, 'kafka_server_replicamanager_underreplicatedpartitions')).toBe(1);
    // a-0: ISR 1 < default 2; b-0: ISR 2 < its own 3
    expect(sample(text, 'kafka_server_replicamanager_underminisrpartitioncount')).toBe(2);
    expect(sample(text, 'kafka_server_replicamanager_leadercount')).toBe(2);
    expect(sample(text, 'kafka_server_replicamanager_partitioncount')).toBe(3);
    expect(sample(text, 'kafka_log_log_size{topic="a",partition="1"}')).toBe(50);
    // state changes show at the next scrape
    m.sources.replicaManager.partitions.delete('a', 0);
    text = (await m.scrape()).body;
    expect(sample(text, 'kafka_server_replicamanager_underreplicatedpartitions')).toBe(0);
    expect(sample(text, 'kafka_log_log_size{topic="a",partition="0"}')).toBeUndefined();
  });

  it("metrics – a request's timings land in the per-API histograms, remote time split from local", async () => {
    const m = new BrokerMetrics({ defaultMinIsr: 1 });
    m.requestCompleted({ apiKey: 0, receivedAt: 100, startedAt: 101, handledAt: 131, sendStartedAt: 131.5, remoteMs: 25, throttleMs: 0 }, 132);
    m.onResponse(0, { responses: [{ partitionResponses: [{ errorCode: 0 }, { errorCode: 19 }] }] });
    const text = (await m.scrape()).body;
    expect(sample(text, 'kafka_network_requestmetrics_requests_total{request="Produce"}')).toBe(1);
    expect(sample(text, 'kafka_network_requestmetrics_totaltimems_sum{request="Produce"}')).toBe(32);
    expect(sample(text, 'kafka_network_requestmetrics_requestqueuetimems_sum{request="Produce"}')).toBe(1);
    expect(sample(text, 'kafka_network_requestmetrics_remotetimems_sum{request="Produce"}')).toBe(25);
    expect(sample(text, 'kafka_network_requestmetrics_localtimems_sum{request="Produce"}')).toBe(5);
    expect(sample(text, 'kafka_network_requestmetrics_responsesendtimems_sum{request="Produce"}')).toBe(0.5);
    expect(sample(text, 'kafka_network_requestmetrics_errors_total{request="Produce",error="NOT_ENOUGH_REPLICAS"}')).toBe(1);
    expect(sample(text, 'kafka_network_requestmetrics_errors_total{request="Produce",error="NONE"}')).toBe(1);
  });

  it("metrics – consumer lag comes from the coordinator's committed offsets for partitions led here", async () => {
    const m = new BrokerMetrics({ defaultMinIsr: 1 });
    m.sources.replicaManager = fakeReplicaManager([{ topic: 't', partition: 0, leader: true, isr: [0], replicas: [0], size: 1 }], {});
    m.sources.groupCoordinator = {
      groupManager: {
        currentGroups: () => [
          {
            groupId: 'g',
            currentState: 'Stable',
            allOffsets: () => [
              [{ topic: 't', partition: 0 }, { committedOffset: 4n }],
              [{ topic: 't', partition: 1 }, { committedOffset: 4n }],
            ],
          },
        ],
      },
    } as never;
    const text = (await m.scrape()).body;
    expect(sample(text, 'kafka_coordinator_group_consumerlag{group="g",topic="t",partition="0"}')).toBe(6);
    expect(sample(text, 'kafka_coordinator_group_consumerlag{group="g",topic="t",partition="1"}')).toBeUndefined();
    expect(sample(text, 'kafka_coordinator_group_groupmetadatamanager_numgroups{state="Stable"}')).toBe(1);
    expect(sample(text, 'kafka_coordinator_group_groupmetadatamanager_numgroups{state="Empty"}')).toBe(0);
  });

  it('metrics – the fetch session gauges and eviction counter read the fetch session cache at scrape time', async () => {
    const m = new BrokerMetrics({ defaultMinIsr: 1 });
    let now = 0;
    const cache = new FetchSessionCache({ maxEntries: 1, evictionMs: 10, now: () => now });
    m.sources.fetchSessions = cache;
    const parts = (n: number) => new Map(Array.from({ length: n }, (_, i) => [String(i), {} as never]));
    cache.maybeCreateSession(false, parts(3), false);
    now = 100;
    cache.maybeCreateSession(true, parts(2), false);
    const text = (await m.scrape()).body;
    expect(sample(text, 'kafka_server_fetchsessioncache_numincrementalfetchsessions')).toBe(1);
    expect(sample(text, 'kafka_server_fetchsessioncache_numincrementalfetchpartitionscached')).toBe(2);
    expect(sample(text, 'kafka_server_fetchsessioncache_incrementalfetchsessionevictions_total')).toBe(1);
  });
});

describe('MetricsHttpServer', () => {
  let server: MetricsHttpServer | undefined;
  afterEach(async () => server?.stop());

  it('metrics – serves /metrics, /health and /ready (503 with reasons until ready)', async () => {
    const m = new BrokerMetrics({ defaultMinIsr: 1 });
    let reasons = ['not registered in /brokers/ids'];
    server = new MetricsHttpServer({ host: '127.0.0.1', port: 0, scrape: () => m.scrape(), readiness: () => reasons, logger: pino({ enabled: false }) });
    const port = await server.start();
    const base = `http://127.0.0.1:${port}`;
    const metrics = await fetch(`${base}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain('# TYPE kafka_server_replicamanager_underreplicatedpartitions gauge');
    expect((await fetch(`${base}/health`)).status).toBe(200);
    const notReady = await fetch(`${base}/ready`);
    expect(notReady.status).toBe(503);
    expect(await notReady.json()).toEqual({ ready: false, reasons: ['not registered in /brokers/ids'] });
    reasons = [];
    expect((await fetch(`${base}/ready`)).status).toBe(200);
    expect((await fetch(`${base}/other`)).status).toBe(404);
  });
});

describe('metrics docs and dashboard', () => {
  const root = new URL('../../../../', import.meta.url);
  const registered = async () =>
    (await new BrokerMetrics({ defaultMinIsr: 1 }).registry.getMetricsAsJSON()).map((m) => m.name).filter((n) => n.startsWith('kafka_'));

  it('metrics – docs/metrics.md documents every kafka_ metric the registry exports', async () => {
    const doc = readFileSync(new URL('docs/metrics.md', root), 'utf8');
    const names = await registered();
    expect(names.length).toBeGreaterThan(30);
    for (const n of names) expect(doc, n).toContain(`\`${n}\``);
  });

  it('metrics – the Grafana dashboard is Grafana 10 JSON on a Prometheus datasource variable, querying only exported metrics', async () => {
    const dash = JSON.parse(readFileSync(new URL('docs/grafana-dashboard.json', root), 'utf8')) as {
      schemaVersion: number;
      templating: { list: Array<{ name: string; type: string; query: unknown }> };
      panels: Array<{ type: string; datasource?: { uid: string }; targets?: Array<{ expr: string }> }>;
    };
    expect(dash.schemaVersion).toBeGreaterThanOrEqual(38);
    expect(dash.templating.list).toContainEqual(expect.objectContaining({ name: 'datasource', type: 'datasource', query: 'prometheus' }));
    const names = new Set(await registered());
    const queried = dash.panels.flatMap((p) => (p.targets ?? []).flatMap((t) => t.expr.match(/kafka_[a-z_]+/g) ?? []));
    expect(queried.length).toBeGreaterThan(20);
    for (const q of queried) expect(names.has(q.replace(/_(bucket|sum|count)$/, '')), q).toBe(true);
    for (const p of dash.panels.filter((x) => x.type !== 'row')) expect(p.datasource?.uid).toBe('${datasource}');
  });
});
