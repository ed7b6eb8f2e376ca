/**
 * Secured ZooKeeper (issue #29, part 4): a 3-broker local cluster started with the `secureZooKeeper`
 * option (digest credentials from a JAAS Client section named by KAFKA_OPTS, zookeeper.set.acl=true).
 * Kafka clients work as usual; an anonymous ZooKeeper client can read the cluster's znodes but not
 * change them, and cannot read the sensitive ones. A broker with zookeeper.set.acl=true and no
 * credentials refuses to start with Kafka's error.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import kafkajs from 'kafkajs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BrokerProcess, LocalCluster, type LocalClusterState, freePorts } from '@samsa/local-cluster';
import { KafkaZk, ZkClient, ZkCode, isZkError, resolveZkSecurity } from '@samsa/zk-paths';
import { describeCluster, until } from './harness.js';

const { Kafka, logLevel } = kafkajs;

/** Whether every port in `ports` can be bound on loopback right now. */
async function bindable(ports: number[]): Promise<boolean> {
  for (const port of ports) {
    const ok = await new Promise<boolean>((resolve) => {
      const srv = createServer();
      srv.once('error', () => resolve(false));
      srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
    });
    if (!ok) return false;
  }
  return true;
}

/** A base port p with p..p+n-1 and p+10000.. free (LocalCluster numbers its ports from bases). */
async function freeBase(n: number, withControl: boolean): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * 15_000);
    const ports = Array.from({ length: n }, (_, i) => base + i);
    if (await bindable(withControl ? [...ports, ...ports.map((p) => p + 10_000)] : ports)) return base;
  }
  throw new Error('no free port range found');
}

async function zkCode(p: Promise<unknown>): Promise<number> {
  try {
    await p;
    return ZkCode.OK;
  } catch (err) {
    if (isZkError(err)) return err.code;
    throw err;
  }
}

