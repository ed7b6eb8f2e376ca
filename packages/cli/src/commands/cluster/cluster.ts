import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { formatClusterSummary, readClusterSummary } from './cluster-summary.js';
import { commandBuilder, groupBuilder, registerCommand, type CommandBuilder, type CommandIo } from '../../shared/runner.js';
import { dataDirModeMismatch, prepareSecureLocalCluster } from './secure-cluster.js';
import { secureHints, secureInitCommand } from './secure-init.js';
import { DEFAULT_LOCAL_CLUSTER, LocalCluster, isAlive, probeLocalCluster, readState, stopLocalCluster, type LocalClusterState } from '@samsa/local-cluster';

interface UpOptions {
  dataDir: string;
  detach?: boolean;
  zkServers: string;
  zkPort: string;
  zkPeerPort: string;
  zkElectionPort: string;
  brokers: string;
  brokerPort: string;
  metricsPort: string;
  secure?: boolean;
}

function parseCount(v: string, name: string, min = 1): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer >= ${min}, got ${JSON.stringify(v)}`);
  return n;
}

type Say = (msg: string) => void;
/** `[samsa] msg` lines on `io.out`. */
const sayer =
  (io: CommandIo): Say =>
  (msg) =>
    io.out(`[samsa] ${msg}\n`);

function defineUpOptions(cmd: Command): Command {
  return cmd
    .option('--data-dir <dir>', 'where data, logs and cluster.json live', DEFAULT_LOCAL_CLUSTER.dataDir)
    .option('--detach', 'run in the background; stop with `samsa cluster down` (npm stop)')
    .option('--zk-servers <n>', 'ZooKeeper ensemble size (1 or 3)', String(DEFAULT_LOCAL_CLUSTER.zkServers))
    .option('--zk-port <port>', 'first ZooKeeper client port', String(DEFAULT_LOCAL_CLUSTER.zkClientPort))
    .option('--zk-peer-port <port>', 'first ZooKeeper quorum port', String(DEFAULT_LOCAL_CLUSTER.zkPeerPort))
    .option('--zk-election-port <port>', 'first ZooKeeper leader-election port', String(DEFAULT_LOCAL_CLUSTER.zkElectionPort))
    .option('--brokers <n>', 'number of brokers (ids 0..n-1; 0 runs ZooKeeper only)', String(DEFAULT_LOCAL_CLUSTER.brokers))
    .option('--broker-port <port>', 'first broker client port (control-plane ports are +10000)', String(DEFAULT_LOCAL_CLUSTER.brokerPort))
    .option('--metrics-port <port>', 'first broker metrics port (/metrics, /health, /ready); 0 disables', String(DEFAULT_LOCAL_CLUSTER.metricsPort))
    .option('--secure', 'SASL_SSL (SCRAM-SHA-512, user admin) on the client ports, ACLs, secured control plane and ZooKeeper; files in <data-dir>/secure/');
}

const upCommand = commandBuilder(
  'up',
  'start the local cluster in the foreground (Ctrl-C stops it), or in the background with --detach',
  defineUpOptions,
  async (opts: UpOptions, io) => {
    const ports = {
      zkServers: parseCount(opts.zkServers, '--zk-servers'),
      zkClientPort: parseCount(opts.zkPort, '--zk-port'),
      zkPeerPort: parseCount(opts.zkPeerPort, '--zk-peer-port'),
      zkElectionPort: parseCount(opts.zkElectionPort, '--zk-election-port'),
      brokers: parseCount(opts.brokers, '--brokers', 0),
      brokerPort: parseCount(opts.brokerPort, '--broker-port'),
      metricsPort: parseCount(opts.metricsPort, '--metrics-port', 0),
    };
    const mismatch = dataDirModeMismatch(opts.dataDir, opts.secure === true);
    if (mismatch) throw new Error(mismatch);
    if (opts.detach) {
      await detach(opts, io);
      return;
    }
    await foreground(opts.dataDir, ports, opts.secure === true, io);
  },
);

const downCommand = commandBuilder(
  'down',
  'stop the local cluster started with `cluster up`',
  (cmd) => cmd.option('--data-dir <dir>', 'data directory of the cluster', DEFAULT_LOCAL_CLUSTER.dataDir),
  async (opts: { dataDir: string }, io) => {
    const say = sayer(io);
    const stopped = await stopLocalCluster(opts.dataDir, say);
    say(stopped ? 'local cluster stopped' : 'no local cluster running');
  },
);

const statusCommand = commandBuilder(
  'status',
  'show what runs where',
  (cmd) => cmd.option('--data-dir <dir>', 'data directory of the cluster', DEFAULT_LOCAL_CLUSTER.dataDir),
  async (opts: { dataDir: string }, io) => {
    const state = readState(opts.dataDir);
    if (!state) {
      sayer(io)(`no local cluster running (no ${join(opts.dataDir, 'cluster.json')})`);
      return 1;
    }
    return (await printStatus(state, io)) ? 0 : 1;
  },
);

/** `samsa cluster up|down|status`. */
export const clusterCommand: CommandBuilder = groupBuilder('cluster', 'run a local development cluster (ZooKeeper ensemble + brokers) on loopback', [
  upCommand,
  downCommand,
  statusCommand,
  secureInitCommand,
]);

export function registerClusterCommands(program: Command): void {
  registerCommand(program, clusterCommand);
}

async function foreground(
  dataDir: string,
  ports: { zkServers: number; zkClientPort: number; zkPeerPort: number; zkElectionPort: number; brokers: number; brokerPort: number; metricsPort: number },
  secure: boolean,
  io: CommandIo,
): Promise<void> {
  const say = sayer(io);
  const bootstrap = Array.from({ length: ports.brokers }, (_, i) => `127.0.0.1:${ports.brokerPort + i}`).join(',');
  const sec = secure ? await prepareSecureLocalCluster({ dataDir, bootstrap }) : undefined;
  const lc = new LocalCluster({
    dataDir,
    ...ports,
    ...(sec ? { secureZooKeeper: sec.secureZooKeeper, security: sec.security } : {}),
    onLine: (name, line) => io.out(`[${name}] ${line}\n`),
    log: say,
  });
  let stopping: Promise<void> | undefined;
  const shutdown = (sig: string) => {
    if (stopping) return;
    say(`${sig}: stopping`);
    stopping = lc.stop().then(() => {
      say('stopped');
      process.exit(0);
    });
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGHUP', () => shutdown('SIGHUP'));
  // samsa chaos: start again whatever it killed
  process.on('SIGUSR2', () => {
    if (!stopping) lc.heal().catch((err: unknown) => say(`restart failed: ${(err as Error).message}`));
  });
  const state = await lc.start();
  say(`local cluster up — zookeeper.connect=${state.zookeeper.connect}`);
  if (state.brokers.length > 0) say(`bootstrap servers: ${state.bootstrap}`);
  for (const line of secureHints(state)) say(line);
  say('Ctrl-C stops it');
  await new Promise(() => undefined); // run until signalled
}

async function detach(opts: UpOptions, io: CommandIo): Promise<void> {
  const say = sayer(io);
  const existing = readState(opts.dataDir);
  if (existing && isAlive(existing.supervisorPid)) {
    say(`a local cluster is already running (supervisor pid ${existing.supervisorPid})`);
    await printStatus(existing, io);
    return;
  }
  const logFile = resolve(opts.dataDir, 'logs', 'cluster.log');
  mkdirSync(resolve(opts.dataDir, 'logs'), { recursive: true });
  const fd = openSync(logFile, 'a');
  const bin = fileURLToPath(new URL('../../../bin/samsa.js', import.meta.url));
  const child = spawn(
    process.execPath,
    [
      bin,
      'cluster',
      'up',
      '--data-dir',
      opts.dataDir,
      '--zk-servers',
      opts.zkServers,
      '--zk-port',
      opts.zkPort,
      '--zk-peer-port',
      opts.zkPeerPort,
      '--zk-election-port',
      opts.zkElectionPort,
      '--brokers',
      opts.brokers,
      '--broker-port',
      opts.brokerPort,
      '--metrics-port',
      opts.metricsPort,
      ...(opts.secure ? ['--secure'] : []),
    ],
    { detached: true, stdio: ['ignore', fd, fd] },
  );
  closeSync(fd);
  child.unref();
  say(`starting in the background (pid ${child.pid}); logs: ${logFile}`);
  let exited = false;
  child.once('exit', () => (exited = true));
  const deadline = Date.now() + 180_000;
  for (;;) {
    const s = readState(opts.dataDir);
    if (s && s.supervisorPid === child.pid && s.state === 'running') {
      await printStatus(s, io);
      say('stop it with `npm stop`');
      return;
    }
    if (exited || !isAlive(child.pid) || Date.now() > deadline) {
      const tail = readFileSync(logFile, 'utf8').split('\n').slice(-20).join('\n');
      throw new Error(`the cluster did not come up; last lines of ${logFile}:\n${tail}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Prints a table; returns true when everything recorded is alive and serving. */
