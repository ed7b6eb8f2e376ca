// Runs one of the reference shell scripts (referenceDir below) as its own process group, so that
// on failure or Ctrl-C the whole group (script, its node/nats children) can be stopped by its id,
// and the mktemp work dir it was running in (read from /proc/<pid>/cwd) removed.
import { spawn } from 'node:child_process';
import { existsSync, readlinkSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { onCleanup } from './cleanup.mjs';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * The directory of the reference scripts the benchmarks compare against (`floor/run.sh`, the Node
 * I/O floor; `peer-nats/run.sh`, NATS JetStream): `SAMSA_BENCH_REFERENCE_DIR`, by default the
 * directory `shared/bench` beside the checkout.
 */
export function referenceDir() {
  return process.env.SAMSA_BENCH_REFERENCE_DIR ? resolve(process.env.SAMSA_BENCH_REFERENCE_DIR) : resolve(REPO_ROOT, '..', 'shared', 'bench');
}

/** `<reference dir>/<sub>`, or an Error saying what is missing. */
export function referenceScriptDir(sub) {
  const dir = join(referenceDir(), sub);
  if (!existsSync(join(dir, 'run.sh'))) {
    throw new Error(
      `${join(dir, 'run.sh')} not found: set SAMSA_BENCH_REFERENCE_DIR to the directory holding the reference scripts (floor/, peer-nats/; see bench/RESULTS.md)`,
    );
  }
  return dir;
}

function killGroup(pid, sig) {
  try {
    process.kill(-pid, sig);
  } catch {
    /* already gone */
  }
}

/**
 * Runs `bash <script> ...args`; resolves with its stdout lines when it exits 0, rejects otherwise
 * (with the tail of stderr). `workDirPrefix` names the mktemp dirs the script works in (removed on
 * abort; the scripts remove them themselves when they finish).
 */
export function runScript(script, args, { workDirPrefix, onLine, timeoutMs = 600_000 } = {}) {
  return new Promise((res, rej) => {
    const child = spawn('bash', [script, ...args.map(String)], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const lines = [];
    let stderr = '';
    createInterface({ input: child.stdout }).on('line', (l) => {
      lines.push(l);
      onLine?.(l);
    });
    child.stderr.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
    // the script cds into its mktemp dir: remember it, to remove it if the script does not finish
    let workDir = null;
    const watch = setInterval(() => {
      try {
        const cwd = readlinkSync(`/proc/${child.pid}/cwd`);
        if (workDirPrefix && cwd.startsWith(workDirPrefix)) workDir = cwd;
      } catch {
        /* gone */
      }
    }, 100);
    let clean = false;
    const stop = onCleanup(`stop ${script} (process group ${child.pid})`, async () => {
      clearInterval(watch);
      if (clean) return; // exited 0: it waited for its children and removed its dir
      killGroup(child.pid, 'SIGTERM');
      await new Promise((r) => setTimeout(r, 500));
      killGroup(child.pid, 'SIGKILL');
      if (workDir) rmSync(workDir, { recursive: true, force: true });
    });
    const timer = setTimeout(() => {
      void stop().then(() => rej(new Error(`${script} did not finish within ${timeoutMs / 1000} s`)));
    }, timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      void stop().then(() => rej(err));
    });
    const stdoutDone = new Promise((r) => child.stdout.once('close', r));
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      clean = code === 0;
      // on success every child has exited, so stdout ends; otherwise strays are killed first
      void (clean ? stdoutDone : Promise.resolve()).then(stop).then(() => {
        if (clean) res(lines);
        else rej(new Error(`${script} exited with ${code ?? signal}${stderr ? `:\n${stderr.trim()}` : ''}`));
      });
    });
  });
}
