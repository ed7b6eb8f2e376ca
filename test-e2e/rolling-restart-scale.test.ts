/**
 * Issue #30's rolling-restart acceptance point at 1,000 partitions: while a KafkaJS 2.2.4
 * idempotent producer (acks=all) and a kcat consumer run against a topic of 1,000 partitions
 * (RF 3, min.insync.replicas 2) on 3 brokers, each broker in turn is stopped with SIGTERM
 * (controlled shutdown), started again, and waited for until it is back in every ISR. No produce
 * error reaches the application (every send() resolves, with its partition in the answer) and
 * nothing acknowledged is lost or duplicated: the live kcat consumer and a final kcat read from the
 * beginning both hold every acknowledged record once, at the offset it was acknowledged with.
 *
 * Each send() holds one partition's records (all with that partition's key under the default
 * murmur2 partitioner): a KafkaJS send() spanning several leaders can resolve without sending some
 * of its partitions when one of those leaders fails or moves (docs/clients.md, issue #31), a client
 * defect this test is not about. Workers cover the partitions in parallel so that every partition
 * gets records all through the restarts.
 */
import { spawn } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import kafkajs from 'kafkajs';
import type { Producer } from 'kafkajs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { API_KEYS, topicPartitionKey } from '@samsa/protocol';
import { Connection, metadataRequestBody } from '@samsa/client';
import { newTopicId } from '@samsa/zk-paths';
import { describeCluster, logLines, logOf, TestCluster, kcatConsume, until } from './harness.js';

const { Kafka, Partitioners, logLevel } = kafkajs;

/** 1,000 as the issue asks; SAMSA_E2E_ROLLING_PARTITIONS changes it (e.g. to try the test quickly). */
const PARTITIONS = Number(process.env['SAMSA_E2E_ROLLING_PARTITIONS'] ?? 1000);
const TOPIC = 'rolling-scale';
/** Records per send(), all to one partition. */
const BATCH = 100;
/** Concurrent send() loops; worker w owns the partitions p ≡ w (mod WORKERS), so no two sends to a partition overlap. */
const WORKERS = 6;

/** Partition → the records of the live kcat consumer: offset → value. */
type Consumed = Map<number, Map<number, string>>;

/** For each partition a key the default (murmur2, Java-compatible) partitioner sends there. */
function keysByPartition(n: number): string[] {
  const partitioner = Partitioners.DefaultPartitioner();
  const partitionMetadata = Array.from({ length: n }, (_, partitionId) => ({ partitionId, leader: 0, replicas: [], isr: [], partitionErrorCode: 0 }));
  const keys: Array<string | undefined> = new Array(n);
  let found = 0;
  for (let i = 0; found < n; i++) {
    const key = `key-${i}`;
    const p = partitioner({ topic: TOPIC, partitionMetadata, message: { key, value: null } });
    if (keys[p] === undefined) {
      keys[p] = key;
      found++;
    }
  }
  return keys as string[];
}

