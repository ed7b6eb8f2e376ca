/**
 * Real clients against a tiny broker built only on this package's codec (src/fixtures/tiny-broker.ts:
 * decodeRequest in, encodeResponse out): our responses must be bytes kcat (librdkafka 2.0.2),
 * KafkaJS 2.2.4 and @platformatic/kafka 2.12.1 parse and act on. The broker records every request,
 * so each test asserts exactly which API versions the client negotiated against API_TABLE.
 *
 * Node 20: @platformatic/kafka's promise API needs Promise.withResolvers (Node 22); polyfilled below
 * for this worker only, as test-e2e/platformatic.test.ts does.
 */
import { topicPartitionKey } from './topic-partition.js';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type * as KafkaJS from 'kafkajs';
import { RecordBatch, scanRecordSet } from './records/index.js';
import { TINY_NODE_ID, TINY_PRODUCER_ID, TINY_TXN_PRODUCER_ID, TinyBroker, tinyTopicId } from './fixtures/tiny-broker.js';

if (typeof (Promise as { withResolvers?: unknown }).withResolvers !== 'function') {
  Object.defineProperty(Promise, 'withResolvers', {
    configurable: true,
    writable: true,
    value<T>() {
      let resolve!: (v: T | PromiseLike<T>) => void;
      let reject!: (e: unknown) => void;
      const promise = new Promise<T>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      return { promise, resolve, reject };
    },
  });
}
const plt = await import('@platformatic/kafka');
const { Kafka, logLevel } = createRequire(import.meta.url)('kafkajs') as typeof KafkaJS;

const KCAT = '/usr/bin/kcat';

/** The versions each client picks against API_TABLE (the highest both sides implement). */
const V = {
  kcat: { ApiVersions: 3, Metadata: 4, Produce: 7, InitProducerId: 4, ListOffsets: 2, Fetch: 11 },
  kafkajs: {
    ApiVersions: 2,
    Metadata: 6,
    CreateTopics: 3,
    Produce: 7,
    FindCoordinator: 2,
    InitProducerId: 1,
    AddPartitionsToTxn: 1,
    AddOffsetsToTxn: 1,
    TxnOffsetCommit: 1,
    EndTxn: 1,
  },
  platformatic: {
    ApiVersions: 3,
    Metadata: 12,
    CreateTopics: 7,
    Produce: 11,
    ListOffsets: 9,
    Fetch: 17,
    FindCoordinator: 6,
    InitProducerId: 5,
    AddPartitionsToTxn: 3,
    EndTxn: 3,
  },
} as const;

type Client = keyof typeof V;
type ApiOf<C extends Client> = keyof (typeof V)[C] & string;

/** "Produce v7, Fetch v11" for a test name. */
function named<C extends Client>(client: C, ...apis: ApiOf<C>[]): string {
  return apis.map((a) => `${a} v${(V[client] as Record<string, number>)[a]}`).join(', ');
}
/** What broker.versionsUsed() should report for those APIs. */
function used<C extends Client>(client: C, ...apis: ApiOf<C>[]): Record<string, number[]> {
  return Object.fromEntries(apis.map((a) => [a, [(V[client] as Record<string, number>)[a]!]]));
}

function run(argv: string[], input = '', timeoutMs = 20_000): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(KCAT, argv, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`kcat ${argv.join(' ')} timed out; stderr: ${stderr}`));
    }, timeoutMs);
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve({ stdout, stderr });
      else reject(new Error(`kcat ${argv.join(' ')} exited with ${code}: ${stderr}`));
    });
    child.stdin.end(input);
  });
}

/** Every record the broker holds for a partition, as strings. */
function stored(broker: TinyBroker, topic: string, partition: number) {
  const log = broker.topics.get(topic)?.partitions[partition];
  if (log === undefined) throw new Error(`no ${topicPartitionKey(topic, partition)}`);
  return log.batches.flatMap((b) => {
    const { batches } = scanRecordSet(b.bytes);
    return batches.flatMap((batch) =>
      batch.toArray().map((r) => ({ offset: r.offset, key: r.key?.toString('utf8') ?? null, value: r.value?.toString('utf8') ?? null })),
    );
  });
}

