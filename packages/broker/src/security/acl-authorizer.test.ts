import type { AuthContext } from './authorizer.js';
import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { AclOperation as Op, AclPatternType, AclPermissionType, AclResourceType, ErrorCode, type AclBinding, type AclBindingFilter } from '@samsa/protocol';
import { FakeZkClient, FakeZkServer } from '@samsa/zk-paths';
import { AclAuthorizer, hostOf, parseSuperUsers } from './acl-authorizer.js';
import { userPrincipal } from './kafka-principal.js';

function capturing() {
  const lines: Array<Record<string, unknown>> = [];
  const stream = { write: (s: string) => s.split('\n').forEach((l) => l.trim() && lines.push(JSON.parse(l) as Record<string, unknown>)) };
  return { logger: pino({ level: 'debug' }, stream), lines };
}

const ctx = (name?: string, remote = '127.0.0.1:50000', apiKey = 0): AuthContext => ({
  conn: { remote, ...(name ? { principal: userPrincipal(name) } : {}) },
  apiKey,
});

const binding = (
  name: string,
  patternType: AclPatternType,
  principal: string,
  operation: Op,
  permissionType: AclPermissionType = AclPermissionType.ALLOW,
): AclBinding => ({
  pattern: { resourceType: AclResourceType.TOPIC, name, patternType },
  entry: { principal, host: '*', operation, permissionType },
});

const ALL_FILTER: AclBindingFilter = {
  patternFilter: { resourceType: AclResourceType.ANY, name: null, patternType: AclPatternType.ANY },
  entryFilter: { principal: null, host: null, operation: Op.ANY, permissionType: AclPermissionType.ANY },
};

const topicAction = (operation: Op, name: string) => ({ operation, resourceType: AclResourceType.TOPIC, name });

async function started(server: FakeZkServer, opts = { superUsers: '', allowEveryoneIfNoAclFound: false }, logger = pino({ enabled: false })) {
  const a = new AclAuthorizer(new FakeZkClient(server), opts, logger);
  await a.startup();
  return a;
}

