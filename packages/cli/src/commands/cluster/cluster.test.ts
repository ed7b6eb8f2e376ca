import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCommand } from '../../shared/runner.js';
import { clusterCommand } from './cluster.js';

async function run(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCommand(clusterCommand, args, { out: (s) => (out += s), err: (s) => (err += s) });
  return { code, out, err };
}

describe('samsa cluster (runner)', () => {
  it('samsa cluster – status and down of a data dir without a cluster: one [samsa] line each; status exits 1, down 0', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'samsa-cluster-'));
    try {
      expect(await run('status', '--data-dir', dir)).toEqual({ code: 1, out: `[samsa] no local cluster running (no ${join(dir, 'cluster.json')})\n`, err: '' });
      expect(await run('down', '--data-dir', dir)).toEqual({ code: 0, out: '[samsa] no local cluster running\n', err: '' });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('samsa cluster – no subcommand: the usage on stderr, exit 1', async () => {
    const r = await run();
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^Usage: cluster \[options\] \[command\]/);
    expect(r.err).toMatch(/\n {2}up \[options\] +start the local cluster/);
  });
});
