import { topicPartitionKey, type TopicPartition } from '@samsa/protocol';
import type { Logger } from 'pino';
import { type KafkaZk, type LeaderIsrAndControllerEpoch } from '@samsa/zk-paths';
import type { ControllerContext } from './context.js';
import { currentStates } from './current-states.js';
import {
  controlledShutdownPartitionLeaderElection,
  offlinePartitionLeaderElection,
  preferredReplicaPartitionLeaderElection,
  reassignPartitionLeaderElection,
  type ElectionResult,
} from './election.js';
import type { RequestBatch } from './request-batch.js';
import { isValidPartitionTransition, type PartitionState } from './states.js';

export type ElectionStrategy = { kind: 'offline'; allowUnclean: boolean } | { kind: 'preferred' } | { kind: 'reassign' } | { kind: 'controlledShutdown' };

export interface PartitionStateMachineDeps {
  ctx: ControllerContext;
  kzk: KafkaZk;
  batch: RequestBatch;
  stateChangeLog: Logger;
  /** Whether unclean election is enabled for a topic (topic config, else the broker default). */
  uncleanLeaderElectionEnabled: (topic: string) => Promise<boolean>;
  /** Told of each unclean leader election written (Kafka's UncleanLeaderElectionsPerSec). */
  onUncleanElection?: (tp: TopicPartition) => void;
}

/** Why a partition's transition failed (kept per partition, like Kafka's ElectionResults). */
export type PartitionResult = { ok: true; leader: number } | { ok: false; reason: string };

/**
 * Elections of one batch logged one line each at info up to this many partitions; a larger batch
 * (a broker failure or shutdown at thousands of partitions) logs them at debug and one summary line.
 */
export const PER_PARTITION_INFO_LIMIT = 100;

/**
 * Kafka's PartitionStateMachine: New → Online initializes leader and ISR (state znode created,
 * fenced), Offline/Online → Online elects a leader with a strategy (state znode updated
 * conditionally, fenced), and every change is queued on the request batch and written to the
 * state-change log. Illegal transitions are logged and skipped.
 */
export class PartitionStateMachine {
  constructor(private readonly d: PartitionStateMachineDeps) {}

  /** On controller failover: derive each partition's state from its leadership, then elect. */
  async startup(): Promise<void> {
    const { ctx } = this.d;
    for (const tp of ctx.allPartitions()) {
      const lead = ctx.leadershipOf(tp);
      if (!lead) ctx.putPartitionState(tp, 'NewPartition');
      else if (ctx.isReplicaOnline(lead.state.leader, tp, true)) ctx.putPartitionState(tp, 'OnlinePartition');
      else ctx.putPartitionState(tp, 'OfflinePartition');
    }
    await this.triggerOnlinePartitionStateChange();
  }

  /** Elects leaders for every New / Offline partition (topics being deleted excluded). */
  async triggerOnlinePartitionStateChange(topics?: ReadonlySet<string>): Promise<Map<string, PartitionResult>> {
    const { ctx } = this.d;
    const tps = ctx
      .partitionsInStates('NewPartition', 'OfflinePartition')
      .filter((tp) => !ctx.topicsToBeDeleted.has(tp.topic) && (!topics || topics.has(tp.topic)));
    return this.handleStateChanges(tps, 'OnlinePartition', { kind: 'offline', allowUnclean: false });
  }

  async handleStateChanges(tps: TopicPartition[], target: PartitionState, strategy?: ElectionStrategy): Promise<Map<string, PartitionResult>> {
    const { ctx, stateChangeLog: log } = this.d;
    const results = new Map<string, PartitionResult>();
    const valid: TopicPartition[] = [];
    for (const tp of tps) {
      const from = ctx.partitionState(tp);
      if (isValidPartitionTransition(from, target)) valid.push(tp);
      else {
        log.error({ topic: tp.topic, partition: tp.partition, from, to: target }, 'illegal partition state transition; skipped');
        results.set(topicPartitionKey(tp), { ok: false, reason: `illegal transition ${from} -> ${target}` });
      }
    }
    switch (target) {
      case 'NewPartition':
      case 'OfflinePartition':
      case 'NonExistentPartition':
        for (const tp of valid) this.transition(tp, target);
        break;
      case 'OnlinePartition': {
        const uninitialized = valid.filter((tp) => ctx.partitionState(tp) === 'NewPartition');
        const toElect = valid.filter((tp) => ctx.partitionState(tp) !== 'NewPartition');
        for (const [k, r] of await this.initializeLeaderAndIsr(uninitialized)) results.set(k, r);
        if (toElect.length > 0) {
          for (const [k, r] of await this.electLeaders(toElect, strategy ?? { kind: 'offline', allowUnclean: false })) results.set(k, r);
        }
        break;
      }
      default: {
        const never: never = target;
        throw new Error(`unknown partition state ${String(never)}`);
      }
    }
    return results;
  }

