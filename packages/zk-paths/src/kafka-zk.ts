import { topicPartitionKey, type TopicPartition } from '@samsa/protocol';
/**
 * Kafka's higher-level ZooKeeper operations (KafkaZkClient's role), all through one ZkClient:
 * broker registration, controller election with epoch bump, topic assignments and partition state.
 * Controller writes take the controller epoch zkVersion and go through `controllerFencedMulti`.
 */
import { randomUUID } from 'node:crypto';
import { controllerFencedMulti } from './fenced.js';
import { createPartitionStates, setPartitionStates } from './partition-state-writes.js';
import { CreateMode, type ZkStat } from './zk-client.js';
import type { ZkClientApi } from './zk-api.js';
import { ControllerMovedError, ZkCode, ZkError, ZkMultiError, isZkError } from './zk-errors.js';
import {
  BrokerIdZNode,
  BrokerIdsZNode,
  BrokerSequenceIdZNode,
  ClusterIdZNode,
  ConfigEntityChangeNotificationSequenceZNode,
  ConfigEntityChangeNotificationZNode,
  ConfigEntityTypeZNode,
  ConfigEntityZNode,
  ConfigType,
  ControllerEpochZNode,
  ControllerZNode,
  PERSISTENT_PATHS,
  ReassignPartitionsZNode,
  TopicPartitionStateZNode,
  TopicPartitionsZNode,
  TopicZNode,
  TopicsZNode,
  type BrokerInfo,
  type LeaderIsrAndControllerEpoch,
  type TopicAssignment,
} from './znodes.js';

/** One entry of /admin/reassign_partitions: a partition and its target replicas. */
export type PartitionReassignmentEntry = TopicPartition & { replicas: number[] };

/** Partition state with the zkVersion it was read at (conditional updates need it). */
export interface PartitionStateWithVersion {
  state: LeaderIsrAndControllerEpoch;
  zkVersion: number;
}

export interface ControllerRegistration {
  epoch: number;
  epochZkVersion: number;
}

export class KafkaZk {
  constructor(readonly zk: ZkClientApi) {}

  /** Creates Kafka's persistent top-level paths (idempotent). */
  async createPersistentPaths(): Promise<void> {
    for (const p of PERSISTENT_PATHS) await this.zk.mkdirp(p);
  }

  // ---- cluster id -----------------------------------------------------------------------

  /** Reads /cluster/id, creating it with a fresh id if absent (first broker wins). */
  async getOrCreateClusterId(): Promise<string> {
    const existing = await this.zk.getOrNull(ClusterIdZNode.path);
    if (existing) return ClusterIdZNode.decode(existing.data);
    const id = Buffer.from(randomUUID().replace(/-/g, ''), 'hex').toString('base64url');
    try {
      await this.zk.create(ClusterIdZNode.path, ClusterIdZNode.encode(id), { mkdirp: true });
      return id;
    } catch (err) {
      if (!isZkError(err, ZkCode.NODE_EXISTS)) throw err;
      return ClusterIdZNode.decode((await this.zk.get(ClusterIdZNode.path)).data);
    }
  }

  // ---- brokers --------------------------------------------------------------------------

  /** broker.id=-1: bump /brokers/seqid and add reserved.broker.max.id to its new zkVersion. */
  async generateBrokerId(reservedBrokerMaxId: number): Promise<number> {
    await this.zk.mkdirp(BrokerSequenceIdZNode.path);
    const stat = await this.zk.set(BrokerSequenceIdZNode.path, Buffer.alloc(0));
    return stat.version + reservedBrokerMaxId;
  }

  /**
   * Registers the broker (ephemeral /brokers/ids/<id>) and returns its epoch, the znode's czxid.
   * After a session loss the old node may linger until the old session expires: if the existing
   * node belongs to our current session it is reused, otherwise NODE_EXISTS is raised.
   */
  async registerBroker(info: BrokerInfo): Promise<bigint> {
    const path = BrokerIdZNode.path(info.id);
    await this.zk.mkdirp(BrokerIdsZNode.path);
    try {
      await this.zk.create(path, BrokerIdZNode.encode(info), { mode: CreateMode.Ephemeral });
    } catch (err) {
      if (!isZkError(err, ZkCode.NODE_EXISTS)) throw err;
      const stat = await this.zk.exists(path);
      const mine = stat && this.zk.sessionId !== undefined && stat.ephemeralOwner === BigInt(`0x${this.zk.sessionId}`);
      if (!mine) throw new ZkError(ZkCode.NODE_EXISTS, path, `broker id ${info.id} is already registered (${path} exists)`, { cause: err });
    }
    const stat = await this.zk.exists(path);
    if (!stat) throw new ZkError(ZkCode.NO_NODE, path, `registration ${path} vanished`);
    return stat.czxid;
  }

