import { AclOperation, ErrorCode, type SyncGroupResponse } from '@samsa/protocol';
import { syncError, type SyncGroupResult } from '@samsa/group-coordinator';
import type { ApiHandler } from '../api/api-handler.js';
import type { BrokerServices } from './services.js';
import { requireGroup } from '../security/authorizer.js';
import { checkStaticMembershipSupported } from './static-membership.js';

const response = (r: SyncGroupResult): SyncGroupResponse => ({
  throttleTimeMs: 0,
  errorCode: r.error,
  protocolType: r.protocolType,
  protocolName: r.protocolName,
  assignment: r.assignment,
});

/**
 * SyncGroup v0–v5: the second phase. The leader's assignments are stored in `__consumer_offsets`
 * (acks=-1) before every member gets its own; followers' requests are held until then. v5 must
 * carry the protocol type and name (INCONSISTENT_GROUP_PROTOCOL otherwise, as Kafka).
 */
export const syncGroupHandler: ApiHandler<14, BrokerServices> = {
  apiKey: 14,
  handle(req, ctx, s) {
    const b = req.body;
    const v = req.apiVersion;
    requireGroup(s, ctx, AclOperation.READ, b.groupId);
    checkStaticMembershipSupported(s, v >= 3 ? b.groupInstanceId : null);
    if (v >= 5 && (b.protocolType === null || b.protocolName === null)) return Promise.resolve(response(syncError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL)));
    return new Promise((resolve) => {
      // a sync answered later waited for the leader's assignment: Kafka's remote time
      let returnedAt = -1;
      s.groupCoordinator.handleSyncGroup(
        {
          groupId: b.groupId,
          generationId: b.generationId,
          memberId: b.memberId,
          protocolType: v >= 5 ? b.protocolType : null,
          protocolName: v >= 5 ? b.protocolName : null,
          groupInstanceId: v >= 3 ? b.groupInstanceId : null,
          assignments: new Map(b.assignments.map((a) => [a.memberId, Buffer.from(a.assignment)])),
        },
        (r) => {
          if (returnedAt >= 0 && ctx.timing) ctx.timing.remoteMs += performance.now() - returnedAt;
          resolve(response(r));
        },
      );
      returnedAt = performance.now();
    });
  },
  errorResponse(_req, code) {
    return response(syncError(code));
  },
};
