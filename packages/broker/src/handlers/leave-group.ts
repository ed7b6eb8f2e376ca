import { AclOperation, ErrorCode, type LeaveGroupResponse } from '@samsa/protocol';
import type { LeaveGroupResult } from '@samsa/group-coordinator';
import type { ApiHandler } from '../api/api-handler.js';
import type { BrokerServices } from './services.js';
import { requireGroup } from '../security/authorizer.js';

/** Kafka's LeaveGroupResponse(data, version): before v3 one error (the top-level one, else the member's). */
function response(r: LeaveGroupResult, version: number): LeaveGroupResponse {
  if (version >= 3) {
    return {
      throttleTimeMs: 0,
      errorCode: r.topLevelError,
      members: r.members.map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, errorCode: m.error })),
    };
  }
  const errorCode = r.topLevelError !== ErrorCode.NONE ? r.topLevelError : (r.members[0]?.error ?? ErrorCode.NONE);
  return { throttleTimeMs: 0, errorCode, members: [] };
}

/**
 * LeaveGroup v0–v5: v0–v2 one member by id, v3+ a batch of members by id or by group.instance.id
 * (administrative removal of static members), v5 with reasons.
 */
export const leaveGroupHandler: ApiHandler<13, BrokerServices> = {
  apiKey: 13,
  async handle(req, ctx, s) {
    const b = req.body;
    requireGroup(s, ctx, AclOperation.READ, b.groupId);
    const v = req.apiVersion;
    const members =
      v >= 3
        ? b.members.map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, reason: v >= 5 ? m.reason : null }))
        : [{ memberId: b.memberId, groupInstanceId: null, reason: null }];
    return response(s.groupCoordinator.handleLeaveGroup(b.groupId, members), v);
  },
  errorResponse(req, code) {
    return response({ topLevelError: code, members: [] }, req.apiVersion);
  },
};