  async getBrokerIds(): Promise<number[]> {
    const ids = await this.zk.getChildren(BrokerIdsZNode.path).catch((err: unknown) => {
      if (isZkError(err, ZkCode.NO_NODE)) return [] as string[];
      throw err;
    });
    return ids
      .map(Number)
      .filter(Number.isInteger)
      .sort((a, b) => a - b);
  }

  /** Registered brokers with their epochs (czxid); brokers that vanish meanwhile are skipped. */
  async getAllBrokers(): Promise<BrokerInfo[]> {
    const out: BrokerInfo[] = [];
    for (const id of await this.getBrokerIds()) {
      const b = await this.getBroker(id);
      if (b) out.push(b);
    }
    return out;
  }

  async getBroker(id: number): Promise<BrokerInfo | null> {
    const n = await this.zk.getOrNull(BrokerIdZNode.path(id));
    if (!n) return null;
    return { ...BrokerIdZNode.decode(id, n.data), epoch: n.stat.czxid };
  }

  // ---- controller -----------------------------------------------------------------------

  async getControllerId(): Promise<number | null> {
    const n = await this.zk.getOrNull(ControllerZNode.path);
    return n ? ControllerZNode.decode(n.data).brokerId : null;
  }

  async getControllerEpoch(): Promise<{ epoch: number; stat: ZkStat } | null> {
    const n = await this.zk.getOrNull(ControllerEpochZNode.path);
    return n ? { epoch: ControllerEpochZNode.decode(n.data), stat: n.stat } : null;
  }

  /**
   * Kafka's registerControllerAndIncrementControllerEpoch: atomically creates the ephemeral
   * /controller and bumps /controller_epoch (conditioned on the version just read). Throws
   * ControllerMovedError when another broker won.
   */
  async registerControllerAndIncrementEpoch(brokerId: number): Promise<ControllerRegistration> {
    let current = await this.getControllerEpoch();
    if (!current) {
      try {
        await this.zk.create(ControllerEpochZNode.path, ControllerEpochZNode.encode(0));
      } catch (err) {
        if (!isZkError(err, ZkCode.NODE_EXISTS)) throw err;
      }
      current = await this.getControllerEpoch();
      if (!current) throw new ZkError(ZkCode.NO_NODE, ControllerEpochZNode.path);
    }
    const newEpoch = current.epoch + 1;
    const controller = ControllerZNode.encode({ version: 1, brokerId, timestamp: String(Date.now()) });
    try {
      const res = await this.zk.multi([
        { type: 'create', path: ControllerZNode.path, data: controller, mode: CreateMode.Ephemeral },
        { type: 'set', path: ControllerEpochZNode.path, data: ControllerEpochZNode.encode(newEpoch), version: current.stat.version },
      ]);
      return { epoch: newEpoch, epochZkVersion: res[1]!.stat!.version };
    } catch (err) {
      if (err instanceof ZkMultiError && (err.code === ZkCode.NODE_EXISTS || err.code === ZkCode.BAD_VERSION)) {
        throw new ControllerMovedError(`broker ${brokerId} lost the controller election (${err.codeName})`, { cause: err });
      }
      throw err;
    }
  }

  /** Deletes /controller only if this session owns it (resignation). */
  async deleteControllerIfOwned(): Promise<void> {
    const stat = await this.zk.exists(ControllerZNode.path);
    if (!stat || this.zk.sessionId === undefined || stat.ephemeralOwner !== BigInt(`0x${this.zk.sessionId}`)) return;
    await this.zk.delete(ControllerZNode.path, stat.version).catch(() => undefined);
  }

  // ---- topics ---------------------------------------------------------------------------

  async getAllTopics(): Promise<string[]> {
    try {
      return await this.zk.getChildren(TopicsZNode.path);
    } catch (err) {
      if (isZkError(err, ZkCode.NO_NODE)) return [];
      throw err;
    }
  }

  /** The assignment with the znode's zkVersion (for admin writes conditioned on it). */
  async getTopicAssignmentWithVersion(topic: string): Promise<{ assignment: TopicAssignment; zkVersion: number } | null> {
    const n = await this.zk.getOrNull(TopicZNode.path(topic));
    return n ? { assignment: TopicZNode.decode(topic, n.data), zkVersion: n.stat.version } : null;
  }

  /** Admin write of a topic's assignment (partition increase), conditioned on the zkVersion read. */
  async updateTopicAssignment(topic: string, t: TopicAssignment, expectedZkVersion: number): Promise<void> {
    await this.zk.set(TopicZNode.path(topic), TopicZNode.encode(t), expectedZkVersion);
  }