  private transition(tp: TopicPartition, to: PartitionState): void {
    const from = this.d.ctx.partitionState(tp);
    this.d.ctx.putPartitionState(tp, to);
    this.d.stateChangeLog.debug({ topic: tp.topic, partition: tp.partition, from, to }, 'partition state change');
  }

  /** New partitions: leader = first live replica, ISR = live replicas, epoch 0; state znode created. */
  private async initializeLeaderAndIsr(tps: TopicPartition[]): Promise<Map<string, PartitionResult>> {
    const { ctx, kzk, batch, stateChangeLog: log } = this.d;
    const results = new Map<string, PartitionResult>();
    const toCreate: Array<{ tp: TopicPartition; state: LeaderIsrAndControllerEpoch; live: number[] }> = [];
    for (const tp of tps) {
      const live = ctx.replicas(tp).filter((r) => ctx.isReplicaOnline(r, tp));
      if (live.length === 0) {
        log.error({ topic: tp.topic, partition: tp.partition, replicas: ctx.replicas(tp) }, 'no live replica for new partition; it stays NewPartition');
        results.set(topicPartitionKey(tp), { ok: false, reason: 'no live replicas' });
        continue;
      }
      toCreate.push({ tp, live, state: { leader: live[0]!, leaderEpoch: 0, isr: live, controllerEpoch: ctx.epoch } });
    }
    if (toCreate.length === 0) return results;
    const { created, existed } = await kzk.createPartitionStates(
      toCreate.map(({ tp, state }) => ({ tp, state })),
      ctx.epochZkVersion,
    );
    const createdKeys = new Set(created.map(topicPartitionKey));
    for (const { tp, state, live } of toCreate) {
      if (!createdKeys.has(topicPartitionKey(tp))) continue;
      ctx.setLeadership(tp, { state, zkVersion: 0 });
      batch.addLeaderAndIsr(live, tp, true);
      this.transition(tp, 'OnlinePartition');
      log.info({ topic: tp.topic, partition: tp.partition, leader: state.leader, isr: state.isr, leaderEpoch: 0 }, 'initialized leader and ISR');
      results.set(topicPartitionKey(tp), { ok: true, leader: state.leader });
    }
    for (const tp of existed) {
      log.error({ topic: tp.topic, partition: tp.partition }, 'partition state znode already exists; not initialized');
      results.set(topicPartitionKey(tp), { ok: false, reason: 'state znode already exists' });
    }
    return results;
  }

