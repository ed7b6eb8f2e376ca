import { topicPartitionKey, type TopicPartition } from '@samsa/protocol';
import type { Logger } from 'pino';
import {
  ControllerMovedError,
  TopicPartitionStateZNode,
  ZNodeDecodeError,
  type KafkaZk,
  type PartitionReassignmentEntry,
  type TopicAssignment,
  type Unwatch,
} from '@samsa/zk-paths';
import type { ControllerContext, ReplicaAssignment } from './context.js';
import type { PartitionStateMachine } from './partition-state-machine.js';
import type { ReplicaStateMachine } from './replica-state-machine.js';
import type { RequestBatch } from './request-batch.js';
import { isBeingReassigned, reassignTo, sameAssignment, sameReplicaSet, targetReplicas } from './replica-assignment.js';

/** Error codes reassignment answers with per partition (Kafka's). */
export const ReassignmentError = {
  NONE: 0,
  UNKNOWN_TOPIC_OR_PARTITION: 3,
  INVALID_REPLICA_ASSIGNMENT: 39,
  UNKNOWN_SERVER_ERROR: -1,
  NO_REASSIGNMENT_IN_PROGRESS: 85,
} as const;

export interface ReassignmentOutcome {
  errorCode: number;
  message: string | null;
}

export interface OngoingReassignment extends TopicPartition {
  replicas: number[];
  addingReplicas: number[];
  removingReplicas: number[];
}

export interface ReassignmentDeps {
  ctx: ControllerContext;
  kzk: KafkaZk;
  batch: RequestBatch;
  psm: PartitionStateMachine;
  rsm: ReplicaStateMachine;
  log: Logger;
  stateChangeLog: Logger;
  /** A reassigning partition's state znode changed (the watch only enqueues). */
  onIsrChange: (tp: TopicPartition) => void;
  /** A reassignment finished: topic deletion may resume. */
  onReassignmentDone: (topic: string) => Promise<void>;
}

const NONE: ReassignmentOutcome = { errorCode: ReassignmentError.NONE, message: null };

/**
 * Kafka's partition reassignment (KafkaController.onPartitionReassignment, KIP-455, ZooKeeper
 * mode), run on the controller's event loop. Terms: RS the assigned replicas, ORS the original
 * ones, TRS the target, AR = TRS − ORS (adding), RR = ORS − TRS (removing).
 *
 *   U. RS = ORS + TRS with AR and RR written to the topic znode first (so a new controller resumes),
 *      then memory; replicas a replaced reassignment no longer needs are stopped and deleted.
 *   A. While TRS ⊄ ISR: bump the leader epoch and send LeaderAndIsr with the larger RS to every
 *      replica; start AR (NewReplica). A data watch on the partition-state znode brings the
 *      partition back here when the leader grows the ISR.
 *   B. When TRS ⊆ ISR: AR → OnlineReplica; RS = TRS in memory; a leader outside TRS (or dead) is
 *      replaced by the first live ISR member of TRS, else the epoch is bumped so the leader learns
 *      RS = TRS; RR → OfflineReplica (out of the ISR) → StopReplica(delete) → NonExistentReplica;
 *      RS = TRS written to the topic znode last; the partition leaves /admin/reassign_partitions
 *      (deleted when empty); UpdateMetadata to every broker.
 * A reordering of the same replicas only rewrites the topic znode and sends UpdateMetadata: the
 * preferred replica changes, nothing moves and no leader epoch is bumped.
 */
export class PartitionReassignmentManager {
  private readonly isrWatches = new Map<string, Unwatch>();
  /** czxid of the /admin/reassign_partitions creation already acted on (its later rewrites are ours). */
  private handledZnodeCzxid: bigint | null = null;
  /**
   * Reassignments between B2 (RS = TRS in memory) and the end of B6 (RS = TRS in the topic znode):
   * still listed as ongoing, since ZooKeeper (what a new controller resumes from) still holds them.
   */
  private readonly completing = new Map<string, ReplicaAssignment>();

  constructor(private readonly d: ReassignmentDeps) {}

