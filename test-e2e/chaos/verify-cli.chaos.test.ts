/**
 * `samsa verify` as a user runs it: against a real cluster, it creates the topic (RF=3,
 * min.insync.replicas=2), produces a message count, reads it back, compares the replicas' log
 * files (--log-dirs), prints the summary table and exits 0.
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SAMSA_BIN } from '@samsa/local-cluster';
import type { TestCluster } from '../harness.js';
import { chaosCommandConfig } from './secure.js';
import { chaosPartitions, describeChaos, scaledTimeout, startChaosCluster } from './scenario.js';

function samsa(args: string[], timeoutMs = 240_000): Promise<{ code: number | null; out: string }> {
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

describeChaos(
  'chaos – samsa verify',
  () => {
    let c: TestCluster;
    beforeAll(async () => {
      c = await startChaosCluster({ brokers: 3 });
    });
    afterAll(async () => {
      await c?.stop();
    });

    it('chaos – samsa verify writes, reads back, compares replicas and exits 0 with 0 violations', async () => {
      const partitions = chaosPartitions(3);
      // under CHAOS_PARTITIONS enough messages for both producers' round-robin to write every partition
      const messages = partitions === 3 ? 3000 : Math.max(3000, 2 * partitions);
      const logDirs = Object.entries(c.logDirs())
        .map(([id, d]) => `${id}=${d}`)
        .join(',');
      const r = await samsa(
        [
          'verify',
          '--bootstrap-server',
          c.bootstrap,
          '--topic',
          'verify-cli',
          '--messages',
          String(messages),
          '--rate',
          '0',
          '--compression',
          'gzip',
          '--log-dirs',
          logDirs,
          ...chaosCommandConfig(c),
          ...(partitions !== 3 ? ['--partitions', String(partitions), '--check-timeout', `${scaledTimeout(120_000) / 1000}s`] : []),
        ],
        scaledTimeout(240_000),
      );
      process.stdout.write(r.out);
      expect(r.code).toBe(0);
      expect(r.out).toContain(`Created topic verify-cli (partitions ${partitions}, replication factor 3, min.insync.replicas 2).`);
      expect(r.out).toMatch(new RegExp(`acknowledged\\s+${messages}\\n`));
      expect(r.out).toMatch(new RegExp(`consumed\\s+${messages}\\n`));
      expect(r.out).toMatch(/lost\s+0\n/);
      expect(r.out).toMatch(/divergent partitions\s+0\n/);
      expect(r.out).toContain('OK: 0 violations');
    });
  },
  { processesOnly: 'reads the brokers log files' },
);
