import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { AclOperation as Op, AclPatternType, AclPermissionType, AclResourceType, ErrorCode, type ProduceRequestTopic } from '@samsa/protocol';
import { FakeZkClient, FakeZkServer } from '@samsa/zk-paths';
import type { RequestContext } from '../api/api-handler.js';
import { CloseConnection } from '../network/socket-server.js';
import { answerAll } from '../replica/produce-response.js';
import { AclAuthorizer } from '../security/acl-authorizer.js';
import type { BrokerServices } from './services.js';
import { produceHandler } from './produce.js';

const ctx = (): RequestContext => ({ conn: { id: 1, remote: '127.0.0.1:4000', listener: 'PLAINTEXT' }, clientId: 'c', listener: 'PLAINTEXT' });
const topicData: ProduceRequestTopic[] = [{ name: 't', partitionData: [{ index: 0, records: Buffer.alloc(0) }] }];
const request = (acks: number) =>
  ({
    ok: true,
    apiKey: 0,
    apiVersion: 8,
    body: { transactionalId: null, acks, timeoutMs: 1000, topicData },
    header: { correlationId: 1, clientId: 'c' },
  }) as never;

/** A replica manager that answers every append with `code`. */
function services(code: number, authorizer?: AclAuthorizer): BrokerServices {
  return {
    log: pino({ enabled: false }),
    ...(authorizer ? { authorizer } : {}),
    replicaManager: {
      appendRecords: (_t: number, _a: number, _o: unknown, _v: number, entries: ProduceRequestTopic[], cb: (r: unknown) => void) =>
        cb(answerAll(entries, code)),
    },
  } as unknown as BrokerServices;
}

async function denyingAuthorizer(): Promise<AclAuthorizer> {
  const a = new AclAuthorizer(new FakeZkClient(new FakeZkServer()), { superUsers: '', allowEveryoneIfNoAclFound: false }, pino({ enabled: false }));
  await a.startup();
  await a.createAcls([
    {
      pattern: { resourceType: AclResourceType.TOPIC, name: '*', patternType: AclPatternType.LITERAL },
      entry: { principal: 'User:x', host: '*', operation: Op.ALL, permissionType: AclPermissionType.ALLOW },
    },
  ]);
  return a;
}

describe('produce – acks=0 errors close the connection (Kafka)', () => {
  it('produce acks=0 – a partition error closes the connection instead of a response', async () => {
    await expect(produceHandler.handle(request(0), ctx(), services(ErrorCode.NOT_LEADER_OR_FOLLOWER))).rejects.toThrow(CloseConnection);
    await expect(produceHandler.handle(request(0), ctx(), services(ErrorCode.NOT_LEADER_OR_FOLLOWER))).rejects.toThrow(/NOT_LEADER_OR_FOLLOWER/);
  });

  it('produce acks=0 – a successful append has no response and keeps the connection', async () => {
    await expect(produceHandler.handle(request(0), ctx(), services(ErrorCode.NONE))).resolves.toBeNull();
  });

  it('produce acks=0 – a topic the principal may not write closes the connection; acks=1 answers TOPIC_AUTHORIZATION_FAILED', async () => {
    const a = await denyingAuthorizer();
    await expect(produceHandler.handle(request(0), ctx(), services(ErrorCode.NONE, a))).rejects.toThrow(/TOPIC_AUTHORIZATION_FAILED/);
    const r = await produceHandler.handle(request(1), ctx(), services(ErrorCode.NONE, a));
    expect(r?.responses[0]?.partitionResponses[0]?.errorCode).toBe(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
  });
});
