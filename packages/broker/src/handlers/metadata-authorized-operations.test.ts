import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { AclOperation as Op, AclPatternType, AclPermissionType, AclResourceType } from '@samsa/protocol';
import { FakeZkClient, FakeZkServer } from '@samsa/zk-paths';
import type { RequestContext } from '../api/api-handler.js';
import { userPrincipal } from '../security/kafka-principal.js';
import { AclAuthorizer } from '../security/acl-authorizer.js';
import type { BrokerServices } from './services.js';
import { metadataHandler } from './metadata.js';

const ctx: RequestContext = {
  conn: { id: 1, remote: '127.0.0.1:4000', listener: 'PLAINTEXT', principal: userPrincipal('alice') },
  clientId: 'c',
  listener: 'PLAINTEXT',
};

function services(authorizer?: AclAuthorizer): BrokerServices {
  return {
    ...(authorizer ? { authorizer } : {}),
    log: pino({ enabled: false }),
    clusterId: 'c1',
    settings: { autoCreateTopicsEnable: false },
    metadata: {
      aliveBrokers: () => [],
      controllerId: 0,
      allTopics: () => ['orders'],
      hasTopic: (t: string) => t === 'orders',
      topicId: () => undefined,
      partitions: () => [],
    },
  } as unknown as BrokerServices;
}

const request = (version: number, includeOps: boolean) =>
  ({
    ok: true,
    apiKey: 3,
    apiVersion: version,
    body: {
      topics: [{ name: 'orders', topicId: Buffer.alloc(16) }],
      allowAutoTopicCreation: false,
      includeClusterAuthorizedOperations: includeOps,
      includeTopicAuthorizedOperations: includeOps,
    },
    header: { correlationId: 1, clientId: 'c' },
  }) as never;

const bits = (...ops: number[]) => ops.reduce((b, op) => b | (1 << op), 0);

describe('metadata – authorized operations (KIP-430)', () => {
  it('metadata authorized operations – only what the ACLs allow the principal, when asked', async () => {
    const a = new AclAuthorizer(new FakeZkClient(new FakeZkServer()), { superUsers: '', allowEveryoneIfNoAclFound: false }, pino({ enabled: false }));
    await a.startup();
    await a.createAcls([
      {
        pattern: { resourceType: AclResourceType.TOPIC, name: 'ord', patternType: AclPatternType.PREFIXED },
        entry: { principal: 'User:alice', host: '*', operation: Op.READ, permissionType: AclPermissionType.ALLOW },
      },
      {
        pattern: { resourceType: AclResourceType.CLUSTER, name: 'kafka-cluster', patternType: AclPatternType.LITERAL },
        entry: { principal: 'User:alice', host: '*', operation: Op.CREATE, permissionType: AclPermissionType.ALLOW },
      },
    ]);
    const r = await metadataHandler.handle(request(8, true), ctx, services(a));
    // READ implies DESCRIBE
    expect(r?.topics[0]?.topicAuthorizedOperations).toBe(bits(Op.READ, Op.DESCRIBE));
    expect(r?.clusterAuthorizedOperations).toBe(bits(Op.CREATE));
    const notAsked = await metadataHandler.handle(request(8, false), ctx, services(a));
    expect(notAsked?.topics[0]?.topicAuthorizedOperations).toBe(-2147483648);
    expect(notAsked?.clusterAuthorizedOperations).toBe(-2147483648);
  });

  it('metadata authorized operations – without an authorizer every supported operation is reported', async () => {
    const r = await metadataHandler.handle(request(9, true), ctx, services());
    expect(r?.topics[0]?.topicAuthorizedOperations).toBe(
      bits(Op.READ, Op.WRITE, Op.CREATE, Op.DESCRIBE, Op.DELETE, Op.ALTER, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS),
    );
  });
});
