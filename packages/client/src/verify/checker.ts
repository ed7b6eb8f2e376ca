/**
 * The verify checker: reads a topic back (Fetch by explicit assignment, fetch-reader.ts) and holds
 * it against the workload's acknowledgements.
 *
 *  - lost: acknowledged writes never read back (the property acks=all promises);
 *  - duplicates: a value read more than once (a violation only for idempotent producers);
 *  - reordered: within a partition, a worker's value read after a higher sequence of the same worker;
 *  - offsetsBackwards: a read returning an offset at or below one before it, or a worker's
 *    acknowledged offsets in a partition not increasing with its sequence;
 *  - ackedOffsetMismatches: an acknowledged write that is in the log, but not at the offset the
 *    broker acknowledged (the acknowledged offset was overwritten);
 *  - divergentPartitions: with `replicaLogDirs`, each replica's log files (below the high watermark)
 *    must hold exactly the records the leader served. Replicas are read from disk (log-files.ts)
 *    rather than by Fetch with Kafka's debug replica id, which needs nothing from the broker.
 *
 * Transactional runs (the workload's `transactions`) are read with read_committed, and also report:
 *  - abortedRead: records of aborted transactions read back (read_committed must never return them);
 *  - partiallyVisible: transactions of which some records were read and others not (all or nothing);
 *  - missingCommitted: records of committed transactions not read back.
 * `lost` then counts only acknowledged records of committed transactions.
 */
import type { ConnectionOptions as TlsConnectionOptions } from 'node:tls';
import { topicPartitionKey } from '@samsa/protocol';
import { Cluster } from '../cluster.js';
import { Admin } from '../admin.js';
import { silentLogger, type Logger } from '../logger.js';
import type { SaslOptions } from '../sasl/index.js';
import { readTopic, type PartitionRead } from './fetch-reader.js';
import { readReplicaLog } from './log-files.js';
import { parseValue, type AckedWrite, type TransactionRecord, type WorkloadResult } from './workload.js';

export interface CheckOptions {
  bootstrap: string;
  topic: string;
  acked: WorkloadResult;
  /** Broker id → that broker's log directory (log.dirs), for the replica-divergence check. */
  replicaLogDirs?: Readonly<Record<number, string>> | ReadonlyMap<number, string>;
  /** Deadline for the read and the replicas catching up. Default 120 s. */
  timeoutMs?: number;
  logger?: Logger;
  /** Connect with TLS (security.protocol SSL / SASL_SSL): Node's TLS options, e.g. `{ ca: [caPem] }`. */
  tls?: TlsConnectionOptions;
  /** Authenticate with SASL (SASL_PLAINTEXT / SASL_SSL). */
  sasl?: SaslOptions;
}

export interface PartitionReport {
  partition: number;
  acknowledged: number;
  consumed: number;
  lost: number;
  duplicates: number;
  reordered: number;
  highWatermark: number;
  /** Replicas compared / divergent / lagging (not caught up with the high watermark at the deadline). */
  replicasCompared: number[];
  divergentReplicas: number[];
  laggingReplicas: number[];
  incomplete: string | null;
}

export interface VerifyReport {
  topic: string;
  runId: string;
  idempotent: boolean;
  acks: -1 | 0 | 1;
  durationMs: number;
  attempted: number;
  acknowledged: number;
  failedSends: number;
  unresolvedSends: number;
  /** Distinct workload values read back. */
  consumed: number;
  lost: number;
  duplicates: number;
  reordered: number;
  offsetsBackwards: number;
  ackedOffsetMismatches: number;
  divergentPartitions: number[];
  /** Partitions the read could not finish (then `lost` may be overstated; a violation too). */
  incompletePartitions: number[];
  partitions: PartitionReport[];
  /** Whether replica logs were compared. */
  replicasChecked: boolean;
  /** Human-readable violations (first few of each kind). */
  violations: string[];
  /** Some lost writes (worker, seq, partition, offset). */
  lostSamples: AckedWrite[];
  /** Transactional runs. */
  transactions?: TransactionCheck;
  errors: Record<string, number>;
  ok: boolean;
}

