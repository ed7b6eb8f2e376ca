/**
 * The broker's Prometheus registry (prom-client). Names follow Kafka's MBeans the way the
 * Prometheus JMX exporter spells them, `kafka_<domain>_<type>_<name>` in lower case, with the
 * MBean's tags as labels (`topic`, `partition`, `request`, `error`, `delayedoperation`); counters
 * end in `_total` (a Kafka `...PerSec` meter is a counter here: take its rate in PromQL).
 * docs/metrics.md lists every metric with its Kafka MBean.
 *
 * Gauges are computed at scrape time by collect() callbacks reading the broker's own state; the
 * request path only bumps counters and histograms, once per request or per partition.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { API_TABLE, type TopicPartition } from '@samsa/protocol';
import type { ControllerEventType, ControllerMetricsListener, KafkaController } from '@samsa/controller';
import type { ZkClient, ZkSessionStateName } from '@samsa/zk-paths';
import { GroupState, type GroupCoordinator } from '@samsa/group-coordinator';
import type { RequestTiming } from '../network/socket-server.js';
import type { ReplicaManager } from '../replica/replica-manager.js';
import type { FetchSessionCache } from '../fetch-session/fetch-session-cache.js';
import type { ResponseObserver } from '../api/api-handler.js';
import { countResponseErrors, errorName } from './error-counts.js';
import { consumerLag } from './lag.js';
import { replicaStats } from './partition-stats.js';
import type { TopicMetricsSink } from './topic-metrics.js';
import { FastCounter, FastHistogram, type CounterSeries, type HistogramSeries } from './fast-metrics.js';

/** What the scrape-time gauges read; filled in as the broker starts its components. */
export interface MetricsSources {
  replicaManager?: ReplicaManager;
  controller?: KafkaController;
  groupCoordinator?: GroupCoordinator;
  zk?: ZkClient;
  /** The fetch session cache (KIP-227). */
  fetchSessions?: FetchSessionCache;
  /** The broker's min.insync.replicas, for topics whose settings are not resolved yet. */
  defaultMinIsr: number;
}

/** Request latency buckets in ms (Kafka reports these timers in ms too). */
const REQUEST_MS_BUCKETS = [0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000, 30_000];
const ZK_MS_BUCKETS = [0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000];
const EVENT_MS_BUCKETS = [0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000];

const API_NAMES = new Map<number, string>(API_TABLE.map((a) => [a.apiKey, a.name]));
const apiName = (key: number) => API_NAMES.get(key) ?? `Unknown${key}`;
/** One API's request series, bound once (prom-client's label lookup costs more than the observation). */
interface RequestSeries {
  requests: CounterSeries;
  total: HistogramSeries;
  queue: HistogramSeries;
  local: HistogramSeries;
  remote: HistogramSeries;
  throttle: HistogramSeries;
  responseQueue: HistogramSeries;
  send: HistogramSeries;
}

const SESSION_STATES: readonly ZkSessionStateName[] = ['CONNECTING', 'CONNECTED', 'DISCONNECTED', 'EXPIRED', 'CLOSED'];

export class BrokerMetrics implements TopicMetricsSink, ResponseObserver, ControllerMetricsListener {
  readonly registry = new Registry();
  readonly sources: MetricsSources;

  private readonly requests: FastCounter;
  private readonly errors: FastCounter;
  private readonly totalTime: FastHistogram;
  private readonly queueTime: FastHistogram;
  private readonly localTime: FastHistogram;
  private readonly remoteTime: FastHistogram;
  private readonly throttleTime: FastHistogram;
  private readonly responseQueueTime: FastHistogram;
  private readonly sendTime: FastHistogram;
  private readonly bytesIn: FastCounter;
  private readonly bytesOut: FastCounter;
  private readonly messagesIn: FastCounter;
  private readonly replicationBytesOut: Counter;
  private readonly isrShrinks: Counter;
  private readonly isrExpands: Counter;
  private readonly uncleanElections: Counter;
  private readonly eventTime: Histogram<'event'>;
  private readonly zkLatency: Histogram;
  private readonly requestSeries = new Map<number, RequestSeries>();
  private readonly errorSeries = new Map<number, CounterSeries>();
  /** Reused by onResponse for each response's error counts (emptied after each). */
  private readonly countsScratch = new Map<number, number>();
  private readonly topicSeries = new Map<string, { bytesIn: CounterSeries; messagesIn: CounterSeries; bytesOut: CounterSeries }>();

