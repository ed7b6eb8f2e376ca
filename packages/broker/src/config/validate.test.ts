import { describe, expect, it } from 'vitest';
import { buildBrokerConfig } from './broker-config.js';
import type { BrokerConfigInput } from './broker-config.js';
import { ConfigError } from './errors.js';

const ZK = { 'zookeeper.connect': '127.0.0.1:2181' };

/** Builds with `props` on top of a valid minimal config and returns the ConfigError it must throw. */
function errorFor(props: Record<string, string>, input: BrokerConfigInput = {}): ConfigError {
  try {
    buildBrokerConfig({ properties: { ...ZK, ...props }, ...input });
  } catch (e) {
    if (e instanceof ConfigError) return e;
    throw e;
  }
  throw new Error(`expected a ConfigError for ${JSON.stringify(props)}`);
}

function expectError(props: Record<string, string>, key: string | undefined, message: RegExp, input?: BrokerConfigInput): void {
  const e = errorFor(props, input);
  expect(e.key, e.message).toBe(key);
  expect(e.message).toMatch(message);
}

describe('broker config – invalid values', () => {
  it('broker config – wrong types name the key, the value and what is allowed', () => {
    expectError(
      { 'broker.id': 'one' },
      'broker.id',
      /Invalid value 'one' for configuration 'broker\.id' \(supplied properties\): not a number of type int; expected a whole number \(int\)/,
    );
    expectError({ 'auto.create.topics.enable': 'yes' }, 'auto.create.topics.enable', /not a boolean; expected true or false/);
    expectError({ 'log.retention.ms': '7d' }, 'log.retention.ms', /not a number of type long/);
    expectError({ 'log.cleaner.min.cleanable.ratio': 'half' }, 'log.cleaner.min.cleanable.ratio', /not a number of type double/);
    expectError({ 'offsets.topic.replication.factor': '70000' }, 'offsets.topic.replication.factor', /out of range for type short/);
  });

  it('broker config – out-of-range values', () => {
    expectError({ 'log.segment.bytes': '13' }, 'log.segment.bytes', /must be at least 14/);
    expectError({ 'num.partitions': '0' }, 'num.partitions', /must be at least 1/);
    expectError({ 'min.insync.replicas': '0' }, 'min.insync.replicas', /must be at least 1/);
    expectError({ 'log.cleaner.min.cleanable.ratio': '1.5' }, 'log.cleaner.min.cleanable.ratio', /must be no more than 1\.0/);
    expectError({ 'metrics.port': '70000' }, 'metrics.port', /must be no more than 65535/);
  });

  it('broker config – values outside an enumeration list the allowed ones', () => {
    expectError({ 'compression.type': 'brotli' }, 'compression.type', /expected one of: uncompressed, zstd, lz4, snappy, gzip, producer/);
    expectError({ 'log.message.timestamp.type': 'AppendTime' }, 'log.message.timestamp.type', /CreateTime, LogAppendTime/);
    expectError({ 'log.cleanup.policy': 'compact,remove' }, 'log.cleanup.policy', /'remove' is not allowed/);
    expectError({ 'security.inter.broker.protocol': 'TLS' }, 'security.inter.broker.protocol', /PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL/);
  });

  it('broker config – the message says where the value came from', () => {
    expect(errorFor({}, { propertiesText: '\n\nnum.io.threads=0\n' }).message).toContain('(server.properties line 3)');
    expect(errorFor({}, { env: { SAMSA_NUM_IO_THREADS: 'x' } }).message).toContain('(environment variable SAMSA_NUM_IO_THREADS)');
    expect(errorFor({}, { overrides: ['num.io.threads=x'] }).message).toContain('(--override)');
  });

  it('broker config – a malformed --override', () => {
    expectError({}, 'num.io.threads', /Invalid --override 'num\.io\.threads': expected key=value/, { overrides: ['num.io.threads'] });
    expectError({}, undefined, /Invalid --override '=3'/, { overrides: ['=3'] });
  });
});

