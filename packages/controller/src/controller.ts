import { TopicPartitionMap, type TopicPartition } from '@samsa/protocol';
import type { Logger } from 'pino';
import {
  BrokerIdsZNode,
  ControllerMovedError,
  DeleteTopicsZNode,
  IsrChangeNotificationZNode,
  PreferredReplicaElectionZNode,
  ReassignPartitionsZNode,
  ControllerZNode,
  TopicZNode,
  TopicsZNode,
  ZkSessionEvent,
  newTopicId,
  type BrokerInfo,
  type KafkaZk,
  type TopicAssignment,
  type Unwatch,
} from '@samsa/zk-paths';
import { ControllerContext } from './context.js';
import { ControllerEventManager, type ControllerEvent } from './events.js';
import { PartitionStateMachine } from './partition-state-machine.js';
import { ReplicaStateMachine } from './replica-state-machine.js';
import { RequestBatch } from './request-batch.js';
import type { BrokerChannel } from './requests.js';
import { TopicDeletionManager } from './topic-deletion.js';
import { PartitionReassignmentManager } from './reassignment.js';
import * as calls from './controller-calls.js';
import { LeaderElections } from './leader-elections.js';
import { forEachBounded } from '@samsa/server-common';
import { HotStandby, type WarmView } from './hot-standby.js';
import { loadPartitionStates } from './failover-load.js';
import { processIsrChangeNotifications } from './isr-change-notifications.js';

/** Topic reads the controller keeps in flight at once (failover load, new topics). */
const ZK_READS_IN_FLIGHT = 64;

export interface ControllerOptions {
  brokerId: number;
  kzk: KafkaZk;
  channel: BrokerChannel;
  logger: Logger;
  /** Kafka's state-change logger: every controller decision, routed separately if wanted. */
  stateChangeLogger: Logger;
  /** Broker default of unclean.leader.election.enable (topic configs override it). */
  uncleanLeaderElectionEnable: boolean;
  /** delete.topic.enable. Default true. */
  deleteTopicEnable?: boolean;
  /** auto.leader.rebalance.enable (default true), leader.imbalance.per.broker.percentage (10), leader.imbalance.check.interval.seconds (300). */
  autoLeaderRebalanceEnable?: boolean;
  leaderImbalancePerBrokerPercentage?: number;
  leaderImbalanceCheckIntervalMs?: number;
  /** Metric hooks (the broker's Prometheus registry); gauges are read from the controller instead. */
  metrics?: ControllerMetricsListener;
  /** controller.socket.timeout.ms: the longest ControlledShutdown / ElectLeaders answers wait for brokers to ack the new metadata. Default 30 000. */
  controllerSocketTimeoutMs?: number;
  /** request.timeout.ms: how long callers of an API without a timeout of its own wait (default 30000). */
  requestTimeoutMs?: number;
  /** controller.hot.standby.enable (default true) and controller.hot.standby.max.partitions (default 12000): hot-standby.ts. */
  hotStandbyEnable?: boolean;
  hotStandbyMaxPartitions?: number;
}

/** What the controller reports as it happens; everything else is read at scrape time. */
export interface ControllerMetricsListener {
  eventProcessed(type: ControllerEvent['type'], ms: number): void;
  uncleanLeaderElection(tp: TopicPartition): void;
}

/**
 * The controller (Kafka's KafkaController, ZooKeeper mode). Every broker runs one; the one that
 * creates /controller is active. ZooKeeper watches only enqueue events; one loop processes them.
 */
