import { TopicPartitionMap, topicPartitionKey, type TopicPartition } from '@samsa/protocol';
import type { Logger } from 'pino';
import { PreferredReplicaElectionZNode, controllerFencedDelete, type KafkaZk } from '@samsa/zk-paths';
import type { ControllerContext } from './context.js';
import { ElectionError, ElectionType, imbalancedPartitions, type ElectionOutcome } from './leader-balance.js';
import type { PartitionStateMachine } from './partition-state-machine.js';
import type { ReplicaStateMachine } from './replica-state-machine.js';
import type { RequestBatch } from './request-batch.js';

export interface LeaderElectionsDeps {
  ctx: ControllerContext;
  psm: PartitionStateMachine;
  rsm: ReplicaStateMachine;
  batch: RequestBatch;
  kzk: KafkaZk;
  log: Logger;
  stateChangeLogger: Logger;
  /** leader.imbalance.per.broker.percentage. */
  leaderImbalancePerBrokerPercentage: number;
  isActive: () => boolean;
}

/**
 * The controller's leadership moves that are asked for (KafkaController's onReplicaElection,
 * doControlledShutdown and the auto rebalance): ElectLeaders (preferred or unclean), the
 * `/admin/preferred_replica_election` znode, auto leader rebalance and controlled shutdown. Each
 * returns, where a caller waits, the promise of the brokers' acknowledgement of the new metadata.
 */
export class LeaderElections {
  constructor(private readonly d: LeaderElectionsDeps) {}

  /** Elects; `propagated` resolves once the brokers acked the UpdateMetadata (RequestBatch.send). */
  async elect(partitions: TopicPartition[] | null, type: 0 | 1): Promise<{ results: TopicPartitionMap<ElectionOutcome>; propagated: Promise<void> }> {
    const results = new TopicPartitionMap<ElectionOutcome>();
    let propagated = Promise.resolve();
    const candidates: TopicPartition[] = [];
    const all = partitions ?? this.d.ctx.allPartitions().filter((tp) => !this.d.ctx.topicsToBeDeleted.has(tp.topic));
    for (const tp of all) {
      const a = this.d.ctx.assignment(tp);
      if (!a) {
        results.set(tp.topic, tp.partition, { errorCode: ElectionError.UNKNOWN_TOPIC_OR_PARTITION, message: 'The partition does not exist.' });
        continue;
      }
      if (this.d.ctx.topicsToBeDeleted.has(tp.topic)) {
        results.set(tp.topic, tp.partition, { errorCode: ElectionError.INVALID_TOPIC_EXCEPTION, message: 'The topic is being deleted.' });
        continue;
      }
      const leader = this.d.ctx.leadershipOf(tp)?.state.leader ?? -1;
      if (type === ElectionType.PREFERRED ? leader === a.replicas[0] : leader >= 0 && this.d.ctx.isBrokerLive(leader)) {
        // an election over every partition reports only those it acted on (KafkaApis.handleElectLeaders
        // drops ELECTION_NOT_NEEDED when the request named no partitions)
        if (partitions !== null)
          results.set(tp.topic, tp.partition, { errorCode: ElectionError.ELECTION_NOT_NEEDED, message: 'Leader election not needed for topic partition.' });
        continue;
      }
      candidates.push(tp);
    }
    if (candidates.length > 0) {
      let outcome;
      if (type === ElectionType.PREFERRED) {
        outcome = await this.d.psm.handleStateChanges(candidates, 'OnlinePartition', { kind: 'preferred' });
      } else {
        // partitions still online with a live leader go offline first, as Kafka's unclean election does
        for (const tp of candidates) {
          const offline = this.d.ctx.partitionState(tp) !== 'OnlinePartition' || (this.d.ctx.leadershipOf(tp)?.state.leader ?? -1) < 0;
          if (!offline) this.d.ctx.putPartitionState(tp, 'OfflinePartition');
        }
        outcome = await this.d.psm.handleStateChanges(candidates, 'OnlinePartition', { kind: 'offline', allowUnclean: true });
      }
      propagated = this.d.batch.send();
      for (const tp of candidates) {
        const r = outcome.get(topicPartitionKey(tp));
        if (r?.ok) results.set(tp.topic, tp.partition, { errorCode: ElectionError.NONE, message: null });
        else {
          const code = type === ElectionType.PREFERRED ? ElectionError.PREFERRED_LEADER_NOT_AVAILABLE : ElectionError.ELIGIBLE_LEADERS_NOT_AVAILABLE;
          results.set(tp.topic, tp.partition, { errorCode: code, message: r && !r.ok ? r.reason : 'election failed' });
        }
      }
    }
    return { results, propagated };
  }

