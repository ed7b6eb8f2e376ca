/**
 * Transactions under kill -9, against 3 brokers (min.insync.replicas=2, __transaction_state with 5
 * partitions), with KafkaJS 2.2.4 and kcat (read_committed) as the reader:
 *  - recovery: the only replica of a partition holding committed and aborted transactions and two
 *    open ones is SIGKILLed, and loses its `.txnindex` files, producer state snapshots and recovery
 *    point checkpoint while down; after its restart (every segment recovered, indexes and producer
 *    state rebuilt from the log) read_committed (kcat) answers the same records at the same LSO; then
 *    one open transaction commits and the coordinator aborts the other on its timeout, and
 *    read_committed shows exactly the committed records. Once with the transactions coordinated
 *    elsewhere, once by the killed broker (the coordinator fails over with them Ongoing);
 *  - offsets sent with transactions (TxnOffsetCommit) across two group coordinator SIGKILLs: a
 *    pending one stays invisible and completes by its marker, committed ones are reloaded, an aborted
 *    one last in the log never appears;
 *  - librdkafka 2.0.2 (python3-confluent-kafka) consume-transform-produce with
 *    send_offsets_to_transaction over SAMSA_E2E_RD_CTP_RECORDS records (default 5,000, batches of
 *    up to 50, every 10th transaction aborted and redone), the same two brokers SIGKILLed: each input
 *    record exactly once in the read_committed output;
 *  - KafkaJS consume-transform-produce (eachBatch + producer.transaction() + sendOffsets) over
 *    SAMSA_E2E_CTP_RECORDS input records (default 100,000) while the test SIGKILLs the transaction
 *    coordinator's broker and then the leader of an output partition (each restarted): the output
 *    read with read_committed holds each input record exactly once.
 */
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import kafkajs from 'kafkajs';
import type { Admin, Consumer, EachBatchPayload, Kafka as KafkaT, Producer } from 'kafkajs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newTopicId } from '@samsa/zk-paths';
import { describeCluster, type Broker, TestCluster, until } from './harness.js';
import { findTransactionCoordinator, kcatRead, latestOffset, startPython, transactionStatePartition, valuesOf, type PythonClient } from './clients/txn.js';

const { Kafka, logLevel } = kafkajs;

const CTP_RECORDS = Number(process.env['SAMSA_E2E_CTP_RECORDS'] ?? 100_000);
const TXN_STATE_PARTITIONS = 5;
const RD_CTP_RECORDS = Number(process.env['SAMSA_E2E_RD_CTP_RECORDS'] ?? 5000);

/** broker.log lines (pino JSON) appended since byte `from`. */
async function logLinesSince(b: Broker, from: number): Promise<Array<Record<string, unknown>>> {
  const text = (await readFile(join(b.o.dir, 'broker.log'))).subarray(from).toString();
  return text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
}

