/**
 * Shared parts of the chaos scenarios: a seeded random source, topic creation (RF=3,
 * min.insync.replicas=2), and `runScenario`: the verify workload runs while `fault` injects its
 * faults, then the checker reads everything back and compares the replicas' log files.
 */
import { describe, expect } from 'vitest';
import { Admin } from '@samsa/client';
import { checkTopic, formatReport, startWorkload, type VerifyCompression, type VerifyReport, type Workload } from '@samsa/client/verify';
import { topicPartitionKey } from '@samsa/protocol';
import { describeCluster, TestCluster, until, type ClusterOptions } from '../harness.js';
import { assertChaosSecured, chaosClusterOptions } from './secure.js';

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

/** TestCluster.start for a chaos scenario: every listener secured under CHAOS_SECURE=1 (secure.ts), as given otherwise. */
export async function startChaosCluster(o: ClusterOptions): Promise<TestCluster> {
  const c = await TestCluster.start(await chaosClusterOptions(o));
  try {
    await assertChaosSecured(c);
  } catch (err) {
    await c.stop();
    throw err;
  }
  return c;
}

export const baseSeed = Number(process.env['CHAOS_SEED'] ?? 20261203);

/** Parses CHAOS_PARTITIONS: unset or empty → undefined; otherwise an integer >= 1. */
export function parseChaosPartitions(v: string | undefined): number | undefined {
  if (v === undefined || v.trim() === '') return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`CHAOS_PARTITIONS must be an integer >= 1, got '${v}'`);
  return n;
}

/**
 * CHAOS_PARTITIONS=N (e.g. 3000, `npm run test:chaos:3k`): every scenario's verify topic gets N
 * partitions (RF=3, min.insync.replicas=2) instead of its own count; unset, every scenario is as before.
 */
export const CHAOS_PARTITIONS = parseChaosPartitions(process.env['CHAOS_PARTITIONS']);

/** A scenario's partition count: CHAOS_PARTITIONS when set, else the scenario's own. */
export const chaosPartitions = (own: number): number => CHAOS_PARTITIONS ?? own;

/**
 * A wait that grows with the partitions under the flag: `ms` plus 20 ms a partition (3,000 → +60 s);
 * without the flag, `ms` as it is.
 */
export const scaledTimeout = (ms: number, partitions = CHAOS_PARTITIONS): number => (CHAOS_PARTITIONS === undefined ? ms : ms + (partitions ?? 0) * 20);

/**
 * A scenario's explicit assignment repeated up to CHAOS_PARTITIONS partitions (partition p gets
 * row p mod n, so every row's leader/follower pattern holds for p mod n); unchanged without the flag
 * (`partitions` null: no flag, whatever the environment says).
 */
export function chaosAssignment(rows: number[][], partitions: number | null = CHAOS_PARTITIONS ?? null): number[][] {
  if (partitions === null || partitions <= rows.length) return rows;
  return Array.from({ length: partitions }, (_, p) => rows[p % rows.length]!);
}

const tps = (topic: string, partitions: number) => Array.from({ length: partitions }, (_, partition) => ({ topic, partition }));

/** Waits until every partition of `topic` has a leader in ZooKeeper: one pipelined read of all state znodes a round. */
export async function waitForLeaders(c: TestCluster, topic: string, partitions: number, timeoutMs: number): Promise<void> {
  await until(
    async () => {
      const states = await c.admin.getPartitionStates(tps(topic, partitions));
      return states.size === partitions && [...states.values()].every((s) => s.state.leader >= 0);
    },
    `leaders of ${partitions} partitions of ${topic}`,
    scaledTimeout(timeoutMs, partitions),
    200,
  );
}

/** Waits until every partition of `topic` has its full replica set in the ISR (one assignment read, pipelined state reads). */
export async function waitForFullIsr(c: TestCluster, topic: string, partitions: number, timeoutMs: number): Promise<void> {
  await until(
    async () => {
      const assignment = (await c.admin.getTopicAssignment(topic))?.partitions;
      if (!assignment) return false;
      const states = await c.admin.getPartitionStates(tps(topic, partitions));
      for (let p = 0; p < partitions; p++) {
        const st = states.get(topicPartitionKey(topic, p));
        if (!st || st.state.isr.length < (assignment.get(p) ?? []).length) return false;
      }
      return true;
    },
    `full ISR of ${partitions} partitions of ${topic}`,
    scaledTimeout(timeoutMs, partitions),
    200,
  );
}

