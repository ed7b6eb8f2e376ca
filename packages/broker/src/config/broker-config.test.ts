import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { BrokerConfig, buildBrokerConfig, generatedBrokerId, loadBrokerConfig } from './broker-config.js';
import { BROKER_CONFIG_NAMES, BROKER_CONFIGS } from './definitions.js';
import { ConfigError } from './errors.js';
import { envVariableFor, parseOverride } from './sources.js';
import { LONG_MAX } from './values.js';
import type { Password } from './values.js';

const ZK = { 'zookeeper.connect': '127.0.0.1:2181' };
const build = (properties: Record<string, string> = {}) => buildBrokerConfig({ properties: { ...ZK, ...properties } });

/** Kafka 3.8 defaults, as DescribeConfigs prints them. */
const KAFKA_DEFAULTS: Record<string, string | null> = {
  'broker.id': '-1',
  'reserved.broker.max.id': '1000',
  'broker.id.generation.enable': 'true',
  'advertised.listeners': null,
  'inter.broker.listener.name': null,
  'security.inter.broker.protocol': 'PLAINTEXT',
  'log.dir': '/tmp/kafka-logs',
  'log.dirs': null,
  'zookeeper.session.timeout.ms': '18000',
  'zookeeper.connection.timeout.ms': null,
  'zookeeper.max.in.flight.requests': '10',
  'num.partitions': '1',
  'default.replication.factor': '1',
  'min.insync.replicas': '1',
  'auto.create.topics.enable': 'true',
  'delete.topic.enable': 'true',
  'unclean.leader.election.enable': 'false',
  'auto.leader.rebalance.enable': 'true',
  'leader.imbalance.per.broker.percentage': '10',
  'leader.imbalance.check.interval.seconds': '300',
  'log.segment.bytes': '1073741824',
  'log.roll.ms': null,
  'log.roll.hours': '168',
  'log.roll.jitter.hours': '0',
  'log.retention.ms': null,
  'log.retention.minutes': null,
  'log.retention.hours': '168',
  'log.retention.bytes': '-1',
  'log.retention.check.interval.ms': '300000',
  'log.index.interval.bytes': '4096',
  'log.index.size.max.bytes': '10485760',
  'log.flush.interval.messages': '9223372036854775807',
  'log.flush.interval.ms': null,
  'log.flush.scheduler.interval.ms': '9223372036854775807',
  'log.cleanup.policy': 'delete',
  'log.cleaner.enable': 'true',
  'log.cleaner.min.cleanable.ratio': '0.5',
  'log.cleaner.dedupe.buffer.size': '134217728',
  'log.cleaner.io.max.bytes.per.second': '1.7976931348623157E308',
  'log.cleaner.delete.retention.ms': '86400000',
  'log.message.timestamp.type': 'CreateTime',
  'log.message.timestamp.difference.max.ms': '9223372036854775807',
  'message.max.bytes': '1048588',
  'compression.type': 'producer',
  'replica.fetch.max.bytes': '1048576',
  'replica.fetch.min.bytes': '1',
  'replica.fetch.wait.max.ms': '500',
  'replica.fetch.backoff.ms': '1000',
  'replica.fetch.response.max.bytes': '10485760',
  'replica.lag.time.max.ms': '30000',
  'replica.socket.timeout.ms': '30000',
  'replica.high.watermark.checkpoint.interval.ms': '5000',
  'num.replica.fetchers': '1',
  'offsets.topic.num.partitions': '50',
  'offsets.topic.replication.factor': '3',
  'offsets.topic.segment.bytes': '104857600',
  'offsets.retention.minutes': '10080',
  'offsets.retention.check.interval.ms': '600000',
  'offsets.commit.required.acks': '-1',
  'offset.metadata.max.bytes': '4096',
  'group.initial.rebalance.delay.ms': '3000',
  'group.min.session.timeout.ms': '6000',
  'group.max.session.timeout.ms': '1800000',
  'group.max.size': '2147483647',
  'socket.request.max.bytes': '104857600',
  'socket.send.buffer.bytes': '102400',
  'socket.receive.buffer.bytes': '102400',
  'connections.max.idle.ms': '600000',
  'request.timeout.ms': '30000',
  'num.network.threads': '3',
  'num.io.threads': '8',
  'background.threads': '10',
  'broker.rack': null,
  'controlled.shutdown.enable': 'true',
  'controlled.shutdown.max.retries': '3',
  'controlled.shutdown.retry.backoff.ms': '5000',
  'controller.socket.timeout.ms': '30000',
  'transaction.state.log.num.partitions': '50',
  'transaction.state.log.replication.factor': '3',
  'transaction.state.log.min.isr': '2',
  'transaction.state.log.segment.bytes': '104857600',
  'transaction.max.timeout.ms': '900000',
  'transactional.id.expiration.ms': '604800000',
  'fetch.max.bytes': '57671680',
};