  /** Resignation: drop the ISR watches. */
  reset(): void {
    for (const u of this.isrWatches.values()) u();
    this.isrWatches.clear();
    this.completing.clear();
    this.handledZnodeCzxid = null;
  }

  /** A deleted topic's reassignments vanish with it. */
  onTopicDeleted(topic: string): void {
    for (const [k, tp] of this.d.ctx.partitionsBeingReassigned) {
      if (tp.topic !== topic) continue;
      this.isrWatches.get(k)?.();
      this.isrWatches.delete(k);
      this.completing.delete(k);
      this.d.ctx.partitionsBeingReassigned.delete(k);
    }
  }

  /** Failover: ZooKeeper-submitted reassignments first, then those in topic znodes (API-submitted). */
  async initialize(): Promise<void> {
    const { ctx } = this.d;
    for (const tp of ctx.allPartitions()) {
      const a = ctx.assignment(tp);
      if (a && isBeingReassigned(a)) ctx.partitionsBeingReassigned.set(topicPartitionKey(tp), tp);
    }
    const resumed = await this.onZkReassignment(true);
    await this.resume((tp) => !resumed.has(topicPartitionKey(tp)));
  }

  /** Resumes ongoing reassignments matching `filter` (failover; broker startup for their targets). */
  async resume(filter: (tp: TopicPartition, a: ReplicaAssignment) => boolean): Promise<void> {
    const { ctx } = this.d;
    for (const tp of [...ctx.partitionsBeingReassigned.values()]) {
      const a = ctx.assignment(tp);
      if (!a || !filter(tp, a)) continue;
      try {
        await this.onPartitionReassignment(tp, a);
      } catch (err) {
        if (err instanceof ControllerMovedError) throw err;
        this.d.log.error({ err, topic: tp.topic, partition: tp.partition }, 'resuming the reassignment failed');
      }
    }
  }

  /** Brokers came up: resume reassignments whose target includes one of them. */
  async onBrokerStartup(ids: number[]): Promise<void> {
    await this.resume((_tp, a) => targetReplicas(a).some((r) => ids.includes(r)));
  }

  /**
   * /admin/reassign_partitions was created (or we fail over): start what it asks. `force` acts
   * even when this creation was already handled (failover). Returns the partitions started.
   */
  async onZkReassignment(force = false): Promise<Set<string>> {
    const { kzk, log } = this.d;
    let pending: Awaited<ReturnType<KafkaZk['getPartitionReassignment']>>;
    try {
      pending = await kzk.getPartitionReassignment();
    } catch (err) {
      if (!(err instanceof ZNodeDecodeError)) throw err;
      log.warn({ err: err.message }, 'ignoring and deleting a malformed /admin/reassign_partitions');
      await kzk.deletePartitionReassignment(this.d.ctx.epochZkVersion);
      return new Set();
    }
    if (!pending) {
      this.handledZnodeCzxid = null;
      return new Set();
    }
    if (!force && pending.czxid === this.handledZnodeCzxid) return new Set();
    this.handledZnodeCzxid = pending.czxid;
    const results = new Map<string, ReassignmentOutcome>();
    const toStart = new Map<string, { tp: TopicPartition; assignment: ReplicaAssignment }>();
    for (const e of pending.partitions) {
      const tp = { topic: e.topic, partition: e.partition };
      const built = this.buildReassignment(tp, e.replicas);
      if (built) toStart.set(topicPartitionKey(tp), { tp, assignment: built });
      else results.set(topicPartitionKey(tp), { errorCode: ReassignmentError.NO_REASSIGNMENT_IN_PROGRESS, message: null });
    }
    for (const [k, r] of await this.trigger([...toStart.values()])) results.set(k, r);
    const failed = new Set([...results].filter(([, r]) => r.errorCode !== 0).map(([k]) => k));
    if (failed.size > 0) {
      log.warn({ failed: [...failed] }, 'reassignments submitted through ZooKeeper failed; removing them from /admin/reassign_partitions');
      await this.removeFromZkReassignment((tp) => failed.has(topicPartitionKey(tp)));
    }
    return new Set([...results].filter(([, r]) => r.errorCode === 0).map(([k]) => k));
  }