describeCluster(
  'rolling restart at 1,000 partitions (3 brokers, RF 3, min.insync.replicas 2)',
  () => {
    let c: TestCluster;
    beforeAll(async () => {
      c = await TestCluster.start({ brokers: 3 });
    });
    afterAll(async () => {
      await c?.stop();
    });

    /** Partition states of the topic from ZooKeeper, in partition order (one multi-read). */
    const states = async () => {
      const m = await c.admin.getPartitionStates(Array.from({ length: PARTITIONS }, (_, partition) => ({ topic: TOPIC, partition })));
      return Array.from({ length: PARTITIONS }, (_, p) => m.get(topicPartitionKey(TOPIC, p))?.state);
    };

    it(`rolling restart – SIGTERM and restart of each broker under a KafkaJS idempotent producer (acks=all) and a kcat consumer over ${PARTITIONS} partitions: no produce error reaches the application, every acknowledged record read back once at its offset`, async () => {
      const tTest = Date.now();
      // ---- the topic: preferred leaders spread over the brokers, every replica's log created ------
      const assignment = new Map(Array.from({ length: PARTITIONS }, (_, p) => [p, [p % 3, (p + 1) % 3, (p + 2) % 3]]));
      await c.admin.createTopic(TOPIC, newTopicId(), assignment, { 'min.insync.replicas': '2' });
      await until(async () => (await states()).every((s, p) => s && s.leader === p % 3 && s.isr.length === 3), 'leaders and full ISRs', 120_000, 200);
      // the state znodes are written before the brokers apply LeaderAndIsr: wait for every replica's log
      const replicaLogs = async () =>
        (await Promise.all(c.brokers.map(async (b) => (await readdir(join(b.o.dir, 'logs'))).filter((d) => d.startsWith(`${TOPIC}-`)).length))).reduce(
          (x, y) => x + y,
          0,
        );
      await until(async () => (await replicaLogs()) === 3 * PARTITIONS, `${3 * PARTITIONS} replica logs`, 120_000, 200);
      // and every broker's Metadata names those leaders (UpdateMetadata follows LeaderAndIsr): before
      // that a broker answers UNKNOWN_TOPIC_OR_PARTITION for the topic, which kcat takes as fatal
      const leadersInMetadata = async (address: string) => {
        const i = address.lastIndexOf(':');
        const conn = await Connection.connect({ host: address.slice(0, i), port: Number(address.slice(i + 1)), clientId: 'rolling-scale-e2e' });
        try {
          const res = await conn.request(API_KEYS.Metadata, (v) => metadataRequestBody([TOPIC], v));
          const ps = res.body.topics[0]?.partitions ?? [];
          return ps.length === PARTITIONS && ps.every((x) => x.errorCode === 0 && x.leaderId === x.partitionIndex % 3);
        } finally {
          await conn.close();
        }
      };
      await until(
        async () => (await Promise.all(c.brokers.map((b) => leadersInMetadata(b.address)))).every(Boolean),
        `${TOPIC} in every broker's Metadata`,
        60_000,
        200,
      );
      const createMs = Date.now() - tTest;

      // ---- kcat consumes the topic from the beginning all through the test ----------------------
      const keys = keysByPartition(PARTITIONS);
      const consumed: Consumed = new Map();
      const reDelivered: string[] = [];
      const wrongKey: string[] = [];
      let consumedCount = 0;
      // -u: unbuffered output, or the last records stay in kcat's stdio buffer once producing stops
      const kcat = spawn('kcat', ['-C', '-u', '-b', c.bootstrap, '-t', TOPIC, '-o', 'beginning', '-q', '-f', '%p %o %k %s\n']);
      let kcatErr = '';
      let pending = '';
      kcat.stderr.on('data', (d: Buffer) => (kcatErr += d.toString()));
      kcat.stdout.on('data', (d: Buffer) => {
        const lines = (pending + d.toString()).split('\n');
        pending = lines.pop()!;
        for (const line of lines) {
          const [p, o, k, v] = line.split(' ') as [string, string, string, string];
          const partition = Number(p);
          const offset = Number(o);
          if (k !== keys[partition]) wrongKey.push(`${topicPartitionKey(TOPIC, partition)}@${offset}: key ${k}`);
          let m = consumed.get(partition);
          if (!m) consumed.set(partition, (m = new Map()));
          if (m.has(offset)) reDelivered.push(`${topicPartitionKey(TOPIC, partition)}@${offset}: ${m.get(offset)} then ${v}`);
          else consumedCount++;
          m.set(offset, v);
        }
      });
      const kcatExit = new Promise<number | null>((r) => kcat.on('close', (code) => r(code)));
      let kcatExited = false;
      void kcatExit.then(() => (kcatExited = true));

      try {
        // ---- the producer: WORKERS loops, one partition per send(), every ack recorded ------------
        const kjsLogs: string[] = [];
        const kafka = new Kafka({
          clientId: 'rolling-scale-e2e',
          brokers: c.bootstrap.split(','),
          logLevel: logLevel.WARN,
          logCreator:
            () =>
            ({ namespace, level, log }) =>
              kjsLogs.push(`[${level}] ${namespace}: ${log.message}${log['error'] ? ` (${String(log['error'])})` : ''}`),
        });
        // what KafkaJS needs for idempotence: acks -1, one request in flight per connection; retries stay at the default
        const producer: Producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner });
        await producer.connect();
        /** value `<partition>:<n>` → [partition, offset] as acknowledged */
        const acked = new Map<string, [number, number]>();
        const sendErrors: string[] = [];
        let sends = 0;
        let producing = true;
        const worker = async (w: number) => {
          for (let round = 0; producing; round++) {
            for (let p = w; p < PARTITIONS && producing; p += WORKERS) {
              const values = Array.from({ length: BATCH }, (_, i) => `${p}:${round * BATCH + i}`);
              try {
                const res = await producer.send({ topic: TOPIC, acks: -1, messages: values.map((value) => ({ key: keys[p]!, value })) });
                const md = res.find((r) => r.topicName === TOPIC && r.partition === p);
                if (!md || md.errorCode !== 0) {
                  sendErrors.push(`send to partition ${p} resolved without its partition: ${JSON.stringify(res)}`);
                  producing = false;
                  return;
                }
                const base = Number(md.baseOffset);
                values.forEach((v, i) => acked.set(v, [p, base + i]));
                sends++;
              } catch (err) {
                sendErrors.push(`send to partition ${p} rejected: ${String(err)} ${JSON.stringify((err as { cause?: unknown }).cause ?? null)}`);
                producing = false;
                return;
              }
            }
          }
        };
        const workers = Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));
        const healthy = () => {
          if (sendErrors.length > 0) throw new Error(`produce error reached the application: ${sendErrors.join('; ')}`);
          if (kcatExited) throw new Error(`kcat exited: ${kcatErr}`);
          return true;
        };
        /** Waits until `n` more send()s were acknowledged. */
        const moreSends = async (n: number, what: string) => {
          const target = sends + n;
          await until(() => healthy() && sends >= target, what, 120_000, 20);
        };

        try {
          // every partition written to once before the first restart
          await moreSends(PARTITIONS, 'a first send to every partition');
          const tProduce = Date.now();
          const controllerAtStart = await c.controllerId();
          const restarts: string[] = [];
          for (const b of c.brokers) {
            const logFrom = (await logOf(c, b.id)).length;
            const t0 = Date.now();
            await b.stop(60_000);
            const stopMs = Date.now() - t0;
            const msgs = await logLines(c, b.id, logFrom);
            const done = msgs.find((m) => m['msg'] === 'controlled shutdown succeeded');
            expect(done, `broker ${b.id} logs a successful controlled shutdown`).toBeDefined();
            expect(
              msgs.some((m) => m['msg'] === 'shut down'),
              `broker ${b.id} shut down cleanly`,
            ).toBe(true);
            await moreSends(20, `sends while broker ${b.id} is down`);
            const t1 = Date.now();
            await c.startBroker(b.id);
            const startMs = Date.now() - t1;
            await until(
              async () => healthy() && (await states()).every((s) => s?.isr.includes(b.id)),
              `broker ${b.id} back in every ISR of ${TOPIC}`,
              120_000,
              200,
            );
            const isrMs = Date.now() - t1;
            restarts.push(
              `broker ${b.id}: controlled shutdown ${String(done!['ms'])} ms, exit ${stopMs} ms after SIGTERM, serving ${startMs} ms and in every ISR ${isrMs} ms after relaunch`,
            );
            await moreSends(20, `sends after broker ${b.id} rejoined`);
          }
          const rollingMs = Date.now() - tProduce;
          producing = false;
          await workers;
          await producer.disconnect();
          healthy();

          // ---- every acknowledged record, once, where it was acknowledged ---------------------------
          const missingLive = (): string[] => {
            const out: string[] = [];
            for (const [v, [p, o]] of acked)
              if (consumed.get(p)?.get(o) !== v) out.push(`${v}@${topicPartitionKey(TOPIC, p)}/${o}: ${consumed.get(p)?.get(o) ?? 'nothing'}`);
            return out;
          };
          await until(() => healthy() && missingLive().length === 0, 'the live kcat consumer has every acknowledged record', 60_000, 200).catch(
            () => undefined,
          );
          const missing = missingLive();
          const liveValues = new Map<string, number>();
          for (const m of consumed.values()) for (const v of m.values()) liveValues.set(v, (liveValues.get(v) ?? 0) + 1);
          const liveDuplicates = [...liveValues].filter(([, n]) => n > 1);

          // a final read from the beginning to the end, after the last restart
          const rows = (await kcatConsume(c.bootstrap, TOPIC, '%p %o %s\n', 120_000)).split('\n').filter(Boolean);
          const final = new Map<string, string>();
          const finalValues = new Map<string, number>();
          for (const row of rows) {
            const [p, o, v] = row.split(' ') as [string, string, string];
            final.set(`${p}/${o}`, v);
            finalValues.set(v, (finalValues.get(v) ?? 0) + 1);
          }
          const missingFinal = [...acked]
            .filter(([v, [p, o]]) => final.get(`${p}/${o}`) !== v)
            .map(([v, [p, o]]) => `${v}@${p}/${o}: ${final.get(`${p}/${o}`) ?? 'nothing'}`);
          const finalDuplicates = [...finalValues].filter(([, n]) => n > 1);
          const retried = kjsLogs.filter((l) => l.startsWith('[1]') || l.startsWith('[2]'));

          console.log(
            `[rolling e2e] ${PARTITIONS} partitions (created in ${createMs} ms), controller at start ${controllerAtStart}: ${acked.size} records acknowledged in ${sends} sends over ${rollingMs} ms of rolling restart, ` +
              `${consumedCount} consumed live (${reDelivered.length} offsets delivered twice), ${rows.length} in the final read; ${restarts.join('; ')}; ` +
              `KafkaJS logged ${retried.length} warnings/errors it retried past; total ${Date.now() - tTest} ms`,
          );
          if (missing.length > 0 || missingFinal.length > 0) {
            const parts = [...new Set([...acked].filter(([v, [p, o]]) => consumed.get(p)?.get(o) !== v).map(([, [p]]) => p))];
            console.log(
              `[rolling e2e] not consumed live: ${missing.length} records of partitions ${parts.join(',')} (live max offsets ${parts.map((p) => Math.max(-1, ...(consumed.get(p)?.keys() ?? []))).join(',')}); ` +
                `not in the final read: ${missingFinal.length} (${missingFinal.slice(0, 3).join(', ')}); kcat stderr: ${kcatErr}`,
            );
          }
          if (retried.length > 0)
            console.log(`[rolling e2e] KafkaJS log sample:\n${[...new Set(retried.map((l) => l.replace(/\d+/g, 'N')))].slice(0, 15).join('\n')}`);

          expect(sendErrors).toEqual([]);
          expect(missing.slice(0, 10), `${missing.length} acknowledged records not consumed live`).toEqual([]);
          expect(reDelivered.slice(0, 10), 'the live consumer got no (partition, offset) twice').toEqual([]);
          expect(wrongKey.slice(0, 10), "every record on its key's partition").toEqual([]);
          expect(liveDuplicates.slice(0, 10), 'no value twice in the live stream').toEqual([]);
          expect(missingFinal.slice(0, 10), `${missingFinal.length} acknowledged records not in the final read`).toEqual([]);
          expect(finalDuplicates.slice(0, 10), 'no value twice in the final read').toEqual([]);
          expect(rows.length).toBe(acked.size);
        } finally {
          producing = false;
          await workers.catch(() => undefined);
          await producer.disconnect().catch(() => undefined);
        }
      } finally {
        kcat.kill('SIGTERM');
        await kcatExit;
      }
    });
  },
  { processesOnly: 'restarts broker processes, reads their log files and log directories' },
);