export interface TransactionCheck {
  total: number;
  committed: number;
  aborted: number;
  /** The commit failed: either outcome is fine, as long as it is all or nothing. */
  unknown: number;
  abortedRecordsRead: number;
  partiallyVisible: number;
  missingCommitted: number;
}

const key = (w: number, s: number) => `${w}:${s}`;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function checkTopic(o: CheckOptions): Promise<VerifyReport> {
  const log = (o.logger ?? silentLogger).child({ component: 'verify-checker', topic: o.topic });
  const timeoutMs = o.timeoutMs ?? 120_000;
  const deadline = Date.now() + timeoutMs;
  const w = o.acked;
  const until = new Map<number, number>();
  for (const a of w.acked) if (a.offset + 1 > (until.get(a.partition) ?? 0)) until.set(a.partition, a.offset + 1);
  const cluster = new Cluster({
    bootstrapServers: o.bootstrap,
    clientId: 'samsa-verify-checker',
    logger: o.logger,
    requestTimeoutMs: 30_000,
    ...(o.tls ? { tls: o.tls } : {}),
    ...(o.sasl ? { sasl: o.sasl } : {}),
  });
  let reads: PartitionRead[];
  let reference: PartitionRead[] | undefined;
  let replicasOf = new Map<number, number[]>();
  try {
    reads = await readTopic(cluster, o.topic, until, timeoutMs, log, w.transactions !== undefined);
    if (o.replicaLogDirs && w.transactions) {
      // the replicas' files hold aborted records too: compare them with a read_uncommitted read
      reference = await readTopic(cluster, o.topic, until, Math.max(5000, deadline - Date.now()), log, false);
    }
    if (o.replicaLogDirs) {
      const [d] = await new Admin({ cluster }).describeTopics([o.topic], { timeoutMs: Math.max(5000, deadline - Date.now()) });
      replicasOf = new Map((d?.partitions ?? []).map((p) => [p.partition, p.replicas]));
    }
  } finally {
    await cluster.close();
  }
  const violations: string[] = [];
  const note = (kind: string, msg: string, count: number) => {
    if (count <= 3) violations.push(`${kind}: ${msg}`);
  };

  // transactional runs: each worker's transactions by sequence; records read per transaction
  const txnOf = new Map<string, TransactionRecord>();
  for (const t of w.transactions ?? []) for (let q = t.firstSeq; q < t.firstSeq + t.count; q++) txnOf.set(key(t.worker, q), t);
  const readPerTxn = new Map<TransactionRecord, number>();
  let abortedRead = 0;

  // where each value of this run was read: key → [partition, offset][]
  const seen = new Map<string, Array<[number, number]>>();
  const partitions: PartitionReport[] = [];
  let reordered = 0;
  let duplicates = 0;
  let backwards = 0;
  for (const r of reads) {
    backwards += r.backwards;
    if (r.backwards > 0) note('offsets backwards', `${topicPartitionKey(o.topic, r.partition)}: ${r.backwards} records at or below an offset read before`, 1);
    const maxSeq = new Map<number, number>();
    let pDup = 0;
    let pReorder = 0;
    let pConsumed = 0;
    for (const rec of r.records) {
      const v = parseValue(rec.value);
      if (!v || v.runId !== w.runId) continue;
      const k = key(v.worker, v.seq);
      const at = seen.get(k);
      if (at) {
        at.push([r.partition, rec.offset]);
        pDup++;
        duplicates++;
        if (w.idempotent) note('duplicate', `worker ${v.worker} seq ${v.seq} read at ${at.map(([p, off]) => `${p}@${off}`).join(', ')}`, duplicates);
        continue;
      }
      seen.set(k, [[r.partition, rec.offset]]);
      pConsumed++;
      const t = txnOf.get(k);
      if (t) {
        readPerTxn.set(t, (readPerTxn.get(t) ?? 0) + 1);
        if (t.outcome === 'aborted') {
          abortedRead++;
          note('aborted record read', `worker ${v.worker} seq ${v.seq} (aborted transaction ${t.index}) read at ${r.partition}@${rec.offset}`, abortedRead);
        }
      }
      const m = maxSeq.get(v.worker) ?? -1;
      if (v.seq < m) {
        pReorder++;
        reordered++;
        note('reordered', `${topicPartitionKey(o.topic, r.partition)} offset ${rec.offset}: worker ${v.worker} seq ${v.seq} after seq ${m}`, reordered);
      } else maxSeq.set(v.worker, v.seq);
    }
    partitions.push({
      partition: r.partition,
      acknowledged: 0,
      consumed: pConsumed,
      lost: 0,
      duplicates: pDup,
      reordered: pReorder,
      highWatermark: r.highWatermark,
      replicasCompared: [],
      divergentReplicas: [],
      laggingReplicas: [],
      incomplete: r.incomplete,
    });
  }
  const byPartition = new Map(partitions.map((p) => [p.partition, p]));

  // acknowledged writes against what was read
  let lost = 0;
  let mismatches = 0;
  const lostSamples: AckedWrite[] = [];
  const ackOrder = new Map<string, AckedWrite[]>();
  for (const a of w.acked) {
    const pr = byPartition.get(a.partition);
    if (pr) pr.acknowledged++;
    const at = seen.get(key(a.worker, a.seq));
    // transactional: only records of committed transactions must be read back
    const t = txnOf.get(key(a.worker, a.seq));
    if (!at && w.transactions && t?.outcome !== 'committed') continue;
    if (!at) {
      lost++;
      if (pr) pr.lost++;
      if (lostSamples.length < 20) lostSamples.push(a);
      note('lost', `worker ${a.worker} seq ${a.seq} acknowledged at ${topicPartitionKey(o.topic, a.partition)} offset ${a.offset}, never read`, lost);
      continue;
    }
    if (w.acks !== 0 && !at.some(([p, off]) => p === a.partition && off === a.offset)) {
      mismatches++;
      note(
        'acked offset mismatch',
        `worker ${a.worker} seq ${a.seq} acknowledged at ${a.partition}@${a.offset}, read at ${at.map(([p, off]) => `${p}@${off}`).join(', ')}`,
        mismatches,
      );
    }
    const ok = `${a.partition}:${a.worker}`;
    let list = ackOrder.get(ok);
    if (!list) ackOrder.set(ok, (list = []));
    list.push(a);
  }
  if (w.acks !== 0) {
    for (const [k, list] of ackOrder) {
      list.sort((x, y) => x.seq - y.seq);
      for (let i = 1; i < list.length; i++) {
        if (list[i]!.offset <= list[i - 1]!.offset) {
          backwards++;
          note(
            'offsets backwards',
            `partition:worker ${k}: seq ${list[i]!.seq} acknowledged at offset ${list[i]!.offset} <= ${list[i - 1]!.offset} of seq ${list[i - 1]!.seq}`,
            backwards,
          );
        }
      }
    }
  }

  // replica divergence: each replica's files below the high watermark vs what the leader served
  const divergent = new Set<number>();
  if (o.replicaLogDirs) {
    const dirs = o.replicaLogDirs instanceof Map ? o.replicaLogDirs : new Map(Object.entries(o.replicaLogDirs).map(([k, v]) => [Number(k), v as string]));
    for (const r of reference ?? reads) {
      const pr = byPartition.get(r.partition)!;
      if (r.incomplete || r.highWatermark < 0) continue;
      const reference = new Map(r.records.map((x) => [x.offset, x.value]));
      for (const b of replicasOf.get(r.partition) ?? []) {
        const dir = dirs.get(b);
        if (dir === undefined) continue;
        let replica = await readReplicaLog(dir, o.topic, r.partition, r.highWatermark);
        // a follower may still be catching up: wait for it (a dead broker stays lagging)
        while (replica.endOffset < r.highWatermark && Date.now() < deadline) {
          await sleep(500);
          replica = await readReplicaLog(dir, o.topic, r.partition, r.highWatermark);
        }
        pr.replicasCompared.push(b);
        if (replica.endOffset < r.highWatermark) pr.laggingReplicas.push(b);
        let diff: string | null = null;
        for (const rec of replica.records) {
          if (rec.offset < r.logStartOffset) continue;
          if (!reference.has(rec.offset)) diff ??= `offset ${rec.offset} on broker ${b} not served by the leader`;
          else if (reference.get(rec.offset) !== rec.value)
            diff ??= `offset ${rec.offset}: broker ${b} has ${JSON.stringify(rec.value)}, the leader served ${JSON.stringify(reference.get(rec.offset))}`;
        }
        const have = new Set(replica.records.map((x) => x.offset));
        if (replica.endOffset >= r.highWatermark) {
          for (const off of reference.keys())
            if (!have.has(off) && off >= r.logStartOffset) diff ??= `offset ${off} served by the leader is missing on broker ${b}`;
        }
        if (diff) {
          pr.divergentReplicas.push(b);
          divergent.add(r.partition);
          note('divergent', `${topicPartitionKey(o.topic, r.partition)}: ${diff}`, divergent.size);
        }
      }
    }
  }

  let transactions: TransactionCheck | undefined;
  if (w.transactions) {
    let partial = 0;
    let missing = 0;
    for (const t of w.transactions) {
      const n = readPerTxn.get(t) ?? 0;
      if (n > 0 && n < t.count) {
        partial++;
        note('partially visible transaction', `worker ${t.worker} transaction ${t.index} (${t.outcome}): ${n} of ${t.count} records read`, partial);
      }
      if (t.outcome === 'committed' && n < t.count) {
        missing += t.count - n;
        note('missing from committed transaction', `worker ${t.worker} transaction ${t.index}: ${t.count - n} of ${t.count} records not read`, missing);
      }
    }
    transactions = {
      total: w.transactions.length,
      committed: w.transactions.filter((t) => t.outcome === 'committed').length,
      aborted: w.transactions.filter((t) => t.outcome === 'aborted').length,
      unknown: w.transactions.filter((t) => t.outcome === 'unknown').length,
      abortedRecordsRead: abortedRead,
      partiallyVisible: partial,
      missingCommitted: missing,
    };
  }

  const incomplete = reads.filter((r) => r.incomplete).map((r) => r.partition);
  for (const p of incomplete) note('incomplete read', `${topicPartitionKey(o.topic, p)}: ${byPartition.get(p)!.incomplete}`, 1);
  const ok =
    lost === 0 &&
    reordered === 0 &&
    backwards === 0 &&
    mismatches === 0 &&
    divergent.size === 0 &&
    incomplete.length === 0 &&
    (!w.idempotent || duplicates === 0) &&
    (!transactions || (transactions.abortedRecordsRead === 0 && transactions.partiallyVisible === 0 && transactions.missingCommitted === 0));
  const report: VerifyReport = {
    topic: o.topic,
    runId: w.runId,
    idempotent: w.idempotent,
    acks: w.acks,
    durationMs: w.stoppedAt - w.startedAt,
    attempted: w.attempted,
    acknowledged: w.acked.length,
    failedSends: w.failed,
    unresolvedSends: w.unresolved,
    consumed: seen.size,
    lost,
    duplicates,
    reordered,
    offsetsBackwards: backwards,
    ackedOffsetMismatches: mismatches,
    divergentPartitions: [...divergent].sort((a, b) => a - b),
    incompletePartitions: incomplete,
    partitions: partitions.sort((a, b) => a.partition - b.partition),
    replicasChecked: o.replicaLogDirs !== undefined,
    violations,
    lostSamples,
    errors: w.errors,
    ...(transactions ? { transactions } : {}),
    ok,
  };
  log.info(
    { ok, acknowledged: report.acknowledged, consumed: report.consumed, lost, duplicates, reordered, divergent: report.divergentPartitions },
    'check done',
  );
  return report;
}
