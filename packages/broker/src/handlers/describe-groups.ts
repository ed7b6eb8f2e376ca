import { AclOperation, AclResourceType, ErrorCode, type DescribeGroupsResponseGroup } from '@samsa/protocol';
import type { ApiHandler } from '../api/api-handler.js';
import type { BrokerServices } from './services.js';
import { AUTHORIZED_OPERATIONS_OMITTED, SUPPORTED_OPERATIONS, authorize, authorizedOperations } from '../security/authorizer.js';

const NO_OPS = AUTHORIZED_OPERATIONS_OMITTED;
/** Without an authorizer Kafka reports every operation a group supports: READ(3), DELETE(6), DESCRIBE(8). */

/**
 * DescribeGroups v0–v5: state, protocol type, selected protocol and members; member metadata and
 * assignments only once the group is Stable. An unknown group is described as Dead with no
 * members (no error), a group of another coordinator answers NOT_COORDINATOR.
 */
export const describeGroupsHandler: ApiHandler<15, BrokerServices> = {
  apiKey: 15,
  async handle(req, ctx, s) {
    const includeOps = req.apiVersion >= 3 && req.body.includeAuthorizedOperations;
    const groups: DescribeGroupsResponseGroup[] = req.body.groups.map((groupId) => {
      if (!authorize(s, ctx, AclOperation.DESCRIBE, AclResourceType.GROUP, groupId)) return describeGroupsError(groupId, ErrorCode.GROUP_AUTHORIZATION_FAILED);
      const { error, summary } = s.groupCoordinator.handleDescribeGroup(groupId);
      return {
        errorCode: error,
        groupId,
        groupState: summary.state,
        protocolType: summary.protocolType,
        protocolData: summary.protocol,
        members: summary.members.map((m) => ({
          memberId: m.memberId,
          groupInstanceId: m.groupInstanceId,
          clientId: m.clientId,
          clientHost: m.clientHost,
          memberMetadata: m.metadata,
          memberAssignment: m.assignment,
        })),
        authorizedOperations: includeOps && error === 0 ? authorizedOperations(s, ctx, AclResourceType.GROUP, groupId, SUPPORTED_OPERATIONS.group) : NO_OPS,
      };
    });
    return { throttleTimeMs: 0, groups };
  },
  errorResponse(req, code) {
    return { throttleTimeMs: 0, groups: req.body.groups.map((groupId) => describeGroupsError(groupId, code)) };
  },
};

function describeGroupsError(groupId: string, errorCode: number): DescribeGroupsResponseGroup {
  return { errorCode, groupId, groupState: '', protocolType: '', protocolData: '', members: [], authorizedOperations: NO_OPS };
}
