import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { isAlive, readState } from '@samsa/local-cluster';

const run = promisify(execFile);
const bin = fileURLToPath(new URL('../../../bin/samsa.js', import.meta.url));

/** A random first port; the CLI uses base, base+1, base+2 for clients and +10000 / +20000 for quorum and election. */
const portBase = () => 20000 + Math.floor(Math.random() * 1600) * 3;

describe('samsa cluster', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) {
      await run(process.execPath, [bin, 'cluster', 'down', '--data-dir', d]).catch(() => undefined);
      await rm(d, { recursive: true, force: true });
    }
  });

  it('samsa cluster – up --detach, status shows 3 ZooKeeper servers with one leader and 3 serving brokers, down leaves nothing behind', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'samsa-cli-'));
    dirs.push(dir);
    const base = portBase();
    const args = [
      '--data-dir',
      dir,
      '--zk-port',
      String(base),
      '--zk-peer-port',
      String(base + 10000),
      '--zk-election-port',
      String(base + 20000),
      '--broker-port',
      String(base + 5),
      '--metrics-port',
      String(base + 8),
    ];
    const up = await run(process.execPath, [bin, 'cluster', 'up', '--detach', ...args], { timeout: 180_000 });
    expect(up.stdout).toContain('serving (leader)');
    expect(up.stdout).toContain(`bootstrap.servers=127.0.0.1:${base + 5},127.0.0.1:${base + 6},127.0.0.1:${base + 7}`);
    const st = await run(process.execPath, [bin, 'cluster', 'status', '--data-dir', dir]);
    const lines = st.stdout.split('\n').filter((l) => l.startsWith('zookeeper '));
    expect(lines).toHaveLength(3);
    expect(lines.filter((l) => l.includes('serving (leader)'))).toHaveLength(1);
    expect(lines.filter((l) => l.includes('serving (follower)'))).toHaveLength(2);
    const brokers = st.stdout.split('\n').filter((l) => l.startsWith('broker '));
    expect(brokers).toHaveLength(3);
    expect(st.stdout).toMatch(/^controller: broker [012] \(controller epoch \d+\)$/m);
    expect(st.stdout).toContain('live brokers: 0,1,2');
    expect(st.stdout).toContain('partitions: 0 (offline 0, under-replicated 0)');
    expect(brokers.every((l) => l.includes(' serving'))).toBe(true);
    // each broker's metrics endpoint, in the METRICS column, answers
    for (let i = 0; i < 3; i++) expect(brokers[i]).toContain(`http://127.0.0.1:${base + 8 + i}/metrics`);
    const metrics = await fetch(`http://127.0.0.1:${base + 8}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain('kafka_controller_kafkacontroller_activecontrollercount');
    expect((await fetch(`http://127.0.0.1:${base + 8}/health`)).status).toBe(200);
    expect(st.stdout).toContain(`zookeeper.connect=127.0.0.1:${base},127.0.0.1:${base + 1},127.0.0.1:${base + 2}`);
    const state = readState(dir)!;
    const pids = [state.supervisorPid, ...state.zookeeper.servers.map((s) => s.pid!), ...state.brokers.map((b) => b.pid!)];
    expect(pids).toHaveLength(7);
    expect(pids.every(isAlive)).toBe(true);
    const down = await run(process.execPath, [bin, 'cluster', 'down', '--data-dir', dir]);
    expect(down.stdout).toContain('local cluster stopped');
    expect(pids.some(isAlive)).toBe(false);
    await expect(run(process.execPath, [bin, 'cluster', 'status', '--data-dir', dir])).rejects.toMatchObject({ code: 1 });
  });

  it('samsa cluster – foreground up stops cleanly on Ctrl-C (SIGINT)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'samsa-cli-'));
    dirs.push(dir);
    const base = portBase();
    const child = spawn(
      process.execPath,
      [
        bin,
        'cluster',
        'up',
        '--zk-servers',
        '1',
        '--brokers',
        '1',
        '--broker-port',
        String(base + 5),
        '--metrics-port',
        '0',
        '--data-dir',
        dir,
        '--zk-port',
        String(base),
        '--zk-peer-port',
        String(base + 10000),
        '--zk-election-port',
        String(base + 20000),
      ],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    const deadline = Date.now() + 120_000;
    while (!out.includes('local cluster up') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(out).toContain('[zk-1]'); // prefixed child logs
    expect(out).toContain('[broker-0]');
    const state = readState(dir)!;
    const zkPid = state.zookeeper.servers[0]!.pid!;
    const brokerPid = state.brokers[0]!.pid!;
    expect(isAlive(zkPid) && isAlive(brokerPid)).toBe(true);
    child.kill('SIGINT');
    const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    expect(code).toBe(0);
    expect(isAlive(zkPid) || isAlive(brokerPid)).toBe(false);
    expect(readState(dir)).toBeUndefined();
  });
});