describe('broker config – defaults', () => {
  it('broker config – only zookeeper.connect is needed', () => {
    const c = build();
    expect(c.brokerId).toBe(-1);
    expect(c.warnings).toEqual([]);
  });

  it('broker config – defaults match Kafka 3.8', () => {
    const c = build();
    for (const [name, value] of Object.entries(KAFKA_DEFAULTS)) {
      expect(c.describe(name as never).value, name).toBe(value);
    }
    expect(c.get('log.flush.interval.messages')).toBe(LONG_MAX);
  });

  it('broker config – Samsa adds a CONTROLLER listener for controller→broker RPC', () => {
    const c = build();
    expect(c.get('listeners')).toBe('PLAINTEXT://:9092,CONTROLLER://:19092');
    expect(c.get('control.plane.listener.name')).toBe('CONTROLLER');
    expect(c.securityProtocolMap).toEqual({
      SASL_SSL: 'SASL_SSL',
      PLAINTEXT: 'PLAINTEXT',
      SSL: 'SSL',
      SASL_PLAINTEXT: 'SASL_PLAINTEXT',
      CONTROLLER: 'PLAINTEXT',
    });
    expect(c.controlPlaneListener).toEqual({ listenerName: 'CONTROLLER', host: '', port: 19092, securityProtocol: 'PLAINTEXT' });
    expect(c.dataPlaneListeners.map((l) => l.listenerName)).toEqual(['PLAINTEXT']);
    expect(c.interBrokerListenerName).toBe('PLAINTEXT');
    expect(c.get('metrics.port')).toBe(-1);
    expect(c.get('console.port')).toBeNull();
    expect(c.get('log.index.open.files.max')).toBe(4096);
    expect(BROKER_CONFIGS['log.index.open.files.max'].samsa).toBe('extension');
    expect(c.get('controller.hot.standby.enable')).toBe(true);
    expect(c.get('controller.hot.standby.max.partitions')).toBe(12000);
    expect(BROKER_CONFIGS['controller.hot.standby.max.partitions'].samsa).toBe('extension');
  });

  it('broker config – derived defaults: 7-day retention and roll, log dir, ZooKeeper timeouts', () => {
    const c = build();
    expect(c.logRetentionMs).toBe(604_800_000);
    expect(c.logRollMs).toBe(604_800_000);
    expect(c.logRollJitterMs).toBe(0);
    expect(c.logFlushIntervalMs).toBe(LONG_MAX);
    expect(c.logDirs).toEqual(['/tmp/kafka-logs']);
    expect(c.zookeeper).toEqual({
      connectString: '127.0.0.1:2181',
      hosts: ['127.0.0.1:2181'],
      chroot: '',
      sessionTimeoutMs: 18000,
      connectionTimeoutMs: 18000,
      maxInFlightRequests: 10,
    });
  });

  it("broker config – update modes and importance follow Kafka's broker docs", () => {
    const mode = (n: keyof typeof BROKER_CONFIGS) => BROKER_CONFIGS[n].dynamic;
    for (const n of [
      'broker.id',
      'zookeeper.connect',
      'log.dirs',
      'log.retention.hours',
      'log.roll.hours',
      'num.partitions',
      'auto.create.topics.enable',
      'replica.lag.time.max.ms',
      'offsets.topic.replication.factor',
    ] as const) {
      expect(mode(n), n).toBe('read-only');
    }
    for (const n of ['listeners', 'advertised.listeners', 'listener.security.protocol.map', 'ssl.key.password'] as const) expect(mode(n), n).toBe('per-broker');
    for (const n of [
      'log.retention.ms',
      'log.roll.ms',
      'log.segment.bytes',
      'log.cleanup.policy',
      'message.max.bytes',
      'min.insync.replicas',
      'unclean.leader.election.enable',
      'compression.type',
      'num.io.threads',
      'num.network.threads',
      'num.replica.fetchers',
      'log.flush.interval.ms',
    ] as const) {
      expect(mode(n), n).toBe('cluster-wide');
    }
    expect(BROKER_CONFIGS['broker.id'].importance).toBe('high');
    expect(BROKER_CONFIGS['listener.security.protocol.map'].importance).toBe('low');
    expect(BROKER_CONFIGS['offsets.topic.replication.factor'].type).toBe('short');
  });

  it('broker config – every definition has a doc, an importance and a default of its type', () => {
    for (const name of BROKER_CONFIG_NAMES) {
      const def = BROKER_CONFIGS[name];
      expect(def.doc.length, name).toBeGreaterThan(10);
      const d: unknown = def.default;
      if (d === null) continue;
      const expected = { boolean: 'boolean', string: 'string', list: 'object', password: 'object' }[def.type as string] ?? 'number';
      expect(typeof d, name).toBe(expected);
    }
  });
});