export class KafkaController {
  readonly ctx = new ControllerContext();
  activeControllerId = -1;
  /** How the last failover of this broker loaded its context (warm = from the hot standby, read = from ZooKeeper). */
  lastFailoverLoad: Record<string, number> | undefined;
  private readonly events: ControllerEventManager;
  private readonly log: Logger;
  private readonly batch: RequestBatch;
  private readonly psm: PartitionStateMachine;
  private readonly rsm: ReplicaStateMachine;
  private readonly deletion: TopicDeletionManager;
  private readonly reassignment: PartitionReassignmentManager;
  private readonly elections: LeaderElections;
  private readonly controllerWatches: Unwatch[] = [];
  private readonly partitionWatches = new Map<string, Unwatch>();
  private controllerNodeWatch: Unwatch | undefined;
  private rebalanceTimer: NodeJS.Timeout | undefined;
  private readonly caller: calls.ControllerCaller;
  /** This broker's hot-standby controller context (undefined when disabled); the broker feeds it its UpdateMetadata. */
  readonly standby: HotStandby | undefined;
  /** retireStandby() ran: the standby is not started again. */
  private standbyRetired = false;
  private readonly onZkState = (e: ZkSessionEvent) => {
    // Kafka's beforeInitializingSession: queued events are dropped (callers answered NOT_CONTROLLER)
    if (e === ZkSessionEvent.Expired) this.events.clearAndPut({ type: 'Expire' });
    else if (e === ZkSessionEvent.NewSession) this.events.put({ type: 'RegisterBrokerAndReelect' });
  };

  constructor(private readonly o: ControllerOptions) {
    this.log = o.logger.child({ component: 'controller', brokerId: o.brokerId });
    this.batch = new RequestBatch(this.ctx, o.brokerId, o.channel, o.stateChangeLogger, o.controllerSocketTimeoutMs);
    const deps = { ctx: this.ctx, kzk: o.kzk, batch: this.batch, stateChangeLog: o.stateChangeLogger };
    this.psm = new PartitionStateMachine({
      ...deps,
      uncleanLeaderElectionEnabled: (t) => this.uncleanEnabled(t),
      ...(o.metrics ? { onUncleanElection: (tp: TopicPartition) => o.metrics!.uncleanLeaderElection(tp) } : {}),
    });
    this.rsm = new ReplicaStateMachine(deps);
    this.deletion = new TopicDeletionManager({
      ...deps,
      psm: this.psm,
      rsm: this.rsm,
      log: this.log,
      deleteTopicEnable: o.deleteTopicEnable ?? true,
      onStopReplicaResponse: (brokerId, partitionErrors) => this.events.put({ type: 'TopicDeletionStopReplicaResponseReceived', brokerId, partitionErrors }),
    });
    this.reassignment = new PartitionReassignmentManager({
      ...deps,
      psm: this.psm,
      rsm: this.rsm,
      log: this.log,
      onIsrChange: (tp) => this.events.put({ type: 'PartitionReassignmentIsrChange', tp }),
      onReassignmentDone: () => this.deletion.resumeDeletions(),
    });
    this.elections = new LeaderElections({
      ctx: this.ctx,
      psm: this.psm,
      rsm: this.rsm,
      batch: this.batch,
      kzk: o.kzk,
      log: this.log,
      stateChangeLogger: o.stateChangeLogger,
      leaderImbalancePerBrokerPercentage: o.leaderImbalancePerBrokerPercentage ?? 10,
      isActive: () => this.isActive,
    });
    this.events = new ControllerEventManager(
      (e) => this.processOrResign(e),
      (e, err) => this.log.error({ err, event: e.type }, 'controller event failed'),
      o.metrics ? (type, ms) => o.metrics!.eventProcessed(type, ms) : undefined,
      calls.callErrorCode,
    );
    this.caller = { put: (e) => this.events.put(e), fallbackTimeoutMs: o.requestTimeoutMs ?? calls.DEFAULT_CONTROLLER_CALL_TIMEOUT_MS };
    if (o.hotStandbyEnable ?? true) this.standby = new HotStandby({ kzk: o.kzk, log: this.log, maxPartitions: o.hotStandbyMaxPartitions ?? 12_000 });
  }

  get isActive(): boolean {
    return this.activeControllerId === this.o.brokerId;
  }

  get epoch(): number {
    return this.ctx.epoch;
  }

  /** Events waiting in the queue (Kafka's EventQueueSize). */
  get eventQueueSize(): number {
    return this.events.size;
  }

