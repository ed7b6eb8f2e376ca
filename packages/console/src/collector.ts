/**
 * The console's view of the cluster: every poll it asks the cluster through the admin client
 * (DescribeCluster, Metadata, ListOffsets, ListGroups, DescribeGroups, OffsetFetch) and scrapes the
 * brokers' metrics endpoints, then publishes one ConsoleState (state.ts) to its subscribers. Polls
 * never overlap; each request has a short deadline so a dead broker slows one poll, not the page.
 */
import {
  Admin,
  BatchError,
  type AdminOptions,
  type BrokerNode,
  type CommittedOffset,
  type GroupDescription,
  type ListOffsetsRequest,
  type TopicDescription,
} from '@samsa/client';
import type { Logger } from 'pino';
import { groupLag, lagKey } from './lag.js';
import { discoverMetricsEndpoints, fetchStateChanges, scrape, type MetricsEndpoint } from './metrics-endpoints.js';
import { eventsFromStateChanges, nextStateChangeSeq } from './state-change-events.js';
import { parsePrometheusText, sumOf, type Sample } from './prom-text.js';
import { pushPoint, ratesBetween, readCounters, type CounterReading } from './rates.js';
import { ConnectionStatus, type ConsoleState, type GroupView, type MemberView, type MetricsEndpointView, type TopicView } from './state.js';
import { addEvents, diffSnapshots, uncleanElectionEvent, type ClusterSnapshot } from './timeline.js';

export interface CollectorOptions {
  bootstrapServers: string;
  /** Default 1000 ms. */
  pollIntervalMs?: number;
  /** Metrics endpoints to scrape; default: discovered through DescribeConfigs (metrics.port). */
  metricsEndpoints?: readonly MetricsEndpoint[];
  /** Points kept per chart series. Default 300. */
  historyPoints?: number;
  /** Timeline events kept. Default 500. */
  timelineEvents?: number;
  /** Deadline of each admin operation. Default 4000 ms. */
  operationTimeoutMs?: number;
  logger: Logger;
  /** For tests. Default `new Admin(opts)`. */
  createAdmin?: (opts: AdminOptions) => Admin;
}

const METRIC = {
  logSize: 'kafka_log_log_size',
  activeController: 'kafka_controller_kafkacontroller_activecontrollercount',
  controllerEpoch: 'kafka_controller_kafkacontroller_controllerepoch',
  unclean: 'kafka_controller_controllerstats_uncleanleaderelections_total',
} as const;

/** How long discovered metrics endpoints are trusted before asking again (brokers may restart with other ports). */
const REDISCOVER_MS = 30_000;

export function unreachableHint(bootstrap: string, opTimeoutMs: number): string {
  return (
    `Check that the brokers are running (\`npx samsa cluster status\`, or start them with \`npm start\`) and that ` +
    `the bootstrap servers (\`--bootstrap-server ${bootstrap}\`) name a client listener (host:port) of a live broker. ` +
    `The console keeps retrying (each attempt waits up to ${Math.round(opTimeoutMs / 100) / 10} s); this page recovers by itself once the cluster answers.`
  );
}

export class ClusterCollector {
  readonly state: ConsoleState;
  private readonly admin: Admin;
  private readonly log: Logger;
  private readonly pollMs: number;
  private readonly opMs: number;
  private readonly maxPoints: number;
  private readonly maxEvents: number;
  private readonly listeners = new Set<(s: ConsoleState) => void>();
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private polling: Promise<void> | undefined;
  private snapshot: ClusterSnapshot | undefined;
  private readonly startOffsets = new Map<string, number>();
  private readonly endOffsets = new Map<string, number>();
  private readonly readings = new Map<string, CounterReading>();
  private readonly uncleanCounts = new Map<string, number>();
  private discovered = new Map<number, MetricsEndpoint | null>();
  /** Per endpoint url: the state-change seq to ask from; null: the endpoint has no /state-change. */
  private readonly stateChangeSince = new Map<string, number | null>();
  private discoveredAt = 0;

