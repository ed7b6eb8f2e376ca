/**
 * What the controller sends to brokers over the control plane (LeaderAndIsr, UpdateMetadata,
 * StopReplica), as plain objects. The channel manager encodes them as the protobuf messages of
 * @samsa/protocol's control plane. A partition's state is the control plane's PartitionState itself,
 * from the controller to the broker's replica manager and metadata cache.
 */
import type { PartitionState as LeaderAndIsrPartitionState } from '@samsa/protocol';
import type { BrokerInfo } from '@samsa/zk-paths';

export interface LeaderAndIsrRequest {
  kind: 'LeaderAndIsr';
  controllerId: number;
  controllerEpoch: number;
  brokerEpoch: bigint;
  /** FULL when the controller sends a broker its whole set (on failover / broker startup). */
  full: boolean;
  partitions: LeaderAndIsrPartitionState[];
  /** Leaders named in `partitions`, so followers know where to fetch from. */
  liveLeaders: BrokerInfo[];
}

export interface UpdateMetadataRequest {
  kind: 'UpdateMetadata';
  controllerId: number;
  controllerEpoch: number;
  brokerEpoch: bigint;
  partitions: LeaderAndIsrPartitionState[];
  liveBrokers: BrokerInfo[];
}

export interface StopReplicaPartition {
  topic: string;
  partition: number;
  leaderEpoch: number;
  deletePartition: boolean;
}

export interface StopReplicaRequest {
  kind: 'StopReplica';
  controllerId: number;
  controllerEpoch: number;
  brokerEpoch: bigint;
  partitions: StopReplicaPartition[];
}

export type ControlRequest = LeaderAndIsrRequest | UpdateMetadataRequest | StopReplicaRequest;

export interface ControlResponse {
  errorCode: number;
  /** Per-partition results (LeaderAndIsr / StopReplica). */
  partitionErrors: Array<{ topic: string; partition: number; errorCode: number }>;
}

/** Sends control requests to brokers (implemented over the CONTROLLER listener). */
export interface BrokerChannel {
  addBroker(broker: BrokerInfo): void;
  removeBroker(brokerId: number): void;
  /**
   * Queues a request; requests to one broker are sent and answered in order, retried until they
   * succeed or the broker is removed. `onResponse` (if any) gets the response; `onDropped` is
   * called instead when the request will never be answered (no channel to the broker, or the
   * broker was removed or the channel closed before an answer).
   */
  send(brokerId: number, request: ControlRequest, onResponse?: (r: ControlResponse) => void, onDropped?: () => void): void;
  close(): Promise<void>;
}
