#!/usr/bin/env node
/**
 * Captures real request frames from real Kafka clients, for golden-bytes tests.
 *
 * Starts the tiny broker of src/fixtures/tiny-broker.ts (built only on @samsa/protocol's codec:
 * decodeRequest in, encodeResponse out; loaded here through Vite's module runner, since it is
 * TypeScript) once per client, drives the client through a few steps, and writes one request frame
 * per distinct (client, api, version) to
 *   packages/protocol/src/fixtures/<client>/<api>-v<version>.bin
 * (the frame as sent, without its 4-byte size prefix) plus src/fixtures/manifest.json.
 *
 * Clients and steps:
 *   kcat (/usr/bin/kcat, librdkafka):  -P acks=all;  -L;  -P enable.idempotence=true;  -C -e
 *   KafkaJS:            admin createTopics / fetchTopicMetadata / describeConfigs / fetchTopicOffsets /
 *                       deleteTopics; producer.send acks -1; idempotent producer.send
 *   @platformatic/kafka: Admin createTopics / metadata / describeConfigs / deleteTopics; Producer send
 *                       acks -1; Consumer listOffsets and fetch (manual fetch, no group); a transaction
 *   librdkafka-python:  Debian's python3-confluent-kafka (librdkafka 2.0.2): a transactional producer
 *                       with send_offsets_to_transaction
 *   (KafkaJS and platformatic: a transactional producer sending offsets too; its InitProducerId and
 *   Produce frames are kept as a "txn" variant next to the non-transactional ones of the same version)
 *
 * Each step declares what it asked the client to do (the "expected" fields in the manifest: topic
 * names, partition counts, acks, keys and values...). For every (api, version) the first frame of a
 * step that declares expectations for that api and mentions the step's topic (checked on the raw
 * bytes: topic name or topic id) is kept; other (api, version) pairs keep their first frame with
 * header-only expectations. The correlation id in the manifest is read from the raw bytes.
 *
 * Usage: node packages/protocol/scripts/capture-frames.mjs [--kcat /usr/bin/kcat] [--python /usr/bin/python3]
 *        [--only kcat|kafkajs|platformatic|librdkafka-python]
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runnerImport } from 'vite';

const here = dirname(fileURLToPath(import.meta.url));
const fixturesDir = join(here, '..', 'src', 'fixtures');
const require = createRequire(import.meta.url);

const args = process.argv.slice(2);
const argValue = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const KCAT = argValue('--kcat', '/usr/bin/kcat');
const ONLY = argValue('--only', null);

// @platformatic/kafka 2.12.1 targets Node >= 22; on Node 20 its promise API needs Promise.withResolvers.
if (typeof Promise.withResolvers !== 'function') {
  Object.defineProperty(Promise, 'withResolvers', {
    configurable: true,
    writable: true,
    value() {
      let resolve, reject;
      const promise = new Promise((a, b) => {
        resolve = a;
        reject = b;
      });
      return { promise, resolve, reject };
    },
  });
}

const { module: tiny } = await runnerImport(join(fixturesDir, 'tiny-broker.ts'), { configFile: false, logLevel: 'error' });
const { TinyBroker, tinyTopicId, TINY_TXN_PRODUCER_ID: TXN_PRODUCER_ID } = tiny;

/** @platformatic/kafka's version (its package.json is not exported; read it next to dist/). */
const pltVersion = () => JSON.parse(readFileSync(join(dirname(require.resolve('@platformatic/kafka')), '..', 'package.json'), 'utf8')).version;

const kebab = (name) => name.replace(/([a-z])([A-Z])/g, '$1-$2').toLowerCase();

// ------------------------------------------------------------------------------------------------
// Steps: each runs a client against the broker and returns expectations per api name.

