import { topicPartitionKey, type PartitionState as LeaderAndIsrPartitionState, type TopicPartition } from '@samsa/protocol';
import type { Logger } from 'pino';
import type { ControllerContext } from './context.js';
import type { BrokerChannel, ControlResponse, StopReplicaPartition } from './requests.js';

/** StopReplica requests up to this size name their partitions in the state-change log; larger ones are counted. */
export const STOP_REPLICA_PARTITIONS_LOGGED = 100;

/**
 * Collects the control requests one controller action produces and sends them per broker in one go
 * (Kafka's ControllerBrokerRequestBatch): LeaderAndIsr to replicas, UpdateMetadata to everyone,
 * StopReplica to replicas being stopped. Always sent in that order per broker.
 */
export class RequestBatch {
  private readonly leaderAndIsr = new Map<number, Map<string, LeaderAndIsrPartitionState>>();
  private readonly updateMetadataBrokers = new Set<number>();
  private readonly updateMetadataPartitions = new Map<string, TopicPartition>();
  private updateMetadataAll = false;
  private readonly stopReplica = new Map<number, Map<string, StopReplicaPartition>>();

  constructor(
    private readonly ctx: ControllerContext,
    private readonly controllerId: number,
    private readonly channel: BrokerChannel,
    private readonly stateChangeLog: Logger,
    /** How long send()'s promise waits for UpdateMetadata answers at most (controller.socket.timeout.ms). */
    private readonly metadataAckTimeoutMs = 30_000,
  ) {}

  isEmpty(): boolean {
    return this.leaderAndIsr.size === 0 && this.updateMetadataBrokers.size === 0 && this.stopReplica.size === 0;
  }

  private partitionInfo(tp: TopicPartition, isNew: boolean): LeaderAndIsrPartitionState | undefined {
    const lead = this.ctx.leadershipOf(tp);
    const a = this.ctx.assignment(tp);
    if (!lead || !a) return undefined;
    return {
      topic: tp.topic,
      topicId: this.ctx.topicIds.get(tp.topic) ?? '',
      partition: tp.partition,
      controllerEpoch: lead.state.controllerEpoch,
      leader: lead.state.leader,
      leaderEpoch: lead.state.leaderEpoch,
      isr: lead.state.isr,
      zkVersion: lead.zkVersion,
      replicas: a.replicas,
      addingReplicas: a.addingReplicas,
      removingReplicas: a.removingReplicas,
      offlineReplicas: this.ctx.offlineReplicas(tp),
      isNew,
      leaderRecoveryState: 0,
    };
  }

  /** LeaderAndIsr for `tp` to each of `brokerIds`, plus UpdateMetadata for it to all brokers. */
  addLeaderAndIsr(brokerIds: Iterable<number>, tp: TopicPartition, isNew = false): void {
    const info = this.partitionInfo(tp, isNew);
    if (!info) return;
    for (const b of brokerIds) {
      if (b < 0) continue;
      let m = this.leaderAndIsr.get(b);
      if (!m) {
        m = new Map();
        this.leaderAndIsr.set(b, m);
      }
      const prev = m.get(topicPartitionKey(tp));
      m.set(topicPartitionKey(tp), { ...info, isNew: info.isNew || (prev?.isNew ?? false) });
    }
    this.addUpdateMetadata(this.ctx.liveBrokerIds(), [tp]);
  }

  /** UpdateMetadata to `brokerIds` for `partitions` (all partitions when undefined). */
  addUpdateMetadata(brokerIds: Iterable<number>, partitions?: TopicPartition[]): void {
    for (const b of brokerIds) this.updateMetadataBrokers.add(b);
    if (partitions === undefined) this.updateMetadataAll = true;
    else for (const tp of partitions) this.updateMetadataPartitions.set(topicPartitionKey(tp), tp);
  }

  addStopReplica(brokerIds: Iterable<number>, tp: TopicPartition, deletePartition: boolean): void {
    const leaderEpoch = this.ctx.leadershipOf(tp)?.state.leaderEpoch ?? -1;
    for (const b of brokerIds) {
      let m = this.stopReplica.get(b);
      if (!m) {
        m = new Map();
        this.stopReplica.set(b, m);
      }
      const prev = m.get(topicPartitionKey(tp));
      m.set(topicPartitionKey(tp), {
        topic: tp.topic,
        partition: tp.partition,
        leaderEpoch,
        deletePartition: deletePartition || (prev?.deletePartition ?? false),
      });
    }
  }

