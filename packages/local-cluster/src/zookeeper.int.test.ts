import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fourLetter } from './four-letter.js';
import { ZooKeeperEnsemble } from './zookeeper.js';

describe('zookeeper ensemble', () => {
  let dir: string;
  let ens: ZooKeeperEnsemble;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'samsa-zk-'));
    ens = await ZooKeeperEnsemble.start({ size: 3, baseDir: dir });
  });
  afterAll(async () => {
    await ens?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('zookeeper ensemble – three servers serve with exactly one leader', async () => {
    const st = await ens.status();
    expect(st).toHaveLength(3);
    const modes = st.map((s) => s.info?.mode).sort();
    expect(modes).toEqual(['follower', 'follower', 'leader']);
    expect(ens.connectString()).toMatch(/^127\.0\.0\.1:\d+,127\.0\.0\.1:\d+,127\.0\.0\.1:\d+$/);
  });

  it('zookeeper ensemble – a killed server is replaced by a new leader and rejoins on restart', async () => {
    const leader = await ens.leader();
    expect(leader).toBeDefined();
    await leader!.kill();
    // survivors elect a new leader
    let other;
    for (let i = 0; i < 200 && !other; i++) {
      other = await ens.leader();
      if (!other) await new Promise((r) => setTimeout(r, 100));
    }
    expect(other).toBeDefined();
    expect(other!.config.id).not.toBe(leader!.config.id);
    const info = await leader!.restart();
    expect(info.mode).toBe('follower');
  });

  it('zookeeper ensemble – stop leaves no process behind', async () => {
    const pids = ens.servers.map((s) => s.pid).filter((p): p is number => p !== undefined);
    expect(pids).toHaveLength(3);
    await ens.stop();
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow();
    await expect(fourLetter('127.0.0.1', ens.servers[0]!.config.clientPort, 'ruok', 300)).rejects.toThrow();
  });
});
