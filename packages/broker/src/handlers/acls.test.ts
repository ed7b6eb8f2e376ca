import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import {
  AclOperation as Op,
  AclPatternType,
  AclPermissionType,
  AclResourceType,
  ErrorCode,
  decodeResponse,
  encodeRecordBatch,
  encodeRequest,
  type ApiKey,
  type ApiRequestMap,
} from '@samsa/protocol';
import { FakeZkClient, FakeZkServer } from '@samsa/zk-paths';
import type { ConnectionInfo } from '../network/socket-server.js';
import { RequestHandler } from '../server/request-handler.js';
import { AclAuthorizer } from '../security/acl-authorizer.js';
import { userPrincipal } from '../security/kafka-principal.js';
import { produceKinds } from '../security/produce-auth.js';
import { aclHandlers } from './acls.js';

const logger = pino({ enabled: false });
const anonymous: ConnectionInfo = { id: 1, remote: '127.0.0.1:5000', listener: 'PLAINTEXT' };
const admin: ConnectionInfo = { ...anonymous, principal: userPrincipal('admin') };

async function call<K extends ApiKey>(rh: RequestHandler<unknown>, apiKey: K, version: number, body: ApiRequestMap[K], conn = admin) {
  const frame = await rh.handle(encodeRequest(apiKey, version, 1, 'c', body).subarray(4), conn);
  if (!(frame instanceof Buffer)) throw new Error('expected one frame');
  return decodeResponse(apiKey, version, frame.subarray(4)).body;
}

const creation = (name: string, patternType: number, principal: string, operation: number, permissionType: number = AclPermissionType.ALLOW) => ({
  resourceType: AclResourceType.TOPIC,
  resourceName: name,
  resourcePatternType: patternType,
  principal,
  host: '*',
  operation,
  permissionType,
});

const anyFilter = {
  resourceTypeFilter: AclResourceType.ANY,
  resourceNameFilter: null,
  patternTypeFilter: AclPatternType.ANY,
  principalFilter: null,
  hostFilter: null,
  operation: Op.ANY,
  permissionType: AclPermissionType.ANY,
};

async function withAuthorizer() {
  const authorizer = new AclAuthorizer(new FakeZkClient(new FakeZkServer()), { superUsers: 'User:admin', allowEveryoneIfNoAclFound: false }, logger);
  await authorizer.startup();
  return new RequestHandler<unknown>([...aclHandlers], { authorizer, log: logger }, logger);
}

describe('acl handlers', () => {
  it('acl handlers – without an authorizer every ACL API answers SECURITY_DISABLED', async () => {
    const rh = new RequestHandler<unknown>([...aclHandlers], { log: logger }, logger);
    const c = await call(rh, 30, 2, { creations: [creation('t', AclPatternType.LITERAL, 'User:a', Op.READ)] });
    expect(c.results[0]!.errorCode).toBe(ErrorCode.SECURITY_DISABLED);
    expect((await call(rh, 29, 2, anyFilter)).errorCode).toBe(ErrorCode.SECURITY_DISABLED);
    expect((await call(rh, 31, 2, { filters: [anyFilter] })).filterResults[0]!.errorCode).toBe(ErrorCode.SECURITY_DISABLED);
  });

  it('acl handlers – creating and deleting need ALTER on the cluster, describing DESCRIBE', async () => {
    const rh = await withAuthorizer();
    const c = await call(rh, 30, 1, { creations: [creation('t', AclPatternType.LITERAL, 'User:a', Op.READ)] }, anonymous);
    expect(c.results[0]!.errorCode).toBe(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    expect((await call(rh, 29, 1, anyFilter, anonymous)).errorCode).toBe(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    expect((await call(rh, 31, 1, { filters: [anyFilter] }, anonymous)).filterResults[0]!.errorCode).toBe(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
  });

  it('acl handlers – create, describe grouped by resource pattern (MATCH filter), delete returns what it deleted', async () => {
    const rh = await withAuthorizer();
    const created = await call(rh, 30, 2, {
      creations: [
        creation('orders-', AclPatternType.PREFIXED, 'User:alice', Op.READ),
        creation('orders-', AclPatternType.PREFIXED, 'User:bob', Op.WRITE, AclPermissionType.DENY),
        creation('orders-eu', AclPatternType.LITERAL, 'User:alice', Op.DESCRIBE),
        creation('x', AclPatternType.MATCH, 'User:alice', Op.READ),
      ],
    });
    expect(created.results.map((r) => r.errorCode)).toEqual([0, 0, 0, ErrorCode.INVALID_REQUEST]);
    const described = await call(rh, 29, 1, {
      ...anyFilter,
      resourceTypeFilter: AclResourceType.TOPIC,
      resourceNameFilter: 'orders-eu',
      patternTypeFilter: AclPatternType.MATCH,
    });
    expect(described.errorCode).toBe(0);
    expect(described.resources.map((r) => [r.resourceName, r.patternType, r.acls.length])).toEqual([
      ['orders-', AclPatternType.PREFIXED, 2],
      ['orders-eu', AclPatternType.LITERAL, 1],
    ]);
    // v0 knows only literal patterns: the filter is literal by default
    const v0 = await call(rh, 29, 0, { ...anyFilter, patternTypeFilter: AclPatternType.LITERAL });
    expect(v0.resources.map((r) => r.resourceName)).toEqual(['orders-eu']);
    const deleted = await call(rh, 31, 2, { filters: [{ ...anyFilter, principalFilter: 'User:alice' }] });
    expect(deleted.filterResults[0]!.matchingAcls.map((m) => [m.resourceName, m.patternType, m.principal, m.operation])).toEqual([
      ['orders-', AclPatternType.PREFIXED, 'User:alice', Op.READ],
      ['orders-eu', AclPatternType.LITERAL, 'User:alice', Op.DESCRIBE],
    ]);
    const left = await call(rh, 29, 2, anyFilter);
    expect(left.resources.flatMap((r) => r.acls.map((a) => a.principal))).toEqual(['User:bob']);
  });
});

describe('produce authorization', () => {
  it('produce authorization – tells transactional and idempotent batches from plain ones', () => {
    const records = [{ key: null, value: Buffer.from('v') }];
    const data = (b: Buffer) => [{ name: 't', partitionData: [{ index: 0, records: b }] }];
    expect(produceKinds(data(encodeRecordBatch({ records })))).toEqual({ transactional: false, idempotent: false });
    expect(produceKinds(data(encodeRecordBatch({ records, producerId: 7, producerEpoch: 0, baseSequence: 0 })))).toEqual({
      transactional: false,
      idempotent: true,
    });
    expect(produceKinds(data(encodeRecordBatch({ records, producerId: 7, producerEpoch: 0, baseSequence: 0, transactional: true })))).toEqual({
      transactional: true,
      idempotent: true,
    });
    // a plain batch followed by a transactional one in the same partition data
    const two = Buffer.concat([
      encodeRecordBatch({ records }),
      encodeRecordBatch({ records, producerId: 7, producerEpoch: 0, baseSequence: 0, transactional: true }),
    ]);
    expect(produceKinds(data(two)).transactional).toBe(true);
  });
});
