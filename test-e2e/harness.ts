/**
 * The e2e harness: a real ZooKeeper ensemble and real brokers, with per-test data dirs, plus helpers
 * to wait for conditions and find leaders / the controller.
 *
 * Two backends (E2E_BACKEND): `processes` (default) runs ZooKeeper and broker processes on random
 * loopback ports; `containers` runs them as Docker containers (test-e2e/containers.ts, testcontainers)
 * from the samsa image. test-e2e/global-setup.ts checks that the selected backend can run; when it
 * cannot (no Docker engine reachable, no image), every suite is reported as skipped with the reason.
 */
import { spawn } from 'node:child_process';
import { writeScramUser } from './clients/secure-helpers.js';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ConnectionOptions as TlsConnectionOptions } from 'node:tls';
import { describe, inject } from 'vitest';
import { BrokerProcess, ZooKeeperEnsemble, freePorts } from '@samsa/local-cluster';
import { KafkaZk, ZkClient } from '@samsa/zk-paths';
import { Cluster, Connection, findGroupCoordinator, type SaslOptions } from '@samsa/client';
import { API_KEYS } from '@samsa/protocol';
import { BrokerContainer, ZooKeeperContainers, startNetwork } from './containers.js';
import type { StartedNetwork } from 'testcontainers';
import type { E2EBackend } from './global-setup.js';

/** The backend this run uses, and why it cannot run (then suites are skipped). */
export const backend: E2EBackend = inject('e2eBackend') ?? { name: 'processes', skip: null };
export const onContainers = backend.name === 'containers';

/** A broker of either backend (both have id, address, o.port, o.dir, pid, launch/kill/stop/pause/resume). */
export type Broker = BrokerProcess | BrokerContainer;

/**
 * describe() for an e2e suite. It is skipped, with the reason in its name, when the backend cannot
 * run, or on the containers backend when the suite needs broker processes on this machine
 * (`processesOnly`: why, e.g. it reads the brokers' log files).
 */
export function describeCluster(name: string, fn: () => void, o: { processesOnly?: string } = {}): void {
  const reason = backend.skip ?? (onContainers && o.processesOnly ? `needs the processes backend: ${o.processesOnly}` : null);
  if (reason !== null) describe.skip(`${name} [skipped: ${reason}]`, fn);
  else describe(name, fn);
}

export interface ClusterOptions {
  brokers?: number;
  zkServers?: number;
  /** server.properties entries for every broker. */
  overrides?: Record<string, string>;
  /** SASL credentials for the harness's own connections (a SASL_PLAINTEXT client listener). */
  sasl?: SaslOptions;
  /** Print broker output (SAMSA_E2E_VERBOSE=1 does it too). */
  verbose?: boolean;
  /** Give every broker a random metrics.port (`broker.metricsUrl`: /metrics, /health, /ready). */
  metrics?: boolean;
  /** Extra environment for every broker process (processes backend), e.g. a test-only switch. */
  env?: NodeJS.ProcessEnv;
  /**
   * Where ZooKeeper and each broker run (processes backend), instead of random loopback ports: e.g.
   * each in its own network namespace (test-e2e/netns.ts).
   */
  placement?: ClusterPlacement;
  /**
   * Security protocol of each broker's client listener (which is also the inter-broker one) and of
   * its CONTROLLER listener (processes backend); the ssl.* settings go in `overrides`.
   */
  securityProtocol?: 'PLAINTEXT' | 'SSL' | 'SASL_PLAINTEXT' | 'SASL_SSL';
  controlSecurityProtocol?: 'PLAINTEXT' | 'SSL';
  /** More client listeners per broker (processes backend), each on a free port: `b.o.extraListeners`. */
  extraListeners?: ReadonlyArray<{ name: string; securityProtocol: 'PLAINTEXT' | 'SSL' | 'SASL_PLAINTEXT' | 'SASL_SSL' }>;
  /** TLS options of the harness's own client connections (readiness, coordinatorOf) to an SSL client listener. */
  clientTls?: TlsConnectionOptions;
  /**
   * SCRAM credentials written to `/config/users/<user>` before the brokers start (processes backend),
   * as Kafka's `kafka-configs.sh --zookeeper --alter --add-config 'SCRAM-SHA-512=[password=...]'`
   * does: the inter-broker user of a SCRAM inter-broker listener must exist before any broker runs.
   */
  scramUsers?: ReadonlyArray<{ user: string; mechanism: 'SCRAM-SHA-256' | 'SCRAM-SHA-512'; password: string }>;
  /**
   * Runs against ZooKeeper (the cluster's chroot) before any broker starts, e.g. to write the SCRAM
   * credentials of the inter-broker user, as Kafka's docs have it done before the brokers start.
   */
  beforeBrokers?: (zk: KafkaZk) => Promise<void>;
}

