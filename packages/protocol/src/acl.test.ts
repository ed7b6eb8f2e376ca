import { describe, expect, it } from 'vitest';
import {
  AclOperation,
  AclPatternType,
  AclPermissionType,
  AclResourceType,
  accessControlEntryToString,
  aclOperationPascal,
  parseAclOperation,
  patternFilterMatches,
  resourcePatternToString,
  type AclBindingFilter,
} from './acl.js';

const T = AclResourceType.TOPIC;
const filter = (name: string | null, patternType: AclPatternType, resourceType: AclResourceType = T): AclBindingFilter['patternFilter'] => ({
  resourceType,
  name,
  patternType,
});

describe('acl – names and filters', () => {
  it('prints patterns and entries as Kafka toString, names operations as Kafka does in ZooKeeper', () => {
    expect(resourcePatternToString({ resourceType: T, name: 'orders-', patternType: AclPatternType.PREFIXED })).toBe(
      'ResourcePattern(resourceType=TOPIC, name=orders-, patternType=PREFIXED)',
    );
    expect(accessControlEntryToString({ principal: 'User:alice', host: '*', operation: AclOperation.READ, permissionType: AclPermissionType.ALLOW })).toBe(
      '(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)',
    );
    expect(aclOperationPascal(AclOperation.DESCRIBE_CONFIGS)).toBe('DescribeConfigs');
    expect(aclOperationPascal(AclOperation.IDEMPOTENT_WRITE)).toBe('IdempotentWrite');
    expect(parseAclOperation('describe-configs'.replace('-', '_'))).toBe(AclOperation.DESCRIBE_CONFIGS);
    expect(parseAclOperation('ClusterAction')).toBe(AclOperation.CLUSTER_ACTION);
  });

  it('pattern filters: ANY matches the exact name in every pattern type, MATCH every pattern applying to the name', () => {
    const literal = { resourceType: T, name: 'orders-eu', patternType: AclPatternType.LITERAL };
    const prefixed = { resourceType: T, name: 'orders-', patternType: AclPatternType.PREFIXED };
    const wildcard = { resourceType: T, name: '*', patternType: AclPatternType.LITERAL };
    expect(patternFilterMatches(filter('orders-eu', AclPatternType.MATCH), literal)).toBe(true);
    expect(patternFilterMatches(filter('orders-eu', AclPatternType.MATCH), prefixed)).toBe(true);
    expect(patternFilterMatches(filter('orders-eu', AclPatternType.MATCH), wildcard)).toBe(true);
    expect(patternFilterMatches(filter('orders-eu', AclPatternType.ANY), prefixed)).toBe(false);
    expect(patternFilterMatches(filter('orders-', AclPatternType.ANY), prefixed)).toBe(true);
    expect(patternFilterMatches(filter('orders-', AclPatternType.LITERAL), prefixed)).toBe(false);
    expect(patternFilterMatches(filter(null, AclPatternType.ANY, AclResourceType.ANY), prefixed)).toBe(true);
    expect(patternFilterMatches(filter(null, AclPatternType.ANY, AclResourceType.GROUP), prefixed)).toBe(false);
  });
});
