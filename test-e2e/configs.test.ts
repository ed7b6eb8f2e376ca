/**
 * Dynamic configs on a real 3-broker cluster through `samsa configs` (kafka-configs.sh):
 *  - a topic's max.message.bytes lowered with --alter takes effect on every leader within seconds
 *    (KafkaJS produces above it fail with MESSAGE_TOO_LARGE on every partition); --describe prints
 *    Kafka's lines with sources and synonyms;
 *  - a cluster-wide broker default (--entity-default) applies to brokers without a per-broker value
 *    and not to one with its own: DescribeConfigs on each broker reports the value and its source,
 *    and retention (log.retention.ms inherited by a topic) deletes segments only on the former;
 *  - read-only broker configs are refused with Kafka's INVALID_REQUEST message; unknown keys are
 *    stored (KafkaJS alterConfigs), and both outcomes are logged;
 *  - KafkaJS describeConfigs with synonyms lists a topic config's broker synonyms as Kafka does
 *    (none for retention.ms & co. while log.retention.ms & co. are unset) and message.format.version;
 *  - --zookeeper writes client quota configs to /config/clients/<id> with a change notification;
 *  - --bootstrap-server alters and describes client, user and (user, client-id) quotas through
 *    AlterClientQuotas / DescribeClientQuotas in kafka-configs.sh's output format; the brokers apply
 *    them (a produce over producer_byte_rate comes back with throttle_time_ms > 0) and kcat still
 *    parses the ApiVersions answer that now lists both APIs.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import kafkajs from 'kafkajs';
import type { Admin, Producer } from 'kafkajs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Connection } from '@samsa/client';
import { API_KEYS, encodeRecordBatch } from '@samsa/protocol';
import { ConfigType } from '@samsa/zk-paths';
import { TestCluster, until, describeCluster } from './harness.js';
import { rawRequest } from './clients/wire.js';

const { ConfigResourceTypes, Kafka, logLevel } = kafkajs;
const exec = promisify(execFile);
const bin = fileURLToPath(new URL('../packages/cli/bin/samsa.js', import.meta.url));

async function samsa(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await exec(process.execPath, [bin, ...args], { timeout: 120_000 });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** The Kafka error type of a KafkaJS failure (walking its causes), or null. */
function errorType(err: unknown): string | null {
  let e = err as { type?: string; cause?: unknown; originalError?: unknown } | undefined;
  for (let i = 0; e && i < 5; i++) {
    if (e.type) return e.type;
    e = (e.cause ?? e.originalError) as typeof e;
  }
  return null;
}

