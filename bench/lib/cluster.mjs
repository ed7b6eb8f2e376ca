// ZooKeeper and Samsa brokers as real processes (as test-e2e/harness.ts starts them), in a temp
// dir; everything registered for cleanup. startSingleBroker: ZooKeeper + broker 0;
// startCluster: ZooKeeper + brokers 0..n-1.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrokerProcess, ZooKeeperEnsemble, freePorts, generateCertificates } from '@samsa/local-cluster';
import { KafkaZk, ZkClient, newTopicId } from '@samsa/zk-paths';
import { onCleanup, tempDirCleanup } from './cleanup.mjs';

export async function until(f, what, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function logTail(file, lines = 30) {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/**
 * Starts ZooKeeper and brokers 0..`brokers`-1 (`nodeFlags`: extra node flags such as --cpu-prof,
 * `overrides`: extra server.properties entries, `env`: extra environment variables). With `tls`,
 * every listener is SSL (client = inter-broker, and the CONTROLLER listener with
 * ssl.client.auth=required), certificates made in the cluster's dir. Returns
 * { dir, zk, brokers, admin, host, ports, tls, createTopic, partitionStates, stop }: `tls` is the
 * clients' TLS options (`{ ca }`), undefined for a plaintext cluster.
 */
export async function startCluster({ brokers: count = 1, nodeFlags = [], overrides = {}, env = {}, tls = false, log } = {}) {
  const dir = tempDirCleanup(mkdtempSync(join(tmpdir(), 'samsa-bench-')));
  log?.(`starting ZooKeeper and ${count} broker(s)${tls ? ' with SSL listeners (client, inter-broker, control plane)' : ''} in ${dir}`);
  let clientTls;
  if (tls) {
    const certs = await generateCertificates({ dir: join(dir, 'certs') });
    clientTls = { ca: [readFileSync(certs.caCert, 'utf8')] };
    overrides = {
      'ssl.keystore.type': 'PEM',
      'ssl.keystore.location': certs.broker.keystore,
      'ssl.truststore.type': 'PEM',
      'ssl.truststore.location': certs.caCert,
      'listener.name.controller.ssl.client.auth': 'required',
      ...overrides,
    };
  }
  const zk = await ZooKeeperEnsemble.start({ size: 1, baseDir: join(dir, 'zk') });
  const stopZk = onCleanup('stop ZooKeeper', () => zk.stop());
  const ports = await freePorts(2 * count);
  const brokers = [];
  const stops = [];
  for (let id = 0; id < count; id++) {
    const broker = new BrokerProcess({
      id,
      port: ports[2 * id],
      controlPort: ports[2 * id + 1],
      zookeeperConnect: zk.connectString('/samsa'),
      dir: join(dir, `broker-${id}`),
      overrides,
      env,
      ...(tls ? { securityProtocol: 'SSL', controlSecurityProtocol: 'SSL' } : {}),
      logToFile: true,
      nodeFlags,
    });
    stops.push(onCleanup(`stop broker ${id}`, () => broker.stop(15_000)));
    brokers.push(broker);
  }
  await Promise.all(brokers.map((b) => b.launch()));
  await Promise.all(
    brokers.map(async (b) => {
      try {
        await b.waitReady();
      } catch (err) {
        await b.process?.exited.catch(() => undefined);
        throw new Error(`${err.message}; end of its log:\n${logTail(join(dir, `broker-${b.id}`, 'broker.log'))}`);
      }
    }),
  );
  const admin = new KafkaZk(await ZkClient.connect({ connectString: zk.connectString('/samsa'), sessionTimeoutMs: 6000 }));
  const closeAdmin = onCleanup('close ZooKeeper admin client', () => admin.zk.close());
  await until(
    async () => (await admin.getBrokerIds()).length === count && (await admin.getControllerId()) !== null,
    `${count} broker(s) registered and a controller`,
  );

  const partitionStates = async (topic, partitions) => {
    const out = [];
    for (let p = 0; p < partitions; p++) out.push((await admin.getPartitionState({ topic, partition: p }))?.state ?? null);
    return out;
  };
  return {
    dir,
    zk,
    brokers,
    admin,
    host: brokers[0].host,
    ports: brokers.map((b) => b.o.port),
    tls: clientTls,
    /** { leader, leaderEpoch, isr, ... } per partition from ZooKeeper (null where there is none yet). */
    partitionStates,
    /**
     * Creates `topic` with `assignment` (partition → replica ids; a number n means n partitions with
     * one replica on broker 0) and `config`; waits until every partition has a leader and, with
     * `fullIsr`, all its replicas in the ISR.
     */
    async createTopic(topic, assignment = 1, config = {}, { fullIsr = false } = {}) {
      const map = typeof assignment === 'number' ? new Map(Array.from({ length: assignment }, (_, p) => [p, [0]])) : assignment;
      await admin.createTopic(topic, newTopicId(), map, config);
      await until(
        async () => {
          const states = await partitionStates(topic, map.size);
          return states.every((s, p) => s && s.leader >= 0 && (!fullIsr || s.isr.length === map.get(p).length));
        },
        `leaders${fullIsr ? ' and full ISRs' : ''} of ${topic}`,
      );
    },
    /**
     * Stops the brokers (SIGTERM: a clean shutdown, which writes a --cpu-prof profile) one at a
     * time, the controller last, then ZooKeeper. (All at once, the brokers that are not the
     * controller hang in their shutdown until the SIGKILL 15 s later, without a profile.)
     */
    async stop() {
      const controller = await admin.getControllerId().catch(() => null);
      await closeAdmin();
      const order = brokers.map((b, i) => i).sort((a, b) => (a === controller) - (b === controller));
      for (const i of order) await stops[i]();
      await stopZk();
    },
  };
}

/**
 * Starts ZooKeeper and broker 0 (`nodeFlags`: extra node flags such as --cpu-prof). Returns
 * { dir, zk, broker, admin, host, port, createTopic, stop }.
 */
export async function startSingleBroker({ nodeFlags = [], overrides = {}, log } = {}) {
  const c = await startCluster({ brokers: 1, nodeFlags, overrides, log });
  return {
    dir: c.dir,
    zk: c.zk,
    broker: c.brokers[0],
    admin: c.admin,
    host: c.host,
    port: c.ports[0],
    /** Creates `topic` with one replica on broker 0 per partition; waits for the leaders in ZooKeeper. */
    createTopic: (topic, partitions = 1, config = {}) => c.createTopic(topic, partitions, config),
    stop: () => c.stop(),
  };
}
