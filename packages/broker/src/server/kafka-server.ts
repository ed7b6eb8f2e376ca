import type { ConnectionOptions } from 'node:tls';
import type { Logger } from 'pino';
import { ControllerChannelManager, KafkaController } from '@samsa/controller';
import { ControlMessageType, ErrorCode, KafkaError, type Broker as ProtoBroker } from '@samsa/protocol';
import { ConfigEntityTypeZNode, ConfigType, KafkaZk, ZkClient, ZkCode, ZkSessionEvent, isZkError, resolveZkSecurity, type BrokerInfo } from '@samsa/zk-paths';
import { TopicAdmin } from '../admin/topic-admin.js';
import type { BrokerConfig } from '../config/broker-config.js';
import { ControlPlaneServer, type ControlRequestHandler } from '../control/control-server.js';
import type { GroupCoordinator } from '@samsa/group-coordinator';
import { startCoordinators, type Coordinators } from './coordinators.js';
import { ProducerIdManager } from '../producer-state/producer-id-manager.js';
import { sendControlRequest } from '../control/control-client.js';
import { brokerTls } from '../security/broker-tls.js';
import { usesTls } from '../security/ssl-factory.js';
import { ConfigChangeNotificationHandler, DEFAULT_BROKER_ENTITY } from '../config/config-change-notification.js';
import { dynamicConfigHandlers } from './dynamic-config.js';
import { DynamicBrokerConfig } from '../config/dynamic-broker-config.js';
import { ClientQuotas } from '../quota/throttle.js';
import { startAuthorizer, type AclAuthorizer } from '../security/acl-authorizer.js';
import { LogManager } from '@samsa/storage';
import { BrokerMetrics } from '../metrics/broker-metrics.js';
import { MetricsHttpServer } from '../metrics/http-server.js';
import type { StateChangeRing } from '../metrics/state-change-ring.js';
import { MetadataCache } from '../metadata/metadata-cache.js';
import { SocketServer } from '../network/socket-server.js';
import { saslInterceptorFor } from '../network/sasl-authenticator.js';
import { ScramCredentialCache } from '../security/scram-credential-cache.js';
import { validateSaslConfig } from '../security/sasl-config.js';
import { interBrokerConnectHook } from '../replica/inter-broker-sasl.js';
import { ReplicaManager } from '../replica/replica-manager.js';
import { brokerRequestHandler } from './api-handlers.js';
import type { BrokerServices } from '../handlers/services.js';
import { TXN_MARKER_REFUSAL_ENV, TxnMarkerRefusal } from '../handlers/txn-marker-refusal.js';
import { topicSettingsFrom } from '../config/topic-settings.js';
import { latencyTrace, latencyTraceIntervalMs } from '../trace/latency-trace.js';
import { FetchManager } from '../fetch-session/fetch-manager.js';
import { FetchSessionCache } from '../fetch-session/fetch-session-cache.js';

export interface KafkaServerOptions {
  config: BrokerConfig;
  logger: Logger;
  /** Kafka's state-change.log: controller decisions and what brokers apply. Defaults to a child of `logger`. */
  stateChangeLogger?: Logger;
  /** The state-change records kept for GET /state-change on the metrics endpoint (broker-logging fills it). */
  stateChangeRing?: StateChangeRing;
}

const PRODUCE_API_KEY = 0;

const toMetadataBroker = (b: ProtoBroker) => ({ id: b.brokerId, endpoints: b.endpoints, rack: b.rack ?? null });

/**
 * One Samsa broker (Kafka's KafkaServer, ZooKeeper mode): ZooKeeper session, cluster id and broker
 * id, log manager (with recovery), the data-plane listeners and the CONTROLLER listener, broker
 * registration (re-done after a session loss) and the controller candidate.
 */
