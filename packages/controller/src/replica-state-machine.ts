import { topicPartitionKey, type TopicPartition } from '@samsa/protocol';
import type { Logger } from 'pino';
import type { KafkaZk, LeaderIsrAndControllerEpoch } from '@samsa/zk-paths';
import type { ControllerContext, PartitionReplica } from './context.js';
import { currentStates } from './current-states.js';
import type { RequestBatch } from './request-batch.js';
import { isValidReplicaTransition, type ReplicaState } from './states.js';

export interface ReplicaStateMachineDeps {
  ctx: ControllerContext;
  kzk: KafkaZk;
  batch: RequestBatch;
  stateChangeLog: Logger;
}

/** Kafka's NoLeader: written when the only ISR member goes offline. */
export const NO_LEADER = -1;

/**
 * Kafka's ReplicaStateMachine: NewReplica / OnlineReplica send the replica its LeaderAndIsr;
 * OfflineReplica stops it and removes it from the ISR of its partitions (fenced, conditional);
 * the deletion states drive topic deletion. Illegal transitions are logged and skipped.
 */
export class ReplicaStateMachine {
  constructor(private readonly d: ReplicaStateMachineDeps) {}

  async startup(): Promise<void> {
    const { ctx } = this.d;
    const online: PartitionReplica[] = [];
    for (const tp of ctx.allPartitions()) {
      for (const r of ctx.replicas(tp)) {
        if (ctx.isReplicaOnline(r, tp, true)) {
          ctx.putReplicaState(tp, r, 'OnlineReplica');
          online.push({ tp, replica: r });
        } else {
          ctx.putReplicaState(tp, r, 'ReplicaDeletionIneligible');
        }
      }
    }
    await this.handleStateChanges(online, 'OnlineReplica');
  }

  async handleStateChanges(replicas: PartitionReplica[], target: ReplicaState): Promise<void> {
    const { ctx, batch, stateChangeLog: log } = this.d;
    const valid = replicas.filter(({ tp, replica }) => {
      const from = ctx.replicaState(tp, replica);
      if (isValidReplicaTransition(from, target)) return true;
      log.error({ topic: tp.topic, partition: tp.partition, replica, from, to: target }, 'illegal replica state transition; skipped');
      return false;
    });
    switch (target) {
      case 'NewReplica':
        for (const { tp, replica } of valid) {
          const lead = ctx.leadershipOf(tp);
          if (lead && lead.state.leader === replica) {
            log.error({ topic: tp.topic, partition: tp.partition, replica }, 'a new replica cannot be the current leader; skipped');
            continue;
          }
          if (lead) batch.addLeaderAndIsr([replica], tp, true);
          this.transition(tp, replica, 'NewReplica');
        }
        break;
      case 'OnlineReplica':
        for (const { tp, replica } of valid) {
          const from = ctx.replicaState(tp, replica);
          if (from === 'NewReplica') {
            const a = ctx.assignment(tp);
            if (a && !a.replicas.includes(replica)) ctx.setAssignment(tp, { ...a, replicas: [...a.replicas, replica] });
          } else if (ctx.leadershipOf(tp)) {
            batch.addLeaderAndIsr([replica], tp, false);
          }
          this.transition(tp, replica, 'OnlineReplica');
        }
        break;
      case 'OfflineReplica': {
        for (const { tp, replica } of valid) batch.addStopReplica([replica], tp, false);
        const byReplica = new Map<number, TopicPartition[]>();
        for (const { tp, replica } of valid) {
          if (!ctx.leadershipOf(tp)) continue;
          const list = byReplica.get(replica) ?? [];
          list.push(tp);
          byReplica.set(replica, list);
        }
        for (const [replica, tps] of byReplica) {
          const { updated, unchanged } = await this.removeReplicaFromIsr(replica, tps);
          for (const tp of tps) {
            if (unchanged.has(topicPartitionKey(tp))) {
              // already out of the ISR (a controlled shutdown took it out): the other replicas hold this
              // state and would ignore its LeaderAndIsr (same leader epoch); the offline replica is news
              // for everyone's metadata only — except for a topic being deleted, which brokers have
              // already dropped (leader -2) and must not learn again
              if (!ctx.topicsToBeDeleted.has(tp.topic)) batch.addUpdateMetadata(ctx.liveBrokerIds(), [tp]);
              continue;
            }
            if (!updated.has(topicPartitionKey(tp))) continue;
            if (!ctx.topicsToBeDeleted.has(tp.topic)) {
              const recipients = ctx.replicas(tp).filter((r) => r !== replica && ctx.isReplicaOnline(r, tp, true));
              batch.addLeaderAndIsr(recipients, tp, false);
            }
          }
        }
        for (const { tp, replica } of valid) {
          if (!ctx.leadershipOf(tp)) batch.addUpdateMetadata(ctx.liveBrokerIds(), [tp]);
          this.transition(tp, replica, 'OfflineReplica');
        }
        break;
      }
      case 'ReplicaDeletionStarted':
        for (const { tp, replica } of valid) {
          batch.addStopReplica([replica], tp, true);
          this.transition(tp, replica, 'ReplicaDeletionStarted');
        }
        break;
      case 'ReplicaDeletionIneligible':
      case 'ReplicaDeletionSuccessful':
        for (const { tp, replica } of valid) this.transition(tp, replica, target);
        break;
      case 'NonExistentReplica':
        for (const { tp, replica } of valid) {
          const a = ctx.assignment(tp);
          if (a) ctx.setAssignment(tp, { ...a, replicas: a.replicas.filter((r) => r !== replica) });
          ctx.removeReplicaState(tp, replica);
          log.info({ topic: tp.topic, partition: tp.partition, replica, to: 'NonExistentReplica' }, 'replica state change');
        }
        break;
      default: {
        const never: never = target;
        throw new Error(`unknown replica state ${String(never)}`);
      }
    }
  }

