/**
 * `samsa chaos --duration 5m`: random, seeded faults against the local cluster (`samsa cluster up
 * --detach`, recorded in <data-dir>/cluster.json) while the verify workload runs, then the verify
 * check. Faults: SIGKILL / SIGTERM / SIGSTOP (+SIGCONT) of a random broker, SIGKILL of the
 * controller, SIGKILL of one ZooKeeper server; one at a time, each followed by a restart (SIGUSR2
 * asks the cluster's supervisor to start again what is down). Prints the verify table, the faults
 * injected and the leader / controller elections seen; exits 1 on any violation.
 */
import { join } from 'node:path';
import type { Command } from 'commander';
import { formatReport } from '@samsa/client/verify';
import { isAlive, probeLocalCluster, readState, type LocalClusterState } from '@samsa/local-cluster';
import { KafkaZk, ZkClient } from '@samsa/zk-paths';
import { ElectionObserver } from './chaos-observer.js';
import { addVerifyOptions, runVerify, verifyRunOptions, type RawVerifyOptions } from '../verify/verify.js';
import { parseDuration } from '../verify/verify-options.js';
import { commandBuilder, printer, registerCommand, type CommandBuilder, type CommandIo } from '../../shared/runner.js';

export const FAULT_KINDS = ['broker-sigkill', 'broker-sigterm', 'broker-sigstop', 'controller-sigkill', 'zookeeper-sigkill'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface InjectedFault {
  at: number;
  kind: FaultKind;
  target: string;
  pid: number;
  /** How long it was down (or paused), ms. */
  downMs: number;
  /** Time until everything served again after the restart, ms. */
  recoveredMs: number;
}

/** mulberry32 (the chaos suite's generator): the same seed gives the same faults. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/** Asks the supervisor to start what is down, then waits until every process serves. */
async function heal(dataDir: string, timeoutMs = 180_000): Promise<LocalClusterState> {
  const first = readState(dataDir);
  if (!first) throw new Error(`the local cluster is gone (no ${join(dataDir, 'cluster.json')})`);
  signal(first.supervisorPid, 'SIGUSR2');
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = readState(dataDir);
    if (s) {
      const rows = await probeLocalCluster(s);
      if (rows.every((r) => r.alive && r.info !== null)) return s;
    }
    if (Date.now() > deadline) throw new Error(`the local cluster did not recover within ${timeoutMs} ms`);
    await sleep(250);
  }
}

async function controllerOf(connect: string): Promise<number | null> {
  const zk = new KafkaZk(await ZkClient.connect({ connectString: connect, sessionTimeoutMs: 10_000 }));
  try {
    return await zk.getControllerId();
  } finally {
    await zk.zk.close();
  }
}

export interface ChaosOptions {
  dataDir: string;
  durationMs: number;
  seed: number;
  /** Mean time between faults. */
  intervalMs: number;
  kinds: readonly FaultKind[];
  out: (s: string) => void;
}

/** Injects faults until `durationMs` is over; one at a time, each healed before the next. */
export async function injectFaults(o: ChaosOptions, stats: () => { acknowledged: number }): Promise<InjectedFault[]> {
  const rnd = seededRandom(o.seed);
  const faults: InjectedFault[] = [];
  const end = Date.now() + o.durationMs;
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  while (Date.now() < end) {
    await sleep(Math.min(Math.max(0, end - Date.now()), o.intervalMs * (0.5 + rnd())));
    if (Date.now() >= end) break;
    const s = readState(o.dataDir);
    if (!s) throw new Error(`the local cluster is gone (no ${join(o.dataDir, 'cluster.json')})`);
    let kind = pick(o.kinds);
    if (kind === 'zookeeper-sigkill' && s.zookeeper.servers.length < 3) kind = 'broker-sigkill';
    const downMs = Math.round(2000 + rnd() * 6000);
    let target: string;
    let pid: number | undefined;
    if (kind === 'zookeeper-sigkill') {
      const z = pick(s.zookeeper.servers);
      target = `zk-${z.id}`;
      pid = z.pid;
    } else {
      let id = pick(s.brokers).id;
      if (kind === 'controller-sigkill') id = (await controllerOf(s.zookeeper.connect).catch(() => null)) ?? id;
      const b = s.brokers.find((x) => x.id === id)!;
      target = `broker-${b.id}`;
      pid = b.pid;
    }
    if (pid === undefined || !isAlive(pid)) continue;
    const at = Date.now();
    const ackedBefore = stats().acknowledged;
    o.out(`  fault ${faults.length + 1}: ${kind} ${target} (pid ${pid}) for ${downMs} ms`);
    if (kind === 'broker-sigstop') {
      signal(pid, 'SIGSTOP');
      await sleep(downMs);
      signal(pid, 'SIGCONT');
    } else {
      signal(pid, kind === 'broker-sigterm' ? 'SIGTERM' : 'SIGKILL');
      // a clean shutdown takes a while: wait until the process is gone
      const gone = Date.now() + 60_000;
      while (isAlive(pid) && Date.now() < gone) await sleep(100);
      await sleep(downMs);
    }
    const healStart = Date.now();
    await heal(o.dataDir);
    faults.push({ at, kind, target, pid, downMs, recoveredMs: Date.now() - healStart });
    // the cluster takes writes again before the next fault
    const progress = Date.now() + 60_000;
    while (stats().acknowledged <= ackedBefore && Date.now() < progress) await sleep(200);
  }
  return faults;
}

