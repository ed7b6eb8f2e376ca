/**
 * Kafka's AclAuthorizer on a 3-broker cluster (authorizer.class.name=kafka.security.authorizer.AclAuthorizer,
 * super.users=User:admin, allow.everyone.if.no.acl.found=false), PLAINTEXT: every client is User:ANONYMOUS.
 *
 * Setup, honestly stated: ANONYMOUS needs ALTER on the cluster to manage ACLs at all, and CLUSTER_ACTION
 * for the brokers' own follower fetches (they are ANONYMOUS too over PLAINTEXT). Those two cluster ACLs
 * are written straight into ZooKeeper in Kafka's layout, with a change notification (what
 * `kafka-acls.sh --authorizer-properties zookeeper.connect=…` does). Every other ACL goes through
 * `samsa acls` (kafka-acls.sh over the Admin API): CREATE on the cluster and WRITE on orders-eu to set up
 * the topics and their records, removed again, then READ on the prefix `orders-` and on group g1.
 *
 * Then: KafkaJS consumes orders-eu in group g1; its produce gets TOPIC_AUTHORIZATION_FAILED, and so does
 * kcat's; Metadata for all topics omits `payments` (and naming it is TOPIC_AUTHORIZATION_FAILED);
 * CreateTopics is refused; a DENY READ beats the prefixed ALLOW; the broker logs Kafka's authorizer line.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import kafkajs from 'kafkajs';
import type { Admin } from 'kafkajs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Connection } from '@samsa/client';
import { API_KEYS, AclOperation, AclPatternType, AclPermissionType, AclResourceType } from '@samsa/protocol';
import { AclResourceZNode, CreateMode, LiteralAclStore } from '@samsa/zk-paths';
import { TestCluster, describeCluster, until } from './harness.js';

const { Kafka, logLevel } = kafkajs;
const exec = promisify(execFile);
const bin = fileURLToPath(new URL('../packages/cli/bin/samsa.js', import.meta.url));

async function run(cmd: string, args: string[], timeout = 60_000): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await exec(cmd, args, { timeout });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** The Kafka error type of a KafkaJS failure (walking its causes), or null. */
function errorType(err: unknown): string | null {
  let e = err as { type?: string; cause?: unknown; originalError?: unknown; errors?: unknown[] } | undefined;
  for (let i = 0; e && i < 6; i++) {
    if (e.type) return e.type;
    e = (e.cause ?? e.originalError ?? e.errors?.[0]) as typeof e;
  }
  return null;
}