  private transition(tp: TopicPartition, replica: number, to: ReplicaState): void {
    const from = this.d.ctx.replicaState(tp, replica);
    this.d.ctx.putReplicaState(tp, replica, to);
    this.d.stateChangeLog.debug({ topic: tp.topic, partition: tp.partition, replica, from, to }, 'replica state change');
  }

  /**
   * Removes `replica` from the ISR of `tps` (Kafka's removeReplicasFromIsr): the last ISR member is
   * kept (so an unclean election is needed to move on) and a leader going offline leaves the
   * partition with no leader (-1). Conditional on the state znode version; retried when it moved.
   */
  /** `updated`: partitions whose ISR lost the replica (leader epoch bumped); `unchanged`: those whose ISR did not hold it. */
  private async removeReplicaFromIsr(replica: number, tps: TopicPartition[]): Promise<{ updated: Set<string>; unchanged: Set<string> }> {
    const { ctx, kzk, stateChangeLog: log } = this.d;
    const done = new Set<string>();
    const unchanged = new Set<string>();
    let remaining = tps;
    for (let attempt = 0; remaining.length > 0 && attempt < 10; attempt++) {
      // first pass from the controller's view (writes are conditional on its zkVersion); later passes read ZooKeeper
      const current = await currentStates(ctx, kzk, remaining, attempt === 0);
      const recheck: TopicPartition[] = [];
      const updates: Array<{ tp: TopicPartition; state: LeaderIsrAndControllerEpoch; expectedZkVersion: number }> = [];
      for (const tp of remaining) {
        const cur = current.get(topicPartitionKey(tp));
        if (!cur) continue;
        // a decision not to write is only taken on ZooKeeper's word
        if (!cur.fromZk && (cur.state.controllerEpoch > ctx.epoch || !cur.state.isr.includes(replica))) {
          recheck.push(tp);
          continue;
        }
        if (cur.state.controllerEpoch > ctx.epoch) {
          log.error({ topic: tp.topic, partition: tp.partition }, 'partition state written by a newer controller; not removing replica from ISR');
          continue;
        }
        if (!cur.state.isr.includes(replica)) {
          ctx.setLeadership(tp, { state: cur.state, zkVersion: cur.zkVersion });
          unchanged.add(topicPartitionKey(tp));
          continue;
        }
        const isr = cur.state.isr.length === 1 ? cur.state.isr : cur.state.isr.filter((r) => r !== replica);
        const leader = cur.state.leader === replica ? NO_LEADER : cur.state.leader;
        updates.push({ tp, state: { leader, isr, leaderEpoch: cur.state.leaderEpoch + 1, controllerEpoch: ctx.epoch }, expectedZkVersion: cur.zkVersion });
      }
      if (updates.length === 0 && recheck.length === 0) break;
      const { updated, stale } =
        updates.length > 0 ? await kzk.updateLeaderAndIsr(updates, ctx.epochZkVersion) : { updated: new Map<string, number>(), stale: [] };
      for (const u of updates) {
        const v = updated.get(topicPartitionKey(u.tp));
        if (v === undefined) continue;
        ctx.setLeadership(u.tp, { state: u.state, zkVersion: v });
        done.add(topicPartitionKey(u.tp));
        log.debug(
          { topic: u.tp.topic, partition: u.tp.partition, replica, leader: u.state.leader, isr: u.state.isr, leaderEpoch: u.state.leaderEpoch },
          'removed replica from ISR',
        );
      }
      remaining = [...stale, ...recheck];
    }
    if (done.size > 0) log.info({ replica, partitions: done.size, alreadyOut: unchanged.size }, 'removed replica from ISRs');
    return { updated: done, unchanged };
  }
}
