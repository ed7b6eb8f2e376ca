/**
 * The verify workload: producers write unique, sequenced values and remember every acknowledgement,
 * so that the checker (checker.ts) can tell lost acknowledged writes, duplicates and reordering.
 *
 * A value is `samsa-verify:<runId>:<worker>:<seq>`: `runId` tells runs apart on a reused topic,
 * `worker` is the producer's index (one Producer, one producer id, per worker), `seq` counts from 0
 * per worker. Partitions are chosen round-robin per worker (explicit partition), so every partition
 * gets an increasing subsequence of each worker's sequences: within a partition, one worker's values
 * must be read in increasing `seq` order.
 *
 * Transactional (`transactional`): each worker is a transactional producer (transactional.id
 * `samsa-verify-<runId>-<worker>`) writing transactions of `size` consecutive sequences, aborting
 * every `abortEvery`-th; the result lists every transaction with its outcome (committed, aborted,
 * or unknown when the commit itself failed), for the checker's read_committed checks.
 */
import { randomBytes } from 'node:crypto';
import type { ConnectionOptions as TlsConnectionOptions } from 'node:tls';
import { silentLogger, type Logger } from '../logger.js';
import { Producer } from '../producer/producer.js';
import { TransactionState } from '../producer/transaction-manager.js';
import type { SaslOptions } from '../sasl/index.js';

export const VALUE_PREFIX = 'samsa-verify';

export type VerifyCompression = 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd';

export interface WorkloadOptions {
  bootstrap: string;
  topic: string;
  /** Producer instances (workers). Default 2. */
  producers?: number;
  /** enable.idempotence. Default true. Without it, max.in.flight is 1 so order still holds and duplicates are allowed. */
  idempotent?: boolean;
  compression?: VerifyCompression;
  /** Default -1 (all). */
  acks?: -1 | 1 | 0;
  /** Total rate over all workers. Default 500. 0: as fast as acknowledgements allow. */
  messagesPerSec?: number;
  /** Stop by itself after this many sends in total (then `done` resolves). Default: until stop(). */
  maxMessages?: number;
  logger?: Logger;
  /** Sends a worker keeps unacknowledged at most. Default 200. */
  maxOutstanding?: number;
  /** Extra producer configs (Kafka names), e.g. delivery.timeout.ms. */
  producerConfig?: Record<string, string | number | boolean>;
  /** Tag of this run in the values. Default random. */
  runId?: string;
  /** Write in transactions of `size` records, aborting every `abortEvery`-th (0: none). */
  transactional?: { size: number; abortEvery: number };
  /** Connect with TLS (security.protocol SSL / SASL_SSL): Node's TLS options, e.g. `{ ca: [caPem] }`. */
  tls?: TlsConnectionOptions;
  /** Authenticate with SASL (SASL_PLAINTEXT / SASL_SSL). */
  sasl?: SaslOptions;
}

/** One transaction of the transactional workload: sequences firstSeq .. firstSeq + count - 1 of a worker. */
export interface TransactionRecord {
  worker: number;
  /** The worker's transaction number, from 0. */
  index: number;
  firstSeq: number;
  count: number;
  /** `unknown`: the commit (or abort) failed, so the coordinator may have completed it either way. */
  outcome: 'committed' | 'aborted' | 'unknown';
}

/** One acknowledged write. */
export interface AckedWrite {
  worker: number;
  seq: number;
  partition: number;
  /** The offset the broker acknowledged (-1 with acks=0). */
  offset: number;
}

export interface WorkloadResult {
  topic: string;
  runId: string;
  idempotent: boolean;
  acks: -1 | 0 | 1;
  compression: VerifyCompression;
  producers: number;
  startedAt: number;
  stoppedAt: number;
  /** Sends attempted. */
  attempted: number;
  /** Every acknowledged write. */
  acked: AckedWrite[];
  /** Sends that failed (not acknowledged: they may or may not be in the log). */
  failed: number;
  /** Sends neither acknowledged nor failed when stop() gave up waiting. */
  unresolved: number;
  /** Failures by error name. */
  errors: Record<string, number>;
  /** Transactional runs: every transaction and its outcome. */
  transactions?: TransactionRecord[];
}

export interface WorkloadStats {
  attempted: number;
  acknowledged: number;
  failed: number;
  outstanding: number;
}

export interface Workload {
  readonly runId: string;
  /** Resolves when maxMessages were sent and settled (never, without maxMessages, until stop()). */
  readonly done: Promise<void>;
  stats(): WorkloadStats;
  /** Stops producing, waits for the sends in flight (up to `timeoutMs`, default 150 s), closes the producers. */
  stop(o?: { timeoutMs?: number }): Promise<WorkloadResult>;
}

export function formatValue(runId: string, worker: number, seq: number): string {
  return `${VALUE_PREFIX}:${runId}:${worker}:${seq}`;
}

