import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ZooKeeperEnsemble } from '@samsa/local-cluster';
import { ZkClient, type ZkClientOptions, ZkSessionEvent } from './zk-client.js';
import { ZkCode, isZkError } from './zk-errors.js';
import { type ZkAuthInfo, ZkPerms } from './zk-security.js';

const SESSION_MS = 6000;
const BROKER: ZkAuthInfo = { scheme: 'digest', auth: 'kafka:kafka-secret' };
/** ZooKeeper's digest id for user:password: `user:base64(sha1(user:password))`. */
const digestId = (userPassword: string) => `${userPassword.split(':')[0]}:${createHash('sha1').update(userPassword).digest('base64')}`;

async function zkCode(p: Promise<unknown>): Promise<number> {
  try {
    await p;
    return ZkCode.OK;
  } catch (err) {
    if (isZkError(err)) return err.code;
    throw err;
  }
}

describe('zk client – digest authentication and secure ACLs against a real ensemble', () => {
  let dir: string;
  let ens: ZooKeeperEnsemble;
  const clients: ZkClient[] = [];
  const connect = async (o: Partial<ZkClientOptions> = {}, connectString = ens.connectString()) => {
    const c = await ZkClient.connect({ connectString, sessionTimeoutMs: SESSION_MS, ...o });
    clients.push(c);
    return c;
  };
  const broker = (o: Partial<ZkClientOptions> = {}, cs?: string) => connect({ authInfo: [BROKER], secureAcls: true, ...o }, cs);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'samsa-zkacl-'));
    ens = await ZooKeeperEnsemble.start({ size: 3, baseDir: dir });
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    for (const s of ens.servers) if (!s.process?.running) await s.restart();
  });
  afterAll(async () => {
    await ens?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("zk acl – set.acl: a broker's znodes and their parents get creator-all and world read; anonymous clients read but cannot write", async () => {
    const zk = await broker();
    const anon = await connect();
    await zk.create('/s1/brokers/topics/t', Buffer.from('{"version":2}'), { mkdirp: true });
    const expected = [
      { perms: ZkPerms.ALL, scheme: 'digest', id: digestId(BROKER.auth) },
      { perms: ZkPerms.READ, scheme: 'world', id: 'anyone' },
    ];
    for (const p of ['/s1', '/s1/brokers', '/s1/brokers/topics', '/s1/brokers/topics/t']) expect(await zk.getAcl(p)).toEqual(expected);
    // ZooKeeper hides the digest hash from those without ADMIN
    expect((await anon.getAcl('/s1/brokers/topics/t'))[0]).toEqual({ perms: ZkPerms.ALL, scheme: 'digest', id: 'kafka:x' });
    expect((await anon.get('/s1/brokers/topics/t')).data.toString()).toBe('{"version":2}');
    expect(await zkCode(anon.set('/s1/brokers/topics/t', Buffer.from('x')))).toBe(ZkCode.NO_AUTH);
    expect(await zkCode(anon.create('/s1/brokers/topics/t/partitions'))).toBe(ZkCode.NO_AUTH);
    expect(await zkCode(anon.delete('/s1/brokers/topics/t'))).toBe(ZkCode.NO_AUTH);
    // another broker with the same credentials may do everything
    const other = await broker();
    await other.set('/s1/brokers/topics/t', Buffer.from('y'));
    await other.create('/s1/brokers/topics/t/partitions');
    await other.deleteRecursive('/s1/brokers/topics/t');
    // a client with other credentials is as powerless as an anonymous one
    const stranger = await connect({ authInfo: [{ scheme: 'digest', auth: 'mallory:guess' }] });
    expect(await zkCode(stranger.create('/s1/brokers/topics/evil'))).toBe(ZkCode.NO_AUTH);
  });

  it('zk acl – set.acl: /config/users and /config/brokers are not readable by anonymous clients', async () => {
    const zk = await broker({}, ens.connectString('/s2'));
    const anon = await connect();
    await zk.create('/config/users/alice', Buffer.from('{"version":1,"config":{"SCRAM-SHA-256":"salt=...,stored_key=..."}}'), { mkdirp: true });
    await zk.create('/config/brokers/<default>', Buffer.from('{"version":1,"config":{}}'), { mkdirp: true });
    await zk.create('/config/topics/t', Buffer.from('{"version":1,"config":{}}'), { mkdirp: true });
    // sensitive paths are judged below the chroot, as Kafka's paths are
    expect(await zkCode(anon.get('/s2/config/users/alice'))).toBe(ZkCode.NO_AUTH);
    expect(await zkCode(anon.getChildren('/s2/config/users'))).toBe(ZkCode.NO_AUTH);
    expect(await zkCode(anon.get('/s2/config/brokers/<default>'))).toBe(ZkCode.NO_AUTH);
    expect(await zkCode(anon.getAcl('/s2/config/users/alice'))).toBe(ZkCode.NO_AUTH);
    expect(await zk.getAcl('/config/users/alice')).toEqual([{ perms: ZkPerms.ALL, scheme: 'digest', id: digestId(BROKER.auth) }]);
    expect((await anon.get('/s2/config/topics/t')).data.toString()).toContain('"config"');
    expect((await zk.get('/config/users/alice')).data.toString()).toContain('SCRAM-SHA-256');
    // the chroot itself was created secured
    expect(await zkCode(anon.create('/s2/intruder'))).toBe(ZkCode.NO_AUTH);
  });

  it('zk acl – creates inside a multi get the secure ACLs too', async () => {
    const zk = await broker();
    const anon = await connect();
    await zk.mkdirp('/s3');
    await zk.multi([
      { type: 'create', path: '/s3/a', data: Buffer.from('1') },
      { type: 'create', path: '/s3/config' },
      { type: 'create', path: '/s3/config/users' },
    ]);
    expect(await zkCode(anon.set('/s3/a', Buffer.from('2')))).toBe(ZkCode.NO_AUTH);
    expect((await anon.getAcl('/s3/a')).map((a) => a.scheme)).toEqual(['digest', 'world']);
  });

  it('zk acl – set.acl=false with credentials: open ACLs as before', async () => {
    const zk = await connect({ authInfo: [BROKER] });
    const anon = await connect();
    await zk.create('/s4/open', null, { mkdirp: true });
    expect(await anon.getAcl('/s4/open')).toEqual([{ perms: ZkPerms.ALL, scheme: 'world', id: 'anyone' }]);
    await anon.set('/s4/open', Buffer.from('anyone may'));
  });

  it('zk acl – after a reconnect the credentials go before the writes queued while disconnected', async () => {
    // through one follower only: while it is down the write waits in the client's queue, and the
    // session (10 s, the ensemble's maximum) outlives the restart
    const follower = (await Promise.all(ens.servers.map(async (s) => ({ s, info: await s.status() })))).find((x) => x.info?.mode === 'follower')!.s;
    const zk = await broker({ sessionTimeoutMs: 10_000 }, `127.0.0.1:${follower.config.clientPort}`);
    await zk.create('/s5/node', Buffer.from('0'), { mkdirp: true });
    const session = zk.sessionId;
    // the write is issued the moment the connection drops, before the client's first reconnect attempt
    const write = new Promise<unknown>((resolve) => zk.on('state', (e) => e === ZkSessionEvent.Disconnected && resolve(zk.set('/s5/node', Buffer.from('1')))));
    await follower.kill();
    await follower.restart();
    await write;
    expect(zk.sessionId).toBe(session);
    expect((await zk.get('/s5/node')).data.toString()).toBe('1');
  });
});