  /** Elects leaders, retrying partitions whose state znode changed under us. */
  private async electLeaders(tps: TopicPartition[], strategy: ElectionStrategy): Promise<Map<string, PartitionResult>> {
    const { ctx, kzk, batch, stateChangeLog: log } = this.d;
    const results = new Map<string, PartitionResult>();
    const noLeader = new Map<string, FailedElection>();
    let electedCount = 0;
    let remaining = tps;
    for (let attempt = 0; remaining.length > 0 && attempt < 10; attempt++) {
      // first pass from the controller's view (writes are conditional on its zkVersion); later passes read ZooKeeper
      const current = await currentStates(ctx, kzk, remaining, attempt === 0);
      const recheck: TopicPartition[] = [];
      const updates: Array<{ tp: TopicPartition; state: LeaderIsrAndControllerEpoch; expectedZkVersion: number; recipients: number[]; unclean: boolean }> = [];
      for (const tp of remaining) {
        const cur = current.get(topicPartitionKey(tp));
        if (!cur) {
          results.set(topicPartitionKey(tp), { ok: false, reason: 'no partition state in ZooKeeper' });
          continue;
        }
        if (cur.state.controllerEpoch > ctx.epoch) {
          if (!cur.fromZk) recheck.push(tp);
          else results.set(topicPartitionKey(tp), { ok: false, reason: `partition state written by a newer controller (epoch ${cur.state.controllerEpoch})` });
          continue;
        }
        const assignment = ctx.replicas(tp);
        const includeShuttingDown = strategy.kind === 'controlledShutdown';
        const live = new Set(assignment.filter((r) => ctx.isReplicaOnline(r, tp, includeShuttingDown)));
        let elected: ElectionResult | null;
        switch (strategy.kind) {
          case 'offline': {
            elected = offlinePartitionLeaderElection(assignment, cur.state.isr, live, strategy.allowUnclean);
            if (!elected && !strategy.allowUnclean && (await this.d.uncleanLeaderElectionEnabled(tp.topic))) {
              elected = offlinePartitionLeaderElection(assignment, cur.state.isr, live, true);
            }
            break;
          }
          case 'preferred':
            elected = preferredReplicaPartitionLeaderElection(assignment, cur.state.isr, live);
            break;
          case 'reassign': {
            const a = ctx.assignment(tp);
            const target = a ? a.replicas.filter((r) => !a.removingReplicas.includes(r)) : assignment;
            elected = reassignPartitionLeaderElection(target, cur.state.isr, live);
            break;
          }
          case 'controlledShutdown':
            elected = controlledShutdownPartitionLeaderElection(assignment, cur.state.isr, live, ctx.shuttingDownBrokerIds);
            break;
          default: {
            const never: never = strategy;
            throw new Error(`unknown election strategy ${JSON.stringify(never)}`);
          }
        }
        if (!elected && !cur.fromZk) {
          // no eligible leader by the controller's view: make sure with ZooKeeper's
          recheck.push(tp);
          continue;
        }
        if (!elected) {
          noLeader.set(topicPartitionKey(tp), { partition: topicPartitionKey(tp), replicas: assignment, isr: cur.state.isr, live: [...live] });
          results.set(topicPartitionKey(tp), {
            ok: false,
            reason: `no eligible leader among live replicas [${[...live].join(',')}] (isr [${cur.state.isr.join(',')}])`,
          });
          continue;
        }
        updates.push({
          tp,
          state: { leader: elected.leader, isr: elected.isr, leaderEpoch: cur.state.leaderEpoch + 1, controllerEpoch: ctx.epoch },
          expectedZkVersion: cur.zkVersion,
          recipients: [...live],
          unclean: elected.unclean,
        });
      }
      if (updates.length === 0 && recheck.length === 0) break;
      const { updated, stale } =
        updates.length > 0 ? await kzk.updateLeaderAndIsr(updates, ctx.epochZkVersion) : { updated: new Map<string, number>(), stale: [] };
      for (const u of updates) {
        const v = updated.get(topicPartitionKey(u.tp));
        if (v === undefined) continue;
        ctx.setLeadership(u.tp, { state: u.state, zkVersion: v });
        batch.addLeaderAndIsr(u.recipients, u.tp);
        this.transition(u.tp, 'OnlinePartition');
        electedCount++;
        // per partition at info for a small batch (the web console's timeline reads these lines), at debug beyond
        // PER_PARTITION_INFO_LIMIT (one info line per batch below); an unclean election is always a warning
        (u.unclean ? log.warn.bind(log) : updates.length <= PER_PARTITION_INFO_LIMIT ? log.info.bind(log) : log.debug.bind(log))(
          {
            topic: u.tp.topic,
            partition: u.tp.partition,
            leader: u.state.leader,
            isr: u.state.isr,
            leaderEpoch: u.state.leaderEpoch,
            strategy: strategy.kind,
            unclean: u.unclean,
          },
          'elected leader',
        );
        if (u.unclean) this.d.onUncleanElection?.(u.tp);
        results.set(topicPartitionKey(u.tp), { ok: true, leader: u.state.leader });
      }
      remaining = [...stale, ...recheck];
    }
    for (const tp of remaining) results.set(topicPartitionKey(tp), { ok: false, reason: 'partition state kept changing' });
    if (electedCount > 0) log.info({ strategy: strategy.kind, partitions: electedCount, controllerEpoch: ctx.epoch }, 'elected leaders');
    logFailedElections(log, strategy, [...noLeader.values()]);
    return results;
  }
}

interface FailedElection {
  partition: string;
  replicas: number[];
  isr: number[];
  live: number[];
}

/** How many failed partitions the batch's error line names (the rest are counted, and each is at debug). */
export const FAILED_ELECTION_EXAMPLES = 5;

/**
 * The partitions of one election batch that found no eligible replica, as one state-change ERROR
 * (Kafka's level for a failed state change) with their count and a few examples, instead of a line
 * each: a cluster going down leaves every single-replica partition of the last broker leaderless,
 * which was ~1,500 identical lines. Each partition stays in the log at debug.
 */
function logFailedElections(log: Logger, strategy: ElectionStrategy, failed: FailedElection[]): void {
  if (failed.length === 0) return;
  for (const f of failed) log.debug({ ...f, strategy: strategy.kind }, 'leader election failed: no eligible replica');
  log.error(
    { strategy: strategy.kind, count: failed.length, examples: failed.slice(0, FAILED_ELECTION_EXAMPLES) },
    `leader election failed for ${failed.length} partition(s): no eligible replica`,
  );
}
