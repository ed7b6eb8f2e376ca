/**
 * Transactions with our own client (@samsa/client) against 3 brokers (RF=3, min.insync.replicas=2):
 *  - our transactional producer commits and aborts (every 7th) transactions over 3 partitions; our
 *    read_committed consumer reads exactly the committed records, in order per partition, and a
 *    KafkaJS read_committed consumer reads the same; read_uncommitted reads everything;
 *  - consume-transform-produce with our consumer and producer (sendOffsetsToTransaction with the
 *    consumer's groupMetadata(), some transactions aborted and their input re-read): every input
 *    record is in the output exactly once, and the group's offsets are at the end of the input;
 *  - zombie fencing: a second producer with the same transactional.id fences the first (PRODUCER_FENCED);
 *  - `samsa verify --transactional --duration 30s` reports 0 violations.
 */
import { spawn } from 'node:child_process';
import kafkajs from 'kafkajs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Consumer, KafkaError, Producer, stringDeserializer, stringSerializer, type TopicPartition } from '@samsa/client';
import { SAMSA_BIN } from '@samsa/local-cluster';
import { topicPartitionKey } from '@samsa/protocol';
import { newTopicId } from '@samsa/zk-paths';
import { describeCluster, TestCluster, until } from './harness.js';

const { Kafka, logLevel } = kafkajs;

const TRANSACTIONS = Number(process.env['SAMSA_E2E_CLIENT_TRANSACTIONS'] ?? 200);
const CTP_RECORDS = Number(process.env['SAMSA_E2E_CLIENT_CTP_RECORDS'] ?? 3000);

function samsa(args: string[], timeoutMs = 240_000): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [SAMSA_BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (c: Buffer) => (out += c.toString()));
    p.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const timer = setTimeout(() => p.kill('SIGKILL'), timeoutMs);
    p.on('error', reject);
    p.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

