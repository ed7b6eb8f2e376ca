import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, readdirSync, rmSync, writeFileSync, type WriteStream } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';

export interface ManagedProcessOptions {
  /** Short name used as a log prefix, e.g. `zk-1`, `broker-0`. */
  name: string;
  command: string;
  args: string[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Every output line (stdout and stderr), without the trailing newline. */
  onLine?: (name: string, line: string) => void;
  /** Append raw output to this file as well. */
  logFile?: string;
}

/**
 * `command args` as run inside network namespace `netns` (`ip netns exec NS command args`), or
 * unchanged without one. `ip netns exec` execs the command in place, so the pid (and signals such as
 * SIGSTOP) are the command's own.
 */
export function inNetns(netns: string | undefined, command: string, args: string[]): { command: string; args: string[] } {
  return netns ? { command: 'ip', args: ['netns', 'exec', netns, command, ...args] } : { command, args };
}

const live = new Set<ManagedProcess>();
let exitHookInstalled = false;

/**
 * A child process we own: output split into lines, exit tracked, and killed with the parent.
 * When SAMSA_PID_DIR is set (the test harness sets it), a pid file is kept there while the process
 * runs so a global teardown can reap strays even if this process dies without running exit hooks.
 */
export class ManagedProcess {
  readonly name: string;
  readonly child: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private readonly pidFile: string | undefined;
  private readonly log: WriteStream | undefined;

  constructor(opts: ManagedProcessOptions) {
    this.name = opts.name;
    if (opts.logFile) mkdirSync(dirname(opts.logFile), { recursive: true });
    this.log = opts.logFile ? createWriteStream(opts.logFile, { flags: 'a' }) : undefined;
    this.child = spawn(opts.command, opts.args, {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const onLine = opts.onLine;
    for (const stream of [this.child.stdout, this.child.stderr]) {
      if (!stream) continue;
      if (this.log) stream.pipe(this.log, { end: false });
      if (onLine) createInterface({ input: stream }).on('line', (l) => onLine(this.name, l));
      else if (!this.log) stream.resume();
    }
    const pidDir = process.env['SAMSA_PID_DIR'];
    if (pidDir && this.child.pid !== undefined) {
      mkdirSync(pidDir, { recursive: true });
      this.pidFile = join(pidDir, `${this.child.pid}.pid`);
      writeFileSync(this.pidFile, `${this.name}\n`);
    }
    live.add(this);
    installExitHook();
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        live.delete(this);
        if (this.pidFile) rmSync(this.pidFile, { force: true });
        resolve(this.exitInfo);
      });
      // output can still arrive after 'exit': the log file is closed once the pipes are drained
      this.child.once('close', () => this.log?.end());
      this.child.once('error', () => {
        // spawn failure: 'exit' may never come
        this.exitInfo = { code: -1, signal: null };
        live.delete(this);
        if (this.pidFile) rmSync(this.pidFile, { force: true });
        resolve(this.exitInfo);
      });
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return this.exitInfo === undefined;
  }

  signal(sig: NodeJS.Signals): void {
    if (this.running) this.child.kill(sig);
  }

  /** SIGTERM, then SIGKILL after `graceMs`. Resolves when the process is gone. */
  async stop(graceMs = 5000): Promise<void> {
    if (!this.running) return;
    this.signal('SIGCONT'); // a paused process cannot handle SIGTERM
    this.signal('SIGTERM');
    const timer = setTimeout(() => this.signal('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  async kill(): Promise<void> {
    this.signal('SIGKILL');
    await this.exited;
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const p of live) {
      try {
        p.child.kill('SIGKILL');
      } catch {
        /* already gone */
      }
    }
  });
}

/** Kills every process whose pid file is in `pidDir` (strays of a crashed run) and empties it. */
export function reapPidDir(pidDir: string): number {
  let killed = 0;
  let entries: string[] = [];
  try {
    entries = readdirSync(pidDir);
  } catch {
    return 0;
  }
  for (const f of entries) {
    const pid = Number(f.replace(/\.pid$/, ''));
    if (!Number.isInteger(pid) || pid <= 0) continue;
    try {
      process.kill(pid, 'SIGKILL');
      killed++;
    } catch {
      /* not running */
    }
    rmSync(join(pidDir, f), { force: true });
  }
  return killed;
}