export class KafkaServer {
  private zk: ZkClient | undefined;
  private kzk: KafkaZk | undefined;
  private logs: LogManager | undefined;
  private controller: KafkaController | undefined;
  private readonly sockets: SocketServer[] = [];
  private controlServer: ControlPlaneServer | undefined;
  /** Client side towards SSL control-plane listeners (ControlledShutdown to the controller). */
  private controlPlaneTls: ConnectionOptions | undefined;
  private configChanges: ConfigChangeNotificationHandler | undefined;
  /** SCRAM credentials of every user (/config/users), for SASL listeners. */
  private readonly scramCredentials = new ScramCredentialCache();
  private authorizer: AclAuthorizer | undefined;
  readonly metadata = new MetadataCache();
  replicaManager: ReplicaManager | undefined;
  groupCoordinator: GroupCoordinator | undefined;
  private coordinators: Coordinators | undefined;
  brokerId = -1;
  brokerEpoch = -1n;
  clusterId = '';
  private readonly log: Logger;
  private readonly scl: Logger;
  private topicConfigs = new Map<string, Record<string, string>>();
  /** The static config with /config/brokers/<default> and /config/brokers/<id> over it. */
  private dynamicConfig: DynamicBrokerConfig | undefined;
  private stopping = false;
  /** Bound ports per listener name (listeners with port 0 get a random one). */
  readonly boundPorts = new Map<string, number>();
  /** The Prometheus registry; its HTTP endpoint runs when metrics.port > 0. */
  readonly metrics: BrokerMetrics;
  private metricsServer: MetricsHttpServer | undefined;
  /** Registered in /brokers/ids (false while a lost session is being re-established). */
  private registered = false;
  /** Whether an UpdateMetadata from the controller has arrived (readiness). */
  private metadataReceived = false;

  constructor(private readonly o: KafkaServerOptions) {
    this.log = o.logger;
    this.scl = o.stateChangeLogger ?? o.logger.child({ logger: 'state.change.logger' });
    this.metrics = new BrokerMetrics({ defaultMinIsr: o.config.get('min.insync.replicas') });
  }

  /** What keeps this broker from being ready (/ready); empty when ready. */
  readinessProblems(): string[] {
    const out: string[] = [];
    if (this.stopping) out.push('shutting down');
    if (this.zk?.sessionState !== 'CONNECTED') out.push(`ZooKeeper session ${this.zk?.sessionState ?? 'not started'}`);
    if (!this.registered) out.push('not registered in /brokers/ids');
    if (!this.metadataReceived) out.push('no UpdateMetadata received from the controller yet');
    return out;
  }

  /** Port of the metrics endpoint, or -1 when disabled / not started. */
  get metricsPort(): number {
    return this.metricsServer?.boundPort ?? -1;
  }

  private async startMetricsServer(): Promise<void> {
    const cfg = this.o.config;
    const port = cfg.get('metrics.port');
    if (port === null || port <= 0) return;
    const server = new MetricsHttpServer({
      host: cfg.get('metrics.host'),
      port,
      scrape: () => this.metrics.scrape(),
      readiness: () => this.readinessProblems(),
      ...(this.o.stateChangeRing ? { stateChanges: (since: number) => this.o.stateChangeRing!.since(since) } : {}),
      logger: this.log.child({ component: 'metrics-http' }),
    });
    await server.start();
    this.metricsServer = server;
  }

  /** The effective configuration: static, with dynamic broker configs applied once started. */
  get config(): BrokerConfig {
    return this.dynamicConfig?.current ?? this.o.config;
  }

