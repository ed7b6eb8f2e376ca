/**
 * ZooKeeper faults under the verify workload (RF=3, min.insync.replicas=2, acks=all), a 3-server
 * ensemble: one server killed (a quorum remains: no effect), and two of three killed for a while
 * (no quorum: no acknowledged write may be lost; the cluster takes writes again after the restart).
 */
import { afterAll, beforeAll, it } from 'vitest';
import { ZooKeeperEnsemble } from '@samsa/local-cluster';
import { until, type TestCluster } from '../harness.js';
import { CHAOS_FULL, baseSeed, describeChaos, moreAcks, runScenario, seededRandom, startChaosCluster } from './scenario.js';

describeChaos(
  'chaos – ZooKeeper loss',
  () => {
    let c: TestCluster;
    let zk: ZooKeeperEnsemble;
    beforeAll(async () => {
      c = await startChaosCluster({ brokers: 3, zkServers: 3 });
      if (!(c.zk instanceof ZooKeeperEnsemble)) throw new Error('needs ZooKeeper processes');
      zk = c.zk;
    });
    afterAll(async () => {
      await c?.stop();
    });

    it('chaos – zookeeper: one of three servers killed has no effect', async () => {
      const rnd = seededRandom(baseSeed + 101);
      const victim = zk.servers[Math.floor(rnd() * zk.servers.length)]!;
      await runScenario({
        name: 'ZooKeeper: 1 of 3 killed',
        cluster: c,
        topic: 'zk-one-of-three',
        fault: async (w) => {
          process.stdout.write(`[zk 1 of 3] SIGKILL ZooKeeper server ${victim.config.id}\n`);
          await victim.kill();
          await moreAcks(w, 300, `with ZooKeeper server ${victim.config.id} down`);
          await victim.launch();
          await victim.waitServing(60_000);
        },
      });
    });

    it.skipIf(!CHAOS_FULL)('chaos – zookeeper: two of three servers killed for a while lose no acknowledged write', async () => {
      const rnd = seededRandom(baseSeed + 102);
      const keep = Math.floor(rnd() * 3);
      const victims = zk.servers.filter((_, i) => i !== keep);
      await runScenario({
        name: 'ZooKeeper: 2 of 3 killed for 15 s',
        cluster: c,
        topic: 'zk-two-of-three',
        fault: async () => {
          process.stdout.write(`[zk 2 of 3] SIGKILL ZooKeeper servers ${victims.map((v) => v.config.id).join(', ')}\n`);
          await Promise.all(victims.map((v) => v.kill()));
          const downSince = Date.now();
          await until(() => Date.now() - downSince >= 15_000, 'ZooKeeper quorum lost for 15 s', 20_000, 250);
          await Promise.all(victims.map((v) => v.launch()));
          await Promise.all(victims.map((v) => v.waitServing(90_000)));
          // the brokers reconnect (or re-register after a session expiry) and a controller is there
          await until(async () => (await c.admin.getBrokerIds()).length === 3 && (await c.controllerId()) !== null, 'brokers and controller back', 90_000, 250);
        },
      });
    });
  },
  { processesOnly: 'kills ZooKeeper processes, reads the brokers log files' },
);