  /** Partitions without a live leader, as this controller sees them (0 unless active). */
  offlinePartitionCount(): number {
    return this.isActive ? this.ctx.partitionsInStates('OfflinePartition').length : 0;
  }

  /** All partitions the active controller knows (Kafka's GlobalPartitionCount; 0 unless active). */
  globalPartitionCount(): number {
    return this.isActive ? this.ctx.allPartitions().length : 0;
  }

  /** Starts the event loop, watches /controller and tries to become the controller. */
  startup(): void {
    this.events.start();
    this.o.kzk.zk.on('state', this.onZkState);
    this.controllerNodeWatch = this.o.kzk.zk.watchData(ControllerZNode.path, (node) =>
      this.events.put(node ? { type: 'ControllerChange' } : { type: 'Reelect' }),
    );
    this.events.put({ type: 'Startup' });
  }

  /**
   * The broker is shutting down: it will not take over as controller, so its hot standby stops for
   * good (ZooKeeper's watch events for every state a controlled shutdown writes cost it nothing more).
   * If it still wins an election meanwhile, the failover reads everything from ZooKeeper.
   */
  retireStandby(): void {
    this.standbyRetired = true;
    this.standby?.stop();
  }

  async shutdown(): Promise<void> {
    this.o.kzk.zk.off('state', this.onZkState);
    this.controllerNodeWatch?.();
    this.standby?.stop();
    await this.events.close();
    if (this.isActive) {
      this.onControllerResignation();
      await this.o.kzk.deleteControllerIfOwned().catch(() => undefined);
    }
    this.activeControllerId = -1;
    await this.o.channel.close();
  }

  /** Test and admin hook: run an event through the queue and wait for it. */
  enqueue(e: ControllerEvent): void {
    this.events.put(e);
  }

  /** Kafka's process: an event that finds the controller moved (a fenced ZooKeeper write) resigns, and its caller gets NOT_CONTROLLER. */
  private async processOrResign(e: ControllerEvent): Promise<void> {
    try {
      await this.process(e);
    } catch (err) {
      if (err instanceof ControllerMovedError) {
        this.log.info({ event: e.type, err: err.message }, 'controller moved while processing an event; resigning');
        await this.maybeResign();
      }
      throw err;
    }
  }

  private async process(e: ControllerEvent): Promise<void> {
    switch (e.type) {
      case 'Startup':
      case 'Reelect':
        await this.maybeResign();
        await this.elect();
        return;
      case 'ControllerChange':
        await this.maybeResign();
        return;
      case 'Expire':
        if (this.isActive) this.onControllerResignation();
        this.activeControllerId = -1;
        return;
      case 'RegisterBrokerAndReelect':
        await this.maybeResign();
        await this.elect();
        return;
      case 'BrokerChange':
        if (this.isActive) await this.processBrokerChange();
        return;
      case 'TopicChange':
        if (this.isActive) await this.processTopicChange();
        return;
      case 'PartitionModifications':
        if (this.isActive) await this.processPartitionModifications(e.topic);
        return;
      case 'TopicDeletion':
        if (this.isActive) await this.deletion.onDeleteTopicsChange(await this.o.kzk.zk.getChildren(DeleteTopicsZNode.path).catch(() => []));
        return;
      case 'TopicDeletionStopReplicaResponseReceived':
        if (this.isActive) await this.deletion.onStopReplicaResponse(e.brokerId, e.partitionErrors);
        return;
      case 'IsrChangeNotification':
        if (this.isActive) {
          await processIsrChangeNotifications({ ctx: this.ctx, kzk: this.o.kzk, batch: this.batch, log: this.log, stateChangeLog: this.o.stateChangeLogger });
        }
        return;
      case 'PreferredReplicaLeaderElection':
        if (this.isActive) await this.elections.onPreferredReplicaElectionZNode();
        return;
      case 'AutoPreferredReplicaLeaderElection':
        if (this.isActive) await this.elections.autoRebalance();
        return;
      case 'ReplicaLeaderElection': {
        if (!this.isActive) {
          e.callback(new TopicPartitionMap(), 41);
          return;
        }
        // answered once every live broker acked the UpdateMetadata naming the new leaders
        const { results, propagated } = await this.elections.elect(e.partitions, e.electionType);
        void propagated.then(() => e.callback(results, 0));
        return;
      }
      case 'ZkPartitionReassignment':
        if (this.isActive) await this.reassignment.onZkReassignment();
        return;
      case 'PartitionReassignmentIsrChange':
        if (this.isActive) await this.reassignment.onIsrChange(e.tp);
        return;
      case 'ApiPartitionReassignment': {
        if (!this.isActive) {
          e.callback(new Map(), 41);
          return;
        }
        // another controller bumping the epoch under us throws ControllerMovedError: NOT_CONTROLLER, and step down
        e.callback(await this.reassignment.alter(e.reassignments), 0);
        return;
      }
      case 'ListPartitionReassignments':
        e.callback(this.isActive ? this.reassignment.list(e.partitions) : [], this.isActive ? 0 : 41);
        return;
      case 'ControlledShutdown': {
        // answered (the broker may go) once every live broker acked the UpdateMetadata moving its leaders away
        const r = await this.elections.controlledShutdown(e.brokerId, e.brokerEpoch);
        void r.propagated.then(() => e.callback(r.errorCode, r.remaining));
        return;
      }
      case 'ShutdownEventThread':
        return;
      default: {
        const never: never = e;
        throw new Error(`unhandled controller event ${JSON.stringify(never)}`);
      }
    }
  }

