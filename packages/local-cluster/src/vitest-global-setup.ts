import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { reapPidDir } from './managed-process.js';

/**
 * Vitest global setup for suites that start real processes: every ManagedProcess records a pid file
 * in SAMSA_PID_DIR, and teardown kills whatever is left (a crashed worker must not leave strays).
 */
export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'samsa-pids-'));
  process.env['SAMSA_PID_DIR'] = dir;
  return () => {
    const n = reapPidDir(dir);
    if (n > 0) process.stderr.write(`[samsa] reaped ${n} stray process(es) left by tests\n`);
    rmSync(dir, { recursive: true, force: true });
  };
}
