import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ManagedProcess, inNetns } from './managed-process.js';
import { portOpen } from './ports.js';

/** The `samsa` entry point (packages/cli/bin/samsa.js), resolved inside the monorepo. */
export const SAMSA_BIN = fileURLToPath(new URL('../../cli/bin/samsa.js', import.meta.url));

export interface BrokerProcessOptions {
  id: number;
  host?: string;
  /** Client port (listener PLAINTEXT, or the one `securityProtocol` names). */
  port: number;
  /** Control-plane (CONTROLLER) port. */
  controlPort: number;
  /**
   * Security protocol of the client listener, which is also the inter-broker listener; the
   * listener is named after it (`SSL://host:port`). Default PLAINTEXT. The ssl.* / sasl.* settings
   * go in `overrides`.
   */
  securityProtocol?: 'PLAINTEXT' | 'SSL' | 'SASL_PLAINTEXT' | 'SASL_SSL';
  /** Security protocol of the CONTROLLER listener. Default PLAINTEXT. */
  controlSecurityProtocol?: 'PLAINTEXT' | 'SSL' | 'SASL_PLAINTEXT' | 'SASL_SSL';
  /** More client listeners on this host (e.g. `MTLS` mapped to SSL), after the client and CONTROLLER ones. */
  extraListeners?: ReadonlyArray<{ name: string; securityProtocol: 'PLAINTEXT' | 'SSL' | 'SASL_PLAINTEXT' | 'SASL_SSL'; port: number }>;
  /** metrics.port: HTTP /metrics, /health, /ready (unset or <= 0: disabled). */
  metricsPort?: number;
  zookeeperConnect: string;
  /** Broker home: server.properties and logs/ go here. */
  dir: string;
  rack?: string;
  /** Extra server.properties entries. */
  overrides?: Record<string, string>;
  onLine?: (name: string, line: string) => void;
  logToFile?: boolean;
  env?: NodeJS.ProcessEnv;
  /** Run the broker inside this network namespace (`ip netns exec NS node ...`; root only). */
  netns?: string;
  /** Extra node flags, after brokerNodeFlags() (e.g. --cpu-prof, which NODE_OPTIONS does not allow). */
  nodeFlags?: string[];
}

/**
 * Node flags for a broker process, as Kafka's KAFKA_JVM_PERFORMANCE_OPTS: the environment's
 * SAMSA_NODE_PERFORMANCE_OPTS (space-separated; empty for none), else the default below
 * (docs/operations.md).
 * - `--single-threaded-gc`: V8's parallel scavenges and concurrent marking hand GC work to helper
 *   threads; with several brokers (and clients) sharing a few cores those threads wait for a CPU
 *   while the event loop waits for them, and the tail latency of acks=all requests grew by a third.
 * - `--initial-old-space-size=128` (as Kafka's -Xms): a broker's live heap is small (~16 MB) and
 *   V8 sizes the old generation's limit from it, so that limit stayed within one young generation
 *   of the heap and V8 started incremental marking after nearly every scavenge — a full
 *   mark-compact every ~120 ms under load, ~17% of the brokers' CPU in produce-rf3.
 */
export const DEFAULT_NODE_PERFORMANCE_OPTS = '--single-threaded-gc --initial-old-space-size=128';

export function brokerNodeFlags(env: NodeJS.ProcessEnv = process.env): string[] {
  return (env.SAMSA_NODE_PERFORMANCE_OPTS ?? DEFAULT_NODE_PERFORMANCE_OPTS).split(/\s+/).filter(Boolean);
}

/** One Samsa broker as a real process (`samsa broker start server.properties`). */
export class BrokerProcess {
  process: ManagedProcess | undefined;
  readonly host: string;

  constructor(readonly o: BrokerProcessOptions) {
    this.host = o.host ?? '127.0.0.1';
  }

  get id(): number {
    return this.o.id;
  }

  get address(): string {
    return `${this.host}:${this.o.port}`;
  }

  /** Base URL of the broker's metrics endpoint (`http://host:port`), or undefined when disabled. */
  get metricsUrl(): string | undefined {
    return this.o.metricsPort !== undefined && this.o.metricsPort > 0 ? `http://${this.host}:${this.o.metricsPort}` : undefined;
  }

  get pid(): number | undefined {
    return this.process?.running ? this.process.pid : undefined;
  }

  get configFile(): string {
    return join(resolve(this.o.dir), 'server.properties');
  }

  /** The broker's server.properties for this process. */
  properties(): Record<string, string> {
    const sp = this.o.securityProtocol ?? 'PLAINTEXT';
    const extra = this.o.extraListeners ?? [];
    const listeners = [
      `${sp}://${this.host}:${this.o.port}`,
      `CONTROLLER://${this.host}:${this.o.controlPort}`,
      ...extra.map((l) => `${l.name}://${this.host}:${l.port}`),
    ].join(',');
    return {
      'broker.id': String(this.o.id),
      listeners,
      'advertised.listeners': listeners,
      'listener.security.protocol.map': [
        `${sp}:${sp}`,
        `CONTROLLER:${this.o.controlSecurityProtocol ?? 'PLAINTEXT'}`,
        ...extra.map((l) => `${l.name}:${l.securityProtocol}`),
      ].join(','),
      'control.plane.listener.name': 'CONTROLLER',
      ...(sp !== 'PLAINTEXT' ? { 'security.inter.broker.protocol': sp } : {}),
      'log.dirs': join(resolve(this.o.dir), 'logs'),
      'zookeeper.connect': this.o.zookeeperConnect,
      'zookeeper.session.timeout.ms': '6000',
      // when a whole local cluster stops at once the controller may already be gone: retry sooner than Kafka's 5 s
      'controlled.shutdown.retry.backoff.ms': '1000',
      ...(this.o.rack ? { 'broker.rack': this.o.rack } : {}),
      ...(this.o.metricsPort !== undefined && this.o.metricsPort > 0 ? { 'metrics.port': String(this.o.metricsPort), 'metrics.host': this.host } : {}),
      ...this.o.overrides,
    };
  }

  async launch(): Promise<void> {
    if (this.process?.running) return;
    await mkdir(this.o.dir, { recursive: true });
    const text = Object.entries(this.properties())
      .map(([k, v]) => `${k}=${v}`)
      .join('\n');
    // may hold secrets (sasl.jaas.config): owner only
    await writeFile(this.configFile, `# written by @samsa/local-cluster\n${text}\n`, { mode: 0o600 });
    await chmod(this.configFile, 0o600);
    const env = { ...process.env, ...this.o.env };
    this.process = new ManagedProcess({
      name: `broker-${this.o.id}`,
      ...inNetns(this.o.netns, process.execPath, [...brokerNodeFlags(env), ...(this.o.nodeFlags ?? []), SAMSA_BIN, 'broker', 'start', this.configFile]),
      env,
      ...(this.o.onLine ? { onLine: this.o.onLine } : {}),
      ...(this.o.logToFile ? { logFile: join(resolve(this.o.dir), 'broker.log') } : {}),
    });
  }

  /** Waits until the broker accepts client connections (it registers in ZooKeeper just before). */
  async waitReady(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.process && !this.process.running) throw new Error(`broker ${this.o.id} exited before serving`);
      if (await portOpen(this.host, this.o.port)) return;
      if (Date.now() > deadline) throw new Error(`broker ${this.o.id} not serving on ${this.address} after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async stop(graceMs = 30_000): Promise<void> {
    await this.process?.stop(graceMs);
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

  async restart(): Promise<void> {
    await this.stop();
    await this.launch();
    await this.waitReady();
  }
}