  // ---- election and failover --------------------------------------------------------------

  private async elect(): Promise<void> {
    const current = await this.o.kzk.getControllerId();
    if (current !== null) {
      this.activeControllerId = current;
      if (current !== this.o.brokerId) this.log.info({ activeControllerId: current }, 'another broker is the controller');
      if (!this.isActive && !this.standbyRetired) this.standby?.start();
      return;
    }
    try {
      const reg = await this.o.kzk.registerControllerAndIncrementEpoch(this.o.brokerId);
      this.ctx.epoch = reg.epoch;
      this.ctx.epochZkVersion = reg.epochZkVersion;
      this.activeControllerId = this.o.brokerId;
      this.log.info({ controllerEpoch: reg.epoch, epochZkVersion: reg.epochZkVersion }, 'became the controller');
      await this.onControllerFailover();
    } catch (err) {
      if (err instanceof ControllerMovedError) {
        this.log.info({ err: err.message }, 'lost the controller election');
        await this.maybeResign();
        return;
      }
      this.log.error({ err }, 'controller failover failed; resigning');
      await this.triggerControllerMove();
    }
  }

  private async maybeResign(): Promise<void> {
    const wasActive = this.isActive;
    this.activeControllerId = (await this.o.kzk.getControllerId()) ?? -1;
    if (wasActive && !this.isActive) this.onControllerResignation();
    if (!this.isActive && this.activeControllerId >= 0 && !this.standbyRetired) this.standby?.start();
  }

  private async triggerControllerMove(): Promise<void> {
    this.onControllerResignation();
    this.activeControllerId = -1;
    await this.o.kzk.deleteControllerIfOwned().catch(() => undefined);
  }

