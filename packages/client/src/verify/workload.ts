/**
 * The verify workload: producers write unique, sequenced values and remember every acknowledgement,
 * so that the checker (checker.ts) can tell lost acknowledged writes, duplicates and reordering.
 *
 * A value is `samsa-verify:<runId>:<worker>:<seq>`: `runId` tells runs apart on a reused topic,
 * `worker` is the producer's index (one Producer, one producer id, per worker), `seq` counts from 0
 * per worker. Partitions are chosen round-robin per worker (explicit partition), so every partition
 * gets an increasing subsequence of each worker's sequences: within a partition, one worker's values
 * must be read in increasing `seq` order.
 */
import { randomBytes } from 'node:crypto';
import { silentLogger, type Logger } from '../logger.js';
import { Producer } from '../producer/producer.js';

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
  const errors: Record<string, number> = {};
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

  const producers = Array.from(
    { length: n },
    (_, i) =>
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
        ...(o.producerConfig ?? {}),
        ...(o.logger ? { logger: o.logger } : {}),
      } as never),
  );

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

  const workers = producers.map((_, i) =>
    worker(i).catch((err: unknown) => {
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
        };
        await Promise.all(producers.map((p) => p.close({ timeoutMs: 1000 }).catch(() => undefined)));
        log.info({ attempted, acknowledged: snapshot.acked.length, failed, unresolved }, 'workload stopped');
        return snapshot;
      })();
      return result;
    },
  };
}