  constructor(sources: MetricsSources) {
    this.sources = sources;
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    const src = () => this.sources;

    // ---- kafka.network:type=RequestMetrics ----
    // the request path's metrics are bound per API once (FastCounter / FastHistogram)
    const reg = this.registry;
    this.requests = new FastCounter(
      'kafka_network_requestmetrics_requests_total',
      'Requests handled, per API (kafka.network:type=RequestMetrics,name=RequestsPerSec,request=*).',
      ['request'],
      reg,
    );
    this.errors = new FastCounter(
      'kafka_network_requestmetrics_errors_total',
      'Error codes in responses, per API and error, NONE included (kafka.network:type=RequestMetrics,name=ErrorsPerSec,request=*,error=*).',
      ['request', 'error'],
      reg,
    );
    const timer = (name: string, mbean: string, what: string) =>
      new FastHistogram(
        `kafka_network_requestmetrics_${name}`,
        `${what}, in ms (kafka.network:type=RequestMetrics,name=${mbean},request=*).`,
        'request',
        REQUEST_MS_BUCKETS,
        reg,
      );
    this.totalTime = timer('totaltimems', 'TotalTimeMs', "Time from the request's last byte received to its response written");
    this.queueTime = timer(
      'requestqueuetimems',
      'RequestQueueTimeMs',
      'Time a complete request waited before its handler took it (behind earlier requests of its connection)',
    );
    this.localTime = timer('localtimems', 'LocalTimeMs', 'Time in the handler, purgatory waits excluded');
    this.remoteTime = timer('remotetimems', 'RemoteTimeMs', 'Time waiting in a purgatory (acks=all produce, fetch max.wait, group join/sync)');
    this.throttleTime = timer('throttletimems', 'ThrottleTimeMs', 'Time throttled (no quotas yet: always 0)');
    this.responseQueueTime = timer('responsequeuetimems', 'ResponseQueueTimeMs', "Time between the handler's answer and its write to the socket");
    this.sendTime = timer('responsesendtimems', 'ResponseSendTimeMs', 'Time to hand the response to the kernel');

    // ---- kafka.server:type=BrokerTopicMetrics ----
    this.bytesIn = new FastCounter(
      'kafka_server_brokertopicmetrics_bytesin_total',
      'Bytes appended by Produce requests, per topic (kafka.server:type=BrokerTopicMetrics,name=BytesInPerSec,topic=*).',
      ['topic'],
      reg,
    );
    this.bytesOut = new FastCounter(
      'kafka_server_brokertopicmetrics_bytesout_total',
      'Record bytes sent to consumers, per topic (kafka.server:type=BrokerTopicMetrics,name=BytesOutPerSec,topic=*).',
      ['topic'],
      reg,
    );
    this.messagesIn = new FastCounter(
      'kafka_server_brokertopicmetrics_messagesin_total',
      'Records appended by Produce requests, per topic, from batch headers (kafka.server:type=BrokerTopicMetrics,name=MessagesInPerSec,topic=*).',
      ['topic'],
      reg,
    );
    this.replicationBytesOut = new Counter({
      name: 'kafka_server_brokertopicmetrics_replicationbytesout_total',
      help: 'Record bytes sent to follower replicas (kafka.server:type=BrokerTopicMetrics,name=ReplicationBytesOutPerSec).',
      registers,
    });

    // ---- kafka.server:type=ReplicaManager ----
    const stats = () => {
      const rm = src().replicaManager;
      if (!rm) return replicaStats([]);
      const views = [...rm.partitions.values()].map((p) => ({
        isLeader: p.isLeader,
        isr: p.isr,
        replicas: p.replicas,
        minIsr: rm.cachedSettings(p.topic)?.minInsyncReplicas ?? src().defaultMinIsr,
      }));
      return replicaStats(views);
    };
    const rmGauge = (name: string, mbean: string, what: string, pick: (s: ReturnType<typeof replicaStats>) => number) =>
      new Gauge({
        name: `kafka_server_replicamanager_${name}`,
        help: `${what} (kafka.server:type=ReplicaManager,name=${mbean}).`,
        registers,
        collect() {
          this.set(pick(stats()));
        },
      });
    rmGauge(
      'underreplicatedpartitions',
      'UnderReplicatedPartitions',
      'Partitions led here whose ISR is smaller than their replica set',
      (s) => s.underReplicated,
    );
    rmGauge(
      'underminisrpartitioncount',
      'UnderMinIsrPartitionCount',
      'Partitions led here whose ISR is smaller than min.insync.replicas',
      (s) => s.underMinIsr,
    );
    rmGauge('atminisrpartitioncount', 'AtMinIsrPartitionCount', 'Partitions led here whose ISR size equals min.insync.replicas', (s) => s.atMinIsr);
    rmGauge('leadercount', 'LeaderCount', 'Partitions this broker leads', (s) => s.leaderCount);
    rmGauge('partitioncount', 'PartitionCount', 'Partitions hosted on this broker (leader or follower)', (s) => s.partitionCount);
    this.isrShrinks = new Counter({
      name: 'kafka_server_replicamanager_isrshrinks_total',
      help: 'ISR shrinks written by leaders on this broker (kafka.server:type=ReplicaManager,name=IsrShrinksPerSec).',
      registers,
    });
    this.isrExpands = new Counter({
      name: 'kafka_server_replicamanager_isrexpands_total',
      help: 'ISR expands written by leaders on this broker (kafka.server:type=ReplicaManager,name=IsrExpandsPerSec).',
      registers,
    });

    // ---- kafka.log:type=Log ----
    new Gauge({
      name: 'kafka_log_log_size',
      help: "Bytes of a partition's log on this broker (kafka.log:type=Log,name=Size,topic=*,partition=*).",
      labelNames: ['topic', 'partition'],
      registers,
      collect() {
        this.reset();
        for (const p of src().replicaManager?.partitions.values() ?? []) {
          if (p.log) this.set({ topic: p.topic, partition: String(p.partition) }, p.log.size);
        }
      },
    });

    // ---- kafka.server:type=DelayedOperationPurgatory ----
    const purgatories = () => {
      const rm = src().replicaManager;
      const gc = src().groupCoordinator;
      return [
        ['Produce', rm?.producePurgatory],
        ['Fetch', rm?.fetchPurgatory],
        ['Heartbeat', gc?.heartbeatPurgatory],
        ['Rebalance', gc?.rebalancePurgatory],
      ] as const;
    };
    new Gauge({
      name: 'kafka_server_delayedoperationpurgatory_purgatorysize',
      help: 'Watch entries in a purgatory, completed ones not yet purged included (kafka.server:type=DelayedOperationPurgatory,name=PurgatorySize,delayedOperation=*).',
      labelNames: ['delayedoperation'],
      registers,
      collect() {
        for (const [name, p] of purgatories()) this.set({ delayedoperation: name }, p?.watched ?? 0);
      },
    });
    new Gauge({
      name: 'kafka_server_delayedoperationpurgatory_numdelayedoperations',
      help: 'Operations waiting in a purgatory (kafka.server:type=DelayedOperationPurgatory,name=NumDelayedOperations,delayedOperation=*).',
      labelNames: ['delayedoperation'],
      registers,
      collect() {
        for (const [name, p] of purgatories()) this.set({ delayedoperation: name }, p?.delayed ?? 0);
      },
    });

    // ---- kafka.server:type=FetchSessionCache (KIP-227) ----
    new Gauge({
      name: 'kafka_server_fetchsessioncache_numincrementalfetchsessions',
      help: 'Incremental fetch sessions cached (kafka.server:type=FetchSessionCache,name=NumIncrementalFetchSessions).',
      registers,
      collect() {
        this.set(src().fetchSessions?.size ?? 0);
      },
    });
    new Gauge({
      name: 'kafka_server_fetchsessioncache_numincrementalfetchpartitionscached',
      help: 'Partitions over all incremental fetch sessions (kafka.server:type=FetchSessionCache,name=NumIncrementalFetchPartitionsCached).',
      registers,
      collect() {
        this.set(src().fetchSessions?.totalPartitions ?? 0);
      },
    });
    new Counter({
      name: 'kafka_server_fetchsessioncache_incrementalfetchsessionevictions_total',
      help: 'Incremental fetch sessions evicted (kafka.server:type=FetchSessionCache,name=IncrementalFetchSessionEvictionsPerSec).',
      registers,
      collect() {
        this.reset();
        this.inc(src().fetchSessions?.evictions ?? 0);
      },
    });

    // ---- kafka.controller ----
    new Gauge({
      name: 'kafka_controller_kafkacontroller_activecontrollercount',
      help: '1 on the active controller, else 0; sums to 1 over a healthy cluster (kafka.controller:type=KafkaController,name=ActiveControllerCount).',
      registers,
      collect() {
        this.set(src().controller?.isActive ? 1 : 0);
      },
    });
    new Gauge({
      name: 'kafka_controller_kafkacontroller_offlinepartitionscount',
      help: 'Partitions without a live leader, reported by the active controller, 0 elsewhere (kafka.controller:type=KafkaController,name=OfflinePartitionsCount).',
      registers,
      collect() {
        this.set(src().controller?.offlinePartitionCount() ?? 0);
      },
    });
    new Gauge({
      name: 'kafka_controller_kafkacontroller_globalpartitioncount',
      help: 'Partitions in the cluster, reported by the active controller, 0 elsewhere (kafka.controller:type=KafkaController,name=GlobalPartitionCount).',
      registers,
      collect() {
        this.set(src().controller?.globalPartitionCount() ?? 0);
      },
    });
    new Gauge({
      name: 'kafka_controller_kafkacontroller_hotstandbypartitions',
      help: "Partition states this broker's hot-standby controller context holds, by state: clean (watched, equal to ZooKeeper) or dirty (to be re-checked); 0 on the active controller. Samsa addition (controller.hot.standby.enable).",
      labelNames: ['state'],
      registers,
      collect() {
        const st = src().controller?.standby?.stats();
        this.set({ state: 'clean' }, st?.clean ?? 0);
        this.set({ state: 'dirty' }, st?.dirty ?? 0);
      },
    });
    new Gauge({
      name: 'kafka_controller_kafkacontroller_controllerepoch',
      help: "Controller epoch this broker's controller last saw (/controller_epoch); Samsa addition, Kafka keeps it in ZooKeeper only.",
      registers,
      collect() {
        this.set(src().controller?.epoch ?? 0);
      },
    });
    new Gauge({
      name: 'kafka_controller_controllereventmanager_eventqueuesize',
      help: 'Events waiting in the controller event queue (kafka.controller:type=ControllerEventManager,name=EventQueueSize).',
      registers,
      collect() {
        this.set(src().controller?.eventQueueSize ?? 0);
      },
    });
    this.eventTime = new Histogram({
      name: 'kafka_controller_controllerstats_eventtimems',
      help: 'Time to process a controller event, per event type, in ms (kafka.controller:type=ControllerStats,name=<Event>RateAndTimeMs).',
      labelNames: ['event'],
      buckets: EVENT_MS_BUCKETS,
      registers,
    });
    this.uncleanElections = new Counter({
      name: 'kafka_controller_controllerstats_uncleanleaderelections_total',
      help: 'Unclean leader elections (kafka.controller:type=ControllerStats,name=UncleanLeaderElectionsPerSec).',
      registers,
    });

    // ---- ZooKeeper ----
    new Gauge({
      name: 'kafka_server_sessionexpirelistener_sessionstate',
      help: 'ZooKeeper session state: 1 for the current state (kafka.server:type=SessionExpireListener,name=SessionState).',
      labelNames: ['state'],
      registers,
      collect() {
        const cur = src().zk?.sessionState ?? 'CONNECTING';
        for (const s of SESSION_STATES) this.set({ state: s }, s === cur ? 1 : 0);
      },
    });
    this.zkLatency = new Histogram({
      name: 'kafka_server_zookeeperclientmetrics_zookeeperrequestlatencyms',
      help: 'ZooKeeper request round trip, in ms (kafka.server:type=ZooKeeperClientMetrics,name=ZooKeeperRequestLatencyMs).',
      buckets: ZK_MS_BUCKETS,
      registers,
    });

    // ---- kafka.coordinator.group ----
    new Gauge({
      name: 'kafka_coordinator_group_groupmetadatamanager_numgroups',
      help: 'Groups this coordinator owns, per state (kafka.coordinator.group:type=GroupMetadataManager,name=NumGroups<State>).',
      labelNames: ['state'],
      registers,
      collect() {
        const counts = new Map<string, number>(Object.values(GroupState).map((s) => [s, 0]));
        for (const g of src().groupCoordinator?.groupManager.currentGroups() ?? []) counts.set(g.currentState, (counts.get(g.currentState) ?? 0) + 1);
        for (const [state, n] of counts) this.set({ state }, n);
      },
    });
    new Gauge({
      name: 'kafka_coordinator_group_consumerlag',
      help: "High watermark minus the group's committed offset, for partitions this broker leads (Samsa addition; the LAG column of kafka-consumer-groups --describe).",
      labelNames: ['group', 'topic', 'partition'],
      registers,
      collect() {
        this.reset();
        const gc = src().groupCoordinator;
        const rm = src().replicaManager;
        if (!gc || !rm) return;
        const groups = gc.groupManager.currentGroups().map((g) => ({
          groupId: g.groupId,
          offsets: g.allOffsets().map(([tp, o]) => ({ topic: tp.topic, partition: tp.partition, offset: o.committedOffset })),
        }));
        const end = (topic: string, partition: number) => {
          const p = rm.getPartition(topic, partition);
          return p?.isLeader && p.log ? p.highWatermark : undefined;
        };
        for (const s of consumerLag(groups, end)) this.set({ group: s.group, topic: s.topic, partition: String(s.partition) }, s.lag);
      },
    });
  }

