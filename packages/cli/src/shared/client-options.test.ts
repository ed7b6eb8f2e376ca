import { describe, expect, it } from 'vitest';
import { toConsumerConfig } from './consumer-options.js';
import { toConfig } from './producer-options.js';
import { ClientSecurityConfigError } from './client-security.js';

const PLAIN = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="alice-secret";';
const read = (p: string) => `PEM of ${p}`;

describe('producer and consumer tool configs', () => {
  it('producer config – --producer.config security settings become the producer’s tls and sasl', () => {
    const c = toConfig(
      {
        'bootstrap.servers': 'b:9093',
        acks: 'all',
        'security.protocol': 'SASL_SSL',
        'ssl.truststore.location': '/ca.pem',
        'sasl.mechanism': 'PLAIN',
        'sasl.jaas.config': PLAIN,
      },
      read,
    );
    expect(c.tls).toEqual({ ca: 'PEM of /ca.pem' });
    expect(c.sasl).toEqual({ mechanism: 'PLAIN', username: 'alice', password: 'alice-secret' });
    expect(c.acks).toBe('all');
    expect(toConfig({ 'bootstrap.servers': 'b:9092' }, read)).toEqual({ 'bootstrap.servers': 'b:9092' });
  });

  it('consumer config – --consumer.config security settings become the consumer’s tls and sasl', () => {
    const c = toConsumerConfig(
      { 'bootstrap.servers': 'b:9093', 'group.id': 'g', 'security.protocol': 'SSL', 'ssl.truststore.certificates': 'INLINE-CA' },
      read,
    );
    expect(c.tls).toEqual({ ca: 'INLINE-CA' });
    expect(c.sasl).toBeUndefined();
    expect(c['group.id']).toBe('g');
  });

  it('producer and consumer config – an unsupported setting is a config error', () => {
    expect(() =>
      toConfig({ 'bootstrap.servers': 'b', 'security.protocol': 'SASL_PLAINTEXT', 'sasl.mechanism': 'GSSAPI', 'sasl.jaas.config': PLAIN }, read),
    ).toThrow(ClientSecurityConfigError);
    expect(() =>
      toConsumerConfig({ 'bootstrap.servers': 'b', 'security.protocol': 'SSL', 'ssl.truststore.type': 'JKS', 'ssl.truststore.location': '/t.jks' }, read),
    ).toThrow(/ssl.truststore.type JKS is not supported/);
  });
});
