import { AclOperation, type JoinGroupResponse } from '@samsa/protocol';
import { UNKNOWN_MEMBER_ID, clientHostOf, joinError, type JoinGroupResult } from '@samsa/group-coordinator';
import type { ApiHandler } from '../api/api-handler.js';
import type { BrokerServices } from './services.js';
import { requireGroup } from '../security/authorizer.js';
import { checkStaticMembershipSupported } from './static-membership.js';

function response(r: JoinGroupResult, version: number): JoinGroupResponse {
  return {
    throttleTimeMs: 0,
    errorCode: r.error,
    generationId: r.generationId,
    protocolType: r.protocolType,
    // before v7 the protocol name is not nullable: Kafka sends ""
    protocolName: r.protocolName ?? (version < 7 ? '' : null),
    leader: r.leaderId,
    skipAssignment: r.skipAssignment,
    memberId: r.memberId,
    members: r.members,
  };
}

/**
 * JoinGroup v0–v9: the first phase of a rebalance. The answer is held until the group's rebalance
 * completes (every member rejoined, or the largest rebalance timeout). v4+ new dynamic members get
 * MEMBER_ID_REQUIRED with their id first (KIP-394); v5+ static members (group.instance.id);
 * v0 has no rebalance timeout (the session timeout is used); v9 may skip the assignment (KIP-814).
 */
export const joinGroupHandler: ApiHandler<11, BrokerServices> = {
  apiKey: 11,
  handle(req, ctx, s) {
    const b = req.body;
    const v = req.apiVersion;
    const groupInstanceId = v >= 5 ? b.groupInstanceId : null;
    requireGroup(s, ctx, AclOperation.READ, b.groupId);
    checkStaticMembershipSupported(s, groupInstanceId);
    return new Promise((resolve) => {
      // a join answered later waited in the rebalance purgatory: Kafka's remote time
      let returnedAt = -1;
      s.groupCoordinator.handleJoinGroup(
        {
          groupId: b.groupId,
          memberId: b.memberId,
          groupInstanceId,
          requireKnownMemberId: v >= 4 && groupInstanceId === null,
          supportSkippingAssignment: v >= 9,
          clientId: ctx.clientId ?? '',
          clientHost: clientHostOf(ctx.conn.remote),
          rebalanceTimeoutMs: v === 0 ? b.sessionTimeoutMs : b.rebalanceTimeoutMs,
          sessionTimeoutMs: b.sessionTimeoutMs,
          protocolType: b.protocolType,
          // request buffers are reused by the connection: keep copies
          protocols: b.protocols.map((p) => ({ name: p.name, metadata: Buffer.from(p.metadata) })),
          reason: v >= 8 ? b.reason : null,
        },
        (r) => {
          if (returnedAt >= 0 && ctx.timing) ctx.timing.remoteMs += performance.now() - returnedAt;
          resolve(response(r, v));
        },
      );
      returnedAt = performance.now();
    });
  },
  errorResponse(req, code) {
    return response(joinError(UNKNOWN_MEMBER_ID, code), req.apiVersion);
  },
};
