import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { SrvrInfo } from './four-letter.js';
import { srvr } from './four-letter.js';
import { ZooKeeperEnsemble, ensureZooKeeperInstalled } from './zookeeper.js';
import { BrokerProcess } from './broker-process.js';
import { portOpen } from './ports.js';
import { type ZooKeeperAuthSettings, type ZooKeeperDigestAuth, zookeeperAuthSettings } from './zookeeper-auth.js';

/** What `samsa cluster up` writes to `<dataDir>/cluster.json` while it runs. */
export interface LocalClusterState {
  supervisorPid: number;
  state: 'starting' | 'running' | 'stopping';
  startedAt: string;
  dataDir: string;
  zookeeper: {
    connect: string;
    servers: Array<{
      id: number;
      pid: number | undefined;
      host: string;
      clientPort: number;
      peerPort: number;
      electionPort: number;
      dataDir: string;
      logFile: string;
    }>;
    /** With `secureZooKeeper`: the JAAS file holding the brokers' ZooKeeper credentials (zookeeper.set.acl=true). */
    jaasConfig?: string;
  };
  brokers: Array<{ id: number; pid: number | undefined; host: string; port: number; controlPort: number; metricsPort?: number; dir: string }>;
  /** bootstrap.servers for clients. */
  bootstrap: string;
  /** Started with `security` (`samsa cluster up --secure`): clients need the files of `clientConfigs`. */
  secure?: true;
  /** With `security`: client configuration files by name (e.g. `commandConfig`, `librdkafka`). */
  clientConfigs?: Record<string, string>;
}

type SecurityProtocol = 'PLAINTEXT' | 'SSL' | 'SASL_PLAINTEXT' | 'SASL_SSL';

/** How the brokers of a secured local cluster listen and what runs before they start. */
export interface LocalClusterSecurity {
  /** Protocol of the client listener, which is also the inter-broker listener. */
  securityProtocol: SecurityProtocol;
  /** Protocol of the CONTROLLER (control-plane) listener. */
  controlSecurityProtocol: SecurityProtocol;
  /** server.properties entries of every broker (ssl.*, sasl.*, authorizer). */
  overrides: Record<string, string>;
  /** A chroot (`/kafka`) appended to the brokers' zookeeper.connect. */
  zkChroot?: string;
  /** Runs once ZooKeeper serves and before any broker starts (e.g. writes SCRAM credentials), with the brokers' zookeeper.connect. */
  beforeBrokers?: (zookeeperConnect: string) => Promise<void>;
  /** Recorded in cluster.json as `clientConfigs`. */
  clientConfigs?: Record<string, string>;
}

export interface LocalClusterOptions {
  dataDir: string;
  zkServers: number;
  /** First ZooKeeper client port; servers use consecutive ports (2181, 2182, 2183). */
  zkClientPort: number;
  zkPeerPort: number;
  zkElectionPort: number;
  /** Number of brokers (ids 0..n-1). */
  brokers: number;
  /** First broker client port (9092, 9093, 9094); control ports are +10000. */
  brokerPort: number;
  /** First broker metrics port (9404, 9405, 9406: /metrics, /health, /ready); 0 disables. */
  metricsPort?: number;
  /**
   * Secured ZooKeeper: every broker authenticates with these digest credentials (a JAAS `Client`
   * section in `<dataDir>/secure/zookeeper-client-jaas.conf`, named by KAFKA_OPTS) and runs with
   * zookeeper.set.acl=true, so only brokers may write the znodes they create.
   */
  secureZooKeeper?: ZooKeeperDigestAuth;
  /** Secured listeners (`samsa cluster up --secure`); cluster.json records `secure: true`. */
  security?: LocalClusterSecurity;
  /** Prints each child output line (foreground mode). */
  onLine?: (name: string, line: string) => void;
  log: (msg: string) => void;
}

export const DEFAULT_LOCAL_CLUSTER = {
  dataDir: 'data',
  zkServers: 3,
  zkClientPort: 2181,
  zkPeerPort: 2888,
  zkElectionPort: 3888,
  brokers: 3,
  brokerPort: 9092,
  metricsPort: 9404,
} as const;

export function stateFile(dataDir: string): string {
  return join(resolve(dataDir), 'cluster.json');
}

export function readState(dataDir: string): LocalClusterState | undefined {
  const f = stateFile(dataDir);
  if (!existsSync(f)) return undefined;
  try {
    return JSON.parse(readFileSync(f, 'utf8')) as LocalClusterState;
  } catch (err) {
    throw new Error(`${f} is not valid JSON; remove it if no cluster is running`, { cause: err });
  }
}

function writeState(dataDir: string, s: LocalClusterState): void {
  const f = stateFile(dataDir);
  writeFileSync(`${f}.tmp`, JSON.stringify(s, null, 2) + '\n');
  renameSync(`${f}.tmp`, f);
}

