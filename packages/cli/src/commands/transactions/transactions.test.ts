import { afterEach, describe, expect, it } from 'vitest';
import { FakeCluster } from '@samsa/client/testing';
import { ErrorCode, type ApiRequestMap, type DescribeProducersResponseProducerState } from '@samsa/protocol';
import { runTransactionsCommand } from './transactions.js';

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

const NOW = 100 * 60_000;

/** The printed table's lines split at the tabs, cells trimmed (each line ends with a tab: a last empty cell). */
const cells = (out: string) =>
  out
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => l.split('\t').map((c) => c.trim()));

/**
 * A 2-broker fake cluster: topic t (t-0 led by 0, t-1 led by 1, both replicated on 0 and 1);
 * broker 1 coordinates transactional id `live` (producer 7, Ongoing on t-0); t-0 has producer 7's
 * open transaction from offset 10 and producer 8's (no transactional id anywhere) from offset 20,
 * both last written 30 minutes ago.
 */
async function setup() {
  const fc = await FakeCluster.start({ brokers: 2 });
  cleanup.push(() => fc.close());
  fc.addTopic('t', [
    [0, 1],
    [1, 0],
  ]);
  const markers: ApiRequestMap[27][] = [];
  const old = BigInt(NOW - 30 * 60_000);
  const producers: DescribeProducersResponseProducerState[] = [
    { producerId: 7n, producerEpoch: 1, lastSequence: 3, lastTimestamp: old, coordinatorEpoch: 2, currentTxnStartOffset: 10n },
    { producerId: 8n, producerEpoch: 0, lastSequence: 0, lastTimestamp: old, coordinatorEpoch: -1, currentTxnStartOffset: 20n },
    { producerId: 9n, producerEpoch: 0, lastSequence: 5, lastTimestamp: old, coordinatorEpoch: -1, currentTxnStartOffset: -1n },
  ];
  const c = fc.broker(1);
  for (const b of fc.brokers) {
    b.on(10, (req) => ({
      throttleTimeMs: 0,
      errorCode: 0,
      errorMessage: null,
      nodeId: 0,
      host: '',
      port: 0,
      coordinators: req.coordinatorKeys.map((key) => ({ key, nodeId: 1, host: c.host, port: c.port, errorCode: 0, errorMessage: null })),
    }));
    b.on(66, (req, ctx) => ({
      throttleTimeMs: 0,
      errorCode: 0,
      unknownStateFilters: [],
      transactionStates:
        ctx.broker.nodeId === 1 && (req.producerIdFilters.length === 0 || req.producerIdFilters.includes(7n))
          ? [{ transactionalId: 'live', producerId: 7n, transactionState: 'Ongoing' }]
          : [],
    }));
    b.on(61, (req, ctx) => ({
      throttleTimeMs: 0,
      topics: req.topics.map((t) => ({
        name: t.name,
        partitions: t.partitionIndexes.map((p) => ({
          partitionIndex: p,
          errorCode: 0,
          errorMessage: null,
          activeProducers: p === 0 && ctx.broker.nodeId === 0 ? producers : [],
        })),
      })),
    }));
    b.on(27, (req) => {
      markers.push(req);
      return {
        markers: req.markers.map((m) => ({
          producerId: m.producerId,
          topics: m.topics.map((t) => ({ name: t.name, partitions: t.partitionIndexes.map((partitionIndex) => ({ partitionIndex, errorCode: 0 })) })),
        })),
      };
    });
  }
  c.on(65, (req) => ({
    throttleTimeMs: 0,
    transactionStates: req.transactionalIds.map((id) =>
      id === 'live'
        ? {
            errorCode: 0,
            transactionalId: id,
            transactionState: 'Ongoing',
            transactionTimeoutMs: 60_000,
            transactionStartTimeMs: BigInt(NOW - 1_500),
            producerId: 7n,
            producerEpoch: 1,
            topics: [{ topic: 't', partitions: [0] }],
          }
        : {
            errorCode: ErrorCode.TRANSACTIONAL_ID_NOT_FOUND,
            transactionalId: id,
            transactionState: '',
            transactionTimeoutMs: 0,
            transactionStartTimeMs: -1n,
            producerId: -1n,
            producerEpoch: -1,
            topics: [],
          },
    ),
  }));
  const run = async (...argv: string[]) => {
    let out = '';
    let err = '';
    const code = await runTransactionsCommand(
      argv,
      { out: (s) => (out += s), err: (s) => (err += s) },
      { now: () => NOW, adminOptions: { retryBackoffMs: 10, retryBackoffMaxMs: 50, defaultApiTimeoutMs: 3_000 } },
    );
    return { code, out, err };
  };
  return { fc, run, markers, bs: ['--bootstrap-server', fc.bootstrapServers] };
}