  /**
   * Sends everything collected and clears the batch. The promise resolves once every live broker
   * sent an UpdateMetadata has answered it (so, requests to a broker going out in order, has also
   * applied the LeaderAndIsr sent before it), or its request was dropped, or after
   * `metadataAckTimeoutMs`: callers that answer a client only once the cluster's metadata moved
   * (ControlledShutdown, ElectLeaders) wait for it. It never rejects.
   */
  send(onStopReplicaResponse?: (brokerId: number, r: ControlResponse) => void): Promise<void> {
    const acks: Array<Promise<void>> = [];
    const epoch = this.ctx.epoch;
    const liveBrokers = [...this.ctx.liveBrokers.values()];
    for (const [brokerId, parts] of this.leaderAndIsr) {
      if (!this.ctx.liveBrokers.has(brokerId)) continue;
      const partitions = [...parts.values()];
      const leaderIds = new Set(partitions.map((p) => p.leader));
      // per partition at debug, one info line per broker (Kafka 1.1 stopped logging every partition)
      this.stateChangeLog.info(
        { controllerId: this.controllerId, controllerEpoch: epoch, broker: brokerId, partitions: partitions.length },
        'sending LeaderAndIsr request',
      );
      for (const p of partitions) {
        this.stateChangeLog.debug(
          {
            controllerId: this.controllerId,
            controllerEpoch: epoch,
            broker: brokerId,
            topic: p.topic,
            partition: p.partition,
            leader: p.leader,
            leaderEpoch: p.leaderEpoch,
            isr: p.isr,
            replicas: p.replicas,
            isNew: p.isNew,
          },
          'sending LeaderAndIsr',
        );
      }
      this.channel.send(brokerId, {
        kind: 'LeaderAndIsr',
        controllerId: this.controllerId,
        controllerEpoch: epoch,
        brokerEpoch: this.ctx.brokerEpoch(brokerId),
        full: false,
        partitions,
        liveLeaders: liveBrokers.filter((b) => leaderIds.has(b.id)),
      });
    }
    if (this.updateMetadataBrokers.size > 0) {
      const tps = this.updateMetadataAll ? this.ctx.allPartitions() : [...this.updateMetadataPartitions.values()];
      const partitions = tps.map((tp) => this.partitionInfo(tp, false)).filter((p): p is LeaderAndIsrPartitionState => p !== undefined);
      for (const brokerId of this.updateMetadataBrokers) {
        if (!this.ctx.liveBrokers.has(brokerId)) continue;
        this.stateChangeLog.debug({ controllerEpoch: epoch, broker: brokerId, partitions: partitions.length }, 'sending UpdateMetadata');
        const request = {
          kind: 'UpdateMetadata',
          controllerId: this.controllerId,
          controllerEpoch: epoch,
          brokerEpoch: this.ctx.brokerEpoch(brokerId),
          partitions,
          liveBrokers,
        } as const;
        acks.push(new Promise<void>((resolve) => this.channel.send(brokerId, request, () => resolve(), resolve)));
      }
    }
    for (const [brokerId, parts] of this.stopReplica) {
      if (!this.ctx.liveBrokers.has(brokerId)) continue;
      const partitions = [...parts.values()];
      // the partitions named for small requests; a large one (a controlled shutdown's followers) is counted
      this.stateChangeLog.info(
        partitions.length <= STOP_REPLICA_PARTITIONS_LOGGED
          ? { controllerEpoch: epoch, broker: brokerId, partitions: partitions.map((p) => `${topicPartitionKey(p)}${p.deletePartition ? ' (delete)' : ''}`) }
          : {
              controllerEpoch: epoch,
              broker: brokerId,
              partitionCount: partitions.length,
              deletePartitions: partitions.filter((p) => p.deletePartition).length,
            },
        'sending StopReplica',
      );
      this.channel.send(
        brokerId,
        { kind: 'StopReplica', controllerId: this.controllerId, controllerEpoch: epoch, brokerEpoch: this.ctx.brokerEpoch(brokerId), partitions },
        onStopReplicaResponse ? (r) => onStopReplicaResponse(brokerId, r) : undefined,
      );
    }
    this.leaderAndIsr.clear();
    this.updateMetadataBrokers.clear();
    this.updateMetadataPartitions.clear();
    this.updateMetadataAll = false;
    this.stopReplica.clear();
    return acks.length === 0 ? Promise.resolve() : settleWithin(Promise.all(acks), this.metadataAckTimeoutMs);
  }
}

/** Resolves when `p` settles or after `ms`, whichever comes first (the timer does not hold the process). */
function settleWithin(p: Promise<unknown>, ms: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    timer.unref();
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    p.then(done, done);
  });
}
