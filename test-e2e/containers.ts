/**
 * The containers backend of the e2e harness (`E2E_BACKEND=containers`): ZooKeeper and brokers as
 * Docker containers (testcontainers) on a private network, from the samsa image (docker/Dockerfile)
 * and a ZooKeeper image with the upstream `zookeeper:3.8` interface.
 *
 * Each broker has three listeners, as in docker/docker-compose.yml: INTERNAL (broker-N:29092, between
 * brokers), CONTROLLER (broker-N:19092) and EXTERNAL, published on the same port number on the host
 * and advertised as 127.0.0.1:port, so kcat, KafkaJS and the raw clients on the host reach every broker.
 */
import { connect } from 'node:net';
import { GenericContainer, Network, Wait, getContainerRuntimeClient } from 'testcontainers';
import type { StartedNetwork, StartedTestContainer } from 'testcontainers';

export const SAMSA_IMAGE = process.env['SAMSA_E2E_IMAGE'] ?? 'samsa:latest';
export const ZOOKEEPER_IMAGE = process.env['SAMSA_E2E_ZOOKEEPER_IMAGE'] ?? 'zookeeper:3.8';

const INTERNAL_PORT = 29092;
const CONTROL_PORT = 19092;

/** Options of one broker container; `dir` is a host directory (the broker's files live in the container). */
export interface BrokerContainerOptions {
  id: number;
  /** Host port = EXTERNAL listener port in the container. */
  port: number;
  dir: string;
  network: StartedNetwork;
  zookeeperConnect: string;
  overrides: Record<string, string>;
  onLine?: (name: string, line: string) => void;
}