export function formatFaults(faults: readonly InjectedFault[], start: number): string {
  const rows = [['#', 'AT', 'FAULT', 'TARGET', 'PID', 'DOWN', 'RECOVERED IN']];
  faults.forEach((f, i) =>
    rows.push([
      String(i + 1),
      `${((f.at - start) / 1000).toFixed(1)} s`,
      f.kind,
      f.target,
      String(f.pid),
      `${(f.downMs / 1000).toFixed(1)} s`,
      `${(f.recoveredMs / 1000).toFixed(1)} s`,
    ]),
  );
  const w = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows
    .map((r) =>
      r
        .map((c, i) => c.padEnd(w[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

export interface RawChaosOptions extends RawVerifyOptions {
  dataDir: string;
  seed?: string;
  faultInterval: string;
  faults: string;
}

const DESCRIPTION =
  'Random seeded faults (SIGKILL/SIGTERM/SIGSTOP of brokers, the controller, a ZooKeeper server) against the local cluster while samsa verify runs; exits 1 on any violation';

function defineChaosOptions(cmd: Command): Command {
  return addVerifyOptions(
    cmd
      .option('--data-dir <dir>', 'data directory of the local cluster (samsa cluster up --detach)', 'data')
      .option('--duration <duration>', 'how long to inject faults and produce (e.g. 5m)', '5m')
      .option('--seed <n>', 'random seed (default: from the clock; printed)')
      .option('--fault-interval <duration>', 'mean time between faults', '20s')
      .option('--faults <kinds>', `comma-separated fault kinds (${FAULT_KINDS.join(',')})`, FAULT_KINDS.join(',')),
  );
}

/** Faults while the verify workload runs, then the report; exit code 1 on any violation. */
export async function executeChaosCommand(raw: RawChaosOptions, io: CommandIo): Promise<number> {
  const out = printer(io);
  const state = readState(raw.dataDir);
  if (!state || !isAlive(state.supervisorPid)) throw new Error(`no local cluster running in ${raw.dataDir}: start one with \`samsa cluster up --detach\``);
  const kinds = raw.faults.split(',').map((k) => k.trim()) as FaultKind[];
  for (const k of kinds) if (!(FAULT_KINDS as readonly string[]).includes(k)) throw new Error(`unknown fault kind '${k}' (known: ${FAULT_KINDS.join(', ')})`);
  const seed = raw.seed !== undefined ? Number(raw.seed) : Date.now() % 1_000_000_007;
  const durationMs = parseDuration(raw.duration ?? '5m');
  const run = verifyRunOptions(
    { ...raw, bootstrapServer: state.bootstrap, duration: raw.duration ?? '5m', topic: raw.topic ?? `samsa-chaos-${Date.now()}` },
    out,
  );
  run.logDirs = Object.fromEntries(state.brokers.map((b) => [b.id, join(b.dir, 'logs')]));
  out(`samsa chaos: seed ${seed}, ${Math.round(durationMs / 1000)} s, faults ${kinds.join(',')} every ~${raw.faultInterval}, cluster ${state.bootstrap}`);
  const observer = new ElectionObserver(state.zookeeper.connect, run.topic, run.partitions);
  let faults: InjectedFault[] = [];
  const start = Date.now();
  run.during = async (stats) => {
    await observer.start();
    faults = await injectFaults({ dataDir: raw.dataDir, durationMs, seed, intervalMs: parseDuration(raw.faultInterval), kinds, out }, stats);
    await heal(raw.dataDir);
  };
  let report;
  try {
    report = await runVerify(run);
  } finally {
    await observer.stop().catch(() => undefined);
  }
  const leaders = observer.events.filter((e) => e.kind === 'leader');
  const controllers = observer.events.filter((e) => e.kind === 'controller');
  out('');
  out(formatReport(report));
  out('');
  out(`faults injected: ${faults.length} (seed ${seed})`);
  if (faults.length) out(formatFaults(faults, start));
  out('');
  out(`leader elections seen: ${leaders.length} (leader epoch changes in the partition state znodes); controller elections: ${controllers.length}`);
  for (const e of observer.events)
    out(
      `  ${((e.at - start) / 1000).toFixed(1)} s  ${e.kind === 'leader' ? `${e.partition} leader ${e.from} -> ${e.to}` : `controller ${e.from} -> ${e.to}`} (epoch ${e.epoch})`,
    );
  if (raw.json) out(JSON.stringify({ report, faults, elections: observer.events, seed }, null, 2));
  return report.ok ? 0 : 1;
}

export const chaosCommand: CommandBuilder = commandBuilder('chaos', DESCRIPTION, defineChaosOptions, (raw: RawChaosOptions, io) =>
  executeChaosCommand(raw, io),
);

export function registerChaosCommand(program: Command): void {
  registerCommand(program, chaosCommand);
}
