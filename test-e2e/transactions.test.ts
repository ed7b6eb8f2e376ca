/**
 * Transactions (KIP-98) with KafkaJS 2.2.4 against 3 brokers (RF=3, min.insync.replicas=2):
 *  - a transactional producer commits 1,000 transactions of 10 records and aborts every 7th; a
 *    read_committed consumer reads exactly the committed records, in order; a read_uncommitted one
 *    reads every record;
 *  - offsets sent with the transaction (sendOffsets → AddOffsetsToTxn + TxnOffsetCommit) move the
 *    group's committed offsets only when the transaction commits;
 *  - zombie fencing: a second producer with the same transactional.id fences the first; the first's
 *    next send fails with Kafka's fencing error and nothing it wrote becomes visible.
 */
import kafkajs from 'kafkajs';
import type { Admin, Consumer, Kafka as KafkaT, Producer } from 'kafkajs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeCluster, TestCluster, until } from './harness.js';

const { Kafka, logLevel } = kafkajs;

const TRANSACTIONS = Number(process.env['SAMSA_E2E_TRANSACTIONS'] ?? 1000);
const PER_TXN = 10;

/** The Kafka error type of a KafkaJS failure (walking its causes), or null. */
function errorType(err: unknown): string | null {
  let e = err as { type?: string; cause?: unknown; originalError?: unknown } | undefined;
  for (let i = 0; e && i < 5; i++) {
    if (e.type) return e.type;
    e = (e.cause ?? e.originalError) as typeof e;
  }
  return null;
}

describeCluster('transactions (3 brokers, KafkaJS)', () => {
  let c: TestCluster;
  let kafka: KafkaT;
  let admin: Admin;
  const consumers: Consumer[] = [];
  const producers: Producer[] = [];

  beforeAll(async () => {
    c = await TestCluster.start({ brokers: 3, overrides: { 'min.insync.replicas': '2', 'transaction.state.log.num.partitions': '5' } });
    kafka = new Kafka({ clientId: 'e2e-txn', brokers: c.bootstrap.split(','), logLevel: logLevel.NOTHING, retry: { retries: 10 } });
    admin = kafka.admin();
    await admin.connect();
  }, 120_000);

  afterAll(async () => {
    for (const x of [...consumers, ...producers]) await x.disconnect().catch(() => undefined);
    await admin?.disconnect();
    await c?.stop();
  });

  function txnProducer(transactionalId: string): Producer {
    const p = kafka.producer({ transactionalId, idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
    producers.push(p);
    return p;
  }

  /** Every record of `topic` as "key:value" strings, read by a fresh group until `expected` have arrived. */
  async function readAll(topic: string, readUncommitted: boolean, expected: number): Promise<string[]> {
    const consumer = kafka.consumer({ groupId: `reader-${topic}-${readUncommitted}`, readUncommitted, maxWaitTimeInMs: 200 });
    consumers.push(consumer);
    const seen: string[] = [];
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        seen.push(`${message.key?.toString()}:${message.value?.toString()}`);
      },
    });
    await until(() => seen.length >= expected, `${expected} records of ${topic} (read_uncommitted=${readUncommitted}); have ${seen.length}`, 120_000);
    // nothing more arrives (a read_committed reader must not see aborted records later either)
    await new Promise((r) => setTimeout(r, 1500));
    await consumer.stop();
    return seen;
  }

  it('transactions – 1,000 transactions of 10 records, every 7th aborted: read_committed reads exactly the committed ones in order, read_uncommitted all', async () => {
    const topic = 'txn-commit-abort';
    await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 3 }], waitForLeaders: true });
    const producer = txnProducer('txn-e2e-1');
    await producer.connect();
    const committed: string[] = [];
    const all: string[] = [];
    for (let t = 0; t < TRANSACTIONS; t++) {
      const txn = await producer.transaction();
      const messages = Array.from({ length: PER_TXN }, (_, i) => ({ key: `t${t}`, value: `r${i}` }));
      await txn.send({ topic, messages });
      for (const m of messages) all.push(`${m.key}:${m.value}`);
      if (t % 7 === 6) {
        await txn.abort();
      } else {
        await txn.commit();
        for (const m of messages) committed.push(`${m.key}:${m.value}`);
      }
    }
    const readCommitted = await readAll(topic, false, committed.length);
    expect(readCommitted.length).toBe(committed.length);
    expect(readCommitted).toEqual(committed);
    const readUncommitted = await readAll(topic, true, all.length);
    expect(readUncommitted).toEqual(all);
  }, 600_000);

  it('transactions – sendOffsets moves the group’s committed offsets only when the transaction commits', async () => {
    const topic = 'txn-offsets';
    const groupId = 'txn-offsets-group';
    await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 3 }], waitForLeaders: true });
    const producer = txnProducer('txn-e2e-offsets');
    await producer.connect();
    const committedOffset = async () => (await admin.fetchOffsets({ groupId, topics: [topic] }))[0]!.partitions[0]!.offset;
    expect(await committedOffset()).toBe('-1');

    const aborted = await producer.transaction();
    await aborted.send({ topic, messages: [{ value: 'a' }] });
    await aborted.sendOffsets({ consumerGroupId: groupId, topics: [{ topic, partitions: [{ partition: 0, offset: '5' }] }] });
    await aborted.abort();
    expect(await committedOffset()).toBe('-1');

    const ok = await producer.transaction();
    await ok.send({ topic, messages: [{ value: 'b' }] });
    await ok.sendOffsets({ consumerGroupId: groupId, topics: [{ topic, partitions: [{ partition: 0, offset: '7' }] }] });
    await ok.commit();
    await until(async () => (await committedOffset()) === '7', 'the committed transaction’s offset 7');
  }, 120_000);

  it('transactions – zombie fencing: a second producer with the same transactional.id fences the first; nothing the first writes afterwards is visible', async () => {
    const topic = 'txn-fencing';
    await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 3 }], waitForLeaders: true });
    const zombie = txnProducer('txn-e2e-zombie');
    await zombie.connect();
    const open = await zombie.transaction();
    await open.send({ topic, messages: [{ value: 'zombie-before' }] });

    // the new instance: InitProducerId bumps the epoch and aborts the zombie's open transaction
    const fresh = txnProducer('txn-e2e-zombie');
    await fresh.connect();
    const t = await fresh.transaction();
    await t.send({ topic, messages: [{ value: 'fresh' }] });
    await t.commit();

    let failure: unknown = null;
    try {
      await open.send({ topic, messages: [{ value: 'zombie-after' }] });
      await open.commit();
    } catch (err) {
      failure = err;
    }
    expect(failure).not.toBeNull();
    // KafkaJS sends Produce v7 / EndTxn v1: Kafka's fencing error for those versions is INVALID_PRODUCER_EPOCH
    expect(['PRODUCER_FENCED', 'INVALID_PRODUCER_EPOCH']).toContain(errorType(failure));
    const seen = await readAll(topic, false, 1);
    expect(seen.map((s) => s.split(':')[1])).toEqual(['fresh']);
  }, 120_000);
});
