/**
 * @platformatic/kafka 2.12.1 against a 3-broker Samsa cluster: Admin (metadata, createTopics,
 * listTopics, describeConfigs, listOffsets, deleteTopics) and Producer (acks 0/1/-1, keys, headers,
 * gzip/snappy/lz4, auto topic creation). Topics have replication factor 1. It speaks the flexible
 * versions (compact strings, tagged fields). Its group consumer is covered by groups.test.ts; here
 * records are read back with raw Fetch v12 requests (@samsa/protocol), and once with platformatic's
 * own Fetch v17 codec (topic ids) on a connection of its own, long poll included. Its sockets are tapped
 * (through its `plt:kafka:connections:connects` diagnostics channel) and every request and response
 * is decoded with @samsa/protocol, so each test names and asserts the negotiated API versions.
 *
 * Node 20: the package declares Node >= 22. What it needs from 22 at runtime:
 *  - `Promise.withResolvers` (V8 12), used by every promise-style call (apis/callbacks.js
 *    createPromisifiedCallback) and by async gzip: without it each call throws
 *    "Promise.withResolvers is not a function". Polyfilled by clients/promise-with-resolvers.ts.
 *  - `zlib.zstdCompressSync` (Node 22.15+): zstd compression throws UnsupportedCompressionError;
 *    the zstd test is skipped where zlib has no zstd.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import zlib from 'node:zlib';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { CreateTopicsResponse, DeleteTopicsResponse, MetadataRequest, MetadataResponse, ProduceRequest, ProduceResponse } from '@samsa/protocol';
import { describeCluster, TestCluster, until } from './harness.js';
import { WireLog, fetchPartition, readTopic, waitForBrokerMetadata, waitForPartitionsServed, type FetchedRecord } from './clients/wire.js';
import './clients/promise-with-resolvers.js';

const { Admin, ConfigResourceTypes, Connection, Producer, ProduceAcks, fetchV17, stringSerializers } = await import('@platformatic/kafka');
type AdminT = InstanceType<typeof Admin>;
type ProducerT = InstanceType<typeof Producer<string, string, string, string>>;

const HAS_ZSTD = typeof (zlib as { zstdCompressSync?: unknown }).zstdCompressSync === 'function';

/** The versions @platformatic/kafka 2.12.1 picks against Samsa: the highest both sides implement. */
const V = {
  ApiVersions: 3,
  Metadata: 12,
  CreateTopics: 7,
  DeleteTopics: 6,
  Produce: 11,
  ListOffsets: 9,
  DescribeConfigs: 4,
  /** Not negotiated: its consumer needs groups; the test calls its Fetch v17 codec directly. */
  Fetch: 17,
} as const;

const TOPIC_ALREADY_EXISTS = 36;
const UNKNOWN_TOPIC_OR_PARTITION = 3;
const NOT_CONTROLLER = 41;