/** Hosts, fixed ports and network namespaces for a cluster's processes (see ClusterOptions.placement). */
export interface ClusterPlacement {
  zk: { host: string; netns?: string; clientPorts: number[]; peerPorts: number[]; electionPorts: number[] };
  broker(id: number): { host: string; port: number; controlPort: number; metricsPort?: number; netns?: string };
}

export class TestCluster {
  readonly brokers: Broker[] = [];
  zk!: ZooKeeperEnsemble | ZooKeeperContainers;
  admin!: KafkaZk;
  /** A host directory for the test's files (and, on the processes backend, the brokers' homes). */
  dir = '';
  private network: StartedNetwork | undefined;
  /** ClusterOptions.clientTls. */
  clientTls: TlsConnectionOptions | undefined;
  /** ClusterOptions.sasl. */
  sasl: SaslOptions | undefined;

  /** The `tls` / `sasl` options a client of this cluster needs (none for a plaintext cluster): spread into Admin, Producer, Cluster, verify. */
  get clientSecurity(): { tls?: TlsConnectionOptions; sasl?: SaslOptions } {
    return { ...(this.clientTls ? { tls: this.clientTls } : {}), ...(this.sasl ? { sasl: this.sasl } : {}) };
  }

  static async start(o: ClusterOptions = {}): Promise<TestCluster> {
    const c = new TestCluster();
    c.dir = await mkdtemp(join(tmpdir(), 'samsa-e2e-'));
    try {
      await c.launch(o);
    } catch (err) {
      await c.stop().catch(() => undefined);
      throw err;
    }
    return c;
  }

