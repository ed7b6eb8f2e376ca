import { describe, expect, it } from 'vitest';
import type { Admin, AdminOptions } from '@samsa/client';
import { CommandConfigError, adminOptionsFromProperties, openAdmin, readCommandConfig } from './admin-client.js';
import { ClientSecurityConfigError } from './client-security.js';

describe('admin client of the tools', () => {
  it('admin client – --command-config properties become the Admin settings this client has', () => {
    const p = readCommandConfig(
      'admin.properties',
      () => '# admin\nclient.id = cli\nrequest.timeout.ms=500\n! other\ndefault.api.timeout.ms: 2000\nsasl.mechanism=PLAIN\n',
    );
    expect(p).toEqual({ 'client.id': 'cli', 'request.timeout.ms': '500', 'default.api.timeout.ms': '2000', 'sasl.mechanism': 'PLAIN' });
    expect(adminOptionsFromProperties(p)).toEqual({ clientId: 'cli', requestTimeoutMs: 500, defaultApiTimeoutMs: 2000 });
    expect(() => adminOptionsFromProperties({ 'request.timeout.ms': 'x' })).toThrow(CommandConfigError);
    expect(() => adminOptionsFromProperties({ 'request.timeout.ms': 'x' })).toThrow(
      /Invalid value x for configuration request.timeout.ms: Not a number of type INT/,
    );
  });

  it('admin client – the tool defaults, then the embedder options, then --command-config', () => {
    let seen: AdminOptions | undefined;
    const createAdmin = (o: AdminOptions) => ((seen = o), {} as Admin);
    openAdmin(
      { bootstrapServers: 'b:9092', clientId: 'samsa-x', requestTimeoutMs: 1, defaultApiTimeoutMs: 2 },
      { createAdmin, adminOptions: { requestTimeoutMs: 10, retryBackoffMs: 5 } },
      { 'request.timeout.ms': '100' },
    );
    expect(seen).toEqual({ bootstrapServers: 'b:9092', clientId: 'samsa-x', requestTimeoutMs: 100, defaultApiTimeoutMs: 2, retryBackoffMs: 5 });
  });

  it('admin client – no --command-config reads nothing', () => {
    expect(
      readCommandConfig(undefined, () => {
        throw new Error('read');
      }),
    ).toEqual({});
    expect(readCommandConfig('f', () => 'a=1')).toEqual({ a: '1' });
  });
});

describe('admin client – security of --command-config', () => {
  const SCRAM = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="admin-secret";';

  it('admin client – security.protocol, ssl.* and sasl.* become the tls and sasl the Admin is built with', () => {
    let seen: AdminOptions | undefined;
    const read: string[] = [];
    openAdmin(
      { bootstrapServers: 'b:9093', clientId: 'samsa-x' },
      { createAdmin: (o) => ((seen = o), {} as Admin), readFile: (p) => (read.push(p), `PEM of ${p}`) },
      { 'security.protocol': 'SASL_SSL', 'ssl.truststore.location': '/ca.pem', 'sasl.mechanism': 'SCRAM-SHA-512', 'sasl.jaas.config': SCRAM },
    );
    expect(seen?.tls).toEqual({ ca: 'PEM of /ca.pem' });
    expect(seen?.sasl).toEqual({ mechanism: 'SCRAM-SHA-512', username: 'admin', password: 'admin-secret' });
    expect(read).toEqual(['/ca.pem']);
  });

  it('admin client – PLAINTEXT or no security.protocol gives neither tls nor sasl', () => {
    const seen: AdminOptions[] = [];
    const deps = { createAdmin: (o: AdminOptions) => (seen.push(o), {} as Admin) };
    openAdmin({ bootstrapServers: 'b:9092' }, deps, { 'security.protocol': 'PLAINTEXT', 'sasl.mechanism': 'PLAIN' });
    openAdmin({ bootstrapServers: 'b:9092' }, deps);
    expect(seen).toEqual([{ bootstrapServers: 'b:9092' }, { bootstrapServers: 'b:9092' }]);
  });

  it('admin client – a security setting this client cannot take throws Kafka’s ConfigException text, no Admin is built', () => {
    let built = 0;
    const deps = {
      createAdmin: () => (built++, {} as Admin),
      readFile: (p: string): string => {
        throw new Error(`${p} (No such file or directory)`);
      },
    };
    expect(() => openAdmin({ bootstrapServers: 'b' }, deps, { 'security.protocol': 'TLS' })).toThrow(
      new ClientSecurityConfigError('Invalid value TLS for configuration security.protocol: String must be one of: PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL'),
    );
    expect(() => openAdmin({ bootstrapServers: 'b' }, deps, { 'security.protocol': 'SASL_PLAINTEXT', 'sasl.mechanism': 'SCRAM-SHA-512' })).toThrow(
      /Could not find a 'KafkaClient' entry in the JAAS configuration/,
    );
    expect(() => openAdmin({ bootstrapServers: 'b' }, deps, { 'security.protocol': 'SSL', 'ssl.truststore.location': '/nope.pem' })).toThrow(
      'Failed to load SSL store /nope.pem: /nope.pem (No such file or directory)',
    );
    expect(built).toBe(0);
  });
});
