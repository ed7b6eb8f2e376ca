/**
 * Transactions (KIP-98) from the other client families against 3 brokers (RF=3,
 * min.insync.replicas=2), read back with kcat (librdkafka 2.0.2) at read_committed:
 *  - librdkafka 2.0.2's transactional producer (Debian's python3-confluent-kafka, a child process
 *    running clients/txn_producer.py): init_transactions, transactions with every 3rd aborted; and a
 *    consume-transform-produce loop with send_offsets_to_transaction (every 4th transaction aborted
 *    and rewound): read_committed reads exactly the committed records, the group's offsets the end;
 *  - @platformatic/kafka 2.12.1, whose InitProducerId for a fresh producer carries producer id 0,
 *    epoch 0 (Java sends -1/-1): accepted as Kafka does for a just-created transactional id; its
 *    commits and aborts read back with read_committed;
 *  - the transaction timeout: a librdkafka producer with transaction.timeout.ms 3000 opens a
 *    transaction, sends and is SIGSTOPped; the coordinator aborts it, the LSO moves past it, a
 *    read_committed KafkaJS consumer goes on with later transactions and never sees its records;
 *    SIGCONTed, its commit fails with the fencing error.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import kafkajs from 'kafkajs';
import type { Admin, Kafka as KafkaT } from 'kafkajs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeCluster, TestCluster, until } from './harness.js';
import { WireLog } from './clients/wire.js';
import { kcatRead, latestOffset, startPython, valuesOf, type PythonClient } from './clients/txn.js';
import './clients/promise-with-resolvers.js';

const { Kafka, logLevel } = kafkajs;

const plt = await import('@platformatic/kafka');

const RD_TRANSACTIONS = Number(process.env['SAMSA_E2E_RD_TRANSACTIONS'] ?? 60);

describeCluster('transactions with librdkafka and @platformatic/kafka (3 brokers)', () => {
  let c: TestCluster;
  let kafka: KafkaT;
  let admin: Admin;
  const children: PythonClient[] = [];
  const cleanups: Array<() => Promise<unknown>> = [];

  beforeAll(async () => {
    c = await TestCluster.start({
      brokers: 3,
      overrides: {
        'min.insync.replicas': '2',
        'transaction.state.log.num.partitions': '5',
        'transaction.abort.timed.out.transaction.cleanup.interval.ms': '500',
      },
    });
    kafka = new Kafka({ clientId: 'e2e-txn-clients', brokers: c.bootstrap.split(','), logLevel: logLevel.NOTHING, retry: { retries: 10 } });
    admin = kafka.admin();
    await admin.connect();
  }, 120_000);

  afterAll(async () => {
    for (const p of children) {
      p.proc.kill('SIGCONT');
      p.proc.kill('SIGKILL');
    }
    for (const f of cleanups) await f().catch(() => undefined);
    await admin?.disconnect();
    await c?.stop();
  });

  function python(mode: 'produce' | 'ctp' | 'hang', args: Array<string | number>): PythonClient {
    const p = startPython(mode, args);
    children.push(p);
    return p;
  }

  async function createTopic(topic: string, numPartitions = 1): Promise<void> {
    await admin.createTopics({ topics: [{ topic, numPartitions, replicationFactor: 3 }], waitForLeaders: true });
  }

  it('transactions – librdkafka 2.0.2 (python3-confluent-kafka): committed and aborted transactions, read_committed reads exactly the committed records in order', async () => {
    const topic = 'txn-rdkafka';
    await createTopic(topic);
    const p = python('produce', [c.bootstrap, 'txn-rdkafka-1', topic, RD_TRANSACTIONS, 5, 3]);
    const done = await p.line((l) => 'done' in l, 300_000);
    expect(done, p.stderr().slice(-3000)).toMatchObject({ done: true });
    const committed = done['committed'] as string[];
    expect(committed.length).toBe(RD_TRANSACTIONS * 5 - Math.floor(RD_TRANSACTIONS / 3) * 5);
    expect(valuesOf(await kcatRead(c.bootstrap, topic, 'read_committed'))).toEqual(committed);
    // the aborted records are in the log: read_uncommitted sees every one
    expect((await kcatRead(c.bootstrap, topic, 'read_uncommitted')).length).toBe(RD_TRANSACTIONS * 5);
  }, 360_000);

  it('transactions – librdkafka 2.0.2 consume-transform-produce with send_offsets_to_transaction: each input once in the output, the group at the end', async () => {
    const input = 'txn-rdkafka-in';
    const output = 'txn-rdkafka-out';
    const group = 'txn-rdkafka-ctp';
    const n = 600;
    await createTopic(input, 3);
    await createTopic(output, 3);
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: input, messages: Array.from({ length: n }, (_, i) => ({ key: `k${i}`, value: `v${i}` })) });
    await producer.disconnect();

    const p = python('ctp', [c.bootstrap, 'txn-rdkafka-ctp', input, output, group, n, 4]);
    const done = await p.line((l) => 'done' in l, 300_000);
    expect(done).toMatchObject({ done: true, records: n });
    expect(done['aborted'] as number).toBeGreaterThan(0);

    const out = valuesOf(await kcatRead(c.bootstrap, output, 'read_committed')).sort();
    expect(out).toEqual(Array.from({ length: n }, (_, i) => `out-v${i}`).sort());
    // the aborted transactions' copies are in the log, hidden from read_committed
    expect((await kcatRead(c.bootstrap, output, 'read_uncommitted')).length).toBeGreaterThan(n);
    const offsets = (await admin.fetchOffsets({ groupId: group, topics: [input] }))[0]!.partitions;
    const ends = await admin.fetchTopicOffsets(input);
    expect(offsets.map((o) => [o.partition, o.offset]).sort()).toEqual(ends.map((o) => [o.partition, o.high]).sort());
  }, 360_000);

  it('transactions – @platformatic/kafka: InitProducerId with producer id 0 / epoch 0 for a new transactional id is accepted; commits and aborts read back with read_committed', async () => {
    const topic = 'txn-platformatic';
    await createTopic(topic);
    const wire = new WireLog();
    const onConnect = (ctx: unknown) => {
      const socket = (ctx as { connection?: { socket?: Socket } }).connection?.socket;
      if (socket) wire.tap(socket);
    };
    subscribe('tracing:plt:kafka:connections:connects:end', onConnect);
    const producer = new plt.Producer({
      clientId: 'e2e-txn-platformatic',
      bootstrapBrokers: c.bootstrap.split(','),
      transactionalId: 'txn-platformatic-1',
      idempotent: true,
      serializers: plt.stringSerializers,
      retries: 10,
    });
    cleanups.push(() => producer.close());
    const committed: string[] = [];
    try {
      for (let t = 0; t < 12; t++) {
        const txn = await producer.beginTransaction();
        const values = [0, 1, 2].map((i) => `p${t}-${i}`);
        await txn.send({ messages: values.map((value) => ({ topic, partition: 0, key: `t${t}`, value })) });
        if (t % 4 === 3) await txn.abort();
        else {
          await txn.commit();
          committed.push(...values);
        }
      }
    } finally {
      unsubscribe('tracing:plt:kafka:connections:connects:end', onConnect);
      await producer.close();
    }
    const inits = wire.exchanges.filter((x) => x.api === 'InitProducerId');
    expect(inits.length).toBeGreaterThan(0);
    expect(inits[0]!.request).toMatchObject({ transactionalId: 'txn-platformatic-1', producerId: 0n, producerEpoch: 0 });
    expect(inits.map((x) => (x.response as { errorCode: number } | undefined)?.errorCode).at(-1)).toBe(0);
    expect(valuesOf(await kcatRead(c.bootstrap, topic, 'read_committed'))).toEqual(committed);
    expect((await kcatRead(c.bootstrap, topic, 'read_uncommitted')).length).toBe(36);
  }, 180_000);

  it('transactions – a producer SIGSTOPped inside a transaction: aborted after transaction.timeout.ms, the LSO moves on, read_committed consumers continue; SIGCONTed, its commit is fenced', async () => {
    const topic = 'txn-timeout';
    await createTopic(topic);
    const leader = () => c.leaderOf(topic, 0).then((id) => c.broker(id).address);

    // a read_committed consumer, reading from the start all along
    const seen: string[] = [];
    const consumer = kafka.consumer({ groupId: 'txn-timeout-reader', maxWaitTimeInMs: 200 });
    cleanups.push(() => consumer.disconnect());
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => void seen.push(message.value!.toString()) });

    const hung = python('hang', [c.bootstrap, 'txn-timeout-hung', topic, 3000]);
    await hung.line((l) => l['sent'] === true, 60_000);
    hung.proc.kill('SIGSTOP');
    const stoppedAt = Date.now();
    expect(await latestOffset(await leader(), topic, 0, 'read_uncommitted')).toBe(3n);
    expect(await latestOffset(await leader(), topic, 0, 'read_committed')).toBe(0n);

    // another transactional producer commits behind the hung transaction
    const other = kafka.producer({ transactionalId: 'txn-timeout-other', idempotent: true, maxInFlightRequests: 1 });
    cleanups.push(() => other.disconnect());
    await other.connect();
    const txn = await other.transaction();
    await txn.send({ topic, messages: [{ value: 'after-0' }, { value: 'after-1' }] });
    await txn.commit();

    // the coordinator aborts the hung transaction: an abort marker, the LSO past everything
    await until(async () => (await latestOffset(await leader(), topic, 0, 'read_committed')) === 7n, 'the LSO past the timed-out transaction', 30_000, 100);
    expect(Date.now() - stoppedAt).toBeGreaterThanOrEqual(2500);
    await until(() => seen.length >= 2, 'the read_committed consumer reads on', 30_000);
    expect(seen).toEqual(['after-0', 'after-1']);

    hung.proc.kill('SIGCONT');
    hung.proc.stdin.write('commit\n');
    const end = await hung.line((l) => 'done' in l, 60_000);
    // EndTxn v1 answers INVALID_PRODUCER_EPOCH: librdkafka's fatal "fenced by a newer instance"
    expect({ committed: end['committed'], error: end['error'], fatal: end['fatal'] }).toEqual({ committed: false, error: '_FENCED', fatal: true });

    const txn2 = await other.transaction();
    await txn2.send({ topic, messages: [{ value: 'later' }] });
    await txn2.commit();
    await until(() => seen.length >= 3, 'the later transaction', 30_000);
    expect(seen).toEqual(['after-0', 'after-1', 'later']);
    expect(valuesOf(await kcatRead(c.bootstrap, topic, 'read_committed'))).toEqual(['after-0', 'after-1', 'later']);
  }, 180_000);
});
