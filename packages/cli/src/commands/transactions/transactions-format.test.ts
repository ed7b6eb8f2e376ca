import { describe, expect, it } from 'vitest';
import { topicPartitionKey, type ProducerState, type TransactionDescription } from '@samsa/client';
import {
  DESCRIBE_HEADERS,
  candidateOpenTransactions,
  describeProducersRows,
  describeRow,
  filterHangingTransactions,
  findHangingRows,
  prettyPrintTable,
  type OpenTransaction,
} from './transactions-format.js';

const producer = (over: Partial<ProducerState> = {}): ProducerState => ({
  producerId: 7n,
  producerEpoch: 2,
  lastSequence: 4,
  lastTimestamp: 1_000n,
  coordinatorEpoch: null,
  currentTransactionStartOffset: null,
  ...over,
});

const description = (over: Partial<TransactionDescription> = {}): TransactionDescription => ({
  transactionalId: 'tx',
  coordinatorId: 1,
  state: 'Ongoing',
  producerId: 7n,
  producerEpoch: 2,
  transactionTimeoutMs: 60_000,
  transactionStartTimeMs: 1_000n,
  topicPartitions: [
    { topic: 'a', partition: 0 },
    { topic: 'b', partition: 3 },
  ],
  ...over,
});

describe('transactions format', () => {
  it('transactions format – prettyPrintTable pads every cell to its column width and ends each with a tab, as ToolsUtils does', () => {
    expect(
      prettyPrintTable(
        ['TransactionalId', 'Coordinator'],
        [
          ['a-very-long-transactional-id', '0'],
          ['x', '12345678901234'],
        ],
      ),
    ).toEqual([
      'TransactionalId             \tCoordinator   \t',
      'a-very-long-transactional-id\t0             \t',
      'x                           \t12345678901234\t',
    ]);
    expect(prettyPrintTable(['A', 'B'], [])).toEqual(['A\tB\t']);
  });

  it('transactions format – describe: duration from the start time, None without an open transaction, partitions joined with commas', () => {
    expect(describeRow(description(), 61_500)).toEqual(['1', 'tx', '7', '2', 'Ongoing', '60000', '1000', '60500', 'a-0,b-3']);
    expect(describeRow(description({ state: 'Empty', transactionStartTimeMs: null, topicPartitions: [] }), 61_500)).toEqual([
      '1',
      'tx',
      '7',
      '2',
      'Empty',
      '60000',
      'None',
      'None',
      '',
    ]);
    expect(DESCRIBE_HEADERS).toHaveLength(9);
  });

  it('transactions format – describe-producers: no coordinator epoch is -1, no open transaction None', () => {
    expect(describeProducersRows([producer(), producer({ coordinatorEpoch: 3, currentTransactionStartOffset: 42n })])).toEqual([
      ['7', '2', '-1', '4', '1000', 'None'],
      ['7', '2', '3', '4', '1000', '42'],
    ]);
  });

  it('transactions format – find-hanging candidates: open transactions whose producer wrote longer ago than the max timeout', () => {
    const now = 20 * 60_000 + 1_000;
    const states = [
      {
        topic: 't',
        partition: 0,
        activeProducers: [
          producer({ producerId: 1n, currentTransactionStartOffset: 5n }), // open, 20 min old
          producer({ producerId: 2n }), // no open transaction
          producer({ producerId: 3n, currentTransactionStartOffset: 9n, lastTimestamp: BigInt(now - 60_000) }), // open, 1 min old
        ],
      },
    ];
    expect(candidateOpenTransactions(states, 15 * 60_000, now).map((c) => c.producer.producerId)).toEqual([1n]);
    expect(candidateOpenTransactions(states, 0, now).map((c) => c.producer.producerId)).toEqual([1n, 3n]);
  });

  it('transactions format – hanging: no transactional id for the producer, an id no longer found, or a coordinator transaction without the partition', () => {
    const open = (producerId: bigint, topic: string, partition: number): OpenTransaction => ({
      topic,
      partition,
      producer: producer({ producerId, currentTransactionStartOffset: 0n }),
    });
    const candidates = [open(1n, 'a', 0), open(2n, 'a', 0), open(3n, 'a', 0), open(3n, 'c', 1)];
    const ids = new Map([
      [2n, 'gone'],
      [3n, 'live'],
    ]);
    const descriptions = new Map<string, TransactionDescription | null>([
      ['gone', null],
      ['live', description()],
    ]);
    expect(filterHangingTransactions(candidates, ids, descriptions).map((c) => `${c.producer.producerId}:${topicPartitionKey(c)}`)).toEqual([
      '1:a-0',
      '2:a-0',
      '3:c-1',
    ]);
  });

  it('transactions format – find-hanging rows: coordinator epoch -1 when none, duration in whole minutes', () => {
    const t: OpenTransaction = { topic: 't', partition: 2, producer: producer({ currentTransactionStartOffset: 11n, lastTimestamp: 0n }) };
    expect(findHangingRows([t], 16 * 60_000 + 59_999)).toEqual([['t', '2', '7', '2', '-1', '11', '0', '16']]);
  });
});
