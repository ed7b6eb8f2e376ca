/**
 * TLS listeners (issue #29): a 3-broker cluster whose client listener, inter-broker listener and
 * control plane are all SSL (the control plane with ssl.client.auth=required, so the controller
 * authenticates with the broker certificate). Our client, kcat (librdkafka 2.0.2) and KafkaJS 2.2.4
 * produce and consume over TLS; acks=all with min.insync.replicas=3 proves the followers fetch over
 * TLS; a plaintext client on the TLS port is closed and the brokers keep serving. A second,
 * one-broker cluster requires client certificates: kcat with one works, kcat without fails.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import kafkajs from 'kafkajs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Admin, Connection, Consumer, Producer, stringDeserializer } from '@samsa/client';
import { generateCertificates, type GeneratedCertificates } from '@samsa/local-cluster';
import { newTopicId } from '@samsa/zk-paths';
import { describeCluster, logLines, TestCluster, until } from './harness.js';
import { pemSslOverrides } from './clients/secure-helpers.js';

const run = promisify(execFile);
const { Kafka, logLevel } = kafkajs;

let certs: GeneratedCertificates;
let certDir: string;

beforeAll(async () => {
  certDir = await mkdtemp(join(tmpdir(), 'samsa-e2e-certs-'));
  certs = await generateCertificates({ dir: certDir, clients: { alice: 'CN=alice,OU=eng,O=Samsa' } });
});
afterAll(async () => {
  if (certDir) await rm(certDir, { recursive: true, force: true });
});

/** kcat over TLS: `-X security.protocol=ssl -X ssl.ca.location=...` plus `extra`. */
const kcatTls = (extra: string[] = []) => ['-X', 'security.protocol=ssl', '-X', `ssl.ca.location=${certs.caCert}`, ...extra];

async function kcatProduce(bootstrap: string, topic: string, lines: string[], extra: string[] = []): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const p = execFile('kcat', ['-P', '-b', bootstrap, '-t', topic, '-X', 'acks=all', ...kcatTls(extra)], { timeout: 60_000 }, (err) =>
      err ? reject(err) : resolve(),
    );
    p.stdin!.end(lines.join('\n') + '\n');
  });
}

async function kcatRead(bootstrap: string, topic: string, extra: string[] = []): Promise<string[]> {
  const { stdout } = await run('kcat', ['-C', '-b', bootstrap, '-t', topic, '-e', '-o', 'beginning', '-q', '-f', '%s\n', ...kcatTls(extra)], {
    timeout: 60_000,
  });
  return stdout.split('\n').filter(Boolean);
}

