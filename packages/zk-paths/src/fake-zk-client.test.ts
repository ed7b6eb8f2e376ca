import { describe, expect, it } from 'vitest';
import { controllerFencedDeleteRecursive, controllerFencedMulti } from './fenced.js';
import { FakeZkClient, FakeZkServer } from './fake-zk-client.js';
import { CreateMode } from './zk-client.js';
import { ControllerMovedError, ZkCode, ZkMultiError } from './zk-errors.js';

describe('fake zk client', () => {
  it('fake zk client – multi is all or nothing and fencing works as on a real ensemble', async () => {
    const zk = new FakeZkClient();
    await zk.create('/controller_epoch', Buffer.from('1'));
    await expect(controllerFencedMulti(zk, 5, [{ type: 'create', path: '/x' }])).rejects.toBeInstanceOf(ControllerMovedError);
    expect(await zk.exists('/x')).toBeNull();
    const err = await zk
      .multi([
        { type: 'create', path: '/a' },
        { type: 'set', path: '/nope', data: Buffer.alloc(0) },
      ])
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ZkMultiError);
    expect((err as ZkMultiError).failedIndex).toBe(1);
    expect((err as ZkMultiError).code).toBe(ZkCode.NO_NODE);
    expect(await zk.exists('/a')).toBeNull();
    await controllerFencedMulti(zk, 0, [{ type: 'create', path: '/x' }]);
    expect(await zk.exists('/x')).not.toBeNull();
  });

  it('fake zk client – a fenced recursive delete removes a tree children first, and nothing for a deposed controller', async () => {
    const zk = new FakeZkClient();
    await zk.create('/controller_epoch', Buffer.from('1'));
    await zk.create('/brokers/topics/t/partitions/0/state', Buffer.from('{}'), { mkdirp: true });
    await zk.create('/brokers/topics/t/partitions/1/state', Buffer.from('{}'), { mkdirp: true });
    await expect(controllerFencedDeleteRecursive(zk, 7, '/brokers/topics/t')).rejects.toBeInstanceOf(ControllerMovedError);
    expect(await zk.exists('/brokers/topics/t/partitions/0/state')).not.toBeNull();
    await controllerFencedDeleteRecursive(zk, 0, '/brokers/topics/t');
    expect(await zk.exists('/brokers/topics/t')).toBeNull();
    expect(await zk.exists('/brokers/topics')).not.toBeNull();
    await controllerFencedDeleteRecursive(zk, 0, '/brokers/topics/t'); // gone already: no error
  });

  it('fake zk client – ephemerals vanish with their session; sequential names; armed watches see changes', async () => {
    const server = new FakeZkServer();
    const a = new FakeZkClient(server);
    const b = new FakeZkClient(server);
    await a.mkdirp('/brokers/ids');
    const seen: Array<string[] | null> = [];
    b.watchChildren('/brokers/ids', (c) => seen.push(c));
    await a.create('/brokers/ids/1', null, { mode: CreateMode.Ephemeral });
    expect(await a.create('/n/seq-', null, { mode: CreateMode.PersistentSequential, mkdirp: true })).toBe('/n/seq-0000000000');
    await new Promise((r) => setTimeout(r, 0));
    expect(seen.at(-1)).toEqual(['1']);
    await a.close();
    await new Promise((r) => setTimeout(r, 0));
    expect(await b.exists('/brokers/ids/1')).toBeNull();
    expect(seen.at(-1)).toEqual([]);
  });
});