  private async launch(o: ClusterOptions): Promise<void> {
    const c = this as TestCluster;
    c.clientTls = o.clientTls;
    c.sasl = o.sasl;
    const n = o.brokers ?? 3;
    const verbose = o.verbose ?? process.env['SAMSA_E2E_VERBOSE'] === '1';
    if (onContainers) {
      c.network = await startNetwork();
      const zk = await ZooKeeperContainers.start(c.network, o.zkServers ?? 1);
      c.zk = zk;
      const ports = await freePorts(n);
      for (let i = 0; i < n; i++) {
        c.brokers.push(
          new BrokerContainer({
            id: i,
            port: ports[i]!,
            dir: join(c.dir, `broker-${i}`),
            network: c.network,
            zookeeperConnect: zk.internalConnectString('/samsa'),
            overrides: o.overrides ?? {},
            ...(verbose ? { onLine: (name: string, line: string) => process.stderr.write(`[${name}] ${line}\n`) } : {}),
          }),
        );
      }
    } else {
      const size = o.zkServers ?? 1;
      const zp = o.placement?.zk;
      c.zk = await ZooKeeperEnsemble.start({
        size,
        baseDir: join(c.dir, 'zk'),
        ...(zp
          ? {
              host: zp.host,
              clientPorts: zp.clientPorts.slice(0, size),
              peerPorts: zp.peerPorts.slice(0, size),
              electionPorts: zp.electionPorts.slice(0, size),
              ...(zp.netns ? { netns: zp.netns } : {}),
            }
          : {}),
      });
      if (o.scramUsers?.length) {
        const zk = new KafkaZk(await ZkClient.connect({ connectString: c.zk.connectString('/samsa'), sessionTimeoutMs: 6000 }));
        try {
          for (const u of o.scramUsers) await writeScramUser(zk, u.user, { [u.mechanism]: u.password });
        } finally {
          await zk.zk.close();
        }
      }
      const extraCount = n * (o.extraListeners?.length ?? 0);
      // one call, so that no two ports coincide
      const allPorts = await freePorts((o.placement ? 0 : n * (o.metrics ? 3 : 2)) + extraCount);
      const ports = allPorts.slice(0, allPorts.length - extraCount);
      const extraPorts = allPorts.slice(allPorts.length - extraCount);
      for (let i = 0; i < n; i++) {
        const bp = o.placement?.broker(i);
        c.brokers.push(
          new BrokerProcess({
            id: i,
            ...(bp
              ? {
                  host: bp.host,
                  port: bp.port,
                  controlPort: bp.controlPort,
                  ...(o.metrics && bp.metricsPort ? { metricsPort: bp.metricsPort } : {}),
                  ...(bp.netns ? { netns: bp.netns } : {}),
                }
              : { port: ports[i]!, controlPort: ports[n + i]!, ...(o.metrics ? { metricsPort: ports[2 * n + i]! } : {}) }),
            zookeeperConnect: c.zk.connectString('/samsa'),
            dir: join(c.dir, `broker-${i}`),
            overrides: o.overrides ?? {},
            ...(o.securityProtocol ? { securityProtocol: o.securityProtocol } : {}),
            ...(o.controlSecurityProtocol ? { controlSecurityProtocol: o.controlSecurityProtocol } : {}),
            ...(o.extraListeners ? { extraListeners: o.extraListeners.map((l, j) => ({ ...l, port: extraPorts[i * o.extraListeners!.length + j]! })) } : {}),
            logToFile: true,
            ...(o.env ? { env: o.env } : {}),
            ...(verbose ? { onLine: (name: string, line: string) => process.stderr.write(`[${name}] ${line}\n`) } : {}),
          }),
        );
      }
    }
    c.admin = new KafkaZk(await ZkClient.connect({ connectString: c.zk.connectString('/samsa'), sessionTimeoutMs: 6000 }));
    await o.beforeBrokers?.(c.admin);
    await Promise.all(c.brokers.map((b) => b.launch()));
    await Promise.all(c.brokers.map((b) => b.waitReady()));
    // every broker registered and a controller elected
    await until(
      async () => (await c.admin.getBrokerIds()).length === n && (await c.admin.getControllerId()) !== null,
      'brokers registered and a controller',
      30_000,
    );
    // and every broker's metadata cache knows all brokers and the controller (clients such as
    // KafkaJS send CreateTopics to the controller their first Metadata answer names)
    await Promise.all(
      c.brokers.map((b) => until(() => metadataComplete(b.address, n, o.sasl, c.clientTls), `broker ${b.id} knows the controller`, 30_000, 100)),
    );
  }

  get bootstrap(): string {
    return this.brokers.map((b) => b.address).join(',');
  }

  broker(id: number): Broker {
    const b = this.brokers.find((x) => x.id === id);
    if (!b) throw new Error(`no broker ${id}`);
    return b;
  }

  async controllerId(): Promise<number | null> {
    return this.admin.getControllerId();
  }

  async leaderOf(topic: string, partition: number): Promise<number> {
    return (await this.admin.getPartitionState({ topic, partition }))?.state.leader ?? -1;
  }

  /** Waits until every partition of `topic` has a live leader in ZooKeeper. */
  async waitForLeaders(topic: string, partitions: number, timeoutMs = 30_000): Promise<void> {
    await until(
      async () => {
        for (let p = 0; p < partitions; p++) if ((await this.leaderOf(topic, p)) < 0) return false;
        return true;
      },
      `leaders of ${topic}`,
      timeoutMs,
    );
  }

  // ---- faults (chaos suite) -------------------------------------------------------------------

  /** Broker id → its log.dirs directory (processes backend), for the replica-divergence check. */
  logDirs(): Record<number, string> {
    return Object.fromEntries(this.brokers.map((b) => [b.id, join(b.o.dir, 'logs')]));
  }

  /** Stops broker `id` (clean: SIGTERM and a controlled shutdown; hard: SIGKILL). */
  async shutdownBroker(id: number, how: 'clean' | 'hard'): Promise<void> {
    const b = this.broker(id);
    if (how === 'clean') await b.stop(60_000);
    else await b.kill();
  }

  /** Starts broker `id` again and waits until it serves. */
  async startBroker(id: number): Promise<void> {
    const b = this.broker(id);
    await b.launch();
    await b.waitReady(90_000);
  }

  /** Stops broker `id` (clean or hard) and starts it again. */
  async bounceBroker(id: number, how: 'clean' | 'hard'): Promise<void> {
    await this.shutdownBroker(id, how);
    await this.startBroker(id);
  }

