import { topicPartitionKey } from '@samsa/protocol';
import type { TopicPartition } from '@samsa/protocol';
import type { Logger } from 'pino';
import {
  ConfigEntityZNode,
  ConfigType,
  DeleteTopicsTopicZNode,
  TopicZNode,
  controllerFencedDelete,
  controllerFencedDeleteRecursive,
  deletePartitionZNodes,
  type KafkaZk,
} from '@samsa/zk-paths';
import type { ControllerContext, PartitionReplica } from './context.js';
import type { PartitionStateMachine } from './partition-state-machine.js';
import type { ReplicaStateMachine } from './replica-state-machine.js';
import type { RequestBatch } from './request-batch.js';

/** Kafka's LeaderAndIsr.LeaderDuringDelete: tells brokers a partition's topic is being deleted. */
export const LEADER_DURING_DELETE = -2;

export interface TopicDeletionDeps {
  ctx: ControllerContext;
  kzk: KafkaZk;
  batch: RequestBatch;
  psm: PartitionStateMachine;
  rsm: ReplicaStateMachine;
  log: Logger;
  deleteTopicEnable: boolean;
  /** StopReplica(delete=true) answers come back here (the controller enqueues them as events). */
  onStopReplicaResponse: (brokerId: number, partitionErrors: Array<{ topic: string; partition: number; errorCode: number }>) => void;
}

/**
 * Kafka's TopicDeletionManager. A topic in /admin/delete_topics is deleted in steps: brokers learn
 * it is going (UpdateMetadata with leader -2), its replicas go offline and then are deleted with
 * StopReplica(delete=true); a topic with a replica on a dead broker is ineligible until that broker
 * returns; once every replica reports success the topic's znodes are removed.
 */
export class TopicDeletionManager {
  constructor(private readonly d: TopicDeletionDeps) {}

  /** /admin/delete_topics changed: queue new topics (or clear them when deletion is disabled). */
  async onDeleteTopicsChange(children: string[]): Promise<void> {
    const { ctx, kzk, log } = this.d;
    if (!this.d.deleteTopicEnable) {
      for (const t of children) {
        log.info({ topic: t }, 'delete.topic.enable is false: removing the deletion request');
        await controllerFencedDelete(kzk.zk, ctx.epochZkVersion, DeleteTopicsTopicZNode.path(t)).catch(() => undefined);
      }
      return;
    }
    for (const t of children) {
      if (!ctx.hasTopic(t)) {
        // not a topic (anymore): drop the marker
        await controllerFencedDelete(kzk.zk, ctx.epochZkVersion, DeleteTopicsTopicZNode.path(t)).catch(() => undefined);
        continue;
      }
      if (!ctx.topicsToBeDeleted.has(t)) {
        log.info({ topic: t }, 'topic marked for deletion');
        ctx.topicsToBeDeleted.add(t);
        if (ctx.replicas({ topic: t, partition: 0 }).length > 0 && this.hasOfflineReplica(t)) ctx.topicsIneligibleForDeletion.add(t);
      }
    }
    await this.resumeDeletions();
  }

  private hasOfflineReplica(topic: string): boolean {
    const { ctx } = this.d;
    return ctx.partitionsForTopic(topic).some((tp) => ctx.replicas(tp).some((r) => !ctx.liveBrokers.has(r)));
  }

  /** Tries every queued topic again (after broker startup, responses, new requests). */
  async resumeDeletions(): Promise<void> {
    const { ctx } = this.d;
    for (const topic of [...ctx.topicsToBeDeleted]) {
      if (!ctx.hasTopic(topic)) {
        ctx.topicsToBeDeleted.delete(topic);
        continue;
      }
      const replicas = this.replicasOf(topic);
      if (replicas.length > 0 && replicas.every(({ tp, replica }) => ctx.replicaState(tp, replica) === 'ReplicaDeletionSuccessful')) {
        await this.completeDeleteTopic(topic);
        continue;
      }
      if ([...ctx.partitionsBeingReassigned.values()].some((tp) => tp.topic === topic)) {
        // Kafka: a topic cannot be deleted while one of its partitions is being reassigned
        ctx.topicsIneligibleForDeletion.add(topic);
        continue;
      }
      if (this.hasOfflineReplica(topic)) {
        ctx.topicsIneligibleForDeletion.add(topic);
        // replicas on live brokers can still be deleted; the rest wait for their broker
      } else {
        ctx.topicsIneligibleForDeletion.delete(topic);
      }
      const started = replicas.some(({ tp, replica }) => ctx.replicaState(tp, replica) === 'ReplicaDeletionStarted');
      const retryable = replicas.filter(
        ({ tp, replica }) =>
          ctx.liveBrokers.has(replica) &&
          ['OnlineReplica', 'OfflineReplica', 'NewReplica', 'ReplicaDeletionIneligible'].includes(ctx.replicaState(tp, replica)),
      );
      if (retryable.length > 0 && !started) await this.onTopicDeletion(topic, retryable);
    }
  }