describeCluster(
  'TLS: SSL client, inter-broker and control-plane listeners (3 brokers)',
  () => {
    let c: TestCluster;
    let admin: Admin;
    let ca: string;

    beforeAll(async () => {
      ca = await readFile(certs.caCert, 'utf8');
      c = await TestCluster.start({
        brokers: 3,
        securityProtocol: 'SSL',
        controlSecurityProtocol: 'SSL',
        clientTls: { ca: [ca] },
        overrides: { ...pemSslOverrides(certs), 'listener.name.controller.ssl.client.auth': 'required' },
      });
      admin = new Admin({ bootstrapServers: c.bootstrap, tls: { ca: [ca] } });
    }, 120_000);
    afterAll(async () => {
      await admin?.close();
      await c?.stop();
    });

    it('tls – the brokers register SSL endpoints; replication over the SSL inter-broker listener: acks=all to an RF=3 topic with min.insync.replicas=3, read back', async () => {
      const info = await c.admin.getBroker(0);
      expect(info?.endpoints.map((e) => `${e.listenerName}:${e.securityProtocol}`).sort()).toEqual(['CONTROLLER:SSL', 'SSL:SSL']);
      const topic = 'tls-rf3';
      await admin.createTopics([{ name: topic, numPartitions: 3, replicationFactor: 3, configs: { 'min.insync.replicas': '3' } }]);
      await c.waitForFullIsr(topic, 3);
      const producer = new Producer({ 'bootstrap.servers': c.bootstrap, acks: 'all', 'linger.ms': 5, tls: { ca: [ca] } });
      try {
        await Promise.all(Array.from({ length: 300 }, (_, i) => producer.send({ topic, key: `k${i}`, value: `v${i}` })));
      } finally {
        await producer.close();
      }
      const consumer = new Consumer<string | null, string | null>({
        'bootstrap.servers': c.bootstrap,
        'group.id': 'tls-group',
        'auto.offset.reset': 'earliest',
        'value.deserializer': stringDeserializer,
        'key.deserializer': stringDeserializer,
        tls: { ca: [ca] },
      });
      try {
        consumer.subscribe([topic]);
        const got = new Set<string>();
        await until(
          async () => {
            for (const r of await consumer.poll(500)) got.add(r.value ?? '');
            return got.size === 300;
          },
          '300 records consumed over TLS',
          60_000,
        );
        await consumer.commitSync();
      } finally {
        await consumer.close();
      }
      // every replica caught up over TLS
      for (let p = 0; p < 3; p++) expect((await c.admin.getPartitionState({ topic, partition: p }))?.state.isr).toHaveLength(3);
    });

    it('tls – kcat with security.protocol=ssl and ssl.ca.location produces and consumes (host name verified against the certificate)', async () => {
      const topic = 'tls-kcat';
      await c.admin.createTopic(topic, newTopicId(), new Map([[0, [0, 1, 2]]]), {});
      await c.waitForFullIsr(topic, 1);
      const lines = Array.from({ length: 50 }, (_, i) => `kcat-${i}`);
      await kcatProduce(c.bootstrap, topic, lines, ['-X', 'ssl.endpoint.identification.algorithm=https']);
      expect(await kcatRead(c.bootstrap, topic)).toEqual(lines);
    });

    it('tls – KafkaJS 2.2.4 with ssl: { ca } produces and consumes in a group', async () => {
      const topic = 'tls-kafkajs';
      const kafka = new Kafka({
        clientId: 'kafkajs-tls',
        brokers: c.bootstrap.split(','),
        ssl: { ca: [ca] },
        logLevel: logLevel.NOTHING,
        retry: { retries: 5 },
      });
      const kadmin = kafka.admin();
      await kadmin.connect();
      await kadmin.createTopics({ topics: [{ topic, numPartitions: 2, replicationFactor: 3 }], waitForLeaders: true });
      await kadmin.disconnect();
      const producer = kafka.producer();
      await producer.connect();
      await producer.send({ topic, acks: -1, messages: Array.from({ length: 40 }, (_, i) => ({ key: `k${i}`, value: `kjs-${i}` })) });
      await producer.disconnect();
      const consumer = kafka.consumer({ groupId: 'tls-kafkajs-group' });
      const got: string[] = [];
      try {
        await consumer.connect();
        await consumer.subscribe({ topics: [topic], fromBeginning: true });
        await consumer.run({ eachMessage: async ({ message }) => void got.push(message.value!.toString()) });
        await until(() => got.length >= 40, 'KafkaJS consumed 40 records over TLS', 60_000);
      } finally {
        await consumer.disconnect();
      }
      expect(got.sort()).toEqual(Array.from({ length: 40 }, (_, i) => `kjs-${i}`).sort());
    });

    it('tls – a plaintext client on the TLS port has its connection closed; the broker logs it and keeps serving', async () => {
      const b = c.broker(0);
      const [host, port] = [b.address.slice(0, b.address.lastIndexOf(':')), Number(b.address.slice(b.address.lastIndexOf(':') + 1))];
      const before = (await logLines(c, 0)).length;
      await expect(Connection.connect({ host, port, clientId: 'plaintext', requestTimeoutMs: 10_000 })).rejects.toThrow();
      await until(
        async () => (await logLines(c, 0)).slice(before).some((l) => l['msg'] === 'TLS handshake failed; connection closed'),
        'the failed handshake logged',
      );
      const conn = await Connection.connect({ host, port, clientId: 'tls', tls: { ca: [ca] } });
      expect(conn.isOpen).toBe(true);
      await conn.close();
      const { stdout } = await run('kcat', ['-L', '-b', c.bootstrap, ...kcatTls()], { timeout: 20_000 });
      expect(stdout).toContain(' 3 brokers:');
    });

    it('tls – a clean stop of a non-controller does its ControlledShutdown over the SSL control plane (client certificate required there)', async () => {
      const controller = await c.controllerId();
      const id = [0, 1, 2].find((b) => b !== controller)!;
      const before = (await logLines(c, id)).length;
      await c.shutdownBroker(id, 'clean');
      const lines = (await logLines(c, id)).slice(before);
      expect(lines.some((l) => l['msg'] === 'controlled shutdown succeeded')).toBe(true);
      expect(lines.some((l) => l['msg'] === 'controlled shutdown attempt failed')).toBe(false);
      await c.startBroker(id);
    });
  },
  { processesOnly: 'brokers with SSL listeners (BrokerProcess.securityProtocol) and certificates on this machine' },
);

describeCluster(
  'TLS: ssl.client.auth=required (1 broker)',
  () => {
    let c: TestCluster;
    const alice = () => ['-X', `ssl.certificate.location=${certs.clients['alice']!.cert}`, '-X', `ssl.key.location=${certs.clients['alice']!.key}`];

    beforeAll(async () => {
      const [ca, cert, key] = await Promise.all([
        readFile(certs.caCert, 'utf8'),
        readFile(certs.clients['alice']!.cert),
        readFile(certs.clients['alice']!.key),
      ]);
      c = await TestCluster.start({
        brokers: 1,
        securityProtocol: 'SSL',
        clientTls: { ca: [ca], cert, key },
        overrides: { ...pemSslOverrides(certs), 'ssl.client.auth': 'required', 'offsets.topic.replication.factor': '1' },
      });
    }, 120_000);
    afterAll(async () => {
      await c?.stop();
    });

    it('tls – kcat presenting a client certificate signed by the trusted CA produces and consumes', async () => {
      const topic = 'mtls';
      await c.admin.createTopic(topic, newTopicId(), new Map([[0, [0]]]), {});
      await c.waitForLeaders(topic, 1);
      await kcatProduce(c.bootstrap, topic, ['m1', 'm2'], alice());
      expect(await kcatRead(c.bootstrap, topic, alice())).toEqual(['m1', 'm2']);
    });

    it('tls – kcat without a client certificate fails (handshake refused); the broker keeps serving', async () => {
      const failed = await run('kcat', ['-L', '-b', c.bootstrap, '-m', '5', ...kcatTls()], { timeout: 30_000 }).then(
        () => null,
        (err: { stderr?: string }) => err,
      );
      expect(failed).not.toBeNull();
      expect(failed?.stderr ?? '').toMatch(/SSL|handshake|certificate|Broker transport failure|All broker connections are down/i);
      const { stdout } = await run('kcat', ['-L', '-b', c.bootstrap, ...kcatTls(alice())], { timeout: 20_000 });
      expect(stdout).toContain(' 1 brokers:');
    });
  },
  { processesOnly: 'brokers with SSL listeners (BrokerProcess.securityProtocol) and certificates on this machine' },
);
