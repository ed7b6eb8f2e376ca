/**
 * Consume-transform-produce with our own client (@samsa/client) under kill -9, against 3 brokers
 * (RF=3, min.insync.replicas=2, __transaction_state with 5 partitions): our consumer (group,
 * read_committed, no auto commit) → transform → our transactional producer with
 * sendOffsetsToTransaction(consumer.groupMetadata()), over SAMSA_E2E_CLIENT_CTP_FAULT_RECORDS input
 * records (default 100,000; every 20th transaction aborted once its records are written, its input
 * read again), while the test SIGKILLs the transaction coordinator's broker and then
 * the leader of an output partition (each restarted). The pipeline handles errors the way Kafka
 * documents for its producer: a commit that timed out is retried; an abortable error aborts; a fatal
 * one (or an abort that fails) closes the producer and starts a new one with the same
 * transactional.id (InitProducerId completes the old transaction); then the consumer rewinds to the
 * group's committed offsets. The output, read with read_committed by our consumer and by kcat,
 * holds each input record exactly once. When the pipeline does not finish the test prints its
 * progress, producer state and counters; SAMSA_E2E_CLIENT_LOG_FILE keeps the clients' debug log.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Consumer, KafkaError, Producer, stringDeserializer, stringSerializer, type TopicPartition } from '@samsa/client';
import { topicPartitionKey } from '@samsa/protocol';
import { newTopicId } from '@samsa/zk-paths';
import { describeCluster, TestCluster, until } from './harness.js';
import { findTransactionCoordinator, kcatRead, transactionStatePartition, valuesOf } from './clients/txn.js';

const RECORDS = Number(process.env['SAMSA_E2E_CLIENT_CTP_FAULT_RECORDS'] ?? 100_000);
const TXN_STATE_PARTITIONS = 5;
const PARTITIONS = 6;
/** Every ABORT_EVERY-th transaction is aborted after its records are written, and its input read again. */
const ABORT_EVERY = 20;

/** SAMSA_E2E_CLIENT_LOG_FILE: our clients' pino log (debug level) goes there; silent without it. */
const LOG_FILE = process.env['SAMSA_E2E_CLIENT_LOG_FILE'];
const clientLogger = LOG_FILE ? pino({ level: 'debug' }, pino.destination({ dest: LOG_FILE, sync: true })) : undefined;

type Rec = { key: string | null; value: string | null };