  async startup(): Promise<void> {
    const cfg = this.o.config;
    for (const w of cfg.warnings) this.log.warn(w);
    validateSaslConfig(cfg);
    // key and trust stores read (and checked) before anything starts
    const tls = brokerTls(cfg);
    this.controlPlaneTls = tls.controlPlane;
    // first, so /health answers and /ready says why not while the broker starts
    await this.startMetricsServer();
    const zkSettings = cfg.zookeeper;
    // as Kafka: refuse to start when zookeeper.set.acl=true and no ZooKeeper credentials are configured
    const zkSecurity = resolveZkSecurity({ setAcl: cfg.get('zookeeper.set.acl') });
    if (zkSecurity.source) this.log.info({ ...zkSecurity.source, secureAcls: zkSecurity.secureAcls }, 'zookeeper digest authentication');
    this.zk = await ZkClient.connect({
      connectString: zkSettings.connectString,
      sessionTimeoutMs: zkSettings.sessionTimeoutMs,
      connectionTimeoutMs: zkSettings.connectionTimeoutMs,
      authInfo: zkSecurity.authInfo,
      secureAcls: zkSecurity.secureAcls,
      logger: this.log,
    });
    this.zk.requestLatencyListener = this.metrics.zkRequestLatency;
    this.metrics.sources.zk = this.zk;
    const kzk = new KafkaZk(this.zk);
    this.kzk = kzk;
    await kzk.createPersistentPaths();
    this.clusterId = await kzk.getOrCreateClusterId();
    this.brokerId = cfg.brokerId >= 0 ? cfg.brokerId : await kzk.generateBrokerId(cfg.get('reserved.broker.max.id'));
    this.log.info({ brokerId: this.brokerId, clusterId: this.clusterId }, 'starting broker');
    const unsafeAckBeforeHighWatermark = process.env['SAMSA_TEST_UNSAFE_ACK_BEFORE_HW'] === 'true';
    if (unsafeAckBeforeHighWatermark)
      this.log.warn(
        { env: 'SAMSA_TEST_UNSAFE_ACK_BEFORE_HW' },
        'TEST ONLY: acks=all is acknowledged before the high watermark advances; acknowledged writes can be lost',
      );
    const txnMarkerRefusal = TxnMarkerRefusal.parse(process.env[TXN_MARKER_REFUSAL_ENV]);
    if (txnMarkerRefusal)
      this.log.warn({ env: TXN_MARKER_REFUSAL_ENV, topics: txnMarkerRefusal.topics }, 'TEST ONLY: transaction markers for these topics are refused');

    // dynamic broker configs over the static ones (Kafka's DynamicBrokerConfig.initialize: read before logs load)
    const dyn = new DynamicBrokerConfig(cfg, this.brokerId);
    this.dynamicConfig = dyn;
    for (const entity of [DEFAULT_BROKER_ENTITY, String(this.brokerId)]) {
      const skipped = dyn.update(entity, await kzk.getEntityConfig(ConfigType.Broker, entity));
      if (skipped.length > 0) this.log.warn({ entity, skipped }, 'dynamic broker configs not applied (not updatable or invalid)');
    }
    // topic configs first: logs are loaded with their topic's settings (Kafka does the same)
    await this.loadTopicConfigs();
    const defaults = topicSettingsFrom(dyn.current);
    this.logs = await LogManager.open({
      logDirs: [...cfg.logDirs],
      brokerId: this.brokerId,
      clusterId: this.clusterId,
      defaultConfig: defaults.logConfig,
      configFor: (topic) => topicSettingsFrom(dyn.current, this.topicConfigs.get(topic) ?? {}).logConfig,
      logger: this.log.child({ component: 'log-manager' }),
      // a Kafka recovery thread blocks on each file; here loads are asynchronous, 16 in flight per "thread"
      recoveryConcurrency: cfg.get('num.recovery.threads.per.data.dir') * 16,
      cleanerLogger: this.log.child({ component: 'log-cleaner' }),
      retentionCheckIntervalMs: cfg.get('log.retention.check.interval.ms'),
      cleanerConfig: {
        enableCleaner: cfg.get('log.cleaner.enable'),
        numThreads: cfg.get('log.cleaner.threads'),
        dedupeBufferSize: cfg.get('log.cleaner.dedupe.buffer.size'),
        dedupeBufferLoadFactor: cfg.get('log.cleaner.io.buffer.load.factor'),
        ioBufferSize: cfg.get('log.cleaner.io.buffer.size'),
        maxIoBytesPerSecond: cfg.get('log.cleaner.io.max.bytes.per.second'),
        backoffMs: cfg.get('log.cleaner.backoff.ms'),
      },
      recoveryPointCheckpointIntervalMs: cfg.get('log.flush.offset.checkpoint.interval.ms'),
      logStartOffsetCheckpointIntervalMs: cfg.get('log.flush.start.offset.checkpoint.interval.ms'),
      maxOpenIndexFiles: cfg.get('log.index.open.files.max'),
    });
    this.logs.startup();

    this.replicaManager = new ReplicaManager({
      brokerId: this.brokerId,
      isBrokerAlive: (id) => this.metadata.isBrokerAlive(id),
      hasTopic: (topic) => this.metadata.hasTopic(topic),
      onProduced: (topic, bytes, records) => this.metrics.produced(topic, bytes, records),
      unsafeAckBeforeHighWatermark,
      ...(latencyTrace ? { latencyTrace } : {}),
      logs: this.logs,
      topicSettings: async (topic) => {
        const overrides = await kzk.getTopicConfig(topic);
        this.topicConfigs.set(topic, overrides);
        return topicSettingsFrom(dyn.current, overrides);
      },
      logger: this.log,
      stateChangeLogger: this.scl,
      kzk,
      replicaLagTimeMaxMs: cfg.get('replica.lag.time.max.ms'),
      interBrokerListenerName: cfg.interBrokerListenerName,
      fetcher: {
        numFetchers: cfg.get('num.replica.fetchers'),
        maxWaitMs: cfg.get('replica.fetch.wait.max.ms'),
        minBytes: cfg.get('replica.fetch.min.bytes'),
        maxBytes: cfg.get('replica.fetch.response.max.bytes'),
        partitionMaxBytes: cfg.get('replica.fetch.max.bytes'),
        backoffMs: cfg.get('replica.fetch.backoff.ms'),
        requestTimeoutMs: cfg.get('replica.socket.timeout.ms'),
        ...interBrokerConnectHook(cfg),
        ...(tls.interBroker ? { tls: tls.interBroker } : {}),
      },
      logDirs: cfg.logDirs,
      highWatermarkCheckpointIntervalMs: cfg.get('replica.high.watermark.checkpoint.interval.ms'),
      replicationQuotaWindow: { samples: cfg.get('replication.quota.window.num'), sampleMs: cfg.get('replication.quota.window.size.seconds') * 1000 },
      onIsrChange: this.metrics.isrChanged,
    });
    this.metrics.sources.replicaManager = this.replicaManager;
    await this.replicaManager.loadHighWatermarks();
    this.replicaManager.startup();
    const quotas = new ClientQuotas({ samples: cfg.get('quota.window.num'), sampleMs: cfg.get('quota.window.size.seconds') * 1000 });
    latencyTrace?.start(this.log.child({ component: 'latency-trace' }), latencyTraceIntervalMs);
    // dynamic configs: /config/topics and /config/brokers now, then every /config/changes notification
    this.configChanges = new ConfigChangeNotificationHandler(
      kzk,
      this.brokerId,
      dynamicConfigHandlers({
        brokerId: this.brokerId,
        config: dyn,
        replicaManager: this.replicaManager,
        topicConfigs: this.topicConfigs,
        quotas,
        credentials: this.scramCredentials,
        logger: this.log,
      }),
      this.log,
    );
    await this.configChanges.startup();
    this.authorizer = await startAuthorizer(cfg, kzk.zk, this.log);

    // the coordinators follow this broker's leaderships of __consumer_offsets and __transaction_state
    const producerIds = new ProducerIdManager({ brokerId: this.brokerId, zk: kzk.zk, logger: this.log.child({ component: 'producer-id-manager' }) });
    this.coordinators = await startCoordinators({
      brokerId: this.brokerId,
      config: cfg,
      kzk,
      replicaManager: this.replicaManager,
      metadata: this.metadata,
      producerIds,
      logger: this.log,
      ...(tls.interBroker ? { interBrokerTls: tls.interBroker } : {}),
    });
    const coordinator = this.coordinators.group;
    this.groupCoordinator = coordinator;
    this.metrics.sources.groupCoordinator = coordinator;

    const channel = new ControllerChannelManager({
      listenerName: cfg.controlPlaneListenerName,
      logger: this.log,
      requestTimeoutMs: cfg.get('controller.socket.timeout.ms'),
      tls: tls.controlPlane,
    });
    this.controller = new KafkaController({
      brokerId: this.brokerId,
      kzk,
      channel,
      logger: this.log,
      stateChangeLogger: this.scl,
      uncleanLeaderElectionEnable: cfg.get('unclean.leader.election.enable'),
      deleteTopicEnable: cfg.get('delete.topic.enable'),
      autoLeaderRebalanceEnable: cfg.get('auto.leader.rebalance.enable'),
      leaderImbalancePerBrokerPercentage: cfg.get('leader.imbalance.per.broker.percentage'),
      leaderImbalanceCheckIntervalMs: cfg.get('leader.imbalance.check.interval.seconds') * 1000,
      metrics: this.metrics,
      controllerSocketTimeoutMs: cfg.get('controller.socket.timeout.ms'),
      requestTimeoutMs: cfg.get('request.timeout.ms'),
      hotStandbyEnable: cfg.get('controller.hot.standby.enable'),
      hotStandbyMaxPartitions: cfg.get('controller.hot.standby.max.partitions'),
    });
    this.metrics.sources.controller = this.controller;

    const topicAdmin = new TopicAdmin(
      kzk,
      this.metadata,
      {
        numPartitions: cfg.get('num.partitions'),
        defaultReplicationFactor: cfg.get('default.replication.factor'),
        validateTopicConfig: (configs) => {
          try {
            topicSettingsFrom(dyn.current, configs);
          } catch (err) {
            throw new KafkaError('INVALID_CONFIG', (err as Error).message, { cause: err });
          }
        },
      },
      this.log,
    );
    const fetchSessionCache = new FetchSessionCache({ maxEntries: cfg.get('max.incremental.fetch.session.cache.slots') });
    this.metrics.sources.fetchSessions = fetchSessionCache;
    const services: BrokerServices = {
      brokerId: this.brokerId,
      clusterId: this.clusterId,
      get config() {
        return dyn.current;
      },
      dynamicConfig: dyn,
      quotas,
      settings: {
        autoCreateTopicsEnable: cfg.get('auto.create.topics.enable'),
        numPartitions: cfg.get('num.partitions'),
        defaultReplicationFactor: cfg.get('default.replication.factor'),
        deleteTopicEnable: cfg.get('delete.topic.enable'),
      },
      metadata: this.metadata,
      controller: this.controller,
      kzk,
      topicAdmin,
      replicaManager: this.replicaManager,
      fetchSessions: new FetchManager(fetchSessionCache, this.log.child({ component: 'fetch-session' })),
      groupCoordinator: coordinator,
      transactionCoordinator: this.coordinators.transaction,
      producerIds,
      log: this.log,
      metrics: this.metrics,
      ...(txnMarkerRefusal ? { txnMarkerRefusal } : {}),
      ...(this.authorizer ? { authorizer: this.authorizer } : {}),
    };
    const rh = brokerRequestHandler(services, this.log.child({ component: 'request-handler' }), this.metrics, quotas);

    // control plane first, so the controller can reach us as soon as we are registered
    const cp = cfg.controlPlaneListener;
    this.controlServer = new ControlPlaneServer(
      cp.host,
      cp.port,
      this.controlHandler(),
      this.log.child({ component: 'control-plane' }),
      tls.servers.get(cp.listenerName),
    );
    this.boundPorts.set(cp.listenerName, await this.controlServer.start());
    for (const l of cfg.dataPlaneListeners) {
      const listenerTls = tls.servers.get(l.listenerName);
      const server = new SocketServer({
        listener: l.listenerName,
        securityProtocol: l.securityProtocol,
        ...(listenerTls ? { tls: listenerTls } : {}),
        host: l.host,
        port: l.port,
        maxRequestSize: cfg.get('socket.request.max.bytes'),
        idleTimeoutMs: cfg.get('connections.max.idle.ms'),
        logger: this.log.child({ component: 'socket-server', listener: l.listenerName }),
        handle: (frame, conn, timing, release) => rh.handle(frame, conn, timing, release),
        onRequestComplete: this.metrics.requestCompleted,
        // a Produce may start while earlier ones wait for acks=all (appends stay in request order)
        mayOverlap: (frame) => frame.length >= 2 && frame.readInt16BE(0) === PRODUCE_API_KEY,
        interceptor: saslInterceptorFor(cfg, l.listenerName, this.scramCredentials, this.log),
      });
      this.boundPorts.set(l.listenerName, await server.start());
      this.sockets.push(server);
    }

    this.brokerEpoch = await this.registerAtStartup(kzk);
    this.registered = true;
    this.log.info({ brokerId: this.brokerId, brokerEpoch: String(this.brokerEpoch), endpoints: this.brokerInfo().endpoints }, 'registered broker');
    this.zk.on('state', (e) => {
      if (e === ZkSessionEvent.Expired) this.registered = false;
      if (e === ZkSessionEvent.NewSession && !this.stopping) void this.reregister();
    });
    this.controller.startup();
    this.log.info({ brokerId: this.brokerId, nodeVersion: process.version, nodeFlags: process.execArgv }, 'started');
  }