function run(cmd, argv, input, timeoutMs = 30_000) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${cmd} ${argv.join(' ')} timed out; stderr: ${stderr}`));
    }, timeoutMs);
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.stdin.end(input ?? '');
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code !== 0) reject(new Error(`${cmd} ${argv.join(' ')} exited with ${code}: ${stderr}`));
      else resolve({ stdout, stderr });
    });
  });
}

/**
 * What a transactional produce-and-commit-offsets flow asks the client to send: FindCoordinator for
 * the transactional id (key type 1), InitProducerId with it, AddPartitionsToTxn for the partition,
 * a transactional Produce, AddOffsetsToTxn and TxnOffsetCommit for the group, EndTxn committing.
 * `generationId`/`memberId` are checked when given (TxnOffsetCommit v3+).
 */
function txnExpected({ transactionalId, topic, partition, records, groupId, offsets, generationId, memberId }) {
  const member = generationId === undefined ? {} : { generationId, memberId };
  return {
    FindCoordinator: { keys: [transactionalId], keyType: 1 },
    InitProducerId: { transactionalId },
    AddPartitionsToTxn: { transactionalId, topics: [{ name: topic, partitions: [partition] }] },
    Produce: {
      acks: -1,
      transactionalId,
      topics: [{ name: topic, partitions: [{ index: partition, transactional: true, producerId: String(TXN_PRODUCER_ID), records }] }],
    },
    AddOffsetsToTxn: { transactionalId, producerId: String(TXN_PRODUCER_ID), groupId },
    TxnOffsetCommit: { transactionalId, groupId, producerId: String(TXN_PRODUCER_ID), ...member, topics: [{ name: topic, partitions: offsets }] },
    EndTxn: { transactionalId, producerId: String(TXN_PRODUCER_ID), committed: true },
  };
}

const KCAT_TOPIC = 'golden-kcat';
const KCAT_CLIENT_ID = 'samsa-golden-kcat';
const KCAT_MESSAGES = [
  { key: 'k0', value: 'kcat value 0' },
  { key: 'k1', value: 'kcat value 1' },
  { key: 'k2', value: 'ünïcödé ✓' },
];
const KCAT_IDEMPOTENT_MESSAGES = [{ key: 'idem', value: 'idempotent kcat' }];

async function kcatVersion() {
  const { stdout } = await run(KCAT, ['-V']);
  const kcatV = (stdout.match(/Version ([^\s]+)/) ?? [])[1] ?? 'unknown';
  const rdV = (stdout.match(/librdkafka ([0-9][^\s)]*)/) ?? [])[1] ?? 'unknown';
  return { kcat: kcatV, librdkafka: rdV };
}

async function kcatSteps(broker) {
  const { librdkafka } = await kcatVersion();
  const base = ['-b', broker.bootstrap, '-X', `client.id=${KCAT_CLIENT_ID}`];
  const lines = (msgs) => msgs.map((m) => `${m.key}:${m.value}`).join('\n') + '\n';
  const produced = (partition, msgs, headers) => ({
    acks: -1,
    transactionalId: null,
    topics: [{ name: KCAT_TOPIC, partitions: [{ index: partition, records: msgs.map((m) => ({ ...m, headers })) }] }],
  });
  const headers = [{ key: 'source', value: 'kcat' }];
  return [
    {
      name: `kcat -P -t ${KCAT_TOPIC} -p 0 -K : -H source=kcat -X acks=all`,
      mentions: KCAT_TOPIC,
      run: () =>
        run(KCAT, [...base, '-P', '-t', KCAT_TOPIC, '-p', '0', '-K', ':', '-H', 'source=kcat', '-X', 'acks=all', '-X', 'linger.ms=100'], lines(KCAT_MESSAGES)),
      expected: {
        ApiVersions: { clientSoftwareName: 'librdkafka', clientSoftwareVersion: librdkafka },
        Metadata: { topics: [KCAT_TOPIC] },
        Produce: produced(0, KCAT_MESSAGES, headers),
      },
    },
    {
      name: 'kcat -L',
      mentions: null,
      run: async () => {
        const { stdout } = await run(KCAT, [...base, '-L']);
        if (!stdout.includes(`topic "${KCAT_TOPIC}" with 3 partitions`)) throw new Error(`kcat -L did not list ${KCAT_TOPIC}: ${stdout}`);
      },
      expected: {},
    },
    {
      name: `kcat -P -t ${KCAT_TOPIC} -p 1 -K : -X enable.idempotence=true`,
      mentions: null,
      run: () =>
        run(
          KCAT,
          [...base, '-P', '-t', KCAT_TOPIC, '-p', '1', '-K', ':', '-X', 'enable.idempotence=true', '-X', 'linger.ms=100'],
          lines(KCAT_IDEMPOTENT_MESSAGES),
        ),
      expected: { InitProducerId: { transactionalId: null } },
    },
    {
      name: `kcat -C -e -t ${KCAT_TOPIC} -p 0 -o beginning`,
      mentions: KCAT_TOPIC,
      run: async () => {
        const { stdout } = await run(KCAT, [...base, '-C', '-e', '-t', KCAT_TOPIC, '-p', '0', '-o', 'beginning', '-f', '%k=%s\n']);
        const want = KCAT_MESSAGES.map((m) => `${m.key}=${m.value}\n`).join('');
        if (stdout !== want) throw new Error(`kcat -C read back ${JSON.stringify(stdout)}, want ${JSON.stringify(want)}`);
      },
      expected: {
        ListOffsets: { topics: [{ name: KCAT_TOPIC, partitions: [{ partitionIndex: 0, timestamp: '-2' }] }] },
        Fetch: { topics: [{ name: KCAT_TOPIC, partitions: [{ partition: 0, fetchOffset: '0' }] }] },
      },
    },
  ];
}

const KAFKAJS_TOPIC = 'golden-kafkajs';
const KAFKAJS_SCRATCH = 'golden-kafkajs-scratch';
const KAFKAJS_CLIENT_ID = 'samsa-golden-kafkajs';
const KAFKAJS_MESSAGES = [
  { key: 'a', value: 'kafkajs value a', timestamp: '1700000000000', headers: { h: 'v' } },
  { key: 'b', value: 'kafkajs value b', timestamp: '1700000000001', headers: {} },
];

const KAFKAJS_TXN_ID = 'golden-kafkajs-txn';
const KAFKAJS_TXN_GROUP = 'golden-kafkajs-txn-group';
const KAFKAJS_TXN_MESSAGES = [{ key: 't', value: 'kafkajs transactional value', timestamp: '1700000000002' }];

async function kafkajsSteps(broker) {
  const { Kafka, logLevel } = require('kafkajs');
  const kafka = new Kafka({ clientId: KAFKAJS_CLIENT_ID, brokers: [broker.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 2 } });
  const admin = kafka.admin();
  return [
    {
      name: `admin.createTopics ${KAFKAJS_TOPIC} (3 partitions, rf 1)`,
      mentions: KAFKAJS_TOPIC,
      run: async () => {
        await admin.connect();
        const created = await admin.createTopics({ topics: [{ topic: KAFKAJS_TOPIC, numPartitions: 3, replicationFactor: 1 }], waitForLeaders: true });
        if (created !== true) throw new Error('kafkajs createTopics returned false');
      },
      expected: {
        ApiVersions: {},
        CreateTopics: { topics: [{ name: KAFKAJS_TOPIC, numPartitions: 3, replicationFactor: 1 }], validateOnly: false },
        Metadata: { topics: [KAFKAJS_TOPIC] },
      },
    },
    {
      name: `admin.fetchTopicMetadata ${KAFKAJS_TOPIC}`,
      mentions: KAFKAJS_TOPIC,
      run: async () => {
        const md = await admin.fetchTopicMetadata({ topics: [KAFKAJS_TOPIC] });
        if (md.topics[0]?.partitions.length !== 3) throw new Error(`kafkajs metadata: ${JSON.stringify(md)}`);
      },
      expected: {},
    },
    {
      name: `admin.describeConfigs topic ${KAFKAJS_TOPIC}`,
      mentions: KAFKAJS_TOPIC,
      run: async () => {
        const r = await admin.describeConfigs({ resources: [{ type: 2, name: KAFKAJS_TOPIC }], includeSynonyms: false });
        if (r.resources[0]?.errorCode !== 0) throw new Error(`kafkajs describeConfigs: ${JSON.stringify(r)}`);
      },
      expected: { DescribeConfigs: { resources: [{ resourceType: 2, resourceName: KAFKAJS_TOPIC }] } },
    },
    {
      name: `producer.send ${KAFKAJS_TOPIC} partition 0 acks -1`,
      mentions: KAFKAJS_TOPIC,
      run: async () => {
        const producer = kafka.producer();
        await producer.connect();
        await producer.send({ topic: KAFKAJS_TOPIC, acks: -1, messages: KAFKAJS_MESSAGES.map((m) => ({ ...m, partition: 0 })) });
        await producer.disconnect();
      },
      expected: {
        Produce: {
          acks: -1,
          transactionalId: null,
          topics: [
            {
              name: KAFKAJS_TOPIC,
              partitions: [
                {
                  index: 0,
                  records: KAFKAJS_MESSAGES.map((m) => ({
                    key: m.key,
                    value: m.value,
                    timestamp: m.timestamp,
                    headers: Object.entries(m.headers).map(([key, value]) => ({ key, value })),
                  })),
                },
              ],
            },
          ],
        },
      },
    },
    {
      name: `idempotent producer.send ${KAFKAJS_TOPIC} partition 1`,
      mentions: null,
      run: async () => {
        const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
        await producer.connect();
        await producer.send({ topic: KAFKAJS_TOPIC, acks: -1, messages: [{ key: 'idem', value: 'idempotent kafkajs', partition: 1 }] });
        await producer.disconnect();
      },
      expected: { InitProducerId: { transactionalId: null } },
    },
    {
      name: `admin.fetchTopicOffsets ${KAFKAJS_TOPIC}`,
      mentions: KAFKAJS_TOPIC,
      run: async () => {
        const offsets = await admin.fetchTopicOffsets(KAFKAJS_TOPIC);
        const p0 = offsets.find((o) => o.partition === 0);
        if (p0?.high !== '2') throw new Error(`kafkajs fetchTopicOffsets: ${JSON.stringify(offsets)}`);
      },
      // KafkaJS asks for the latest offsets first, then the earliest.
      expected: {
        ListOffsets: { topics: [{ name: KAFKAJS_TOPIC, partitions: [0, 1, 2].map((partitionIndex) => ({ partitionIndex, timestamp: '-1' })) }] },
      },
    },
    {
      name: `admin.createTopics + deleteTopics ${KAFKAJS_SCRATCH}`,
      mentions: KAFKAJS_SCRATCH,
      run: async () => {
        await admin.createTopics({ topics: [{ topic: KAFKAJS_SCRATCH, numPartitions: 1, replicationFactor: 1 }] });
        await admin.deleteTopics({ topics: [KAFKAJS_SCRATCH] });
        await admin.disconnect();
      },
      expected: { DeleteTopics: { names: [KAFKAJS_SCRATCH] } },
    },
    {
      name: `transactional producer ${KAFKAJS_TXN_ID}: transaction, send ${KAFKAJS_TOPIC} partition 2, sendOffsets ${KAFKAJS_TXN_GROUP}, commit`,
      mentions: KAFKAJS_TXN_ID,
      variant: { name: 'txn', apis: ['InitProducerId', 'Produce'] },
      run: async () => {
        const producer = kafka.producer({ transactionalId: KAFKAJS_TXN_ID, idempotent: true, maxInFlightRequests: 1 });
        await producer.connect();
        const txn = await producer.transaction();
        await txn.send({ topic: KAFKAJS_TOPIC, acks: -1, messages: KAFKAJS_TXN_MESSAGES.map((m) => ({ ...m, partition: 2 })) });
        await txn.sendOffsets({ consumerGroupId: KAFKAJS_TXN_GROUP, topics: [{ topic: KAFKAJS_TOPIC, partitions: [{ partition: 0, offset: '2' }] }] });
        await txn.commit();
        await producer.disconnect();
      },
      expected: txnExpected({
        transactionalId: KAFKAJS_TXN_ID,
        topic: KAFKAJS_TOPIC,
        partition: 2,
        records: KAFKAJS_TXN_MESSAGES.map((m) => ({ key: m.key, value: m.value, timestamp: m.timestamp, headers: [] })),
        groupId: KAFKAJS_TXN_GROUP,
        offsets: [{ partitionIndex: 0, committedOffset: '2' }],
      }),
    },
  ];
}

const PLT_TOPIC = 'golden-platformatic';
const PLT_SCRATCH = 'golden-platformatic-scratch';
const PLT_CLIENT_ID = 'samsa-golden-platformatic';
const PLT_MESSAGES = [
  { key: 'p0', value: 'platformatic value 0', timestamp: 1700000000000n, headers: new Map([['h', 'v']]) },
  { key: 'p1', value: 'platformatic value 1', timestamp: 1700000000005n, headers: new Map() },
];

const PLT_TXN_ID = 'golden-platformatic-txn';
const PLT_TXN_GROUP = 'golden-platformatic-txn-group';
const PLT_TXN_GENERATION = 7;
const PLT_TXN_MEMBER = 'golden-platformatic-member';
const PLT_TXN_MESSAGES = [{ key: 'pt', value: 'platformatic transactional value', timestamp: 1700000000010n, headers: new Map() }];

async function platformaticSteps(broker) {
  const plt = await import('@platformatic/kafka');
  const common = { clientId: PLT_CLIENT_ID, bootstrapBrokers: [broker.bootstrap], retries: 1, retryDelay: 100, timeout: 10_000 };
  const admin = new plt.Admin(common);
  const softwareVersion = pltVersion();
  const topicIdHex = tinyTopicId(PLT_TOPIC).toString('hex');
  return [
    {
      name: `Admin.createTopics ${PLT_TOPIC} (2 partitions, 1 replica)`,
      mentions: PLT_TOPIC,
      run: async () => {
        const created = await admin.createTopics({ topics: [PLT_TOPIC], partitions: 2, replicas: 1 });
        if (created[0]?.partitions !== 2) throw new Error(`platformatic createTopics: ${JSON.stringify(created)}`);
      },
      expected: {
        ApiVersions: { clientSoftwareName: 'platformatic-kafka', clientSoftwareVersion: softwareVersion },
        CreateTopics: { topics: [{ name: PLT_TOPIC, numPartitions: 2, replicationFactor: 1 }], validateOnly: false },
      },
    },
    {
      name: `Admin.metadata ${PLT_TOPIC}`,
      mentions: PLT_TOPIC,
      run: async () => {
        const md = await admin.metadata({ topics: [PLT_TOPIC], forceUpdate: true });
        if (md.topics.get(PLT_TOPIC)?.partitionsCount !== 2) throw new Error('platformatic metadata: topic missing');
      },
      expected: { Metadata: { topics: [PLT_TOPIC] } },
    },
    {
      name: `Admin.describeConfigs topic ${PLT_TOPIC}`,
      mentions: PLT_TOPIC,
      run: async () => {
        const r = await admin.describeConfigs({ resources: [{ resourceType: 2, resourceName: PLT_TOPIC }] });
        if (!r[0]?.configs.some((c) => c.name === 'cleanup.policy')) throw new Error(`platformatic describeConfigs: ${JSON.stringify(r)}`);
      },
      expected: { DescribeConfigs: { resources: [{ resourceType: 2, resourceName: PLT_TOPIC }] } },
    },
    {
      name: `Producer.send ${PLT_TOPIC} partition 0 acks -1`,
      mentions: PLT_TOPIC,
      run: async () => {
        const producer = new plt.Producer({ ...common, serializers: plt.stringSerializers });
        try {
          await producer.send({ acks: -1, messages: PLT_MESSAGES.map((m) => ({ ...m, topic: PLT_TOPIC, partition: 0 })) });
        } finally {
          await producer.close();
        }
      },
      expected: {
        Produce: {
          acks: -1,
          transactionalId: null,
          topics: [
            {
              name: PLT_TOPIC,
              partitions: [
                {
                  index: 0,
                  records: PLT_MESSAGES.map((m) => ({
                    key: m.key,
                    value: m.value,
                    timestamp: String(m.timestamp),
                    headers: [...m.headers].map(([key, value]) => ({ key, value })),
                  })),
                },
              ],
            },
          ],
        },
      },
    },
    {
      name: `Consumer.listOffsets + Consumer.fetch ${PLT_TOPIC} partition 0 from offset 0 (no group)`,
      mentions: null, // ListOffsets names the topic, Fetch v13+ carries its id: both are checked by the golden test
      run: async () => {
        const consumer = new plt.Consumer({ ...common, groupId: 'samsa-golden-unused', deserializers: plt.stringDeserializers });
        try {
          await consumer.listOffsets({ topics: [PLT_TOPIC] });
          const md = await admin.metadata({ topics: [PLT_TOPIC] });
          const topicId = md.topics.get(PLT_TOPIC).id;
          const res = await consumer.fetch({
            node: 1,
            topics: [{ topicId, partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0n, lastFetchedEpoch: -1, partitionMaxBytes: 1_048_576 }] }],
          });
          const got = res.responses[0]?.partitions[0]?.records?.flatMap((b) => b.records.map((r) => String(r.key))) ?? [];
          if (got.join() !== PLT_MESSAGES.map((m) => m.key).join()) throw new Error(`platformatic fetch read back ${got.join()}`);
        } finally {
          await consumer.close();
        }
      },
      expected: {
        // Consumer.listOffsets asks for the latest offset (-1) of every partition it knows.
        ListOffsets: { topics: [{ name: PLT_TOPIC, partitions: [0, 1].map((partitionIndex) => ({ partitionIndex, timestamp: '-1' })) }] },
        Fetch: { topics: [{ topicIdHex, partitions: [{ partition: 0, fetchOffset: '0' }] }] },
      },
    },
    {
      name: `Admin.createTopics + deleteTopics ${PLT_SCRATCH}`,
      mentions: PLT_SCRATCH,
      run: async () => {
        await admin.createTopics({ topics: [PLT_SCRATCH], partitions: 1, replicas: 1 });
        await admin.deleteTopics({ topics: [PLT_SCRATCH] });
        await admin.close();
      },
      expected: { DeleteTopics: { names: [PLT_SCRATCH] } },
    },
    {
      // addOffset takes a consumed message; this one is built by hand with the consumer metadata a
      // group member would have (no group is joined: the tiny broker has no group coordinator).
      name: `transactional Producer ${PLT_TXN_ID}: beginTransaction, send ${PLT_TOPIC} partition 1, addConsumer ${PLT_TXN_GROUP} + addOffset (hand-built message), commit`,
      mentions: PLT_TXN_ID,
      variant: { name: 'txn', apis: ['InitProducerId', 'Produce'] },
      run: async () => {
        const producer = new plt.Producer({ ...common, transactionalId: PLT_TXN_ID, idempotent: true, serializers: plt.stringSerializers });
        const consumer = new plt.Consumer({ ...common, groupId: PLT_TXN_GROUP, deserializers: plt.stringDeserializers });
        try {
          const txn = await producer.beginTransaction();
          await txn.send({ messages: PLT_TXN_MESSAGES.map((m) => ({ ...m, topic: PLT_TOPIC, partition: 1 })) });
          await txn.addConsumer(consumer);
          await txn.addOffset({
            topic: PLT_TOPIC,
            partition: 0,
            offset: 1n,
            metadata: { consumer: { groupId: PLT_TXN_GROUP, generationId: PLT_TXN_GENERATION, memberId: PLT_TXN_MEMBER, coordinatorId: 1 } },
          });
          await txn.commit();
        } finally {
          await consumer.close();
          await producer.close();
        }
      },
      expected: txnExpected({
        transactionalId: PLT_TXN_ID,
        topic: PLT_TOPIC,
        partition: 1,
        records: PLT_TXN_MESSAGES.map((m) => ({ key: m.key, value: m.value, timestamp: String(m.timestamp), headers: [] })),
        groupId: PLT_TXN_GROUP,
        // addOffset commits the offset after the message's
        offsets: [{ partitionIndex: 0, committedOffset: '2' }],
        generationId: PLT_TXN_GENERATION,
        memberId: PLT_TXN_MEMBER,
      }),
    },
  ];
}

// librdkafka's transactional producer through Debian's python3-confluent-kafka (the same
// librdkafka 2.0.2 shared library kcat uses; kcat itself has no transactions).
const PY = argValue('--python', '/usr/bin/python3');
const RDPY_TOPIC = 'golden-rdpy';
const RDPY_CLIENT_ID = 'samsa-golden-rdpy';
const RDPY_TXN_ID = 'golden-rdpy-txn';
const RDPY_TXN_GROUP = 'golden-rdpy-txn-group';
const RDPY_TXN_MESSAGES = [{ key: 'r', value: 'librdkafka transactional value', timestamp: '1700000000020' }];

async function rdpyVersion() {
  const { stdout } = await run(PY, ['-c', 'import confluent_kafka as c; print(c.version()[0], c.libversion()[0])']);
  const [py, rd] = stdout.trim().split(' ');
  return { py, rd };
}

async function rdpySteps(broker) {
  const { py, rd } = await rdpyVersion();
  const script = `