describeCluster('client transactions under kill -9 (3 brokers, @samsa/client)', () => {
  let c: TestCluster;
  const cleanups: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    c = await TestCluster.start({
      brokers: 3,
      overrides: {
        'min.insync.replicas': '2',
        'transaction.state.log.num.partitions': String(TXN_STATE_PARTITIONS),
        'transaction.abort.timed.out.transaction.cleanup.interval.ms': '500',
        'auto.leader.rebalance.enable': 'false',
        'group.initial.rebalance.delay.ms': '300',
      },
    });
  }, 120_000);

  afterAll(async () => {
    for (const f of cleanups.splice(0).reverse()) await f().catch(() => undefined);
    await c?.stop();
  });

  async function createTopic(topic: string, partitions: number): Promise<TopicPartition[]> {
    await c.admin.createTopic(topic, newTopicId(), new Map(Array.from({ length: partitions }, (_, p) => [p, [p % 3, (p + 1) % 3, (p + 2) % 3]])), {});
    await c.waitForLeaders(topic, partitions);
    return Array.from({ length: partitions }, (_, partition) => ({ topic, partition }));
  }

  function consumer(extra: Record<string, string | number | boolean | null>): Consumer<string | null, string | null> {
    const cons = new Consumer<string | null, string | null>({
      'bootstrap.servers': c.bootstrap,
      'auto.offset.reset': 'earliest',
      'key.deserializer': stringDeserializer,
      'value.deserializer': stringDeserializer,
      logger: clientLogger?.child({ client: 'consumer' }),
      ...extra,
    } as never);
    cleanups.push(() => cons.close({ timeoutMs: 2000 }));
    return cons;
  }

  /** SIGKILL broker `id`, wait for ZooKeeper to forget it, start it again. */
  async function killAndRestart(id: number): Promise<void> {
    await c.shutdownBroker(id, 'hard');
    await until(async () => !(await c.admin.getBrokerIds()).includes(id), `broker ${id}'s registration to expire`, 30_000, 200);
    await c.startBroker(id);
    await until(async () => (await c.admin.getBrokerIds()).includes(id), `broker ${id} registered again`, 30_000, 100);
  }

  /** Our read_committed consumer (manual assignment) over the whole topic: every value, once `expected` arrived and nothing more came for a second. */
  async function readOurs(partitions: TopicPartition[], expected: number): Promise<string[]> {
    const cons = consumer({ 'group.id': null, 'isolation.level': 'read_committed', 'fetch.max.wait.ms': 100 });
    cons.assign(partitions);
    cons.seekToBeginning(partitions);
    const seen: string[] = [];
    await until(
      async () => {
        for (const r of await cons.poll(200)) seen.push(r.value!);
        return seen.length >= expected;
      },
      `${expected} records (read_committed); have ${seen.length}`,
      180_000,
    );
    const settle = Date.now() + 1000;
    while (Date.now() < settle) for (const r of await cons.poll(100)) seen.push(r.value!);
    await cons.close();
    return seen;
  }

  /** Input values with no output record, and those with more than one. */
  function exactlyOnce(values: string[]): { missing: number[]; duplicated: number[]; total: number } {
    const counts = new Map<string, number>();
    for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
    const missing: number[] = [];
    const duplicated: number[] = [];
    for (let i = 0; i < RECORDS; i++) {
      const n = counts.get(`out-${i}`) ?? 0;
      if (n === 0) missing.push(i);
      else if (n > 1) duplicated.push(i);
    }
    return { missing: missing.slice(0, 10), duplicated: duplicated.slice(0, 10), total: values.length };
  }

  it(`client transactions – consume-transform-produce of ${RECORDS} records with our consumer and transactional producer while the coordinator's broker and then an output partition's leader are SIGKILLed: each input record exactly once in the read_committed output (our consumer and kcat)`, async () => {
    const input = 'client-ctp-faults-in';
    const output = 'client-ctp-faults-out';
    const groupId = 'client-ctp-faults';
    const transactionalId = 'client-ctp-faults-1';
    const inPartitions = await createTopic(input, PARTITIONS);
    const outPartitions = await createTopic(output, PARTITIONS);

    const loader = new Producer<string | null, string | null>({
      'bootstrap.servers': c.bootstrap,
      'linger.ms': 5,
      'key.serializer': stringSerializer,
      'value.serializer': stringSerializer,
    } as never);
    for (let i = 0; i < RECORDS; i += 10_000)
      await Promise.all(Array.from({ length: Math.min(10_000, RECORDS - i) }, (_, j) => loader.send({ topic: input, key: `k${i + j}`, value: `${i + j}` })));
    await loader.close();

    const newProducer = () => {
      const p = new Producer<string | null, string | null>({
        'bootstrap.servers': c.bootstrap,
        'transactional.id': transactionalId,
        'linger.ms': 5,
        'key.serializer': stringSerializer,
        'value.serializer': stringSerializer,
        logger: clientLogger?.child({ client: 'producer' }),
      } as never);
      cleanups.push(() => p.close({ timeoutMs: 2000 }));
      return p;
    };
    let producer = newProducer();
    await producer.initTransactions();
    const cons = consumer({
      'group.id': groupId,
      'enable.auto.commit': false,
      'isolation.level': 'read_committed',
      'max.poll.records': 200,
      'heartbeat.interval.ms': 1000,
      'session.timeout.ms': 30_000,
      'fetch.max.wait.ms': 200,
    });
    cons.subscribe([input]);

    // what the group committed per input partition (through our transactions): the sum is the progress
    const committed = new Map<string, bigint>();
    const progress = () => Number([...committed.values()].reduce((a, b) => a + b, 0n));
    let attempts = 0;
    const stats = {
      slowestTransactionMs: 0,
      transactions: 0,
      deliberateAborts: 0,
      failures: 0,
      commitRetried: 0,
      aborted: 0,
      newProducers: 0,
      pollErrors: 0,
      errors: new Map<string, number>(),
    };

    /** Seeks the consumer's partitions to the group's committed offsets (the input of an aborted transaction is read again). */
    const rewind = async () => {
      const offsets = await cons.committed(cons.assignment(), { timeoutMs: 120_000 });
      for (const tp of cons.assignment()) {
        const o = offsets.get(topicPartitionKey(tp));
        if (o) {
          cons.seek(tp, o);
          committed.set(topicPartitionKey(tp), o.offset);
        } else cons.seekToBeginning([tp]);
      }
    };

    /** One transaction over `records`: the transformed records and the next input offsets; every ABORT_EVERY-th is aborted once its records are written. */
    const transact = async (records: Array<Rec & { topic: string; partition: number; offset: bigint }>) => {
      const next = new Map<string, { topic: string; partition: number; offset: bigint }>();
      for (const r of records) next.set(topicPartitionKey(r.topic, r.partition), { topic: r.topic, partition: r.partition, offset: r.offset + 1n });
      producer.beginTransaction();
      const sends = records.map((r) => producer.send({ topic: output, key: r.key, value: `out-${r.value}` }));
      // a failed send fails the transaction too (commit throws): no unhandled rejections here
      for (const s of sends) s.catch(() => undefined);
      await producer.sendOffsetsToTransaction([...next.values()], cons.groupMetadata());
      if (++attempts % ABORT_EVERY === 0) {
        await Promise.all(sends);
        await producer.abortTransaction();
        stats.deliberateAborts++;
        await rewind();
        return;
      }
      await producer.commitTransaction();
      await Promise.all(sends);
      stats.transactions++;
      for (const [k, o] of next) committed.set(k, o.offset);
    };

    /** After a failed transaction: complete it (retried commit, abort, or a new producer), then rewind the consumer to the group's offsets. */
    const recover = async (err: unknown) => {
      stats.failures++;
      const name = err instanceof KafkaError ? err.errorName : (err as Error).message;
      stats.errors.set(name, (stats.errors.get(name) ?? 0) + 1);
      try {
        if (producer.transactionState === 'COMMITTING_TRANSACTION') {
          // the commit timed out: Kafka's producer lets it be called again
          stats.commitRetried++;
          await producer.commitTransaction();
        } else if (producer.transactionState !== 'FATAL_ERROR' && producer.transactionState !== 'READY') {
          stats.aborted++;
          await producer.abortTransaction();
        } else if (producer.transactionState === 'FATAL_ERROR') throw err;
      } catch {
        stats.newProducers++;
        await producer.close({ timeoutMs: 0 }).catch(() => undefined);
        producer = newProducer();
        await until(
          () =>
            producer.initTransactions().then(
              () => true,
              () => false,
            ),
          'a new transactional producer initialised',
          180_000,
          200,
        );
      }
      await rewind();
    };

    let stop = false;
    let finished = false;
    let failed: unknown;
    const started = Date.now();
    const pipeline = (async () => {
      while (!stop && progress() < RECORDS) {
        let records: Awaited<ReturnType<typeof cons.poll>>;
        try {
          records = await cons.poll(500);
        } catch {
          stats.pollErrors++;
          continue;
        }
        if (records.length === 0) continue;
        try {
          const t0 = Date.now();
          await transact(records);
          stats.slowestTransactionMs = Math.max(stats.slowestTransactionMs, Date.now() - t0);
        } catch (err) {
          await recover(err);
        }
      }
    })().then(
      () => void (finished = true),
      (err: unknown) => void (failed = err),
    );
    /** Progress reached `n` (or the pipeline ended); the pipeline's own failure (e.g. no new producer within 3 minutes) ends the wait. */
    const reached = (n: number) => () => {
      if (failed) throw new Error('the pipeline failed', { cause: failed });
      return finished || progress() >= n;
    };

    try {
      // kill -9 the transaction coordinator's broker a third of the way, an output partition's leader at two thirds
      await until(reached(RECORDS / 3), `a third of the input processed (${progress()})`, 180_000, 50);
      const coordinator = await findTransactionCoordinator(c.brokers[0]!.address, transactionalId);
      expect(await c.leaderOf('__transaction_state', transactionStatePartition(transactionalId, TXN_STATE_PARTITIONS))).toBe(coordinator);
      const atFirstKill = progress();
      const down1 = Date.now();
      await killAndRestart(coordinator);
      const downtime1 = Date.now() - down1;
      await until(reached((2 * RECORDS) / 3), `two thirds of the input processed (${progress()})`, 180_000, 50);
      const outputLeader = await c.leaderOf(output, 0);
      const atSecondKill = progress();
      const down2 = Date.now();
      await killAndRestart(outputLeader);
      const downtime2 = Date.now() - down2;
      await until(reached(Infinity), `all input processed (${progress()})`, 300_000, 100);
      await pipeline;
      const elapsed = Date.now() - started;
      console.log(
        `our client's consume-transform-produce: ${RECORDS} records in ${elapsed} ms, ${stats.transactions} transactions committed, ${stats.deliberateAborts} aborted on purpose, ${stats.failures} failed ` +
          `(${JSON.stringify(Object.fromEntries(stats.errors))}; ${stats.commitRetried} commits retried, ${stats.aborted} aborted, ${stats.newProducers} new producers), ` +
          `${stats.pollErrors} poll errors, slowest transaction ${stats.slowestTransactionMs} ms; killed broker ${coordinator} (transaction coordinator) at ${atFirstKill} ` +
          `(down and back in ${downtime1} ms), then ${outputLeader} (leader of ${output}-0) at ${atSecondKill} (${downtime2} ms)`,
      );
    } finally {
      if (!finished)
        console.log(
          `pipeline not finished: progress ${progress()} of ${RECORDS}, producer ${producer.transactionState}, consumer assigned ${cons.assignment().length} partitions; ` +
            JSON.stringify({ ...stats, errors: Object.fromEntries(stats.errors) }),
        );
      stop = true;
      await pipeline;
    }

    // the group's offsets are at the end of the input
    const groupOffsets = await cons.committed(inPartitions, { timeoutMs: 60_000 });
    const ends = await cons.endOffsets(inPartitions);
    for (const tp of inPartitions) expect(groupOffsets.get(topicPartitionKey(tp))?.offset, topicPartitionKey(tp)).toBe(ends.get(topicPartitionKey(tp)));
    await cons.close();

    // the aborted transactions' records are in the log: read_committed must skip them
    expect(stats.deliberateAborts).toBeGreaterThan(0);
    expect((await kcatRead(c.bootstrap, output, 'read_uncommitted', 180_000)).length).toBeGreaterThan(RECORDS);
    const expected = { missing: [], duplicated: [], total: RECORDS };
    expect(exactlyOnce(await readOurs(outPartitions, RECORDS))).toEqual(expected);
    expect(exactlyOnce(valuesOf(await kcatRead(c.bootstrap, output, 'read_committed', 180_000)))).toEqual(expected);
  }, 900_000);
});
