/**
 * Decoding and encoding of config values, following Kafka's `ConfigDef.parseType` /
 * `convertToString`, with Samsa's representation of each type:
 *
 * | Kafka type | TypeScript | notes |
 * |---|---|---|
 * | BOOLEAN | `boolean` | `true` / `false`, any case |
 * | INT, SHORT | `number` | whole numbers within the Java type's range |
 * | LONG | `number` | whole numbers within Java's long range; exact up to 2^53, `LONG_MAX` stands for Long.MAX_VALUE |
 * | DOUBLE | `number` | Java's decimal syntax (`0.5`, `1e3`, `2d`) |
 * | STRING | `string` | surrounding whitespace is trimmed (Kafka keeps it; it is never meant) |
 * | LIST | `readonly string[]` | comma-separated, whitespace around commas ignored, `''` is the empty list |
 * | PASSWORD | `Password` | prints as `[hidden]` |
 */
import { ConfigError } from './errors.js';
import type { AnyConfigValue, ConfigType, ValueSpec } from './types.js';

/** Java's Long.MAX_VALUE as the nearest double (2^63): "no limit" for long configs. */
export const LONG_MAX = Number(9223372036854775807n);
/** Java's Long.MIN_VALUE (-2^63, exactly representable). */
export const LONG_MIN = Number(-9223372036854775808n);
export const INT_MAX = 2147483647;
export const INT_MIN = -2147483648;
export const SHORT_MAX = 32767;
export const SHORT_MIN = -32768;
/** Java's Double.MAX_VALUE. */
export const DOUBLE_MAX = Number.MAX_VALUE;

/** A secret (Kafka's PASSWORD type): printing, logging or JSON never shows it. */
export class Password {
  constructor(readonly value: string) {
    Object.freeze(this);
  }
  toString(): string {
    return Password.HIDDEN;
  }
  toJSON(): string {
    return Password.HIDDEN;
  }
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `Password(${Password.HIDDEN})`;
  }
  static readonly HIDDEN = '[hidden]';
}

/** The TypeScript type of a decoded value of config type `T`. */
export type ValueOfType<T extends ConfigType> = T extends 'boolean'
  ? boolean
  : T extends 'string'
    ? string
    : T extends 'list'
      ? readonly string[]
      : T extends 'password'
        ? Password
        : number;

/** The TypeScript type of a definition's value: nullable when it has no default and is not required. */
export type ValueOfDef<D extends { readonly type: ConfigType; readonly default: unknown; readonly required?: true }> =
  ValueOfType<D['type']> | (D extends { default: null } ? (D extends { required: true } ? never : null) : never);

const INTEGER = /^[+-]?\d+$/;
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?[dDfF]?$/;
const INTEGER_RANGE: Partial<Record<ConfigType, readonly [bigint, bigint]>> = {
  short: [-32768n, 32767n],
  int: [-2147483648n, 2147483647n],
  long: [-9223372036854775808n, 9223372036854775807n],
};

/** Words for `expected …` in messages. */
function describeAllowed(def: ValueSpec): string {
  const parts: string[] = [];
  switch (def.type) {
    case 'boolean':
      return 'true or false';
    case 'short':
    case 'int':
    case 'long': {
      const [lo, hi] = INTEGER_RANGE[def.type] ?? [0n, 0n];
      parts.push(`a whole number (${def.type}) from ${formatNumber(def.type, def.min ?? Number(lo))} to ${formatNumber(def.type, def.max ?? Number(hi))}`);
      break;
    }
    case 'double':
      parts.push(
        def.min !== undefined || def.max !== undefined ? `a decimal number from ${def.min ?? '-Infinity'} to ${def.max ?? 'Infinity'}` : 'a decimal number',
      );
      break;
    case 'list':
      parts.push(def.oneOf ? `a comma-separated list of: ${def.oneOf.join(', ')}` : 'a comma-separated list');
      break;
    default:
      parts.push(def.oneOf ? `one of: ${def.oneOf.join(', ')}` : 'a string');
  }
  return parts.join(' ');
}

function invalid(key: string, raw: string, def: ValueSpec, reason: string, where: string): ConfigError {
  const from = where ? ` (${where})` : '';
  return new ConfigError(key, `Invalid value '${raw}' for configuration '${key}'${from}: ${reason}; expected ${describeAllowed(def)}.`);
}