  /** AlterPartitionReassignments: per partition NONE or the reason it was refused. */
  async alter(reassignments: Array<TopicPartition & { replicas: number[] | null }>): Promise<Map<string, ReassignmentOutcome>> {
    const results = new Map<string, ReassignmentOutcome>();
    const toStart = new Map<string, { tp: TopicPartition; assignment: ReplicaAssignment }>();
    for (const r of reassignments) {
      const tp = { topic: r.topic, partition: r.partition };
      const invalid = r.replicas === null ? null : this.validateReplicas(tp, r.replicas);
      if (invalid) {
        results.set(topicPartitionKey(tp), invalid);
        continue;
      }
      const built = this.buildReassignment(tp, r.replicas);
      if (built) toStart.set(topicPartitionKey(tp), { tp, assignment: built });
      else
        results.set(topicPartitionKey(tp), { errorCode: ReassignmentError.NO_REASSIGNMENT_IN_PROGRESS, message: 'No partition reassignment is in progress.' });
    }
    // the latest reassignment wins: an API one replaces the partition's ZooKeeper-submitted one
    if (toStart.size > 0) await this.removeFromZkReassignment((tp) => toStart.has(topicPartitionKey(tp)));
    for (const [k, r] of await this.trigger([...toStart.values()])) results.set(k, r);
    return results;
  }

  /**
   * ListPartitionReassignments: the ongoing ones (of `partitions`, or all). One stays listed until
   * RS = TRS is in its topic znode (a completion that failed before that write stays listed).
   */
  list(partitions: TopicPartition[] | null): OngoingReassignment[] {
    const { ctx } = this.d;
    const out: OngoingReassignment[] = [];
    for (const tp of partitions ?? [...ctx.partitionsBeingReassigned.values()]) {
      const a = this.completing.get(topicPartitionKey(tp)) ?? ctx.assignment(tp);
      if (a && isBeingReassigned(a))
        out.push({ ...tp, replicas: [...a.replicas], addingReplicas: [...a.addingReplicas], removingReplicas: [...a.removingReplicas] });
    }
    return out.sort((x, y) => (x.topic < y.topic ? -1 : x.topic > y.topic ? 1 : x.partition - y.partition));
  }

  /** The partition-state znode of a reassigning partition changed: maybe every target replica is in the ISR now. */
  async onIsrChange(tp: TopicPartition): Promise<void> {
    if (!this.d.ctx.partitionsBeingReassigned.has(topicPartitionKey(tp))) return;
    const a = this.d.ctx.assignment(tp);
    if (!a || !(await this.isComplete(tp, a))) return;
    this.d.log.info(
      { topic: tp.topic, partition: tp.partition, target: targetReplicas(a) },
      'every target replica caught up with the leader; completing the reassignment',
    );
    await this.onPartitionReassignment(tp, a);
  }

  // ---- Kafka's validateReplicas / maybeBuildReassignment / maybeTriggerPartitionReassignment -----

  private validateReplicas(tp: TopicPartition, replicas: number[]): ReassignmentOutcome | null {
    const bad = (message: string) => ({ errorCode: ReassignmentError.INVALID_REPLICA_ASSIGNMENT, message });
    if (replicas.length === 0) return bad('Empty replica list specified in partition reassignment.');
    if (new Set(replicas).size !== replicas.length) return bad(`Duplicate replica ids in partition reassignment replica list: [${replicas.join(', ')}]`);
    if (replicas.some((r) => r < 0)) return bad(`Invalid broker id in replica list: [${replicas.join(', ')}]`);
    const current = this.d.ctx.assignment(tp) ?? { replicas: [], addingReplicas: [], removingReplicas: [] };
    const adding = reassignTo(current, replicas).addingReplicas;
    const live = this.d.ctx.liveBrokerIds();
    if (!adding.every((r) => live.includes(r))) {
      return bad(`Replica assignment has brokers that are not alive. Replica list: [${adding.join(', ')}], live broker list: [${live.join(', ')}]`);
    }
    return null;
  }

