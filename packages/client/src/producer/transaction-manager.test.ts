import { afterEach, describe, expect, it } from 'vitest';
import { API_KEYS, ErrorCode, KafkaError, RecordBatch, topicPartitionKey } from '@samsa/protocol';
import { FakeCluster } from '../testing/fake-cluster.js';
import { Producer } from './producer.js';
import { TransactionState } from './transaction-manager.js';

type TxnApi = 'FindCoordinator' | 'InitProducerId' | 'AddPartitionsToTxn' | 'AddOffsetsToTxn' | 'EndTxn' | 'TxnOffsetCommit' | 'Produce';

/**
 * Two fake brokers; broker `coordinator` is the transaction (and group) coordinator, the other
 * answers NOT_COORDINATOR. `events` records what arrived where, `inject[api]` queues error codes.
 */
async function fakeTxnCluster() {
  const fc = await FakeCluster.start({ brokers: 2 });
  fc.addTopic('t', [[0], [1]]);
  const s = {
    fc,
    coordinator: 1,
    producerId: 7n,
    epoch: -1,
    events: [] as string[],
    inject: {} as Partial<Record<TxnApi, number[]>>,
    produced: [] as Array<{ partition: number; transactional: boolean; transactionalId: string | null; producerEpoch: number; values: string[] }>,
    holdAdd: undefined as Promise<void> | undefined,
    /** The coordinator moves to broker 0 after its first error answer to InitProducerId. */
    moveAfterInitError: false,
  };
  const take = (api: TxnApi) => s.inject[api]?.shift() ?? 0;
  for (const b of fc.brokers) {
    const notCoordinator = () => b.nodeId !== s.coordinator;
    b.on(API_KEYS.FindCoordinator, (req, ctx) => {
      const key = ctx.version >= 4 ? req.coordinatorKeys[0]! : req.key;
      s.events.push(`FindCoordinator(${key},type=${req.keyType})`);
      const c = fc.broker(s.coordinator);
      const node = { nodeId: c.nodeId, host: c.host, port: c.port };
      const code = take('FindCoordinator');
      if (ctx.version >= 4)
        return {
          throttleTimeMs: 0,
          errorCode: 0,
          errorMessage: null,
          nodeId: 0,
          host: '',
          port: 0,
          coordinators: [{ key, ...node, errorCode: code, errorMessage: null }],
        };
      return { throttleTimeMs: 0, errorCode: code, errorMessage: null, ...node, coordinators: [] };
    });
    b.on(API_KEYS.InitProducerId, (req) => {
      const code = notCoordinator() ? ErrorCode.NOT_COORDINATOR : take('InitProducerId');
      s.events.push(
        `InitProducerId@${b.nodeId}(${req.transactionalId},${req.transactionTimeoutMs},${req.producerId}/${req.producerEpoch})${code ? `=${code}` : ''}`,
      );
      if (code && s.moveAfterInitError) {
        s.moveAfterInitError = false;
        s.coordinator = 0;
      }
      if (code) return { throttleTimeMs: 0, errorCode: code, producerId: -1n, producerEpoch: -1 };
      s.epoch++;
      return { throttleTimeMs: 0, errorCode: 0, producerId: s.producerId, producerEpoch: s.epoch };
    });
    b.on(API_KEYS.AddPartitionsToTxn, async (req) => {
      await s.holdAdd;
      const code = notCoordinator() ? ErrorCode.NOT_COORDINATOR : take('AddPartitionsToTxn');
      s.events.push(
        `AddPartitionsToTxn(${req.topics.flatMap((t) => t.partitions.map((p) => topicPartitionKey(t.name, p))).join(',')})${code ? `=${code}` : ''}`,
      );
      return {
        throttleTimeMs: 0,
        resultsByTopic: req.topics.map((t) => ({
          name: t.name,
          resultsByPartition: t.partitions.map((p) => ({ partitionIndex: p, partitionErrorCode: code })),
        })),
      };
    });
    b.on(API_KEYS.AddOffsetsToTxn, (req) => {
      const code = notCoordinator() ? ErrorCode.NOT_COORDINATOR : take('AddOffsetsToTxn');
      s.events.push(`AddOffsetsToTxn(${req.groupId})${code ? `=${code}` : ''}`);
      return { throttleTimeMs: 0, errorCode: code };
    });
    b.on(API_KEYS.TxnOffsetCommit, (req) => {
      const code = notCoordinator() ? ErrorCode.NOT_COORDINATOR : take('TxnOffsetCommit');
      const offs = req.topics.flatMap((t) => t.partitions.map((p) => `${topicPartitionKey(t.name, p.partitionIndex)}@${p.committedOffset}`)).join(',');
      s.events.push(`TxnOffsetCommit(${req.groupId},gen=${req.generationId},member=${req.memberId},${offs})${code ? `=${code}` : ''}`);
      return {
        throttleTimeMs: 0,
        topics: req.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: code })) })),
      };
    });
    b.on(API_KEYS.EndTxn, (req) => {
      const code = notCoordinator() ? ErrorCode.NOT_COORDINATOR : take('EndTxn');
      s.events.push(`EndTxn(${req.committed ? 'commit' : 'abort'},${req.producerId}/${req.producerEpoch})${code ? `=${code}` : ''}`);
      return { throttleTimeMs: 0, errorCode: code };
    });
    b.on(API_KEYS.Produce, (req) => ({
      throttleTimeMs: 0,
      nodeEndpoints: [],
      responses: req.topicData.map((t) => ({
        name: t.name,
        partitionResponses: t.partitionData.map((p) => {
          const batch = new RecordBatch(p.records!);
          const code = take('Produce');
          s.events.push(`Produce(${topicPartitionKey(t.name, p.index)})${code ? `=${code}` : ''}`);
          if (!code)
            s.produced.push({
              partition: p.index,
              transactional: batch.isTransactional,
              transactionalId: req.transactionalId,
              producerEpoch: batch.producerEpoch,
              values: [...batch.records()].map((r) => r.value!.toString()),
            });
          return {
            index: p.index,
            errorCode: code,
            baseOffset: code ? -1n : 0n,
            logAppendTimeMs: -1n,
            logStartOffset: 0n,
            recordErrors: [],
            errorMessage: null,
            currentLeader: { leaderId: -1, leaderEpoch: -1 },
          };
        }),
      })),
    }));
  }
  return s;
}