import json, sys
from confluent_kafka import Consumer, Producer, TopicPartition
a = json.loads(sys.argv[1])
common = {'bootstrap.servers': a['bootstrap'], 'client.id': a['clientId']}
p = Producer({**common, 'transactional.id': a['txnId'], 'linger.ms': 50})
p.init_transactions(20)
p.begin_transaction()
for m in a['messages']:
    p.produce(a['topic'], key=m['key'], value=m['value'], partition=1, timestamp=int(m['timestamp']))
c = Consumer({**common, 'group.id': a['group'], 'enable.auto.commit': False})
p.send_offsets_to_transaction([TopicPartition(a['topic'], 0, 3)], c.consumer_group_metadata(), 20)
p.commit_transaction(20)
c.close()
print('committed')
`;
  return [
    {
      name: `confluent_kafka Producer transactional.id=${RDPY_TXN_ID}: init_transactions, begin_transaction, produce ${RDPY_TOPIC} partition 1, send_offsets_to_transaction ${RDPY_TXN_GROUP} (unjoined Consumer's group metadata), commit_transaction`,
      mentions: RDPY_TXN_ID,
      run: async () => {
        const args = {
          bootstrap: broker.bootstrap,
          clientId: RDPY_CLIENT_ID,
          txnId: RDPY_TXN_ID,
          group: RDPY_TXN_GROUP,
          topic: RDPY_TOPIC,
          messages: RDPY_TXN_MESSAGES,
        };
        const { stdout } = await run(PY, ['-c', script, JSON.stringify(args)], '', 60_000);
        if (stdout.trim() !== 'committed') throw new Error(`python confluent_kafka: ${stdout}`);
      },
      expected: {
        ApiVersions: { clientSoftwareName: 'confluent-kafka-python', clientSoftwareVersion: `${py}-rdkafka-${rd}` },
        ...txnExpected({
          transactionalId: RDPY_TXN_ID,
          topic: RDPY_TOPIC,
          partition: 1,
          records: RDPY_TXN_MESSAGES.map((m) => ({ ...m, headers: [] })),
          groupId: RDPY_TXN_GROUP,
          offsets: [{ partitionIndex: 0, committedOffset: '3' }],
          // a Consumer that has not joined its group: no generation, no member id
          generationId: -1,
          memberId: '',
        }),
      },
    },
  ];
}