  /** /admin/preferred_replica_election was written (kafka-preferred-replica-election.sh, Kafka 2.x). */
  async onPreferredReplicaElectionZNode(): Promise<void> {
    const zk = this.d.kzk.zk;
    const n = await zk.getOrNull(PreferredReplicaElectionZNode.path);
    if (!n) return;
    let partitions: TopicPartition[] = [];
    try {
      partitions = PreferredReplicaElectionZNode.decode(n.data);
    } catch (err) {
      this.d.log.warn({ err: (err as Error).message }, 'ignoring a malformed preferred replica election request');
    }
    const known = partitions.filter((tp) => this.d.ctx.assignment(tp));
    const { results } = await this.elect(known, ElectionType.PREFERRED);
    this.d.stateChangeLogger.info(
      { partitions: known.length, elected: [...results.values()].filter((r) => r.errorCode === 0).length },
      'preferred replica election (admin znode)',
    );
    // fenced, as Kafka's deletePreferredReplicaElection
    await controllerFencedDelete(zk, this.d.ctx.epochZkVersion, PreferredReplicaElectionZNode.path).catch(() => undefined);
  }

  /** auto.leader.rebalance.enable: give leadership back to preferred replicas on imbalanced brokers. */
  async autoRebalance(): Promise<void> {
    if (await this.d.kzk.zk.exists(PreferredReplicaElectionZNode.path)) return; // an admin election is pending
    const tps = imbalancedPartitions(this.d.ctx, this.d.leaderImbalancePerBrokerPercentage);
    if (tps.length === 0) return;
    this.d.log.info({ partitions: tps.length }, 'auto leader rebalance: moving leadership back to preferred replicas');
    await this.elect(tps, ElectionType.PREFERRED);
  }

  /**
   * Kafka's doControlledShutdown: the broker stops leading (leaders re-elected among the other ISR
   * members) and following (removed from ISRs); answers the partitions it still leads (RF > 1).
   */
  async controlledShutdown(brokerId: number, brokerEpoch: bigint): Promise<{ errorCode: number; remaining: TopicPartition[]; propagated: Promise<void> }> {
    const now = Promise.resolve();
    if (!this.d.isActive()) return { errorCode: 41, remaining: [], propagated: now };
    const b = this.d.ctx.liveBrokers.get(brokerId);
    if (!b) return { errorCode: 8, remaining: [], propagated: now }; // BROKER_NOT_AVAILABLE
    if (brokerEpoch >= 0n && b.epoch !== undefined && brokerEpoch !== b.epoch) return { errorCode: 77, remaining: [], propagated: now }; // STALE_BROKER_EPOCH
    this.d.ctx.shuttingDownBrokerIds.add(brokerId);
    this.d.log.info({ brokerId }, 'controlled shutdown requested');
    const replicated = this.d.ctx
      .partitionsOnBroker(brokerId)
      .filter((tp) => this.d.ctx.replicas(tp).length > 1 && !this.d.ctx.topicsToBeDeleted.has(tp.topic));
    const led: TopicPartition[] = [];
    const followed: TopicPartition[] = [];
    for (const tp of replicated) (this.d.ctx.leadershipOf(tp)?.state.leader === brokerId ? led : followed).push(tp);
    // disjoint partitions: the elections and the ISR removals go to ZooKeeper together
    await Promise.all([
      led.length > 0 ? this.d.psm.handleStateChanges(led, 'OnlinePartition', { kind: 'controlledShutdown' }) : undefined,
      followed.length > 0
        ? this.d.rsm.handleStateChanges(
            followed.map((tp) => ({ tp, replica: brokerId })),
            'OfflineReplica',
          )
        : undefined,
    ]);
    const propagated = this.d.batch.send();
    // Kafka also lists partitions no other live ISR member could take over, which makes the last
    // broker of a cluster retry for nothing; only partitions that could still move are reported.
    const remaining = this.d.ctx.partitionsLedBy(brokerId).filter((tp) => {
      const isr = this.d.ctx.leadershipOf(tp)?.state.isr ?? [];
      return this.d.ctx.replicas(tp).length > 1 && isr.some((r) => r !== brokerId && this.d.ctx.isBrokerLive(r));
    });
    this.d.log.info({ brokerId, moved: led.length - remaining.length, remaining: remaining.length }, 'controlled shutdown processed');
    return { errorCode: 0, remaining, propagated };
  }
}
