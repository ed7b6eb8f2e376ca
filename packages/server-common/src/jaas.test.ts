import { describe, expect, it } from 'vitest';
import { parseJaasConfig, parseSingleJaasEntry } from './jaas.js';

describe('jaas config – Kafka syntax', () => {
  it('reads a PLAIN broker entry with quoted values and user_ options', () => {
    const e = parseSingleJaasEntry(
      'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="al;ice=\\"x\\"";',
    );
    expect(e.loginModule).toBe('org.apache.kafka.common.security.plain.PlainLoginModule');
    expect(e.flag).toBe('required');
    expect(e.options).toEqual({ username: 'admin', password: 'admin-secret', user_admin: 'admin-secret', user_alice: 'al;ice="x"' });
  });

  it('reads bare values, several entries and any whitespace', () => {
    const es = parseJaasConfig('a.B  Optional\n k=v1 ;\n c.D sufficient;');
    expect(es.map((e) => [e.loginModule, e.flag, e.options])).toEqual([
      ['a.B', 'optional', { k: 'v1' }],
      ['c.D', 'sufficient', {}],
    ]);
  });

  it('rejects a bad flag, a missing value or ;, and two modules in sasl.jaas.config', () => {
    expect(() => parseJaasConfig('x.Y mandatory;')).toThrow(/control flag/);
    expect(() => parseJaasConfig('x.Y required username=;')).toThrow(/Value not specified for key: username/);
    expect(() => parseJaasConfig('x.Y required username="a"')).toThrow(/unexpected end, expected an option name or ';'/);
    expect(() => parseJaasConfig('x.Y required username="a')).toThrow(/unterminated quoted value/);
    expect(() => parseSingleJaasEntry('a.B required; c.D required;')).toThrow(/contains 2 login modules, should be 1 module/);
  });
});