  // ---- hooks called by the broker ----

  private seriesFor(apiKey: number): RequestSeries {
    let s = this.requestSeries.get(apiKey);
    if (!s) {
      const request = apiName(apiKey);
      s = {
        requests: this.requests.child(request),
        total: this.totalTime.child(request),
        queue: this.queueTime.child(request),
        local: this.localTime.child(request),
        remote: this.remoteTime.child(request),
        throttle: this.throttleTime.child(request),
        responseQueue: this.responseQueueTime.child(request),
        send: this.sendTime.child(request),
      };
      this.requestSeries.set(apiKey, s);
    }
    return s;
  }

  private topic(topic: string) {
    let s = this.topicSeries.get(topic);
    if (!s) {
      s = { bytesIn: this.bytesIn.child(topic), messagesIn: this.messagesIn.child(topic), bytesOut: this.bytesOut.child(topic) };
      this.topicSeries.set(topic, s);
    }
    return s;
  }

  /** The socket server's completion callback: one request's timings. */
  readonly requestCompleted = (t: RequestTiming, sentAt: number): void => {
    if (t.apiKey < 0) return;
    const s = this.seriesFor(t.apiKey);
    s.requests.inc();
    s.total.observe(sentAt - t.receivedAt);
    s.queue.observe(t.startedAt - t.receivedAt);
    s.local.observe(Math.max(0, t.handledAt - t.startedAt - t.remoteMs));
    s.remote.observe(t.remoteMs);
    s.throttle.observe(t.throttleMs);
    s.responseQueue.observe(t.sendStartedAt - t.handledAt);
    s.send.observe(sentAt - t.sendStartedAt);
  };

