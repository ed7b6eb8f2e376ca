/**
 * `samsa transactions` (kafka-transactions.sh, KIP-664) against 3 brokers with KafkaJS 2.2.4:
 *  - a KafkaJS transactional producer with an open transaction: `list` and `describe` show it
 *    Ongoing with its partition at its coordinator, `describe-producers` shows the transaction's
 *    first offset on the leader and on a follower (any replica answers), and @platformatic/kafka's
 *    DescribeProducers v0 codec reads the same from the broker;
 *  - a hanging transaction, made the way Kafka's find-hanging targets (KAFKA-12671): the same
 *    producer id and epoch write a transactional batch to a partition never added to the
 *    transaction with AddPartitionsToTxn (a raw Produce), with a record timestamp 20 minutes old.
 *    The coordinator will never write a marker there: `find-hanging` reports it (and not the
 *    KafkaJS partition, which its coordinator lists), `abort --start-offset` closes it with an ABORT
 *    marker, after which the partition's last stable offset (ListOffsets read_committed) moves past
 *    it; the KafkaJS transaction still commits.
 *  - a hanging transaction left by a marker write the test blocks: the brokers run with the
 *    test-only SAMSA_TEST_REFUSE_TXN_MARKERS=<topic>:1, so the leader refuses the first COMMIT
 *    marker for that topic with UNSUPPORTED_FOR_MESSAGE_FORMAT; the coordinator drops the partition
 *    from the pending markers (Kafka's rule) and completes the commit elsewhere, while the blocked
 *    partition's transaction stays open and its LSO stuck. `find-hanging` reports it, `abort` closes
 *    it, and a read_committed KafkaJS consumer then reads past it.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import kafkajs from 'kafkajs';
import type { Admin, Kafka as KafkaT, Producer, Transaction } from 'kafkajs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { encodeRecordBatch } from '@samsa/protocol';
import { describeCluster, TestCluster, until } from './harness.js';
import { rawRequest } from './clients/wire.js';
import './clients/promise-with-resolvers.js';

const { Kafka, logLevel } = kafkajs;
const { Connection, describeProducersV0 } = await import('@platformatic/kafka');
const exec = promisify(execFile);
const bin = fileURLToPath(new URL('../packages/cli/bin/samsa.js', import.meta.url));

async function samsa(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await exec(process.execPath, [bin, 'transactions', ...args], { timeout: 90_000 });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** The rows of a kafka-transactions.sh table (cells end with a tab) as header → cell records. */
function table(out: string): Array<Record<string, string>> {
  const lines = out.split('\n').filter((l) => l !== '');
  const cells = (l: string) => l.split('\t').map((c) => c.trim());
  const header = cells(lines[0] ?? '');
  return lines.slice(1).map((l) => Object.fromEntries(cells(l).map((c, i) => [header[i]!, c])));
}