/**
 * Under CHAOS_PARTITIONS: deletes a scenario's verify topic once it is checked and waits until it is
 * gone, so the many scenarios of one cluster (the replication matrix) do not pile up N partitions
 * each. Without the flag: nothing.
 */
export async function dropVerifyTopic(c: TestCluster, topic: string): Promise<void> {
  if (CHAOS_PARTITIONS === undefined) return;
  const t0 = Date.now();
  const admin = new Admin({ bootstrapServers: c.bootstrap, clientId: 'chaos-admin', ...c.clientSecurity });
  try {
    await admin.deleteTopics([topic], { timeoutMs: scaledTimeout(60_000) });
  } finally {
    await admin.close();
  }
  await until(async () => !(await c.admin.topicExists(topic)), `${topic} deleted`, scaledTimeout(60_000), 250);
  process.stdout.write(`[chaos] ${topic} deleted in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
}

export async function createVerifyTopic(c: TestCluster, topic: string, partitions = 3): Promise<void> {
  const admin = new Admin({ bootstrapServers: c.bootstrap, clientId: 'chaos-admin', ...c.clientSecurity });
  try {
    await admin.createTopics([{ name: topic, numPartitions: partitions, replicationFactor: 3, configs: { 'min.insync.replicas': '2' } }], {
      timeoutMs: scaledTimeout(60_000, partitions),
    });
  } finally {
    await admin.close();
  }
  await waitForLeaders(c, topic, partitions, 60_000);
  await waitForFullIsr(c, topic, partitions, 60_000);
}

/**
 * Acknowledgements the workload needs before the faults: 100, or under CHAOS_PARTITIONS enough for
 * each worker's round-robin to have written every partition once (2 workers × N).
 */
export const acksBeforeFaults = (partitions: number, producers = 2): number => (CHAOS_PARTITIONS === undefined ? 100 : Math.max(100, partitions * producers));

/** The workload's rate: the scenario's own (default 200/s), 1,000/s under CHAOS_PARTITIONS unless the scenario sets one. */
export const workloadRate = (own: number | undefined): number => own ?? (CHAOS_PARTITIONS === undefined ? 200 : 1000);

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
  /** Under CHAOS_PARTITIONS, delete the topic after the check (dropVerifyTopic): for files of many scenarios. */
  dropAfter?: boolean;
}

export async function runScenario(o: ScenarioOptions): Promise<VerifyReport> {
  const partitions = chaosPartitions(o.partitions ?? 3);
  const t0 = Date.now();
  await createVerifyTopic(o.cluster, o.topic, partitions);
  const w = startWorkload({
    bootstrap: o.cluster.bootstrap,
    topic: o.topic,
    producers: 2,
    idempotent: o.idempotent ?? true,
    compression: o.compression ?? 'none',
    acks: -1,
    messagesPerSec: workloadRate(o.messagesPerSec),
    ...o.cluster.clientSecurity,
  });
  let result;
  try {
    await moreAcks(w, acksBeforeFaults(partitions), 'before the faults', scaledTimeout(90_000));
    await o.fault(w);
    await moreAcks(w, 100, 'after the faults');
  } finally {
    result = await w.stop();
  }
  await o.heal?.();
  // the followers catch up before their logs are compared
  await waitForFullIsr(o.cluster, o.topic, partitions, 120_000).catch(() => undefined);
  const report = await checkTopic({
    bootstrap: o.cluster.bootstrap,
    topic: o.topic,
    acked: result,
    replicaLogDirs: o.cluster.logDirs(),
    timeoutMs: scaledTimeout(120_000, partitions),
    ...o.cluster.clientSecurity,
  });
  process.stdout.write(
    `\n=== ${o.name}: ${scaleNote(report, t0)}acknowledged ${report.acknowledged}, consumed ${report.consumed}, lost ${report.lost}, reordered ${report.reordered}, divergent ${report.divergentPartitions.length}\n${formatReport(report)}\n`,
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
  if (o.dropAfter) await dropVerifyTopic(o.cluster, o.topic);
  return report;
}

/** Under CHAOS_PARTITIONS, the "partitions N (M written, K replica logs compared), T s, " prefix of a scenario's result line. */
export function scaleNote(report: VerifyReport, t0: number): string {
  if (CHAOS_PARTITIONS === undefined) return '';
  const written = report.partitions.filter((p) => p.acknowledged > 0).length;
  const compared = report.partitions.reduce((n, p) => n + p.replicasCompared.length, 0);
  return `partitions ${report.partitions.length} (${written} written, ${compared} replica logs compared), ${((Date.now() - t0) / 1000).toFixed(1)} s, `;
}