  constructor(private readonly o: CollectorOptions) {
    this.log = o.logger;
    this.pollMs = o.pollIntervalMs ?? 1000;
    this.opMs = o.operationTimeoutMs ?? 4000;
    this.maxPoints = o.historyPoints ?? 300;
    this.maxEvents = o.timelineEvents ?? 500;
    const adminOpts: AdminOptions = {
      bootstrapServers: o.bootstrapServers,
      clientId: 'samsa-console',
      connectTimeoutMs: 3000,
      requestTimeoutMs: this.opMs,
      defaultApiTimeoutMs: this.opMs,
      metadataMaxAgeMs: 5000,
      logger: o.logger.child({ component: 'console-admin' }),
    };
    this.admin = o.createAdmin ? o.createAdmin(adminOpts) : new Admin(adminOpts);
    const now = Date.now();
    this.state = {
      updatedAt: now,
      startedAt: now,
      pollIntervalMs: this.pollMs,
      bootstrap: o.bootstrapServers,
      status: ConnectionStatus.Connecting,
      error: null,
      clusterId: null,
      controllerId: null,
      controllerEpoch: null,
      brokers: [],
      counts: { topics: 0, partitions: 0, offline: 0, underReplicated: 0 },
      topics: [],
      groups: [],
      lagHistory: {},
      throughput: { bytesIn: [], bytesOut: [], messagesIn: [], topics: [] },
      metrics: [],
      timeline: [],
    };
  }

  /** Calls `fn` after every poll; returns the unsubscribe function. */
  onUpdate(fn: (s: ConsoleState) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    const loop = async () => {
      this.polling = this.pollOnce();
      await this.polling;
      if (this.running) this.timer = setTimeout(() => void loop(), this.pollMs);
    };
    void loop();
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    await this.polling?.catch(() => undefined);
    await this.admin.close().catch(() => undefined);
  }

  /** One poll: cluster, topics, offsets, groups, metrics; then the timeline diff and a publish. */
  async pollOnce(): Promise<void> {
    const at = Date.now();
    try {
      const cluster = await this.admin.describeCluster({ timeoutMs: this.opMs });
      const topics = await this.describeAllTopics();
      // independent of each other: a dead leader or coordinator slows only its own part
      const [, samples, groups] = await Promise.all([this.pollOffsets(topics), this.pollMetrics(cluster.brokers, at), this.pollGroups()]);
      this.applyCluster(cluster.clusterId, cluster.controllerId, cluster.brokers, topics, samples, at);
      this.state.groups = groups.map((g) => ('view' in g ? g.view : this.groupView(g.description, g.committed)));
      this.recordLag(at);
      this.state.status = ConnectionStatus.Ok;
      this.state.error = null;
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (this.state.status !== ConnectionStatus.Unreachable) this.log.warn({ err, bootstrap: this.o.bootstrapServers }, 'cluster unreachable');
      this.state.error = {
        message: `Cannot reach the cluster at ${this.o.bootstrapServers}: ${message}`,
        hint: unreachableHint(this.o.bootstrapServers, this.opMs),
        since: this.state.status === ConnectionStatus.Unreachable && this.state.error ? this.state.error.since : at,
      };
      this.state.status = ConnectionStatus.Unreachable;
    }
    this.state.updatedAt = Date.now();
    for (const fn of this.listeners) {
      try {
        fn(this.state);
      } catch (err) {
        this.log.error({ err }, 'console subscriber failed');
      }
    }
  }

  private async describeAllTopics(): Promise<TopicDescription[]> {
    const names = await this.admin.listTopics({ listInternal: true, timeoutMs: this.opMs });
    if (names.length === 0) return [];
    try {
      return await this.admin.describeTopics(names, { timeoutMs: this.opMs });
    } catch (err) {
      // a topic deleted between the two calls: describe the others
      if (err instanceof BatchError && err.succeeded.length > 0) return this.admin.describeTopics(err.succeeded, { timeoutMs: this.opMs });
      throw err;
    }
  }

