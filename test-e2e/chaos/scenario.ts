/**
 * Shared parts of the chaos scenarios: a seeded random source, topic creation (RF=3,
 * min.insync.replicas=2), and `runScenario`: the verify workload runs while `fault` injects its
 * faults, then the checker reads everything back and compares the replicas' log files.
 */
import { describe, expect } from 'vitest';
import { Admin } from '@samsa/client';
import { checkTopic, formatReport, startWorkload, type VerifyCompression, type VerifyReport, type Workload } from '@samsa/client/verify';
import { describeCluster, until, type TestCluster } from '../harness.js';

/** Whether the full matrix runs (npm run test:chaos); otherwise the quick subset. */
export const CHAOS_FULL = process.env['CHAOS_FULL'] === '1';

/** mulberry32: a small seeded generator, so a scenario's choices repeat for the same seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** describeCluster for a chaos suite; `fullOnly` suites run only with CHAOS_FULL=1 (npm run test:chaos). */
export function describeChaos(name: string, fn: () => void, o: { processesOnly: string; fullOnly?: boolean }): void {
  if (o.fullOnly && !CHAOS_FULL) describe.skip(`${name} [skipped: full chaos suite only, CHAOS_FULL=1]`, fn);
  else describeCluster(name, fn, { processesOnly: o.processesOnly });
}

export const baseSeed = Number(process.env['CHAOS_SEED'] ?? 20261203);

export async function createVerifyTopic(c: TestCluster, topic: string, partitions = 3): Promise<void> {
  const admin = new Admin({ bootstrapServers: c.bootstrap, clientId: 'chaos-admin' });
  try {
    await admin.createTopics([{ name: topic, numPartitions: partitions, replicationFactor: 3, configs: { 'min.insync.replicas': '2' } }], {
      timeoutMs: 60_000,
    });
  } finally {
    await admin.close();
  }
  await c.waitForLeaders(topic, partitions, 60_000);
  await c.waitForFullIsr(topic, partitions, 60_000);
}

/** Waits until the workload has `n` more acknowledgements than now (the cluster still takes writes). */
export async function moreAcks(w: Workload, n: number, what: string, timeoutMs = 90_000): Promise<void> {
  const from = w.stats().acknowledged;
  await until(() => w.stats().acknowledged >= from + n, `${n} more acknowledgements ${what}`, timeoutMs, 100);
}

export interface ScenarioOptions {
  name: string;
  cluster: TestCluster;
  topic: string;
  partitions?: number;
  idempotent?: boolean;
  compression?: VerifyCompression;
  messagesPerSec?: number;
  /** Injects the faults while the workload runs. */
  fault: (w: Workload) => Promise<void>;
  /** Restores the cluster after the fault (restart what is down) before the check. */
  heal?: () => Promise<void>;
  /** Assert 0 violations (default); false returns the report for the test to judge. */
  expectOk?: boolean;
}

export async function runScenario(o: ScenarioOptions): Promise<VerifyReport> {
  const partitions = o.partitions ?? 3;
  await createVerifyTopic(o.cluster, o.topic, partitions);
  const w = startWorkload({
    bootstrap: o.cluster.bootstrap,
    topic: o.topic,
    producers: 2,
    idempotent: o.idempotent ?? true,
    compression: o.compression ?? 'none',
    acks: -1,
    messagesPerSec: o.messagesPerSec ?? 200,
  });
  let result;
  try {
    await moreAcks(w, 100, 'before the faults');
    await o.fault(w);
    await moreAcks(w, 100, 'after the faults');
  } finally {
    result = await w.stop();
  }
  await o.heal?.();
  // the followers catch up before their logs are compared
  await o.cluster.waitForFullIsr(o.topic, partitions, 120_000).catch(() => undefined);
  const report = await checkTopic({ bootstrap: o.cluster.bootstrap, topic: o.topic, acked: result, replicaLogDirs: o.cluster.logDirs(), timeoutMs: 120_000 });
  process.stdout.write(
    `\n=== ${o.name}: acknowledged ${report.acknowledged}, consumed ${report.consumed}, lost ${report.lost}, reordered ${report.reordered}, divergent ${report.divergentPartitions.length}\n${formatReport(report)}\n`,
  );
  if (o.expectOk ?? true) {
    expect(report.acknowledged).toBeGreaterThan(0);
    expect({
      lost: report.lost,
      reordered: report.reordered,
      divergent: report.divergentPartitions,
      backwards: report.offsetsBackwards,
      violations: report.violations,
    }).toEqual({
      lost: 0,
      reordered: 0,
      divergent: [],
      backwards: 0,
      violations: [],
    });
    expect(report.ok).toBe(true);
  }
  return report;
}
