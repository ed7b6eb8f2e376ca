/**
 * Test support for the transaction coordinator: an in-memory `__transaction_state`
 * (CoordinatorLog) whose appends can fail or be held, and a fake WriteTxnMarkers destination
 * whose answers tests choose and can hold.
 */
import pino from 'pino';
import { ErrorCode, recordBatches, topicPartitionKey } from '@samsa/protocol';
import { MemoryCoordinatorLog as BaseMemoryCoordinatorLog } from '@samsa/server-common/testing';
import { decodeTransactionLogRecord, type TransactionLogValue } from './transaction-log.js';
import type { TxnMarkerEntry, TxnMarkerResult } from './transaction-marker-channel-manager.js';
import { TransactionCoordinator } from './transaction-coordinator.js';
import type { TransactionConfig } from './transaction-state-manager.js';

export const silentLogger = pino({ level: 'silent' });

/** An in-memory `__transaction_state` that decodes its records for assertions. */
export class MemoryCoordinatorLog extends BaseMemoryCoordinatorLog {
  /** Every record of partition `p`, decoded. */
  records(p: number): Array<{ transactionalId: string; value: TransactionLogValue | null }> {
    const out: Array<{ transactionalId: string; value: TransactionLogValue | null }> = [];
    for (const b of recordBatches(Buffer.concat(this.batches.get(p) ?? []))) {
      for (const r of b) out.push(decodeTransactionLogRecord(r.key!, r.value));
    }
    return out;
  }
}

interface HeldRequest {
  brokerId: number;
  markers: readonly TxnMarkerEntry[];
  resolve: (r: TxnMarkerResult[]) => void;
  reject: (e: Error) => void;
}

/**
 * Partition leaders and their WriteTxnMarkers answers: every partition answers NONE unless
 * `errors` holds codes for it (consumed one per request); `hold` keeps requests pending until
 * `answer()`/`fail()`.
 */
export class FakeMarkerBrokers {
  /** `topic-partition` → leader id (-1: no leader available); absent: the partition does not exist. */
  readonly leaders = new Map<string, number>();
  /** `topic-partition` → error codes answered to the next requests. */
  readonly errors = new Map<string, number[]>();
  readonly requests: Array<{ brokerId: number; markers: readonly TxnMarkerEntry[] }> = [];
  hold = false;
  /** The next requests fail (disconnection). */
  disconnects = 0;
  readonly held: HeldRequest[] = [];

  readonly leaderFor = (topic: string, partition: number): number | undefined => this.leaders.get(topicPartitionKey(topic, partition));

  readonly send = (brokerId: number, markers: readonly TxnMarkerEntry[]): Promise<TxnMarkerResult[]> => {
    this.requests.push({ brokerId, markers });
    if (this.disconnects > 0) {
      this.disconnects--;
      return Promise.reject(new Error('disconnected'));
    }
    if (this.hold) return new Promise((resolve, reject) => this.held.push({ brokerId, markers, resolve, reject }));
    return Promise.resolve(this.answerFor(markers));
  };

  answerFor(markers: readonly TxnMarkerEntry[]): TxnMarkerResult[] {
    return markers.map((m) => ({
      producerId: m.producerId,
      partitions: m.partitions.map(({ topic, partition }) => ({
        topic,
        partition,
        errorCode: this.errors.get(topicPartitionKey(topic, partition))?.shift() ?? ErrorCode.NONE,
      })),
    }));
  }

  /** Answers the held requests. */
  answer(): void {
    for (const h of this.held.splice(0)) h.resolve(this.answerFor(h.markers));
  }

  /** Fails the held requests (disconnection). */
  fail(): void {
    for (const h of this.held.splice(0)) h.reject(new Error('disconnected'));
  }

  /** Markers sent for `topic-partition`, as [result, producerEpoch]. */
  markersFor(topic: string, partition: number): Array<{ brokerId: number; result: number; producerEpoch: number; coordinatorEpoch: number }> {
    const out: Array<{ brokerId: number; result: number; producerEpoch: number; coordinatorEpoch: number }> = [];
    for (const r of this.requests) {
      for (const m of r.markers) {
        if (m.partitions.some((tp) => tp.topic === topic && tp.partition === partition)) {
          out.push({ brokerId: r.brokerId, result: m.result, producerEpoch: m.producerEpoch, coordinatorEpoch: m.coordinatorEpoch });
        }
      }
    }
    return out;
  }
}

export interface Harness {
  coord: TransactionCoordinator;
  storage: MemoryCoordinatorLog;
  brokers: FakeMarkerBrokers;
  /** Producer ids handed out, from 1000. */
  pids: { next: bigint; fail: Error | null };
}

/**
 * A coordinator over `partitions` `__transaction_state` partitions (1 by default: every id maps
 * to partition 0), leading and loaded at coordinator epoch 1; partitions `t-0`..`t-3` led by
 * broker 1, `u-0`..`u-3` by broker 2, `__consumer_offsets-4` by broker 1.
 */
export async function newHarness(config: Partial<TransactionConfig> = {}, partitions = 1): Promise<Harness> {
  const storage = new MemoryCoordinatorLog();
  const brokers = new FakeMarkerBrokers();
  for (let p = 0; p < 4; p++) {
    brokers.leaders.set(`t-${p}`, 1);
    brokers.leaders.set(`u-${p}`, 2);
  }
  brokers.leaders.set('__consumer_offsets-4', 1);
  const pids = { next: 1000n, fail: null as Error | null };
  const coord = new TransactionCoordinator({
    brokerId: 0,
    config: { transactionLogNumPartitions: partitions, ...config },
    storage,
    logger: silentLogger,
    generateProducerId: () => (pids.fail ? Promise.reject(pids.fail) : Promise.resolve(pids.next++)),
    partitionForGroup: () => 4,
    leaderFor: brokers.leaderFor,
    sendMarkers: brokers.send,
    markerRetryBackoffMs: 100,
  });
  coord.startup(partitions, false);
  for (let p = 0; p < partitions; p++) {
    storage.leaders.add(p);
    await coord.onElection(p, 1);
  }
  return { coord, storage, brokers, pids };
}

/** Lets every pending promise and microtask run (fake timers leave setImmediate real). */
export function flush(): Promise<void> {
  return new Promise((r) => setImmediate(r));
}