describeCluster('samsa transactions against a 3-broker cluster (KafkaJS)', () => {
  let c: TestCluster;
  let kafka: KafkaT;
  let admin: Admin;
  let bs: string[];
  const producers: Producer[] = [];
  const OPEN = 'txn-cli-open';
  const HUNG = 'txn-cli-hung';
  const TXN_ID = 'txn-cli-1';
  const BLOCKED = 'txn-cli-blocked';
  const COMMITTED = 'txn-cli-committed';
  let txn: Transaction;

  beforeAll(async () => {
    c = await TestCluster.start({
      brokers: 3,
      overrides: { 'transaction.state.log.num.partitions': '5' },
      // the leader of BLOCKED's partition refuses the first transaction marker for it
      env: { SAMSA_TEST_REFUSE_TXN_MARKERS: `${BLOCKED}:1` },
    });
    bs = ['--bootstrap-server', c.bootstrap];
    kafka = new Kafka({ clientId: 'e2e-txn-cli', brokers: c.bootstrap.split(','), logLevel: logLevel.NOTHING, retry: { retries: 10 } });
    admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({
      topics: [
        { topic: OPEN, numPartitions: 1, replicationFactor: 3 },
        { topic: HUNG, numPartitions: 1, replicationFactor: 3 },
        { topic: BLOCKED, numPartitions: 1, replicationFactor: 3 },
        { topic: COMMITTED, numPartitions: 1, replicationFactor: 3 },
      ],
      waitForLeaders: true,
    });
  }, 120_000);

  afterAll(async () => {
    for (const p of producers) await p.disconnect().catch(() => undefined);
    await admin?.disconnect();
    await c?.stop();
  });

  async function leaderOf(topic: string): Promise<{ leader: number; followers: number[] }> {
    const md = await admin.fetchTopicMetadata({ topics: [topic] });
    const p = md.topics[0]!.partitions[0]!;
    return { leader: p.leader, followers: p.replicas.filter((r) => r !== p.leader) };
  }

  /** The partition's last stable offset (ListOffsets v2+ read_committed, latest) from its leader. */
  async function lastStableOffset(topic: string): Promise<bigint> {
    const { leader } = await leaderOf(topic);
    const r = await rawRequest(c.brokers[leader]!.address, 2, 5, {
      replicaId: -1,
      isolationLevel: 1,
      topics: [{ name: topic, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n, maxNumOffsets: 1 }] }],
    });
    const p = r.topics[0]!.partitions[0]!;
    expect(p.errorCode).toBe(0);
    return p.offset;
  }

  it('transactions cli – an open KafkaJS transaction: list and describe show it Ongoing with its partition, describe-producers its first offset on leader and follower', async () => {
    // a record before the transaction: it starts at offset 1
    const plain = kafka.producer({ allowAutoTopicCreation: false });
    producers.push(plain);
    await plain.connect();
    await plain.send({ topic: OPEN, acks: -1, messages: [{ key: 'p', value: 'plain' }] });

    const producer = kafka.producer({
      transactionalId: TXN_ID,
      idempotent: true,
      maxInFlightRequests: 1,
      transactionTimeout: 600_000,
      allowAutoTopicCreation: false,
    });
    producers.push(producer);
    await producer.connect();
    txn = await producer.transaction();
    await txn.send({
      topic: OPEN,
      acks: -1,
      messages: [
        { key: 'k', value: '1' },
        { key: 'k', value: '2' },
      ],
    });

    const listed = await samsa(...bs, 'list');
    expect(listed).toMatchObject({ code: 0, stderr: '' });
    expect(listed.stdout.split('\n')[0]).toBe('TransactionalId\tCoordinator\tProducerId\tTransactionState\t');
    const row = table(listed.stdout).find((r) => r['TransactionalId'] === TXN_ID);
    expect(row).toMatchObject({ TransactionState: 'Ongoing' });
    expect([0, 1, 2]).toContain(Number(row!['Coordinator']));

    const described = await samsa(...bs, 'describe', '--transactional-id', TXN_ID);
    expect(described).toMatchObject({ code: 0, stderr: '' });
    const [d] = table(described.stdout);
    expect(d).toMatchObject({
      CoordinatorId: row!['Coordinator'],
      TransactionalId: TXN_ID,
      ProducerId: row!['ProducerId'],
      TransactionState: 'Ongoing',
      TransactionTimeoutMs: '600000',
      TopicPartitions: `${OPEN}-0`,
    });
    expect(Number(d!['TransactionDurationMs'])).toBeGreaterThanOrEqual(0);
    expect(Number(d!['CurrentTransactionStartTimeMs'])).toBeGreaterThan(Date.now() - 120_000);

    const onLeader = await samsa(...bs, 'describe-producers', '--topic', OPEN, '--partition', '0');
    expect(onLeader).toMatchObject({ code: 0, stderr: '' });
    expect(table(onLeader.stdout).find((r) => r['ProducerId'] === d!['ProducerId'])).toMatchObject({
      ProducerEpoch: d!['ProducerEpoch'],
      LatestCoordinatorEpoch: '-1',
      LastSequence: '1',
      CurrentTransactionStartOffset: '1',
    });
    // a follower's replica answers from its own producer state once it has replicated the batch
    const { followers } = await leaderOf(OPEN);
    await until(async () => {
      const r = await samsa(...bs, 'describe-producers', '--topic', OPEN, '--partition', '0', '--broker-id', String(followers[0]));
      return table(r.stdout).find((x) => x['ProducerId'] === d!['ProducerId'])?.['CurrentTransactionStartOffset'] === '1';
    }, `the open transaction on follower ${followers[0]}`);
    expect(await lastStableOffset(OPEN)).toBe(1n);

    // another client decodes the broker's DescribeProducers answer the same way (@platformatic/kafka's v0 codec)
    const { leader } = await leaderOf(OPEN);
    const address = c.brokers[leader]!.address;
    const conn = new Connection('platformatic-describe-producers');
    try {
      await conn.connect(address.slice(0, address.lastIndexOf(':')), Number(address.slice(address.lastIndexOf(':') + 1)));
      const res = await describeProducersV0.api.async(conn, [{ name: OPEN, partitionIndexes: [0] }]);
      const p = res.topics[0]!.partitions[0]!;
      expect(p).toMatchObject({ partitionIndex: 0, errorCode: 0 });
      expect(p.activeProducers.find((x) => x.producerId === BigInt(d!['ProducerId']!))).toMatchObject({
        producerEpoch: Number(d!['ProducerEpoch']),
        lastSequence: 1,
        coordinatorEpoch: -1,
        currentTxnStartOffset: 1n,
      });
    } finally {
      await conn.close();
    }
  });

  it('transactions cli – a transactional batch on a partition never added to the transaction hangs: find-hanging reports it, abort closes it and the LSO moves', async () => {
    const [d] = table((await samsa(...bs, 'describe', '--transactional-id', TXN_ID)).stdout);
    const producerId = BigInt(d!['ProducerId']!);
    const producerEpoch = Number(d!['ProducerEpoch']);
    const plain = producers[0]!;
    await plain.send({ topic: HUNG, acks: -1, messages: [{ key: 'p', value: 'plain' }] }); // offset 0

    // the KafkaJS producer's id and epoch write to HUNG without AddPartitionsToTxn (what a
    // producer whose AddPartitionsToTxn got lost, or a buggy client, leaves behind); its record
    // timestamp says the producer last wrote 20 minutes ago
    const { leader } = await leaderOf(HUNG);
    const records = encodeRecordBatch({
      records: [{ key: 'h', value: 'hanging', timestamp: Date.now() - 20 * 60_000 }],
      producerId,
      producerEpoch,
      baseSequence: 0,
      transactional: true,
    });
    const produced = await rawRequest(c.brokers[leader]!.address, 0, 9, {
      transactionalId: TXN_ID,
      acks: -1,
      timeoutMs: 30_000,
      topicData: [{ name: HUNG, partitionData: [{ index: 0, records }] }],
    });
    expect(produced.responses[0]!.partitionResponses[0]).toMatchObject({ errorCode: 0, baseOffset: 1n });
    expect(await lastStableOffset(HUNG)).toBe(1n);

    // the default max transaction timeout (15 minutes): only the 20-minute-old one is a candidate,
    // and its coordinator's transaction does not include HUNG-0
    const found = await samsa(...bs, 'find-hanging', '--broker-id', String(leader));
    expect(found).toMatchObject({ code: 0, stderr: '' });
    expect(found.stdout.split('\n')[0]).toBe(
      `${'Topic'.padEnd(HUNG.length)}\tPartition\tProducerId\tProducerEpoch\tCoordinatorEpoch\tStartOffset\tLastTimestamp\tDuration(min)\t`,
    );
    const hanging = table(found.stdout);
    expect(hanging).toHaveLength(1);
    expect(hanging[0]).toMatchObject({ Topic: HUNG, Partition: '0', ProducerId: String(producerId), ProducerEpoch: String(producerEpoch), StartOffset: '1' });
    expect(Number(hanging[0]!['Duration(min)'])).toBeGreaterThanOrEqual(20);
    // with no timeout the KafkaJS partition is a candidate too, but its coordinator lists it as ongoing
    const all = await samsa(...bs, 'find-hanging', '--topic', OPEN, '--max-transaction-timeout', '0');
    expect(all).toMatchObject({ code: 0, stderr: '' });
    expect(table(all.stdout)).toEqual([]);

    const aborted = await samsa(...bs, 'abort', '--topic', HUNG, '--partition', '0', '--start-offset', '1');
    expect(aborted).toMatchObject({ code: 0, stdout: '', stderr: '' });
    // record 1 and the ABORT marker at 2: the LSO moves to the log end
    await until(async () => (await lastStableOffset(HUNG)) === 3n, 'the LSO of the aborted partition to reach 3');
    const after = await samsa(...bs, 'describe-producers', '--topic', HUNG, '--partition', '0');
    expect(table(after.stdout).find((r) => r['ProducerId'] === String(producerId))).toMatchObject({ CurrentTransactionStartOffset: 'None' });
    expect(table((await samsa(...bs, 'find-hanging', '--broker-id', String(leader))).stdout)).toEqual([]);
    // an offset with no open transaction
    expect(await samsa(...bs, 'abort', '--topic', HUNG, '--partition', '0', '--start-offset', '1')).toMatchObject({
      code: 1,
      stderr: `Could not find any open transactions starting at offset 1 on partition ${HUNG}-0\n`,
    });

    // the KafkaJS transaction is untouched: it commits, and OPEN's LSO moves past its marker
    await txn.commit();
    await until(async () => (await lastStableOffset(OPEN)) === 4n, 'the LSO of the committed partition to reach 4');
    await until(async () => {
      const [done] = table((await samsa(...bs, 'describe', '--transactional-id', TXN_ID)).stdout);
      return done?.['TransactionState'] === 'CompleteCommit' && done['TopicPartitions'] === '';
    }, 'the transaction to be CompleteCommit');
  });
  it('transactions cli – a commit marker the leader refuses leaves the partition hanging: find-hanging reports it, abort closes it and read_committed reads on', async () => {
    const producer = kafka.producer({ transactionalId: 'txn-cli-2', idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
    producers.push(producer);
    await producer.connect();
    const t = await producer.transaction();
    await t.send({ topic: BLOCKED, acks: -1, messages: [{ value: 'b1' }, { value: 'b2' }] }); // offsets 0, 1
    await t.send({ topic: COMMITTED, acks: -1, messages: [{ value: 'c1' }] });
    await t.commit();

    // the coordinator completes the commit: COMMITTED got its marker, BLOCKED's was refused and dropped
    await until(async () => {
      const [d] = table((await samsa(...bs, 'describe', '--transactional-id', 'txn-cli-2')).stdout);
      return d?.['TransactionState'] === 'CompleteCommit' && d['TopicPartitions'] === '';
    }, 'txn-cli-2 to be CompleteCommit');
    const [d] = table((await samsa(...bs, 'describe', '--transactional-id', 'txn-cli-2')).stdout);
    expect(await lastStableOffset(COMMITTED)).toBe(2n);
    // a record after the transaction: read_committed cannot get to it while the transaction hangs
    await producers[0]!.send({ topic: BLOCKED, acks: -1, messages: [{ value: 'after' }] }); // offset 2
    expect(await lastStableOffset(BLOCKED)).toBe(0n);

    // opened just now: not a candidate under the default 15-minute max transaction timeout
    const { leader } = await leaderOf(BLOCKED);
    expect(table((await samsa(...bs, 'find-hanging', '--broker-id', String(leader))).stdout).filter((r) => r['Topic'] === BLOCKED)).toEqual([]);
    const found = await samsa(...bs, 'find-hanging', '--topic', BLOCKED, '--max-transaction-timeout', '0');
    expect(found).toMatchObject({ code: 0, stderr: '' });
    expect(table(found.stdout)).toEqual([
      expect.objectContaining({ Topic: BLOCKED, Partition: '0', ProducerId: d!['ProducerId'], ProducerEpoch: d!['ProducerEpoch'], StartOffset: '0' }),
    ]);

    expect(await samsa(...bs, 'abort', '--topic', BLOCKED, '--partition', '0', '--start-offset', '0')).toMatchObject({ code: 0, stdout: '', stderr: '' });
    // b1, b2, after and the ABORT marker at 3: the LSO moves to the log end
    await until(async () => (await lastStableOffset(BLOCKED)) === 4n, 'the LSO of the blocked partition to reach 4');
    expect(table((await samsa(...bs, 'find-hanging', '--topic', BLOCKED, '--max-transaction-timeout', '0')).stdout)).toEqual([]);

    // a read_committed KafkaJS consumer reads past the aborted records
    const consumer = kafka.consumer({ groupId: 'txn-cli-blocked-reader', readUncommitted: false });
    const seen: string[] = [];
    try {
      await consumer.connect();
      await consumer.subscribe({ topics: [BLOCKED, COMMITTED], fromBeginning: true });
      await consumer.run({
        eachMessage: async ({ topic, message }) => {
          seen.push(`${topic}:${message.value?.toString()}`);
        },
      });
      await until(async () => seen.length >= 2, 'the read_committed consumer to read both topics');
    } finally {
      await consumer.disconnect();
    }
    expect(seen.sort()).toEqual([`${BLOCKED}:after`, `${COMMITTED}:c1`]);
  });
});
