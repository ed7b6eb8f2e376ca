import { describe, expect, it } from 'vitest';
import { KafkaError } from '@samsa/protocol';
import { buildBrokerConfig } from './broker-config.js';
import { DEFAULT_BROKER_ENTITY } from './config-change-notification.js';
import { validateBrokerEntityConfig } from './dynamic-broker-config.js';

const STATIC = buildBrokerConfig({ properties: { 'zookeeper.connect': 'z:2181', 'broker.id': '0' } });

function refusal(entity: string, next: Record<string, string>): KafkaError {
  try {
    validateBrokerEntityConfig(STATIC, entity, next, {});
  } catch (err) {
    if (err instanceof KafkaError) return err;
    throw err;
  }
  throw new Error(`expected ${JSON.stringify(next)} to be refused`);
}

describe("dynamic broker config – validation (Kafka's DynamicBrokerConfig.validateConfigs)", () => {
  it('dynamic broker config – unknown keys are accepted and stored; Samsa says which keys it applies', () => {
    expect(validateBrokerEntityConfig(STATIC, '0', { 'custom.plugin.key': 'x', 'log.retention.ms': '1000', 'num.io.threads': '4' }, {})).toEqual({
      applied: ['log.retention.ms'],
      storedOnly: ['custom.plugin.key', 'num.io.threads'],
    });
    expect(validateBrokerEntityConfig(STATIC, DEFAULT_BROKER_ENTITY, { 'custom.plugin.key': 'x' }, {})).toEqual({
      applied: [],
      storedOnly: ['custom.plugin.key'],
    });
  });

  it("dynamic broker config – known read-only configs, unprefixed SSL secrets and per-broker configs at the default are INVALID_REQUEST with Kafka's messages", () => {
    expect(refusal('0', { 'log.dirs': '/x', 'custom.plugin.key': 'x', 'broker.id': '3' })).toMatchObject({
      errorName: 'INVALID_REQUEST',
      message: "Invalid config value for resource ConfigResource(type=BROKER, name='0'): Cannot update these configs dynamically: Set(log.dirs, broker.id)",
    });
    expect(refusal('0', { 'ssl.key.password': 's' }).message).toBe(
      "Invalid config value for resource ConfigResource(type=BROKER, name='0'): These security configs can be dynamically updated only per-listener using the listener prefix: Set(ssl.key.password)",
    );
    expect(refusal(DEFAULT_BROKER_ENTITY, { 'advertised.listeners': 'PLAINTEXT://h:9092' }).message).toBe(
      "Invalid config value for resource ConfigResource(type=BROKER, name=''): Cannot update these configs at default cluster level, broker id must be specified: Set(advertised.listeners)",
    );
    // invalid values of known configs stay INVALID_CONFIG
    expect(refusal('0', { 'log.retention.bytes': 'lots' })).toMatchObject({ errorName: 'INVALID_CONFIG' });
  });
});