describeCluster('client transactions (3 brokers, @samsa/client)', () => {
  let c: TestCluster;
  const cleanups: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    c = await TestCluster.start({
      brokers: 3,
      overrides: { 'min.insync.replicas': '2', 'transaction.state.log.num.partitions': '5', 'group.initial.rebalance.delay.ms': '300' },
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

  function txnProducer(transactionalId: string): Producer<string | null, string | null> {
    const p = new Producer<string | null, string | null>({
      'bootstrap.servers': c.bootstrap,
      'transactional.id': transactionalId,
      'linger.ms': 5,
      'key.serializer': stringSerializer,
      'value.serializer': stringSerializer,
    } as never);
    cleanups.push(() => p.close({ timeoutMs: 2000 }));
    return p;
  }

  function consumer(extra: Record<string, string | number | boolean | null> = {}): Consumer<string | null, string | null> {
    const cons = new Consumer<string | null, string | null>({
      'bootstrap.servers': c.bootstrap,
      'auto.offset.reset': 'earliest',
      'heartbeat.interval.ms': 300,
      'session.timeout.ms': 10_000,
      'key.deserializer': stringDeserializer,
      'value.deserializer': stringDeserializer,
      ...extra,
    } as never);
    cleanups.push(() => cons.close({ timeoutMs: 2000 }));
    return cons;
  }

  /** Every record of the partitions (manual assignment) as "partition:value", once `expected` arrived and nothing more came for a second. */
  async function readOurs(partitions: TopicPartition[], isolation: 'read_committed' | 'read_uncommitted', expected: number): Promise<string[]> {
    const cons = consumer({ 'group.id': null, 'isolation.level': isolation, 'fetch.max.wait.ms': 100 });
    cons.assign(partitions);
    cons.seekToBeginning(partitions);
    const seen: string[] = [];
    await until(
      async () => {
        for (const r of await cons.poll(200)) seen.push(`${r.partition}:${r.value}`);
        return seen.length >= expected;
      },
      `${expected} records (${isolation}); have ${seen.length}`,
      120_000,
    );
    const settle = Date.now() + 1000;
    while (Date.now() < settle) for (const r of await cons.poll(100)) seen.push(`${r.partition}:${r.value}`);
    await cons.close();
    return seen;
  }

  async function readKafkaJs(topic: string, expected: number): Promise<string[]> {
    const kafka = new Kafka({ clientId: 'e2e-client-txn', brokers: c.bootstrap.split(','), logLevel: logLevel.NOTHING });
    const kc = kafka.consumer({ groupId: `kafkajs-${topic}`, readUncommitted: false, maxWaitTimeInMs: 200 });
    cleanups.push(() => kc.disconnect());
    const seen: string[] = [];
    await kc.connect();
    await kc.subscribe({ topics: [topic], fromBeginning: true });
    await kc.run({
      eachMessage: async ({ partition, message }) => {
        seen.push(`${partition}:${message.value?.toString()}`);
      },
    });
    await until(() => seen.length >= expected, `KafkaJS read ${expected} of ${topic}; have ${seen.length}`, 120_000);
    await new Promise((r) => setTimeout(r, 1500));
    await kc.stop();
    return seen;
  }

  const byPartition = (xs: string[]) => {
    const m = new Map<string, string[]>();
    for (const x of xs) {
      const p = x.split(':')[0]!;
      m.set(p, [...(m.get(p) ?? []), x]);
    }
    return [...m].sort();
  };

  it('client transactions – our producer commits and aborts every 7th transaction; our read_committed consumer and KafkaJS read exactly the committed records', async () => {
    const topic = 'client-txn';
    const partitions = await createTopic(topic, 3);
    const p = txnProducer('client-txn-1');
    await p.initTransactions();
    const committed: string[] = [];
    const all: string[] = [];
    for (let t = 0; t < TRANSACTIONS; t++) {
      p.beginTransaction();
      const sends = Array.from({ length: 5 }, (_, i) => p.send({ topic, partition: (t + i) % 3, key: `t${t}`, value: `t${t}-r${i}` }));
      const metas = await Promise.all(sends);
      const records = metas.map((m, i) => `${m.partition}:t${t}-r${i}`);
      all.push(...records);
      if (t % 7 === 6) await p.abortTransaction();
      else {
        await p.commitTransaction();
        committed.push(...records);
      }
    }
    const ours = await readOurs(partitions, 'read_committed', committed.length);
    expect(ours.length).toBe(committed.length);
    // in order per partition
    expect(byPartition(ours)).toEqual(byPartition(committed));
    const kjs = await readKafkaJs(topic, committed.length);
    expect(byPartition(kjs)).toEqual(byPartition(committed));
    const uncommitted = await readOurs(partitions, 'read_uncommitted', all.length);
    expect(byPartition(uncommitted)).toEqual(byPartition(all));
  }, 600_000);

  it('client transactions – consume-transform-produce with sendOffsetsToTransaction: every input record in the output exactly once, some transactions aborted and re-done', async () => {
    const inPartitions = await createTopic('ctp-in', 3);
    const outPartitions = await createTopic('ctp-out', 3);
    const plain = new Producer<string | null, string | null>({
      'bootstrap.servers': c.bootstrap,
      'linger.ms': 5,
      'key.serializer': stringSerializer,
      'value.serializer': stringSerializer,
    } as never);
    await Promise.all(Array.from({ length: CTP_RECORDS }, (_, i) => plain.send({ topic: 'ctp-in', key: `k${i}`, value: `in-${i}` })));
    await plain.close();

    const cons = consumer({ 'group.id': 'ctp-group', 'enable.auto.commit': false, 'isolation.level': 'read_committed', 'max.poll.records': 200 });
    cons.subscribe(['ctp-in']);
    const p = txnProducer('ctp-1');
    await p.initTransactions();
    const done = new Set<string>();
    let txn = 0;
    let aborted = 0;
    const deadline = Date.now() + 240_000;
    while (done.size < CTP_RECORDS) {
      if (Date.now() > deadline) throw new Error(`consume-transform-produce stuck at ${done.size} of ${CTP_RECORDS}`);
      const records = await cons.poll(500);
      if (records.length === 0) continue;
      p.beginTransaction();
      const sends = records.map((r) => p.send({ topic: 'ctp-out', key: r.key, value: `${r.value}-out` }));
      const first = new Map<string, { tp: TopicPartition; offset: bigint }>();
      const next = new Map<string, { topic: string; partition: number; offset: bigint }>();
      for (const r of records) {
        const k = topicPartitionKey(r.topic, r.partition);
        if (!first.has(k)) first.set(k, { tp: { topic: r.topic, partition: r.partition }, offset: r.offset });
        next.set(k, { topic: r.topic, partition: r.partition, offset: r.offset + 1n });
      }
      await p.sendOffsetsToTransaction([...next.values()], cons.groupMetadata());
      await Promise.all(sends);
      if (++txn % 5 === 0) {
        // abort: nothing of it becomes visible, the input is read again from the transaction's first offsets
        await p.abortTransaction();
        aborted++;
        for (const f of first.values()) cons.seek(f.tp, f.offset);
        continue;
      }
      await p.commitTransaction();
      for (const r of records) done.add(r.value!);
    }
    expect(aborted).toBeGreaterThan(0);
    const out = await readOurs(outPartitions, 'read_committed', CTP_RECORDS);
    const values = out.map((x) => x.split(':')[1]!).sort();
    expect(values).toEqual(Array.from({ length: CTP_RECORDS }, (_, i) => `in-${i}-out`).sort());
    // the group's committed offsets are the ends of the input partitions
    const committed = await cons.committed(inPartitions);
    const ends = await cons.endOffsets(inPartitions);
    for (const tp of inPartitions) expect(committed.get(topicPartitionKey(tp))?.offset).toBe(ends.get(topicPartitionKey(tp)));
  }, 600_000);

  it('client transactions – zombie fencing: a second producer with the same transactional.id fences the first (its abort fails with PRODUCER_FENCED, fatal); nothing the first writes afterwards is visible', async () => {
    const topic = 'client-txn-fencing';
    const partitions = await createTopic(topic, 1);
    const zombie = txnProducer('client-zombie');
    await zombie.initTransactions();
    zombie.beginTransaction();
    await zombie.send({ topic, partition: 0, value: 'zombie-before' });

    const fresh = txnProducer('client-zombie');
    await fresh.initTransactions();
    fresh.beginTransaction();
    await fresh.send({ topic, partition: 0, value: 'fresh' });
    await fresh.commitTransaction();

    let failure: unknown;
    try {
      await zombie.send({ topic, partition: 0, value: 'zombie-after' });
      await zombie.commitTransaction();
    } catch (err) {
      failure = err;
    }
    // Kafka (KIP-588): the partition leader refuses the old epoch (INVALID_PRODUCER_EPOCH, abortable);
    // the abort then hears PRODUCER_FENCED from the coordinator, which is fatal
    expect(failure).toBeInstanceOf(KafkaError);
    expect(['INVALID_PRODUCER_EPOCH', 'PRODUCER_FENCED']).toContain((failure as KafkaError).errorName);
    const abort = await zombie.abortTransaction().then(
      () => 'aborted',
      (e: KafkaError) => e.errorName,
    );
    expect(abort).toBe('PRODUCER_FENCED');
    expect(zombie.transactionState).toBe('FATAL_ERROR');
    expect(await readOurs(partitions, 'read_committed', 1)).toEqual(['0:fresh']);
  }, 120_000);

  it('client transactions – samsa verify --transactional --duration 30s reports 0 violations', async () => {
    const r = await samsa([
      'verify',
      '--bootstrap-server',
      c.bootstrap,
      '--topic',
      'verify-txn',
      '--transactional',
      '--transaction-size',
      '10',
      '--abort-every',
      '4',
      '--duration',
      '30s',
    ]);
    process.stdout.write(r.out);
    expect(r.out).toMatch(/aborted records read\s+0\n/);
    expect(r.out).toMatch(/partially visible transactions\s+0\n/);
    expect(r.out).toMatch(/committed records missing\s+0\n/);
    expect(r.out).toMatch(/transactions\s+\d+ \(\d+ committed, [1-9]\d* aborted/);
    expect(r.out).toContain('OK: 0 violations');
    expect(r.code).toBe(0);
  }, 300_000);
});
