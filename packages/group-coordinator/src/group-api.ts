/** The group APIs, for the coordinator's per-API validation (group id rules, load state). */
export const GroupApi = {
  JoinGroup: 'JoinGroup',
  SyncGroup: 'SyncGroup',
  Heartbeat: 'Heartbeat',
  LeaveGroup: 'LeaveGroup',
  OffsetCommit: 'OffsetCommit',
  TxnOffsetCommit: 'TxnOffsetCommit',
  OffsetFetch: 'OffsetFetch',
  DescribeGroups: 'DescribeGroups',
  DeleteGroups: 'DeleteGroups',
  OffsetDelete: 'OffsetDelete',
} as const;
export type GroupApi = (typeof GroupApi)[keyof typeof GroupApi];
