import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { srvr, type SrvrInfo } from './four-letter.js';
import { ManagedProcess, inNetns } from './managed-process.js';
import { freePorts } from './ports.js';

export const ZOOKEEPER_JAR = '/usr/share/java/zookeeper.jar';
export const SLF4J_SIMPLE_JAR = '/usr/share/java/slf4j-simple.jar';
const MAIN_CLASS = 'org.apache.zookeeper.server.quorum.QuorumPeerMain';

export class ZooKeeperNotInstalledError extends Error {}

/**
 * Makes sure Debian's `zookeeper` package is installed. When `install` is true and we are root,
 * runs apt-get; otherwise throws with the command to run.
 */
export function ensureZooKeeperInstalled(opts: { install?: boolean; log?: (msg: string) => void } = {}): void {
  if (existsSync(ZOOKEEPER_JAR)) return;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!opts.install || !isRoot) {
    throw new ZooKeeperNotInstalledError(`ZooKeeper is not installed (${ZOOKEEPER_JAR} missing): run \`apt-get install -y zookeeper\` as root`);
  }
  opts.log?.('installing Debian package zookeeper');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [
    ['-o', 'DPkg::Lock::Timeout=600', 'update', '-qq'],
    ['-o', 'DPkg::Lock::Timeout=600', 'install', '-y', '-qq', 'zookeeper'],
  ]) {
    const r = spawnSync('apt-get', args, { stdio: 'inherit', env });
    if (r.status !== 0) throw new ZooKeeperNotInstalledError(`apt-get ${args.join(' ')} failed (exit ${r.status})`);
  }
}

export interface ZooKeeperServerConfig {
  /** myid, 1-based. */
  id: number;
  host: string;
  clientPort: number;
  peerPort: number;
  electionPort: number;
  dataDir: string;
}

export interface ZooKeeperEnsembleOptions {
  /** 1 (standalone) or 3. */
  size: number;
  /** Parent directory for each server's data dir (`<baseDir>/zk-<id>`). */
  baseDir: string;
  host?: string;
  /** Fixed ports; random free ports when omitted. */
  clientPorts?: number[];
  peerPorts?: number[];
  electionPorts?: number[];
  /** ZooKeeper tickTime; session timeouts are clamped to 2..20 ticks. Default 500. */
  tickTime?: number;
  heapMb?: number;
  /** slf4j-simple level for the servers' own logs. Default `warn`. */
  logLevel?: 'trace' | 'debug' | 'info' | 'warn' | 'error';
  onLine?: (name: string, line: string) => void;
  /** Write each server's output to `<dataDir>/../zk-<id>.log`. */
  logToFile?: boolean;
  /** How long to wait for every server to answer `srvr` with a Mode. Default 60 s. */
  startTimeoutMs?: number;
  /** Run the servers inside this network namespace (`ip netns exec NS java ...`; root only). */
  netns?: string;
}

export interface ZooKeeperServerStatus {
  id: number;
  pid: number | undefined;
  address: string;
  running: boolean;
  info: SrvrInfo | null;
  error?: string;
}

/** One server of an ensemble; a process that can be stopped, killed, paused and restarted. */
export class ZooKeeperServer {
  process: ManagedProcess | undefined;

  constructor(
    readonly config: ZooKeeperServerConfig,
    private readonly ensemble: ZooKeeperServerConfig[],
    private readonly opts: Required<Pick<ZooKeeperEnsembleOptions, 'tickTime' | 'heapMb' | 'logLevel'>> &
      Pick<ZooKeeperEnsembleOptions, 'onLine' | 'logToFile' | 'netns'>,
  ) {}

  get address(): string {
    return `${this.config.host}:${this.config.clientPort}`;
  }

  get pid(): number | undefined {
    return this.process?.running ? this.process.pid : undefined;
  }

  private renderConfig(): string {
    const c = this.config;
    const lines = [
      `tickTime=${this.opts.tickTime}`,
      `initLimit=10`,
      `syncLimit=5`,
      `dataDir=${c.dataDir}`,
      `clientPort=${c.clientPort}`,
      `clientPortAddress=${c.host}`,
      `4lw.commands.whitelist=*`,
      `admin.enableServer=false`,
      `maxClientCnxns=0`,
      `autopurge.purgeInterval=1`,
    ];
    if (this.ensemble.length > 1) {
      for (const s of this.ensemble) lines.push(`server.${s.id}=${s.host}:${s.peerPort}:${s.electionPort}`);
    }
    return lines.join('\n') + '\n';
  }

