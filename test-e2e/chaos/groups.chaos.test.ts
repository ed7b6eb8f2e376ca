/**
 * Consumer groups under faults, with KafkaJS consumers (a real third-party group client) reading
 * what the verify workload writes (RF=3, min.insync.replicas=2, acks=all): the group coordinator
 * killed (SIGKILL) and restarted, and a rolling bounce of the group's consumers. The group must
 * end up having consumed every acknowledged write (at least once), and the log itself passes the
 * verify check (0 lost, 0 reordered, 0 divergent).
 */
import kafkajs from 'kafkajs';
import type { Consumer } from 'kafkajs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { checkTopic, formatReport, parseValue, startWorkload } from '@samsa/client/verify';
import { until, type TestCluster } from '../harness.js';
import {
  CHAOS_FULL,
  acksBeforeFaults,
  chaosPartitions,
  createVerifyTopic,
  describeChaos,
  moreAcks,
  scaleNote,
  scaledTimeout,
  startChaosCluster,
  workloadRate,
} from './scenario.js';
import { CLIENT_SASL } from './secure.js';

const { Kafka, logLevel } = kafkajs;
const PARTITIONS = chaosPartitions(3);

describeChaos(
  'chaos – consumer groups',
  () => {
    let c: TestCluster;
    beforeAll(async () => {
      c = await startChaosCluster({ brokers: 3, overrides: { 'offsets.topic.num.partitions': '3', 'group.initial.rebalance.delay.ms': '0' } });
    });
    afterAll(async () => {
      await c?.stop();
    });

    async function groupScenario(
      name: string,
      topic: string,
      groupId: string,
      fault: (consumers: Consumer[], restart: (i: number) => Promise<void>) => Promise<void>,
    ): Promise<void> {
      const t0 = Date.now();
      await createVerifyTopic(c, topic, PARTITIONS);
      const kafka = new Kafka({
        clientId: 'chaos-groups',
        brokers: c.bootstrap.split(','),
        // under CHAOS_SECURE: TLS and SCRAM-SHA-512 as the chaos user
        ...(c.clientTls ? { ssl: c.clientTls } : {}),
        ...(c.sasl ? { sasl: { mechanism: 'scram-sha-512' as const, username: CLIENT_SASL.username, password: CLIENT_SASL.password } } : {}),
        logLevel: logLevel.NOTHING,
        retry: { retries: 30, initialRetryTime: 200, maxRetryTime: 2000 },
      });
      const seen = new Set<string>();
      const consumers: Consumer[] = [];
      const startConsumer = async (i: number) => {
        const consumer = kafka.consumer({ groupId, sessionTimeout: 10_000, heartbeatInterval: 1000, retry: { retries: 30 } });
        await consumer.connect();
        await consumer.subscribe({ topic, fromBeginning: true });
        await consumer.run({
          eachMessage: async ({ message }) => {
            const v = parseValue(message.value);
            if (v) seen.add(`${v.runId}:${v.worker}:${v.seq}`);
          },
        });
        consumers[i] = consumer;
      };
      const restart = async (i: number) => {
        await consumers[i]?.disconnect();
        await startConsumer(i);
      };
      await startConsumer(0);
      await startConsumer(1);
      const w = startWorkload({ bootstrap: c.bootstrap, topic, producers: 2, messagesPerSec: workloadRate(undefined), ...c.clientSecurity });
      let result;
      try {
        await moreAcks(w, Math.max(200, acksBeforeFaults(PARTITIONS)), 'before the faults', scaledTimeout(90_000));
        await until(() => seen.size >= 100, 'the group consuming', scaledTimeout(90_000), 100);
        await fault(consumers, restart);
        await moreAcks(w, 200, 'after the faults');
      } finally {
        result = await w.stop();
      }
      try {
        await until(
          () => result.acked.every((a) => seen.has(`${result.runId}:${a.worker}:${a.seq}`)),
          'the group consuming every acknowledged write',
          scaledTimeout(120_000),
          250,
        ).catch(() => undefined);
        const missed = result.acked.filter((a) => !seen.has(`${result.runId}:${a.worker}:${a.seq}`)).length;
        const report = await checkTopic({
          bootstrap: c.bootstrap,
          topic,
          acked: result,
          replicaLogDirs: c.logDirs(),
          timeoutMs: scaledTimeout(120_000),
          ...c.clientSecurity,
        });
        process.stdout.write(
          `\n=== ${name}: ${scaleNote(report, t0)}acknowledged ${report.acknowledged}, consumed by the group ${seen.size}, missed by the group ${missed}; log: consumed ${report.consumed}, lost ${report.lost}, reordered ${report.reordered}, divergent ${report.divergentPartitions.length}\n${formatReport(report)}\n`,
        );
        expect(missed).toBe(0);
        expect(report.ok).toBe(true);
      } finally {
        await Promise.all(consumers.map((x) => x.disconnect().catch(() => undefined)));
      }
    }

    it('chaos – groups: coordinator failover (SIGKILL) loses no acknowledged write for the group', async () => {
      await groupScenario('coordinator failover', 'group-coordinator', 'chaos-coordinator', async () => {
        const coordinator = await c.coordinatorOf('chaos-coordinator');
        process.stdout.write(`[coordinator failover] SIGKILL coordinator broker ${coordinator}\n`);
        await c.shutdownBroker(coordinator, 'hard');
        await until(async () => (await c.coordinatorOf('chaos-coordinator')) !== coordinator, 'a new coordinator', 90_000, 500);
        await c.startBroker(coordinator);
      });
    });

    it.skipIf(!CHAOS_FULL)('chaos – groups: rolling bounce of the consumers loses no acknowledged write for the group', async () => {
      await groupScenario('consumer rolling bounce', 'group-rolling', 'chaos-rolling', async (_consumers, restart) => {
        for (const i of [0, 1]) {
          process.stdout.write(`[consumer rolling bounce] consumer ${i}\n`);
          await restart(i);
        }
      });
    });
  },
  { processesOnly: 'kills broker processes, reads their log files', fullOnly: true },
);