describe('broker config – typed access', () => {
  it('broker config – get() is typed by the definition table', () => {
    const c = build({ 'ssl.key.password': 'pw' });
    expectTypeOf(c.get('log.segment.bytes')).toEqualTypeOf<number>();
    expectTypeOf(c.get('auto.create.topics.enable')).toEqualTypeOf<boolean>();
    expectTypeOf(c.get('zookeeper.connect')).toEqualTypeOf<string>();
    expectTypeOf(c.get('broker.rack')).toEqualTypeOf<string | null>();
    expectTypeOf(c.get('log.retention.ms')).toEqualTypeOf<number | null>();
    expectTypeOf(c.get('log.cleanup.policy')).toEqualTypeOf<readonly string[]>();
    expectTypeOf(c.get('ssl.key.password')).toEqualTypeOf<Password | null>();
    expect(c.get('ssl.key.password')?.value).toBe('pw');
    expect(c.get('log.cleanup.policy')).toEqual(['delete']);
  });

  it('broker config – the config and its parts are frozen', () => {
    const c = build();
    expect(Object.isFrozen(c)).toBe(true);
    expect(Object.isFrozen(c.listeners)).toBe(true);
    expect(Object.isFrozen(c.listeners[0])).toBe(true);
    expect(Object.isFrozen(c.logDirs)).toBe(true);
    expect(Object.isFrozen(c.zookeeper)).toBe(true);
    expect(Object.isFrozen(c.securityProtocolMap)).toBe(true);
    expect(Object.isFrozen(c.get('log.cleanup.policy'))).toBe(true);
    expect(() => {
      (c as { brokerId: number }).brokerId = 3;
    }).toThrow(TypeError);
  });
});