describeCluster(
  'secured ZooKeeper: digest credentials and zookeeper.set.acl=true on a 3-broker local cluster',
  () => {
    let dir: string;
    let cluster: LocalCluster;
    let state: LocalClusterState;
    let anon: ZkClient;
    const password = randomBytes(12).toString('hex');

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'samsa-e2e-zkauth-'));
      const [zkPort, peer, election] = await freePorts(3);
      cluster = new LocalCluster({
        dataDir: dir,
        zkServers: 1,
        zkClientPort: zkPort!,
        zkPeerPort: peer!,
        zkElectionPort: election!,
        brokers: 3,
        brokerPort: await freeBase(3, true),
        secureZooKeeper: { username: 'samsa-broker', password },
        log: () => undefined,
      });
      state = await cluster.start();
      anon = await ZkClient.connect({ connectString: state.zookeeper.connect, sessionTimeoutMs: 6000 });
      const kzk = new KafkaZk(anon);
      await until(async () => (await kzk.getBrokerIds()).length === 3 && (await kzk.getControllerId()) !== null, 'brokers and a controller');
    }, 180_000);
    afterAll(async () => {
      await anon?.close();
      await cluster?.stop();
      if (dir) await rm(dir, { recursive: true, force: true });
    }, 120_000);

    it('secured zookeeper – topics are created, produced to and consumed as usual (KafkaJS)', async () => {
      const kafka = new Kafka({ clientId: 'zkauth-e2e', brokers: state.bootstrap.split(','), logLevel: logLevel.NOTHING });
      const admin = kafka.admin();
      const producer = kafka.producer();
      const consumer = kafka.consumer({ groupId: 'zkauth-g' });
      try {
        await admin.connect();
        await admin.createTopics({ topics: [{ topic: 'secured', numPartitions: 3, replicationFactor: 3 }], waitForLeaders: true });
        await producer.connect();
        const values = Array.from({ length: 30 }, (_, i) => `v${i}`);
        await producer.send({ topic: 'secured', acks: -1, messages: values.map((value, i) => ({ key: `k${i}`, value })) });
        await consumer.connect();
        await consumer.subscribe({ topic: 'secured', fromBeginning: true });
        const seen: string[] = [];
        await consumer.run({ eachMessage: async ({ message }) => void seen.push(message.value!.toString()) });
        await until(() => seen.length >= values.length, 'all messages consumed', 60_000);
        expect(seen.sort()).toEqual([...values].sort());
      } finally {
        await consumer.disconnect().catch(() => undefined);
        await producer.disconnect().catch(() => undefined);
        await admin.disconnect().catch(() => undefined);
      }
      // the brokers' znodes carry the secure ACLs: their digest identity ALL, everyone READ
      expect((await anon.getAcl('/brokers/topics/secured')).map((a) => `${a.scheme}:${a.id}:${a.perms}`)).toEqual([
        'digest:samsa-broker:x:31',
        'world:anyone:1',
      ]);
    }, 120_000);

    it('secured zookeeper – an anonymous ZooKeeper client reads but cannot delete topics, write /controller or read /config/users', async () => {
      expect(JSON.parse((await anon.get('/brokers/topics/secured')).data.toString())).toHaveProperty('partitions');
      expect(await zkCode(anon.delete('/brokers/topics/secured/partitions/0/state'))).toBe(ZkCode.NO_AUTH);
      expect(await zkCode(anon.deleteRecursive('/brokers/topics/secured'))).toBe(ZkCode.NO_AUTH);
      expect(await anon.exists('/brokers/topics/secured/partitions/0/state')).not.toBeNull();
      expect(await zkCode(anon.set('/controller', Buffer.from('{"version":1,"brokerid":99,"timestamp":"0"}')))).toBe(ZkCode.NO_AUTH);
      expect(await zkCode(anon.create('/admin/delete_topics/secured'))).toBe(ZkCode.NO_AUTH);
      expect(await zkCode(anon.getChildren('/config/users'))).toBe(ZkCode.NO_AUTH);
      expect(await zkCode(anon.getChildren('/config/brokers'))).toBe(ZkCode.NO_AUTH);
      expect(await anon.getChildren('/config/topics')).toContain('secured');
    });

    it('secured zookeeper – a tool with the same JAAS file writes, and the controller deletes a topic through its secured znodes', async () => {
      const sec = resolveZkSecurity({ setAcl: 'ifAuthenticated', env: { KAFKA_OPTS: `-Djava.security.auth.login.config=${state.zookeeper.jaasConfig}` } });
      const tool = await ZkClient.connect({ connectString: state.zookeeper.connect, sessionTimeoutMs: 6000, ...sec });
      try {
        await tool.create('/admin/delete_topics/secured');
        await until(async () => (await anon.exists('/brokers/topics/secured')) === null, 'topic secured deleted', 60_000);
      } finally {
        await tool.close();
      }
    }, 90_000);

    it('secured zookeeper – a broker with zookeeper.set.acl=true and no ZooKeeper credentials refuses to start', async () => {
      const [port, controlPort] = await freePorts(2);
      const b = new BrokerProcess({
        id: 7,
        port: port!,
        controlPort: controlPort!,
        zookeeperConnect: state.zookeeper.connect,
        dir: join(dir, 'broker-no-credentials'),
        overrides: { 'zookeeper.set.acl': 'true' },
        env: { KAFKA_OPTS: '' },
        logToFile: true,
      });
      await b.launch();
      const exit = await b.process!.exited;
      expect(exit.code).toBe(1);
      const log = await readFile(join(dir, 'broker-no-credentials', 'broker.log'), 'utf8');
      expect(log).toContain('zookeeper.set.acl is true, but ZooKeeper client TLS configuration identifying at least');
      expect(log).toContain('verification of the JAAS login file failed [java.security.auth.login.config=null');
      expect(await anon.exists('/brokers/ids/7')).toBeNull();
    }, 60_000);
  },
  { processesOnly: 'runs the local cluster (LocalCluster) of this machine' },
);