export function isAlive(pid: number | undefined): boolean {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The local development cluster: a ZooKeeper ensemble (and, once brokers exist, the brokers) as
 * children of one supervisor process that records what runs where in `<dataDir>/cluster.json`.
 */
export class LocalCluster {
  private ensemble: ZooKeeperEnsemble | undefined;
  private readonly brokers: BrokerProcess[] = [];
  private stopping = false;
  private snapshot: ((phase: LocalClusterState['state']) => LocalClusterState) | undefined;
  private healing: Promise<string[]> | undefined;

  constructor(private readonly opts: LocalClusterOptions) {}

  /** Starts everything and returns once all of it serves. Throws when a cluster already runs here. */
  async start(): Promise<LocalClusterState> {
    const { dataDir } = this.opts;
    const existing = readState(dataDir);
    if (existing && isAlive(existing.supervisorPid) && existing.supervisorPid !== process.pid) {
      throw new Error(`a local cluster is already running (supervisor pid ${existing.supervisorPid}); stop it with \`npm stop\``);
    }
    mkdirSync(resolve(dataDir, 'logs'), { recursive: true });
    ensureZooKeeperInstalled({ install: true, log: this.opts.log });
    const n = this.opts.zkServers;
    const range = (base: number) => Array.from({ length: n }, (_, i) => base + i);
    const ens = await ZooKeeperEnsemble.configure({
      size: n,
      baseDir: resolve(dataDir, 'zookeeper'),
      clientPorts: range(this.opts.zkClientPort),
      peerPorts: range(this.opts.zkPeerPort),
      electionPorts: range(this.opts.zkElectionPort),
      logLevel: 'info',
      ...(this.opts.onLine ? { onLine: this.opts.onLine } : {}),
      logToFile: true,
    });
    for (const s of ens.servers) {
      try {
        await srvr(s.config.host, s.config.clientPort, 300);
        throw new Error(`port ${s.config.clientPort} already answers as a ZooKeeper server; stop it or pick other ports`);
      } catch (err) {
        if ((err as Error).message.startsWith('port ')) throw err;
      }
    }
    this.ensemble = ens;
    const zkAuth: ZooKeeperAuthSettings | undefined = this.opts.secureZooKeeper
      ? await zookeeperAuthSettings(resolve(dataDir, 'secure'), this.opts.secureZooKeeper)
      : undefined;
    const sec = this.opts.security;
    const zkConnect = ens.connectString() + (sec?.zkChroot ?? '');
    for (let i = 0; i < this.opts.brokers; i++) {
      this.brokers.push(
        new BrokerProcess({
          id: i,
          port: this.opts.brokerPort + i,
          controlPort: this.opts.brokerPort + 10000 + i,
          ...(this.opts.metricsPort ? { metricsPort: this.opts.metricsPort + i } : {}),
          zookeeperConnect: zkConnect,
          dir: resolve(dataDir, `broker-${i}`),
          logToFile: true,
          ...(this.opts.onLine ? { onLine: this.opts.onLine } : {}),
          ...(zkAuth ? { env: zkAuth.env } : {}),
          ...(sec ? { securityProtocol: sec.securityProtocol, controlSecurityProtocol: sec.controlSecurityProtocol } : {}),
          overrides: { ...zkAuth?.overrides, ...sec?.overrides },
        }),
      );
    }
    const state = (phase: LocalClusterState['state']): LocalClusterState => ({
      supervisorPid: process.pid,
      state: phase,
      startedAt: new Date().toISOString(),
      dataDir: resolve(dataDir),
      zookeeper: {
        connect: zkConnect,
        servers: ens.servers.map((s) => ({
          id: s.config.id,
          pid: s.pid,
          host: s.config.host,
          clientPort: s.config.clientPort,
          peerPort: s.config.peerPort,
          electionPort: s.config.electionPort,
          dataDir: s.config.dataDir,
          logFile: join(s.config.dataDir, '..', `zk-${s.config.id}.log`),
        })),
        ...(zkAuth ? { jaasConfig: zkAuth.jaasFile } : {}),
      },
      brokers: this.brokers.map((b) => ({
        id: b.id,
        pid: b.pid,
        host: b.host,
        port: b.o.port,
        controlPort: b.o.controlPort,
        ...(b.o.metricsPort ? { metricsPort: b.o.metricsPort } : {}),
        dir: b.o.dir,
      })),
      bootstrap: this.brokers.map((b) => b.address).join(','),
      ...(sec ? { secure: true as const, ...(sec.clientConfigs ? { clientConfigs: sec.clientConfigs } : {}) } : {}),
    });
    this.snapshot = state;
    writeState(dataDir, state('starting'));
    this.opts.log(`starting ${n} ZooKeeper server(s) on ${ens.connectString()}`);
    await Promise.all(ens.servers.map((s) => s.launch()));
    writeState(dataDir, state('starting')); // now with pids
    try {
      await Promise.all(ens.servers.map((s) => s.waitServing(120_000)));
      if (sec?.beforeBrokers) await sec.beforeBrokers(zkConnect);
      if (this.brokers.length > 0) {
        this.opts.log(`starting ${this.brokers.length} broker(s) on ${this.brokers.map((b) => b.address).join(',')}`);
        await Promise.all(this.brokers.map((b) => b.launch()));
        writeState(dataDir, state('starting'));
        await Promise.all(this.brokers.map((b) => b.waitReady(120_000)));
      }
    } catch (err) {
      await this.stop();
      throw err;
    }
    for (const s of ens.servers) this.watchExit(`zk-${s.config.id}`, s.process);
    for (const b of this.brokers) this.watchExit(`broker-${b.id}`, b.process);
    const running = state('running');
    writeState(dataDir, running);
    return running;
  }

  private watchExit(name: string, p: { exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }> } | undefined): void {
    void p?.exited.then((info) => {
      if (!this.stopping) this.opts.log(`${name} exited unexpectedly (${info.signal ?? `code ${info.code}`})`);
    });
  }

  /**
   * Starts again every ZooKeeper server and broker that is not running (killed by `samsa chaos`, or
   * crashed), waits until they serve and records their new pids in cluster.json. The supervisor
   * runs it on SIGUSR2. Resolves with the names of what was started.
   */
  heal(): Promise<string[]> {
    this.healing ??= (async () => {
      const started: string[] = [];
      if (!this.ensemble || this.stopping) return started;
      const zks = this.ensemble.servers.filter((s) => !s.process?.running);
      const brokers = this.brokers.filter((b) => !b.process?.running);
      for (const s of zks) {
        await s.launch();
        this.watchExit(`zk-${s.config.id}`, s.process);
        started.push(`zk-${s.config.id}`);
      }
      for (const b of brokers) {
        await b.launch();
        this.watchExit(`broker-${b.id}`, b.process);
        started.push(`broker-${b.id}`);
      }
      if (this.snapshot) writeState(this.opts.dataDir, this.snapshot('running'));
      await Promise.all(zks.map((s) => s.waitServing(120_000)));
      await Promise.all(brokers.map((b) => b.waitReady(120_000)));
      if (started.length) this.opts.log(`restarted ${started.join(', ')}`);
      return started;
    })().finally(() => (this.healing = undefined));
    return this.healing;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    const s = readState(this.opts.dataDir);
    if (s) writeState(this.opts.dataDir, { ...s, state: 'stopping' });
    // one at a time, so each broker's controlled shutdown finds a live controller to move its leaders to
    for (const b of [...this.brokers].reverse()) await b.stop();
    await this.ensemble?.stop();
    rmSync(stateFile(this.opts.dataDir), { force: true });
  }
}

