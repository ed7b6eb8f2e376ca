/**
 * Kafka's replication_test matrix (tests/kafkatest/tests/core/replication_test.py), RF=3,
 * min.insync.replicas=2, acks=all, while the verify workload runs:
 * {clean (SIGTERM), hard (SIGKILL)} × {shutdown, bounce ×5} × {partition leader, controller}
 * × idempotence {on, off} × compression {none, gzip} — 32 cells with CHAOS_FULL=1
 * (npm run test:chaos); by default a quick subset of representative cells.
 * Each cell: 0 lost, 0 reordered, 0 divergent replicas (and no duplicates with idempotence).
 */
import { afterAll, beforeAll, it } from 'vitest';
import type { Workload } from '@samsa/client/verify';
import type { TestCluster } from '../harness.js';
import { CHAOS_FULL, baseSeed, chaosPartitions, describeChaos, moreAcks, runScenario, seededRandom, startChaosCluster } from './scenario.js';

type How = 'clean' | 'hard';
type Mode = 'shutdown' | 'bounce';
type Target = 'leader' | 'controller';
interface Cell {
  how: How;
  mode: Mode;
  target: Target;
  idempotent: boolean;
  compression: 'none' | 'gzip';
}

const ALL: Cell[] = [];
for (const how of ['clean', 'hard'] as const)
  for (const mode of ['shutdown', 'bounce'] as const)
    for (const target of ['leader', 'controller'] as const)
      for (const idempotent of [true, false]) for (const compression of ['none', 'gzip'] as const) ALL.push({ how, mode, target, idempotent, compression });

const name = (c: Cell) => `${c.how} ${c.mode} ${c.target}, idempotence ${c.idempotent ? 'on' : 'off'}, compression ${c.compression}`;
const QUICK = new Set([
  name({ how: 'hard', mode: 'bounce', target: 'leader', idempotent: true, compression: 'none' }),
  name({ how: 'clean', mode: 'shutdown', target: 'controller', idempotent: false, compression: 'gzip' }),
]);
const CELLS = CHAOS_FULL ? ALL : ALL.filter((c) => QUICK.has(name(c)));
const BOUNCES = 5;
const PARTITIONS = chaosPartitions(3);

describeChaos(
  'chaos – replication matrix',
  () => {
    let c: TestCluster;
    beforeAll(async () => {
      c = await startChaosCluster({ brokers: 3 });
    });
    afterAll(async () => {
      await c?.stop();
    });

    /** Starts every broker that is down (after a cell). */
    async function heal(): Promise<void> {
      for (const b of c.brokers) if (b.pid === undefined) await c.startBroker(b.id);
    }

    CELLS.forEach((cell, i) => {
      it(`chaos – replication: ${name(cell)} loses no acknowledged write`, async () => {
        const rnd = seededRandom(baseSeed + ALL.indexOf(cell));
        const topic = `matrix-${ALL.indexOf(cell)}`;
        const pick = async (): Promise<number> => {
          if (cell.target === 'controller') return (await c.controllerId()) ?? 0;
          return c.leaderOf(topic, Math.floor(rnd() * PARTITIONS));
        };
        const fault = async (w: Workload): Promise<void> => {
          if (cell.mode === 'shutdown') {
            const id = await pick();
            process.stdout.write(`[${name(cell)}] ${cell.how} shutdown of broker ${id}\n`);
            await c.shutdownBroker(id, cell.how);
            await moreAcks(w, 100, `with broker ${id} down`);
            return;
          }
          for (let n = 0; n < BOUNCES; n++) {
            const id = await pick();
            process.stdout.write(`[${name(cell)}] ${cell.how} bounce ${n + 1}/${BOUNCES} of broker ${id}\n`);
            await c.bounceBroker(id, cell.how);
            await moreAcks(w, 50, `after bounce ${n + 1} of broker ${id}`);
          }
        };
        void i;
        await runScenario({
          name: name(cell),
          cluster: c,
          topic,
          partitions: PARTITIONS,
          idempotent: cell.idempotent,
          compression: cell.compression,
          fault,
          heal,
          // 32 cells on one cluster: under CHAOS_PARTITIONS each cell's topic goes once it is checked
          dropAfter: true,
        });
      });
    });
  },
  { processesOnly: 'kills broker processes, reads their log files' },
);
