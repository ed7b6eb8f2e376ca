// Everything a benchmark starts (processes, temp dirs) registers an async undo here. The undos run
// in reverse order when the run ends, fails, or is interrupted (SIGINT/SIGTERM/SIGHUP).
import { rmSync } from 'node:fs';

const undos = [];
let running = null;
let interrupted = false;

/** Registers `fn` to run at cleanup; returns a function that runs it now (once) and unregisters it. */
export function onCleanup(what, fn) {
  const entry = { what, fn, done: false };
  undos.push(entry);
  return async () => {
    if (entry.done) return;
    entry.done = true;
    undos.splice(undos.indexOf(entry), 1);
    await fn();
  };
}

/** Registers a temp dir for removal; returns the dir. */
export function tempDirCleanup(dir) {
  // SAMSA_BENCH_KEEP=1 keeps it (brokers' logs and data) for a look afterwards
  onCleanup(`remove ${dir}`, () =>
    process.env.SAMSA_BENCH_KEEP === '1' ? process.stderr.write(`[bench] kept ${dir}\n`) : rmSync(dir, { recursive: true, force: true }),
  );
  return dir;
}

async function drain() {
  while (undos.length > 0) {
    const entry = undos.pop();
    if (entry.done) continue;
    entry.done = true;
    try {
      await entry.fn();
    } catch (err) {
      process.stderr.write(`[bench] cleanup "${entry.what}" failed: ${err?.message ?? err}\n`);
    }
  }
}

/** Runs every registered undo, newest first; a failing undo does not stop the others. */
export function cleanupAll() {
  // .finally runs after the assignment even when there is nothing to undo
  running ??= drain().finally(() => (running = null));
  return running;
}

/** On SIGINT/SIGTERM/SIGHUP: clean up, then exit 128+signal. A second signal exits at once. */
export function installSignalHandlers() {
  const codes = { SIGINT: 2, SIGTERM: 15, SIGHUP: 1 };
  for (const [sig, n] of Object.entries(codes)) {
    process.on(sig, () => {
      if (interrupted) process.exit(128 + n);
      interrupted = true;
      process.stderr.write(`\n[bench] ${sig}: stopping what the benchmark started\n`);
      const hard = setTimeout(() => process.exit(128 + n), 20_000);
      hard.unref();
      void cleanupAll().finally(() => process.exit(128 + n));
    });
  }
}
