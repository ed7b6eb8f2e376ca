/**
 * Partition and replica states and their legal transitions, as transition tables (Kafka's
 * PartitionStateMachine / ReplicaStateMachine `validPreviousStates`).
 */
export const PartitionState = {
  NonExistentPartition: 'NonExistentPartition',
  NewPartition: 'NewPartition',
  OnlinePartition: 'OnlinePartition',
  OfflinePartition: 'OfflinePartition',
} as const;
export type PartitionState = (typeof PartitionState)[keyof typeof PartitionState];

/** target state → states it may be entered from. */
export const PARTITION_TRANSITIONS: Readonly<Record<PartitionState, readonly PartitionState[]>> = {
  NonExistentPartition: ['OfflinePartition'],
  NewPartition: ['NonExistentPartition'],
  OnlinePartition: ['NewPartition', 'OnlinePartition', 'OfflinePartition'],
  OfflinePartition: ['NewPartition', 'OnlinePartition', 'OfflinePartition'],
};

export const ReplicaState = {
  NewReplica: 'NewReplica',
  OnlineReplica: 'OnlineReplica',
  OfflineReplica: 'OfflineReplica',
  ReplicaDeletionStarted: 'ReplicaDeletionStarted',
  ReplicaDeletionSuccessful: 'ReplicaDeletionSuccessful',
  ReplicaDeletionIneligible: 'ReplicaDeletionIneligible',
  NonExistentReplica: 'NonExistentReplica',
} as const;
export type ReplicaState = (typeof ReplicaState)[keyof typeof ReplicaState];

export const REPLICA_TRANSITIONS: Readonly<Record<ReplicaState, readonly ReplicaState[]>> = {
  NewReplica: ['NonExistentReplica'],
  OnlineReplica: ['NewReplica', 'OnlineReplica', 'OfflineReplica', 'ReplicaDeletionIneligible'],
  OfflineReplica: ['NewReplica', 'OnlineReplica', 'OfflineReplica', 'ReplicaDeletionIneligible'],
  ReplicaDeletionStarted: ['OfflineReplica'],
  ReplicaDeletionSuccessful: ['ReplicaDeletionStarted'],
  ReplicaDeletionIneligible: ['OfflineReplica', 'ReplicaDeletionStarted'],
  NonExistentReplica: ['ReplicaDeletionSuccessful'],
};

export function isValidPartitionTransition(from: PartitionState, to: PartitionState): boolean {
  return PARTITION_TRANSITIONS[to].includes(from);
}

export function isValidReplicaTransition(from: ReplicaState, to: ReplicaState): boolean {
  return REPLICA_TRANSITIONS[to].includes(from);
}