describe('broker config – zookeeper.connect', () => {
  it('broker config – required', () => {
    try {
      buildBrokerConfig({});
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      expect((e as ConfigError).key).toBe('zookeeper.connect');
      expect((e as ConfigError).message).toBe("Missing required configuration 'zookeeper.connect' which has no default value.");
    }
  });

  it('broker config – empty, malformed hosts and ports, bad chroots', () => {
    expectError({ 'zookeeper.connect': ' ' }, 'zookeeper.connect', /a ZooKeeper address is needed/);
    expectError({ 'zookeeper.connect': 'a:2181,,b:2181' }, 'zookeeper.connect', /'' is not a host\[:port\]/);
    expectError({ 'zookeeper.connect': 'a:99999' }, 'zookeeper.connect', /'a:99999' is not a host\[:port\]/);
    expectError({ 'zookeeper.connect': 'a:x' }, 'zookeeper.connect', /'a:x'/);
    expectError({ 'zookeeper.connect': 'a:2181/samsa/' }, 'zookeeper.connect', /chroot '\/samsa\/' is not a valid ZooKeeper path/);
    expectError({ 'zookeeper.connect': 'a:2181/x//y' }, 'zookeeper.connect', /chroot/);
    expectError({ 'zookeeper.connect': 'a:2181/x/../y' }, 'zookeeper.connect', /chroot/);
  });
});

describe('broker config – broker.id', () => {
  it('broker config – from -1 to reserved.broker.max.id', () => {
    expectError({ 'broker.id': '1001' }, 'broker.id', /must be from -1 \(generate one\) to reserved\.broker\.max\.id \(1000\)/);
    expectError({ 'broker.id': '-2' }, 'broker.id', /must be from -1/);
    expectError({ 'broker.id': '20', 'reserved.broker.max.id': '10' }, 'broker.id', /\(10\)/);
    expect(buildBrokerConfig({ properties: { ...ZK, 'broker.id': '1000' } }).brokerId).toBe(1000);
  });

  it('broker config – at least 0 when generation is disabled', () => {
    expectError({ 'broker.id.generation.enable': 'false' }, 'broker.id', /at least 0 when broker\.id\.generation\.enable is false/);
    expect(buildBrokerConfig({ properties: { ...ZK, 'broker.id': '5000', 'broker.id.generation.enable': 'false' } }).brokerId).toBe(5000);
  });
});

