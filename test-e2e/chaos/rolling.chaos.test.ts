/**
 * Rolling restart of every broker under the verify workload (RF=3, min.insync.replicas=2,
 * acks=all): each broker in turn is stopped cleanly (SIGTERM, controlled shutdown) or hard
 * (SIGKILL), started again, and the next one waits until every replica is back in the ISR.
 */
import { afterAll, beforeAll, it } from 'vitest';
import type { TestCluster } from '../harness.js';
import { baseSeed, chaosPartitions, describeChaos, moreAcks, runScenario, seededRandom, waitForFullIsr, startChaosCluster } from './scenario.js';

const PARTITIONS = chaosPartitions(3);

describeChaos(
  'chaos – rolling restart',
  () => {
    let c: TestCluster;
    beforeAll(async () => {
      c = await startChaosCluster({ brokers: 3 });
    });
    afterAll(async () => {
      await c?.stop();
    });

    for (const how of ['clean', 'hard'] as const) {
      it(`chaos – rolling ${how} restart of all brokers under load loses no acknowledged write`, async () => {
        const rnd = seededRandom(baseSeed + (how === 'clean' ? 201 : 202));
        const order = c.brokers.map((b) => b.id).sort(() => rnd() - 0.5);
        const topic = `rolling-${how}`;
        await runScenario({
          name: `rolling ${how} restart (order ${order.join(',')})`,
          cluster: c,
          topic,
          partitions: PARTITIONS,
          fault: async (w) => {
            for (const id of order) {
              process.stdout.write(`[rolling ${how}] restart broker ${id}\n`);
              await c.bounceBroker(id, how);
              await waitForFullIsr(c, topic, PARTITIONS, 120_000);
              await moreAcks(w, 50, `after restarting broker ${id}`);
            }
          },
        });
      });
    }
  },
  { processesOnly: 'restarts broker processes, reads their log files', fullOnly: true },
);