describeCluster(
  'dynamic configs (3 brokers, samsa configs)',
  () => {
    let c: TestCluster;
    let admin: Admin;
    let producer: Producer;

    beforeAll(async () => {
      c = await TestCluster.start({ brokers: 3, overrides: { 'log.retention.check.interval.ms': '1000', 'log.segment.delete.delay.ms': '200' } });
      const kafka = new Kafka({ clientId: 'e2e-configs', brokers: c.bootstrap.split(','), logLevel: logLevel.NOTHING, retry: { retries: 2 } });
      admin = kafka.admin();
      producer = kafka.producer({ allowAutoTopicCreation: false });
      await admin.connect();
      await producer.connect();
    }, 120_000);

    afterAll(async () => {
      await producer?.disconnect();
      await admin?.disconnect();
      await c?.stop();
    });

    /** DescribeConfigs v1 (with synonyms) of one resource, asked of one broker. */
    async function describeOn(broker: number, resourceType: number, resourceName: string, key: string) {
      const res = await rawRequest(c.broker(broker).address, API_KEYS.DescribeConfigs, 1, {
        resources: [{ resourceType, resourceName, configurationKeys: [key] }],
        includeSynonyms: true,
        includeDocumentation: false,
      });
      return res.results[0]!.configs.find((x) => x.name === key);
    }

    /** The broker's JSON log lines (pino) whose msg is `msg`. */
    async function logLines(broker: number, msg: string): Promise<Array<Record<string, unknown>>> {
      const text = await readFile(join(c.broker(broker).o.dir, 'broker.log'), 'utf8').catch(() => '');
      return text
        .split('\n')
        .filter((l) => l.includes(msg))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => l['msg'] === msg);
    }

    it('configs – KafkaJS describeConfigs with synonyms: topic configs whose broker name differs list no log.*.hours defaults; message.format.version as Kafka reports it', async () => {
      const topic = 'cfg-synonyms';
      await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 1 }], waitForLeaders: true });
      const names = ['retention.ms', 'segment.ms', 'segment.jitter.ms', 'flush.ms', 'segment.bytes', 'message.format.version'];
      const d = await admin.describeConfigs({ includeSynonyms: true, resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: names }] });
      const entries = new Map(
        d.resources[0]!.configEntries.map((e) => [
          e.configName,
          { value: e.configValue, source: e.configSource, synonyms: e.configSynonyms.map((x) => [x.configName, x.configValue, x.configSource]) },
        ]),
      );
      // Kafka (ZooKeeper mode) lists these from their primary broker name on, and log.retention.ms,
      // log.roll.ms, log.roll.jitter.ms and log.flush.interval.ms are unset: no synonyms at all
      expect(entries.get('retention.ms')).toEqual({ value: '604800000', source: 5, synonyms: [] });
      expect(entries.get('segment.ms')).toEqual({ value: '604800000', source: 5, synonyms: [] });
      expect(entries.get('segment.jitter.ms')).toEqual({ value: '0', source: 5, synonyms: [] });
      expect(entries.get('flush.ms')).toEqual({ value: '9223372036854775807', source: 5, synonyms: [] });
      expect(entries.get('segment.bytes')).toEqual({ value: '1073741824', source: 5, synonyms: [['log.segment.bytes', '1073741824', 5]] });
      expect(entries.get('message.format.version')).toEqual({ value: '3.0-IV1', source: 5, synonyms: [['log.message.format.version', '3.0-IV1', 5]] });
    });

    it('configs – KafkaJS alterConfigs on a broker: unknown keys are stored, known read-only ones refused with INVALID_REQUEST, both logged', async () => {
      const broker = 2;
      await admin.alterConfigs({
        validateOnly: false,
        resources: [
          {
            type: ConfigResourceTypes.BROKER,
            name: String(broker),
            configEntries: [
              { name: 'some.plugin.setting', value: 'x' },
              { name: 'log.cleaner.delete.retention.ms', value: '86400001' },
              { name: 'log.cleaner.backoff.ms', value: '20000' },
            ],
          },
        ],
      });
      expect(await c.admin.getEntityConfig(ConfigType.Broker, String(broker))).toEqual({
        'some.plugin.setting': 'x',
        'log.cleaner.delete.retention.ms': '86400001',
        'log.cleaner.backoff.ms': '20000',
      });
      const accepted = await until(
        async () => (await logLines(broker, 'broker config change accepted')).find((l) => (l['changed'] as string[]).includes('some.plugin.setting')),
        'accepted change logged',
      );
      expect(accepted).toMatchObject({
        component: 'config-admin',
        resourceType: 'BROKER',
        entity: String(broker),
        applied: ['log.cleaner.delete.retention.ms'],
        storedOnly: ['some.plugin.setting', 'log.cleaner.backoff.ms'],
      });

      const refused = await admin
        .alterConfigs({
          validateOnly: false,
          resources: [
            {
              type: ConfigResourceTypes.BROKER,
              name: String(broker),
              configEntries: [
                { name: 'log.dirs', value: '/elsewhere' },
                { name: 'another.unknown', value: 'y' },
              ],
            },
          ],
        })
        .then(
          () => null,
          (err: unknown) => err,
        );
      expect(errorType(refused)).toBe('INVALID_REQUEST');
      expect(await c.admin.getEntityConfig(ConfigType.Broker, String(broker))).toEqual({
        'some.plugin.setting': 'x',
        'log.cleaner.delete.retention.ms': '86400001',
        'log.cleaner.backoff.ms': '20000',
      });
      const line = await until(
        async () => (await logLines(broker, 'broker config change refused')).find((l) => (l['changed'] as string[]).includes('log.dirs')),
        'refusal logged',
      );
      expect(line).toMatchObject({
        entity: String(broker),
        errorCode: 42,
        reason: "Invalid config value for resource ConfigResource(type=BROKER, name='2'): Cannot update these configs dynamically: Set(log.dirs)",
      });

      // AlterConfigs replaces the entity's config as a whole: an empty one clears it
      await admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.BROKER, name: String(broker), configEntries: [] }] });
      expect(await c.admin.getEntityConfig(ConfigType.Broker, String(broker))).toEqual({});
    });

    it('configs – a topic max.message.bytes change applies on every leader without restart; --describe prints sources and synonyms', async () => {
      const topic = 'cfg-max';
      await admin.createTopics({ topics: [{ topic, numPartitions: 3, replicationFactor: 2 }], waitForLeaders: true });
      const leaders = new Set<number>();
      for (let p = 0; p < 3; p++) leaders.add(await c.leaderOf(topic, p));
      expect(leaders.size).toBeGreaterThan(1);
      const big = 'x'.repeat(5000);
      for (let p = 0; p < 3; p++) await producer.send({ topic, acks: -1, messages: [{ partition: p, value: big }] });

      const alter = await samsa(
        'configs',
        '--bootstrap-server',
        c.bootstrap,
        '--entity-type',
        'topics',
        '--entity-name',
        topic,
        '--alter',
        '--add-config',
        'max.message.bytes=2000',
      );
      expect(alter.stderr).toBe('');
      expect(alter.stdout).toBe(`Completed updating config for topic ${topic}.\n`);
      for (let p = 0; p < 3; p++) {
        await until(
          async () => {
            try {
              await producer.send({ topic, acks: -1, messages: [{ partition: p, value: big }] });
              return false;
            } catch (err) {
              return errorType(err) === 'MESSAGE_TOO_LARGE';
            }
          },
          `MESSAGE_TOO_LARGE on partition ${p}`,
          20_000,
          200,
        );
      }
      // small records still go through
      await producer.send({ topic, acks: -1, messages: [{ partition: 0, value: 'small' }] });

      const d = await samsa('configs', '--bootstrap-server', c.bootstrap, '--entity-type', 'topics', '--entity-name', topic, '--describe');
      expect(d.stdout).toBe(
        `Dynamic configs for topic ${topic} are:\n  max.message.bytes=2000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:max.message.bytes=2000, DEFAULT_CONFIG:message.max.bytes=1048588}\n`,
      );
      const del = await samsa(
        'configs',
        '--bootstrap-server',
        c.bootstrap,
        '--entity-type',
        'topics',
        '--entity-name',
        topic,
        '--alter',
        '--delete-config',
        'max.message.bytes',
      );
      expect(del.code).toBe(0);
      await until(async () => (await c.admin.getTopicConfig(topic))['max.message.bytes'] === undefined, 'max.message.bytes deleted');
    });

    it('configs – a cluster-wide broker default applies to brokers without a per-broker value, not to one with its own; sources reported; retention follows', async () => {
      const topic = 'cfg-ret';
      await admin.createTopics({
        topics: [
          {
            topic,
            replicaAssignment: [
              { partition: 0, replicas: [0] },
              { partition: 1, replicas: [1] },
            ],
            configEntries: [{ name: 'segment.bytes', value: '1024' }],
          },
        ],
        waitForLeaders: true,
      });
      for (let i = 0; i < 40; i++)
        await producer.send({ topic, acks: -1, messages: [0, 1].map((partition) => ({ partition, value: `v${i}`.padEnd(100, '.') })) });

      const own = await samsa(
        'configs',
        '--bootstrap-server',
        c.bootstrap,
        '--entity-type',
        'brokers',
        '--entity-name',
        '1',
        '--alter',
        '--add-config',
        'log.retention.ms=86400000',
      );
      expect(own.stdout).toBe('Completed updating config for broker 1.\n');
      await until(async () => (await describeOn(1, 4, '1', 'log.retention.ms'))?.configSource === 2, 'broker 1 per-broker value');
      const def = await samsa(
        'configs',
        '--bootstrap-server',
        c.bootstrap,
        '--entity-type',
        'brokers',
        '--entity-default',
        '--alter',
        '--add-config',
        'log.retention.ms=1000',
      );
      expect(def.stdout).toBe('Completed updating default config for brokers in the cluster.\n');

      for (const b of [0, 2]) {
        await until(async () => {
          const e = await describeOn(b, 4, String(b), 'log.retention.ms');
          return e?.value === '1000' && e.configSource === 3 ? e : null;
        }, `broker ${b} takes the cluster default`);
        // a topic without its own retention.ms inherits it, with the synonym chain
        const t = await describeOn(b, 2, topic, 'retention.ms');
        expect(t?.value).toBe('1000');
        expect(t?.configSource).toBe(3);
        expect(t?.synonyms.map((s) => [s.name, s.value, s.source])).toEqual([
          ['log.retention.ms', '1000', 3],
          ['log.retention.hours', '168', 5],
        ]);
      }
      const b1 = await describeOn(1, 4, '1', 'log.retention.ms');
      expect([b1?.value, b1?.configSource]).toEqual(['86400000', 2]);
      expect(b1?.synonyms.map((s) => [s.name, s.value, s.source])).toEqual([
        ['log.retention.ms', '86400000', 2],
        ['log.retention.ms', '1000', 3],
        ['log.retention.hours', '168', 5],
      ]);

      // retention: partition 0 (broker 0) loses its old segments, partition 1 (broker 1) keeps them
      await until(async () => Number((await admin.fetchTopicOffsets(topic)).find((p) => p.partition === 0)!.low) > 0, 'retention on broker 0');
      expect(Number((await admin.fetchTopicOffsets(topic)).find((p) => p.partition === 1)!.low)).toBe(0);

      const describeDefault = await samsa('configs', '--bootstrap-server', c.bootstrap, '--entity-type', 'brokers', '--entity-default', '--describe');
      expect(describeDefault.stdout).toBe(
        'Default configs for brokers in the cluster are:\n  log.retention.ms=1000 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=1000}\n',
      );
      const describe1 = await samsa('configs', '--bootstrap-server', c.bootstrap, '--entity-type', 'brokers', '--entity-name', '1', '--describe');
      expect(describe1.stdout).toBe(
        'Dynamic configs for broker 1 are:\n  log.retention.ms=86400000 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:log.retention.ms=86400000, DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=1000, DEFAULT_CONFIG:log.retention.hours=168}\n',
      );
      // clean up so later tests see the defaults
      await samsa(
        'configs',
        '--bootstrap-server',
        c.bootstrap,
        '--entity-type',
        'brokers',
        '--entity-default',
        '--alter',
        '--delete-config',
        'log.retention.ms',
      );
    });

    it("configs – read-only broker configs and invalid values are refused with Kafka's errors", async () => {
      const ro = await samsa(
        'configs',
        '--bootstrap-server',
        c.bootstrap,
        '--entity-type',
        'brokers',
        '--entity-name',
        '0',
        '--alter',
        '--add-config',
        'log.dirs=/elsewhere',
      );
      expect(ro.code).toBe(1);
      expect(ro.stderr).toContain(
        "org.apache.kafka.common.errors.InvalidRequestException: Invalid config value for resource ConfigResource(type=BROKER, name='0'): Cannot update these configs dynamically: Set(log.dirs)",
      );
      const bad = await samsa(
        'configs',
        '--bootstrap-server',
        c.bootstrap,
        '--entity-type',
        'brokers',
        '--entity-default',
        '--alter',
        '--add-config',
        'log.retention.bytes=lots',
      );
      expect(bad.code).toBe(1);
      expect(bad.stderr).toMatch(/InvalidConfigurationException: .*log\.retention\.bytes/);
      expect(await c.admin.getEntityConfig(ConfigType.Broker, '0')).toEqual({});
    });

    it('configs – --zookeeper writes client quotas to /config/clients/<id> with a change notification; invalid quota names refused', async () => {
      const zk = c.zk.connectString('/samsa');
      const before = (await c.admin.zk.getChildren('/config/changes')).length;
      const r = await samsa(
        'configs',
        '--zookeeper',
        zk,
        '--entity-type',
        'clients',
        '--entity-name',
        'slow-client',
        '--alter',
        '--add-config',
        'producer_byte_rate=1048576,consumer_byte_rate=2097152',
      );
      expect(r.stderr).toBe('');
      expect(r.stdout).toBe("Completed updating config for entity: client 'slow-client'.\n");
      expect(await c.admin.getEntityConfig(ConfigType.Client, 'slow-client')).toEqual({ producer_byte_rate: '1048576', consumer_byte_rate: '2097152' });
      const children = await c.admin.zk.getChildren('/config/changes');
      expect(children.length).toBeGreaterThan(before);
      const d = await samsa('configs', '--zookeeper', zk, '--entity-type', 'clients', '--entity-name', 'slow-client', '--describe');
      expect(d.stdout).toBe("Configs for client 'slow-client' are producer_byte_rate=1048576,consumer_byte_rate=2097152\n");
      const bad = await samsa('configs', '--zookeeper', zk, '--entity-type', 'users', '--entity-default', '--alter', '--add-config', 'producer_rate=5');
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain('Invalid config(s): producer_rate');
    });

    it("configs – --bootstrap-server alters and describes client/user quotas (AlterClientQuotas, DescribeClientQuotas) in kafka-configs.sh's format; brokers apply them", async () => {
      const b = c.bootstrap;
      const tiny = await samsa(
        'configs',
        '--bootstrap-server',
        b,
        '--entity-type',
        'clients',
        '--entity-name',
        'tiny',
        '--alter',
        '--add-config',
        'producer_byte_rate=1024,request_percentage=12.5',
      );
      expect(tiny.stderr).toBe('');
      expect(tiny.stdout).toBe('Completed updating config for client tiny.\n');
      expect(await c.admin.getEntityConfig(ConfigType.Client, 'tiny')).toEqual({ producer_byte_rate: '1024', request_percentage: '12.5' });
      const pair = await samsa(
        'configs',
        '--bootstrap-server',
        b,
        '--entity-type',
        'users',
        '--entity-name',
        'alice',
        '--entity-type',
        'clients',
        '--entity-name',
        'app',
        '--alter',
        '--add-config',
        'consumer_byte_rate=2048',
      );
      expect(pair.stdout).toBe('Completed updating config for user alice.\n');
      expect(await c.admin.getEntityConfig(ConfigType.User, 'alice/clients/app')).toEqual({ consumer_byte_rate: '2048' });
      const dflt = await samsa(
        'configs',
        '--bootstrap-server',
        b,
        '--entity-type',
        'clients',
        '--entity-default',
        '--alter',
        '--add-config',
        'consumer_byte_rate=4096',
      );
      expect(dflt.stdout).toBe('Completed updating default config for clients in the cluster.\n');
      expect(await c.admin.getEntityConfig(ConfigType.Client, '<default>')).toEqual({ consumer_byte_rate: '4096' });

      const clients = await samsa('configs', '--bootstrap-server', b, '--entity-type', 'clients', '--describe');
      expect(clients.stderr).toBe('');
      // (the --zookeeper test's slow-client is listed too when it ran first)
      const lines = clients.stdout.split('\n').filter(Boolean);
      expect(lines).toContain("Quota configs for client-id 'tiny' are producer_byte_rate=1024.0, request_percentage=12.5");
      expect(lines).toContain('Quota configs for the default client-id are consumer_byte_rate=4096.0');
      // strict: the (alice, app) pair is not a client-id-only entity
      expect(lines.filter((l) => l.includes('alice'))).toEqual([]);
      const both = await samsa('configs', '--bootstrap-server', b, '--user', 'alice', '--client', 'app', '--describe');
      expect(both.stdout).toBe("Quota configs for user-principal 'alice', client-id 'app' are consumer_byte_rate=2048.0\n");

      const del = await samsa(
        'configs',
        '--bootstrap-server',
        b,
        '--entity-type',
        'clients',
        '--entity-name',
        'tiny',
        '--alter',
        '--delete-config',
        'request_percentage',
      );
      expect(del.code).toBe(0);
      expect(await c.admin.getEntityConfig(ConfigType.Client, 'tiny')).toEqual({ producer_byte_rate: '1024' });
      const notSet = await samsa(
        'configs',
        '--bootstrap-server',
        b,
        '--entity-type',
        'clients',
        '--entity-name',
        'tiny',
        '--alter',
        '--delete-config',
        'consumer_byte_rate',
      );
      expect(notSet.code).toBe(1);
      expect(notSet.stderr).toContain('Invalid config(s): consumer_byte_rate');
      const badKey = await samsa(
        'configs',
        '--bootstrap-server',
        b,
        '--entity-type',
        'clients',
        '--entity-name',
        'tiny',
        '--alter',
        '--add-config',
        'producer_rate=5',
      );
      expect(badKey.code).toBe(1);
      // Kafka 2.7+ ConfigCommand refuses a key that is neither a quota nor a SCRAM config itself (KIP-554)
      expect(badKey.stderr).toBe("Only quota configs can be added for 'clients' using --bootstrap-server. Unexpected config names: Set(producer_rate)\n");

      // every broker applies the quota: a 20 kB produce from client id "tiny" (bucket: 11 s × 1 kB/s) is throttled
      const [host, port] = c.broker(0).address.split(':');
      await admin.createTopics({ topics: [{ topic: 'cfg-quota', replicaAssignment: [{ partition: 0, replicas: [0] }] }], waitForLeaders: true });
      const conn = await Connection.connect({ host: host!, port: Number(port), clientId: 'tiny', requestTimeoutMs: 60_000 });
      try {
        const records = encodeRecordBatch({ records: [{ value: Buffer.alloc(20_000, 1) }] });
        const throttled = await until(
          async () => {
            const res = await conn.request(
              API_KEYS.Produce,
              { transactionalId: null, acks: 1, timeoutMs: 10_000, topicData: [{ name: 'cfg-quota', partitionData: [{ index: 0, records }] }] },
              { version: 9 },
            );
            expect(res.body.responses[0]!.partitionResponses[0]!.errorCode).toBe(0);
            return res.body.throttleTimeMs > 0 ? res.body.throttleTimeMs : null;
          },
          'a throttled produce from client id tiny',
          30_000,
          200,
        );
        expect(throttled).toBeGreaterThan(1000);
      } finally {
        await conn.close();
      }
      // kcat (librdkafka) still parses ApiVersions, which now lists DescribeClientQuotas and AlterClientQuotas
      const versions = await rawRequest(c.broker(1).address, API_KEYS.ApiVersions, 3, { clientSoftwareName: 'e2e', clientSoftwareVersion: '1' });
      expect(versions.apiKeys.filter((k) => k.apiKey === 48 || k.apiKey === 49)).toEqual([
        { apiKey: 48, minVersion: 0, maxVersion: 1 },
        { apiKey: 49, minVersion: 0, maxVersion: 1 },
      ]);
      const md = await exec('kcat', ['-L', '-b', b, '-X', 'debug=protocol'], { timeout: 60_000 });
      expect(md.stdout).toContain('3 brokers:');
      expect(md.stderr).toMatch(/Received ApiVersionResponse \(v3/);
    }, 180_000);
  },
  { processesOnly: 'reads broker files or starts broker processes; not yet run on containers' },
);