  private replicasOf(topic: string): PartitionReplica[] {
    return this.d.ctx.replicasForPartition(this.d.ctx.partitionsForTopic(topic));
  }

  private async onTopicDeletion(topic: string, replicas: PartitionReplica[]): Promise<void> {
    const { ctx, batch, rsm, log } = this.d;
    const tps = ctx.partitionsForTopic(topic);
    log.info({ topic, replicas: replicas.length }, 'deleting topic replicas');
    // brokers stop serving the topic: UpdateMetadata with leader -2 for its partitions
    for (const tp of tps) {
      const lead = ctx.leadershipOf(tp);
      if (lead) ctx.setLeadership(tp, { ...lead, state: { ...lead.state, leader: LEADER_DURING_DELETE } });
    }
    batch.addUpdateMetadata(ctx.liveBrokerIds(), tps);
    batch.send();
    await rsm.handleStateChanges(replicas, 'OfflineReplica');
    await rsm.handleStateChanges(replicas, 'ReplicaDeletionStarted');
    batch.send((brokerId, r) => this.d.onStopReplicaResponse(brokerId, r.partitionErrors));
  }

  /** A broker died: its replicas of topics being deleted become ineligible until it returns. */
  async onBrokerFailure(ids: number[]): Promise<void> {
    const { ctx, rsm } = this.d;
    const deleting = ctx.replicasOnBrokers(ids).filter((r) => ctx.topicsToBeDeleted.has(r.tp.topic));
    if (deleting.length === 0) return;
    const notOffline = deleting.filter(({ tp, replica }) => ['OnlineReplica', 'NewReplica'].includes(ctx.replicaState(tp, replica)));
    await rsm.handleStateChanges(notOffline, 'OfflineReplica');
    await rsm.handleStateChanges(deleting, 'ReplicaDeletionIneligible');
    for (const r of deleting) ctx.topicsIneligibleForDeletion.add(r.tp.topic);
  }

  /** StopReplica(delete=true) answered: mark each replica successful or ineligible, then resume. */
  async onStopReplicaResponse(brokerId: number, partitionErrors: Array<{ topic: string; partition: number; errorCode: number }>): Promise<void> {
    const { ctx, rsm, log } = this.d;
    const ok: PartitionReplica[] = [];
    const failed: PartitionReplica[] = [];
    for (const e of partitionErrors) {
      const tp: TopicPartition = { topic: e.topic, partition: e.partition };
      if (!ctx.topicsToBeDeleted.has(e.topic) || ctx.replicaState(tp, brokerId) !== 'ReplicaDeletionStarted') continue;
      (e.errorCode === 0 ? ok : failed).push({ tp, replica: brokerId });
    }
    if (failed.length > 0) {
      log.warn({ broker: brokerId, failed: failed.map((f) => topicPartitionKey(f.tp)) }, 'replica deletion failed; will retry');
      await rsm.handleStateChanges(failed, 'ReplicaDeletionIneligible');
      for (const f of failed) ctx.topicsIneligibleForDeletion.add(f.tp.topic);
    }
    await rsm.handleStateChanges(ok, 'ReplicaDeletionSuccessful');
    await this.resumeDeletions();
  }

  private async completeDeleteTopic(topic: string): Promise<void> {
    const { ctx, kzk, psm, rsm, log } = this.d;
    const tps = ctx.partitionsForTopic(topic);
    await rsm.handleStateChanges(this.replicasOf(topic), 'NonExistentReplica');
    await psm.handleStateChanges(tps, 'OfflinePartition');
    await psm.handleStateChanges(tps, 'NonExistentPartition');
    // Kafka's order: the topic znode (with its partition states), its config, then the marker; each
    // delete fenced by the controller epoch (a deposed controller deletes nothing)
    await deletePartitionZNodes(
      kzk.zk,
      topic,
      tps.map((tp) => tp.partition),
      ctx.epochZkVersion,
    );
    await controllerFencedDeleteRecursive(kzk.zk, ctx.epochZkVersion, TopicZNode.path(topic));
    for (const path of [ConfigEntityZNode.path(ConfigType.Topic, topic), DeleteTopicsTopicZNode.path(topic)]) {
      await controllerFencedDelete(kzk.zk, ctx.epochZkVersion, path);
    }
    ctx.removeTopic(topic);
    log.info({ topic }, 'deletion of topic finished');
  }
}