  /** Earliest and latest offsets per partition, one ListOffsets call per leader (a failing leader keeps its last values). */
  private async pollOffsets(topics: readonly TopicDescription[]): Promise<void> {
    const byLeader = new Map<number, Array<{ topic: string; partition: number }>>();
    for (const t of topics) {
      for (const p of t.partitions) {
        if (p.leader === null) continue;
        const list = byLeader.get(p.leader) ?? [];
        list.push({ topic: t.name, partition: p.partition });
        byLeader.set(p.leader, list);
      }
    }
    const calls: Array<Promise<void>> = [];
    for (const tps of byLeader.values()) {
      for (const spec of ['earliest', 'latest'] as const) {
        const reqs: ListOffsetsRequest[] = tps.map((tp) => ({ ...tp, spec }));
        const into = spec === 'earliest' ? this.startOffsets : this.endOffsets;
        calls.push(
          this.admin.listOffsets(reqs, { timeoutMs: this.opMs }).then(
            (res) => {
              for (const r of res) into.set(lagKey(r.topic, r.partition), Number(r.offset));
            },
            (err: unknown) => this.log.debug({ err }, 'ListOffsets failed'),
          ),
        );
      }
    }
    await Promise.all(calls);
  }

  private async endpoints(brokers: readonly BrokerNode[], at: number): Promise<MetricsEndpoint[]> {
    if (this.o.metricsEndpoints) return [...this.o.metricsEndpoints];
    const missing = brokers.filter((b) => !this.discovered.has(b.nodeId) || this.discovered.get(b.nodeId) === null);
    if (at - this.discoveredAt > REDISCOVER_MS || brokers.some((b) => !this.discovered.has(b.nodeId))) {
      const ask = at - this.discoveredAt > REDISCOVER_MS ? brokers : missing;
      const found = await discoverMetricsEndpoints(this.admin, ask, this.opMs);
      for (const b of ask) this.discovered.set(b.nodeId, found.find((e) => e.brokerId === b.nodeId) ?? null);
      if (ask === brokers) this.discoveredAt = at;
    }
    const live = new Set(brokers.map((b) => b.nodeId));
    return [...this.discovered.values()].filter((e): e is MetricsEndpoint => e !== null && e.brokerId !== null && live.has(e.brokerId));
  }

  /** Scrapes every endpoint; updates throughput series; returns the samples per endpoint url. */
  private async pollMetrics(brokers: readonly BrokerNode[], at: number): Promise<Map<string, { endpoint: MetricsEndpoint; samples: Sample[] }>> {
    const endpoints = await this.endpoints(brokers, at);
    const results = await Promise.allSettled(endpoints.map((e) => scrape(e, Math.min(this.opMs, 3000))));
    const ok = new Map<string, { endpoint: MetricsEndpoint; samples: Sample[] }>();
    const views: MetricsEndpointView[] = [];
    const pairs: Array<{ prev: CounterReading | undefined; next: CounterReading }> = [];
    let unclean: number | null = null;
    let uncleanPrev: number | null = null;
    endpoints.forEach((endpoint, i) => {
      const r = results[i]!;
      if (r.status === 'rejected') {
        const error = r.reason instanceof Error ? (r.reason.cause instanceof Error ? r.reason.cause.message : r.reason.message) : String(r.reason);
        views.push({ url: endpoint.url, brokerId: endpoint.brokerId, ok: false, error });
        this.readings.delete(endpoint.url);
        return;
      }
      const samples = parsePrometheusText(r.value);
      ok.set(endpoint.url, { endpoint, samples });
      views.push({ url: endpoint.url, brokerId: endpoint.brokerId, ok: true, error: null });
      const next = readCounters(samples, Date.now());
      pairs.push({ prev: this.readings.get(endpoint.url), next });
      this.readings.set(endpoint.url, next);
      const u = sumOf(samples, METRIC.unclean);
      const before = this.uncleanCounts.get(endpoint.url);
      if (u !== null) {
        if (before !== undefined) {
          uncleanPrev = (uncleanPrev ?? 0) + Math.min(before, u);
          unclean = (unclean ?? 0) + u;
        }
        this.uncleanCounts.set(endpoint.url, u);
      }
    });
    this.state.metrics = views;
    await Promise.all([...ok.values()].map(({ endpoint }) => this.pollStateChanges(endpoint)));
    const ev = uncleanElectionEvent(uncleanPrev, unclean, at);
    if (ev) addEvents(this.state.timeline, [ev], this.maxEvents);
    if (pairs.some((p) => p.prev)) {
      const rates = ratesBetween(pairs);
      const tp = this.state.throughput;
      pushPoint(tp.bytesIn, [at, rates.total.bytesIn], this.maxPoints);
      pushPoint(tp.bytesOut, [at, rates.total.bytesOut], this.maxPoints);
      pushPoint(tp.messagesIn, [at, rates.total.messagesIn], this.maxPoints);
      tp.topics = [...rates.topics].map(([topic, r]) => ({ topic, ...r })).sort((a, b) => b.bytesIn - a.bytesIn || (a.topic < b.topic ? -1 : 1));
    }
    return ok;
  }