async function printStatus(state: LocalClusterState, io: CommandIo): Promise<boolean> {
  const rows = await probeLocalCluster(state);
  const table = [['SERVICE', 'ID', 'PID', 'ADDRESS', 'STATE', 'METRICS']];
  for (const r of rows) {
    const serving = r.service === 'broker' ? 'serving' : `serving (${r.info?.mode})`;
    table.push([r.service, String(r.id), r.pid ? String(r.pid) : '-', r.address, r.info ? serving : r.alive ? 'not serving' : 'down', r.metrics ?? '-']);
  }
  const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
  for (const row of table)
    io.out(
      row
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd() + '\n',
    );
  io.out(`\nzookeeper.connect=${state.zookeeper.connect}\n`);
  if ((state.brokers ?? []).length > 0) io.out(`bootstrap.servers=${state.bootstrap}\n`);
  const hints = secureHints(state);
  if (hints.length > 0) io.out(hints.join('\n') + '\n');
  io.out(`supervisor pid ${state.supervisorPid} (${isAlive(state.supervisorPid) ? 'alive' : 'gone'}), state ${state.state}, data ${state.dataDir}\n`);
  if ((state.brokers ?? []).length > 0) {
    const summary = await readClusterSummary(state.zookeeper.connect);
    io.out('\n' + (summary ? formatClusterSummary(summary) : ['cluster metadata: ZooKeeper not reachable']).join('\n') + '\n');
  }
  return isAlive(state.supervisorPid) && rows.every((r) => r.info !== null);
}