// ------------------------------------------------------------------------------------------------

const CLIENTS = [
  {
    client: 'kcat',
    clientId: KCAT_CLIENT_ID,
    version: async () => {
      const v = await kcatVersion();
      return `kcat ${v.kcat} / librdkafka ${v.librdkafka}`;
    },
    topics: { [KCAT_TOPIC]: 3 },
    steps: kcatSteps,
  },
  {
    client: 'kafkajs',
    clientId: KAFKAJS_CLIENT_ID,
    version: async () => `kafkajs ${require('kafkajs/package.json').version}`,
    topics: {},
    steps: kafkajsSteps,
  },
  {
    client: 'platformatic',
    clientId: PLT_CLIENT_ID,
    version: async () => `@platformatic/kafka ${pltVersion()}`,
    topics: {},
    steps: platformaticSteps,
  },
  {
    client: 'librdkafka-python',
    clientId: RDPY_CLIENT_ID,
    version: async () => {
      const v = await rdpyVersion();
      return `confluent-kafka-python ${v.py} (Debian python3-confluent-kafka) / librdkafka ${v.rd}`;
    },
    topics: { [RDPY_TOPIC]: 2 },
    steps: rdpySteps,
  },
];

async function capture(spec) {
  const broker = await TinyBroker.start({ topics: spec.topics });
  const clientVersion = await spec.version();
  const steps = await spec.steps(broker);
  const ranges = [];
  try {
    for (const step of steps) {
      const from = broker.requests.length;
      await step.run();
      ranges.push({ step, requests: broker.requests.slice(from) });
    }
  } finally {
    await broker.close();
  }
  const bad = broker.requests.filter((r) => r.outcome !== 'ok');
  if (bad.length) {
    throw new Error(`${spec.client}: requests not served: ${bad.map((r) => `${r.api} v${r.apiVersion} ${r.outcome} ${r.detail ?? ''}`).join('; ')}`);
  }
  const foreign = broker.requests.filter((r) => r.clientId !== spec.clientId);
  if (foreign.length) throw new Error(`${spec.client}: unexpected client ids ${[...new Set(foreign.map((r) => r.clientId))].join(', ')}`);

  const chosen = new Map(); // "api v[ variant]" -> { rec, step, expected, variant }
  // 1. frames that a step declared expectations for (and that mention the step's topic); a step's
  //    `variant` apis get their own (api, version, variant) slot (e.g. a transactional InitProducerId
  //    next to the idempotent one of the same version)
  for (const { step, requests } of ranges) {
    for (const rec of requests) {
      const variant = step.variant?.apis.includes(rec.api) ? step.variant.name : undefined;
      const key = `${rec.api} v${rec.apiVersion}${variant ? ` ${variant}` : ''}`;
      if (chosen.has(key) || !(rec.api in step.expected)) continue;
      if (step.mentions !== null) {
        const needle = typeof step.mentions === 'string' ? Buffer.from(step.mentions, 'utf8') : step.mentions;
        // Search after the header: the client ids contain the topic names.
        const afterHeader = rec.frame.subarray(10 + Math.max(rec.frame.readInt16BE(8), 0));
        if (rec.api !== 'ApiVersions' && !afterHeader.includes(needle)) continue;
      }
      chosen.set(key, { rec, step, expected: step.expected[rec.api], variant });
    }
  }
  // 2. every other (api, version): its first frame not already kept, header checks only
  const kept = new Set([...chosen.values()].map((c) => c.rec));
  for (const { step, requests } of ranges) {
    for (const rec of requests) {
      const key = `${rec.api} v${rec.apiVersion}`;
      if (!chosen.has(key) && !kept.has(rec)) chosen.set(key, { rec, step, expected: {}, variant: undefined });
    }
  }
  for (const { step } of ranges) {
    for (const api of Object.keys(step.expected)) {
      const picks = [...chosen.values()].filter((c) => c.rec.api === api);
      if (!picks.some((c) => c.step === step && c.expected === step.expected[api])) {
        const by = picks.filter((c) => Object.keys(c.expected).length > 0).map((c) => `${c.rec.api} v${c.rec.apiVersion} from "${c.step.name}"`);
        if (by.length === 0) throw new Error(`${spec.client}: no ${api} frame of "${step.name}" matched its expectations`);
        console.warn(`${spec.client}: "${step.name}" ${api} expectations not used (already have ${by.join(', ')})`);
      }
    }
  }
  const dir = join(fixturesDir, spec.client);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const entries = [];
  const order = (a, b) => a.rec.apiKey - b.rec.apiKey || a.rec.apiVersion - b.rec.apiVersion || (a.variant ?? '').localeCompare(b.variant ?? '', 'en');
  for (const { rec, step, expected, variant } of [...chosen.values()].sort(order)) {
    const file = `${spec.client}/${kebab(rec.api)}-v${rec.apiVersion}${variant ? `-${variant}` : ''}.bin`;
    writeFileSync(join(fixturesDir, file), rec.frame);
    entries.push({
      file,
      client: spec.client,
      clientVersion,
      api: rec.api,
      apiKey: rec.frame.readInt16BE(0),
      apiVersion: rec.frame.readInt16BE(2),
      ...(variant ? { variant } : {}),
      bytes: rec.frame.length,
      step: step.name,
      header: { clientId: spec.clientId, correlationId: rec.frame.readInt32BE(4) },
      expected,
    });
  }
  const seen = [...new Set(broker.requests.map((r) => `${r.api} v${r.apiVersion}`))];
  console.log(`${spec.client} (${clientVersion}): ${broker.requests.length} requests; fixtures: ${seen.join(', ')}`);
  return entries;
}

async function main() {
  const manifestPath = join(fixturesDir, 'manifest.json');
  let manifest = [];
  try {
    manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  } catch {
    manifest = [];
  }
  let failed = 0;
  for (const spec of CLIENTS) {
    if (ONLY && ONLY !== spec.client) continue;
    try {
      const entries = await capture(spec);
      manifest = [...manifest.filter((m) => m.client !== spec.client), ...entries];
    } catch (e) {
      failed++;
      console.error(`FAILED ${spec.client}: ${e instanceof Error ? e.stack : e}`);
    }
  }
  manifest.sort((a, b) => a.file.localeCompare(b.file, 'en'));
  writeFileSync(manifestPath, JSON.stringify(manifest, null, 2) + '\n');
  if (failed) process.exitCode = 1;
}

await main();