describeCluster(
  'ACL authorizer (3 brokers, PLAINTEXT, samsa acls, KafkaJS and kcat)',
  () => {
    let c: TestCluster;
    let admin: Admin;
    const acls = (...args: string[]) => run(process.execPath, [bin, 'acls', '--bootstrap-server', c.bootstrap, ...args]);

    /** Metadata (all topics) as each broker answers it: the topic names it shows. */
    async function visibleTopics(): Promise<string[][]> {
      const out: string[][] = [];
      for (const b of c.brokers) {
        const conn = await Connection.connect({ host: '127.0.0.1', port: b.o.port, clientId: 'acl-probe', requestTimeoutMs: 10_000 });
        try {
          const r = await conn.request(API_KEYS.Metadata, {
            topics: null,
            allowAutoTopicCreation: false,
            includeClusterAuthorizedOperations: false,
            includeTopicAuthorizedOperations: false,
          });
          out.push(r.body.topics.map((t) => t.name ?? '').sort());
        } finally {
          await conn.close();
        }
      }
      return out;
    }

    beforeAll(async () => {
      c = await TestCluster.start({
        brokers: 3,
        overrides: {
          'authorizer.class.name': 'kafka.security.authorizer.AclAuthorizer',
          'super.users': 'User:admin',
          'allow.everyone.if.no.acl.found': 'false',
        },
      });
      // the bootstrap ACLs, straight into ZooKeeper as Kafka's tools write them
      const cluster = { resourceType: AclResourceType.CLUSTER, name: 'kafka-cluster', patternType: AclPatternType.LITERAL };
      const entry = (operation: AclOperation) => ({ principal: 'User:ANONYMOUS', host: '*', operation, permissionType: AclPermissionType.ALLOW });
      await c.admin.zk.create(AclResourceZNode.path(cluster), AclResourceZNode.encode([entry(AclOperation.ALTER), entry(AclOperation.CLUSTER_ACTION)]), {
        mkdirp: true,
      });
      await c.admin.zk.create(`${LiteralAclStore.changePath}/acl_changes_`, LiteralAclStore.encodeChange(cluster), {
        mode: CreateMode.PersistentSequential,
        mkdirp: true,
      });

      const kafka = new Kafka({ clientId: 'e2e-acls', brokers: c.bootstrap.split(','), logLevel: logLevel.NOTHING, retry: { retries: 3 } });
      admin = kafka.admin();
      await admin.connect();
      // setup grants through the CLI: it needs ALTER on the cluster, i.e. waits for the bootstrap ACLs
      await until(
        async () => (await acls('--add', '--allow-principal', 'User:ANONYMOUS', '--operation', 'Create', '--cluster')).code === 0,
        'bootstrap ACLs applied',
        30_000,
        500,
      );
      expect((await acls('--add', '--allow-principal', 'User:ANONYMOUS', '--operation', 'Write', '--topic', 'orders-eu')).code).toBe(0);
      await until(
        async () => {
          try {
            // no waitForLeaders: KafkaJS would ask Metadata for payments, which no one may DESCRIBE
            await admin.createTopics({
              topics: ['orders-eu', 'payments'].map((topic) => ({ topic, numPartitions: 1, replicationFactor: 3 })),
              waitForLeaders: false,
            });
            return true;
          } catch (err) {
            return errorType(err) === 'TOPIC_ALREADY_EXISTS';
          }
        },
        'topics created',
        30_000,
        500,
      );
      await c.waitForLeaders('orders-eu', 1);
      await c.waitForLeaders('payments', 1);
      const producer = kafka.producer({ allowAutoTopicCreation: false });
      await producer.connect();
      await producer.send({ topic: 'orders-eu', acks: -1, messages: [1, 2, 3, 4, 5].map((i) => ({ value: `order-${i}` })) });
      await producer.disconnect();
      // take the setup grants back, then the grants under test
      const removed = await acls('--remove', '--force', '--allow-principal', 'User:ANONYMOUS', '--operation', 'Create', '--cluster');
      expect(removed.code, removed.stderr).toBe(0);
      expect((await acls('--remove', '--force', '--allow-principal', 'User:ANONYMOUS', '--operation', 'Write', '--topic', 'orders-eu')).code).toBe(0);
      const added = await acls(
        '--add',
        '--allow-principal',
        'User:ANONYMOUS',
        '--operation',
        'Read',
        '--topic',
        'orders-',
        '--resource-pattern-type',
        'prefixed',
      );
      expect(added.stdout).toContain(
        'Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=orders-, patternType=PREFIXED)`: \n \t(principal=User:ANONYMOUS, host=*, operation=READ, permissionType=ALLOW) \n',
      );
      expect((await acls('--add', '--allow-principal', 'User:ANONYMOUS', '--operation', 'Read', '--group', 'g1')).code).toBe(0);
      // applied everywhere: every broker shows orders-eu (READ on the prefix implies DESCRIBE) and not payments
      await until(
        async () => (await visibleTopics()).every((names) => names.includes('orders-eu') && !names.includes('payments')),
        'ACLs applied on every broker',
        10_000,
        100,
      );
    }, 180_000);

    afterAll(async () => {
      await admin?.disconnect();
      await c?.stop();
    });

    it('acls – KafkaJS consumes orders-eu in group g1 with READ on the prefix and the group', async () => {
      const kafka = new Kafka({ clientId: 'e2e-acls-consumer', brokers: c.bootstrap.split(','), logLevel: logLevel.NOTHING });
      const consumer = kafka.consumer({ groupId: 'g1' });
      await consumer.connect();
      await consumer.subscribe({ topic: 'orders-eu', fromBeginning: true });
      const seen: string[] = [];
      await consumer.run({ eachMessage: async ({ message }) => void seen.push(message.value?.toString() ?? '') });
      await until(() => seen.length >= 5, 'five orders consumed', 30_000);
      await consumer.disconnect();
      expect(seen).toEqual(['order-1', 'order-2', 'order-3', 'order-4', 'order-5']);
    }, 60_000);

    it('acls – producing to orders-eu is TOPIC_AUTHORIZATION_FAILED for KafkaJS and kcat, and logged as Kafka logs it', async () => {
      const kafka = new Kafka({ clientId: 'e2e-acls-producer', brokers: c.bootstrap.split(','), logLevel: logLevel.NOTHING, retry: { retries: 1 } });
      const producer = kafka.producer({ allowAutoTopicCreation: false });
      await producer.connect();
      const err = await producer.send({ topic: 'orders-eu', messages: [{ value: 'x' }] }).catch((e: unknown) => e);
      await producer.disconnect();
      expect(errorType(err)).toBe('TOPIC_AUTHORIZATION_FAILED');

      const k = await run('sh', ['-c', `printf 'x\\n' | kcat -P -b ${c.bootstrap} -t orders-eu -X message.timeout.ms=10000`], 30_000);
      expect(k.stderr).toMatch(/Topic authorization failed/i);

      const leader = await c.leaderOf('orders-eu', 0);
      const line =
        'Principal = User:ANONYMOUS is Denied Operation = Write from host = 127.0.0.1 on resource = Topic:LITERAL:orders-eu for request = Produce with resourceRefCount = 1';
      await until(
        async () => (await readFile(join(c.broker(leader).o.dir, 'broker.log'), 'utf8').catch(() => '')).includes(line),
        'the authorizer line',
        10_000,
      );
    }, 60_000);

    it('acls – Metadata for all topics omits payments; naming it is TOPIC_AUTHORIZATION_FAILED; CreateTopics is refused', async () => {
      const topics = await admin.listTopics();
      expect(topics).toContain('orders-eu');
      expect(topics).not.toContain('payments');
      const named = await admin.fetchTopicMetadata({ topics: ['payments'] }).catch((e: unknown) => e);
      expect(errorType(named)).toBe('TOPIC_AUTHORIZATION_FAILED');
      const created = await admin.createTopics({ topics: [{ topic: 'orders-new', numPartitions: 1, replicationFactor: 1 }] }).catch((e: unknown) => e);
      expect(errorType(created)).toBe('TOPIC_AUTHORIZATION_FAILED');
    }, 60_000);

    it('acls – a DENY READ on orders-eu beats the prefixed ALLOW (kcat consume fails), and removing it restores access', async () => {
      expect((await acls('--add', '--deny-principal', 'User:ANONYMOUS', '--operation', 'Read', '--topic', 'orders-eu')).code).toBe(0);
      const consume = () =>
        run('kcat', ['-C', '-b', c.bootstrap, '-t', 'orders-eu', '-o', 'beginning', '-e', '-q', '-X', 'topic.metadata.refresh.interval.ms=500'], 20_000);
      await until(async () => /Topic authorization failed/i.test((await consume()).stderr), 'the DENY applies', 10_000, 200);
      expect((await acls('--remove', '--force', '--deny-principal', 'User:ANONYMOUS', '--operation', 'Read', '--topic', 'orders-eu')).code).toBe(0);
      await until(async () => (await consume()).stdout.split('\n').filter(Boolean).length === 5, 'READ restored', 10_000, 200);
    }, 60_000);
  },
  { processesOnly: 'reads broker.log; not yet run on containers' },
);