describe('real clients against a tiny broker built on @samsa/protocol', () => {
  let broker: TinyBroker;

  beforeAll(async () => {
    broker = await TinyBroker.start({ topics: { 'interop-kcat': 3 } });
  });

  afterAll(async () => {
    await broker?.close();
  });

  /** Requests of one client id that the broker could not decode or serve (should be none). */
  const failures = (clientId: string) =>
    broker.requests.filter((r) => r.clientId === clientId && r.outcome !== 'ok').map((r) => `${r.api} v${r.apiVersion}: ${r.outcome} ${r.detail ?? ''}`);

  describe(`kcat (librdkafka 2.0.2)`, () => {
    it(`kcat -L lists the broker and the topic (${named('kcat', 'ApiVersions', 'Metadata')})`, async () => {
      const id = 'interop-kcat-list';
      const { stdout } = await run(['-b', broker.bootstrap, '-X', `client.id=${id}`, '-L']);
      expect(stdout).toContain(`1 brokers:\n  broker ${TINY_NODE_ID} at ${broker.bootstrap} (controller)`);
      expect(stdout).toContain('topic "interop-kcat" with 3 partitions:');
      for (const p of [0, 1, 2]) expect(stdout).toContain(`partition ${p}, leader ${TINY_NODE_ID}, replicas: ${TINY_NODE_ID}, isrs: ${TINY_NODE_ID}`);
      expect(failures(id)).toEqual([]);
      expect(broker.versionsUsed(id)).toEqual(used('kcat', 'ApiVersions', 'Metadata'));
    });

    it(`kcat -P then kcat -C -e round-trips keys and values over 3 partitions (${named('kcat', 'Produce', 'ListOffsets', 'Fetch')})`, async () => {
      const messages = Array.from({ length: 30 }, (_, i) => ({ key: `key-${i}`, value: i === 7 ? null : `value ${i} ✓` }));
      const input = messages.map((m) => `${m.key}\t${m.value ?? ''}`).join('\n') + '\n';
      const producer = 'interop-kcat-produce';
      await run(['-b', broker.bootstrap, '-X', `client.id=${producer}`, '-P', '-t', 'interop-kcat', '-K', '\t', '-Z', '-X', 'acks=all'], input);
      expect(failures(producer)).toEqual([]);
      expect(broker.versionsUsed(producer)).toEqual(used('kcat', 'ApiVersions', 'Metadata', 'Produce'));

      const consumer = 'interop-kcat-consume';
      const { stdout } = await run(['-b', broker.bootstrap, '-X', `client.id=${consumer}`, '-C', '-e', '-o', 'beginning', '-t', 'interop-kcat', '-J']);
      const got = stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { partition: number; offset: number; key: string | null; payload: string | null });
      expect(got.map((m) => ({ key: m.key, value: m.payload })).sort((a, b) => a.key!.localeCompare(b.key!))).toEqual(
        [...messages].sort((a, b) => a.key.localeCompare(b.key)),
      );
      // the keys spread over the partitions, and each partition's offsets start at 0 with no gaps
      const byPartition = new Map<number, number[]>();
      for (const m of got) byPartition.set(m.partition, [...(byPartition.get(m.partition) ?? []), m.offset]);
      expect(byPartition.size).toBeGreaterThan(1);
      for (const offsets of byPartition.values()) expect(offsets).toEqual(offsets.map((_, i) => i));
      expect(failures(consumer)).toEqual([]);
      expect(broker.versionsUsed(consumer)).toEqual(used('kcat', 'ApiVersions', 'Metadata', 'ListOffsets', 'Fetch'));
    });

    it(`kcat -P -X enable.idempotence=true writes batches with the broker's producer id (${named('kcat', 'InitProducerId', 'Produce')})`, async () => {
      const id = 'interop-kcat-idempotent';
      const before = broker.topics.get('interop-kcat')!.partitions[2]!.batches.length;
      await run(
        ['-b', broker.bootstrap, '-X', `client.id=${id}`, '-P', '-t', 'interop-kcat', '-p', '2', '-K', ':', '-X', 'enable.idempotence=true'],
        'ik:idempotent\n',
      );
      const batches = broker.topics.get('interop-kcat')!.partitions[2]!.batches.slice(before);
      expect(batches).toHaveLength(1);
      const batch = new RecordBatch(batches[0]!.bytes);
      expect({ producerId: batch.producerId, producerEpoch: batch.producerEpoch, baseSequence: batch.baseSequence }).toEqual({
        producerId: TINY_PRODUCER_ID,
        producerEpoch: 0,
        baseSequence: 0,
      });
      expect(batch.isValidCrc()).toBe(true);
      expect(failures(id)).toEqual([]);
      expect(broker.versionsUsed(id)).toEqual(used('kcat', 'ApiVersions', 'Metadata', 'InitProducerId', 'Produce'));
    });
  });

  describe('KafkaJS 2.2.4', () => {
    const topic = 'interop-kafkajs';

    it(`admin createTopics + fetchTopicMetadata (${named('kafkajs', 'ApiVersions', 'Metadata', 'CreateTopics')})`, async () => {
      const id = 'interop-kafkajs-admin';
      const admin = new Kafka({ clientId: id, brokers: [broker.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 2 } }).admin();
      await admin.connect();
      try {
        expect(await admin.createTopics({ topics: [{ topic, numPartitions: 2, replicationFactor: 1 }], waitForLeaders: true })).toBe(true);
        const md = await admin.fetchTopicMetadata({ topics: [topic] });
        expect(md.topics).toEqual([
          {
            name: topic,
            partitions: [0, 1].map((partitionId) => ({
              partitionErrorCode: 0,
              partitionId,
              leader: TINY_NODE_ID,
              replicas: [TINY_NODE_ID],
              isr: [TINY_NODE_ID],
              offlineReplicas: [],
            })),
          },
        ]);
      } finally {
        await admin.disconnect();
      }
      expect(failures(id)).toEqual([]);
      expect(broker.versionsUsed(id)).toEqual(used('kafkajs', 'ApiVersions', 'Metadata', 'CreateTopics'));
    });

    it(`producer.send acks -1 gets offsets assigned (${named('kafkajs', 'Produce')})`, async () => {
      const id = 'interop-kafkajs-producer';
      const producer = new Kafka({ clientId: id, brokers: [broker.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 2 } }).producer();
      await producer.connect();
      try {
        const messages = ['x', 'y', 'z'].map((k) => ({ key: k, value: `kafkajs ${k}`, partition: 1 }));
        const first = await producer.send({ topic, acks: -1, messages });
        expect(first).toEqual([expect.objectContaining({ topicName: topic, partition: 1, errorCode: 0, baseOffset: '0' })]);
        const second = await producer.send({ topic, acks: -1, messages: [{ key: 'w', value: 'kafkajs w', partition: 1 }] });
        expect(second).toEqual([expect.objectContaining({ topicName: topic, partition: 1, errorCode: 0, baseOffset: '3' })]);
      } finally {
        await producer.disconnect();
      }
      expect(stored(broker, topic, 1)).toEqual(['x', 'y', 'z', 'w'].map((k, i) => ({ offset: BigInt(i), key: k, value: `kafkajs ${k}` })));
      expect(failures(id)).toEqual([]);
      expect(broker.versionsUsed(id)).toEqual(used('kafkajs', 'ApiVersions', 'Metadata', 'Produce'));
    });

    it(`a transaction with sendOffsets commits (${named('kafkajs', 'FindCoordinator', 'InitProducerId', 'AddPartitionsToTxn', 'AddOffsetsToTxn', 'TxnOffsetCommit', 'EndTxn')})`, async () => {
      const id = 'interop-kafkajs-txn';
      const producer = new Kafka({ clientId: id, brokers: [broker.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 2 } }).producer({
        transactionalId: 'interop-kafkajs-txn-id',
        idempotent: true,
        maxInFlightRequests: 1,
      });
      await producer.connect();
      try {
        const txn = await producer.transaction();
        await txn.send({ topic, acks: -1, messages: [{ key: 't', value: 'kafkajs t', partition: 0 }] });
        await txn.sendOffsets({ consumerGroupId: 'interop-kafkajs-txn-group', topics: [{ topic, partitions: [{ partition: 1, offset: '4' }] }] });
        await txn.commit();
      } finally {
        await producer.disconnect();
      }
      const batches = broker.topics.get(topic)!.partitions[0]!.batches.flatMap((b) => scanRecordSet(b.bytes).batches);
      expect(batches.map((b) => ({ transactional: b.isTransactional, producerId: b.producerId }))).toEqual([
        { transactional: true, producerId: TINY_TXN_PRODUCER_ID },
      ]);
      expect(failures(id)).toEqual([]);
      expect(broker.versionsUsed(id)).toEqual(
        used(
          'kafkajs',
          'ApiVersions',
          'Metadata',
          'Produce',
          'FindCoordinator',
          'InitProducerId',
          'AddPartitionsToTxn',
          'AddOffsetsToTxn',
          'TxnOffsetCommit',
          'EndTxn',
        ),
      );
    });
  });

  describe('@platformatic/kafka 2.12.1', () => {
    const topic = 'interop-platformatic';
    const common = (clientId: string) => ({ clientId, bootstrapBrokers: [broker.bootstrap], retries: 1, retryDelay: 100, timeout: 10_000 });

    it(`Admin createTopics + metadata (${named('platformatic', 'ApiVersions', 'CreateTopics', 'Metadata')})`, async () => {
      const id = 'interop-platformatic-admin';
      const admin = new plt.Admin(common(id));
      try {
        const created = await admin.createTopics({ topics: [topic], partitions: 3, replicas: 1 });
        expect(created).toEqual([expect.objectContaining({ name: topic, partitions: 3, replicas: 1 })]);
        const md = await admin.metadata({ topics: [topic], forceUpdate: true });
        expect(md.id).toBe('samsa-tiny-cluster');
        expect(md.controllerId).toBe(TINY_NODE_ID);
        expect([...md.brokers]).toEqual([[TINY_NODE_ID, { host: broker.host, port: broker.port, rack: null }]]);
        const t = md.topics.get(topic);
        expect(t?.partitionsCount).toBe(3);
        expect(Buffer.from(t!.id.replaceAll('-', ''), 'hex')).toEqual(tinyTopicId(topic));
        expect(t?.partitions.map((p) => p.leader)).toEqual([TINY_NODE_ID, TINY_NODE_ID, TINY_NODE_ID]);
      } finally {
        await admin.close();
      }
      expect(failures(id)).toEqual([]);
      expect(broker.versionsUsed(id)).toEqual(used('platformatic', 'ApiVersions', 'CreateTopics', 'Metadata'));
    });

    it(`Producer.send acks -1 gets offsets assigned (${named('platformatic', 'Produce')})`, async () => {
      const id = 'interop-platformatic-producer';
      const producer = new plt.Producer({ ...common(id), serializers: plt.stringSerializers });
      try {
        const r = await producer.send({
          acks: -1,
          messages: ['p', 'q'].map((k) => ({ topic, partition: 2, key: k, value: `platformatic ${k}` })),
        });
        expect(r.offsets).toEqual([{ topic, partition: 2, offset: 0n }]);
        const again = await producer.send({ acks: -1, messages: [{ topic, partition: 2, key: 'r', value: 'platformatic r' }] });
        expect(again.offsets).toEqual([{ topic, partition: 2, offset: 2n }]);
      } finally {
        await producer.close();
      }
      expect(stored(broker, topic, 2)).toEqual(['p', 'q', 'r'].map((k, i) => ({ offset: BigInt(i), key: k, value: `platformatic ${k}` })));
      expect(failures(id)).toEqual([]);
      expect(broker.versionsUsed(id)).toEqual(used('platformatic', 'ApiVersions', 'Metadata', 'Produce'));
    });

    it(`Consumer listOffsets + fetch without a group reads them back (${named('platformatic', 'ListOffsets', 'Fetch')})`, async () => {
      const id = 'interop-platformatic-consumer';
      const consumer = new plt.Consumer({ ...common(id), groupId: 'interop-unused', deserializers: plt.stringDeserializers });
      try {
        const offsets = await consumer.listOffsets({ topics: [topic] });
        expect(offsets.get(topic)).toEqual([0n, 0n, 3n]);
        const topicId = (await consumer.metadata({ topics: [topic] })).topics.get(topic)!.id;
        const res = await consumer.fetch({
          node: TINY_NODE_ID,
          topics: [{ topicId, partitions: [{ partition: 2, currentLeaderEpoch: -1, fetchOffset: 1n, lastFetchedEpoch: -1, partitionMaxBytes: 1_048_576 }] }],
        });
        const p = res.responses[0]!.partitions[0]!;
        expect({ errorCode: p.errorCode, highWatermark: p.highWatermark }).toEqual({ errorCode: 0, highWatermark: 3n });
        // batches come back whole (offset 1 is inside the first one), with the offsets the broker assigned
        const recs = (p.records ?? []).flatMap((b) => b.records.map((r) => ({ offset: b.firstOffset + BigInt(r.offsetDelta), key: String(r.key) })));
        expect(recs).toEqual(['p', 'q', 'r'].map((key, i) => ({ offset: BigInt(i), key })));
      } finally {
        await consumer.close();
      }
      expect(failures(id)).toEqual([]);
      expect(broker.versionsUsed(id)).toEqual(used('platformatic', 'ApiVersions', 'Metadata', 'ListOffsets', 'Fetch'));
    });

    it(`a transaction commits, after FindCoordinator v6 answered per key (${named('platformatic', 'FindCoordinator', 'InitProducerId', 'AddPartitionsToTxn', 'EndTxn')})`, async () => {
      const id = 'interop-platformatic-txn';
      const producer = new plt.Producer({
        ...common(id),
        transactionalId: 'interop-platformatic-txn-id',
        idempotent: true,
        serializers: plt.stringSerializers,
      });
      try {
        const txn = await producer.beginTransaction();
        await txn.send({ messages: [{ topic, partition: 0, key: 't', value: 'platformatic t' }] });
        await txn.commit();
      } finally {
        await producer.close();
      }
      const batches = broker.topics.get(topic)!.partitions[0]!.batches.flatMap((b) => scanRecordSet(b.bytes).batches);
      expect(batches.map((b) => ({ transactional: b.isTransactional, producerId: b.producerId }))).toEqual([
        { transactional: true, producerId: TINY_TXN_PRODUCER_ID },
      ]);
      expect(failures(id)).toEqual([]);
      expect(broker.versionsUsed(id)).toEqual(
        used('platformatic', 'ApiVersions', 'Metadata', 'Produce', 'FindCoordinator', 'InitProducerId', 'AddPartitionsToTxn', 'EndTxn'),
      );
    });
  });
});