  /**
   * After a crash the previous process's registration lingers until its ZooKeeper session expires
   * (zookeeper.session.timeout.ms). Kafka refuses to start then; we wait for it to go, bounded by
   * twice the session timeout, and then give up with Kafka's error.
   */
  private async registerAtStartup(kzk: KafkaZk): Promise<bigint> {
    const deadline = Date.now() + 2 * this.o.config.zookeeper.sessionTimeoutMs;
    for (;;) {
      try {
        return await kzk.registerBroker(this.brokerInfo());
      } catch (err) {
        if (!isZkError(err, ZkCode.NODE_EXISTS) || Date.now() > deadline) throw err;
        this.log.warn({ brokerId: this.brokerId }, 'a previous registration of this broker id still exists; waiting for its ZooKeeper session to expire');
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  }

  private async loadTopicConfigs(): Promise<void> {
    const kzk = this.kzk!;
    const names = await kzk.zk.getChildren(ConfigEntityTypeZNode.path(ConfigType.Topic)).catch(() => [] as string[]);
    for (const t of names) this.topicConfigs.set(t, await kzk.getTopicConfig(t));
  }

  /** Registration data: advertised listeners, with port 0 replaced by the bound port. */
  brokerInfo(): BrokerInfo {
    const cfg = this.o.config;
    return {
      id: this.brokerId,
      endpoints: cfg.advertisedListeners.map((l) => ({
        listenerName: l.listenerName,
        host: l.host || '127.0.0.1',
        port: l.port === 0 ? (this.boundPorts.get(l.listenerName) ?? 0) : l.port,
        securityProtocol: cfg.securityProtocolMap[l.listenerName] ?? 'PLAINTEXT',
      })),
      rack: cfg.get('broker.rack'),
      jmxPort: -1,
      timestamp: String(Date.now()),
      features: {},
      version: 5,
    };
  }

  private async reregister(): Promise<void> {
    for (let attempt = 0; !this.stopping; attempt++) {
      try {
        this.brokerEpoch = await this.kzk!.registerBroker({ ...this.brokerInfo() });
        this.registered = true;
        this.log.info({ brokerEpoch: String(this.brokerEpoch) }, 're-registered broker after a new ZooKeeper session');
        return;
      } catch (err) {
        // the old session's ephemeral node lingers until that session expires
        this.log.warn({ err: (err as Error).message, attempt }, 'broker re-registration failed; retrying');
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  private controlHandler(): ControlRequestHandler {
    const checkEpochs = (request: string, controllerId: number, controllerEpoch: number, brokerEpoch: bigint) => {
      if (brokerEpoch >= 0n && brokerEpoch < this.brokerEpoch) {
        this.scl.warn(
          { request, controllerId, brokerEpoch: String(brokerEpoch), currentBrokerEpoch: String(this.brokerEpoch) },
          'rejecting a control request for an older broker epoch (STALE_BROKER_EPOCH)',
        );
        throw new KafkaError('STALE_BROKER_EPOCH', `request for broker epoch ${brokerEpoch}, current ${this.brokerEpoch}`);
      }
      if (controllerEpoch < this.metadata.controllerEpoch) {
        // Kafka's "Ignoring ... request from controller X since its controller epoch is old": a zombie controller, fenced
        this.scl.warn(
          { request, controllerId, controllerEpoch, latestControllerEpoch: this.metadata.controllerEpoch },
          'rejecting a control request from a controller with an old epoch (STALE_CONTROLLER_EPOCH)',
        );
        throw new KafkaError('STALE_CONTROLLER_EPOCH', `controller epoch ${controllerEpoch} is older than ${this.metadata.controllerEpoch}`);
      }
    };
    return {
      updateMetadata: async (r) => {
        checkEpochs('UpdateMetadata', r.controllerId, r.controllerEpoch, r.brokerEpoch);
        const deleted = this.metadata.update({
          controllerId: r.controllerId,
          controllerEpoch: r.controllerEpoch,
          brokers: r.liveBrokers.map(toMetadataBroker),
          partitions: r.partitionStates,
        });
        // Kafka drops the committed offsets of deleted topics
        if (deleted.length > 0) this.groupCoordinator?.handleDeletedTopics(deleted);
        this.controller?.standby?.observeUpdateMetadata(r.partitionStates);
        if (!this.metadataReceived)
          this.log.info({ controllerId: r.controllerId, controllerEpoch: r.controllerEpoch }, 'first UpdateMetadata received; broker is ready');
        this.metadataReceived = true;
        return { errorCode: ErrorCode.NONE };
      },
      leaderAndIsr: async (r) => {
        checkEpochs('LeaderAndIsr', r.controllerId, r.controllerEpoch, r.brokerEpoch);
        // Kafka's becomeLeaderOrFollower (ZooKeeper mode) applies a partition state only when its
        // leader epoch is newer than the one this broker has: a new controller re-sends every state
        // with an unchanged epoch (and the ISR/zkVersion it read at failover), which must not undo an
        // ISR change the leader has written since. Those answer STALE_CONTROLLER_EPOCH.
        const stale: typeof r.partitionStates = [];
        const fresh: typeof r.partitionStates = [];
        for (const s of r.partitionStates) {
          const p = this.replicaManager!.getPartition(s.topic, s.partition);
          (p !== undefined && p.leaderEpoch >= 0 && s.leaderEpoch <= p.leaderEpoch ? stale : fresh).push(s);
        }
        if (stale.length === 0) return this.replicaManager!.becomeLeaderOrFollower(r);
        // a new controller re-sends every partition: one line per request, each partition at debug
        for (const s of stale) {
          this.scl.debug(
            { topic: s.topic, partition: s.partition, leaderEpoch: s.leaderEpoch, controllerEpoch: r.controllerEpoch },
            'ignoring LeaderAndIsr: leader epoch not newer than the current one',
          );
        }
        this.scl.info(
          { controllerId: r.controllerId, controllerEpoch: r.controllerEpoch, ignored: stale.length, applied: fresh.length },
          'ignoring LeaderAndIsr partitions whose leader epoch is not newer than the current one',
        );
        const res = await this.replicaManager!.becomeLeaderOrFollower({ ...r, partitionStates: fresh });
        return {
          ...res,
          partitionErrors: [
            ...res.partitionErrors,
            ...stale.map((s) => ({ topic: s.topic, topicId: s.topicId, partition: s.partition, errorCode: ErrorCode.STALE_CONTROLLER_EPOCH })),
          ],
        };
      },
      stopReplica: async (r) => {
        checkEpochs('StopReplica', r.controllerId, r.controllerEpoch, r.brokerEpoch);
        return this.replicaManager!.stopReplicas(r);
      },
      controlledShutdown: async (r) => {
        const res = await this.controller!.controlledShutdown(r.brokerId, r.brokerEpoch);
        return { errorCode: res.errorCode, remainingPartitions: res.remaining };
      },
    };
  }

  /**
   * Kafka's controlled shutdown: ask the controller to move this broker's leaderships away (and
   * take it out of ISRs) while it still serves, retrying controlled.shutdown.max.retries times.
   */
  private async controlledShutdown(): Promise<void> {
    const cfg = this.o.config;
    const retries = cfg.get('controlled.shutdown.max.retries');
    const backoff = cfg.get('controlled.shutdown.retry.backoff.ms');
    const started = Date.now();
    // Stop following first: a fetch that reaches a leader after the controller took this broker out
    // of the ISR would otherwise put it straight back in.
    await this.replicaManager?.stopFetching();
    for (let attempt = 0; attempt <= retries; attempt++) {
      try {
        const controllerId = (await this.kzk?.getControllerId()) ?? -1;
        let errorCode: number;
        let remaining: Array<{ topic: string; partition: number }>;
        if (controllerId === this.brokerId) {
          const r = await this.controller!.controlledShutdown(this.brokerId, this.brokerEpoch);
          errorCode = r.errorCode;
          remaining = r.remaining;
        } else {
          const info = controllerId >= 0 ? await this.kzk!.getBroker(controllerId) : null;
          const e = info?.endpoints.find((x) => x.listenerName === cfg.controlPlaneListenerName);
          if (!e) throw new Error(`no controller endpoint (controller ${controllerId})`);
          const m = await sendControlRequest(
            e.host || '127.0.0.1',
            e.port,
            ControlMessageType.CONTROLLED_SHUTDOWN_REQUEST,
            { brokerId: this.brokerId, brokerEpoch: this.brokerEpoch },
            cfg.get('controller.socket.timeout.ms'),
            usesTls(e.securityProtocol) ? this.controlPlaneTls : undefined,
          );
          if (m.type !== ControlMessageType.CONTROLLED_SHUTDOWN_RESPONSE) throw new Error(`unexpected control answer ${m.type}`);
          errorCode = m.body.errorCode;
          remaining = m.body.remainingPartitions;
        }
        if (errorCode === 0 && remaining.length === 0) {
          this.log.info({ brokerId: this.brokerId, ms: Date.now() - started }, 'controlled shutdown succeeded');
          return;
        }
        this.log.warn({ errorCode, remaining: remaining.length, attempt }, 'controlled shutdown incomplete; retrying');
      } catch (err) {
        this.log.warn({ err: (err as Error).message, attempt }, 'controlled shutdown attempt failed');
      }
      if (attempt < retries) await new Promise((r) => setTimeout(r, backoff));
    }
    this.log.warn({ brokerId: this.brokerId }, 'controlled shutdown did not complete; shutting down anyway');
  }

  /** Orderly shutdown: stop serving, resign, flush logs (clean-shutdown marker), close the session. */
  async shutdown(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    latencyTrace?.stop();
    this.log.info({ brokerId: this.brokerId }, 'shutting down');
    this.controller?.retireStandby();
    if (this.o.config.get('controlled.shutdown.enable') && this.controller) await this.controlledShutdown();
    for (const s of this.sockets) await s.stop();
    await this.controlServer?.stop();
    await this.controller?.shutdown();
    this.configChanges?.shutdown();
    this.authorizer?.shutdown();
    await this.coordinators?.shutdown();
    await this.replicaManager?.shutdown();
    await this.logs?.shutdown();
    await this.zk?.close();
    await this.metricsServer?.stop();
    this.log.info({ brokerId: this.brokerId }, 'shut down');
  }
}