  /** SIGSTOP broker `id` for `ms`, then SIGCONT. */
  async pauseBroker(id: number, ms: number): Promise<void> {
    const b = this.broker(id);
    b.pause();
    try {
      await new Promise((r) => setTimeout(r, ms));
    } finally {
      b.resume();
    }
  }

  /** The broker coordinating `groupId` (FindCoordinator). */
  async coordinatorOf(groupId: string): Promise<number> {
    const cluster = new Cluster({ bootstrapServers: this.bootstrap, clientId: 'samsa-e2e-harness', ...this.clientSecurity });
    try {
      return (await cluster.retry('FindCoordinator', () => findGroupCoordinator(cluster, groupId), { timeoutMs: 30_000 })).nodeId;
    } finally {
      await cluster.close();
    }
  }

  /** Waits until every partition of `topic` has all its replicas in the ISR. */
  async waitForFullIsr(topic: string, partitions: number, timeoutMs = 60_000): Promise<void> {
    await until(
      async () => {
        for (let p = 0; p < partitions; p++) {
          const st = await this.admin.getPartitionState({ topic, partition: p });
          const replicas = (await this.admin.getTopicAssignment(topic))?.partitions.get(p) ?? [];
          if (!st || st.state.isr.length < replicas.length) return false;
        }
        return true;
      },
      `full ISR of ${topic}`,
      timeoutMs,
      200,
    );
  }

  async stop(): Promise<void> {
    await Promise.all(this.brokers.map((b) => b.stop(10_000)));
    await this.admin?.zk.close();
    await this.zk?.stop();
    for (const b of this.brokers) if (b instanceof BrokerContainer) await b.remove();
    await this.network?.stop().catch(() => undefined);
    if (process.env['SAMSA_E2E_KEEP'] !== '1') await rm(this.dir, { recursive: true, force: true });
  }
}

/** Polls until `f` returns something truthy. */
/** True when the broker at `address` answers Metadata with `brokers` brokers and a controller. */
async function metadataComplete(address: string, brokers: number, sasl?: SaslOptions, tls?: TlsConnectionOptions): Promise<boolean> {
  const i = address.lastIndexOf(':');
  let conn: Connection | undefined;
  try {
    conn = await Connection.connect({
      host: address.slice(0, i),
      port: Number(address.slice(i + 1)),
      clientId: 'e2e-harness',
      requestTimeoutMs: 5_000,
      ...(sasl ? { sasl } : {}),
      ...(tls ? { tls } : {}),
    });
    const res = await conn.request(
      API_KEYS.Metadata,
      { topics: [], allowAutoTopicCreation: true, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false },
      { version: 1 },
    );
    return res.body.controllerId >= 0 && res.body.brokers.length === brokers;
  } catch {
    return false;
  } finally {
    await conn?.close();
  }
}

export async function until<T>(f: () => T | Promise<T>, what: string, timeoutMs = 30_000, everyMs = 50): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    // 0 and '' are answers (a broker id 0, an empty topic list); only these mean "not yet"
    if (v !== undefined && v !== null && v !== false) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** `kcat -C -e -o beginning` with a -f format; resolves with stdout once every partition's end is reached. */
export function kcatConsume(bootstrap: string, topic: string, format: string, timeoutMs = 120_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = spawn('kcat', ['-C', '-b', bootstrap, '-t', topic, '-e', '-o', 'beginning', '-q', '-f', format]);
    const chunks: Buffer[] = [];
    let err = '';
    p.stdout.on('data', (c: Buffer) => chunks.push(c));
    p.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const timer = setTimeout(() => p.kill('SIGKILL'), timeoutMs);
    p.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(Buffer.concat(chunks).toString());
      else reject(new Error(`kcat -C exited ${code}: ${err}`));
    });
  });
}

/** Broker `id`'s log file (broker.log, processes backend) as text; empty when there is none. */
export const logOf = (c: TestCluster, id: number): Promise<string> =>
  readFile(join((c.broker(id) as BrokerProcess).o.dir, 'broker.log'), 'utf8').catch(() => '');

/** The pino JSON lines of broker `id`'s log after character `from`. */
export async function logLines(c: TestCluster, id: number, from = 0): Promise<Array<Record<string, unknown>>> {
  return (await logOf(c, id))
    .slice(from)
    .split('\n')
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
}