  private async onControllerFailover(): Promise<void> {
    const zk = this.o.kzk.zk;
    this.controllerWatches.push(
      zk.watchChildren(BrokerIdsZNode.path, () => this.events.put({ type: 'BrokerChange' })),
      zk.watchChildren(TopicsZNode.path, () => this.events.put({ type: 'TopicChange' })),
      zk.watchChildren(DeleteTopicsZNode.path, () => this.events.put({ type: 'TopicDeletion' })),
      zk.watchChildren(IsrChangeNotificationZNode.path, () => this.events.put({ type: 'IsrChangeNotification' })),
      zk.watchData(PreferredReplicaElectionZNode.path, (n) => {
        if (n) this.events.put({ type: 'PreferredReplicaLeaderElection' });
      }),
      zk.watchData(ReassignPartitionsZNode.path, (n) => {
        if (n) this.events.put({ type: 'ZkPartitionReassignment' });
      }),
    );
    if (this.o.autoLeaderRebalanceEnable ?? true) {
      const every = this.o.leaderImbalanceCheckIntervalMs ?? 300_000;
      this.rebalanceTimer = setInterval(() => this.events.put({ type: 'AutoPreferredReplicaLeaderElection' }), every);
      this.rebalanceTimer.unref();
    }
    const started = performance.now();
    const load = await this.initializeContext();
    this.lastFailoverLoad = load;
    const loaded = performance.now();
    // everyone learns the full metadata first, then replicas and partitions come online
    this.batch.addUpdateMetadata(this.ctx.liveBrokerIds());
    this.batch.send();
    // replicas online and leaders elected go out as ONE LeaderAndIsr per broker: an elected leader's state replaces
    // the one the replica state machine queued, so no broker applies every partition twice
    await this.rsm.startup();
    const replicasOnline = performance.now();
    await this.psm.startup();
    this.batch.send();
    const elected = performance.now();
    await this.reassignment.initialize();
    this.log.info(
      {
        controllerEpoch: this.ctx.epoch,
        brokers: this.ctx.liveBrokerIds(),
        topics: this.ctx.allTopics().length,
        partitions: this.ctx.allPartitions().length,
        ...load,
        loadMs: Math.round(loaded - started),
        replicasMs: Math.round(replicasOnline - loaded),
        electionsMs: Math.round(elected - replicasOnline),
        totalMs: Math.round(performance.now() - started),
      },
      'controller failover done',
    );
  }

  private onControllerResignation(): void {
    clearInterval(this.rebalanceTimer);
    this.rebalanceTimer = undefined;
    for (const u of this.controllerWatches.splice(0)) u();
    for (const u of this.partitionWatches.values()) u();
    this.partitionWatches.clear();
    this.reassignment.reset();
    for (const id of this.ctx.liveBrokerIds()) this.o.channel.removeBroker(id);
    this.ctx.reset();
    this.log.info('resigned as controller');
  }

  /**
   * Loads the context a new controller works from. With a hot standby (hot-standby.ts) its clean
   * entries are adopted and only the rest is read; taken after this broker's own registration
   * answered, so every watch event of an earlier write has reached the standby.
   */
  private async initializeContext(): Promise<Record<string, number>> {
    const warm = this.standby?.isRunning ? this.standby.view() : undefined;
    try {
      return await this.loadContext(warm);
    } finally {
      // kept running through the loads: entries whose watch fires meanwhile are read again
      this.standby?.stop();
    }
  }

  private async loadContext(warm: WarmView | undefined): Promise<Record<string, number>> {
    for (const b of await this.o.kzk.getAllBrokers()) this.addLiveBroker(b);
    // many topics' reads in flight at once (the ZooKeeper client pipelines them), never one round trip per topic
    const topics = await this.o.kzk.getAllTopics();
    const cold = topics.filter((t) => !warm?.topics.get(t)?.topicId);
    for (const t of topics) if (!cold.includes(t)) await this.applyTopic(t, warm!.topics.get(t)!);
    await forEachBounded(cold, ZK_READS_IN_FLIGHT, async (topic) => void (await this.loadTopic(topic)));
    const states = await loadPartitionStates(this.ctx, this.o.kzk, this.log, warm);
    return {
      warmTopics: topics.length - cold.length,
      readTopics: cold.length,
      warmStates: states.warm,
      readStates: states.read,
      sampledStates: states.sampled,
    };
  }

  private addLiveBroker(b: BrokerInfo): void {
    this.ctx.liveBrokers.set(b.id, b);
    this.o.channel.addBroker(b);
  }

  /** Reads a topic's assignment into the context (giving it a topic id if it has none). */
  private async loadTopic(topic: string): Promise<TopicPartition[]> {
    const t = await this.o.kzk.getTopicAssignment(topic);
    return t ? this.applyTopic(topic, t) : [];
  }

