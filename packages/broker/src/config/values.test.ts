import { describe, expect, it } from 'vitest';
import { inspect } from 'node:util';
import { ConfigError } from './errors.js';
import { LONG_MAX, Password, formatDouble, formatLong, formatValue, parseValue } from './values.js';

describe('broker config – value types', () => {
  it('broker config – booleans in any case, trimmed', () => {
    expect(parseValue('k', { type: 'boolean' }, ' TRUE ')).toBe(true);
    expect(parseValue('k', { type: 'boolean' }, 'false')).toBe(false);
    expect(() => parseValue('k', { type: 'boolean' }, 'yes')).toThrow(/Invalid value 'yes' for configuration 'k': not a boolean; expected true or false/);
  });

  it('broker config – int, short and long within the Java ranges', () => {
    expect(parseValue('k', { type: 'int' }, ' +42 ')).toBe(42);
    expect(parseValue('k', { type: 'int' }, '-2147483648')).toBe(-2147483648);
    expect(() => parseValue('k', { type: 'int' }, '2147483648')).toThrow(/out of range for type int/);
    expect(() => parseValue('k', { type: 'short' }, '40000')).toThrow(/out of range for type short/);
    expect(parseValue('k', { type: 'long' }, '9223372036854775807')).toBe(LONG_MAX);
    expect(() => parseValue('k', { type: 'long' }, '9223372036854775808')).toThrow(/out of range for type long/);
    for (const bad of ['1.5', '1e3', '', '0x10', '12abc']) expect(() => parseValue('k', { type: 'int' }, bad)).toThrow(/not a number of type int/);
  });

  it('broker config – doubles in Java syntax', () => {
    expect(parseValue('k', { type: 'double' }, '0.5')).toBe(0.5);
    expect(parseValue('k', { type: 'double' }, '1e3')).toBe(1000);
    expect(parseValue('k', { type: 'double' }, '2d')).toBe(2);
    expect(parseValue('k', { type: 'double' }, '.25')).toBe(0.25);
    expect(() => parseValue('k', { type: 'double' }, 'half')).toThrow(/not a number of type double/);
  });

  it('broker config – ranges name the bound', () => {
    expect(() => parseValue('log.segment.bytes', { type: 'int', min: 14 }, '13')).toThrow(
      "Invalid value '13' for configuration 'log.segment.bytes': must be at least 14; expected a whole number (int) from 14 to 2147483647.",
    );
    expect(() => parseValue('r', { type: 'double', min: 0, max: 1 }, '1.5')).toThrow(/must be no more than 1\.0/);
  });

  it('broker config – enums and lists name the allowed values', () => {
    const spec = { type: 'string', oneOf: ['CreateTime', 'LogAppendTime'] } as const;
    expect(parseValue('t', spec, ' LogAppendTime ')).toBe('LogAppendTime');
    expect(() => parseValue('t', spec, 'createtime')).toThrow(/expected one of: CreateTime, LogAppendTime/);
    const list = { type: 'list', oneOf: ['compact', 'delete'] } as const;
    expect(parseValue('p', list, 'compact , delete')).toEqual(['compact', 'delete']);
    expect(parseValue('p', list, '')).toEqual([]);
    expect(() => parseValue('p', list, 'compact,remove')).toThrow(/'remove' is not allowed; expected a comma-separated list of: compact, delete/);
  });

  it('broker config – the origin of a value appears in the message', () => {
    try {
      parseValue('broker.id', { type: 'int' }, 'one', 'environment variable SAMSA_BROKER_ID');
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      expect((e as ConfigError).key).toBe('broker.id');
      expect((e as ConfigError).message).toContain("'broker.id' (environment variable SAMSA_BROKER_ID)");
    }
  });

  it('broker config – passwords never print', () => {
    const p = parseValue('ssl.key.password', { type: 'password' }, ' s3cret');
    expect(p).toBeInstanceOf(Password);
    expect((p as Password).value).toBe(' s3cret');
    expect(String(p)).toBe('[hidden]');
    expect(JSON.stringify({ p })).toBe('{"p":"[hidden]"}');
    expect(inspect(p)).not.toContain('s3cret');
    expect(formatValue('password', p)).toBeNull();
  });

  it('broker config – values format as Kafka prints them', () => {
    expect(formatLong(LONG_MAX)).toBe('9223372036854775807');
    expect(formatLong(-1)).toBe('-1');
    expect(formatDouble(0.5)).toBe('0.5');
    expect(formatDouble(1)).toBe('1.0');
    expect(formatDouble(1e7)).toBe('1.0E7');
    expect(formatDouble(Number.MAX_VALUE)).toBe('1.7976931348623157E308');
    expect(formatValue('list', ['compact', 'delete'])).toBe('compact,delete');
    expect(formatValue('boolean', false)).toBe('false');
    expect(formatValue('string', null)).toBeNull();
  });
});