  /** The assignment to move to; null target cancels (back to ORS); null result: nothing to cancel. */
  private buildReassignment(tp: TopicPartition, target: number[] | null): ReplicaAssignment | null {
    const current = this.d.ctx.assignment(tp) ?? { replicas: [], addingReplicas: [], removingReplicas: [] };
    if (target === null)
      return isBeingReassigned(current)
        ? reassignTo(
            current,
            current.replicas.filter((r) => !current.addingReplicas.includes(r)),
          )
        : null;
    return reassignTo(current, target);
  }

  private async trigger(list: Array<{ tp: TopicPartition; assignment: ReplicaAssignment }>): Promise<Map<string, ReassignmentOutcome>> {
    const { ctx, log } = this.d;
    const results = new Map<string, ReassignmentOutcome>();
    for (const { tp, assignment } of list) {
      const k = topicPartitionKey(tp);
      if (ctx.topicsToBeDeleted.has(tp.topic) || ctx.replicas(tp).length === 0) {
        if (ctx.topicsToBeDeleted.has(tp.topic)) log.info({ topic: tp.topic, partition: tp.partition }, 'not reassigning a partition of a topic being deleted');
        results.set(k, { errorCode: ReassignmentError.UNKNOWN_TOPIC_OR_PARTITION, message: 'The partition does not exist.' });
        continue;
      }
      try {
        await this.onPartitionReassignment(tp, assignment);
        results.set(k, NONE);
      } catch (err) {
        if (err instanceof ControllerMovedError) throw err;
        log.error({ err, topic: tp.topic, partition: tp.partition }, 'error starting the reassignment');
        results.set(k, { errorCode: ReassignmentError.UNKNOWN_SERVER_ERROR, message: (err as Error).message });
      }
    }
    return results;
  }

  // ---- the steps ------------------------------------------------------------------------------

  private async onPartitionReassignment(tp: TopicPartition, reassignment: ReplicaAssignment): Promise<void> {
    const { ctx, rsm, batch, stateChangeLog: scl } = this.d;
    // while a reassignment is in progress the topic cannot be deleted (TopicDeletionManager checks
    // partitionsBeingReassigned, which updateCurrentReassignment fills)
    const before = ctx.assignment(tp)!;
    await this.updateCurrentReassignment(tp, reassignment);
    if (!(await this.isComplete(tp, reassignment))) {
      scl.info(
        {
          topic: tp.topic,
          partition: tp.partition,
          replicas: reassignment.replicas,
          adding: reassignment.addingReplicas,
          removing: reassignment.removingReplicas,
        },
        'reassignment: replicas added, waiting for the target replicas to join the ISR',
      );
      // A1. LeaderAndIsr with RS = ORS + TRS (and AR, RR) to every replica, under a new leader epoch
      await this.updateLeaderEpochAndSendRequest(tp, reassignment);
      // A2. AR → NewReplica
      const fresh = reassignment.addingReplicas.filter((r) => ctx.replicaState(tp, r) === 'NonExistentReplica').map((replica) => ({ tp, replica }));
      await rsm.handleStateChanges(fresh, 'NewReplica');
      batch.send();
      return;
    }
    const reorderOnly = !isBeingReassigned(before) && !isBeingReassigned(reassignment) && sameReplicaSet(before.replicas, reassignment.replicas);
    // B1. AR → OnlineReplica
    await rsm.handleStateChanges(
      reassignment.addingReplicas.filter((r) => ctx.replicaState(tp, r) !== 'OnlineReplica').map((replica) => ({ tp, replica })),
      'OnlineReplica',
    );
    batch.send();
    // B2. RS = TRS in memory
    const completed: ReplicaAssignment = { replicas: targetReplicas(reassignment), addingReplicas: [], removingReplicas: [] };
    if (isBeingReassigned(reassignment)) this.completing.set(topicPartitionKey(tp), reassignment);
    ctx.setAssignment(tp, completed);
    // B3. a leader outside TRS (or dead) moves to TRS; otherwise a new epoch tells it RS = TRS
    if (!reorderOnly) await this.moveLeaderIfRequired(tp, completed);
    // B4, B5. RR → Offline (out of the ISR) → StopReplica(delete) → NonExistent
    await this.stopRemovedReplicas(tp, reassignment.removingReplicas);
    // B6. RS = TRS in ZooKeeper, last: until here the topic znode is the only record of ORS
    await this.writeAssignment(tp, completed);
    this.completing.delete(topicPartitionKey(tp));
    // B7. the ISR watch goes, and the partition leaves /admin/reassign_partitions
    this.isrWatches.get(topicPartitionKey(tp))?.();
    this.isrWatches.delete(topicPartitionKey(tp));
    await this.removeFromZkReassignment(
      (p, replicas) =>
        topicPartitionKey(p) === topicPartitionKey(tp) &&
        replicas.length === completed.replicas.length &&
        replicas.every((r, i) => r === completed.replicas[i]),
    );
    ctx.partitionsBeingReassigned.delete(topicPartitionKey(tp));
    // B8. every broker learns the new replicas, leader and ISR
    batch.addUpdateMetadata(ctx.liveBrokerIds(), [tp]);
    batch.send();
    scl.info({ topic: tp.topic, partition: tp.partition, replicas: completed.replicas, reorderOnly }, 'reassignment completed');
    if (![...ctx.partitionsBeingReassigned.values()].some((p) => p.topic === tp.topic)) await this.d.onReassignmentDone(tp.topic);
  }

