import { afterEach, describe, expect, it } from 'vitest';
import { encodeEndTxnMarkerBatch, topicPartitionKey } from '@samsa/protocol';
import { FakeCluster } from '../testing/fake-cluster.js';
import { FakeGroup } from '../testing/fake-group.js';
import { checkTopic } from './checker.js';
import { formatReport } from './report.js';
import { formatValue, type AckedWrite, type TransactionRecord, type WorkloadResult } from './workload.js';

const RUN = 'r1';

/** A one-partition topic `topic` whose log the test writes: transactional batches and markers. */
class TxnLog {
  readonly acked: AckedWrite[] = [];
  constructor(
    private readonly g: FakeGroup,
    private readonly topic: string,
  ) {}

  data(producerId: bigint, seqs: number[]): bigint {
    const base = this.g.append(
      this.topic,
      0,
      seqs.map((s) => ({ value: formatValue(RUN, 0, s) })),
      { transactional: true, producerId },
    );
    seqs.forEach((s, i) => this.acked.push({ worker: 0, seq: s, partition: 0, offset: Number(base) + i }));
    return base;
  }

  marker(producerId: bigint, commit: boolean): void {
    const log = this.g.logs.get(topicPartitionKey(this.topic, 0)) ?? [];
    const baseOffset = this.g.endOffset(this.topic, 0);
    log.push({ baseOffset, buf: encodeEndTxnMarkerBatch({ baseOffset, producerId, producerEpoch: 0, commit, coordinatorEpoch: 0 }), count: 1 });
    this.g.logs.set(topicPartitionKey(this.topic, 0), log);
  }

  abortedAt(producerId: bigint, firstOffset: bigint): void {
    const k = topicPartitionKey(this.topic, 0);
    this.g.aborted.set(k, [...(this.g.aborted.get(k) ?? []), { producerId, firstOffset }]);
  }
}

function result(topic: string, acked: AckedWrite[], transactions: TransactionRecord[]): WorkloadResult {
  return {
    topic,
    runId: RUN,
    idempotent: true,
    acks: -1,
    compression: 'none',
    producers: 1,
    startedAt: 0,
    stoppedAt: 1000,
    attempted: acked.length,
    acked,
    failed: 0,
    unresolved: 0,
    errors: {},
    transactions,
  };
}

const txn = (index: number, firstSeq: number, count: number, outcome: TransactionRecord['outcome']): TransactionRecord => ({
  worker: 0,
  index,
  firstSeq,
  count,
  outcome,
});

describe('verify checker', () => {
  let fc: FakeCluster | undefined;
  afterEach(async () => {
    await fc?.close();
    fc = undefined;
  });

  it('verify checker – transactional: read_committed read-back; committed and aborted transactions as the log says are 0 violations', async () => {
    fc = await FakeCluster.start({ brokers: 1 });
    fc.addTopic('v', [[0]]);
    const log = new TxnLog(new FakeGroup(fc, 0), 'v');
    log.data(1n, [0, 1]);
    log.marker(1n, true);
    const aborted = log.data(2n, [2, 3]);
    log.abortedAt(2n, aborted);
    log.marker(2n, false);
    log.data(1n, [4]);
    log.marker(1n, true);
    const report = await checkTopic({
      bootstrap: fc.bootstrapServers,
      topic: 'v',
      acked: result('v', log.acked, [txn(0, 0, 2, 'committed'), txn(1, 2, 2, 'aborted'), txn(2, 4, 1, 'unknown')]),
      timeoutMs: 10_000,
    });
    expect(report.violations).toEqual([]);
    expect(report.transactions).toEqual({ total: 3, committed: 1, aborted: 1, unknown: 1, abortedRecordsRead: 0, partiallyVisible: 0, missingCommitted: 0 });
    expect(report.consumed).toBe(3);
    expect(report.lost).toBe(0);
    expect(report.ok).toBe(true);
    const table = formatReport(report);
    expect(table).toMatch(/transactions\s+3 \(1 committed, 1 aborted, 1 unknown\)/);
    expect(table).toMatch(/aborted records read\s+0\n/);
    expect(table).toContain('OK: 0 violations');
  });

  it('verify checker – transactional: an aborted record read, a partially visible transaction and records missing from a committed one are violations', async () => {
    fc = await FakeCluster.start({ brokers: 1 });
    fc.addTopic('v', [[0]]);
    const log = new TxnLog(new FakeGroup(fc, 0), 'v');
    log.data(1n, [0, 1]);
    log.marker(1n, true);
    // aborted, but the broker's aborted list leaves it out: read_committed returns it
    log.data(2n, [2]);
    log.marker(2n, false);
    // committed with 2 records, only one in the log
    log.data(1n, [3]);
    log.marker(1n, true);
    const report = await checkTopic({
      bootstrap: fc.bootstrapServers,
      topic: 'v',
      acked: result('v', log.acked, [txn(0, 0, 2, 'committed'), txn(1, 2, 1, 'aborted'), txn(2, 3, 2, 'committed')]),
      timeoutMs: 10_000,
    });
    expect(report.transactions).toEqual({ total: 3, committed: 2, aborted: 1, unknown: 0, abortedRecordsRead: 1, partiallyVisible: 1, missingCommitted: 1 });
    expect(report.ok).toBe(false);
    expect(report.violations.join('\n')).toMatch(/aborted record read: worker 0 seq 2/);
    expect(report.violations.join('\n')).toMatch(/partially visible transaction: worker 0 transaction 2 \(committed\): 1 of 2/);
    expect(formatReport(report)).toMatch(/committed records missing\s+1 !/);
  });
});