  async getTopicAssignment(topic: string): Promise<TopicAssignment | null> {
    const n = await this.zk.getOrNull(TopicZNode.path(topic));
    return n ? TopicZNode.decode(topic, n.data) : null;
  }

  async topicExists(topic: string): Promise<boolean> {
    return (await this.zk.exists(TopicZNode.path(topic))) !== null;
  }

  /**
   * Admin-side topic creation (AdminZkClient.createTopicWithAssignment): the config znode first,
   * then the assignment (which the controller watches). NODE_EXISTS → the topic exists.
   */
  async createTopic(topic: string, topicId: string, assignment: Map<number, number[]>, config: Record<string, string>): Promise<void> {
    await this.zk.mkdirp(ConfigEntityTypeZNode.path(ConfigType.Topic));
    const cfgPath = ConfigEntityZNode.path(ConfigType.Topic, topic);
    try {
      await this.zk.create(cfgPath, ConfigEntityZNode.encode(config));
    } catch (err) {
      if (!isZkError(err, ZkCode.NODE_EXISTS)) throw err;
      await this.zk.set(cfgPath, ConfigEntityZNode.encode(config));
    }
    const data = TopicZNode.encode({ version: 3, topicId, partitions: assignment, addingReplicas: new Map(), removingReplicas: new Map() });
    await this.zk.create(TopicZNode.path(topic), data, { mkdirp: true });
  }

  async getTopicConfig(topic: string): Promise<Record<string, string>> {
    const path = ConfigEntityZNode.path(ConfigType.Topic, topic);
    const n = await this.zk.getOrNull(path);
    return n ? ConfigEntityZNode.decode(n.data, path) : {};
  }

  /** Controller write of a topic's assignment (adds topic ids, partition increase, reassignment). */
  async setTopicAssignment(topic: string, t: TopicAssignment, epochZkVersion: number): Promise<void> {
    await controllerFencedMulti(this.zk, epochZkVersion, [{ type: 'set', path: TopicZNode.path(topic), data: TopicZNode.encode(t) }]);
  }

  // ---- partition state ------------------------------------------------------------------

  async getPartitionState(tp: TopicPartition): Promise<PartitionStateWithVersion | null> {
    const path = TopicPartitionStateZNode.path(tp.topic, tp.partition);
    const n = await this.zk.getOrNull(path);
    return n ? { state: TopicPartitionStateZNode.decode(n.data, path), zkVersion: n.stat.version } : null;
  }

  async getPartitionStates(tps: TopicPartition[]): Promise<Map<string, PartitionStateWithVersion>> {
    const out = new Map<string, PartitionStateWithVersion>();
    await Promise.all(
      tps.map(async (tp) => {
        const s = await this.getPartitionState(tp);
        if (s) out.set(topicPartitionKey(tp), s);
      }),
    );
    return out;
  }

  /**
   * Creates the state znodes of new partitions (NewPartition → OnlinePartition), fenced. Returns
   * the partitions whose state already existed (NODE_EXISTS) so the caller can skip them.
   */
  async createPartitionStates(
    states: Array<{ tp: TopicPartition; state: LeaderIsrAndControllerEpoch }>,
    epochZkVersion: number,
  ): Promise<{ created: TopicPartition[]; existed: TopicPartition[] }> {
    for (const topic of new Set(states.map((s) => s.tp.topic))) await this.zk.mkdirp(TopicPartitionsZNode.path(topic));
    return createPartitionStates(this.zk, states, epochZkVersion);
  }

  /**
   * Conditional update of partition states (leader election, ISR change by the controller): each
   * set is conditioned on the zkVersion the caller read. Returns the new zkVersions and the
   * partitions whose version moved (BAD_VERSION: re-read and retry).
   */
  async updateLeaderAndIsr(
    updates: Array<{ tp: TopicPartition; state: LeaderIsrAndControllerEpoch; expectedZkVersion: number }>,
    epochZkVersion: number,
  ): Promise<{ updated: Map<string, number>; stale: TopicPartition[] }> {
    return setPartitionStates(this.zk, updates, epochZkVersion);
  }

  /** Leader-side ISR update (not controller-fenced): conditional on the partition state zkVersion. */
  async conditionalUpdatePartitionState(tp: TopicPartition, state: LeaderIsrAndControllerEpoch, expectedZkVersion: number): Promise<number | null> {
    try {
      const st = await this.zk.set(TopicPartitionStateZNode.path(tp.topic, tp.partition), TopicPartitionStateZNode.encode(state), expectedZkVersion);
      return st.version;
    } catch (err) {
      if (isZkError(err, ZkCode.BAD_VERSION) || isZkError(err, ZkCode.NO_NODE)) return null;
      throw err;
    }
  }

  // ---- partition reassignment (/admin/reassign_partitions) --------------------------------