describe('broker config – sources and precedence', () => {
  const file = 'broker.id=1\nlog.retention.hours=24\nnum.partitions=3\nmessage.max.bytes=2000000\n';

  it('broker config – override > env > file > default', () => {
    const c = buildBrokerConfig({
      propertiesText: `${file}zookeeper.connect=zk:2181\n`,
      env: { SAMSA_BROKER_ID: '2', SAMSA_NUM_PARTITIONS: '4' },
      overrides: ['broker.id=3'],
    });
    expect(c.brokerId).toBe(3);
    expect(c.get('num.partitions')).toBe(4);
    expect(c.get('message.max.bytes')).toBe(2_000_000);
    expect(c.get('log.segment.bytes')).toBe(1073741824);
    expect(c.origin('broker.id')).toEqual({ kind: 'override' });
    expect(c.origin('num.partitions')).toEqual({ kind: 'env', variable: 'SAMSA_NUM_PARTITIONS' });
    expect(c.origin('message.max.bytes')).toEqual({ kind: 'file', file: 'server.properties', line: 4 });
    expect(c.origin('log.segment.bytes')).toEqual({ kind: 'default' });
    expect(c.isSet('broker.id')).toBe(true);
    expect(c.isSet('log.segment.bytes')).toBe(false);
  });

  it('broker config – properties records sit between the file and the environment', () => {
    const c = buildBrokerConfig({ propertiesText: 'broker.id=1\nzookeeper.connect=a:1', properties: { 'broker.id': '5' }, env: {} });
    expect(c.brokerId).toBe(5);
    expect(buildBrokerConfig({ properties: { ...ZK, 'broker.id': '5' }, env: { SAMSA_BROKER_ID: '6' } }).brokerId).toBe(6);
  });

  it('broker config – SAMSA_<KEY> variables: upper case, dots as underscores', () => {
    expect(envVariableFor('broker.id')).toBe('SAMSA_BROKER_ID');
    expect(envVariableFor('zookeeper.connect')).toBe('SAMSA_ZOOKEEPER_CONNECT');
    expect(new Set(BROKER_CONFIG_NAMES.map(envVariableFor)).size).toBe(BROKER_CONFIG_NAMES.length);
    const c = buildBrokerConfig({
      env: {
        SAMSA_ZOOKEEPER_CONNECT: 'zk1:2181,zk2:2181/samsa',
        SAMSA_LOG_DIRS: '/data/a,/data/b',
        SAMSA_LISTENERS: 'PLAINTEXT://:9092,CONTROLLER://:19092',
        SAMSA_ADVERTISED_LISTENERS: 'PLAINTEXT://kafka-1:9092,CONTROLLER://kafka-1:19092',
        SAMSA_PID_DIR: '/tmp/pids',
        SAMSA_BROKER_RACK: '',
        PATH: '/usr/bin',
      },
    });
    expect(c.zookeeper.chroot).toBe('/samsa');
    expect(c.logDirs).toEqual(['/data/a', '/data/b']);
    expect(c.advertisedListeners.map((l) => l.host)).toEqual(['kafka-1', 'kafka-1']);
    expect(c.warnings).toEqual([]);
    expect(c.get('broker.rack')).toBeNull();
  });

  it('broker config – --override key=value, values may hold = and be empty', () => {
    expect(parseOverride('a=b=c')).toEqual(['a', 'b=c']);
    expect(parseOverride(' a =')).toEqual(['a', '']);
    const c = buildBrokerConfig({ overrides: { ...ZK, 'broker.rack': 'r1' } });
    expect(c.get('broker.rack')).toBe('r1');
  });

  it("broker config – unknown keys are warnings with Kafka's wording, not errors", () => {
    const c = buildBrokerConfig({ propertiesText: 'zookeeper.connect=z:1\nretention.ms=5\nfoo.bar=1', overrides: ['listener.name.x.y=z'] });
    expect(c.unknownKeys).toEqual(['retention.ms', 'foo.bar', 'listener.name.x.y']);
    expect(c.warnings[0]).toBe("The configuration 'retention.ms' was supplied but isn't a known config.");
    expect(c.settings().get('foo.bar')?.value).toBe('1');
  });

  it('broker config – a malformed \\u escape in server.properties is a ConfigError naming the key, file and line', () => {
    const err = (() => {
      try {
        buildBrokerConfig({ propertiesText: 'broker.id=1\nlog.dirs=C:\\users\\x\n', propertiesFile: 'server.properties' });
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).key).toBe('log.dirs');
    expect((err as ConfigError).message).toMatch(/Malformed \\uxxxx escape.*server\.properties line 2/);
  });

  it('broker config – loadBrokerConfig reads a file and the process environment', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'samsa-config-'));
    try {
      const path = join(dir, 'broker-7.properties');
      await writeFile(path, 'broker.id=7\nzookeeper.connect=127.0.0.1:2181\n');
      const c = await loadBrokerConfig({ file: path, env: { SAMSA_BROKER_RACK: 'east' }, overrides: ['num.partitions=2'] });
      expect(c.brokerId).toBe(7);
      expect(c.get('broker.rack')).toBe('east');
      expect(c.get('num.partitions')).toBe(2);
      expect(c.origin('broker.id')).toEqual({ kind: 'file', file: 'broker-7.properties', line: 1 });
      await expect(loadBrokerConfig({ file: join(dir, 'missing.properties'), env: {} })).rejects.toThrow(
        /Cannot read the configuration file .*missing\.properties/,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('broker config – derived values', () => {
  it('broker config – retention from ms, else minutes, else hours; negative means forever', () => {
    expect(build({ 'log.retention.hours': '24' }).logRetentionMs).toBe(86_400_000);
    expect(build({ 'log.retention.hours': '24', 'log.retention.minutes': '10' }).logRetentionMs).toBe(600_000);
    expect(build({ 'log.retention.minutes': '10', 'log.retention.ms': '1234' }).logRetentionMs).toBe(1234);
    expect(build({ 'log.retention.ms': '-5' }).logRetentionMs).toBe(-1);
    expect(build({ 'log.retention.hours': '-1' }).logRetentionMs).toBe(-1);
  });

  it('broker config – roll and jitter from ms, else hours; flush interval from the scheduler interval', () => {
    expect(build({ 'log.roll.hours': '1' }).logRollMs).toBe(3_600_000);
    expect(build({ 'log.roll.hours': '1', 'log.roll.ms': '500' }).logRollMs).toBe(500);
    expect(build({ 'log.roll.jitter.hours': '2' }).logRollJitterMs).toBe(7_200_000);
    expect(build({ 'log.flush.scheduler.interval.ms': '2000' }).logFlushIntervalMs).toBe(2000);
    expect(build({ 'log.flush.interval.ms': '10', 'log.flush.scheduler.interval.ms': '2000' }).logFlushIntervalMs).toBe(10);
  });

  it('broker config – log.dirs splits on commas and wins over log.dir', () => {
    expect(build({ 'log.dirs': ' a , b,c ', 'log.dir': 'x' }).logDirs).toEqual(['a', 'b', 'c']);
    expect(build({ 'log.dir': 'x' }).logDirs).toEqual(['x']);
  });

  it('broker config – advertised.listeners defaults to listeners', () => {
    const c = build({ listeners: 'PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:0' });
    expect(c.advertisedListeners).toBe(c.listeners);
    expect(c.listeners.map((l) => l.port)).toEqual([0, 0]);
  });

  it('broker config – a separate inter-broker listener', () => {
    const c = build({
      'listener.security.protocol.map': 'INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT',
      listeners: 'INTERNAL://:29092,EXTERNAL://:9092,CONTROLLER://:19092',
      'advertised.listeners': 'INTERNAL://kafka-1:29092,EXTERNAL://localhost:9092,CONTROLLER://kafka-1:19092',
      'inter.broker.listener.name': 'internal',
    });
    expect(c.interBrokerListenerName).toBe('INTERNAL');
    expect(c.interBrokerSecurityProtocol).toBe('PLAINTEXT');
    expect(c.dataPlaneListeners.map((l) => l.listenerName)).toEqual(['INTERNAL', 'EXTERNAL']);
  });

  it('broker config – ZooKeeper chroot, several hosts, IPv6 host, connection timeout', () => {
    const c = build({
      'zookeeper.connect': '127.0.0.1:2181, 127.0.0.1:2182,[::1]:2183/kafka/prod',
      'zookeeper.session.timeout.ms': '6000',
      'zookeeper.connection.timeout.ms': '2000',
    });
    expect(c.zookeeper.hosts).toEqual(['127.0.0.1:2181', '127.0.0.1:2182', '[::1]:2183']);
    expect(c.zookeeper.connectString).toBe('127.0.0.1:2181,127.0.0.1:2182,[::1]:2183/kafka/prod');
    expect(c.get('zookeeper.connect')).toBe('127.0.0.1:2181, 127.0.0.1:2182,[::1]:2183/kafka/prod');
    expect(c.zookeeper.chroot).toBe('/kafka/prod');
    expect(c.zookeeper.sessionTimeoutMs).toBe(6000);
    expect(c.zookeeper.connectionTimeoutMs).toBe(2000);
    expect(build({ 'zookeeper.connect': 'zk/' }).zookeeper).toMatchObject({ chroot: '', connectString: 'zk' });
  });

  it('broker config – a generated broker id lies above reserved.broker.max.id', () => {
    const c = build({ 'reserved.broker.max.id': '100' });
    const id = generatedBrokerId(c, 1);
    expect(id).toBe(101);
    const g = c.withBrokerId(id);
    expect(g.brokerId).toBe(101);
    expect(g.origin('broker.id')).toEqual({ kind: 'generated' });
    expect(g.describe('broker.id')).toMatchObject({ value: '101', source: 'STATIC_BROKER_CONFIG' });
    expect(() => c.withBrokerId(50)).toThrow(/above reserved\.broker\.max\.id \(100\)/);
  });
});

describe('broker config – describe', () => {
  it('broker config – every config, sorted, with source, type, read-only and doc', () => {
    const c = build({ 'num.partitions': '3' });
    const all = c.describe();
    expect(all.map((d) => d.name)).toEqual([...BROKER_CONFIG_NAMES].sort());
    expect(c.describe('num.partitions')).toMatchObject({
      value: '3',
      source: 'STATIC_BROKER_CONFIG',
      sensitive: false,
      readOnly: true,
      type: 'int',
      synonyms: [
        { name: 'num.partitions', value: '3', source: 'STATIC_BROKER_CONFIG' },
        { name: 'num.partitions', value: '1', source: 'DEFAULT_CONFIG' },
      ],
    });
    expect(c.describe('min.insync.replicas')).toMatchObject({ source: 'DEFAULT_CONFIG', readOnly: false });
    expect(c.describe('zookeeper.connect')).toMatchObject({ value: '127.0.0.1:2181', source: 'STATIC_BROKER_CONFIG', origin: { kind: 'properties' } });
    expect(c.describe('broker.rack')).toMatchObject({ value: null, source: 'DEFAULT_CONFIG', synonyms: [] });
  });

  it("broker config – synonyms start at the config itself, as Kafka's ConfigHelper.configSynonyms drops what comes before", () => {
    // log.retention.ms is unset and has no default: Kafka lists no synonyms (not log.retention.hours)
    expect(build().describe('log.retention.ms')).toMatchObject({ value: null, source: 'DEFAULT_CONFIG', synonyms: [] });
    expect(build({ 'log.retention.hours': '24' }).describe('log.retention.ms')).toMatchObject({ value: null, source: 'DEFAULT_CONFIG', synonyms: [] });
    expect(build({ 'log.retention.hours': '24' }).describe('log.retention.hours')).toMatchObject({
      value: '24',
      source: 'STATIC_BROKER_CONFIG',
      synonyms: [
        { name: 'log.retention.hours', value: '24', source: 'STATIC_BROKER_CONFIG' },
        { name: 'log.retention.hours', value: '168', source: 'DEFAULT_CONFIG' },
      ],
    });
    // once log.retention.ms is set, the lower-precedence synonyms follow it
    expect(build({ 'log.retention.ms': '1000', 'log.retention.minutes': '5' }).describe('log.retention.ms')).toMatchObject({
      value: '1000',
      source: 'STATIC_BROKER_CONFIG',
      synonyms: [
        { name: 'log.retention.ms', value: '1000', source: 'STATIC_BROKER_CONFIG' },
        { name: 'log.retention.minutes', value: '5', source: 'STATIC_BROKER_CONFIG' },
        { name: 'log.retention.hours', value: '168', source: 'DEFAULT_CONFIG' },
      ],
    });
    // and a set log.retention.ms is not log.retention.hours' source
    expect(build({ 'log.retention.ms': '1000' }).describe('log.retention.hours')).toMatchObject({
      value: '168',
      source: 'DEFAULT_CONFIG',
      synonyms: [{ name: 'log.retention.hours', value: '168', source: 'DEFAULT_CONFIG' }],
    });
  });

  it('broker config – passwords are sensitive and never described', () => {
    const d = build({ 'ssl.keystore.password': 'secret' }).describe('ssl.keystore.password');
    expect(d).toMatchObject({ value: null, sensitive: true, source: 'STATIC_BROKER_CONFIG', type: 'password' });
    expect(JSON.stringify(d)).not.toContain('secret');
  });

  it('broker config – describe() entries are plain data for DescribeConfigs', () => {
    const d = build().describe('listeners');
    expect(d).toMatchObject({ readOnly: false, type: 'string', value: 'PLAINTEXT://:9092,CONTROLLER://:19092' });
    expect(
      BrokerConfig.fromSettings(new Map([['zookeeper.connect', { value: 'z:1', origin: { kind: 'override' } }]])).describe('zookeeper.connect').origin,
    ).toEqual({ kind: 'override' });
  });
});

describe('broker config – example server.properties', () => {
  it('broker config – packages/broker/config/server.properties is valid and sets up broker 0 of the local cluster', async () => {
    const file = fileURLToPath(new URL('../../config/server.properties', import.meta.url));
    const c = await loadBrokerConfig({ file, env: {} });
    expect(c.warnings).toEqual([]);
    expect(c.brokerId).toBe(0);
    expect(c.listeners.map((l) => `${l.listenerName}:${l.port}`)).toEqual(['PLAINTEXT:9092', 'CONTROLLER:19092']);
    expect(c.zookeeper.hosts).toEqual(['127.0.0.1:2181', '127.0.0.1:2182', '127.0.0.1:2183']);
    expect(c.zookeeper.chroot).toBe('');
    expect(c.logDirs).toEqual(['data/broker-0/logs']);
  });
});

describe('broker config – errors carry the key', () => {
  it('broker config – ConfigError is an Error with a name', () => {
    const e = new ConfigError('k', 'm');
    expect(e).toBeInstanceOf(Error);
    expect(e.name).toBe('ConfigError');
  });
});

describe('broker config – per-listener settings (listener.name.<listener>.)', () => {
  it('prefers listener.name.<listener>.<config>, then the mechanism level, else the broker-wide value', () => {
    const c = build({
      'connections.max.idle.ms': '1000',
      'listener.name.sasl_ssl.connections.max.idle.ms': '2000',
      'listener.name.sasl_ssl.ssl.key.password': 'listener-secret',
      'listener.name.sasl_ssl.scram-sha-512.ssl.key.password': 'mechanism-secret',
    });
    expect(c.forListener('SASL_SSL', 'connections.max.idle.ms')).toBe(2000);
    expect(c.forListener('PLAINTEXT', 'connections.max.idle.ms')).toBe(1000);
    expect(c.forListener('SASL_SSL', 'ssl.key.password')?.value).toBe('listener-secret');
    expect(c.forListener('SASL_SSL', 'ssl.key.password', 'SCRAM-SHA-512')?.value).toBe('mechanism-secret');
    expect(c.forListener('SASL_SSL', 'ssl.key.password', 'PLAIN')?.value).toBe('listener-secret');
    expect(c.unknownKeys).toEqual([]);
  });

  it('decodes prefixed values with the config definition and keeps other listener.name keys unknown', () => {
    expect(() => build({ 'listener.name.sasl_ssl.connections.max.idle.ms': 'soon' })).toThrow(/listener\.name\.sasl_ssl\.connections\.max\.idle\.ms/);
    expect(build({ 'listener.name.sasl_ssl.no.such.config': 'x' }).unknownKeys).toEqual(['listener.name.sasl_ssl.no.such.config']);
  });
});