describe('acl authorizer – ZooKeeper store, decisions and log', () => {
  it('stores created ACLs as Kafka does and answers from them; the principal comes from the connection (ANONYMOUS when unset)', async () => {
    const server = new FakeZkServer();
    const a = await started(server);
    const results = await a.createAcls([
      binding('orders-', AclPatternType.PREFIXED, 'User:alice', Op.READ),
      binding('payments', AclPatternType.LITERAL, 'User:ANONYMOUS', Op.WRITE),
    ]);
    expect(results).toEqual([null, null]);
    const zk = new FakeZkClient(server);
    expect((await zk.get('/kafka-acl-extended/prefixed/Topic/orders-')).data.toString()).toBe(
      '{"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow","operation":"Read","host":"*"}]}',
    );
    expect((await zk.get('/kafka-acl/Topic/payments')).data.toString()).toContain('"principal":"User:ANONYMOUS"');
    const changes = await zk.getChildren('/kafka-acl-extended-changes');
    expect(changes).toHaveLength(1);
    expect(changes[0]).toMatch(/^acl_changes_\d{10}$/);
    expect(await zk.getChildren('/kafka-acl-changes')).toHaveLength(1);

    expect(a.authorize(ctx('alice'), [topicAction(Op.READ, 'orders-eu'), topicAction(Op.WRITE, 'orders-eu'), topicAction(Op.DESCRIBE, 'orders-eu')])).toEqual([
      true,
      false,
      true,
    ]);
    expect(a.authorize(ctx(), [topicAction(Op.WRITE, 'payments')])).toEqual([true]);
    expect(a.authorize(ctx('alice'), [topicAction(Op.WRITE, 'payments')])).toEqual([false]);
    a.shutdown();
  });

  it('refuses invalid bindings with INVALID_REQUEST and deletes what a filter matches, returning it', async () => {
    const server = new FakeZkServer();
    const a = await started(server);
    const bad = await a.createAcls([
      {
        pattern: { resourceType: AclResourceType.CLUSTER, name: 'other', patternType: AclPatternType.LITERAL },
        entry: binding('x', 3, 'User:a', Op.ALL).entry,
      },
      binding('t', AclPatternType.MATCH, 'User:a', Op.READ),
      binding('t', AclPatternType.LITERAL, 'alice', Op.READ),
      binding('t', AclPatternType.LITERAL, 'User:a', Op.ANY),
    ]);
    expect(bad.map((r) => r?.code)).toEqual([ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST]);
    await a.createAcls([binding('t', AclPatternType.LITERAL, 'User:a', Op.READ), binding('t', AclPatternType.LITERAL, 'User:b', Op.READ)]);
    const [r] = await a.deleteAcls([{ ...ALL_FILTER, entryFilter: { ...ALL_FILTER.entryFilter, principal: 'User:a' } }]);
    expect(r!.deleted).toEqual([binding('t', AclPatternType.LITERAL, 'User:a', Op.READ)]);
    expect(a.acls(ALL_FILTER)).toEqual([binding('t', AclPatternType.LITERAL, 'User:b', Op.READ)]);
    await a.deleteAcls([ALL_FILTER]);
    expect(a.acls(ALL_FILTER)).toEqual([]);
    // the node goes with its last ACL
    expect(await new FakeZkClient(server).exists('/kafka-acl/Topic/t')).toBeNull();
  });

  it('a change made through one authorizer reaches another through the change notification', async () => {
    const server = new FakeZkServer();
    const a = await started(server);
    const b = await started(server);
    await a.createAcls([binding('orders-', AclPatternType.PREFIXED, 'User:alice', Op.READ)]);
    await expect.poll(() => b.authorize(ctx('alice'), [topicAction(Op.READ, 'orders-eu')])[0], { timeout: 2000 }).toBe(true);
    await a.deleteAcls([ALL_FILTER]);
    await expect.poll(() => b.acls(ALL_FILTER).length, { timeout: 2000 }).toBe(0);
    // and a third, started later, loads what is there
    await a.createAcls([binding('x', AclPatternType.LITERAL, 'User:alice', Op.WRITE)]);
    const c = await started(server);
    expect(c.acls(ALL_FILTER)).toHaveLength(1);
    for (const x of [a, b, c]) x.shutdown();
  });

  it('super.users and allow.everyone.if.no.acl.found', async () => {
    const a = await started(new FakeZkServer(), { superUsers: 'User:admin; User:broker', allowEveryoneIfNoAclFound: true });
    await a.createAcls([binding('t', AclPatternType.LITERAL, 'User:admin', Op.ALL, AclPermissionType.DENY)]);
    expect(a.authorize(ctx('admin'), [topicAction(Op.WRITE, 't')])).toEqual([true]);
    expect(a.authorize(ctx('bob'), [topicAction(Op.WRITE, 't'), topicAction(Op.WRITE, 'no-acls')])).toEqual([false, true]);
    expect([...parseSuperUsers('User:a;;User:b ')]).toEqual(['User:a', 'User:b']);
  });

  it("logs Kafka's authorizer line: denials at info, allows at debug, on kafka.authorizer.logger", async () => {
    const { logger, lines } = capturing();
    const a = await started(new FakeZkServer(), { superUsers: '', allowEveryoneIfNoAclFound: false }, logger);
    await a.createAcls([binding('orders-', AclPatternType.PREFIXED, 'User:alice', Op.READ)]);
    a.authorize(ctx('alice', '::ffff:127.0.0.1:41000', 0), [{ ...topicAction(Op.WRITE, 'orders-eu'), resourceRefCount: 1 }]);
    a.authorize(ctx('alice', '127.0.0.1:41000', 1), [topicAction(Op.READ, 'orders-eu')]);
    a.authorize(ctx('alice', '127.0.0.1:41000', 3), [{ ...topicAction(Op.DESCRIBE, 'payments'), logIfDenied: false }]);
    const auth = lines.filter((l) => l.logger === 'kafka.authorizer.logger');
    expect(auth.map((l) => [l.level, l.msg])).toEqual([
      [
        30,
        'Principal = User:alice is Denied Operation = Write from host = 127.0.0.1 on resource = Topic:LITERAL:orders-eu for request = Produce with resourceRefCount = 1',
      ],
      [
        20,
        'Principal = User:alice is Allowed Operation = Read from host = 127.0.0.1 on resource = Topic:LITERAL:orders-eu for request = Fetch with resourceRefCount = 1',
      ],
    ]);
  });

  it('host of a connection: IPv4, IPv4-mapped IPv6 and IPv6', () => {
    expect(hostOf('10.1.2.3:9092')).toBe('10.1.2.3');
    expect(hostOf('::ffff:10.1.2.3:9092')).toBe('10.1.2.3');
    expect(hostOf('::1:9092')).toBe('::1');
    expect(hostOf('[fe80::1]:9092')).toBe('fe80::1');
  });
});
