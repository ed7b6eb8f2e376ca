import { describe, expect, it } from 'vitest';
import { ClientSecurityConfigError, clientSecurityFromProperties } from './client-security.js';

const files: Record<string, string> = { '/ca.pem': 'CA-PEM', '/client.pem': 'KEY-AND-CHAIN', '/client.p12': 'P12' };
const read = (p: string) => {
  const v = files[p];
  if (v === undefined) throw new Error(`no file ${p}`);
  return v;
};
const SCRAM = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="alice-secret";';

describe('client security – properties as Kafka tools take them', () => {
  it('PLAINTEXT (or nothing) needs neither TLS nor SASL', () => {
    expect(clientSecurityFromProperties({}, read)).toEqual({});
    expect(clientSecurityFromProperties({ 'security.protocol': 'plaintext' }, read)).toEqual({});
  });

  it('SASL_SSL with a PEM trust store and SCRAM credentials', () => {
    const s = clientSecurityFromProperties(
      {
        'security.protocol': 'SASL_SSL',
        'ssl.truststore.type': 'PEM',
        'ssl.truststore.location': '/ca.pem',
        'sasl.mechanism': 'SCRAM-SHA-512',
        'sasl.jaas.config': SCRAM,
      },
      read,
    );
    expect(s.tls?.ca).toBe('CA-PEM');
    expect(s.sasl).toEqual({ mechanism: 'SCRAM-SHA-512', username: 'alice', password: 'alice-secret' });
  });

  it('SSL with a PEM key store file, a PKCS12 key store, and no host name check', () => {
    const pem = clientSecurityFromProperties(
      { 'security.protocol': 'SSL', 'ssl.keystore.location': '/client.pem', 'ssl.key.password': 'k', 'ssl.endpoint.identification.algorithm': '' },
      read,
    );
    expect([pem.tls?.key, pem.tls?.cert, pem.tls?.passphrase]).toEqual(['KEY-AND-CHAIN', 'KEY-AND-CHAIN', 'k']);
    expect(pem.tls?.checkServerIdentity?.('localhost', {} as never)).toBeUndefined();
    expect(pem.sasl).toBeUndefined();
    const p12 = clientSecurityFromProperties(
      { 'security.protocol': 'SSL', 'ssl.keystore.type': 'PKCS12', 'ssl.keystore.location': '/client.p12', 'ssl.keystore.password': 'p' },
      read,
    );
    expect([p12.tls?.pfx, p12.tls?.passphrase]).toEqual(['P12', 'p']);
  });

  it('refuses what it cannot take, with the setting named', () => {
    const bad: Array<[Record<string, string>, RegExp]> = [
      [{ 'security.protocol': 'TLS' }, /security\.protocol/],
      [{ 'security.protocol': 'SASL_PLAINTEXT', 'sasl.jaas.config': SCRAM }, /sasl\.mechanism GSSAPI is not supported/],
      [{ 'security.protocol': 'SASL_PLAINTEXT', 'sasl.mechanism': 'PLAIN' }, /sasl\.jaas\.config/],
      [{ 'security.protocol': 'SASL_PLAINTEXT', 'sasl.mechanism': 'PLAIN', 'sasl.jaas.config': 'x.Y required username="a";' }, /username and password/],
      [{ 'security.protocol': 'SSL', 'ssl.truststore.type': 'JKS', 'ssl.truststore.location': '/ca.pem' }, /JKS is not supported/],
    ];
    for (const [props, message] of bad) expect(() => clientSecurityFromProperties(props, read)).toThrow(message);
    expect(() => clientSecurityFromProperties({ 'security.protocol': 'TLS' }, read)).toThrow(ClientSecurityConfigError);
  });
});