  private async applyTopic(topic: string, t: TopicAssignment): Promise<TopicPartition[]> {
    let topicId = t.topicId;
    if (!topicId) {
      topicId = newTopicId();
      await this.o.kzk.setTopicAssignment(topic, { ...t, topicId, version: 3 }, this.ctx.epochZkVersion);
    }
    this.ctx.addTopic(topic, topicId);
    const tps: TopicPartition[] = [];
    for (const [partition, replicas] of t.partitions) {
      const tp = { topic, partition };
      this.ctx.setAssignment(tp, {
        replicas,
        addingReplicas: t.addingReplicas.get(partition) ?? [],
        removingReplicas: t.removingReplicas.get(partition) ?? [],
      });
      tps.push(tp);
    }
    if (!this.partitionWatches.has(topic)) {
      this.partitionWatches.set(
        topic,
        this.o.kzk.zk.watchData(TopicZNode.path(topic), (n) => {
          if (n) this.events.put({ type: 'PartitionModifications', topic });
        }),
      );
    }
    return tps;
  }

  // ---- events -------------------------------------------------------------------------------

  private async processBrokerChange(): Promise<void> {
    const current = new Map((await this.o.kzk.getAllBrokers()).map((b) => [b.id, b]));
    const newIds: number[] = [];
    const deadIds: number[] = [];
    const bouncedIds: number[] = [];
    for (const [id, b] of current) {
      const known = this.ctx.liveBrokers.get(id);
      if (!known) newIds.push(id);
      else if (known.epoch !== b.epoch) bouncedIds.push(id);
    }
    for (const id of this.ctx.liveBrokerIds()) if (!current.has(id)) deadIds.push(id);
    if (newIds.length + deadIds.length + bouncedIds.length === 0) return;
    this.log.info({ newBrokers: newIds, deadBrokers: deadIds, bouncedBrokers: bouncedIds, liveBrokers: [...current.keys()] }, 'broker change');
    for (const id of [...deadIds, ...bouncedIds]) {
      this.ctx.liveBrokers.delete(id);
      this.o.channel.removeBroker(id);
    }
    if (bouncedIds.length > 0) await this.onBrokerFailure(bouncedIds);
    for (const id of [...newIds, ...bouncedIds]) this.addLiveBroker(current.get(id)!);
    if (bouncedIds.length > 0) await this.onBrokerStartup(bouncedIds);
    if (newIds.length > 0) await this.onBrokerStartup(newIds);
    if (deadIds.length > 0) await this.onBrokerFailure(deadIds);
  }

  private async onBrokerStartup(ids: number[]): Promise<void> {
    for (const id of ids) this.ctx.shuttingDownBrokerIds.delete(id);
    const existing = this.ctx.liveBrokerIds().filter((id) => !ids.includes(id));
    this.batch.addUpdateMetadata(existing, []);
    this.batch.addUpdateMetadata(ids);
    this.batch.send();
    const replicas = this.ctx.replicasOnBrokers(ids).filter((r) => !this.ctx.topicsToBeDeleted.has(r.tp.topic));
    await this.rsm.handleStateChanges(replicas, 'OnlineReplica');
    this.batch.send();
    await this.psm.triggerOnlinePartitionStateChange();
    this.batch.send();
    await this.reassignment.onBrokerStartup(ids);
    await this.deletion.resumeDeletions();
  }

  private async onBrokerFailure(ids: number[]): Promise<void> {
    for (const id of ids) this.ctx.shuttingDownBrokerIds.delete(id);
    const dead = new Set(ids);
    const offlineLeaders = this.ctx
      .allPartitions()
      .filter((tp) => dead.has(this.ctx.leadershipOf(tp)?.state.leader ?? -1) && !this.ctx.topicsToBeDeleted.has(tp.topic));
    await this.psm.handleStateChanges(offlineLeaders, 'OfflinePartition');
    await this.psm.triggerOnlinePartitionStateChange();
    const replicas = this.ctx.replicasOnBrokers(ids).filter((r) => !this.ctx.topicsToBeDeleted.has(r.tp.topic));
    await this.rsm.handleStateChanges(replicas, 'OfflineReplica');
    await this.deletion.onBrokerFailure(ids);
    // every live broker learns the broker is gone even when it hosted nothing
    this.batch.addUpdateMetadata(this.ctx.liveBrokerIds(), []);
    this.batch.send();
  }

