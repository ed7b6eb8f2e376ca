/**
 * A TestCluster whose ZooKeeper and brokers each run in their own network namespace
 * (test-e2e/netns.ts), for the network-partition scenarios; plus the small helpers they share.
 */
import { expect } from 'vitest';
import { API_KEYS, encodeRecordBatch, topicPartitionKey } from '@samsa/protocol';
import { Admin, Connection, type PartitionInfo } from '@samsa/client';
import { checkTopic, formatReport, startWorkload, type VerifyReport, type Workload, type WorkloadResult } from '@samsa/client/verify';
import { TestCluster, until, type ClusterOptions } from '../harness.js';
import { NetnsTopology } from '../netns.js';
import { rawRequest } from '../clients/wire.js';
import { assertChaosSecured, chaosClusterOptions } from './secure.js';
import { acksBeforeFaults, moreAcks, scaleNote, scaledTimeout, waitForFullIsr, waitForLeaders, workloadRate } from './scenario.js';

/** zookeeper.session.timeout.ms of the brokers (BrokerProcess's default). */
export const SESSION_TIMEOUT_MS = 6000;

/** Settings of the partition scenarios: RF=3 topics with min.insync.replicas=2, a short lag time. */
export const PARTITION_OVERRIDES = {
  'min.insync.replicas': '2',
  'default.replication.factor': '3',
  'replica.lag.time.max.ms': '4000',
  // a stalled connection to a partitioned peer is given up after this (Kafka: 30 s)
  'replica.socket.timeout.ms': '5000',
  'controller.socket.timeout.ms': '5000',
  'auto.leader.rebalance.enable': 'false',
  'unclean.leader.election.enable': 'false',
} as const;

export interface NetnsCluster {
  c: TestCluster;
  net: NetnsTopology;
  stop(): Promise<void>;
}

/**
 * Namespaces first, then ZooKeeper and the brokers in them. stop() heals, stops the processes,
 * deletes the namespaces. Under CHAOS_SECURE every listener is secured (secure.ts), the broker
 * certificate naming the namespace addresses.
 */
export async function startNetnsCluster(o: Omit<ClusterOptions, 'placement'> = {}): Promise<NetnsCluster> {
  const brokers = o.brokers ?? 3;
  const net = await NetnsTopology.create({ brokers });
  let c: TestCluster;
  try {
    const placement = net.placement();
    const hosts = Array.from({ length: brokers }, (_, id) => placement.broker(id).host);
    const opts = await chaosClusterOptions({ ...o, brokers, overrides: { ...PARTITION_OVERRIDES, ...o.overrides } }, hosts);
    c = await TestCluster.start({ ...opts, placement });
  } catch (err) {
    await net.destroy();
    throw err;
  }
  try {
    await assertChaosSecured(c);
  } catch (err) {
    await c.stop();
    await net.destroy();
    throw err;
  }
  return {
    c,
    net,
    async stop() {
      await net.heal().catch(() => undefined);
      for (const b of c.brokers) b.resume();
      await c.stop();
      await net.destroy();
    },
  };
}

/** The partitions of `topic` as the broker at `address` of `c` answers Metadata (leader, ISR). */
export async function metadataOf(c: TestCluster, address: string, topic: string): Promise<PartitionInfo[]> {
  const admin = new Admin({ bootstrapServers: address, clientId: 'chaos-metadata', ...c.clientSecurity });
  try {
    return (await admin.describeTopics([topic], { timeoutMs: 10_000 }))[0]!.partitions;
  } finally {
    await admin.close();
  }
}

/** Partition state znodes of partitions 0..n-1 of `topic` (one pipelined read). */
export async function statesOf(c: TestCluster, topic: string, partitions: number) {
  const states = await c.admin.getPartitionStates(Array.from({ length: partitions }, (_, partition) => ({ topic, partition })));
  const out = [];
  for (let p = 0; p < partitions; p++) {
    const s = states.get(topicPartitionKey(topic, p));
    if (!s) throw new Error(`no state znode for ${topicPartitionKey(topic, p)}`);
    out.push(s.state);
  }
  return out;
}

/** Waits until a controller is registered and returns its id. */
export async function controllerOf(c: TestCluster): Promise<number> {
  return until(() => c.controllerId(), 'a controller', 30_000, 100);
}