describeCluster(
  'transactions under kill -9 (3 brokers)',
  () => {
    let c: TestCluster;
    let kafka: KafkaT;
    let admin: Admin;
    const clients: Array<Producer | Consumer> = [];
    const children: PythonClient[] = [];

    beforeAll(async () => {
      c = await TestCluster.start({
        brokers: 3,
        overrides: {
          'min.insync.replicas': '2',
          'transaction.state.log.num.partitions': String(TXN_STATE_PARTITIONS),
          'transaction.abort.timed.out.transaction.cleanup.interval.ms': '500',
          'auto.leader.rebalance.enable': 'false',
        },
      });
      kafka = new Kafka({
        clientId: 'e2e-txn-faults',
        brokers: c.bootstrap.split(','),
        logLevel: logLevel.NOTHING,
        retry: { retries: 12, initialRetryTime: 200, maxRetryTime: 3000 },
      });
      admin = kafka.admin();
      await admin.connect();
    }, 120_000);

    afterAll(async () => {
      for (const p of children) p.proc.kill('SIGKILL');
      for (const x of clients) await x.disconnect().catch(() => undefined);
      await admin?.disconnect();
      await c?.stop();
    });

    function txnProducer(transactionalId: string, transactionTimeout = 60_000): Producer {
      const p = kafka.producer({ transactionalId, idempotent: true, maxInFlightRequests: 1, transactionTimeout, allowAutoTopicCreation: false });
      clients.push(p);
      return p;
    }

    /** The broker leading the __transaction_state partition of `transactionalId`. */
    async function coordinatorOf(transactionalId: string): Promise<number> {
      const id = await findTransactionCoordinator(c.brokers[0]!.address, transactionalId);
      // FindCoordinator names the leader of the id's __transaction_state partition
      expect(await c.leaderOf('__transaction_state', transactionStatePartition(transactionalId, TXN_STATE_PARTITIONS))).toBe(id);
      return id;
    }

    /** SIGKILL broker `id`, wait for ZooKeeper to forget it, start it again; returns where its broker.log was. */
    async function killAndRestart(id: number, whileDown?: () => Promise<void>): Promise<number> {
      const b = c.broker(id);
      await b.kill();
      await until(async () => !(await c.admin.getBrokerIds()).includes(id), `broker ${id}'s registration to expire`, 30_000, 200);
      await whileDown?.();
      const from = (await stat(join(b.o.dir, 'broker.log')).catch(() => ({ size: 0 }))).size;
      await c.startBroker(id);
      await until(async () => (await c.admin.getBrokerIds()).includes(id), `broker ${id} registered again`, 30_000, 100);
      return from;
    }

    // the partition's only replica: a broker coordinating none of the transactional ids, or the one
    // coordinating both open transactions (their coordinator fails over and loads them Ongoing)
    const recoveryCases = [
      { name: 'its coordinators elsewhere', ids: ['txn-recovery-a', 'txn-recovery-b', 'txn-recovery-timeout'], coordinating: false },
      // txn-rec2-b and txn-rec2-b3 share __transaction_state partition 2
      { name: 'also coordinating its open transactions', ids: ['txn-rec2-a', 'txn-rec2-b', 'txn-rec2-b3'], coordinating: true },
    ] as const;
    for (const rc of recoveryCases)
      it(`transactions – kill -9 of a partition leader with committed, aborted and open transactions (${rc.name}): after recovery read_committed answers the same records; the open ones then commit and time out`, async () => {
        const topic = `txn-recovery-${rc.coordinating ? 'coordinating' : 'plain'}`;
        const a = txnProducer(rc.ids[0]);
        const b = txnProducer(rc.ids[1]);
        const t = txnProducer(rc.ids[2], 8000);
        await Promise.all([a.connect(), b.connect(), t.connect()]);
        const coordinators: number[] = [];
        for (const id of rc.ids) coordinators.push(await coordinatorOf(id));
        let leaderId: number;
        if (rc.coordinating) {
          expect(coordinators[1]).toBe(coordinators[2]);
          leaderId = coordinators[1]!;
        } else {
          const free = [0, 1, 2].find((id) => !coordinators.includes(id));
          expect(free, `a broker coordinating none of ${rc.ids.join(', ')} (coordinators ${coordinators.join(', ')})`).toBeDefined();
          leaderId = free!;
        }
        // small segments: several .txnindex files
        await c.admin.createTopic(topic, newTopicId(), new Map([[0, [leaderId]]]), { 'min.insync.replicas': '1', 'segment.bytes': '2048' });
        await c.waitForLeaders(topic, 1);
        const leader = c.broker(leaderId);

        const committed: string[] = [];
        const runA = async (from: number, to: number) => {
          for (let i = from; i < to; i++) {
            const txn = await a.transaction();
            const values = Array.from({ length: 8 }, (_, r) => `a${i}-${r}`);
            await txn.send({ topic, messages: values.map((value) => ({ key: `a${i}`, value })) });
            if (i % 3 === 2) await txn.abort();
            else {
              await txn.commit();
              committed.push(...values);
            }
          }
        };
        await runA(0, 15);
        const openB = await b.transaction();
        await openB.send({ topic, messages: [0, 1, 2].map((r) => ({ key: 'b', value: `b-${r}` })) });
        await runA(15, 24);
        const openT = await t.transaction();
        await openT.send({ topic, messages: [0, 1].map((r) => ({ key: 't', value: `t-${r}` })) });
        await runA(24, 30);

        const before = {
          readCommitted: await kcatRead(c.bootstrap, topic, 'read_committed'),
          lso: await latestOffset(leader.address, topic, 0, 'read_committed'),
          hw: await latestOffset(leader.address, topic, 0, 'read_uncommitted'),
        };
        // the LSO is held at the first offset of b's open transaction
        const all = await kcatRead(c.bootstrap, topic, 'read_uncommitted');
        expect(before.hw).toBe(BigInt(all.length + 30)); // the records and a's 30 markers
        const bFirst = all.find((l) => l.endsWith(' b-0'))!.split(' ')[1]!;
        expect(before.lso).toBe(BigInt(bFirst));
        expect(valuesOf(before.readCommitted)).toEqual(committed.slice(0, 10 * 8));

        // while it is down, lose what recovery must rebuild from the log: the .txnindex files, the
        // producer state snapshots, and the recovery point checkpoint (every segment is recovered)
        const dir = join(leader.o.dir, 'logs', `${topic}-0`);
        let segmentsAtKill = 0;
        const logFrom = await killAndRestart(leaderId, async () => {
          segmentsAtKill = (await readdir(dir)).filter((f) => f.endsWith('.log')).length;
          const lost = (await readdir(dir)).filter((f) => f.endsWith('.txnindex') || f.endsWith('.snapshot'));
          expect(lost.filter((f) => f.endsWith('.txnindex')).length).toBeGreaterThan(1);
          for (const f of lost) await rm(join(dir, f));
          await rm(join(leader.o.dir, 'logs', 'recovery-point-offset-checkpoint'), { force: true });
        });
        await until(async () => (await c.leaderOf(topic, 0)) === leaderId, 'the restarted broker leads its partition again');
        const lso = await until(() => latestOffset(leader.address, topic, 0, 'read_committed').catch(() => null), 'the partition served again');
        const after = {
          readCommitted: await kcatRead(c.bootstrap, topic, 'read_committed'),
          lso,
          hw: await latestOffset(leader.address, topic, 0, 'read_uncommitted'),
        };
        const lines = await logLinesSince(leader, logFrom);
        expect(lines.find((l) => l['msg'] === 'loaded logs in log dir')?.['hadCleanShutdown']).toBe(false);
        const recovered = lines.filter((l) => l['msg'] === 'recovering unflushed segment' && String(l['segment']).includes(`${topic}-0/`));
        expect(recovered.length).toBe(segmentsAtKill);
        expect({ readCommitted: after.readCommitted, lso: after.lso }).toEqual({ readCommitted: before.readCommitted, lso: before.lso });
        // t's abort marker may have landed meanwhile (t times out after 8 s)
        expect(after.hw - before.hw >= 0n && after.hw - before.hw <= 1n, `high watermark ${before.hw} → ${after.hw}`).toBe(true);
        const txnIndexes = (await readdir(dir)).filter((f) => f.endsWith('.txnindex'));
        const sizes = await Promise.all(txnIndexes.map(async (f) => (await stat(join(dir, f))).size));
        expect(sizes.filter((s) => s > 0).length, `non-empty .txnindex files in ${dir}`).toBeGreaterThan(1);

        // b commits; t's transaction times out and the coordinator aborts it
        await openB.commit();
        await until(
          async () => (await latestOffset(leader.address, topic, 0, 'read_committed')) === (await latestOffset(leader.address, topic, 0, 'read_uncommitted')),
          'the LSO up to the high watermark',
          60_000,
          200,
        );
        const allAfter = await kcatRead(c.bootstrap, topic, 'read_uncommitted');
        const visible = new Set([...committed, 'b-0', 'b-1', 'b-2']);
        const expected = valuesOf(allAfter).filter((v) => visible.has(v));
        expect(expected.length).toBe(committed.length + 3);
        expect(valuesOf(await kcatRead(c.bootstrap, topic, 'read_committed'))).toEqual(expected);
        await expect(openT.commit()).rejects.toThrow();
      }, 240_000);

    it('transactions – offsets sent with transactions across group coordinator failovers: pending ones stay invisible and complete by the marker, committed ones reload, aborted ones never appear', async () => {
      const topic = 'txn-gc';
      const groupId = 'txn-gc-group';
      await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 3 }], waitForLeaders: true });
      const producer = txnProducer('txn-gc-1');
      await producer.connect();
      const committedOffset = async () => (await admin.fetchOffsets({ groupId, topics: [topic] }))[0]!.partitions[0]!.offset;
      const offsetsIs = (offset: string) =>
        until(async () => (await committedOffset().catch(() => null)) === offset, `the group's offset at ${offset}`, 60_000, 100);
      const txnWithOffset = async (offset: number) => {
        const txn = await producer.transaction();
        await txn.send({ topic, messages: [{ value: `o${offset}` }] });
        await txn.sendOffsets({ consumerGroupId: groupId, topics: [{ topic, partitions: [{ partition: 0, offset: String(offset) }] }] });
        return txn;
      };

      await (await txnWithOffset(3)).commit();
      await offsetsIs('3');
      await (await txnWithOffset(5)).abort();
      const open = await txnWithOffset(9);

      // the group coordinator dies with offset 9 pending: its successor loads 3, and 9 once the marker arrives
      const first = await c.coordinatorOf(groupId);
      await killAndRestart(first);
      await offsetsIs('3');
      await open.commit();
      await offsetsIs('9');

      // an aborted commit last in the log, then the coordinator dies again: reloaded, 9 stands
      await (await txnWithOffset(20)).abort();
      await offsetsIs('9');
      const second = await c.coordinatorOf(groupId);
      await killAndRestart(second);
      await offsetsIs('9');
      await new Promise((r) => setTimeout(r, 500));
      expect(await committedOffset()).toBe('9');
    }, 240_000);

    it('transactions – librdkafka 2.0.2 consume-transform-produce while the coordinator’s broker and then an output partition’s leader are SIGKILLed: each input record exactly once in the read_committed output', async () => {
      const input = 'txn-rd-ctp-in';
      const output = 'txn-rd-ctp-out';
      const transactionalId = 'txn-rd-ctp-1';
      const n = RD_CTP_RECORDS;
      await admin.createTopics({
        topics: [
          { topic: input, numPartitions: 3, replicationFactor: 3 },
          { topic: output, numPartitions: 3, replicationFactor: 3 },
        ],
        waitForLeaders: true,
      });
      const loader = kafka.producer();
      clients.push(loader);
      await loader.connect();
      await loader.send({ topic: input, acks: -1, messages: Array.from({ length: n }, (_, i) => ({ key: `k${i}`, value: `${i}` })) });
      await loader.disconnect();

      const p = startPython('ctp', [c.bootstrap, transactionalId, input, output, 'txn-rd-ctp', n, 10]);
      children.push(p);
      const progress = (): number => Math.max(0, ...p.lines.map((l) => Number(l['progress'] ?? 0)));
      await p.line((l) => Number(l['progress'] ?? 0) >= n / 3, 180_000);
      const coordinator = await coordinatorOf(transactionalId);
      await killAndRestart(coordinator);
      await until(() => progress() >= (2 * n) / 3 || p.lines.some((l) => 'done' in l), `two thirds processed (${progress()})`, 180_000, 50);
      const outputLeader = await c.leaderOf(output, 0);
      await killAndRestart(outputLeader);
      const done = await p.line((l) => 'done' in l, 180_000);
      expect(done, p.stderr().slice(-3000)).toMatchObject({ done: true, records: n });
      console.log(
        `librdkafka consume-transform-produce: ${JSON.stringify(done)}; killed broker ${coordinator} (coordinator) then ${outputLeader} (leader of ${output}-0)`,
      );

      const out = valuesOf(await kcatRead(c.bootstrap, output, 'read_committed')).sort();
      expect(out).toEqual(Array.from({ length: n }, (_, i) => `out-${i}`).sort());
    }, 400_000);

    it(`transactions – KafkaJS consume-transform-produce of ${CTP_RECORDS} records while the coordinator's broker and then an output partition's leader are SIGKILLed: each input record exactly once in the read_committed output`, async () => {
      const input = 'txn-ctp-in';
      const output = 'txn-ctp-out';
      const groupId = 'txn-ctp';
      const transactionalId = 'txn-ctp-1';
      const partitions = 6;
      await admin.createTopics({
        topics: [
          { topic: input, numPartitions: partitions, replicationFactor: 3 },
          { topic: output, numPartitions: partitions, replicationFactor: 3 },
        ],
        waitForLeaders: true,
      });
      const loader = kafka.producer();
      clients.push(loader);
      await loader.connect();
      for (let i = 0; i < CTP_RECORDS; i += 1200) {
        const n = Math.min(1200, CTP_RECORDS - i);
        await loader.send({ topic: input, acks: -1, messages: Array.from({ length: n }, (_, j) => ({ key: `k${i + j}`, value: `${i + j}` })) });
      }
      await loader.disconnect();

      let producer = txnProducer(transactionalId);
      await producer.connect();
      let processed = 0;
      let transactions = 0;
      let failures = 0;
      let committedAfterAll = 0;
      const consumer = kafka.consumer({ groupId, maxBytesPerPartition: 8 * 1024, maxWaitTimeInMs: 200, sessionTimeout: 30_000 });
      clients.push(consumer);

      /** After a failed transaction: a new producer (InitProducerId completes or aborts the old transaction); true if the batch was committed after all. */
      const recover = async (partition: number, next: string): Promise<boolean> => {
        failures++;
        await producer.disconnect().catch(() => undefined);
        producer = txnProducer(transactionalId);
        await until(
          () =>
            producer.connect().then(
              () => true,
              () => false,
            ),
          'a new transactional producer',
          120_000,
          500,
        );
        // the producer's first transaction() initialises it (InitProducerId), after the old transaction completed
        const probe = await producer.transaction();
        await probe.abort();
        const committed = (await admin.fetchOffsets({ groupId, topics: [input] }))[0]!.partitions.find((p) => p.partition === partition)!.offset;
        return BigInt(committed) >= BigInt(next);
      };

      const eachBatch = async ({ batch, resolveOffset, heartbeat }: EachBatchPayload): Promise<void> => {
        if (batch.messages.length === 0) return;
        const next = (BigInt(batch.lastOffset()) + 1n).toString();
        for (let attempt = 0; ; attempt++) {
          try {
            const txn = await producer.transaction();
            try {
              await txn.send({ topic: output, messages: batch.messages.map((m) => ({ key: m.key, value: `out-${m.value!.toString()}` })) });
              await txn.sendOffsets({ consumerGroupId: groupId, topics: [{ topic: input, partitions: [{ partition: batch.partition, offset: next }] }] });
              await txn.commit();
            } catch (err) {
              await txn.abort().catch(() => undefined);
              throw err;
            }
            break;
          } catch (err) {
            if (attempt >= 20) throw new Error(`partition ${batch.partition} at ${batch.firstOffset()}: ${attempt} attempts failed`, { cause: err });
            if (await recover(batch.partition, next)) {
              committedAfterAll++;
              break;
            }
          }
        }
        transactions++;
        processed += batch.messages.length;
        resolveOffset(batch.lastOffset());
        await heartbeat();
      };
      await consumer.connect();
      await consumer.subscribe({ topics: [input], fromBeginning: true });
      const started = Date.now();
      await consumer.run({ eachBatchAutoResolve: false, autoCommit: false, eachBatch });

      // kill -9 the transaction coordinator's broker a third of the way, an output partition's leader at two thirds
      await until(() => processed >= CTP_RECORDS / 3, `a third of the input processed (${processed})`, 180_000, 50);
      const coordinator = await coordinatorOf(transactionalId);
      await killAndRestart(coordinator);
      await until(() => processed >= (2 * CTP_RECORDS) / 3, `two thirds of the input processed (${processed})`, 180_000, 50);
      const outputLeader = await c.leaderOf(output, 0);
      await killAndRestart(outputLeader);
      await until(() => processed >= CTP_RECORDS, `all input processed (${processed})`, 180_000, 100);
      const elapsed = Date.now() - started;
      await consumer.stop();

      const out = valuesOf(await kcatRead(c.bootstrap, output, 'read_committed', 180_000));
      const counts = new Map<string, number>();
      for (const v of out) counts.set(v, (counts.get(v) ?? 0) + 1);
      const missing: number[] = [];
      const duplicated: number[] = [];
      for (let i = 0; i < CTP_RECORDS; i++) {
        const n = counts.get(`out-${i}`) ?? 0;
        if (n === 0) missing.push(i);
        else if (n > 1) duplicated.push(i);
      }
      console.log(
        `consume-transform-produce: ${CTP_RECORDS} records in ${elapsed} ms, ${transactions} transactions, ${failures} failed (${committedAfterAll} of them committed after all); killed broker ${coordinator} (coordinator) then ${outputLeader} (leader of ${output}-0)`,
      );
      expect({ missing: missing.slice(0, 10), duplicated: duplicated.slice(0, 10), total: out.length }).toEqual({
        missing: [],
        duplicated: [],
        total: CTP_RECORDS,
      });
    }, 600_000);
  },
  { processesOnly: 'reads the brokers’ log files and log directories' },
);