export interface ServiceStatus {
  service: 'zookeeper' | 'broker';
  id: number;
  pid: number | undefined;
  address: string;
  alive: boolean;
  info: SrvrInfo | null;
  /** Brokers: the metrics endpoint's base URL, when enabled. */
  metrics?: string;
}

/** Probes every process recorded in the state file. */
export async function probeLocalCluster(state: LocalClusterState): Promise<ServiceStatus[]> {
  const brokers = Promise.all(
    (state.brokers ?? []).map(async (b) => ({
      service: 'broker' as const,
      id: b.id,
      pid: b.pid,
      address: `${b.host}:${b.port}`,
      alive: isAlive(b.pid),
      info: (await portOpen(b.host, b.port)) ? ({ mode: 'broker' } as unknown as SrvrInfo) : null,
      ...(b.metricsPort ? { metrics: `http://${b.host}:${b.metricsPort}/metrics` } : {}),
    })),
  );
  const zks = Promise.all(
    state.zookeeper.servers.map(async (z) => {
      let info: SrvrInfo | null = null;
      try {
        info = await srvr(z.host, z.clientPort, 1000);
      } catch {
        info = null;
      }
      return { service: 'zookeeper' as const, id: z.id, pid: z.pid, address: `${z.host}:${z.clientPort}`, alive: isAlive(z.pid), info };
    }),
  );
  return [...(await zks), ...(await brokers)];
}

/**
 * Stops a cluster started by another process: SIGTERM to the supervisor, wait, then SIGKILL any
 * recorded child still alive (a supervisor killed with -9 leaves its children behind).
 */
export async function stopLocalCluster(dataDir: string, log: (msg: string) => void, timeoutMs = 30_000): Promise<boolean> {
  const s = readState(dataDir);
  if (!s) return false;
  const children = [...(s.brokers ?? []).map((b) => b.pid), ...s.zookeeper.servers.map((z) => z.pid)].filter((p): p is number => p !== undefined);
  if (isAlive(s.supervisorPid)) {
    log(`stopping local cluster (supervisor pid ${s.supervisorPid})`);
    process.kill(s.supervisorPid, 'SIGTERM');
    const deadline = Date.now() + timeoutMs;
    while (isAlive(s.supervisorPid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  }
  for (const pid of [s.supervisorPid, ...children]) {
    if (isAlive(pid)) {
      log(`killing leftover process ${pid}`);
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
  }
  const deadline = Date.now() + 10_000;
  while ([s.supervisorPid, ...children].some(isAlive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  rmSync(stateFile(dataDir), { force: true });
  return true;
}