/** Creates `topic` with an explicit assignment (RF=3, min.insync.replicas=2) and waits for its leaders and full ISR. */
export async function createAssignedTopic(c: TestCluster, topic: string, assignment: number[][]): Promise<void> {
  const admin = new Admin({ bootstrapServers: c.bootstrap, clientId: 'chaos-admin', ...c.clientSecurity });
  try {
    await admin.createTopics([{ name: topic, replicaAssignment: assignment, configs: { 'min.insync.replicas': '2' } }], {
      timeoutMs: scaledTimeout(60_000, assignment.length),
    });
  } finally {
    await admin.close();
  }
  await waitForLeaders(c, topic, assignment.length, 60_000);
  await waitForFullIsr(c, topic, assignment.length, 60_000);
}

export interface PartitionScenario {
  name: string;
  c: TestCluster;
  topic: string;
  /** Replica assignment, one list per partition (the preferred leader first); chaosAssignment() scales it. */
  assignment: number[][];
  seed: number;
  /** Injects the faults (and heals them) while the workload runs. */
  fault: (w: Workload) => Promise<void>;
  messagesPerSec?: number;
  /** Extra producer configs for the workload. */
  producerConfig?: Record<string, string | number | boolean>;
}

/**
 * The verify workload (2 idempotent producers, acks=all) on a topic with `assignment` while `fault`
 * runs, then everything is read back and the replicas' log files compared. Prints the counts and the
 * report; asserts 0 lost, 0 reordered, 0 divergent, no violation.
 */
export async function runPartitionScenario(o: PartitionScenario): Promise<VerifyReport> {
  const { c } = o;
  const t0 = Date.now();
  await createAssignedTopic(c, o.topic, o.assignment);
  const w = startWorkload({
    bootstrap: c.bootstrap,
    topic: o.topic,
    producers: 2,
    idempotent: true,
    acks: -1,
    messagesPerSec: workloadRate(o.messagesPerSec),
    runId: `seed${o.seed}`,
    ...c.clientSecurity,
    ...(o.producerConfig ? { producerConfig: o.producerConfig } : {}),
  });
  let result: WorkloadResult;
  try {
    await moreAcks(w, acksBeforeFaults(o.assignment.length), 'before the faults', scaledTimeout(90_000));
    await o.fault(w);
    await moreAcks(w, 100, 'after healing');
  } finally {
    result = await w.stop();
  }
  await waitForFullIsr(c, o.topic, o.assignment.length, 120_000).catch(() => undefined);
  const report = await checkTopic({
    bootstrap: c.bootstrap,
    topic: o.topic,
    acked: result,
    replicaLogDirs: c.logDirs(),
    timeoutMs: scaledTimeout(120_000, o.assignment.length),
    ...c.clientSecurity,
  });
  process.stdout.write(
    `\n=== ${o.name} (seed ${o.seed}): ${scaleNote(report, t0)}acknowledged ${report.acknowledged}, consumed ${report.consumed}, lost ${report.lost}, reordered ${report.reordered}, divergent ${report.divergentPartitions.length}\n${formatReport(report)}\n`,
  );
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
  return report;
}

/** `seed`'s pick of `n` distinct items of `xs`, in a seeded order. */
export function pick<T>(rng: () => number, xs: readonly T[], n = xs.length): T[] {
  const a = [...xs];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a.slice(0, n);
}

/**
 * One acks=all Produce of one record straight to `address` (a broker of `c`); the partition's error
 * code (0: acknowledged). Over TLS and SASL when the cluster is secured (CHAOS_SECURE).
 */
export async function produceAll(c: TestCluster, address: string, topic: string, partition: number, value: string, timeoutMs: number): Promise<number> {
  const body = {
    transactionalId: null,
    acks: -1,
    timeoutMs,
    topicData: [{ name: topic, partitionData: [{ index: partition, records: encodeRecordBatch({ records: [{ value }] }) }] }],
  };
  const security = c.clientSecurity;
  if (!security.tls && !security.sasl) return (await rawRequest(address, 0, 9, body, timeoutMs + 15_000)).responses[0]!.partitionResponses[0]!.errorCode;
  const i = address.lastIndexOf(':');
  const conn = await Connection.connect({
    host: address.slice(0, i),
    port: Number(address.slice(i + 1)),
    clientId: 'samsa-e2e-reader',
    requestTimeoutMs: timeoutMs + 15_000,
    ...security,
  });
  try {
    return (await conn.request(API_KEYS.Produce, body, { version: 9 })).body.responses[0]!.partitionResponses[0]!.errorCode;
  } finally {
    await conn.close();
  }
}

export { logLines, logOf } from '../harness.js';