describe('broker config – listener validation', () => {
  it('broker config – at least one listener', () => {
    expectError({ listeners: '' }, 'listeners', /at least one listener is needed/);
  });

  it('broker config – malformed endpoints, unmapped names, duplicate ports', () => {
    expectError({ listeners: 'PLAINTEXT://:9092,CONTROLLER:19092' }, 'listeners', /'CONTROLLER:19092' is not a NAME:\/\/host:port endpoint/);
    expectError({ listeners: 'PLAINTEXT://:9092,INTERNAL://:9093' }, 'listeners', /listener INTERNAL is not in listener\.security\.protocol\.map/);
    expectError({ listeners: 'PLAINTEXT://:9092,CONTROLLER://:9092' }, 'listeners', /different port.*port 9092 is used by PLAINTEXT, CONTROLLER/);
  });

  it('broker config – malformed security protocol map', () => {
    expectError({ 'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,CONTROLLER' }, 'listener.security.protocol.map', /'CONTROLLER' is not NAME:PROTOCOL/);
  });

  it('broker config – every Kafka security protocol may be a listener', () => {
    const c = buildBrokerConfig({
      properties: {
        ...ZK,
        listeners: 'PLAINTEXT://:9092,CONTROLLER://:19092,SSL://:9093,SASL_PLAINTEXT://:9094,SASL_SSL://:9095',
      },
    });
    expect(c.listeners.map((l) => `${l.listenerName}:${l.securityProtocol}`)).toEqual([
      'PLAINTEXT:PLAINTEXT',
      'CONTROLLER:PLAINTEXT',
      'SSL:SSL',
      'SASL_PLAINTEXT:SASL_PLAINTEXT',
      'SASL_SSL:SASL_SSL',
    ]);
  });

  it('broker config – advertised listener names must be among listeners', () => {
    expectError(
      {
        'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,EXTERNAL:PLAINTEXT',
        'advertised.listeners': 'PLAINTEXT://h:9092,CONTROLLER://h:19092,EXTERNAL://h:9094',
      },
      'advertised.listeners',
      /subset of those in listeners \(PLAINTEXT, CONTROLLER\); found EXTERNAL/,
    );
  });

  it('broker config – advertised listeners may share a port but not use 0.0.0.0', () => {
    expect(buildBrokerConfig({ properties: { ...ZK, 'advertised.listeners': 'PLAINTEXT://a:9092,CONTROLLER://b:9092' } }).advertisedListeners).toHaveLength(2);
    expectError(
      { 'advertised.listeners': 'PLAINTEXT://0.0.0.0:9092,CONTROLLER://h:19092' },
      'advertised.listeners',
      /non-routable meta-address in PLAINTEXT:\/\/0\.0\.0\.0:9092/,
    );
    expectError(
      { listeners: 'PLAINTEXT://0.0.0.0:9092,CONTROLLER://h:19092' },
      'listeners',
      /meta-address.*set advertised\.listeners, which defaults to listeners/,
    );
    expect(
      buildBrokerConfig({
        properties: {
          ...ZK,
          listeners: 'PLAINTEXT://0.0.0.0:9092,CONTROLLER://0.0.0.0:19092',
          'advertised.listeners': 'PLAINTEXT://h:9092,CONTROLLER://h:19092',
        },
      }).listeners[0]?.host,
    ).toBe('0.0.0.0');
  });

  it('broker config – inter-broker listener: one of two settings, mapped, advertised', () => {
    expectError(
      { 'inter.broker.listener.name': 'PLAINTEXT', 'security.inter.broker.protocol': 'PLAINTEXT' },
      'inter.broker.listener.name',
      /only one of inter\.broker\.listener\.name and security\.inter\.broker\.protocol/,
    );
    expectError({ 'inter.broker.listener.name': 'REPLICATION' }, 'inter.broker.listener.name', /REPLICATION is not in listener\.security\.protocol\.map/);
    expectError(
      { 'inter.broker.listener.name': 'SSL' },
      'inter.broker.listener.name',
      /inter-broker listener SSL must be one of the advertised listeners \(PLAINTEXT, CONTROLLER\)/,
    );
    expectError({ 'security.inter.broker.protocol': 'SSL' }, 'security.inter.broker.protocol', /inter-broker listener SSL/);
  });

  it('broker config – control-plane listener: mapped, listening, advertised, not the inter-broker one', () => {
    expectError({ 'control.plane.listener.name': 'RPC' }, 'control.plane.listener.name', /RPC is not in listener\.security\.protocol\.map/);
    expectError({ 'control.plane.listener.name': 'SSL' }, 'control.plane.listener.name', /SSL must be one of listeners \(PLAINTEXT, CONTROLLER\)/);
    expectError({ listeners: 'PLAINTEXT://:9092' }, 'control.plane.listener.name', /CONTROLLER must be one of listeners \(PLAINTEXT\)/);
    expectError(
      { 'advertised.listeners': 'PLAINTEXT://h:9092' },
      'control.plane.listener.name',
      /CONTROLLER must be one of the advertised listeners \(PLAINTEXT\)/,
    );
    expectError(
      { 'control.plane.listener.name': 'PLAINTEXT' },
      'control.plane.listener.name',
      /must differ from the inter-broker listener name \(both are PLAINTEXT\)/,
    );
    expectError({ 'control.plane.listener.name': ' ' }, 'control.plane.listener.name', /a listener name is needed/);
  });

  it('broker config – metrics.port and console.port must not collide with listeners or each other', () => {
    expectError({ 'metrics.port': '9092' }, 'metrics.port', /port 9092 is already used by listener PLAINTEXT/);
    expectError({ 'metrics.port': '9404', 'console.port': '9404' }, 'console.port', /already used by metrics\.port/);
    expect(buildBrokerConfig({ properties: { ...ZK, 'metrics.port': '0', 'console.port': '0' } }).get('metrics.port')).toBe(0);
  });
});

describe('broker config – log settings', () => {
  it('broker config – log directories: at least one, none empty, none twice', () => {
    expectError({ 'log.dirs': ' ' }, 'log.dirs', /at least one log directory must be defined via log\.dirs or log\.dir/);
    expectError({ 'log.dir': '' }, 'log.dir', /at least one log directory/);
    expectError({ 'log.dirs': 'a,,b' }, 'log.dirs', /a log directory path is empty/);
    expectError({ 'log.dirs': 'a,b,a' }, 'log.dirs', /log directory a is listed twice/);
  });

  it('broker config – roll at least 1 ms, jitter not negative, retention -1 or at least 1 ms', () => {
    expectError({ 'log.roll.ms': '0' }, 'log.roll.ms', /must be at least 1/);
    expectError({ 'log.roll.jitter.ms': '-1' }, 'log.roll.jitter.ms', /must be at least 0/);
    expectError({ 'log.retention.ms': '0' }, 'log.retention.ms', /unlimited \(-1\) or at least 1 ms/);
    expectError({ 'log.retention.minutes': '0' }, 'log.retention.minutes', /unlimited/);
    expectError({ 'log.retention.hours': '0' }, 'log.retention.hours', /unlimited/);
  });

  it('broker config – the cleaner needs more than 1 MiB of dedupe buffer per thread', () => {
    expectError(
      { 'log.cleaner.dedupe.buffer.size': '2097152', 'log.cleaner.threads': '2' },
      'log.cleaner.dedupe.buffer.size',
      /more than 1 MiB per cleaner thread \(log\.cleaner\.threads=2\)/,
    );
  });
});