  /** U1–U3: ZooKeeper first, then memory; replicas a replaced reassignment was adding are stopped. */
  private async updateCurrentReassignment(tp: TopicPartition, reassignment: ReplicaAssignment): Promise<void> {
    const { ctx, kzk } = this.d;
    const current = ctx.assignment(tp)!;
    if (!sameAssignment(current, reassignment)) {
      await this.writeAssignment(tp, reassignment);
      ctx.setAssignment(tp, reassignment);
      const unneeded = current.replicas.filter((r) => !reassignment.replicas.includes(r));
      if (unneeded.length > 0) await this.stopRemovedReplicas(tp, unneeded);
    }
    const k = topicPartitionKey(tp);
    if (isBeingReassigned(reassignment) && !this.isrWatches.has(k)) {
      this.isrWatches.set(
        k,
        kzk.zk.watchData(TopicPartitionStateZNode.path(tp.topic, tp.partition), (n) => {
          if (n) this.d.onIsrChange(tp);
        }),
      );
    }
    ctx.partitionsBeingReassigned.set(k, tp);
  }

  /** Complete when not reassigning, or when TRS ⊆ ISR (read from the state znode). */
  private async isComplete(tp: TopicPartition, a: ReplicaAssignment): Promise<boolean> {
    if (!isBeingReassigned(a)) return true;
    const s = await this.d.kzk.getPartitionState(tp);
    if (!s) return false;
    return targetReplicas(a).every((r) => s.state.isr.includes(r));
  }

  /** Writes the topic znode with `tp`'s assignment replaced (fenced). */
  private async writeAssignment(tp: TopicPartition, a: ReplicaAssignment): Promise<void> {
    const { ctx, kzk } = this.d;
    const t: TopicAssignment = {
      version: 3,
      topicId: ctx.topicIds.get(tp.topic) ?? null,
      partitions: new Map(),
      addingReplicas: new Map(),
      removingReplicas: new Map(),
    };
    for (const p of ctx.partitionsForTopic(tp.topic)) {
      const pa = p.partition === tp.partition ? a : ctx.assignment(p)!;
      t.partitions.set(p.partition, pa.replicas);
      if (pa.addingReplicas.length > 0) t.addingReplicas.set(p.partition, pa.addingReplicas);
      if (pa.removingReplicas.length > 0) t.removingReplicas.set(p.partition, pa.removingReplicas);
    }
    await kzk.setTopicAssignment(tp.topic, t, ctx.epochZkVersion);
  }

