import { describe, expect, it } from 'vitest';
import { ConfigError } from '../config/errors.js';
import { parseJaasConfig, parseJaasModules } from './jaas.js';

describe('JAAS config', () => {
  it('JAAS – Kafka’s PlainLoginModule line parses into module, flag and options', () => {
    const m = parseJaasConfig(
      'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";',
    );
    expect(m).toEqual({
      loginModule: 'org.apache.kafka.common.security.plain.PlainLoginModule',
      flag: 'required',
      options: { username: 'admin', password: 'admin-secret', user_admin: 'admin-secret', user_alice: 'alice-secret' },
    });
  });

  it('JAAS – quoted values keep spaces, ;, = and escaped quotes; unquoted words and line breaks work', () => {
    const m = parseJaasConfig('org.example.Module  REQUIRED\n  user_a="p; w=\\"x\\"" tokenauth=true\n;');
    expect(m.flag).toBe('required');
    expect(m.options).toEqual({ user_a: 'p; w="x"', tokenauth: 'true' });
  });

  it('JAAS – a missing ;, a bad flag, an option without value and two modules are ConfigErrors', () => {
    expect(() => parseJaasConfig('a.B required x="1"')).toThrow(/unexpected end, expected an option name or ';'/);
    expect(() => parseJaasConfig('a.B always;')).toThrow(/control flag 'always'/);
    expect(() => parseJaasConfig('a.B required x;')).toThrow(/Value not specified for key: x/);
    expect(() => parseJaasConfig('a.B required x="unterminated;')).toThrow(/unterminated/);
    expect(() => parseJaasConfig('a.B required; c.D optional;')).toThrow(/contains 2 login modules, should be 1 module/);
    expect(() => parseJaasConfig('')).toThrow(ConfigError);
    expect(parseJaasModules('a.B required; c.D optional;')).toHaveLength(2);
  });
});