function txnProducer(s: { fc: FakeCluster }, extra: Record<string, unknown> = {}): Producer<null, string> {
  return new Producer<null, string>({
    'bootstrap.servers': s.fc.bootstrapServers,
    'transactional.id': 'tx-1',
    'transaction.timeout.ms': 12345,
    'retry.backoff.ms': 10,
    'max.block.ms': 5000,
    'value.serializer': { serialize: (_t: string, v: string | null) => (v === null ? null : Buffer.from(v)) },
    ...extra,
  } as never);
}

const errorNameOf = async (p: Promise<unknown>): Promise<string> =>
  p.then(
    () => 'resolved',
    (e: unknown) => (e instanceof KafkaError ? e.errorName : String(e)),
  );

describe('TransactionManager', () => {
  let fc: FakeCluster | undefined;
  const producers: Producer<null, string>[] = [];
  afterEach(async () => {
    for (const p of producers.splice(0)) await p.close({ timeoutMs: 100 }).catch(() => undefined);
    await fc?.close();
    fc = undefined;
  });

  it('transactions – init finds the coordinator (key type 1); a partition is added before its first Produce; batches are transactional; commit flushes then EndTxn(commit)', async () => {
    const s = await fakeTxnCluster();
    fc = s.fc;
    const p = txnProducer(s);
    producers.push(p);
    await p.initTransactions();
    expect(p.transactionState).toBe(TransactionState.READY);
    p.beginTransaction();
    const sent = [
      p.send({ topic: 't', partition: 0, value: 'a' }),
      p.send({ topic: 't', partition: 1, value: 'b' }),
      p.send({ topic: 't', partition: 0, value: 'c' }),
    ];
    await p.commitTransaction();
    await Promise.all(sent);
    expect(p.transactionState).toBe(TransactionState.READY);
    const ev = s.events;
    expect(ev.slice(0, 2)).toEqual(['FindCoordinator(tx-1,type=1)', 'InitProducerId@1(tx-1,12345,-1/-1)']);
    const add = ev.findIndex((e) => e.startsWith('AddPartitionsToTxn'));
    const produce = ev.findIndex((e) => e.startsWith('Produce'));
    expect(add).toBeGreaterThan(0);
    expect(produce).toBeGreaterThan(add);
    expect(ev.at(-1)).toBe('EndTxn(commit,7/0)');
    expect(s.produced.every((b) => b.transactional && b.transactionalId === 'tx-1' && b.producerEpoch === 0)).toBe(true);
    expect(s.produced.flatMap((b) => b.values).sort()).toEqual(['a', 'b', 'c']);
    // the next transaction on a partition added before adds it again (a new transaction)
    p.beginTransaction();
    await p.send({ topic: 't', partition: 1, value: 'd' });
    await p.commitTransaction();
    expect(ev.filter((e) => e.startsWith('AddPartitionsToTxn')).at(-1)).toBe('AddPartitionsToTxn(t-1)');
  });

  it('transactions – InitProducerId retries CONCURRENT_TRANSACTIONS and COORDINATOR_LOAD_IN_PROGRESS, and finds the coordinator again after NOT_COORDINATOR', async () => {
    const s = await fakeTxnCluster();
    fc = s.fc;
    s.inject.InitProducerId = [ErrorCode.CONCURRENT_TRANSACTIONS, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS];
    s.moveAfterInitError = true;
    const p = txnProducer(s);
    producers.push(p);
    await p.initTransactions();
    const id = 'tx-1,12345,-1/-1';
    expect(s.events.filter((e) => e.startsWith('InitProducerId'))).toEqual([
      `InitProducerId@1(${id})=${ErrorCode.CONCURRENT_TRANSACTIONS}`,
      `InitProducerId@1(${id})=${ErrorCode.NOT_COORDINATOR}`,
      `InitProducerId@0(${id})=${ErrorCode.COORDINATOR_LOAD_IN_PROGRESS}`,
      `InitProducerId@0(${id})`,
    ]);
    expect(s.events.filter((e) => e.startsWith('FindCoordinator'))).toEqual(['FindCoordinator(tx-1,type=1)', 'FindCoordinator(tx-1,type=1)']);
    expect(p.transactionState).toBe(TransactionState.READY);
  });

  it('transactions – abort drops the records not sent yet (TransactionAbortedError) and ends the transaction with EndTxn(abort)', async () => {
    const s = await fakeTxnCluster();
    fc = s.fc;
    const p = txnProducer(s);
    producers.push(p);
    await p.initTransactions();
    p.beginTransaction();
    await p.send({ topic: 't', partition: 0, value: 'sent' });
    let release!: () => void;
    s.holdAdd = new Promise((r) => (release = r));
    const unsent = p.send({ topic: 't', partition: 1, value: 'unsent' });
    const outcome = errorNameOf(unsent);
    await new Promise((r) => setTimeout(r, 20)); // AddPartitionsToTxn(t-1) is held: the record waits
    const aborted = p.abortTransaction();
    expect(await outcome).toBe('TRANSACTION_ABORTABLE');
    await unsent.catch((e: Error) => expect(e.name).toBe('TransactionAbortedError'));
    release();
    await aborted;
    // the held AddPartitionsToTxn is answered before EndTxn(abort) (its partition is part of the aborted transaction)
    expect(s.events.slice(-2)).toEqual(['AddPartitionsToTxn(t-1)', 'EndTxn(abort,7/0)']);
    expect(s.produced.flatMap((b) => b.values)).toEqual(['sent']);
    expect(p.transactionState).toBe(TransactionState.READY);
    // the next transaction adds its partitions again
    p.beginTransaction();
    await p.send({ topic: 't', partition: 1, value: 'next' });
    await p.commitTransaction();
    expect(s.events.slice(-3)).toEqual(['AddPartitionsToTxn(t-1)', 'Produce(t-1)', 'EndTxn(commit,7/0)']);
  });

  it('transactions – PRODUCER_FENCED (and INVALID_PRODUCER_EPOCH from the coordinator) is fatal: every later call fails with PRODUCER_FENCED', async () => {
    const s = await fakeTxnCluster();
    fc = s.fc;
    const p = txnProducer(s);
    producers.push(p);
    await p.initTransactions();
    p.beginTransaction();
    s.inject.AddPartitionsToTxn = [ErrorCode.INVALID_PRODUCER_EPOCH];
    expect(await errorNameOf(p.send({ topic: 't', partition: 0, value: 'x' }))).toBe('PRODUCER_FENCED');
    expect(p.transactionState).toBe(TransactionState.FATAL_ERROR);
    expect(await errorNameOf(p.commitTransaction())).toBe('PRODUCER_FENCED');
    expect(await errorNameOf(p.abortTransaction())).toBe('PRODUCER_FENCED');
    expect(await errorNameOf(p.send({ topic: 't', partition: 0, value: 'y' }))).toBe('PRODUCER_FENCED');
    expect(() => p.beginTransaction()).toThrow(/newer producer/);

    const q = txnProducer(s);
    producers.push(q);
    await q.initTransactions();
    q.beginTransaction();
    await q.send({ topic: 't', partition: 0, value: 'z' });
    s.inject.EndTxn = [ErrorCode.PRODUCER_FENCED];
    expect(await errorNameOf(q.commitTransaction())).toBe('PRODUCER_FENCED');
    expect(q.transactionState).toBe(TransactionState.FATAL_ERROR);
  });

  it('transactions – TRANSACTIONAL_ID_AUTHORIZATION_FAILED from InitProducerId is fatal', async () => {
    const s = await fakeTxnCluster();
    fc = s.fc;
    s.inject.InitProducerId = [ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED];
    const p = txnProducer(s);
    producers.push(p);
    expect(await errorNameOf(p.initTransactions())).toBe('TRANSACTIONAL_ID_AUTHORIZATION_FAILED');
    expect(p.transactionState).toBe(TransactionState.FATAL_ERROR);
  });

  it('transactions – a failed Produce makes the transaction abortable: send and commit fail, abort recovers and the next transaction commits', async () => {
    const s = await fakeTxnCluster();
    fc = s.fc;
    const p = txnProducer(s);
    producers.push(p);
    await p.initTransactions();
    p.beginTransaction();
    s.inject.Produce = [ErrorCode.INVALID_RECORD];
    expect(await errorNameOf(p.send({ topic: 't', partition: 0, value: 'bad' }))).toBe('INVALID_RECORD');
    expect(p.transactionState).toBe(TransactionState.ABORTABLE_ERROR);
    expect(await errorNameOf(p.send({ topic: 't', partition: 1, value: 'more' }))).toBe('INVALID_RECORD');
    expect(await errorNameOf(p.commitTransaction())).toBe('INVALID_RECORD');
    expect(p.transactionState).toBe(TransactionState.ABORTABLE_ERROR);
    await p.abortTransaction();
    // the failed batch left a sequence gap: the abort also bumps the epoch
    expect(s.events.slice(-2)).toEqual(['EndTxn(abort,7/0)', 'InitProducerId@1(tx-1,12345,7/0)']);
    p.beginTransaction();
    await p.send({ topic: 't', partition: 0, value: 'good' });
    await p.commitTransaction();
    expect(s.events.at(-1)).toBe('EndTxn(commit,7/1)');
  });

  it('transactions – a sequence error is abortable and the abort bumps the epoch with InitProducerId(producer id, epoch) (KIP-360)', async () => {
    const s = await fakeTxnCluster();
    fc = s.fc;
    const p = txnProducer(s);
    producers.push(p);
    await p.initTransactions();
    p.beginTransaction();
    s.inject.Produce = [ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER];
    expect(await errorNameOf(p.send({ topic: 't', partition: 0, value: 'x' }))).toBe('OUT_OF_ORDER_SEQUENCE_NUMBER');
    expect(p.transactionState).toBe(TransactionState.ABORTABLE_ERROR);
    await p.abortTransaction();
    expect(s.events.slice(-2)).toEqual(['EndTxn(abort,7/0)', 'InitProducerId@1(tx-1,12345,7/0)']);
    expect(p.producerId).toEqual({ id: 7n, epoch: 1 });
    p.beginTransaction();
    await p.send({ topic: 't', partition: 0, value: 'y' });
    await p.commitTransaction();
    expect(s.produced.at(-1)).toMatchObject({ values: ['y'], producerEpoch: 1 });
  });

  it('transactions – sendOffsetsToTransaction: AddOffsetsToTxn to the transaction coordinator, then TxnOffsetCommit with the group generation to the group coordinator', async () => {
    const s = await fakeTxnCluster();
    fc = s.fc;
    const p = txnProducer(s);
    producers.push(p);
    await p.initTransactions();
    p.beginTransaction();
    s.inject.TxnOffsetCommit = [ErrorCode.COORDINATOR_LOAD_IN_PROGRESS];
    await p.sendOffsetsToTransaction([{ topic: 'in', partition: 2, offset: 42n }], { groupId: 'g', generationId: 3, memberId: 'm-1', groupInstanceId: null });
    await p.commitTransaction();
    expect(s.events.filter((e) => !e.startsWith('FindCoordinator')).slice(1)).toEqual([
      'AddOffsetsToTxn(g)',
      `TxnOffsetCommit(g,gen=3,member=m-1,in-2@42)=${ErrorCode.COORDINATOR_LOAD_IN_PROGRESS}`,
      'TxnOffsetCommit(g,gen=3,member=m-1,in-2@42)',
      'EndTxn(commit,7/0)',
    ]);
    expect(s.events).toContain('FindCoordinator(g,type=0)');
    // an ILLEGAL_GENERATION answer (a rebalance) makes the transaction abortable
    p.beginTransaction();
    s.inject.TxnOffsetCommit = [ErrorCode.ILLEGAL_GENERATION];
    expect(await errorNameOf(p.sendOffsetsToTransaction([{ topic: 'in', partition: 2, offset: 43n }], 'g'))).toBe('ILLEGAL_GENERATION');
    expect(p.transactionState).toBe(TransactionState.ABORTABLE_ERROR);
    await p.abortTransaction();
  });

  it('transactions – CONCURRENT_TRANSACTIONS before anything of a transaction was added (the previous one completing) is retried after 20 ms, not retry.backoff.ms; later in the transaction with the full backoff', async () => {
    const s = await fakeTxnCluster();
    fc = s.fc;
    const p = txnProducer(s, { 'retry.backoff.ms': 300 });
    producers.push(p);
    await p.initTransactions();
    p.beginTransaction();
    const c = ErrorCode.CONCURRENT_TRANSACTIONS;
    const adds = () => s.events.filter((e) => e.startsWith('AddPartitionsToTxn') || e.startsWith('AddOffsetsToTxn'));
    // with retry.backoff.ms (300, 600, 1000 ms) three retries would take about 2 s
    s.inject.AddPartitionsToTxn = [c, c, c];
    let started = Date.now();
    await p.send({ topic: 't', partition: 0, value: 'a' });
    expect(Date.now() - started).toBeLessThan(250);
    expect(adds()).toEqual([...Array<string>(3).fill(`AddPartitionsToTxn(t-0)=${c}`), 'AddPartitionsToTxn(t-0)']);
    // the transaction has partitions: CONCURRENT_TRANSACTIONS now waits retry.backoff.ms
    s.inject.AddPartitionsToTxn = [c];
    started = Date.now();
    await p.send({ topic: 't', partition: 1, value: 'b' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    await p.commitTransaction();
    // the same for AddOffsetsToTxn first in a transaction
    p.beginTransaction();
    s.inject.AddOffsetsToTxn = [c, c, c];
    started = Date.now();
    await p.sendOffsetsToTransaction([{ topic: 'in', partition: 0, offset: 1n }], 'g');
    expect(Date.now() - started).toBeLessThan(250);
    expect(adds().slice(-4)).toEqual([...Array<string>(3).fill(`AddOffsetsToTxn(g)=${c}`), 'AddOffsetsToTxn(g)']);
    await p.commitTransaction();
    expect(s.events.at(-1)).toBe('EndTxn(commit,7/0)');
  });

  it('transactions – state rules: no send outside a transaction, no begin before init or twice, an empty transaction ends without EndTxn; transactional.id needs idempotence', async () => {
    const s = await fakeTxnCluster();
    fc = s.fc;
    const p = txnProducer(s);
    producers.push(p);
    expect(() => p.beginTransaction()).toThrow(/UNINITIALIZED to state IN_TRANSACTION/);
    await p.initTransactions();
    expect(await errorNameOf(p.send({ topic: 't', partition: 0, value: 'x' }))).toBe('INVALID_TXN_STATE');
    p.beginTransaction();
    expect(() => p.beginTransaction()).toThrow(/IN_TRANSACTION to state IN_TRANSACTION/);
    await p.commitTransaction();
    expect(s.events.some((e) => e.startsWith('EndTxn'))).toBe(false);
    expect(() => txnProducer(s, { 'enable.idempotence': false })).toThrow(/Cannot set a transactional.id without also enabling idempotence/);
    expect(() => txnProducer(s, { acks: 1 })).toThrow(/acks must be set to all/);
    const plain = new Producer({ 'bootstrap.servers': s.fc.bootstrapServers });
    expect(() => plain.beginTransaction()).toThrow(/transactional.id/);
    await plain.close();
  });

  it('transactions – close() aborts an open transaction', async () => {
    const s = await fakeTxnCluster();
    fc = s.fc;
    const p = txnProducer(s);
    await p.initTransactions();
    p.beginTransaction();
    await p.send({ topic: 't', partition: 0, value: 'x' });
    await p.close();
    expect(s.events.at(-1)).toBe('EndTxn(abort,7/0)');
  });
});