describe('broker config – replication and group settings', () => {
  it('broker config – replica.fetch.wait.max.ms within the socket timeout and the lag time', () => {
    expectError({ 'replica.fetch.wait.max.ms': '40000' }, 'replica.socket.timeout.ms', /at least replica\.fetch\.wait\.max\.ms \(40000\)/);
    expectError(
      { 'replica.fetch.wait.max.ms': '20000', 'replica.lag.time.max.ms': '10000' },
      'replica.fetch.wait.max.ms',
      /at most replica\.lag\.time\.max\.ms \(10000\)/,
    );
  });

  it('broker config – offsets.commit.required.acks from -1 to the offsets topic replication factor', () => {
    expectError({ 'offsets.commit.required.acks': '4' }, 'offsets.commit.required.acks', /from -1 to offsets\.topic\.replication\.factor \(3\)/);
    expectError({ 'offsets.commit.required.acks': '-2' }, 'offsets.commit.required.acks', /from -1/);
  });

  it('broker config – group session timeout bounds in order', () => {
    expectError(
      { 'group.min.session.timeout.ms': '60000', 'group.max.session.timeout.ms': '30000' },
      'group.min.session.timeout.ms',
      /must not exceed group\.max\.session\.timeout\.ms \(30000\)/,
    );
  });
});

describe('broker config – protocol versions', () => {
  it("broker config – inter.broker.protocol.version and log.message.format.version take Kafka's version strings", () => {
    const build = (props: Record<string, string> = {}) => buildBrokerConfig({ properties: { ...ZK, ...props } });
    expect(build().interBrokerProtocolVersion.version).toBe('3.8-IV0');
    expect(build().logMessageFormatVersion.version).toBe('3.0-IV1');
    // a release means its latest internal version; parts after the release are ignored
    expect(build({ 'inter.broker.protocol.version': '2.0' }).interBrokerProtocolVersion.version).toBe('2.0-IV1');
    expect(build({ 'inter.broker.protocol.version': '2.1-IV0' }).interBrokerProtocolVersion.version).toBe('2.1-IV0');
    expect(build({ 'inter.broker.protocol.version': '2.2.1' }).interBrokerProtocolVersion.version).toBe('2.2-IV1');
    expect(build({ 'inter.broker.protocol.version': '0.10.1.1', 'log.message.format.version': '0.10.1' }).interBrokerProtocolVersion.version).toBe(
      '0.10.1-IV2',
    );
    // below 3.0 log.message.format.version counts; from 3.0 it is ignored
    expect(build({ 'inter.broker.protocol.version': '2.8', 'log.message.format.version': '2.1' }).logMessageFormatVersion.version).toBe('2.1-IV2');
    expect(build({ 'log.message.format.version': '2.1' }).logMessageFormatVersion.version).toBe('3.0-IV1');
    expectError({ 'inter.broker.protocol.version': '3.9' }, 'inter.broker.protocol.version', /Version 3\.9 is not a valid version/);
    expectError({ 'log.message.format.version': 'latest' }, 'log.message.format.version', /Version latest is not a valid version/);
  });

  it('broker config – log.message.format.version needs an inter-broker protocol that supports its record version', () => {
    // the default log.message.format.version (3.0-IV1, record v2) is too new for 0.10.2 (record v1)
    expectError(
      { 'inter.broker.protocol.version': '0.10.2' },
      'log.message.format.version',
      /log\.message\.format\.version 3\.0-IV1 can only be used when inter\.broker\.protocol\.version is set to version 0\.11\.0 or higher/,
    );
    expect(
      buildBrokerConfig({ properties: { ...ZK, 'inter.broker.protocol.version': '0.10.2', 'log.message.format.version': '0.10.0' } }).interBrokerProtocolVersion
        .version,
    ).toBe('0.10.2-IV0');
  });
});
