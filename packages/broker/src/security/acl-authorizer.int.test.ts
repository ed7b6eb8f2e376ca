import type { AuthContext } from './authorizer.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ZooKeeperEnsemble } from '@samsa/local-cluster';
import { AclOperation as Op, AclPatternType, AclPermissionType, AclResourceType, type AclBindingFilter } from '@samsa/protocol';
import { ZkClient } from '@samsa/zk-paths';
import { AclAuthorizer } from './acl-authorizer.js';
import { userPrincipal } from './kafka-principal.js';

const ctx = (name: string): AuthContext => ({
  conn: { remote: '127.0.0.1:40000', principal: userPrincipal(name) },
});
const read = (name: string) => ({ operation: Op.READ, resourceType: AclResourceType.TOPIC, name });
const ALL: AclBindingFilter = {
  patternFilter: { resourceType: AclResourceType.ANY, name: null, patternType: AclPatternType.ANY },
  entryFilter: { principal: null, host: null, operation: Op.ANY, permissionType: AclPermissionType.ANY },
};

describe('acl authorizer against a real ZooKeeper', () => {
  let dir: string;
  let ens: ZooKeeperEnsemble;
  const clients: ZkClient[] = [];
  const authorizers: AclAuthorizer[] = [];

  async function authorizer(): Promise<AclAuthorizer> {
    const zk = await ZkClient.connect({ connectString: ens.connectString('/samsa'), sessionTimeoutMs: 6000 });
    clients.push(zk);
    const a = new AclAuthorizer(zk, { superUsers: '', allowEveryoneIfNoAclFound: false }, pino({ enabled: false }));
    await a.startup();
    authorizers.push(a);
    return a;
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'samsa-acl-'));
    ens = await ZooKeeperEnsemble.start({ size: 1, baseDir: dir });
  });
  afterAll(async () => {
    for (const a of authorizers) a.shutdown();
    for (const c of clients) await c.close();
    await ens?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('acl authorizer – an ACL added through one broker applies on another within 2 s, and so does its removal', async () => {
    const a = await authorizer();
    const b = await authorizer();
    expect(b.authorize(ctx('alice'), [read('orders-eu')])).toEqual([false]);
    const added = Date.now();
    await a.createAcls([
      {
        pattern: { resourceType: AclResourceType.TOPIC, name: 'orders-', patternType: AclPatternType.PREFIXED },
        entry: { principal: 'User:alice', host: '*', operation: Op.READ, permissionType: AclPermissionType.ALLOW },
      },
      {
        pattern: { resourceType: AclResourceType.TOPIC, name: 'orders-secret', patternType: AclPatternType.LITERAL },
        entry: { principal: 'User:alice', host: '*', operation: Op.READ, permissionType: AclPermissionType.DENY },
      },
    ]);
    await expect.poll(() => b.authorize(ctx('alice'), [read('orders-eu'), read('orders-secret')]), { timeout: 2000, interval: 20 }).toEqual([true, false]);
    expect(Date.now() - added).toBeLessThan(2000);

    const removed = Date.now();
    const [r] = await b.deleteAcls([{ ...ALL, patternFilter: { ...ALL.patternFilter, patternType: AclPatternType.PREFIXED } }]);
    expect(r!.deleted).toHaveLength(1);
    await expect.poll(() => a.authorize(ctx('alice'), [read('orders-eu')])[0], { timeout: 2000, interval: 20 }).toBe(false);
    expect(Date.now() - removed).toBeLessThan(2000);
    expect(a.acls(ALL).map((x) => x.pattern.name)).toEqual(['orders-secret']);
  });

  it('acl authorizer – concurrent additions to one resource from two brokers both land (conditional updates)', async () => {
    const [a, b] = [await authorizer(), await authorizer()];
    const entry = (principal: string) => ({
      pattern: { resourceType: AclResourceType.GROUP, name: 'g1', patternType: AclPatternType.LITERAL },
      entry: { principal, host: '*', operation: Op.READ, permissionType: AclPermissionType.ALLOW },
    });
    await Promise.all([
      ...['User:a1', 'User:a2', 'User:a3'].map((p) => a.createAcls([entry(p)])),
      ...['User:b1', 'User:b2', 'User:b3'].map((p) => b.createAcls([entry(p)])),
    ]);
    const fresh = await authorizer();
    const principals = fresh
      .acls({ ...ALL, patternFilter: { resourceType: AclResourceType.GROUP, name: 'g1', patternType: AclPatternType.LITERAL } })
      .map((x) => x.entry.principal)
      .sort();
    expect(principals).toEqual(['User:a1', 'User:a2', 'User:a3', 'User:b1', 'User:b2', 'User:b3']);
  });
});
