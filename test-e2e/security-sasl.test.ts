/**
 * SASL on a SASL_PLAINTEXT client listener (issue #29): 3 brokers whose inter-broker listener is
 * SASL_PLAINTEXT too (PLAIN, the admin user of the JAAS config); SCRAM users created through
 * AlterUserScramCredentials by our admin client. kcat (librdkafka 2.0.2) with SCRAM-SHA-512 and
 * KafkaJS 2.2.4 with SCRAM-SHA-256 and PLAIN produce and consume; a wrong password is an
 * authentication failure while the broker serves others; garbage SASL frames crash nothing.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import kafkajs from 'kafkajs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Admin, Connection, type SaslOptions } from '@samsa/client';
import { API_KEYS, encodeRequest } from '@samsa/protocol';
import { newTopicId } from '@samsa/zk-paths';
import { describeCluster, TestCluster, until } from './harness.js';
import { RawConn } from './clients/raw-conn.js';
import { kcatScram } from './clients/secure-helpers.js';

const run = promisify(execFile);
const { Kafka, logLevel } = kafkajs;

const ADMIN: SaslOptions = { mechanism: 'PLAIN', username: 'admin', password: 'admin-secret' };
const JAAS =
  'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" ' +
  'user_admin="admin-secret" user_alice="alice-secret";';

describeCluster('SASL_PLAINTEXT listeners (PLAIN, SCRAM-SHA-256/512) with inter-broker SASL', () => {
  let c: TestCluster;
  let admin: Admin;

  const kcat = (args: string[], user: string, password: string, timeout = 60_000) =>
    run('kcat', ['-b', c.bootstrap, ...kcatScram(user, password), ...args], { timeout, maxBuffer: 16 * 1024 * 1024 });

  beforeAll(async () => {
    c = await TestCluster.start({
      brokers: 3,
      sasl: ADMIN,
      overrides: {
        'listener.security.protocol.map': 'PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT',
        'sasl.enabled.mechanisms': 'PLAIN,SCRAM-SHA-256,SCRAM-SHA-512',
        'sasl.mechanism.inter.broker.protocol': 'PLAIN',
        'listener.name.plaintext.plain.sasl.jaas.config': JAAS,
      },
    });
    admin = new Admin({ bootstrapServers: c.bootstrap, sasl: ADMIN, clientId: 'sasl-e2e-admin' });
    await admin.alterUserScramCredentials([
      { user: 'kcat-user', mechanism: 'SCRAM-SHA-512', password: 'kcat-secret' },
      { user: 'kafkajs-user', mechanism: 'SCRAM-SHA-256', password: 'kafkajs-secret', iterations: 8192 },
    ]);
  });
  afterAll(async () => {
    await admin?.close();
    await c?.stop();
  });

  it('SASL – AlterUserScramCredentials writes Kafka’s znode and DescribeUserScramCredentials reports mechanism and iterations', async () => {
    const described = await admin.describeUserScramCredentials(['kcat-user', 'kafkajs-user']);
    expect(described).toEqual([
      { user: 'kcat-user', credentials: [{ mechanism: 'SCRAM-SHA-512', iterations: 4096 }] },
      { user: 'kafkajs-user', credentials: [{ mechanism: 'SCRAM-SHA-256', iterations: 8192 }] },
    ]);
    const node = (await c.admin.zk.getOrNull('/config/users/kcat-user'))!;
    const json = JSON.parse(node.data.toString()) as { version: number; config: Record<string, string> };
    expect(json.version).toBe(1);
    expect(json.config['SCRAM-SHA-512']).toMatch(/^salt=[A-Za-z0-9+/=]+,stored_key=[A-Za-z0-9+/=]+,server_key=[A-Za-z0-9+/=]+,iterations=4096$/);
    await expect(admin.describeUserScramCredentials(['nobody'])).rejects.toThrow(/does not exist/);
  });

  it('SASL – kcat with SCRAM-SHA-512 produces (acks=all, RF=3 replicated over SASL) and consumes; a wrong password fails authentication and the broker serves others', async () => {
    const topic = 'sasl-kcat';
    await c.admin.createTopic(topic, newTopicId(), new Map([0, 1, 2].map((p) => [p, [p % 3, (p + 1) % 3, (p + 2) % 3]])), {});
    await c.waitForLeaders(topic, 3);
    // the credential reaches every broker through /config/changes
    await until(
      async () => (await kcat(['-L', '-t', topic], 'kcat-user', 'kcat-secret', 20_000).catch(() => undefined))?.stdout.includes(' 3 brokers:'),
      'kcat authenticated metadata',
      30_000,
      250,
    );

    const lines = Array.from({ length: 300 }, (_, i) => `k${i}:v${i}`).join('\n') + '\n';
    const produce = kcat(['-P', '-t', topic, '-K:', '-X', 'acks=all', '-X', 'message.timeout.ms=15000'], 'kcat-user', 'kcat-secret');
    produce.child.stdin!.end(lines);
    await produce;
    // acks=all answered in time with all 3 replicas still in the ISR: followers fetch over SASL
    for (let p = 0; p < 3; p++) expect((await c.admin.getPartitionState({ topic, partition: p }))?.state.isr).toHaveLength(3);

    const { stdout } = await kcat(['-C', '-t', topic, '-e', '-o', 'beginning', '-q', '-f', '%k:%s\\n'], 'kcat-user', 'kcat-secret');
    expect(stdout.split('\n').filter(Boolean).sort()).toEqual(lines.split('\n').filter(Boolean).sort());

    const bad = await kcat(['-L', '-m', '5'], 'kcat-user', 'wrong', 20_000).then(
      () => undefined,
      (err: { stderr?: string; message: string }) => err.stderr ?? err.message,
    );
    expect(bad).toMatch(/Authentication failed|SASL authentication error/);
    // still serving
    expect((await kcat(['-L', '-t', topic], 'kcat-user', 'kcat-secret')).stdout).toContain(' 3 brokers:');
  });

  for (const sasl of [
    { mechanism: 'scram-sha-256', username: 'kafkajs-user', password: 'kafkajs-secret' },
    { mechanism: 'plain', username: 'alice', password: 'alice-secret' },
  ] as const) {
    it(`SASL – KafkaJS with ${sasl.mechanism} produces, consumes in a group and runs admin calls`, async () => {
      const kafka = new Kafka({
        clientId: `kafkajs-${sasl.mechanism}`,
        brokers: c.bootstrap.split(','),
        sasl,
        retry: { retries: 5, initialRetryTime: 100 },
        logLevel: logLevel.NOTHING,
      });
      const topic = `sasl-kafkajs-${sasl.mechanism}`;
      const kadmin = kafka.admin();
      await kadmin.connect();
      await kadmin.createTopics({ topics: [{ topic, numPartitions: 2, replicationFactor: 3 }], waitForLeaders: true });
      expect(await kadmin.listTopics()).toContain(topic);
      const producer = kafka.producer();
      await producer.connect();
      await producer.send({ topic, acks: -1, messages: Array.from({ length: 20 }, (_, i) => ({ key: `k${i}`, value: `v${i}` })) });
      const consumer = kafka.consumer({ groupId: `g-${sasl.mechanism}`, sessionTimeout: 10_000, heartbeatInterval: 500 });
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      const got: string[] = [];
      await consumer.run({
        eachMessage: async ({ message }) => {
          got.push(message.value!.toString());
        },
      });
      await until(() => got.length >= 20, 'KafkaJS consumed 20 messages', 30_000);
      expect(got.sort()).toEqual(Array.from({ length: 20 }, (_, i) => `v${i}`).sort());
      await consumer.disconnect();
      await producer.disconnect();
      const groups = await kadmin.describeGroups([`g-${sasl.mechanism}`]);
      expect(groups.groups[0]?.groupId).toBe(`g-${sasl.mechanism}`);
      await kadmin.disconnect();
    });
  }

  it('SASL – KafkaJS with a wrong SCRAM password is refused with SASL_AUTHENTICATION_FAILED', async () => {
    const kafka = new Kafka({
      clientId: 'kafkajs-bad',
      brokers: [c.brokers[0]!.address],
      sasl: { mechanism: 'scram-sha-256', username: 'kafkajs-user', password: 'nope' },
      retry: { retries: 0 },
      logLevel: logLevel.NOTHING,
    });
    const kadmin = kafka.admin();
    await expect(kadmin.connect()).rejects.toThrow(/SASL SCRAM SHA256 authentication failed|Authentication failed/);
  });

  it('SASL – a client without SASL is disconnected before any request other than ApiVersions and SaslHandshake', async () => {
    const conn = await Connection.connect({
      host: c.brokers[0]!.address.split(':')[0]!,
      port: Number(c.brokers[0]!.address.split(':')[1]),
      requestTimeoutMs: 5_000,
    });
    await expect(
      conn.request(API_KEYS.Metadata, {
        topics: [],
        allowAutoTopicCreation: false,
        includeClusterAuthorizedOperations: false,
        includeTopicAuthorizedOperations: false,
      }),
    ).rejects.toThrow();
    await conn.close();
  });

  it('SASL – fuzz: garbage SaslHandshake / SaslAuthenticate frames and raw tokens crash nothing; the broker serves others after', async () => {
    const port = Number(c.brokers[1]!.address.split(':')[1]);
    let seed = 29;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed;
    };
    const bytes = (n: number) => Buffer.from(Array.from({ length: n }, () => rnd() & 0xff));
    const frame = (body: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, 0].map((_, i) => (body.length >>> (24 - 8 * i)) & 0xff)), body]);
    for (let i = 0; i < 60; i++) {
      const conn = await RawConn.open(port, c.brokers[1]!.address.split(':')[0]);
      const kind = i % 4;
      if (kind === 0) {
        // a valid handshake, then garbage SaslAuthenticate bytes
        await conn.request(encodeRequest(API_KEYS.SaslHandshake, 1, 1, 'fuzz', { mechanism: i % 8 === 0 ? 'PLAIN' : 'SCRAM-SHA-512' }));
        conn.write(encodeRequest(API_KEYS.SaslAuthenticate, rnd() % 3, 2, 'fuzz', { authBytes: bytes(rnd() % 200) }));
      } else if (kind === 1) {
        // handshake v0, then raw garbage tokens
        await conn.request(encodeRequest(API_KEYS.SaslHandshake, 0, 1, 'fuzz', { mechanism: 'SCRAM-SHA-256' }));
        conn.write(frame(bytes(rnd() % 300)));
      } else if (kind === 2) {
        // a handshake header with a garbage body
        conn.write(frame(Buffer.concat([Buffer.from([0, 17, 0, rnd() % 3, 0, 0, 0, 1]), bytes(rnd() % 64)])));
      } else {
        // garbage headers of SASL api keys
        conn.write(frame(Buffer.concat([Buffer.from([0, rnd() % 2 ? 17 : 36]), bytes(rnd() % 40)])));
      }
      const r = await conn.next(3_000);
      expect(['frame', 'closed']).toContain(r.outcome);
      conn.sock.destroy();
    }
    const probe = await Connection.connect({ host: c.brokers[1]!.address.split(':')[0]!, port, sasl: ADMIN, requestTimeoutMs: 5_000 });
    const md = await probe.request(API_KEYS.Metadata, {
      topics: [],
      allowAutoTopicCreation: false,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    });
    expect(md.body.brokers).toHaveLength(3);
    await probe.close();
  });
});
