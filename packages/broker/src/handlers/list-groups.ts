import { AclOperation, AclResourceType } from '@samsa/protocol';
import type { ApiHandler } from '../api/api-handler.js';
import type { BrokerServices } from './services.js';
import { authorizeCluster, authorizedNames } from '../security/authorizer.js';

/**
 * ListGroups v0–v5: the groups this broker coordinates (COORDINATOR_LOAD_IN_PROGRESS while an
 * offsets partition is loading, with what is loaded); v4+ filter by state (case-insensitive),
 * v5+ by type (every group here is "classic").
 */
export const listGroupsHandler: ApiHandler<16, BrokerServices> = {
  apiKey: 16,
  async handle(req, ctx, s) {
    const v = req.apiVersion;
    const states = new Set(v >= 4 ? req.body.statesFilter : []);
    const types = new Set(v >= 5 ? req.body.typesFilter : []);
    const r = s.groupCoordinator.handleListGroups(states, types);
    // DESCRIBE on the cluster lists every group, else those the principal may DESCRIBE
    const all = authorizeCluster(s, ctx, AclOperation.DESCRIBE, { logIfDenied: false });
    const visible = all
      ? null
      : authorizedNames(
          s,
          ctx,
          AclOperation.DESCRIBE,
          AclResourceType.GROUP,
          r.groups.map((g) => g.groupId),
          { logIfDenied: false },
        );
    return {
      throttleTimeMs: 0,
      errorCode: r.error,
      groups: (visible ? r.groups.filter((g) => visible.has(g.groupId)) : r.groups).map((g) => ({
        groupId: g.groupId,
        protocolType: g.protocolType,
        groupState: g.state,
        groupType: g.groupType,
      })),
    };
  },
  errorResponse(_req, code) {
    return { throttleTimeMs: 0, errorCode: code, groups: [] };
  },
};
