import type { Logger } from 'pino';
import {
  BrokerIdsZNode,
  ControllerMovedError,
  DeleteTopicsZNode,
  IsrChangeNotificationSequenceZNode,
  IsrChangeNotificationZNode,
  ZNodeDecodeError,
  ControllerZNode,
  TopicZNode,
  TopicsZNode,
  ZkSessionEvent,
  newTopicId,
  type BrokerInfo,
  type KafkaZk,
  type TopicPartition,
  type Unwatch,
} from '@samsa/zk-paths';
import { ControllerContext } from './context.js';
import { ControllerEventManager, type ControllerEvent } from './events.js';
import { PartitionStateMachine } from './partition-state-machine.js';
import { ReplicaStateMachine } from './replica-state-machine.js';
import { RequestBatch } from './request-batch.js';
import type { BrokerChannel } from './requests.js';
import { TopicDeletionManager } from './topic-deletion.js';

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
}

/**
 * The controller (Kafka's KafkaController, ZooKeeper mode). Every broker runs one; the one that
 * creates /controller is active. ZooKeeper watches only enqueue events; one loop processes them.
 */
export class KafkaController {
  readonly ctx = new ControllerContext();
  activeControllerId = -1;
  private readonly events: ControllerEventManager;
  private readonly log: Logger;
  private readonly batch: RequestBatch;
  private readonly psm: PartitionStateMachine;
  private readonly rsm: ReplicaStateMachine;
  private readonly deletion: TopicDeletionManager;
  private readonly controllerWatches: Unwatch[] = [];
  private readonly partitionWatches = new Map<string, Unwatch>();
  private controllerNodeWatch: Unwatch | undefined;
  private readonly onZkState = (e: ZkSessionEvent) => {
    if (e === ZkSessionEvent.Expired) this.events.put({ type: 'Expire' });
    else if (e === ZkSessionEvent.NewSession) this.events.put({ type: 'RegisterBrokerAndReelect' });
  };

  constructor(private readonly o: ControllerOptions) {
    this.log = o.logger.child({ component: 'controller', brokerId: o.brokerId });
    this.batch = new RequestBatch(this.ctx, o.brokerId, o.channel, o.stateChangeLogger);
    const deps = { ctx: this.ctx, kzk: o.kzk, batch: this.batch, stateChangeLog: o.stateChangeLogger };
    this.psm = new PartitionStateMachine({ ...deps, uncleanLeaderElectionEnabled: (t) => this.uncleanEnabled(t) });
    this.rsm = new ReplicaStateMachine(deps);
    this.deletion = new TopicDeletionManager({
      ...deps,
      psm: this.psm,
      rsm: this.rsm,
      log: this.log,
      deleteTopicEnable: o.deleteTopicEnable ?? true,
      onStopReplicaResponse: (brokerId, partitionErrors) => this.events.put({ type: 'TopicDeletionStopReplicaResponseReceived', brokerId, partitionErrors }),
    });
    this.events = new ControllerEventManager(
      (e) => this.process(e),
      (e, err) => this.log.error({ err, event: e.type }, 'controller event failed'),
    );
  }

  get isActive(): boolean {
    return this.activeControllerId === this.o.brokerId;
  }

  get epoch(): number {
    return this.ctx.epoch;
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

  async shutdown(): Promise<void> {
    this.o.kzk.zk.off('state', this.onZkState);
    this.controllerNodeWatch?.();
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
        if (this.isActive) await this.processIsrChangeNotification();
        return;
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
    );
    await this.initializeContext();
    // everyone learns the full metadata first, then replicas and partitions come online
    this.batch.addUpdateMetadata(this.ctx.liveBrokerIds());
    this.batch.send();
    await this.rsm.startup();
    this.batch.send();
    await this.psm.startup();
    this.batch.send();
    this.log.info({ controllerEpoch: this.ctx.epoch, brokers: this.ctx.liveBrokerIds(), topics: this.ctx.allTopics().length }, 'controller failover done');
  }

  private onControllerResignation(): void {
    for (const u of this.controllerWatches.splice(0)) u();
    for (const u of this.partitionWatches.values()) u();
    this.partitionWatches.clear();
    for (const id of this.ctx.liveBrokerIds()) this.o.channel.removeBroker(id);
    this.ctx.reset();
    this.log.info('resigned as controller');
  }

  private async initializeContext(): Promise<void> {
    for (const b of await this.o.kzk.getAllBrokers()) this.addLiveBroker(b);
    for (const topic of await this.o.kzk.getAllTopics()) await this.loadTopic(topic);
    const states = await this.o.kzk.getPartitionStates(this.ctx.allPartitions());
    for (const tp of this.ctx.allPartitions()) {
      const s = states.get(`${tp.topic}-${tp.partition}`);
      if (s) this.ctx.setLeadership(tp, s);
    }
  }

  private addLiveBroker(b: BrokerInfo): void {
    this.ctx.liveBrokers.set(b.id, b);
    this.o.channel.addBroker(b);
  }

  /** Reads a topic's assignment into the context (giving it a topic id if it has none). */
  private async loadTopic(topic: string): Promise<TopicPartition[]> {
    const t = await this.o.kzk.getTopicAssignment(topic);
    if (!t) return [];
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
      this.ctx.removeTopic(t);
    }
    const created = [...topics].filter((t) => !this.ctx.hasTopic(t));
    if (created.length === 0) return;
    this.log.info({ newTopics: created }, 'topic change');
    const tps: TopicPartition[] = [];
    for (const t of created) tps.push(...(await this.loadTopic(t)));
    await this.onNewPartitionCreation(tps);
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

  /**
   * Leaders wrote ISR changes to partition-state znodes and announced them under
   * /isr_change_notification: re-read those states, tell every broker (UpdateMetadata), and
   * remove the processed notifications.
   */
  private async processIsrChangeNotification(): Promise<void> {
    const zk = this.o.kzk.zk;
    const children = await zk.getChildren(IsrChangeNotificationZNode.path).catch(() => [] as string[]);
    const changed = new Map<string, TopicPartition>();
    for (const c of children) {
      const path = `${IsrChangeNotificationZNode.path}/${c}`;
      const n = await zk.getOrNull(path);
      if (n) {
        try {
          for (const tp of IsrChangeNotificationSequenceZNode.decode(n.data, path)) changed.set(`${tp.topic}-${tp.partition}`, tp);
        } catch (err) {
          if (!(err instanceof ZNodeDecodeError)) throw err;
          this.log.warn({ path, err: err.message }, 'ignoring a malformed ISR change notification');
        }
      }
      await zk.delete(path).catch(() => undefined);
    }
    const tps = [...changed.values()].filter((tp) => this.ctx.assignment(tp) && !this.ctx.topicsToBeDeleted.has(tp.topic));
    if (tps.length === 0) return;
    const states = await this.o.kzk.getPartitionStates(tps);
    for (const tp of tps) {
      const st = states.get(`${tp.topic}-${tp.partition}`);
      if (st) this.ctx.setLeadership(tp, st);
    }
    this.o.stateChangeLogger.info({ partitions: tps.map((p) => `${p.topic}-${p.partition}`) }, 'ISR changes propagated');
    this.batch.addUpdateMetadata(this.ctx.liveBrokerIds(), tps);
    this.batch.send();
  }

  private async uncleanEnabled(topic: string): Promise<boolean> {
    const cfg = await this.o.kzk.getTopicConfig(topic);
    const v = cfg['unclean.leader.election.enable'];
    return v === undefined ? this.o.uncleanLeaderElectionEnable : v === 'true';
  }
}