describe('samsa transactions', () => {
  it('transactions – list and describe print Kafka’s tables', async () => {
    const { run, bs } = await setup();
    const listed = await run(...bs, 'list');
    expect(listed).toMatchObject({ code: 0, err: '' });
    expect(listed.out).toBe('TransactionalId\tCoordinator\tProducerId\tTransactionState\t\nlive           \t1          \t7         \tOngoing         \t\n');
    const described = await run(...bs, 'describe', '--transactional-id', 'live');
    expect(described.code).toBe(0);
    expect(
      described.out
        .split('\n')[1]!
        .split('\t')
        .map((c) => c.trim()),
    ).toEqual(['1', 'live', '7', '1', 'Ongoing', '60000', String(NOW - 1_500), '1500', 't-0', '']);
    const missing = await run(...bs, 'describe', '--transactional-id', 'nope');
    expect(missing.code).toBe(1);
    expect(missing.err).toBe(
      'Failed to describe transaction state of transactional-id `nope`: DescribeTransactions request for transactionalId `nope` failed because the ID could not be found. Enable debug logging for additional detail.\n',
    );
  });

  it('transactions – describe-producers asks the leader, or the broker given', async () => {
    const { fc, run, bs } = await setup();
    const r = await run(...bs, 'describe-producers', '--topic', 't', '--partition', '0');
    expect(r.code).toBe(0);
    const rows = cells(r.out);
    expect(rows[0]).toEqual(['ProducerId', 'ProducerEpoch', 'LatestCoordinatorEpoch', 'LastSequence', 'LastTimestamp', 'CurrentTransactionStartOffset', '']);
    expect(rows.slice(1).map((x) => [x[0], x[2], x[5]])).toEqual([
      ['7', '2', '10'],
      ['8', '-1', '20'],
      ['9', '-1', 'None'],
    ]);
    const follower = await run(...bs, 'describe-producers', '--topic', 't', '--partition', '0', '--broker-id', '1');
    expect(follower.out.trimEnd().split('\n')).toHaveLength(1); // broker 1's replica has no producers here
    expect(fc.broker(1).requestsFor(61)).toHaveLength(1);
  });

  it('transactions – find-hanging reports the open transactions their coordinator does not list for the partition', async () => {
    const { run, bs } = await setup();
    const r = await run(...bs, 'find-hanging', '--broker-id', '0');
    expect(r).toMatchObject({ code: 0, err: '' });
    const rows = cells(r.out);
    expect(rows[0]).toEqual(['Topic', 'Partition', 'ProducerId', 'ProducerEpoch', 'CoordinatorEpoch', 'StartOffset', 'LastTimestamp', 'Duration(min)', '']);
    // producer 7's transaction is Ongoing with t-0 at its coordinator: not hanging
    expect(rows.slice(1)).toEqual([['t', '0', '8', '0', '-1', '20', String(NOW - 30 * 60_000), '30', '']]);
    // younger than the max transaction timeout: not even a candidate
    const recent = await run(...bs, 'find-hanging', '--topic', 't', '--partition', '0', '--max-transaction-timeout', '45');
    expect(recent.out.trimEnd().split('\n')).toHaveLength(1);
    expect(await run(...bs, 'find-hanging')).toMatchObject({
      code: 1,
      err: 'The `find-hanging` command requires either --topic or --broker-id to limit the scope of the search\n',
    });
    expect(await run(...bs, 'find-hanging', '--broker-id', '0', '--partition', '1')).toMatchObject({
      code: 1,
      err: 'The --partition argument requires --topic to be provided\n',
    });
  });

  it('transactions – abort by start offset writes an ABORT marker with the producer found there; or with the ids given (coordinator epoch -1 → 0)', async () => {
    const { run, bs, markers } = await setup();
    expect(await run(...bs, 'abort', '--topic', 't', '--partition', '0', '--start-offset', '20')).toMatchObject({ code: 0, out: '', err: '' });
    expect(markers[0]!.markers).toEqual([
      expect.objectContaining({
        producerId: 8n,
        producerEpoch: 0,
        transactionResult: false,
        coordinatorEpoch: 0,
        topics: [expect.objectContaining({ name: 't', partitionIndexes: [0] })],
      }),
    ]);
    expect(await run(...bs, 'abort', '--topic', 't', '--partition', '0', '--start-offset', '10')).toMatchObject({ code: 0 });
    expect(markers[1]!.markers[0]).toMatchObject({ producerId: 7n, producerEpoch: 1, coordinatorEpoch: 2 });
    expect(
      await run(...bs, 'abort', '--topic', 't', '--partition', '0', '--producer-id', '5', '--producer-epoch', '3', '--coordinator-epoch', '-1'),
    ).toMatchObject({
      code: 0,
    });
    expect(markers[2]!.markers[0]).toMatchObject({ producerId: 5n, producerEpoch: 3, coordinatorEpoch: 0 });

    expect(await run(...bs, 'abort', '--topic', 't', '--partition', '0', '--start-offset', '15')).toMatchObject({
      code: 1,
      err: 'Could not find any open transactions starting at offset 15 on partition t-0\n',
    });
    expect((await run(...bs, 'abort', '--topic', 't', '--partition', '0')).err).toMatch(
      /^The transaction to abort must be identified either with --start-offset/,
    );
    expect(await run(...bs, 'abort', '--topic', 't', '--partition', '0', '--producer-id', '5', '--producer-epoch', '3')).toMatchObject({
      code: 1,
      err: 'Missing required argument --coordinator-epoch\n',
    });
    expect(markers).toHaveLength(3);
  });

  it('transactions – command-line errors: no --bootstrap-server, a missing required flag, a bad number', async () => {
    const { run, bs } = await setup();
    expect(await run('list')).toMatchObject({ code: 1, err: 'kafka-transactions.sh: error: argument --bootstrap-server is required\n' });
    expect((await run(...bs, 'describe')).code).toBe(1);
    const bad = await run(...bs, 'describe-producers', '--topic', 't', '--partition', 'x');
    expect(bad.code).toBe(1);
    expect(bad.err).toContain(`could not convert 'x' to Integer`);
    expect((await run(...bs, 'abort', '--topic', 't', '--partition', '0', '--producer-id', '1', '--producer-epoch', '40000')).err).toContain(
      `could not convert '40000' to Short`,
    );
  });
});