describeCluster('@platformatic/kafka 2.12.1 against a 3-broker cluster', () => {
  let c: TestCluster;
  const wire = new WireLog();
  const onConnect = (ctx: unknown) => {
    const socket = (ctx as { connection?: { socket?: Socket } }).connection?.socket;
    if (socket) wire.tap(socket);
  };
  let admin: AdminT;
  let producer: ProducerT;

  /**
   * [topic, error code] of the CreateTopics/DeleteTopics answers in `w`. platformatic sends admin
   * requests to a bootstrap broker until a NOT_CONTROLLER answer makes it look the controller up
   * (by design); such answers are checked to come from a broker that is not the controller, then skipped.
   */
  async function adminAnswers(w: WireLog, api: 'CreateTopics' | 'DeleteTopics'): Promise<Array<[string | null, number]>> {
    const controller = c.broker((await c.controllerId())!).address;
    const out: Array<[string | null, number]> = [];
    for (const x of w.exchanges.filter((e) => e.api === api && e.response !== undefined)) {
      const topics: Array<[string | null, number]> =
        api === 'CreateTopics'
          ? (x.response as CreateTopicsResponse).topics.map((t) => [t.name, t.errorCode])
          : (x.response as DeleteTopicsResponse).responses.map((t) => [t.name, t.errorCode]);
      if (topics.every(([, code]) => code === NOT_CONTROLLER)) {
        expect(x.broker).not.toBe(controller);
        continue;
      }
      expect(x.broker).toBe(controller);
      out.push(...topics);
    }
    return out;
  }

  beforeAll(async () => {
    // published right after the client created the socket, before anything is written to it
    subscribe('tracing:plt:kafka:connections:connects:end', onConnect);
    c = await TestCluster.start({ brokers: 3 });
    await waitForBrokerMetadata(c.bootstrap.split(','), () => c.controllerId());
    const common = { bootstrapBrokers: c.bootstrap.split(','), retries: 2, retryDelay: 100, timeout: 20_000 };
    admin = new Admin({ clientId: 'platformatic-e2e-admin', ...common });
    producer = new Producer({ clientId: 'platformatic-e2e-producer', serializers: stringSerializers, ...common });
  });

  afterAll(async () => {
    await producer?.close();
    await admin?.close();
    unsubscribe('tracing:plt:kafka:connections:connects:end', onConnect);
    await c?.stop();
    console.log(`@platformatic/kafka 2.12.1 negotiated (api: versions seen on the wire): ${JSON.stringify(wire.summary())}`);
  });

  it(`platformatic – admin.metadata (ApiVersions v${V.ApiVersions}, Metadata v${V.Metadata}): 3 brokers, the controller, the cluster id`, async () => {
    const mark = wire.exchanges.length;
    const md = await admin.metadata({ topics: [] });
    expect([...md.brokers.keys()].sort()).toEqual([0, 1, 2]);
    for (const [id, b] of md.brokers) expect(`${b.host}:${b.port}`).toBe(c.broker(id).address);
    expect(md.controllerId).toBe(await c.controllerId());
    expect(md.id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    const w = wire.since(mark);
    expect(w.versions('ApiVersions')).toEqual([V.ApiVersions]);
    expect(w.versions('Metadata')).toEqual([V.Metadata]);
    expect(wire.problems()).toEqual([]);
  });

  const adminTopic = 'plt-admin';
  it(`platformatic – admin.createTopics with partitions, replicas 1 and configs (CreateTopics v${V.CreateTopics})`, async () => {
    const mark = wire.exchanges.length;
    const created = await admin.createTopics({
      topics: [adminTopic],
      partitions: 4,
      replicas: 1,
      configs: [
        { name: 'retention.ms', value: '3600000' },
        { name: 'max.message.bytes', value: '2000000' },
      ],
    });
    expect(created).toHaveLength(1);
    // CreateTopics v5+ answers with the partitions, replication factor and the topic's configs
    expect(created[0]).toMatchObject({ name: adminTopic, partitions: 4, replicas: 1 });
    // v5+ (KIP-525) answers list the new topic's configs: the overrides and every default
    expect(created[0]!.configuration).toMatchObject({ 'retention.ms': '3600000', 'max.message.bytes': '2000000', 'cleanup.policy': 'delete' });
    expect(Object.keys(created[0]!.configuration).length).toBeGreaterThan(20);
    // v7 carries the topic id; it is the one in ZooKeeper
    const assignment = await c.admin.getTopicAssignment(adminTopic);
    expect(assignment).not.toBeNull();
    expect(created[0]!.id).toBe(uuid(assignment!.topicId));
    expect([...assignment!.partitions.keys()].sort()).toEqual([0, 1, 2, 3]);
    for (const replicas of assignment!.partitions.values()) expect(replicas).toHaveLength(1);
    expect(await c.admin.getTopicConfig(adminTopic)).toMatchObject({ 'retention.ms': '3600000', 'max.message.bytes': '2000000' });
    const w = wire.since(mark);
    expect(w.versions('CreateTopics')).toEqual([V.CreateTopics]);
    expect(await adminAnswers(w, 'CreateTopics')).toEqual([[adminTopic, 0]]);
    const answer = (w.responses<19>('CreateTopics') as CreateTopicsResponse[]).at(-1)!.topics[0]!;
    expect(answer).toMatchObject({ numPartitions: 4, replicationFactor: 1, topicConfigErrorCode: 0 });
    const source = (name: string) => answer.configs?.find((x) => x.name === name)?.configSource;
    expect(source('retention.ms')).toBe(1); // DYNAMIC_TOPIC_CONFIG (TOPIC_CONFIG on the wire)
    expect([4, 5]).toContain(source('segment.bytes')); // STATIC_BROKER_CONFIG or DEFAULT_CONFIG
    // the answer waited for the leaders, as Kafka's does
    for (let p = 0; p < 4; p++) expect(await c.leaderOf(adminTopic, p)).toBeGreaterThanOrEqual(0);
  });

  it(`platformatic – admin.metadata of a topic and listTopics (Metadata v${V.Metadata})`, async () => {
    const mark = wire.exchanges.length;
    const md = await until(async () => {
      const m = await admin.metadata({ topics: [adminTopic], forceUpdate: true });
      const t = m.topics.get(adminTopic);
      return t && t.partitions.every((p) => p.leader >= 0) ? m : null;
    }, `leaders of ${adminTopic} in metadata`);
    const t = md.topics.get(adminTopic)!;
    expect(t.partitionsCount).toBe(4);
    expect(t.id).toBe(uuid((await c.admin.getTopicAssignment(adminTopic))!.topicId));
    for (let p = 0; p < 4; p++) {
      const leader = await c.leaderOf(adminTopic, p);
      expect(t.partitions[p]).toMatchObject({ leader, replicas: [leader], isr: [leader] });
      expect(t.partitions[p]!.leaderEpoch).toBeGreaterThanOrEqual(0);
    }
    expect(await admin.listTopics()).toContain(adminTopic);
    expect(wire.since(mark).versions('Metadata')).toEqual([V.Metadata]);
  });

  it(`platformatic – admin.createTopics of an existing topic gives TOPIC_ALREADY_EXISTS (CreateTopics v${V.CreateTopics})`, async () => {
    const mark = wire.exchanges.length;
    const err = await admin.createTopics({ topics: [adminTopic], partitions: 2, replicas: 1 }).then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(err).not.toBeNull();
    expect(JSON.stringify(serializeError(err))).toContain('TOPIC_ALREADY_EXISTS');
    expect(await adminAnswers(wire.since(mark), 'CreateTopics')).toEqual([[adminTopic, TOPIC_ALREADY_EXISTS]]);
    expect((await c.admin.getTopicAssignment(adminTopic))!.partitions.size).toBe(4);
  });

  it(`platformatic – admin.describeConfigs shows the configs it created the topic with (DescribeConfigs v${V.DescribeConfigs})`, async () => {
    const mark = wire.exchanges.length;
    const d = await admin.describeConfigs({
      resources: [
        { resourceType: ConfigResourceTypes.TOPIC, resourceName: adminTopic, configurationKeys: ['retention.ms', 'max.message.bytes', 'segment.bytes'] },
      ],
      includeSynonyms: true,
      includeDocumentation: true,
    });
    expect(wire.since(mark).versions('DescribeConfigs')).toEqual([V.DescribeConfigs]);
    expect(d).toHaveLength(1);
    expect(d[0]).toMatchObject({ resourceType: ConfigResourceTypes.TOPIC, resourceName: adminTopic });
    const byName = new Map(d[0]!.configs.map((e) => [e.name, e]));
    expect([...byName.keys()].sort()).toEqual(['max.message.bytes', 'retention.ms', 'segment.bytes']);
    const retention = byName.get('retention.ms')!;
    expect(retention).toMatchObject({ value: '3600000', configSource: 1, isSensitive: false, configType: 5 }); // LONG
    expect(retention.synonyms[0]).toMatchObject({ name: 'retention.ms', value: '3600000', source: 1 });
    expect(retention.documentation).toBeTruthy();
    expect(byName.get('max.message.bytes')).toMatchObject({ value: '2000000', configSource: 1 });
    expect([4, 5]).toContain(byName.get('segment.bytes')!.configSource);
  });

  function messages(topic: string, tag: string, n: number) {
    return Array.from({ length: n }, (_, i) => ({
      topic,
      key: `${tag}-key-${i % 11}`,
      value: `${tag}-value-${i}-${'y'.repeat(i % 40)}`,
      headers: { seq: String(i), origin: 'platformatic', ...(i % 4 === 0 ? { 'trace-id': `t-${tag}-${i}` } : {}) },
      ...(i % 10 === 9 ? { partition: 1 } : {}),
    }));
  }
  type Sent = ReturnType<typeof messages>;

  /** `records` (read back with Fetch) hold exactly `sent`: keys, values, headers, offsets without gaps, order. */
  function checkReadBack(sent: Sent, records: FetchedRecord[], partitions: number) {
    expect(records).toHaveLength(sent.length);
    const byValue = new Map(records.map((r) => [r.value, r]));
    const keyPartition = new Map<string, number>();
    for (const m of sent) {
      const r = byValue.get(m.value);
      expect(r, `record ${m.value}`).toBeDefined();
      expect(r!.key).toBe(m.key);
      expect(Object.fromEntries(r!.headers)).toEqual(m.headers);
      if (m.partition !== undefined) expect(r!.partition).toBe(m.partition);
      else {
        const kp = keyPartition.get(m.key);
        if (kp === undefined) keyPartition.set(m.key, r!.partition);
        else expect(r!.partition, `key ${m.key}`).toBe(kp);
      }
    }
    for (let p = 0; p < partitions; p++) {
      const inP = records.filter((r) => r.partition === p);
      expect(inP.map((r) => r.offset)).toEqual(inP.map((_, i) => i));
      const seq = inP.map((r) => Number(r.headers.find(([k]) => k === 'seq')![1]));
      expect(seq).toEqual([...seq].sort((a, b) => a - b));
    }
  }

  async function createTopic(topic: string, partitions: number) {
    await admin.createTopics({ topics: [topic], partitions, replicas: 1 });
    await waitForPartitionsServed(c, topic, partitions);
  }

  /** Sends, checks the wire (version, acks, no error), reads back. */
  async function sendAndReadBack(topic: string, partitions: number, sent: Sent, acks: number, compression?: 'gzip' | 'snappy' | 'lz4' | 'zstd') {
    const mark = wire.exchanges.length;
    const result = await producer.send({ messages: sent, acks, ...(compression ? { compression } : {}) });
    const w = wire.since(mark);
    expect(w.versions('Produce')).toEqual([V.Produce]);
    const reqs = w.requests<0>('Produce') as ProduceRequest[];
    expect(reqs.length).toBeGreaterThan(0);
    expect(reqs.map((r) => r.acks)).toEqual(reqs.map(() => acks));
    const res = w.responses<0>('Produce') as ProduceResponse[];
    expect(res.length).toBe(reqs.length);
    expect(res.flatMap((r) => r.responses.flatMap((t) => t.partitionResponses.filter((p) => p.errorCode !== 0)))).toEqual([]);
    const { records } = await readTopic(c, topic, partitions);
    checkReadBack(sent, records, partitions);
    expect(new Set(records.map((r) => r.compression))).toEqual(new Set([compression ?? 'none']));
    // the producer's report: the base offset of each partition's batch (first send on a new topic: 0)
    const used = [...new Set(records.map((r) => r.partition))].sort();
    expect(result.offsets?.map((o) => [o.topic, o.partition, o.offset]).sort((a, b) => (a[1] as number) - (b[1] as number))).toEqual(
      used.map((p) => [topic, p, 0n]),
    );
    return records;
  }

  it(`platformatic – producer.send acks=1 with keys, headers and explicit partitions (Produce v${V.Produce})`, async () => {
    const topic = 'plt-acks1';
    await createTopic(topic, 3);
    await sendAndReadBack(topic, 3, messages(topic, 'a1', 60), ProduceAcks.LEADER);
  });

  it(`platformatic – producer.send acks=-1 with gzip, several partitions, keys and headers (Produce v${V.Produce})`, async () => {
    const topic = 'plt-acks-all-gzip';
    await createTopic(topic, 5);
    const records = await sendAndReadBack(topic, 5, messages(topic, 'g', 200), ProduceAcks.ALL, 'gzip');
    expect(new Set(records.map((r) => r.partition)).size).toBeGreaterThanOrEqual(3);
    // appending: the next send reports the next offset
    const p1 = records.filter((r) => r.partition === 1).length;
    const more = await producer.send({ messages: [{ topic, key: 'late', value: 'late-1', partition: 1 }], acks: ProduceAcks.ALL, compression: 'gzip' });
    expect(more.offsets).toEqual([{ topic, partition: 1, offset: BigInt(p1) }]);
    const back = await fetchPartition(c.broker(await c.leaderOf(topic, 1)).address, topic, 1);
    expect(back.records.at(-1)).toMatchObject({ offset: p1, key: 'late', value: 'late-1', compression: 'gzip' });
  });

  for (const codec of ['snappy', 'lz4', 'zstd'] as const) {
    it.skipIf(codec === 'zstd' && !HAS_ZSTD)(`platformatic – producer.send acks=-1 with ${codec} (Produce v${V.Produce})`, async () => {
      const topic = `plt-${codec}`;
      await createTopic(topic, 2);
      await sendAndReadBack(topic, 2, messages(topic, codec, 50), ProduceAcks.ALL, codec);
    });
  }

  it(`platformatic – producer.send acks=0: no response expected, the record still arrives (Produce v${V.Produce})`, async () => {
    const topic = 'plt-acks0';
    await createTopic(topic, 1);
    const mark = wire.exchanges.length;
    await producer.send({ messages: [{ topic, key: 'k', value: 'fire-and-forget', headers: { h: 'v' } }], acks: ProduceAcks.NO_RESPONSE });
    const w = wire.since(mark);
    expect(w.versions('Produce')).toEqual([V.Produce]);
    expect((w.requests<0>('Produce') as ProduceRequest[]).map((r) => r.acks)).toEqual([0]);
    // no answer is sent for acks=0
    expect(w.exchanges.filter((x) => x.api === 'Produce').map((x) => x.response)).toEqual([undefined]);
    const address = c.broker(await c.leaderOf(topic, 0)).address;
    const back = await until(
      async () => {
        const r = await fetchPartition(address, topic, 0);
        return r.records.length > 0 ? r.records : null;
      },
      'the acks=0 record',
      10_000,
    );
    expect(back).toMatchObject([{ offset: 0, key: 'k', value: 'fire-and-forget', headers: [['h', 'v']] }]);
  });

  it(`platformatic – producer.send with autocreateTopics: Metadata v${V.Metadata} creates the topic and the record lands (Produce v${V.Produce})`, async () => {
    const topic = 'plt-auto-created';
    expect(await c.admin.topicExists(topic)).toBe(false);
    const mark = wire.exchanges.length;
    const result = await producer.send({ messages: [{ topic, key: 'auto', value: 'created-on-demand' }], acks: ProduceAcks.LEADER, autocreateTopics: true });
    expect(result.offsets).toEqual([{ topic, partition: 0, offset: 0n }]);
    const w = wire.since(mark);
    expect(w.versions('Metadata')).toEqual([V.Metadata]);
    expect(w.versions('Produce')).toEqual([V.Produce]);
    expect((w.requests<3>('Metadata') as MetadataRequest[]).some((r) => r.allowAutoTopicCreation && r.topics?.some((t) => t.name === topic))).toBe(true);
    const codes = (w.responses<3>('Metadata') as MetadataResponse[]).flatMap((r) => r.topics.filter((t) => t.name === topic).map((t) => t.errorCode));
    expect(codes[0]).toBe(5); // LEADER_NOT_AVAILABLE while the new topic gets its leader, as Kafka answers
    expect(codes.at(-1)).toBe(0);
    expect(await c.admin.topicExists(topic)).toBe(true);
    const partitions = (await c.admin.getTopicAssignment(topic))!.partitions.size;
    const { records } = await readTopic(c, topic, partitions);
    expect(records.map((r) => [r.key, r.value])).toEqual([['auto', 'created-on-demand']]);
  });

  it(`platformatic – admin.listOffsets (ListOffsets v${V.ListOffsets}) earliest and latest match what was produced`, async () => {
    const topic = 'plt-acks1';
    const { highWatermarks } = await readTopic(c, topic, 3);
    const mark = wire.exchanges.length;
    const partitions = [0, 1, 2];
    const latest = await admin.listOffsets({ topics: [{ name: topic, partitions: partitions.map((p) => ({ partitionIndex: p, timestamp: -1n })) }] });
    const earliest = await admin.listOffsets({ topics: [{ name: topic, partitions: partitions.map((p) => ({ partitionIndex: p, timestamp: -2n })) }] });
    expect(wire.since(mark).versions('ListOffsets')).toEqual([V.ListOffsets]);
    const offsetsOf = (r: typeof latest) =>
      r.flatMap((t) => t.partitions.map((p) => [p.partitionIndex, p.offset] as [number, bigint])).sort((a, b) => a[0] - b[0]);
    expect(offsetsOf(latest)).toEqual(highWatermarks.map((hw, p) => [p, BigInt(hw)]));
    expect(offsetsOf(earliest)).toEqual(partitions.map((p) => [p, 0n]));
  });

  /** platformatic's own Fetch v17 (topic ids) on a connection to `broker`. */
  async function pltFetch(brokerId: number, topicId: string, partition: number, fetchOffset: bigint, maxWaitMs: number, minBytes: number) {
    const b = c.broker(brokerId);
    const conn = new Connection('platformatic-e2e-fetch', { requestTimeout: maxWaitMs + 20_000 });
    try {
      await conn.connect(b.host, Number(b.address.slice(b.address.lastIndexOf(':') + 1)));
      const res = await fetchV17.api.async(
        conn,
        maxWaitMs,
        minBytes,
        16 * 1024 * 1024,
        0,
        0,
        -1,
        [{ topicId, partitions: [{ partition, currentLeaderEpoch: -1, fetchOffset, lastFetchedEpoch: -1, partitionMaxBytes: 8 * 1024 * 1024 }] }],
        [],
        '',
      );
      expect(res.errorCode).toBe(0);
      expect(res.responses).toHaveLength(1);
      expect(res.responses[0]!.topicId).toBe(topicId);
      const p = res.responses[0]!.partitions[0]!;
      expect(p).toMatchObject({ partitionIndex: partition, errorCode: 0 });
      const rows = (p.records ?? []).flatMap((batch) =>
        batch.records.map((r) => ({
          partition,
          offset: Number(batch.firstOffset) + r.offsetDelta,
          key: r.key?.toString() ?? null,
          value: r.value?.toString() ?? null,
          headers: r.headers.map(([k, v]) => [k?.toString(), v?.toString() ?? null]),
        })),
      );
      return { rows: rows.filter((r) => BigInt(r.offset) >= fetchOffset), highWatermark: p.highWatermark };
    } finally {
      await conn.close();
    }
  }

  it(`platformatic – its own Fetch v${V.Fetch} codec (topic ids, flexible) reads back gzip batches; a long poll wakes up on new data`, async () => {
    const topic = 'plt-acks-all-gzip';
    const md = await admin.metadata({ topics: [topic], forceUpdate: true });
    const topicId = md.topics.get(topic)!.id;
    const { records: expected } = await readTopic(c, topic, 5);
    const mark = wire.exchanges.length;
    const got = [];
    for (let p = 0; p < 5; p++) got.push(...(await pltFetch(await c.leaderOf(topic, p), topicId, p, 0n, 0, 0)).rows);
    expect(wire.since(mark).versions('Fetch')).toEqual([V.Fetch]);
    expect(got).toEqual(expected.map((r) => ({ partition: r.partition, offset: r.offset, key: r.key, value: r.value, headers: r.headers })));

    // long poll: a Fetch at the end of the log waits until a record arrives
    const leader = await c.leaderOf(topic, 0);
    const end = BigInt(expected.filter((r) => r.partition === 0).length);
    const t0 = Date.now();
    const mark2 = wire.exchanges.length;
    const waiting = pltFetch(leader, topicId, 0, end, 15_000, 1);
    await until(() => wire.since(mark2).exchanges.some((x) => x.api === 'Fetch'), 'the long-poll Fetch on the wire', 10_000);
    await producer.send({ messages: [{ topic, key: 'wake', value: 'wake-up', partition: 0 }], acks: ProduceAcks.LEADER });
    const { rows, highWatermark } = await waiting;
    expect(Date.now() - t0).toBeLessThan(12_000);
    expect(rows).toEqual([{ partition: 0, offset: Number(end), key: 'wake', value: 'wake-up', headers: [] }]);
    expect(highWatermark).toBe(end + 1n);
  });

  it(`platformatic – admin.deleteTopics: the topic leaves metadata; a second delete gives UNKNOWN_TOPIC_OR_PARTITION (DeleteTopics v${V.DeleteTopics})`, async () => {
    const mark = wire.exchanges.length;
    await admin.deleteTopics({ topics: [adminTopic] });
    const w = wire.since(mark);
    expect(w.versions('DeleteTopics')).toEqual([V.DeleteTopics]);
    expect(await adminAnswers(w, 'DeleteTopics')).toEqual([[adminTopic, 0]]);
    await until(async () => !(await admin.listTopics()).includes(adminTopic), `${adminTopic} gone from metadata`, 20_000);
    // as in Kafka, the controller removes the znode once the replicas are gone
    await until(async () => !(await c.admin.topicExists(adminTopic)), `${adminTopic} gone from ZooKeeper`, 20_000);

    const mark2 = wire.exchanges.length;
    const err = await admin.deleteTopics({ topics: [adminTopic] }).then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(err).not.toBeNull();
    expect(JSON.stringify(serializeError(err))).toContain('UNKNOWN_TOPIC_OR_PARTITION');
    // platformatic retries it (retries: 2 here); every answer is the same
    const answers = await adminAnswers(wire.since(mark2), 'DeleteTopics');
    expect(answers.length).toBeGreaterThan(0);
    expect(answers).toEqual(answers.map(() => [adminTopic, UNKNOWN_TOPIC_OR_PARTITION]));
  });

  it('platformatic – every request and response it exchanged decodes with @samsa/protocol', () => {
    expect(wire.problems()).toEqual([]);
    expect(wire.exchanges.length).toBeGreaterThan(20);
  });
});

/** ZooKeeper's topic id (base64url, as Kafka stores it) in the UUID form platformatic prints. */
function uuid(zkTopicId: string | null): string {
  expect(zkTopicId).not.toBeNull();
  const h = Buffer.from(zkTopicId!, 'base64url').toString('hex');
  expect(h).toHaveLength(32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** Error chains (platformatic nests MultipleErrors → ResponseError → per-topic errors) as plain data. */
function serializeError(e: unknown, depth = 0): unknown {
  if (depth > 6 || e === null || typeof e !== 'object') return e;
  const o = e as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of Object.getOwnPropertyNames(o)) {
    if (k === 'stack') continue;
    const v = o[k];
    out[k] = Array.isArray(v)
      ? v.map((x) => serializeError(x, depth + 1))
      : typeof v === 'object'
        ? serializeError(v, depth + 1)
        : typeof v === 'bigint'
          ? String(v)
          : v;
  }
  return out;
}