  /**
   * New state-change records of one endpoint into the timeline. The first answer only sets the
   * position: the timeline starts when the console does, like the metadata diff.
   */
  private async pollStateChanges(endpoint: MetricsEndpoint): Promise<void> {
    const since = this.stateChangeSince.get(endpoint.url);
    if (since === null) return;
    try {
      const answer = await fetchStateChanges(endpoint, since ?? 0, Math.min(this.opMs, 3000));
      if (answer === null) {
        this.stateChangeSince.set(endpoint.url, null);
        return;
      }
      if (since === undefined) {
        this.stateChangeSince.set(endpoint.url, answer.last);
        return;
      }
      const next = nextStateChangeSeq(since, answer);
      if (!next.restarted) addEvents(this.state.timeline, eventsFromStateChanges(answer.records, endpoint.brokerId), this.maxEvents);
      this.stateChangeSince.set(endpoint.url, next.since);
    } catch (err) {
      this.log.debug({ err, url: endpoint.url }, 'state-change fetch failed');
    }
  }

  private applyCluster(
    clusterId: string | null,
    controllerId: number,
    brokers: readonly BrokerNode[],
    topics: readonly TopicDescription[],
    scraped: Map<string, { endpoint: MetricsEndpoint; samples: Sample[] }>,
    at: number,
  ): void {
    const s = this.state;
    s.clusterId = clusterId;
    s.controllerId = controllerId >= 0 ? controllerId : null;
    // controller epoch: from the active controller's gauge (any endpoint with one, failing that)
    let epoch: number | null = null;
    for (const { samples } of scraped.values()) {
      const e = sumOf(samples, METRIC.controllerEpoch);
      if (e === null) continue;
      if (sumOf(samples, METRIC.activeController) === 1) {
        epoch = e;
        break;
      }
      epoch = Math.max(epoch ?? 0, e);
    }
    s.controllerEpoch = epoch;
    // sizes: kafka_log_log_size per broker → per partition
    const sizes = new Map<string, Map<number | null, number>>();
    for (const { endpoint, samples } of scraped.values()) {
      for (const x of samples) {
        if (x.name !== METRIC.logSize || x.labels['topic'] === undefined) continue;
        const k = lagKey(x.labels['topic'], Number(x.labels['partition']));
        const m = sizes.get(k) ?? new Map<number | null, number>();
        m.set(endpoint.brokerId, Math.max(m.get(endpoint.brokerId) ?? 0, x.value));
        sizes.set(k, m);
      }
    }
    const sizeOf = (k: string, leader: number | null): number | null => {
      const m = sizes.get(k);
      if (!m) return null;
      return (leader !== null ? m.get(leader) : undefined) ?? Math.max(...m.values());
    };
    const views: TopicView[] = topics.map((t) => ({
      name: t.name,
      internal: t.isInternal,
      partitions: t.partitions.map((p) => {
        const k = lagKey(t.name, p.partition);
        return {
          partition: p.partition,
          leader: p.leader,
          leaderEpoch: p.leaderEpoch,
          replicas: [...p.replicas],
          isr: [...p.isr],
          offline: [...p.offline],
          startOffset: this.startOffsets.get(k) ?? null,
          endOffset: this.endOffsets.get(k) ?? null,
          sizeBytes: sizeOf(k, p.leader),
        };
      }),
    }));
    s.topics = views.sort((a, b) => (a.internal === b.internal ? (a.name < b.name ? -1 : 1) : a.internal ? 1 : -1));
    const allParts = views.flatMap((t) => t.partitions);
    s.counts = {
      topics: views.length,
      partitions: allParts.length,
      offline: allParts.filter((p) => p.leader === null).length,
      underReplicated: allParts.filter((p) => p.isr.length < p.replicas.length).length,
    };
    const metricsUrl = new Map([...scraped.values()].map(({ endpoint }) => [endpoint.brokerId, endpoint.url]));
    for (const e of this.o.metricsEndpoints ?? this.discovered.values())
      if (e && e.brokerId !== null && !metricsUrl.has(e.brokerId)) metricsUrl.set(e.brokerId, e.url);
    s.brokers = brokers.map((b) => ({
      id: b.nodeId,
      host: b.host,
      port: b.port,
      rack: b.rack,
      isController: b.nodeId === controllerId,
      leaderCount: allParts.filter((p) => p.leader === b.nodeId).length,
      replicaCount: allParts.filter((p) => p.replicas.includes(b.nodeId)).length,
      metricsUrl: metricsUrl.get(b.nodeId) ?? null,
    }));
    // timeline
    const snapshot: ClusterSnapshot = {
      brokers: brokers.map((b) => b.nodeId),
      controllerId: s.controllerId,
      controllerEpoch: epoch,
      topics: new Map(views.map((t) => [t.name, t.partitions.map((p) => ({ partition: p.partition, leader: p.leader, isr: p.isr }))])),
    };
    if (this.snapshot) addEvents(s.timeline, diffSnapshots(this.snapshot, snapshot, at), this.maxEvents);
    this.snapshot = snapshot;
  }