  private async processTopicChange(): Promise<void> {
    const topics = new Set(await this.o.kzk.getAllTopics());
    const deleted = this.ctx.allTopics().filter((t) => !topics.has(t));
    for (const t of deleted) {
      this.partitionWatches.get(t)?.();
      this.partitionWatches.delete(t);
      this.reassignment.onTopicDeleted(t);
      this.ctx.removeTopic(t);
    }
    const created = [...topics].filter((t) => !this.ctx.hasTopic(t));
    if (created.length === 0) return;
    this.log.info({ newTopics: created }, 'topic change');
    const loaded: TopicPartition[][] = [];
    await forEachBounded(created, ZK_READS_IN_FLIGHT, async (t, i) => void (loaded[i] = await this.loadTopic(t)));
    await this.onNewPartitionCreation(loaded.flat());
  }

  private async processPartitionModifications(topic: string): Promise<void> {
    const t = await this.o.kzk.getTopicAssignment(topic);
    if (!t || !this.ctx.hasTopic(topic)) return;
    const added: TopicPartition[] = [];
    for (const [partition, replicas] of t.partitions) {
      const tp = { topic, partition };
      if (this.ctx.assignment(tp)) continue;
      this.ctx.setAssignment(tp, { replicas, addingReplicas: [], removingReplicas: [] });
      added.push(tp);
    }
    if (added.length === 0) return;
    this.log.info({ topic, newPartitions: added.map((p) => p.partition) }, 'partitions added');
    await this.onNewPartitionCreation(added);
  }

  private async onNewPartitionCreation(tps: TopicPartition[]): Promise<void> {
    if (tps.length === 0) return;
    const replicas = this.ctx.replicasForPartition(tps);
    await this.psm.handleStateChanges(tps, 'NewPartition');
    await this.rsm.handleStateChanges(replicas, 'NewReplica');
    await this.psm.handleStateChanges(tps, 'OnlinePartition', { kind: 'offline', allowUnclean: false });
    await this.rsm.handleStateChanges(replicas, 'OnlineReplica');
    this.batch.send();
  }

  // ---- leader elections on request -------------------------------------------------------

  /** ElectLeaders (preferred or unclean) through the event loop; per-partition outcomes. Callers are always answered: controller-calls.ts. */
  electLeaders(partitions: TopicPartition[] | null, electionType: 0 | 1, timeoutMs?: number): Promise<calls.ElectLeadersAnswer> {
    return calls.electLeadersCall(this.caller, partitions, electionType, timeoutMs);
  }

  /** AlterPartitionReassignments through the event loop (null replicas cancel); per-partition outcomes. */
  alterPartitionReassignments(reassignments: Array<{ topic: string; partition: number; replicas: number[] | null }>, timeoutMs?: number) {
    return calls.alterReassignmentsCall(this.caller, reassignments, timeoutMs);
  }

  /** ListPartitionReassignments through the event loop: ongoing reassignments (of `partitions`, or all). */
  listPartitionReassignments(partitions: TopicPartition[] | null, timeoutMs?: number): Promise<calls.ListReassignmentsAnswer> {
    return calls.listReassignmentsCall(this.caller, partitions, timeoutMs);
  }

  /** A broker asks to shut down in a controlled way: its leaderships move first. */
  controlledShutdown(brokerId: number, brokerEpoch: bigint, timeoutMs?: number): Promise<calls.ControlledShutdownAnswer> {
    return calls.controlledShutdownCall(this.caller, brokerId, brokerEpoch, timeoutMs);
  }

  private async uncleanEnabled(topic: string): Promise<boolean> {
    const cfg = await this.o.kzk.getTopicConfig(topic);
    const v = cfg['unclean.leader.election.enable'];
    return v === undefined ? this.o.uncleanLeaderElectionEnable : v === 'true';
  }
}
