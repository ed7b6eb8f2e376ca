/**
 * Issue #29 acceptance with every part of security together, against real clients. Three brokers,
 * every listener secured:
 * - SASL_SSL client listener, also the inter-broker one: SCRAM-SHA-512 between brokers (user admin,
 *   whose credential is written into ZooKeeper before the brokers start, as Kafka's docs have it),
 *   PLAIN and SCRAM-SHA-256/512 for clients;
 * - CONTROLLER on SSL with ssl.client.auth=required (the controller presents the broker certificate);
 * - MTLS, a second client listener on SSL with ssl.client.auth=required (principal = certificate DN);
 * - AclAuthorizer on, super.users=User:admin, allow.everyone.if.no.acl.found=false.
 * kcat (librdkafka 2.0.2) and KafkaJS 2.2.4 are the clients; our admin client manages ACLs,
 * reassignments and elections. The last test is a bounded soak of garbage TLS handshakes and garbage
 * SASL frames with a normal client served throughout and the broker's RSS bounded.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import kafkajs from 'kafkajs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Admin, Connection, ElectionType, type SaslOptions } from '@samsa/client';
import { generateCertificates, type BrokerProcess, type GeneratedCertificates } from '@samsa/local-cluster';
import { API_KEYS, AclOperation, AclPatternType, AclPermissionType, AclResourceType, encodeRequest, type AclBinding } from '@samsa/protocol';
import { AclResourceZNode, newTopicId } from '@samsa/zk-paths';
import { describeCluster, TestCluster, until } from './harness.js';
import { exec, kafkajsErrorType, kcatScram, pemSslOverrides, rssKb, writeScramUser } from './clients/secure-helpers.js';

const { Kafka, logLevel } = kafkajs;

const ADMIN: SaslOptions = { mechanism: 'SCRAM-SHA-512', username: 'admin', password: 'admin-secret' };
const PLAIN_JAAS =
  'org.apache.kafka.common.security.plain.PlainLoginModule required ' +
  'user_admin="admin-secret" user_app="app-plain-secret" user_alice="alice-plain-secret";';
const SCRAM_JAAS = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="admin-secret";';
const BOB = 'CN=bob,O=Samsa';

const allow = (resourceType: AclResourceType, name: string, patternType: AclPatternType, principal: string, operation: AclOperation): AclBinding => ({
  pattern: { resourceType, name, patternType },
  entry: { principal, host: '*', operation, permissionType: AclPermissionType.ALLOW },
});
const deny = (b: AclBinding): AclBinding => ({ ...b, entry: { ...b.entry, permissionType: AclPermissionType.DENY } });
const filterOf = (b: AclBinding) => ({ patternFilter: b.pattern, entryFilter: b.entry });

let certs: GeneratedCertificates;
let certDir: string;

beforeAll(async () => {
  certDir = await mkdtemp(join(tmpdir(), 'samsa-e2e-secacc-'));
  certs = await generateCertificates({ dir: certDir, clients: { bob: BOB } });
});
afterAll(async () => {
  if (certDir) await rm(certDir, { recursive: true, force: true });
});

describeCluster(
  'security acceptance: SASL_SSL (SCRAM-SHA-512 inter-broker), SSL control plane and mutual TLS, AclAuthorizer (3 brokers)',
  () => {
    let c: TestCluster;
    let admin: Admin;
    let ca: string;

    const hostPort = (b: { address: string }) => {
      const i = b.address.lastIndexOf(':');
      return { host: b.address.slice(0, i), port: Number(b.address.slice(i + 1)) };
    };
    const mtlsPort = (b: unknown) => (b as BrokerProcess).o.extraListeners![0]!.port;
    const mtlsBootstrap = () => c.brokers.map((b) => `127.0.0.1:${mtlsPort(b)}`).join(',');
    const kcat = (user: string, password: string, args: string[], o: { input?: string; timeoutMs?: number; bootstrap?: string } = {}) =>
      exec('kcat', ['-b', o.bootstrap ?? c.bootstrap, ...kcatScram(user, password, certs.caCert), ...args], o);
    const kafka = (clientId: string, sasl: kafkajs.SASLOptions, retries = 5) =>
      new Kafka({ clientId, brokers: c.bootstrap.split(','), ssl: { ca: [ca] }, sasl, logLevel: logLevel.NOTHING, retry: { retries, initialRetryTime: 100 } });
    const secureConn = (b: { address: string }, sasl: SaslOptions) =>
      Connection.connect({ ...hostPort(b), clientId: 'secacc-probe', requestTimeoutMs: 10_000, sasl, tls: { ca: [ca] } });
    const metadataTopics = async (conn: Connection) =>
      (
        await conn.request(API_KEYS.Metadata, {
          topics: null,
          allowAutoTopicCreation: false,
          includeClusterAuthorizedOperations: false,
          includeTopicAuthorizedOperations: false,
        })
      ).body.topics.map((t) => t.name ?? '');

    beforeAll(async () => {
      ca = await readFile(certs.caCert, 'utf8');
      c = await TestCluster.start({
        brokers: 3,
        securityProtocol: 'SASL_SSL',
        controlSecurityProtocol: 'SSL',
        extraListeners: [{ name: 'MTLS', securityProtocol: 'SSL' }],
        sasl: ADMIN,
        clientTls: { ca: [ca] },
        overrides: {
          ...pemSslOverrides(certs),
          'listener.name.controller.ssl.client.auth': 'required',
          'listener.name.mtls.ssl.client.auth': 'required',
          'sasl.enabled.mechanisms': 'PLAIN,SCRAM-SHA-256,SCRAM-SHA-512',
          'sasl.mechanism.inter.broker.protocol': 'SCRAM-SHA-512',
          'listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config': SCRAM_JAAS,
          'listener.name.sasl_ssl.plain.sasl.jaas.config': PLAIN_JAAS,
          'authorizer.class.name': 'kafka.security.authorizer.AclAuthorizer',
          'super.users': 'User:admin',
          'allow.everyone.if.no.acl.found': 'false',
          'auto.leader.rebalance.enable': 'false',
        },
        beforeBrokers: async (zk) => {
          // the inter-broker user's credential must be there before the brokers fetch from each other
          await writeScramUser(zk, 'admin', { 'SCRAM-SHA-512': 'admin-secret' });
          await writeScramUser(zk, 'app', { 'SCRAM-SHA-256': 'app-secret', 'SCRAM-SHA-512': 'app-secret' });
          await writeScramUser(zk, 'alice', { 'SCRAM-SHA-256': 'alice-secret', 'SCRAM-SHA-512': 'alice-secret' });
          // user app: everything on topics and groups named app-*
          const app = [
            allow(AclResourceType.TOPIC, 'app-', AclPatternType.PREFIXED, 'User:app', AclOperation.ALL),
            allow(AclResourceType.GROUP, 'app-', AclPatternType.PREFIXED, 'User:app', AclOperation.ALL),
          ];
          for (const b of app) await zk.zk.create(AclResourceZNode.path(b.pattern), AclResourceZNode.encode([b.entry]), { mkdirp: true });
        },
      });
      admin = new Admin({ bootstrapServers: c.bootstrap, sasl: ADMIN, tls: { ca: [ca] }, clientId: 'secacc-admin' });
    }, 180_000);
    afterAll(async () => {
      await admin?.close();
      await c?.stop();
    });

    it('acceptance – every listener is secured: the brokers register SASL_SSL, SSL (CONTROLLER) and SSL (MTLS) endpoints', async () => {
      const info = await c.admin.getBroker(0);
      expect(info?.endpoints.map((e) => `${e.listenerName}:${e.securityProtocol}`).sort()).toEqual(['CONTROLLER:SSL', 'MTLS:SSL', 'SASL_SSL:SASL_SSL']);
    });

    it('acceptance – kcat SASL_SSL + SCRAM-SHA-512 produces and consumes; a wrong password is an authentication failure; plaintext on the TLS port is closed; the broker stays up', async () => {
      const topic = 'app-kcat';
      await c.admin.createTopic(topic, newTopicId(), new Map([0, 1, 2].map((p) => [p, [p, (p + 1) % 3, (p + 2) % 3]])), {});
      await c.waitForFullIsr(topic, 3);
      const lines = Array.from({ length: 200 }, (_, i) => `k${i}:v${i}`);
      const produced = await kcat('app', 'app-secret', ['-P', '-t', topic, '-K:', '-X', 'acks=all', '-X', 'message.timeout.ms=20000'], {
        input: lines.join('\n') + '\n',
      });
      expect(produced.code, produced.stderr).toBe(0);
      const consumed = await kcat('app', 'app-secret', ['-C', '-t', topic, '-e', '-o', 'beginning', '-q', '-f', '%k:%s\\n']);
      expect(consumed.code, consumed.stderr).toBe(0);
      expect(consumed.stdout.split('\n').filter(Boolean).sort()).toEqual([...lines].sort());

      const bad = await kcat('app', 'wrong-password', ['-L', '-m', '5'], { timeoutMs: 30_000 });
      expect(bad.code).not.toBe(0);
      expect(bad.stderr).toMatch(/Authentication failed|SASL authentication error/);

      await expect(Connection.connect({ ...hostPort(c.broker(0)), clientId: 'plaintext', requestTimeoutMs: 10_000 })).rejects.toThrow();
      for (const b of c.brokers) expect((b as BrokerProcess).process?.running).toBe(true);
      const md = await kcat('app', 'app-secret', ['-L', '-t', topic]);
      expect(md.stdout).toContain(' 3 brokers:');
    });

    for (const sasl of [
      { mechanism: 'scram-sha-256', username: 'app', password: 'app-secret' },
      { mechanism: 'plain', username: 'app', password: 'app-plain-secret' },
    ] as const) {
      it(`acceptance – KafkaJS ssl + sasl ${sasl.mechanism}: admin, producer and consumer-group flows`, async () => {
        const k = kafka(`secacc-${sasl.mechanism}`, sasl);
        const topic = `app-kafkajs-${sasl.mechanism}`;
        const group = `app-group-${sasl.mechanism}`;
        const kadmin = k.admin();
        await kadmin.connect();
        try {
          await kadmin.createTopics({ topics: [{ topic, numPartitions: 2, replicationFactor: 3 }], waitForLeaders: true });
          expect(await kadmin.listTopics()).toContain(topic);
          const producer = k.producer({ allowAutoTopicCreation: false });
          await producer.connect();
          await producer.send({ topic, acks: -1, messages: Array.from({ length: 30 }, (_, i) => ({ key: `k${i}`, value: `v${i}` })) });
          await producer.disconnect();
          const consumer = k.consumer({ groupId: group, sessionTimeout: 10_000, heartbeatInterval: 500 });
          const got: string[] = [];
          await consumer.connect();
          try {
            await consumer.subscribe({ topic, fromBeginning: true });
            await consumer.run({ eachMessage: async ({ message }) => void got.push(message.value!.toString()) });
            await until(() => got.length >= 30, `KafkaJS (${sasl.mechanism}) consumed 30 records`, 60_000);
          } finally {
            await consumer.disconnect();
          }
          expect(got.sort()).toEqual(Array.from({ length: 30 }, (_, i) => `v${i}`).sort());
          const offsets = await kadmin.fetchOffsets({ groupId: group, topics: [topic] });
          expect(offsets[0]!.partitions.reduce((n, p) => n + Number(p.offset), 0)).toBe(30);
          expect((await kadmin.describeGroups([group])).groups[0]?.groupId).toBe(group);
        } finally {
          await kadmin.disconnect();
        }
      });
    }

    it('acceptance – ACLs with SASL principals: alice (READ on prefix orders- and group g1) consumes orders-eu, cannot produce (KafkaJS and kcat), cannot see payments, cannot create topics', async () => {
      await admin.createTopics([
        { name: 'orders-eu', numPartitions: 1, replicationFactor: 3 },
        { name: 'payments', numPartitions: 1, replicationFactor: 3 },
      ]);
      await c.waitForFullIsr('orders-eu', 1);
      await c.waitForFullIsr('payments', 1);
      // super user admin bypasses the authorizer: no ACL names it
      const seeded = await kcat('admin', 'admin-secret', ['-P', '-t', 'orders-eu', '-X', 'acks=all'], { input: 'order-1\norder-2\norder-3\n' });
      expect(seeded.code, seeded.stderr).toBe(0);
      const adminSees = await kcat('admin', 'admin-secret', ['-L']);
      expect(adminSees.stdout).toMatch(/topic "payments"/);

      await admin.createAcls([
        allow(AclResourceType.TOPIC, 'orders-', AclPatternType.PREFIXED, 'User:alice', AclOperation.READ),
        allow(AclResourceType.GROUP, 'g1', AclPatternType.LITERAL, 'User:alice', AclOperation.READ),
      ]);
      const alice = { mechanism: 'scram-sha-256', username: 'alice', password: 'alice-secret' } as const;
      const k = kafka('secacc-alice', alice, 2);
      await until(
        async () => {
          const conns = await Promise.all(c.brokers.map((b) => secureConn(b, { mechanism: 'SCRAM-SHA-512', username: 'alice', password: 'alice-secret' })));
          try {
            return (await Promise.all(conns.map(metadataTopics))).every((t) => t.includes('orders-eu'));
          } finally {
            await Promise.all(conns.map((x) => x.close()));
          }
        },
        'alice’s READ applied on every broker',
        10_000,
        100,
      );

      const consumer = k.consumer({ groupId: 'g1', sessionTimeout: 10_000, heartbeatInterval: 500 });
      const seen: string[] = [];
      await consumer.connect();
      try {
        await consumer.subscribe({ topic: 'orders-eu', fromBeginning: true });
        await consumer.run({ eachMessage: async ({ message }) => void seen.push(message.value!.toString()) });
        await until(() => seen.length >= 3, 'alice consumed orders-eu in g1', 60_000);
      } finally {
        await consumer.disconnect();
      }
      expect(seen).toEqual(['order-1', 'order-2', 'order-3']);

      const producer = k.producer({ allowAutoTopicCreation: false });
      await producer.connect();
      const sent = await producer.send({ topic: 'orders-eu', messages: [{ value: 'x' }] }).catch((e: unknown) => e);
      await producer.disconnect();
      expect(kafkajsErrorType(sent)).toBe('TOPIC_AUTHORIZATION_FAILED');
      const kcatSent = await kcat('alice', 'alice-secret', ['-P', '-t', 'orders-eu', '-X', 'message.timeout.ms=10000'], { input: 'x\n', timeoutMs: 30_000 });
      expect(kcatSent.stderr).toMatch(/Topic authorization failed/i);

      const kadmin = k.admin();
      await kadmin.connect();
      try {
        const topics = await kadmin.listTopics();
        expect(topics).toContain('orders-eu');
        expect(topics).not.toContain('payments');
        expect(kafkajsErrorType(await kadmin.fetchTopicMetadata({ topics: ['payments'] }).catch((e: unknown) => e))).toBe('TOPIC_AUTHORIZATION_FAILED');
        const created = await kadmin.createTopics({ topics: [{ topic: 'orders-new', numPartitions: 1, replicationFactor: 1 }] }).catch((e: unknown) => e);
        expect(kafkajsErrorType(created)).toBe('TOPIC_AUTHORIZATION_FAILED');
      } finally {
        await kadmin.disconnect();
      }
      expect(await c.admin.getTopicAssignment('orders-new')).toBeFalsy();
    });

    it('acceptance – a DENY beats the prefixed ALLOW, and ACL changes apply on all three brokers within 2 s', async () => {
      const aliceScram: SaslOptions = { mechanism: 'SCRAM-SHA-512', username: 'alice', password: 'alice-secret' };
      const conns = await Promise.all(c.brokers.map((b) => secureConn(b, aliceScram)));
      /** ms from `change` resolving until every broker's Metadata answer (to alice) satisfies `ok`. */
      const propagation = async (change: () => Promise<unknown>, ok: (topics: string[]) => boolean, what: string) => {
        await change();
        const t0 = Date.now();
        await until(async () => (await Promise.all(conns.map(metadataTopics))).every(ok), what, 5_000, 20);
        return Date.now() - t0;
      };
      try {
        const describePayments = allow(AclResourceType.TOPIC, 'payments', AclPatternType.LITERAL, 'User:alice', AclOperation.DESCRIBE);
        const granted = await propagation(
          () => admin.createAcls([describePayments]),
          (t) => t.includes('payments'),
          'DESCRIBE on payments everywhere',
        );
        const revoked = await propagation(
          () => admin.deleteAcls([filterOf(describePayments)]),
          (t) => !t.includes('payments'),
          'DESCRIBE revoked everywhere',
        );
        // DENY DESCRIBE on orders-eu beats the prefixed READ (which implies DESCRIBE): every broker hides it
        const denyDescribe = deny(allow(AclResourceType.TOPIC, 'orders-eu', AclPatternType.LITERAL, 'User:alice', AclOperation.DESCRIBE));
        const hidden = await propagation(
          () => admin.createAcls([denyDescribe]),
          (t) => !t.includes('orders-eu'),
          'DENY DESCRIBE everywhere',
        );
        const shown = await propagation(
          () => admin.deleteAcls([filterOf(denyDescribe)]),
          (t) => t.includes('orders-eu'),
          'DENY removed everywhere',
        );
        expect(Math.max(granted, revoked, hidden, shown)).toBeLessThan(2_000);
        // DENY READ: kcat may not read orders-eu any more, until it is removed
        const denyRead = deny(allow(AclResourceType.TOPIC, 'orders-eu', AclPatternType.LITERAL, 'User:alice', AclOperation.READ));
        await admin.createAcls([denyRead]);
        const read = () => kcat('alice', 'alice-secret', ['-C', '-t', 'orders-eu', '-o', 'beginning', '-e', '-q'], { timeoutMs: 30_000 });
        await until(async () => /Topic authorization failed/i.test((await read()).stderr), 'the DENY refuses alice’s reads', 10_000, 200);
        await admin.deleteAcls([filterOf(denyRead)]);
        await until(async () => (await read()).stdout.split('\n').filter(Boolean).length === 3, 'READ restored', 10_000, 200);
      } finally {
        await Promise.all(conns.map((x) => x.close()));
      }
    });

    it('acceptance – mutual TLS: the client certificate’s DN is the principal (User:CN=bob,O=Samsa): denied before its ACL, allowed after', async () => {
      const topic = 'mtls-orders';
      await admin.createTopics([{ name: topic, numPartitions: 1, replicationFactor: 3 }]);
      await c.waitForFullIsr(topic, 1);
      expect((await kcat('admin', 'admin-secret', ['-P', '-t', topic, '-X', 'acks=all'], { input: 'b1\nb2\n' })).code).toBe(0);
      const bob = certs.clients['bob']!;
      const kcatBob = () =>
        exec(
          'kcat',
          [
            ...['-C', '-b', mtlsBootstrap(), '-t', topic, '-o', 'beginning', '-e', '-q'],
            ...['-X', 'security.protocol=ssl', '-X', `ssl.ca.location=${certs.caCert}`],
            ...['-X', `ssl.certificate.location=${bob.cert}`, '-X', `ssl.key.location=${bob.key}`],
          ],
          { timeoutMs: 30_000 },
        );
      const before = await kcatBob();
      expect(before.stderr).toMatch(/Topic authorization failed/i);
      await admin.createAcls([allow(AclResourceType.TOPIC, topic, AclPatternType.LITERAL, `User:${BOB}`, AclOperation.READ)]);
      await until(async () => (await kcatBob()).stdout.split('\n').filter(Boolean).join(',') === 'b1,b2', 'bob reads after his ACL', 10_000, 200);
      // KafkaJS with the same certificate
      const [cert, key] = await Promise.all([readFile(bob.cert, 'utf8'), readFile(bob.key, 'utf8')]);
      const k = new Kafka({ clientId: 'secacc-bob', brokers: mtlsBootstrap().split(','), ssl: { ca: [ca], cert, key }, logLevel: logLevel.NOTHING });
      const kadmin = k.admin();
      await kadmin.connect();
      try {
        expect(await kadmin.listTopics()).toEqual([topic]);
      } finally {
        await kadmin.disconnect();
      }
    });

    it('acceptance – inter-broker SASL_SSL: RF=3 with min.insync.replicas=2 and acks=all keeps the full ISR; kill -9 of a leader elects another and consumption goes on; a reassignment completes; a preferred election moves leadership back', async () => {
      const app = { mechanism: 'scram-sha-512', username: 'app', password: 'app-secret' } as const;
      const topic = 'app-repl';
      await c.admin.createTopic(topic, newTopicId(), new Map([0, 1, 2].map((p) => [p, [p, (p + 1) % 3, (p + 2) % 3]])), { 'min.insync.replicas': '2' });
      await c.waitForFullIsr(topic, 3);
      const produce = async (from: number, n: number) => {
        const producer = kafka('secacc-repl', app, 10).producer({ allowAutoTopicCreation: false });
        await producer.connect();
        try {
          await producer.send({ topic, acks: -1, messages: Array.from({ length: n }, (_, i) => ({ key: `k${from + i}`, value: `r${from + i}` })) });
        } finally {
          await producer.disconnect();
        }
      };
      await produce(0, 60);
      // acks=all answered and every follower still in the ISR: they fetch over SASL_SSL as User:admin
      for (let p = 0; p < 3; p++) expect((await c.admin.getPartitionState({ topic, partition: p }))?.state.isr).toHaveLength(3);

      const victim = await c.leaderOf(topic, 0);
      await c.shutdownBroker(victim, 'hard');
      const newLeader = await until(
        async () => {
          const l = await c.leaderOf(topic, 0);
          return l >= 0 && l !== victim ? l : null;
        },
        'a new leader of partition 0',
        30_000,
        100,
      );
      expect(newLeader).not.toBe(victim);
      await produce(60, 60); // ISR of 2 still meets min.insync.replicas=2
      const consumer = kafka('secacc-repl-consumer', app, 10).consumer({ groupId: 'app-repl-g', sessionTimeout: 10_000, heartbeatInterval: 500 });
      const got = new Set<string>();
      await consumer.connect();
      try {
        await consumer.subscribe({ topic, fromBeginning: true });
        await consumer.run({ eachMessage: async ({ message }) => void got.add(message.value!.toString()) });
        await until(() => got.size >= 120, 'all 120 records consumed after the failover', 60_000);
      } finally {
        await consumer.disconnect();
      }
      expect(got.size).toBe(120);

      await c.startBroker(victim);
      await c.waitForFullIsr(topic, 3);
      expect(await c.leaderOf(topic, 0)).not.toBe(victim); // auto.leader.rebalance.enable=false
      const elected = await admin.electLeaders([{ topic, partition: 0 }], ElectionType.PREFERRED);
      expect(elected).toEqual([{ topic, partition: 0, error: null }]);
      await until(async () => (await c.leaderOf(topic, 0)) === victim, 'the preferred replica leads again', 15_000, 100);

      // a reassignment: the new replica copies the log from the leader over SASL_SSL
      const moved = 'app-move';
      await c.admin.createTopic(moved, newTopicId(), new Map([[0, [0, 1]]]), {});
      await c.waitForFullIsr(moved, 1);
      const lines = Array.from({ length: 50 }, (_, i) => `m${i}`);
      expect((await kcat('app', 'app-secret', ['-P', '-t', moved, '-X', 'acks=all'], { input: lines.join('\n') + '\n' })).code).toBe(0);
      expect((await admin.alterPartitionReassignments([{ topic: moved, partition: 0, replicas: [1, 2] }])).size).toBe(0);
      await until(
        async () => {
          const assigned = (await c.admin.getTopicAssignment(moved))?.partitions.get(0);
          const isr = (await c.admin.getPartitionState({ topic: moved, partition: 0 }))?.state.isr ?? [];
          return (await admin.listPartitionReassignments()).length === 0 && assigned?.join() === '1,2' && [...isr].sort().join() === '1,2';
        },
        'the reassignment to [1,2] completed',
        60_000,
        200,
      );
      const read = await kcat('app', 'app-secret', ['-C', '-t', moved, '-o', 'beginning', '-e', '-q']);
      expect(read.stdout.split('\n').filter(Boolean)).toEqual(lines);
    }, 240_000);

    it('acceptance – soak: garbage TLS handshakes and garbage SASL frames (after a valid TLS handshake): each connection closed within a bound, a normal client served throughout, RSS bounded', async () => {
      const b = c.broker(1) as BrokerProcess;
      const { host, port } = hostPort(b);
      const pid = b.pid!;
      let seed = 2929;
      const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff);
      const garbage = (n: number) => Buffer.from(Array.from({ length: n }, () => rnd() & 0xff));
      const frame = (body: Buffer) => {
        const f = Buffer.alloc(4 + body.length);
        f.writeInt32BE(body.length, 0);
        body.copy(f, 4);
        return f;
      };
      // a garbage handshake the TLS layer cannot refuse yet (a record announcing more bytes) waits for
      // the handshake timeout (10 s), as Kafka waits; garbage after the handshake fails authentication
      // and is closed after connection.failed.authentication.delay.ms (100 ms)
      const TLS_CLOSE_BOUND_MS = 12_000;
      const SASL_CLOSE_BOUND_MS = 2_000;
      /** Opens a connection, sends garbage once it is up, and resolves with the ms until the broker closed it. */
      type Garbage = 'tlsBytes' | 'tlsRecord' | 'sasl';
      const garbageConnection = (what: Garbage, kind: number): Promise<number> =>
        new Promise((resolve) => {
          let t0 = 0;
          const tlsKind = what === 'sasl';
          const s = tlsKind ? tlsConnect({ host, port, ca: [ca] }, () => send()) : netConnect({ host, port }, () => send());
          const timer = setTimeout(() => s.destroy(), TLS_CLOSE_BOUND_MS + 3_000);
          s.on('error', () => undefined);
          s.on('data', () => undefined);
          s.on('close', () => {
            clearTimeout(timer);
            resolve(t0 === 0 ? 0 : Date.now() - t0);
          });
          function send(): void {
            t0 = Date.now();
            const k = kind % 4;
            if (!tlsKind) {
              // garbage instead of a ClientHello: random bytes, or a handshake record with a random body
              if (what === 'tlsBytes') s.write(garbage(1 + (rnd() % 2048)));
              else {
                const body = garbage(rnd() % 512);
                s.write(Buffer.concat([Buffer.from([0x16, 0x03, 0x01, body.length >> 8, body.length & 0xff]), body]));
              }
            } else if (k === 0) {
              // a valid SaslHandshake, then a SaslAuthenticate with garbage bytes
              s.write(encodeRequest(API_KEYS.SaslHandshake, 1, 1, 'soak', { mechanism: 'SCRAM-SHA-512' }));
              s.write(encodeRequest(API_KEYS.SaslAuthenticate, 2, 2, 'soak', { authBytes: garbage(rnd() % 300) }));
            } else if (k === 1) {
              // SaslHandshake v0, then a raw garbage token
              s.write(encodeRequest(API_KEYS.SaslHandshake, 0, 1, 'soak', { mechanism: 'SCRAM-SHA-256' }));
              s.write(frame(garbage(1 + (rnd() % 300))));
            } else if (k === 2) {
              // a garbage frame under a SASL or another api key, before authenticating
              s.write(frame(Buffer.concat([Buffer.from([0, [17, 36, 0, 3][rnd() % 4]!]), garbage(rnd() % 200)])));
            } else {
              // a frame size beyond sasl.server.max.receive.size
              s.write(Buffer.from([0x7f, 0xff, 0xff, 0xff, 1, 2, 3]));
            }
          }
        });
      const soak = async (ms: number) => {
        const closeTimes: Record<Garbage, number[]> = { tlsBytes: [], tlsRecord: [], sasl: [] };
        const deadline = Date.now() + ms;
        const open: Array<Promise<void>> = [];
        const cycle: Garbage[] = ['tlsBytes', 'tlsRecord', 'sasl', 'sasl'];
        // open loop: a new garbage connection every 15 ms, whether or not the earlier ones are closed yet
        for (let kind = 0; Date.now() < deadline; kind++) {
          const what = cycle[kind % cycle.length]!;
          open.push(garbageConnection(what, kind >> 2).then((t) => void closeTimes[what].push(t)));
          await new Promise((r) => setTimeout(r, 15));
        }
        await Promise.all(open);
        return closeTimes;
      };
      const settledRss = async () => {
        // no forced GC in the broker: wait until its RSS stops moving (two reads 1 s apart within 1 MB)
        let last = await rssKb(pid);
        for (let i = 0; i < 15; i++) {
          await new Promise((r) => setTimeout(r, 1_000));
          const now = await rssKb(pid);
          if (Math.abs(now - last) < 1024) return now;
          last = now;
        }
        return last;
      };

      await soak(3_000); // warm up: TLS and SASL code paths, buffers
      const before = await settledRss();
      // the normal client: a fresh SASL_SSL connection and a Metadata request every 100 ms
      let probing = true;
      const probeLatencies: number[] = [];
      const probes = (async () => {
        while (probing) {
          const t0 = Date.now();
          const conn = await secureConn(b, ADMIN);
          try {
            const md = await conn.request(API_KEYS.Metadata, {
              topics: [],
              allowAutoTopicCreation: false,
              includeClusterAuthorizedOperations: false,
              includeTopicAuthorizedOperations: false,
            });
            expect(md.body.brokers).toHaveLength(3);
          } finally {
            await conn.close();
          }
          probeLatencies.push(Date.now() - t0);
          await new Promise((r) => setTimeout(r, 100));
        }
      })();
      const closeTimes = await soak(15_000);
      probing = false;
      await probes;
      const after = await settledRss();
      const stats = (xs: number[]) => {
        const sorted = [...xs].sort((x, y) => x - y);
        return { n: sorted.length, medianMs: sorted[Math.floor(sorted.length / 2)]!, maxMs: sorted[sorted.length - 1]! };
      };
      const summary = {
        garbageTlsBytes: stats(closeTimes.tlsBytes),
        garbageTlsRecords: stats(closeTimes.tlsRecord),
        garbageSasl: stats(closeTimes.sasl),
        probes: probeLatencies.length,
        probeMsMax: Math.max(...probeLatencies),
        rssBeforeKb: before,
        rssAfterKb: after,
      };
      console.log('soak', JSON.stringify(summary));
      expect(summary.garbageTlsBytes.n).toBeGreaterThan(100);
      expect(summary.garbageTlsRecords.n).toBeGreaterThan(100);
      expect(summary.garbageSasl.n).toBeGreaterThan(200);
      expect(Math.max(summary.garbageTlsBytes.maxMs, summary.garbageTlsRecords.maxMs)).toBeLessThan(TLS_CLOSE_BOUND_MS);
      expect(summary.garbageSasl.maxMs).toBeLessThan(SASL_CLOSE_BOUND_MS);
      expect(probeLatencies.length).toBeGreaterThan(50);
      expect(summary.probeMsMax).toBeLessThan(5_000);
      expect(after - before).toBeLessThan(48 * 1024); // kB
      expect((b as BrokerProcess).process?.running).toBe(true);
    }, 120_000);
  },
  { processesOnly: 'brokers with SASL_SSL / SSL listeners, certificates and /proc on this machine' },
);