  /** The pending ZooKeeper-submitted reassignment with the znode's czxid (which creation it is), or null. */
  async getPartitionReassignment(): Promise<{ partitions: PartitionReassignmentEntry[]; czxid: bigint } | null> {
    const n = await this.zk.getOrNull(ReassignPartitionsZNode.path);
    return n ? { partitions: ReassignPartitionsZNode.decode(n.data), czxid: n.stat.czxid } : null;
  }

  /** Admin write (kafka-reassign-partitions --zookeeper): creates the znode; NODE_EXISTS while one is pending. */
  async createPartitionReassignment(parts: PartitionReassignmentEntry[]): Promise<void> {
    await this.zk.create(ReassignPartitionsZNode.path, ReassignPartitionsZNode.encode(parts), { mkdirp: true });
  }

  /** Controller write: the partitions still being reassigned (fenced), creating the znode if needed. */
  async setOrCreatePartitionReassignment(parts: PartitionReassignmentEntry[], epochZkVersion: number): Promise<void> {
    const data = ReassignPartitionsZNode.encode(parts);
    const exists = await this.zk.exists(ReassignPartitionsZNode.path);
    await controllerFencedMulti(this.zk, epochZkVersion, [
      exists ? { type: 'set', path: ReassignPartitionsZNode.path, data } : { type: 'create', path: ReassignPartitionsZNode.path, data },
    ]);
  }

  /** Controller write: every ZooKeeper-submitted reassignment is done (fenced; absent is fine). */
  async deletePartitionReassignment(epochZkVersion: number): Promise<void> {
    try {
      await controllerFencedMulti(this.zk, epochZkVersion, [{ type: 'delete', path: ReassignPartitionsZNode.path }]);
    } catch (err) {
      if (!(err instanceof ZkMultiError && err.code === ZkCode.NO_NODE)) throw err;
    }
  }

  // ---- entity configs (/config/<type>/<name>) ---------------------------------------------

  /** An entity's dynamic config overrides ({} when none): topics, brokers (id or `<default>`), ... */
  async getEntityConfig(type: ConfigType, name: string): Promise<Record<string, string>> {
    const path = ConfigEntityZNode.path(type, name);
    const n = await this.zk.getOrNull(path);
    return n ? ConfigEntityZNode.decode(n.data, path) : {};
  }

  /** Every entity of `type` with its config (Kafka's AdminZkClient.fetchAllEntityConfigs). */
  async getAllEntityConfigs(type: ConfigType): Promise<Map<string, Record<string, string>>> {
    const out = new Map<string, Record<string, string>>();
    for (const name of await this.childrenOrNone(ConfigEntityTypeZNode.path(type))) out.set(name, await this.getEntityConfig(type, name));
    return out;
  }

  /**
   * Every `<entity>/<childType>/<child>` config under `type` (Kafka's fetchAllChildEntityConfigs:
   * users/<user>/clients/<client-id>), keyed by that relative path.
   */
  async getAllChildEntityConfigs(type: ConfigType, childType: ConfigType): Promise<Map<string, Record<string, string>>> {
    const out = new Map<string, Record<string, string>>();
    for (const name of await this.childrenOrNone(ConfigEntityTypeZNode.path(type))) {
      for (const child of await this.childrenOrNone(`${ConfigEntityZNode.path(type, name)}/${childType}`)) {
        const rel = `${name}/${childType}/${child}`;
        out.set(rel, await this.getEntityConfig(type, rel));
      }
    }
    return out;
  }

  private async childrenOrNone(path: string): Promise<string[]> {
    try {
      return await this.zk.getChildren(path);
    } catch (err) {
      if (isZkError(err, ZkCode.NO_NODE)) return [];
      throw err;
    }
  }

  /**
   * Kafka's AdminZkClient.changeConfigs: writes the entity's whole config, then announces it with a
   * `/config/changes/config_change_<seq>` notification (`{"version":2,"entity_path":"<type>/<name>"}`)
   * that every broker watches.
   */
  async changeEntityConfig(type: ConfigType, name: string, config: Record<string, string>): Promise<void> {
    const path = ConfigEntityZNode.path(type, name);
    const data = ConfigEntityZNode.encode(config);
    try {
      await this.zk.set(path, data);
    } catch (err) {
      if (!isZkError(err, ZkCode.NO_NODE)) throw err;
      await this.zk.create(path, data, { mkdirp: true });
    }
    await this.zk.mkdirp(ConfigEntityChangeNotificationZNode.path);
    await this.zk.create(ConfigEntityChangeNotificationSequenceZNode.createPath, ConfigEntityChangeNotificationSequenceZNode.encode(`${type}/${name}`), {
      mode: CreateMode.PersistentSequential,
    });
  }
}
