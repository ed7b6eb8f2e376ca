import { describe, expect, it } from 'vitest';
import { AclOperation, AclPatternType, AclPermissionType, AclResourceType } from '@samsa/protocol';
import { AclResourceZNode, LiteralAclStore, PrefixedAclStore } from './acl-znodes.js';

/** As Kafka's AclAuthorizer writes them (kafka-acls.sh --add, zkCli `get`). */
const REAL = {
  acls: '{"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow","operation":"Read","host":"*"},{"principal":"User:bob","permissionType":"Deny","operation":"DescribeConfigs","host":"10.0.0.1"}]}',
  literalChange: 'Topic:orders',
  prefixedChange: '{"version":1,"resourceType":"Topic","name":"orders-","patternType":"PREFIXED"}',
};

describe('acl znodes', () => {
  it('acl znodes – a resource node decodes and re-encodes byte for byte', () => {
    const acls = AclResourceZNode.decode(Buffer.from(REAL.acls), '/kafka-acl/Topic/orders');
    expect(acls).toEqual([
      { principal: 'User:alice', host: '*', operation: AclOperation.READ, permissionType: AclPermissionType.ALLOW },
      { principal: 'User:bob', host: '10.0.0.1', operation: AclOperation.DESCRIBE_CONFIGS, permissionType: AclPermissionType.DENY },
    ]);
    expect(AclResourceZNode.encode(acls).toString()).toBe(REAL.acls);
  });

  it('acl znodes – paths per pattern type and resource type', () => {
    expect(AclResourceZNode.path({ resourceType: AclResourceType.TOPIC, name: 'orders', patternType: AclPatternType.LITERAL })).toBe('/kafka-acl/Topic/orders');
    expect(AclResourceZNode.path({ resourceType: AclResourceType.TRANSACTIONAL_ID, name: 'tx-', patternType: AclPatternType.PREFIXED })).toBe(
      '/kafka-acl-extended/prefixed/TransactionalId/tx-',
    );
    expect(AclResourceZNode.path({ resourceType: AclResourceType.CLUSTER, name: 'kafka-cluster', patternType: AclPatternType.LITERAL })).toBe(
      '/kafka-acl/Cluster/kafka-cluster',
    );
  });

  it('acl znodes – change notifications: literal as Type:name, prefixed as JSON', () => {
    const lit = { resourceType: AclResourceType.TOPIC, name: 'orders', patternType: AclPatternType.LITERAL };
    const pre = { resourceType: AclResourceType.TOPIC, name: 'orders-', patternType: AclPatternType.PREFIXED };
    expect(LiteralAclStore.encodeChange(lit).toString()).toBe(REAL.literalChange);
    expect(PrefixedAclStore.encodeChange(pre).toString()).toBe(REAL.prefixedChange);
    expect(LiteralAclStore.decodeChange(Buffer.from('Group:g:1'), 'p')).toEqual({
      resourceType: AclResourceType.GROUP,
      name: 'g:1',
      patternType: AclPatternType.LITERAL,
    });
    expect(PrefixedAclStore.decodeChange(Buffer.from(REAL.prefixedChange), 'p')).toEqual(pre);
    expect(() => LiteralAclStore.decodeChange(Buffer.from('nonsense'), 'p')).toThrow(/ResourceType/);
  });
});
