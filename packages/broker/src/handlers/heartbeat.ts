import { AclOperation } from '@samsa/protocol';
import type { ApiHandler } from '../api/api-handler.js';
import type { BrokerServices } from './services.js';
import { requireGroup } from '../security/authorizer.js';
import { checkStaticMembershipSupported } from './static-membership.js';

/**
 * Heartbeat v0–v4: keeps a member's session alive; REBALANCE_IN_PROGRESS tells it to rejoin,
 * ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID / FENCED_INSTANCE_ID that it was fenced.
 */
export const heartbeatHandler: ApiHandler<12, BrokerServices> = {
  apiKey: 12,
  async handle(req, ctx, s) {
    const b = req.body;
    requireGroup(s, ctx, AclOperation.READ, b.groupId);
    checkStaticMembershipSupported(s, req.apiVersion >= 3 ? b.groupInstanceId : null);
    const errorCode = s.groupCoordinator.handleHeartbeat(b.groupId, b.memberId, req.apiVersion >= 3 ? b.groupInstanceId : null, b.generationId);
    return { throttleTimeMs: 0, errorCode };
  },
  errorResponse(_req, code) {
    return { throttleTimeMs: 0, errorCode: code };
  },
};
