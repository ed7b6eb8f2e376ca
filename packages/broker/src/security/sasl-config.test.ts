import { describe, expect, it } from 'vitest';
import { buildBrokerConfig } from '../config/index.js';
import { interBrokerSaslCredentials, listenerSaslSettings, validateSaslConfig } from './sasl-config.js';

const JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret";';
const SASL = {
  'zookeeper.connect': '127.0.0.1:2181',
  listeners: 'PLAINTEXT://:9092,CONTROLLER://:19092',
  'listener.security.protocol.map': 'PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT',
};
const build = (properties: Record<string, string>) => buildBrokerConfig({ properties });

describe('SASL config', () => {
  it('SASL config – Kafka’s default mechanism (GSSAPI) is refused only when a SASL listener exists', () => {
    expect(() => validateSaslConfig(build({ 'zookeeper.connect': '127.0.0.1:2181' }))).not.toThrow();
    expect(() => validateSaslConfig(build(SASL))).toThrow(/GSSAPI enabled on listener PLAINTEXT are not served by Samsa/);
  });

  it('SASL config – PLAIN needs its JAAS users; the listener+mechanism JAAS config wins over the broker-wide one', () => {
    const noJaas = build({ ...SASL, 'sasl.enabled.mechanisms': 'PLAIN' });
    expect(() => validateSaslConfig(noJaas)).toThrow(/enables PLAIN but has no sasl.jaas.config/);
    const c = build({
      ...SASL,
      'sasl.enabled.mechanisms': 'PLAIN,SCRAM-SHA-512',
      'sasl.mechanism.inter.broker.protocol': 'PLAIN',
      'sasl.jaas.config': 'a.B required user_x="broker-wide";',
      'listener.name.plaintext.plain.sasl.jaas.config': JAAS,
      'listener.name.plaintext.connections.max.reauth.ms': '60000',
    });
    expect(() => validateSaslConfig(c)).not.toThrow();
    const s = listenerSaslSettings(c, 'PLAINTEXT');
    expect(s.enabledMechanisms).toEqual(['PLAIN', 'SCRAM-SHA-512']);
    expect(s.jaas('PLAIN')?.options['user_admin']).toBe('admin-secret');
    expect(s.jaas('SCRAM-SHA-512')?.options['user_x']).toBe('broker-wide');
    expect(s.reauthMs).toBe(60000);
    expect(s.failedAuthDelayMs).toBe(100);
    expect(s.maxReceiveSize).toBe(524288);
  });

  it('SASL config – a SASL inter-broker listener needs a served, enabled mechanism with username and password', () => {
    const base = { ...SASL, 'sasl.enabled.mechanisms': 'PLAIN', 'listener.name.plaintext.plain.sasl.jaas.config': JAAS };
    expect(() => validateSaslConfig(build(base))).toThrow(
      /sasl.mechanism.inter.broker.protocol must be one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 \(found GSSAPI\)/,
    );
    expect(() => validateSaslConfig(build({ ...base, 'sasl.mechanism.inter.broker.protocol': 'SCRAM-SHA-256' }))).toThrow(/not in sasl.enabled.mechanisms/);
    expect(interBrokerSaslCredentials(build({ ...base, 'sasl.mechanism.inter.broker.protocol': 'PLAIN' }))).toEqual({
      mechanism: 'PLAIN',
      username: 'admin',
      password: 'admin-secret',
    });
    const noUser = { ...base, 'sasl.mechanism.inter.broker.protocol': 'PLAIN', 'listener.name.plaintext.plain.sasl.jaas.config': 'a.B required user_a="b";' };
    expect(() => validateSaslConfig(build(noUser))).toThrow(/needs username and password options/);
    // a PLAINTEXT inter-broker listener needs nothing
    expect(interBrokerSaslCredentials(build({ 'zookeeper.connect': '127.0.0.1:2181' }))).toBeUndefined();
  });

  it('SASL config – SASL on the control-plane listener is refused', () => {
    const c = build({ ...SASL, 'listener.security.protocol.map': 'PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:SASL_PLAINTEXT' });
    expect(() => validateSaslConfig(c)).toThrow(/control-plane listener CONTROLLER is not supported/);
  });
});
