// One ZooKeeper server and one Samsa broker as real processes (as test-e2e/harness.ts starts them),
// in a temp dir; everything registered for cleanup.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mkdir, writeFile } from 'node:fs/promises';
import { BrokerProcess, ManagedProcess, SAMSA_BIN, ZooKeeperEnsemble, freePorts } from '@samsa/local-cluster';
import { KafkaZk, ZkClient, newTopicId } from '@samsa/zk-paths';
import { onCleanup, tempDirCleanup } from './cleanup.mjs';

async function until(f, what, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** BrokerProcess with extra node flags (`--cpu-prof` is not allowed in NODE_OPTIONS). */
class BrokerWithNodeFlags extends BrokerProcess {
  constructor(o, nodeFlags) {
    super(o);
    this.nodeFlags = nodeFlags;
  }

  async launch() {
    if (this.nodeFlags.length === 0) return super.launch();
    await mkdir(this.o.dir, { recursive: true });
    const text = Object.entries(this.properties()).map(([k, v]) => `${k}=${v}`).join('\n');
    await writeFile(this.configFile, `# written by bench/lib/cluster.mjs\n${text}\n`);
    this.process = new ManagedProcess({
      name: `broker-${this.o.id}`,
      command: process.execPath,
      args: [...this.nodeFlags, SAMSA_BIN, 'broker', 'start', this.configFile],
      env: { ...process.env, ...this.o.env },
      logFile: join(this.o.dir, 'broker.log'),
    });
  }
}

/**
 * Starts ZooKeeper and broker 0 (`nodeFlags`: extra node flags such as --cpu-prof). Returns
 * { dir, zk, broker, admin, host, port, createTopic, stop }.
 */
export async function startSingleBroker({ nodeFlags = [], overrides = {}, log } = {}) {
  const dir = tempDirCleanup(mkdtempSync(join(tmpdir(), 'samsa-bench-')));
  log?.(`starting ZooKeeper and one broker in ${dir}`);
  const zk = await ZooKeeperEnsemble.start({ size: 1, baseDir: join(dir, 'zk') });
  const stopZk = onCleanup('stop ZooKeeper', () => zk.stop());
  const [port, controlPort] = await freePorts(2);
  const broker = new BrokerWithNodeFlags({
    id: 0,
    port,
    controlPort,
    zookeeperConnect: zk.connectString('/samsa'),
    dir: join(dir, 'broker-0'),
    overrides,
    logToFile: true,
  }, nodeFlags);
  const stopBroker = onCleanup('stop broker 0', () => broker.stop(15_000));
  await broker.launch();
  try {
    await broker.waitReady();
  } catch (err) {
    await broker.process?.exited.catch(() => undefined);
    let tail = '';
    try {
      tail = readFileSync(join(dir, 'broker-0', 'broker.log'), 'utf8').split('\n').slice(-30).join('\n');
    } catch {
      /* no log */
    }
    throw new Error(`${err.message}; end of its log:\n${tail}`);
  }
  const admin = new KafkaZk(await ZkClient.connect({ connectString: zk.connectString('/samsa'), sessionTimeoutMs: 6000 }));
  const closeAdmin = onCleanup('close ZooKeeper admin client', () => admin.zk.close());
  await until(async () => (await admin.getBrokerIds()).length === 1 && (await admin.getControllerId()) !== null, 'broker 0 registered and a controller');
  return {
    dir,
    zk,
    broker,
    admin,
    host: broker.host,
    port,
    /** Creates `topic` with one replica on broker 0 per partition; waits for the leaders in ZooKeeper. */
    async createTopic(topic, partitions = 1, config = {}) {
      await admin.createTopic(topic, newTopicId(), new Map(Array.from({ length: partitions }, (_, p) => [p, [0]])), config);
      await until(async () => {
        for (let p = 0; p < partitions; p++) if (((await admin.getPartitionState({ topic, partition: p }))?.state.leader ?? -1) < 0) return false;
        return true;
      }, `leaders of ${topic}`);
    },
    /** Stops the broker (SIGTERM: a clean shutdown, which writes a --cpu-prof profile) and ZooKeeper. */
    async stop() {
      await closeAdmin();
      await stopBroker();
      await stopZk();
    },
  };
}