  /** Writes zoo.cfg and myid, then launches the JVM (does not wait for it to serve). */
  async launch(): Promise<void> {
    if (this.process?.running) return;
    const c = this.config;
    await mkdir(c.dataDir, { recursive: true });
    const cfgPath = join(c.dataDir, 'zoo.cfg');
    await writeFile(cfgPath, this.renderConfig());
    await writeFile(join(c.dataDir, 'myid'), `${c.id}\n`);
    this.process = new ManagedProcess({
      name: `zk-${c.id}`,
      ...inNetns(this.opts.netns, 'java', [
        `-Xms32m`,
        `-Xmx${this.opts.heapMb}m`,
        '-XX:+UseSerialGC',
        '-Dzookeeper.admin.enableServer=false',
        `-Dorg.slf4j.simpleLogger.defaultLogLevel=${this.opts.logLevel}`,
        '-Dorg.slf4j.simpleLogger.showDateTime=true',
        '-cp',
        `${ZOOKEEPER_JAR}:${SLF4J_SIMPLE_JAR}`,
        MAIN_CLASS,
        cfgPath,
      ]),
      cwd: c.dataDir,
      ...(this.opts.onLine ? { onLine: this.opts.onLine } : {}),
      ...(this.opts.logToFile ? { logFile: join(c.dataDir, '..', `zk-${c.id}.log`) } : {}),
    });
  }

  /** `srvr` answer, or null if not serving / unreachable. */
  async status(timeoutMs = 1000): Promise<SrvrInfo | null> {
    try {
      return await srvr(this.config.host, this.config.clientPort, timeoutMs);
    } catch {
      return null;
    }
  }

  /** Polls `srvr` until it reports a Mode (ruok answers before the server serves). */
  async waitServing(timeoutMs = 60_000): Promise<SrvrInfo> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.process && !this.process.running) {
        throw new Error(`ZooKeeper server ${this.config.id} exited before serving`);
      }
      const info = await this.status(500);
      if (info) return info;
      if (Date.now() > deadline) throw new Error(`ZooKeeper server ${this.config.id} not serving after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async stop(): Promise<void> {
    await this.process?.stop();
  }

  async kill(): Promise<void> {
    await this.process?.kill();
  }

  pause(): void {
    this.process?.signal('SIGSTOP');
  }

  resume(): void {
    this.process?.signal('SIGCONT');
  }

  async restart(timeoutMs?: number): Promise<SrvrInfo> {
    await this.stop();
    await this.launch();
    return this.waitServing(timeoutMs);
  }
}

/** An N-server ZooKeeper ensemble of real Apache ZooKeeper processes on loopback. */
export class ZooKeeperEnsemble {
  private constructor(readonly servers: ZooKeeperServer[]) {}

  static async configure(opts: ZooKeeperEnsembleOptions): Promise<ZooKeeperEnsemble> {
    if (opts.size < 1) throw new Error('ensemble size must be at least 1');
    const host = opts.host ?? '127.0.0.1';
    const n = opts.size;
    const need = (given: number[] | undefined) => (given ? 0 : n);
    const pool = await freePorts(need(opts.clientPorts) + need(opts.peerPorts) + need(opts.electionPorts), host);
    const take = (given: number[] | undefined): number[] => given ?? pool.splice(0, n);
    const clientPorts = take(opts.clientPorts);
    const peerPorts = take(opts.peerPorts);
    const electionPorts = take(opts.electionPorts);
    const configs: ZooKeeperServerConfig[] = [];
    for (let i = 0; i < n; i++) {
      configs.push({
        id: i + 1,
        host,
        clientPort: clientPorts[i]!,
        peerPort: peerPorts[i]!,
        electionPort: electionPorts[i]!,
        dataDir: resolve(opts.baseDir, `zk-${i + 1}`),
      });
    }
    const serverOpts = {
      tickTime: opts.tickTime ?? 500,
      heapMb: opts.heapMb ?? 128,
      logLevel: opts.logLevel ?? 'warn',
      onLine: opts.onLine,
      logToFile: opts.logToFile,
      netns: opts.netns,
    };
    return new ZooKeeperEnsemble(configs.map((c) => new ZooKeeperServer(c, configs, serverOpts)));
  }

  /** Configures, launches every server and waits until all of them serve. */
  static async start(opts: ZooKeeperEnsembleOptions): Promise<ZooKeeperEnsemble> {
    ensureZooKeeperInstalled();
    const ens = await ZooKeeperEnsemble.configure(opts);
    try {
      await Promise.all(ens.servers.map((s) => s.launch()));
      await Promise.all(ens.servers.map((s) => s.waitServing(opts.startTimeoutMs ?? 60_000)));
    } catch (err) {
      await ens.stop();
      throw err;
    }
    return ens;
  }

  /** `host:port,host:port[/chroot]`. */
  connectString(chroot?: string): string {
    return this.servers.map((s) => s.address).join(',') + (chroot ?? '');
  }

  server(id: number): ZooKeeperServer {
    const s = this.servers.find((x) => x.config.id === id);
    if (!s) throw new Error(`no ZooKeeper server ${id}`);
    return s;
  }

  async status(): Promise<ZooKeeperServerStatus[]> {
    return Promise.all(
      this.servers.map(async (s) => ({
        id: s.config.id,
        pid: s.pid,
        address: s.address,
        running: s.process?.running ?? false,
        info: await s.status(),
      })),
    );
  }

  /** The server that currently reports Mode: leader (or standalone). */
  async leader(): Promise<ZooKeeperServer | undefined> {
    for (const s of this.servers) {
      const info = await s.status();
      if (info && (info.mode === 'leader' || info.mode === 'standalone')) return s;
    }
    return undefined;
  }

  async stop(): Promise<void> {
    await Promise.all(this.servers.map((s) => s.stop()));
  }
}
