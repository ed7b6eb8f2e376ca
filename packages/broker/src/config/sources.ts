/**
 * Where raw (string) config values come from, and their precedence:
 * `--override key=value` > environment `SAMSA_<KEY>` > server.properties > default.
 */
import { ConfigError } from './errors.js';
import { BROKER_CONFIG_NAMES } from './definitions.js';
import type { BrokerConfigName } from './definitions.js';
import { PropertiesSyntaxError, parsePropertiesEntries, type PropertyEntry } from '@samsa/server-common';

/**
 * Where a value came from. `file`, `properties`, `env`, `override` and `generated` are Kafka's
 * STATIC_BROKER_CONFIG; `dynamic` is a config from ZooKeeper (/config/…).
 */
export type ConfigOrigin =
  | { readonly kind: 'default' }
  | { readonly kind: 'dynamic'; readonly level?: 'topic' | 'broker' | 'default' }
  | { readonly kind: 'file'; readonly file: string; readonly line: number }
  | { readonly kind: 'properties' }
  | { readonly kind: 'env'; readonly variable: string }
  | { readonly kind: 'override' }
  | { readonly kind: 'generated' };

export interface RawSetting {
  readonly value: string;
  readonly origin: ConfigOrigin;
}

/** Words for messages: "server.properties line 3", "environment variable SAMSA_BROKER_ID", … */
export function describeOrigin(o: ConfigOrigin): string {
  switch (o.kind) {
    case 'default':
      return 'default';
    case 'file':
      return `${o.file} line ${o.line}`;
    case 'properties':
      return 'supplied properties';
    case 'env':
      return `environment variable ${o.variable}`;
    case 'override':
      return '--override';
    case 'generated':
      return 'generated';
    case 'dynamic':
      return o.level === 'default' ? 'dynamic default broker config' : o.level === 'broker' ? 'dynamic broker config' : 'dynamic config';
  }
}

export const ENV_PREFIX = 'SAMSA_';

/** `broker.id` → `SAMSA_BROKER_ID`: upper case, every non-alphanumeric character an underscore. */
export function envVariableFor(name: string): string {
  return ENV_PREFIX + name.toUpperCase().replace(/[^A-Z0-9]/g, '_');
}

const ENV_TO_NAME: ReadonlyMap<string, BrokerConfigName> = new Map(BROKER_CONFIG_NAMES.map((n) => [envVariableFor(n), n]));

/**
 * Settings from environment variables. Only variables that name a known broker config count
 * (other `SAMSA_*` variables, such as SAMSA_PID_DIR, belong to other tools); an empty variable
 * counts as unset.
 */
export function settingsFromEnv(env: Readonly<Record<string, string | undefined>>): Map<string, RawSetting> {
  const out = new Map<string, RawSetting>();
  for (const [variable, value] of Object.entries(env)) {
    const name = ENV_TO_NAME.get(variable);
    if (name === undefined || value === undefined || value === '') continue;
    out.set(name, { value, origin: { kind: 'env', variable } });
  }
  return out;
}

/**
 * Splits one `--override` argument, `key=value` (the value may be empty and may contain `=`).
 * Throws `ConfigError` when there is no `=` or no key.
 */
export function parseOverride(arg: string): [string, string] {
  const i = arg.indexOf('=');
  const key = i < 0 ? '' : arg.slice(0, i).trim();
  if (key === '') {
    throw new ConfigError(i < 0 ? arg.trim() || undefined : undefined, `Invalid --override '${arg}': expected key=value.`);
  }
  return [key, arg.slice(i + 1)];
}

export function settingsFromOverrides(overrides: readonly string[] | Readonly<Record<string, string>>): Map<string, RawSetting> {
  const out = new Map<string, RawSetting>();
  const pairs = Array.isArray(overrides) ? (overrides as readonly string[]).map(parseOverride) : Object.entries(overrides as Readonly<Record<string, string>>);
  for (const [key, value] of pairs) out.set(key, { value, origin: { kind: 'override' } });
  return out;
}

export function settingsFromPropertiesText(text: string, file: string): Map<string, RawSetting> {
  const out = new Map<string, RawSetting>();
  let entries: PropertyEntry[];
  try {
    entries = parsePropertiesEntries(text, file);
  } catch (err) {
    if (err instanceof PropertiesSyntaxError) throw new ConfigError(err.key, err.message, { cause: err });
    throw err;
  }
  for (const e of entries) out.set(e.key, { value: e.value, origin: { kind: 'file', file, line: e.line } });
  return out;
}

export function settingsFromRecord(props: Readonly<Record<string, string>>): Map<string, RawSetting> {
  return new Map(Object.entries(props).map(([k, value]) => [k, { value, origin: { kind: 'properties' } }]));
}

/** Layers settings; later layers win. */
export function mergeSettings(...layers: ReadonlyMap<string, RawSetting>[]): Map<string, RawSetting> {
  const out = new Map<string, RawSetting>();
  for (const layer of layers) for (const [k, v] of layer) out.set(k, v);
  return out;
}
