import { AclOperation, AclResourceType, ErrorCode } from '@samsa/protocol';
import type { ApiHandler } from '../api/api-handler.js';
import type { BrokerServices } from './services.js';
import { authorizedNames } from '../security/authorizer.js';

/**
 * DeleteGroups v0–v2: an Empty group is deleted with its offsets (tombstones in
 * `__consumer_offsets`); NON_EMPTY_GROUP while it has members, GROUP_ID_NOT_FOUND when there is
 * no such group here, NOT_COORDINATOR for another coordinator's group.
 */
export const deleteGroupsHandler: ApiHandler<42, BrokerServices> = {
  apiKey: 42,
  async handle(req, ctx, s) {
    const names = [...new Set(req.body.groupNames)];
    const deletable = authorizedNames(s, ctx, AclOperation.DELETE, AclResourceType.GROUP, names);
    const errors = s.groupCoordinator.handleDeleteGroups(names.filter((n) => deletable.has(n)));
    for (const n of names) if (!deletable.has(n)) errors.set(n, ErrorCode.GROUP_AUTHORIZATION_FAILED);
    return { throttleTimeMs: 0, results: names.map((groupId) => ({ groupId, errorCode: errors.get(groupId) ?? 0 })) };
  },
  errorResponse(req, code) {
    return { throttleTimeMs: 0, results: [...new Set(req.body.groupNames)].map((groupId) => ({ groupId, errorCode: code })) };
  },
};