  /** Kafka's updateLeaderEpochAndSendRequest: same leader and ISR under a new epoch, to every replica. */
  private async updateLeaderEpochAndSendRequest(tp: TopicPartition, a: ReplicaAssignment): Promise<void> {
    const { ctx, kzk, batch, stateChangeLog: scl } = this.d;
    for (let attempt = 0; attempt < 10; attempt++) {
      const cur = await kzk.getPartitionState(tp);
      if (!cur) throw new Error(`no partition state for ${topicPartitionKey(tp)}: cannot bump its leader epoch`);
      if (cur.state.controllerEpoch > ctx.epoch)
        throw new ControllerMovedError(`partition state of ${topicPartitionKey(tp)} written by a newer controller (epoch ${cur.state.controllerEpoch})`);
      const state = { ...cur.state, leaderEpoch: cur.state.leaderEpoch + 1, controllerEpoch: ctx.epoch };
      const { updated } = await kzk.updateLeaderAndIsr([{ tp, state, expectedZkVersion: cur.zkVersion }], ctx.epochZkVersion);
      const v = updated.get(topicPartitionKey(tp));
      if (v === undefined) continue;
      ctx.setLeadership(tp, { state, zkVersion: v });
      batch.addLeaderAndIsr(a.addingReplicas, tp, true);
      batch.addLeaderAndIsr(
        a.replicas.filter((r) => !a.addingReplicas.includes(r)),
        tp,
        false,
      );
      batch.send();
      scl.info(
        { topic: tp.topic, partition: tp.partition, leader: state.leader, leaderEpoch: state.leaderEpoch, replicas: a.replicas },
        "sent LeaderAndIsr with the reassignment's replicas",
      );
      return;
    }
    throw new Error(`partition state of ${topicPartitionKey(tp)} kept changing`);
  }

  private async moveLeaderIfRequired(tp: TopicPartition, completed: ReplicaAssignment): Promise<void> {
    const { ctx, psm, batch, log } = this.d;
    const leader = ctx.leadershipOf(tp)?.state.leader ?? -1;
    if (completed.replicas.includes(leader) && ctx.isReplicaOnline(leader, tp)) {
      await this.updateLeaderEpochAndSendRequest(tp, completed);
      return;
    }
    log.info(
      { topic: tp.topic, partition: tp.partition, leader, replicas: completed.replicas },
      'the leader is not a live target replica; electing one from the target replicas',
    );
    await psm.handleStateChanges([tp], 'OnlinePartition', { kind: 'reassign' });
    batch.send();
  }

  private async stopRemovedReplicas(tp: TopicPartition, removed: number[]): Promise<void> {
    if (removed.length === 0) return;
    const { rsm, batch } = this.d;
    const replicas = removed.map((replica) => ({ tp, replica }));
    await rsm.handleStateChanges(replicas, 'OfflineReplica');
    batch.send();
    await rsm.handleStateChanges(replicas, 'ReplicaDeletionStarted');
    batch.send();
    await rsm.handleStateChanges(replicas, 'ReplicaDeletionSuccessful');
    await rsm.handleStateChanges(replicas, 'NonExistentReplica');
  }

  /** Kafka's maybeRemoveFromZkReassignment: rewrite /admin/reassign_partitions without the matches (fenced). */
  private async removeFromZkReassignment(remove: (tp: TopicPartition, replicas: number[]) => boolean): Promise<void> {
    const { kzk, ctx, log } = this.d;
    let pending: Awaited<ReturnType<KafkaZk['getPartitionReassignment']>>;
    try {
      pending = await kzk.getPartitionReassignment();
    } catch (err) {
      if (!(err instanceof ZNodeDecodeError)) throw err;
      pending = null;
    }
    if (!pending) return;
    const keep: PartitionReassignmentEntry[] = pending.partitions.filter((e) => !remove({ topic: e.topic, partition: e.partition }, e.replicas));
    if (keep.length === pending.partitions.length) return;
    if (keep.length === 0) {
      log.info('no more partitions to reassign; deleting /admin/reassign_partitions');
      await kzk.deletePartitionReassignment(ctx.epochZkVersion);
      this.handledZnodeCzxid = null;
    } else {
      await kzk.setOrCreatePartitionReassignment(keep, ctx.epochZkVersion);
    }
  }
}