/**
 * Decodes `raw` for the config `key` defined by `def` and checks its range or allowed values.
 * `where` says where the value came from, for the message. Throws `ConfigError`.
 */
export function parseValue(key: string, def: ValueSpec, raw: string, where = ''): Exclude<AnyConfigValue, null> {
  const trimmed = raw.trim();
  switch (def.type) {
    case 'boolean': {
      const lower = trimmed.toLowerCase();
      if (lower === 'true') return true;
      if (lower === 'false') return false;
      throw invalid(key, raw, def, 'not a boolean', where);
    }
    case 'short':
    case 'int':
    case 'long': {
      if (!INTEGER.test(trimmed)) throw invalid(key, raw, def, `not a number of type ${def.type}`, where);
      const big = BigInt(trimmed);
      const [lo, hi] = INTEGER_RANGE[def.type] ?? [0n, 0n];
      if (big < lo || big > hi) throw invalid(key, raw, def, `out of range for type ${def.type}`, where);
      const n = Number(big);
      checkRange(key, raw, def, n, where);
      return n;
    }
    case 'double': {
      let n: number;
      if (trimmed === 'NaN') n = NaN;
      else if (/^[+-]?Infinity$/.test(trimmed)) n = trimmed.startsWith('-') ? -Infinity : Infinity;
      else if (DECIMAL.test(trimmed)) n = Number(trimmed.replace(/[dDfF]$/, ''));
      else throw invalid(key, raw, def, 'not a number of type double', where);
      checkRange(key, raw, def, n, where);
      return n;
    }
    case 'list': {
      const items = trimmed === '' ? [] : trimmed.split(/\s*,\s*/);
      if (def.oneOf) {
        const bad = items.find((i) => !def.oneOf?.includes(i));
        if (bad !== undefined) throw invalid(key, raw, def, `'${bad}' is not allowed`, where);
      }
      return Object.freeze(items);
    }
    case 'password':
      return new Password(raw);
    case 'string': {
      if (def.oneOf && !def.oneOf.includes(trimmed)) throw invalid(key, raw, def, 'not an allowed value', where);
      return trimmed;
    }
  }
}

function checkRange(key: string, raw: string, def: ValueSpec, n: number, where: string): void {
  if (def.min !== undefined && !(n >= def.min)) throw invalid(key, raw, def, `must be at least ${formatNumber(def.type, def.min)}`, where);
  if (def.max !== undefined && !(n <= def.max)) throw invalid(key, raw, def, `must be no more than ${formatNumber(def.type, def.max)}`, where);
}

/** Java's `Long.toString` for a long held as a double (2^63 prints as Long.MAX_VALUE). */
export function formatLong(n: number): string {
  if (n >= LONG_MAX) return '9223372036854775807';
  if (n <= LONG_MIN) return '-9223372036854775808';
  return Number.isSafeInteger(n) ? String(n) : BigInt(Math.trunc(n)).toString();
}

/** Java's `Double.toString`: `0.5`, `1.0`, `1.0E7`, `1.7976931348623157E308`. */
export function formatDouble(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (!Number.isFinite(n)) return n > 0 ? 'Infinity' : '-Infinity';
  if (n === 0) return Object.is(n, -0) ? '-0.0' : '0.0';
  const abs = Math.abs(n);
  if (abs >= 1e-3 && abs < 1e7) {
    const s = String(n);
    return s.includes('.') ? s : `${s}.0`;
  }
  const [mantissa = '', exponent = '0'] = n.toExponential().split('e');
  return `${mantissa.includes('.') ? mantissa : `${mantissa}.0`}E${Number(exponent)}`;
}

function formatNumber(type: ConfigType, n: number): string {
  if (type === 'long') return formatLong(n);
  if (type === 'double') return formatDouble(n);
  return String(n);
}

/**
 * The value as Kafka's DescribeConfigs shows it (`ConfigDef.convertToString`): lists joined with
 * commas, numbers in Java's notation. Passwords and unset values give `null`.
 */
export function formatValue(type: ConfigType, value: AnyConfigValue): string | null {
  if (value === null || value instanceof Password) return null;
  if (Array.isArray(value)) return value.join(',');
  if (typeof value === 'number') return formatNumber(type, value);
  return String(value);
}