/** Answers ApiVersions v0 on host:port within timeoutMs (published ports accept connections even when nothing listens behind them). */
export function apiVersionsAnswers(host: string, port: number, timeoutMs = 2000): Promise<boolean> {
  return new Promise((resolve) => {
    const clientId = Buffer.from('samsa-e2e');
    const req = Buffer.alloc(4 + 10 + clientId.length);
    req.writeInt32BE(10 + clientId.length, 0);
    req.writeInt16BE(18, 4);
    req.writeInt16BE(0, 6);
    req.writeInt32BE(7, 8);
    req.writeInt16BE(clientId.length, 12);
    clientId.copy(req, 14);
    const sock = connect({ host, port });
    let got = Buffer.alloc(0);
    const done = (ok: boolean) => {
      clearTimeout(timer);
      sock.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    sock.on('connect', () => sock.write(req));
    sock.on('error', () => done(false));
    sock.on('close', () => done(false));
    sock.on('data', (c: Buffer) => {
      got = Buffer.concat([got, c]);
      if (got.length >= 10) done(got.readInt32BE(4) === 7 && got.readInt16BE(8) === 0);
    });
  });
}

/** One Samsa broker as a container; the same surface as BrokerProcess. */
export class BrokerContainer {
  private started: StartedTestContainer | undefined;
  private running = false;
  private hostPid: number | undefined;
  readonly host = '127.0.0.1';

  constructor(readonly o: BrokerContainerOptions) {}

  get id(): number {
    return this.o.id;
  }

  get address(): string {
    return `${this.host}:${this.o.port}`;
  }

  /** The host pid of the broker while its container runs (undefined when stopped or killed). */
  get pid(): number | undefined {
    return this.running ? this.hostPid : undefined;
  }

  get alias(): string {
    return `broker-${this.o.id}`;
  }

  /** Broker configuration as environment variables (the image's interface) … */
  environment(): Record<string, string> {
    const a = this.alias;
    return {
      SAMSA_BROKER_ID: String(this.o.id),
      SAMSA_ZOOKEEPER_CONNECT: this.o.zookeeperConnect,
      SAMSA_LISTENERS: `INTERNAL://:${INTERNAL_PORT},EXTERNAL://:${this.o.port},CONTROLLER://:${CONTROL_PORT}`,
      SAMSA_ADVERTISED_LISTENERS: `INTERNAL://${a}:${INTERNAL_PORT},EXTERNAL://${this.host}:${this.o.port},CONTROLLER://${a}:${CONTROL_PORT}`,
      SAMSA_LISTENER_SECURITY_PROTOCOL_MAP: 'INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT',
      SAMSA_INTER_BROKER_LISTENER_NAME: 'INTERNAL',
      SAMSA_CONTROL_PLANE_LISTENER_NAME: 'CONTROLLER',
      SAMSA_ZOOKEEPER_SESSION_TIMEOUT_MS: '6000',
      SAMSA_CONTROLLED_SHUTDOWN_RETRY_BACKOFF_MS: '1000',
    };
  }

  /** … and the test's server.properties overrides as `--override` flags (any key, as in a file). */
  command(): string[] {
    return ['broker', 'start', ...Object.entries(this.o.overrides).flatMap(([k, v]) => ['--override', `${k}=${v}`])];
  }

  /** Creates and starts the container the first time; starts the same container again (same data) later. */
  async launch(): Promise<void> {
    if (this.running) return;
    if (!this.started) {
      let c = new GenericContainer(SAMSA_IMAGE)
        .withName(`samsa-e2e-${process.pid}-${this.o.network.getName().slice(-8)}-${this.alias}`)
        .withNetwork(this.o.network)
        .withNetworkAliases(this.alias)
        .withHostname(this.alias)
        .withEnvironment(this.environment())
        .withCommand(this.command())
        .withExposedPorts({ container: this.o.port, host: this.o.port })
        // readiness is waitReady's job (ApiVersions through the published port), as for processes
        .withWaitStrategy(Wait.forLogMessage(/"msg":"/))
        .withStartupTimeout(120_000);
      const onLine = this.o.onLine;
      if (onLine) {
        c = c.withLogConsumer((stream) => {
          stream.on('data', (line: Buffer | string) => onLine(this.alias, line.toString().trimEnd()));
        });
      }
      this.started = await c.start();
    } else {
      const client = await getContainerRuntimeClient();
      await client.container.start(client.container.getById(this.started.getId()));
    }
    await this.refreshPid();
  }

  private async refreshPid(): Promise<void> {
    const client = await getContainerRuntimeClient();
    const info = await client.container.inspect(client.container.getById(this.started!.getId()));
    this.running = info.State.Running;
    this.hostPid = info.State.Pid || undefined;
  }

  async waitReady(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      await this.refreshPid();
      if (!this.running) throw new Error(`broker ${this.o.id} (container) exited before serving`);
      if (await apiVersionsAnswers(this.host, this.o.port)) return;
      if (Date.now() > deadline) throw new Error(`broker ${this.o.id} not serving on ${this.address} after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** `docker stop`: SIGTERM (controlled shutdown), SIGKILL after graceMs. The container stays for launch(). */
  async stop(graceMs = 30_000): Promise<void> {
    if (!this.started || !this.running) return;
    const client = await getContainerRuntimeClient();
    await client.container.stop(client.container.getById(this.started.getId()), { timeout: graceMs }); // ms
    await this.refreshPid();
  }

  /** `docker kill` (SIGKILL). */
  async kill(): Promise<void> {
    if (!this.started || !this.running) return;
    const client = await getContainerRuntimeClient();
    const container = client.container.getById(this.started.getId());
    await container.kill({ signal: 'SIGKILL' });
    await container.wait();
    await this.refreshPid();
  }

  /** `docker pause` (cgroup freezer), like SIGSTOP for a process. */
  async pause(): Promise<void> {
    const client = await getContainerRuntimeClient();
    await client.container.getById(this.started!.getId()).pause();
  }

  /** `docker unpause`; a no-op when the container is not paused (as SIGCONT to a running process). */
  async resume(): Promise<void> {
    if (!this.started) return;
    const client = await getContainerRuntimeClient();
    const container = client.container.getById(this.started.getId());
    if ((await client.container.inspect(container)).State.Paused) await container.unpause();
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.launch();
    await this.waitReady();
  }

  /** Removes the container and its anonymous volume (the broker's data). */
  async remove(): Promise<void> {
    if (!this.started) return;
    const client = await getContainerRuntimeClient();
    const container = client.container.getById(this.started.getId());
    const info = await client.container.inspect(container).catch(() => undefined);
    if (info?.State.Paused) await container.unpause().catch(() => undefined);
    await client.container.remove(container, { removeVolumes: true }).catch(async () => {
      await container.remove({ force: true, v: true }).catch(() => undefined);
    });
    this.started = undefined;
    this.running = false;
  }
}

/** A ZooKeeper ensemble as containers; clients on the host use connectString(), brokers internalConnectString(). */
export class ZooKeeperContainers {
  private constructor(
    readonly servers: StartedTestContainer[],
    private readonly host: string,
  ) {}

  static async start(network: StartedNetwork, size: number): Promise<ZooKeeperContainers> {
    const servers = Array.from({ length: size }, (_, i) => `server.${i + 1}=zookeeper-${i + 1}:2888:3888;2181`).join(' ');
    const started = await Promise.all(
      Array.from({ length: size }, (_, i) =>
        new GenericContainer(ZOOKEEPER_IMAGE)
          .withName(`samsa-e2e-${process.pid}-${network.getName().slice(-8)}-zookeeper-${i + 1}`)
          .withNetwork(network)
          .withNetworkAliases(`zookeeper-${i + 1}`)
          .withHostname(`zookeeper-${i + 1}`)
          .withEnvironment({
            ZOO_MY_ID: String(i + 1),
            ZOO_SERVERS: servers,
            ZOO_TICK_TIME: '500',
            ZOO_INIT_LIMIT: '10',
            ZOO_SYNC_LIMIT: '5',
            ZOO_4LW_COMMANDS_WHITELIST: 'srvr,ruok',
            ZOO_ADMINSERVER_ENABLED: 'false',
            JVMFLAGS: '-Xmx128m',
          })
          .withExposedPorts(2181)
          .withWaitStrategy(Wait.forSuccessfulCommand('zkServer.sh status'))
          .withStartupTimeout(120_000)
          .start(),
      ),
    );
    const host = started[0]!.getHost();
    return new ZooKeeperContainers(started, host === 'localhost' ? '127.0.0.1' : host);
  }

  /** host:mappedPort,… for clients on the host (the test's KafkaZk, `samsa topics --zookeeper`). */
  connectString(chroot = ''): string {
    return this.servers.map((s) => `${this.host}:${s.getMappedPort(2181)}`).join(',') + chroot;
  }

  /** zookeeper-N:2181,… for the brokers on the container network. */
  internalConnectString(chroot = ''): string {
    return this.servers.map((_, i) => `zookeeper-${i + 1}:2181`).join(',') + chroot;
  }

  async stop(): Promise<void> {
    await Promise.all(this.servers.map((s) => s.stop({ timeout: 5000, remove: true, removeVolumes: true }).catch(() => undefined)));
  }
}

/** A private network per cluster. */
export function startNetwork(): Promise<StartedNetwork> {
  return new Network().start();
}