  onResponse(apiKey: number, body: unknown): void {
    if (body === null) return;
    const counts = countResponseErrors(apiKey, body, this.countsScratch);
    try {
      for (const [code, n] of counts) {
        // apiKey < 2^16, code < 2^16 (int16): one number keys the pair
        const k = apiKey * 65_536 + (code & 0xffff);
        let c = this.errorSeries.get(k);
        if (!c) {
          c = this.errors.child(apiName(apiKey), errorName(code));
          this.errorSeries.set(k, c);
        }
        c.inc(n);
      }
    } finally {
      counts.clear();
    }
  }

  produced(topic: string, bytes: number, records: number): void {
    const s = this.topic(topic);
    s.bytesIn.inc(bytes);
    s.messagesIn.inc(records);
  }

  fetched(topic: string, bytes: number, follower: boolean): void {
    if (follower) this.replicationBytesOut.inc(bytes);
    else this.topic(topic).bytesOut.inc(bytes);
  }

  readonly isrChanged = (why: 'expand' | 'shrink'): void => {
    (why === 'expand' ? this.isrExpands : this.isrShrinks).inc();
  };

  eventProcessed(type: ControllerEventType, ms: number): void {
    this.eventTime.observe({ event: type }, ms);
  }

  uncleanLeaderElection(_tp: TopicPartition): void {
    this.uncleanElections.inc();
  }

  readonly zkRequestLatency = (ms: number): void => {
    this.zkLatency.observe(ms);
  };

  /** The exposition text and its content type. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
