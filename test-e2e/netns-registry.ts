/**
 * The registry of network-namespace runs (test-e2e/netns.ts): one file per claimed subnet in
 * /run/samsa-netns (SAMSA_NETNS_DIR) naming its namespaces and owner pid, and the sweep that deletes
 * the namespaces of runs whose owner is gone. No test-framework imports: the e2e global teardown uses it.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

export const NETNS_REGISTRY = process.env['SAMSA_NETNS_DIR'] ?? '/run/samsa-netns';

export interface RegistryEntry {
  pid: number;
  created: string;
  namespaces: string[];
  rootVeth: string;
}

const pidAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

export function removeEntrySync(file: string, e: RegistryEntry): void {
  for (const ns of e.namespaces) spawnSync('ip', ['netns', 'del', ns], { stdio: 'ignore', timeout: 10_000 });
  spawnSync('ip', ['link', 'del', e.rootVeth], { stdio: 'ignore', timeout: 10_000 });
  rmSync(file, { force: true });
}

/**
 * Deletes the namespaces of runs whose owner process is gone (or, with `owner`, of that process too:
 * the global teardown of a run whose workers were threads). Returns how many runs were swept.
 */
export function sweepStaleNetns(owner?: number): number {
  let files: string[];
  try {
    files = readdirSync(NETNS_REGISTRY).filter((f) => f.endsWith('.json'));
  } catch {
    return 0;
  }
  let n = 0;
  for (const f of files) {
    const file = join(NETNS_REGISTRY, f);
    let e: RegistryEntry;
    try {
      e = JSON.parse(readFileSync(file, 'utf8')) as RegistryEntry;
    } catch {
      continue; // being written
    }
    if (e.pid === owner || !pidAlive(e.pid)) {
      removeEntrySync(file, e);
      n++;
    }
  }
  return n;
}
