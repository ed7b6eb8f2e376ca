/**
 * `samsa chaos` as a user runs it: `samsa cluster up --detach` (3 ZooKeeper servers, 3 brokers, on
 * free ports, in a temp data dir), `samsa chaos --duration 60s` with seeded faults, then
 * `samsa cluster down`. It must exit 0 with 0 violations and report the faults and elections.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { SAMSA_BIN } from '@samsa/local-cluster';
import { CHAOS_PARTITIONS, describeChaos, scaledTimeout } from './scenario.js';

function samsa(args: string[], timeoutMs: number): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [SAMSA_BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (c: Buffer) => (out += c.toString()));
    p.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const timer = setTimeout(() => p.kill('SIGKILL'), timeoutMs);
    p.on('error', reject);
    p.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

const canListen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });

/** A base port p with p..p+2 (and p+10000..p+10002 for broker control ports) free. */
async function freeRange(): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const base = 20000 + Math.floor(Math.random() * 20000);
    let ok = true;
    for (const p of [base, base + 1, base + 2, base + 10000, base + 10001, base + 10002]) if (!(await canListen(p))) ok = false;
    if (ok) return base;
  }
  throw new Error('no free port range');
}

describeChaos(
  'chaos – samsa chaos',
  () => {
    let dir = '';
    afterAll(async () => {
      if (dir) {
        await samsa(['cluster', 'down', '--data-dir', dir], 120_000);
        await rm(dir, { recursive: true, force: true });
      }
    });

    it('chaos – samsa chaos injects seeded faults into the local cluster while verify runs: 0 violations', async () => {
      dir = await mkdtemp(join(tmpdir(), 'samsa-chaos-cli-'));
      const zk = await freeRange();
      const zkPeer = await freeRange();
      const zkElection = await freeRange();
      const broker = await freeRange();
      const up = await samsa(
        [
          'cluster',
          'up',
          '--detach',
          '--data-dir',
          dir,
          '--zk-port',
          String(zk),
          '--zk-peer-port',
          String(zkPeer),
          '--zk-election-port',
          String(zkElection),
          '--broker-port',
          String(broker),
          '--metrics-port',
          '0',
        ],
        240_000,
      );
      expect(up.code, up.out).toBe(0);
      const scale = CHAOS_PARTITIONS !== undefined ? ['--partitions', String(CHAOS_PARTITIONS), '--check-timeout', `${scaledTimeout(120_000) / 1000}s`] : [];
      const r = await samsa(
        ['chaos', '--data-dir', dir, '--duration', '60s', '--fault-interval', '12s', '--seed', '42', '--rate', '200', ...scale],
        scaledTimeout(600_000),
      );
      process.stdout.write(r.out);
      expect(r.code).toBe(0);
      expect(r.out).toContain('OK: 0 violations');
      expect(r.out).toMatch(/lost\s+0\n/);
      expect(r.out).toMatch(/divergent partitions\s+0\n/);
      const faults = Number(/faults injected: (\d+) \(seed 42\)/.exec(r.out)?.[1] ?? -1);
      expect(faults).toBeGreaterThan(0);
      expect(r.out).toMatch(/leader elections seen: \d+ .*; controller elections: \d+/);
    });
  },
  { processesOnly: 'runs samsa cluster', fullOnly: true },
);