/** Parses a workload value; null for anything else (values of other writers are ignored). */
export function parseValue(v: Buffer | string | null): { runId: string; worker: number; seq: number } | null {
  if (v === null) return null;
  const s = typeof v === 'string' ? v : v.toString('utf8');
  const parts = s.split(':');
  if (parts.length !== 4 || parts[0] !== VALUE_PREFIX) return null;
  const worker = Number(parts[2]);
  const seq = Number(parts[3]);
  if (!Number.isInteger(worker) || !Number.isInteger(seq)) return null;
  return { runId: parts[1]!, worker, seq };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export function startWorkload(o: WorkloadOptions): Workload {
  const n = o.producers ?? 2;
  const idempotent = o.idempotent ?? true;
  const acks = o.acks ?? -1;
  const compression = o.compression ?? 'none';
  // Kafka: idempotence needs acks=all
  const effectiveIdempotence = idempotent && acks === -1;
  const rate = o.messagesPerSec ?? 500;
  const maxOutstanding = o.maxOutstanding ?? 200;
  const runId = o.runId ?? randomBytes(4).toString('hex');
  const log = (o.logger ?? silentLogger).child({ component: 'verify-workload', topic: o.topic, runId });
  const acked: AckedWrite[] = [];
  const transactions: TransactionRecord[] = [];
  const txn = o.transactional;
  const errors: Record<string, number> = {};
  const countError = (err: unknown) => {
    const name = (err as { errorName?: string }).errorName ?? (err as Error).name ?? 'Error';
    errors[name] = (errors[name] ?? 0) + 1;
  };
  const startedAt = Date.now();
  let attempted = 0;
  let failed = 0;
  let outstanding = 0;
  let stopping = false;
  const wakers: Array<() => void> = [];
  const wake = () => {
    for (const w of wakers.splice(0)) w();
  };
  const settledWaiters: Array<() => void> = [];
  const onSettled = () => {
    outstanding--;
    wake();
    if (outstanding === 0) for (const w of settledWaiters.splice(0)) w();
  };

  const newProducer = (i: number) =>
    new Producer<null, string>({
      'bootstrap.servers': o.bootstrap,
      'client.id': `samsa-verify-${runId}-${i}`,
      acks,
      'enable.idempotence': effectiveIdempotence,
      'compression.type': compression,
      'linger.ms': 5,
      'max.in.flight.requests.per.connection': effectiveIdempotence ? 5 : 1,
      'delivery.timeout.ms': 120_000,
      'request.timeout.ms': 30_000,
      'value.serializer': { serialize: (_t: string, v: string | null) => (v === null ? null : Buffer.from(v, 'utf8')) },
      ...(txn ? { 'transactional.id': `samsa-verify-${runId}-${i}`, 'transaction.timeout.ms': 20_000 } : {}),
      ...(o.producerConfig ?? {}),
      ...(o.tls ? { tls: o.tls } : {}),
      ...(o.sasl ? { sasl: o.sasl } : {}),
      ...(o.logger ? { logger: o.logger } : {}),
    } as never);
  const producers = Array.from({ length: n }, (_, i) => newProducer(i));

  const perWorkerInterval = rate > 0 ? (1000 * n) / rate : 0;
  const worker = async (i: number): Promise<void> => {
    const p = producers[i]!;
    const parts = await p.partitionsFor(o.topic);
    const count = parts.length;
    let seq = 0;
    let next = Date.now();
    while (!stopping) {
      while (outstanding >= maxOutstanding * n && !stopping) await new Promise<void>((r) => wakers.push(r));
      // checked with no await before the increment: workers share the count
      if (stopping || (o.maxMessages !== undefined && attempted >= o.maxMessages)) break;
      const s = seq++;
      const partition = s % count;
      attempted++;
      outstanding++;
      p.send({ topic: o.topic, partition, key: null, value: formatValue(runId, i, s) }).then(
        (m) => {
          acked.push({ worker: i, seq: s, partition: m.partition, offset: Number(m.offset) });
          onSettled();
        },
        (err: Error) => {
          failed++;
          const name = (err as { errorName?: string }).errorName ?? err.name ?? 'Error';
          errors[name] = (errors[name] ?? 0) + 1;
          if (failed <= 5 || failed % 1000 === 0) log.warn({ worker: i, seq: s, partition, err: err.message, failed }, 'send failed');
          onSettled();
        },
      );
      if (perWorkerInterval > 0) {
        next += perWorkerInterval;
        const wait = next - Date.now();
        if (wait > 1) await sleep(wait);
        else if (wait < -1000) next = Date.now(); // fell behind (outstanding limit): do not burst
      } else if (seq % 100 === 0) {
        await new Promise<void>((r) => setImmediate(r));
      }
    }
  };

  /** A transactional producer ready for the next transaction (a new one after a fatal error or an unknown outcome). */
  const readyProducer = async (i: number): Promise<Producer<null, string>> => {
    for (;;) {
      const p = producers[i]!;
      if (p.transactionState === TransactionState.READY) return p;
      if (p.transactionState === TransactionState.UNINITIALIZED) {
        try {
          await p.initTransactions();
          return p;
        } catch (err) {
          countError(err);
          log.warn({ worker: i, err: (err as Error).message }, 'initTransactions failed');
          if (stopping) throw err;
        }
      }
      // fatal, or a transaction in an unknown state: the next producer with this transactional.id takes over
      await p.close({ timeoutMs: 1000 }).catch(() => undefined);
      producers[i] = newProducer(i);
      if (stopping) await sleep(100);
    }
  };

  const txnWorker = async (i: number, size: number, abortEvery: number): Promise<void> => {
    let p = await readyProducer(i);
    const count = (await p.partitionsFor(o.topic)).length;
    let seq = 0;
    let index = 0;
    let next = Date.now();
    while (!stopping && !(o.maxMessages !== undefined && attempted >= o.maxMessages)) {
      p = await readyProducer(i);
      const t: TransactionRecord = { worker: i, index: index++, firstSeq: seq, count: 0, outcome: 'unknown' };
      transactions.push(t);
      p.beginTransaction();
      const sends: Array<Promise<boolean>> = [];
      for (let k = 0; k < size; k++) {
        const s = seq++;
        const partition = s % count;
        attempted++;
        t.count++;
        sends.push(
          p.send({ topic: o.topic, partition, key: null, value: formatValue(runId, i, s) }).then(
            (m) => (acked.push({ worker: i, seq: s, partition: m.partition, offset: Number(m.offset) }), true),
            (err: Error) => {
              failed++;
              countError(err);
              if (failed <= 5 || failed % 1000 === 0) log.warn({ worker: i, seq: s, partition, err: err.message, failed }, 'send failed');
              return false;
            },
          ),
        );
        if (perWorkerInterval > 0) {
          next += perWorkerInterval;
          const wait = next - Date.now();
          if (wait > 1) await sleep(wait);
          else if (wait < -1000) next = Date.now();
        }
      }
      const allSent = (await Promise.all(sends)).every(Boolean);
      const abort = !allSent || (abortEvery > 0 && t.index % abortEvery === abortEvery - 1);
      try {
        if (abort) {
          await p.abortTransaction();
          t.outcome = 'aborted';
        } else {
          await p.commitTransaction();
          t.outcome = 'committed';
        }
      } catch (err) {
        countError(err);
        log.warn({ worker: i, transaction: t.index, err: (err as Error).message, state: p.transactionState }, abort ? 'abort failed' : 'commit failed');
        if (p.transactionState === TransactionState.ABORTABLE_ERROR) {
          // the commit failed before EndTxn (a send failed): nothing of it becomes visible once aborted
          try {
            await p.abortTransaction();
            t.outcome = 'aborted';
          } catch (e) {
            countError(e);
          }
        }
      }
    }
  };

  const workers = producers.map((_, i) =>
    (txn ? txnWorker(i, txn.size, txn.abortEvery) : worker(i)).catch((err: unknown) => {
      log.error({ worker: i, err: (err as Error).message }, 'worker failed');
      errors['WorkerFailed'] = (errors['WorkerFailed'] ?? 0) + 1;
    }),
  );
  const allSettled = () => (outstanding === 0 ? Promise.resolve() : new Promise<void>((r) => settledWaiters.push(r)));
  const done = Promise.all(workers).then(() => allSettled());
  let result: Promise<WorkloadResult> | undefined;

  return {
    runId,
    done,
    stats: () => ({ attempted, acknowledged: acked.length, failed, outstanding }),
    stop(so = {}) {
      result ??= (async () => {
        stopping = true;
        wake();
        await Promise.all(workers);
        const timeoutMs = so.timeoutMs ?? 150_000;
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([allSettled(), new Promise<void>((r) => (timer = setTimeout(r, timeoutMs)))]);
        clearTimeout(timer);
        const unresolved = outstanding;
        const stoppedAt = Date.now();
        // snapshot before close(): close() fails what is still unsent
        const snapshot: WorkloadResult = {
          topic: o.topic,
          runId,
          idempotent: effectiveIdempotence,
          acks,
          compression,
          producers: n,
          startedAt,
          stoppedAt,
          attempted,
          acked: [...acked],
          failed,
          unresolved,
          errors: { ...errors },
          ...(txn ? { transactions: transactions.map((t) => ({ ...t })) } : {}),
        };
        await Promise.all(producers.map((p) => p.close({ timeoutMs: 1000 }).catch(() => undefined)));
        log.info({ attempted, acknowledged: snapshot.acked.length, failed, unresolved }, 'workload stopped');
        return snapshot;
      })();
      return result;
    },
  };
}
