import { describe, expect, expectTypeOf, it } from 'vitest';
import { buildBrokerConfig } from './broker-config.js';
import { BROKER_CONFIGS, isBrokerConfigName } from './definitions.js';
import { ConfigError } from './errors.js';
import {
  TOPIC_CONFIGS,
  TOPIC_CONFIG_NAMES,
  TOPIC_CONFIG_SYNONYMS,
  brokerSynonymOf,
  describeTopicConfigs,
  effectiveTopicConfig,
  parseTopicConfigs,
} from './topic-config.js';
import { LONG_MAX } from './values.js';

const broker = (props: Record<string, string> = {}) => buildBrokerConfig({ properties: { 'zookeeper.connect': 'z:2181', ...props } });

describe('broker config – topic configs', () => {
  it('broker config – topic configs map to their broker-level synonyms', () => {
    expect(brokerSynonymOf('retention.ms')).toBe('log.retention.ms');
    expect(brokerSynonymOf('segment.bytes')).toBe('log.segment.bytes');
    expect(brokerSynonymOf('segment.ms')).toBe('log.roll.ms');
    expect(brokerSynonymOf('max.message.bytes')).toBe('message.max.bytes');
    expect(brokerSynonymOf('index.interval.bytes')).toBe('log.index.interval.bytes');
    expect(brokerSynonymOf('cleanup.policy')).toBe('log.cleanup.policy');
    expect(brokerSynonymOf('min.insync.replicas')).toBe('min.insync.replicas');
    expect(brokerSynonymOf('leader.replication.throttled.replicas')).toBeUndefined();
    for (const name of TOPIC_CONFIG_NAMES) {
      for (const s of TOPIC_CONFIG_SYNONYMS[name]) expect(isBrokerConfigName(s.name), `${name} → ${s.name}`).toBe(true);
    }
  });

  it("broker config – topic defaults equal their broker synonyms' defaults (after unit conversion)", () => {
    const values = effectiveTopicConfig(broker());
    for (const name of TOPIC_CONFIG_NAMES) expect(values[name], name).toEqual(TOPIC_CONFIGS[name].default);
    for (const name of TOPIC_CONFIG_NAMES) {
      const primary = TOPIC_CONFIG_SYNONYMS[name][0];
      if (primary && BROKER_CONFIGS[primary.name].default !== null) {
        expect(TOPIC_CONFIGS[name].type === BROKER_CONFIGS[primary.name].type || name === 'segment.ms', name).toBe(true);
      }
    }
  });

  it("broker config – a topic takes the broker's static values", () => {
    const values = effectiveTopicConfig(
      broker({
        'log.retention.hours': '1',
        'log.roll.hours': '2',
        'log.cleanup.policy': 'compact',
        'message.max.bytes': '100',
        'log.flush.scheduler.interval.ms': '7',
      }),
    );
    expect(values['retention.ms']).toBe(3_600_000);
    expect(values['segment.ms']).toBe(7_200_000);
    expect(values['cleanup.policy']).toEqual(['compact']);
    expect(values['max.message.bytes']).toBe(100);
    expect(values['flush.ms']).toBe(7);
    expect(effectiveTopicConfig(broker({ 'log.retention.minutes': '-3' }))['retention.ms']).toBe(-1);
  });

  it('broker config – topic overrides win and are typed', () => {
    const overrides = parseTopicConfigs({ 'retention.ms': '1000', 'cleanup.policy': 'compact,delete', 'min.cleanable.dirty.ratio': '0.1' });
    expectTypeOf(overrides['retention.ms']).toEqualTypeOf<number | undefined>();
    const values = effectiveTopicConfig(broker(), overrides);
    expect(values['retention.ms']).toBe(1000);
    expect(values['cleanup.policy']).toEqual(['compact', 'delete']);
    expect(values['min.cleanable.dirty.ratio']).toBe(0.1);
    expect(values['segment.bytes']).toBe(1073741824);
    expect(parseTopicConfigs(new Map([['flush.messages', '9223372036854775807']]))['flush.messages']).toBe(LONG_MAX);
  });

  it('broker config – unknown topic configs and invalid values are ConfigErrors naming the key', () => {
    const err = (props: Record<string, string>) => {
      try {
        parseTopicConfigs(props);
      } catch (e) {
        return e as ConfigError;
      }
      throw new Error('expected an error');
    };
    expect(err({ 'log.retention.ms': '1' })).toMatchObject({ key: 'log.retention.ms', message: 'Unknown topic config name: log.retention.ms.' });
    expect(err({ 'retention.ms': '-2' })).toMatchObject({ key: 'retention.ms' });
    expect(err({ 'segment.bytes': '10' }).message).toMatch(/must be at least 14/);
    expect(err({ 'cleanup.policy': 'compacted' }).message).toMatch(/'compacted' is not allowed/);
    expect(err({ 'compression.type': 'brotli' })).toBeInstanceOf(ConfigError);
    expect(err({ 'leader.replication.throttled.replicas': '0:1,x' }).message).toMatch(/partitionId:brokerId/);
    expect(err({ 'leader.replication.throttled.replicas': '*,0:1' }).key).toBe('leader.replication.throttled.replicas');
    expect(parseTopicConfigs({ 'follower.replication.throttled.replicas': '0:1, 1:2' })['follower.replication.throttled.replicas']).toEqual(['0:1', '1:2']);
    expect(parseTopicConfigs({ 'leader.replication.throttled.replicas': '*' })['leader.replication.throttled.replicas']).toEqual(['*']);
  });

  it('broker config – DescribeConfigs entries of a topic: override, broker static value, default', () => {
    const b = broker({ 'log.retention.hours': '24' });
    const entries = describeTopicConfigs(b, parseTopicConfigs({ 'segment.bytes': '1048576' }));
    expect(entries.map((e) => e.name)).toEqual([...TOPIC_CONFIG_NAMES].sort());
    const byName = new Map(entries.map((e) => [e.name, e]));
    expect(byName.get('segment.bytes')).toMatchObject({
      value: '1048576',
      source: 'DYNAMIC_TOPIC_CONFIG',
      readOnly: false,
      sensitive: false,
      origin: { kind: 'dynamic' },
      synonyms: [
        { name: 'segment.bytes', value: '1048576', source: 'DYNAMIC_TOPIC_CONFIG' },
        { name: 'log.segment.bytes', value: '1073741824', source: 'DEFAULT_CONFIG' },
      ],
    });
    // Kafka lists a topic config's synonyms from its primary broker name on (log.retention.ms,
    // unset here): the value comes from log.retention.hours, but no synonym and DEFAULT_CONFIG
    expect(byName.get('retention.ms')).toMatchObject({ value: '86400000', source: 'DEFAULT_CONFIG', origin: { kind: 'default' }, synonyms: [] });
    expect(byName.get('cleanup.policy')).toMatchObject({ value: 'delete', source: 'DEFAULT_CONFIG', type: 'list', origin: { kind: 'default' } });
    expect(byName.get('flush.messages')).toMatchObject({ value: '9223372036854775807', type: 'long' });
    expect(byName.get('min.cleanable.dirty.ratio')).toMatchObject({ value: '0.5', type: 'double' });
    expect(byName.get('leader.replication.throttled.replicas')).toMatchObject({ value: '', source: 'DEFAULT_CONFIG', synonyms: [] });
  });

  it('broker config – topic synonyms whose broker name differs: none until the primary broker name is set (retention.ms, segment.ms, segment.jitter.ms, flush.ms)', () => {
    const byName = (b: ReturnType<typeof broker>) => new Map(describeTopicConfigs(b).map((e) => [e.name, e]));
    const plain = byName(broker());
    expect(plain.get('retention.ms')).toMatchObject({ value: '604800000', source: 'DEFAULT_CONFIG', synonyms: [] });
    expect(plain.get('segment.ms')).toMatchObject({ value: '604800000', source: 'DEFAULT_CONFIG', synonyms: [] });
    expect(plain.get('segment.jitter.ms')).toMatchObject({ value: '0', source: 'DEFAULT_CONFIG', synonyms: [] });
    expect(plain.get('flush.ms')).toMatchObject({ value: '9223372036854775807', source: 'DEFAULT_CONFIG', synonyms: [] });
    // a name that is the same at both levels keeps its default synonym
    expect(plain.get('segment.bytes')?.synonyms).toEqual([{ name: 'log.segment.bytes', value: '1073741824', source: 'DEFAULT_CONFIG' }]);

    const set = byName(broker({ 'log.retention.ms': '5000', 'log.roll.hours': '2', 'log.roll.ms': '7000', 'log.flush.interval.ms': '9' }));
    expect(set.get('retention.ms')).toMatchObject({
      value: '5000',
      source: 'STATIC_BROKER_CONFIG',
      synonyms: [
        { name: 'log.retention.ms', value: '5000', source: 'STATIC_BROKER_CONFIG' },
        { name: 'log.retention.hours', value: '168', source: 'DEFAULT_CONFIG' },
      ],
    });
    expect(set.get('segment.ms')?.synonyms).toEqual([
      { name: 'log.roll.ms', value: '7000', source: 'STATIC_BROKER_CONFIG' },
      { name: 'log.roll.hours', value: '2', source: 'STATIC_BROKER_CONFIG' },
      { name: 'log.roll.hours', value: '168', source: 'DEFAULT_CONFIG' },
    ]);
    expect(set.get('flush.ms')?.synonyms).toEqual([
      { name: 'log.flush.interval.ms', value: '9', source: 'STATIC_BROKER_CONFIG' },
      { name: 'log.flush.scheduler.interval.ms', value: '9223372036854775807', source: 'DEFAULT_CONFIG' },
    ]);
    // a topic override comes first; the broker's synonyms follow the same rule
    const own = new Map(describeTopicConfigs(broker({ 'log.retention.hours': '24' }), parseTopicConfigs({ 'retention.ms': '60000' })).map((e) => [e.name, e]));
    expect(own.get('retention.ms')).toMatchObject({
      source: 'DYNAMIC_TOPIC_CONFIG',
      synonyms: [{ name: 'retention.ms', value: '60000', source: 'DYNAMIC_TOPIC_CONFIG' }],
    });
  });

  it('broker config – message.format.version: log.message.format.version below 3.0, else 3.0-IV1 (Kafka 3.x, ZooKeeper mode)', () => {
    const mfv = (props: Record<string, string> = {}, overrides: Record<string, string> = {}) =>
      describeTopicConfigs(broker(props), parseTopicConfigs(overrides)).find((e) => e.name === 'message.format.version');
    expect(mfv()).toMatchObject({
      value: '3.0-IV1',
      source: 'DEFAULT_CONFIG',
      type: 'string',
      synonyms: [{ name: 'log.message.format.version', value: '3.0-IV1', source: 'DEFAULT_CONFIG' }],
    });
    // an older inter-broker protocol honours log.message.format.version, as its full version
    expect(mfv({ 'inter.broker.protocol.version': '2.8', 'log.message.format.version': '2.0' })).toMatchObject({
      value: '2.0-IV1',
      source: 'STATIC_BROKER_CONFIG',
      synonyms: [
        { name: 'log.message.format.version', value: '2.0', source: 'STATIC_BROKER_CONFIG' },
        { name: 'log.message.format.version', value: '3.0-IV1', source: 'DEFAULT_CONFIG' },
      ],
    });
    // from 3.0 on it is ignored (KIP-724), though still listed as set
    expect(mfv({ 'log.message.format.version': '2.0' })).toMatchObject({ value: '3.0-IV1', source: 'STATIC_BROKER_CONFIG' });
    expect(mfv({}, { 'message.format.version': '0.10.2' })).toMatchObject({ value: '0.10.2', source: 'DYNAMIC_TOPIC_CONFIG' });
    expect(() => parseTopicConfigs({ 'message.format.version': '2.x' })).toThrow(/Version 2\.x is not a valid version/);
  });
});
