import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ZooKeeperEnsemble, type ZooKeeperServer } from '@samsa/local-cluster';
import { controllerFencedMulti } from './fenced.js';
import { CreateMode, ZkClient, ZkSessionEvent } from './zk-client.js';
import { ControllerMovedError, ZkCode, ZkError, ZkMultiError } from './zk-errors.js';
import { ControllerEpochZNode, TopicPartitionStateZNode, TopicPartitionZNode, TopicPartitionsZNode } from './znodes.js';
import { createPartitionStates, setPartitionStates } from './partition-state-writes.js';

const SESSION_MS = 6000;

/** Polls until `f` returns a truthy value. */
async function until<T>(f: () => T | Promise<T>, timeoutMs = 15_000, what = 'condition'): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('zk client against a real 3-server ensemble', () => {
  let dir: string;
  let ens: ZooKeeperEnsemble;
  const clients: ZkClient[] = [];
  const connect = async (chroot = '') => {
    const c = await ZkClient.connect({ connectString: ens.connectString(chroot), sessionTimeoutMs: SESSION_MS });
    clients.push(c);
    return c;
  };
  const serverOf = (c: ZkClient): ZooKeeperServer => {
    const addr = c.connectedServer;
    const s = ens.servers.find((x) => addr === `127.0.0.1:${x.config.clientPort}`);
    if (!s) throw new Error(`client not connected to a known server (${addr})`);
    return s;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'samsa-zkc-'));
    ens = await ZooKeeperEnsemble.start({ size: 3, baseDir: dir });
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    for (const s of ens.servers) {
      s.resume();
      if (!s.process?.running) await s.restart();
    }
  });
  afterAll(async () => {
    await ens?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('zk client – create/get/set/exists/children/delete with Stat and version checks', async () => {
    const zk = await connect();
    await zk.create('/a/b/c', Buffer.from('x'), { mkdirp: true });
    const got = await zk.get('/a/b/c');
    expect(got.data.toString()).toBe('x');
    expect(got.stat.version).toBe(0);
    expect(got.stat.czxid).toBeGreaterThan(0n);
    const st = await zk.set('/a/b/c', Buffer.from('y'), 0);
    expect(st.version).toBe(1);
    await expect(zk.set('/a/b/c', Buffer.from('z'), 0)).rejects.toMatchObject({ code: ZkCode.BAD_VERSION, path: '/a/b/c' });
    expect(await zk.getChildren('/a/b')).toEqual(['c']);
    const seq = await zk.create('/a/seq-', null, { mode: CreateMode.PersistentSequential });
    expect(seq).toMatch(/^\/a\/seq-\d{10}$/);
    await expect(zk.create('/a/b/c')).rejects.toMatchObject({ code: ZkCode.NODE_EXISTS });
    await expect(zk.get('/nope')).rejects.toBeInstanceOf(ZkError);
    expect(await zk.getOrNull('/nope')).toBeNull();
    await zk.deleteRecursive('/a');
    expect(await zk.exists('/a')).toBeNull();
  });

  it('zk client – an ephemeral node vanishes when its session closes', async () => {
    const owner = await connect();
    const watcher = await connect();
    await owner.create('/eph/broker-1', Buffer.from('{}'), { mode: CreateMode.Ephemeral, mkdirp: true });
    const stat = await watcher.exists('/eph/broker-1');
    expect(stat?.ephemeralOwner).not.toBe(0n);
    await owner.close();
    await until(async () => (await watcher.exists('/eph/broker-1')) === null, 5000, 'ephemeral removal');
  });

  it('zk client – child and data watches fire and stay armed', async () => {
    const zk = await connect();
    const other = await connect();
    await zk.mkdirp('/watched');
    const seen: Array<string[] | null> = [];
    const unwatch = zk.watchChildren('/watched', (c) => seen.push(c));
    await until(() => seen.length >= 1);
    expect(seen[0]).toEqual([]);
    for (const name of ['a', 'b', 'c']) {
      await other.create(`/watched/${name}`);
      await until(() => seen.at(-1)?.includes(name), 5000, `child ${name}`);
    }
    await other.delete('/watched/a');
    await until(() => seen.at(-1)?.join() === 'b,c', 5000, 'child removal');

    const values: Array<string | null> = [];
    const unwatchData = zk.watchData('/watched/data', (n) => values.push(n ? n.data.toString() : null));
    await until(() => values.length >= 1);
    expect(values[0]).toBeNull();
    await other.create('/watched/data', Buffer.from('1'));
    await until(() => values.at(-1) === '1', 5000, 'data created');
    await other.set('/watched/data', Buffer.from('2'));
    await until(() => values.at(-1) === '2', 5000, 'data changed');
    await other.set('/watched/data', Buffer.from('3'));
    await until(() => values.at(-1) === '3', 5000, 'data changed again');
    await other.delete('/watched/data');
    await until(() => values.at(-1) === null, 5000, 'data deleted');
    unwatch();
    unwatchData();
    const n = seen.length;
    await other.create('/watched/after-unwatch');
    await other.exists('/watched'); // a round trip after the change
    expect(seen.length).toBe(n);
    await other.deleteRecursive('/watched');
  });

  it('zk client – a fenced multi with a stale controller epoch zkVersion fails with ControllerMovedError', async () => {
    const oldController = await connect();
    const newController = await connect();
    await oldController.create(ControllerEpochZNode.path, ControllerEpochZNode.encode(1)).catch(() => undefined);
    const mine = (await oldController.get(ControllerEpochZNode.path)).stat.version;
    // a new controller is elected and bumps the epoch
    const bumped = await newController.set(ControllerEpochZNode.path, ControllerEpochZNode.encode(2), mine);
    const statePath = TopicPartitionStateZNode.path('fenced', 0);
    const state = TopicPartitionStateZNode.encode({ leader: 1, leaderEpoch: 0, isr: [1], controllerEpoch: 1 });
    await expect(controllerFencedMulti(oldController, mine, [{ type: 'create', path: '/fenced-by-old', data: state }])).rejects.toBeInstanceOf(
      ControllerMovedError,
    );
    expect(await oldController.exists('/fenced-by-old')).toBeNull();
    // the current controller's write goes through
    await newController.mkdirp('/brokers/topics/fenced/partitions/0');
    const res = await controllerFencedMulti(newController, bumped.version, [{ type: 'create', path: statePath, data: state }]);
    expect(res).toHaveLength(1);
    expect(res[0]?.path).toBe(statePath);
    // a failure of the caller's own op is reported with its own index, not as a controller move
    const err = await controllerFencedMulti(newController, bumped.version, [
      { type: 'set', path: statePath, data: state, version: 0 },
      { type: 'set', path: statePath, data: state, version: 99 },
    ]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ZkMultiError);
    expect((err as ZkMultiError).failedIndex).toBe(1);
    expect((await newController.get(statePath)).stat.version).toBe(0);
    await newController.deleteRecursive('/brokers/topics/fenced');
  });

  it('zk client – partition states written many per fenced multi: a moved version fails only its own partition', async () => {
    const zk = await connect('/batched');
    await zk.create(ControllerEpochZNode.path, ControllerEpochZNode.encode(1));
    await zk.mkdirp(TopicPartitionsZNode.path('b'));
    const tps = Array.from({ length: 230 }, (_, partition) => ({ topic: 'b', partition }));
    const st = (leader: number) => ({ leader, leaderEpoch: 0, isr: [leader], controllerEpoch: 1 });
    await zk.create(TopicPartitionZNode.path('b', 5));
    const created = await createPartitionStates(
      zk,
      tps.map((tp) => ({ tp, state: st(0) })),
      0,
    );
    expect(created.created).toHaveLength(230);
    await zk.set(TopicPartitionStateZNode.path('b', 150), TopicPartitionStateZNode.encode(st(2)), 0);
    const r = await setPartitionStates(
      zk,
      tps.map((tp) => ({ tp, state: st(1), expectedZkVersion: 0 })),
      0,
    );
    expect(r.stale).toEqual([{ topic: 'b', partition: 150 }]);
    expect(r.updated.size).toBe(229);
    expect((await zk.get(TopicPartitionStateZNode.path('b', 149))).stat.version).toBe(1);
    expect(TopicPartitionStateZNode.decode((await zk.get(TopicPartitionStateZNode.path('b', 150))).data, '').leader).toBe(2);
  });

  it('zk client – SIGSTOP of the connected server is reported as session loss within the session timeout', async () => {
    const zk = await connect();
    const events: Array<{ e: ZkSessionEvent; at: number }> = [];
    zk.on('state', (e) => events.push({ e, at: Date.now() }));
    await zk.create('/stop-probe', null, { mode: CreateMode.Ephemeral });
    const target = serverOf(zk);
    const oldSession = zk.sessionId;
    const stoppedAt = Date.now();
    target.pause();
    const lost = await until(() => events.find((x) => x.e === ZkSessionEvent.Expired), SESSION_MS + 2000, 'session loss');
    expect(lost.at - stoppedAt).toBeLessThanOrEqual(SESSION_MS);
    // a call in flight on the frozen connection is failed, not left hanging; a new session follows
    await until(() => events.find((x) => x.e === ZkSessionEvent.NewSession), 20_000, 'new session');
    expect(zk.sessionId).not.toBe(oldSession);
    expect(zk.connectedServer).not.toBe(target.address);
    target.resume();
  });

  it('zk client – killing one of three servers does not lose the session', async () => {
    const zk = await connect();
    const events: ZkSessionEvent[] = [];
    zk.on('state', (e) => events.push(e));
    await zk.create('/kill-probe', null, { mode: CreateMode.Ephemeral });
    const session = zk.sessionId;
    const target = serverOf(zk);
    await target.kill();
    // the client fails over to another server with the same session
    await until(() => events.includes(ZkSessionEvent.Connected), 10_000, 'reconnect');
    expect(zk.sessionId).toBe(session);
    // the ephemeral of this session is still there (reads retry across a second failover, which
    // happens when the survivors are still electing a leader)
    expect(await zk.exists('/kill-probe')).not.toBeNull();
    expect(zk.sessionId).toBe(session);
    expect(events).not.toContain(ZkSessionEvent.Expired);
  });

  it('zk client – chroot in the connect string is created and scopes every path', async () => {
    const root = await connect();
    const chrooted = await connect('/samsa/it');
    await chrooted.create('/brokers/ids', null, { mkdirp: true });
    // another session may be on a follower that has not applied the write yet: ZooKeeper reads are
    // sequentially consistent per client, not across clients
    await until(async () => (await root.exists('/samsa/it/brokers/ids')) !== null, 5000, 'write visible through another session');
    expect(await chrooted.getChildren('/')).toEqual(['brokers']);
    const seen: Array<string[] | null> = [];
    chrooted.watchChildren('/brokers/ids', (c) => seen.push(c));
    await root.create('/samsa/it/brokers/ids/0', null, { mode: CreateMode.Ephemeral });
    await until(() => seen.at(-1)?.includes('0'), 5000, 'watch under chroot');
    await root.deleteRecursive('/samsa');
  });
});
