/**
 * The e2e harness: a real ZooKeeper ensemble and real broker processes on random loopback ports,
 * with per-test data dirs, plus helpers to wait for conditions and find leaders / the controller.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrokerProcess, ZooKeeperEnsemble, freePorts } from '@samsa/local-cluster';
import { KafkaZk, ZkClient } from '@samsa/zk-paths';

export interface ClusterOptions {
  brokers?: number;
  zkServers?: number;
  /** server.properties entries for every broker. */
  overrides?: Record<string, string>;
  /** Print broker output (SAMSA_E2E_VERBOSE=1 does it too). */
  verbose?: boolean;
  /** Give every broker a random metrics.port (`broker.metricsUrl`: /metrics, /health, /ready). */
  metrics?: boolean;
}

export class TestCluster {
  readonly brokers: BrokerProcess[] = [];
  zk!: ZooKeeperEnsemble;
  admin!: KafkaZk;
  dir = '';

  static async start(o: ClusterOptions = {}): Promise<TestCluster> {
    const c = new TestCluster();
    c.dir = await mkdtemp(join(tmpdir(), 'samsa-e2e-'));
    c.zk = await ZooKeeperEnsemble.start({ size: o.zkServers ?? 1, baseDir: join(c.dir, 'zk') });
    const n = o.brokers ?? 3;
    const ports = await freePorts(n * (o.metrics ? 3 : 2));
    const verbose = o.verbose ?? process.env['SAMSA_E2E_VERBOSE'] === '1';
    for (let i = 0; i < n; i++) {
      c.brokers.push(
        new BrokerProcess({
          id: i,
          port: ports[i]!,
          controlPort: ports[n + i]!,
          ...(o.metrics ? { metricsPort: ports[2 * n + i]! } : {}),
          zookeeperConnect: c.zk.connectString('/samsa'),
          dir: join(c.dir, `broker-${i}`),
          overrides: o.overrides ?? {},
          logToFile: true,
          ...(verbose ? { onLine: (name: string, line: string) => process.stderr.write(`[${name}] ${line}\n`) } : {}),
        }),
      );
    }
    await Promise.all(c.brokers.map((b) => b.launch()));
    await Promise.all(c.brokers.map((b) => b.waitReady()));
    c.admin = new KafkaZk(await ZkClient.connect({ connectString: c.zk.connectString('/samsa'), sessionTimeoutMs: 6000 }));
    // every broker registered and a controller elected
    await until(async () => (await c.admin.getBrokerIds()).length === n && (await c.admin.getControllerId()) !== null, 'brokers registered and a controller', 30_000);
    return c;
  }

  get bootstrap(): string {
    return this.brokers.map((b) => b.address).join(',');
  }

  broker(id: number): BrokerProcess {
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
    await until(async () => {
      for (let p = 0; p < partitions; p++) if ((await this.leaderOf(topic, p)) < 0) return false;
      return true;
    }, `leaders of ${topic}`, timeoutMs);
  }

  async stop(): Promise<void> {
    await Promise.all(this.brokers.map((b) => b.stop(10_000)));
    await this.admin?.zk.close();
    await this.zk?.stop();
    if (process.env['SAMSA_E2E_KEEP'] !== '1') await rm(this.dir, { recursive: true, force: true });
  }
}

/** Polls until `f` returns something truthy. */
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