  /** Group descriptions and committed offsets; a group that fails to describe keeps its last view. */
  private async pollGroups(): Promise<Array<{ view: GroupView } | { description: GroupDescription; committed: CommittedOffset[] }>> {
    const listings = await this.admin.listGroups({ timeoutMs: this.opMs }).catch((err: unknown) => {
      this.log.debug({ err }, 'ListGroups failed');
      return null;
    });
    if (listings === null) return this.state.groups.map((view) => ({ view }));
    const previous = new Map(this.state.groups.map((g) => [g.groupId, g]));
    const out = await Promise.all(
      listings.map(async (l) => {
        try {
          const [description] = await this.admin.describeGroups([l.groupId], { timeoutMs: this.opMs });
          const committed = await this.admin.listGroupOffsets(l.groupId, null, { timeoutMs: this.opMs });
          return { description: description!, committed };
        } catch (err) {
          this.log.debug({ err, group: l.groupId }, 'describing group failed');
          const view = previous.get(l.groupId);
          return view ? { view } : undefined;
        }
      }),
    );
    return out.filter((g) => g !== undefined);
  }

  private groupView(d: GroupDescription, committed: ReadonlyArray<{ topic: string; partition: number; offset: bigint }>): GroupView {
    const members: MemberView[] = d.members.map((m) => ({
      memberId: m.memberId,
      clientId: m.clientId,
      host: m.host,
      groupInstanceId: m.groupInstanceId,
      assignment: m.assignment.map((a) => ({ topic: a.topic, partitions: [...a.partitions].sort((x, y) => x - y) })),
    }));
    const { partitions, totalLag } = groupLag(committed, members, this.endOffsets);
    return {
      groupId: d.groupId,
      state: d.state,
      protocolType: d.protocolType,
      assignor: d.partitionAssignor,
      coordinator: d.coordinator.nodeId >= 0 ? d.coordinator.nodeId : null,
      members,
      partitions,
      totalLag,
    };
  }

  private recordLag(at: number): void {
    const h = this.state.lagHistory;
    const live = new Set(this.state.groups.map((g) => g.groupId));
    for (const id of Object.keys(h)) if (!live.has(id)) delete h[id];
    for (const g of this.state.groups) pushPoint((h[g.groupId] ??= []), [at, g.totalLag], this.maxPoints);
  }
}
