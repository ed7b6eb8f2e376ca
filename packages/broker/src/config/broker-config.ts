/**
 * The broker's validated, frozen configuration.
 *
 * Every config is read by its Kafka name with a typed accessor, `config.get('log.segment.bytes')`
 * (the type follows the definition table). Values Kafka derives from several configs — listeners
 * as endpoints, log dirs, effective retention, ZooKeeper settings — are camelCase properties, like
 * KafkaConfig's computed members. `describe()` gives DescribeConfigs-shaped entries.
 */
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { ConfigError } from './errors.js';
import { BROKER_CONFIGS, isBrokerConfigName, type BrokerConfigName, type BrokerConfigValue, type SecurityProtocol } from './definitions.js';
import { parseValue } from './values.js';
import { describeBrokerConfig, describeBrokerConfigs, type ConfigDescription } from './describe.js';
import type { ListenerEndpoint } from './listeners.js';
import type { MetadataVersion } from '@samsa/server-common';
import {
  describeOrigin,
  mergeSettings,
  settingsFromEnv,
  settingsFromOverrides,
  settingsFromPropertiesText,
  settingsFromRecord,
  type ConfigOrigin,
  type RawSetting,
} from './sources.js';
import type { AnyConfigValue } from './types.js';
import { decodeBrokerSettings, resolveBrokerConfig, type ResolveOptions, type ResolvedBrokerConfig, type ZookeeperSettings } from './validate.js';

const DEFAULT_ORIGIN: ConfigOrigin = Object.freeze({ kind: 'default' });

/** Kafka's warning for a supplied config it does not know. */
export function unknownConfigWarning(key: string): string {
  return `The configuration '${key}' was supplied but isn't a known config.`;
}

export class BrokerConfig implements ResolvedBrokerConfig {
  readonly brokerId: number;
  readonly securityProtocolMap: Readonly<Record<string, SecurityProtocol>>;
  readonly listeners: readonly ListenerEndpoint[];
  readonly advertisedListeners: readonly ListenerEndpoint[];
  readonly controlPlaneListenerName: string;
  readonly controlPlaneListener: ListenerEndpoint;
  readonly dataPlaneListeners: readonly ListenerEndpoint[];
  readonly interBrokerListenerName: string;
  readonly interBrokerSecurityProtocol: SecurityProtocol;
  readonly logDirs: readonly string[];
  readonly zookeeper: ZookeeperSettings;
  readonly logRetentionMs: number;
  readonly logRollMs: number;
  readonly logRollJitterMs: number;
  readonly logFlushIntervalMs: number;
  readonly interBrokerProtocolVersion: MetadataVersion;
  readonly logMessageFormatVersion: MetadataVersion;
  /** Supplied keys that are not broker configs (not fatal). */
  readonly unknownKeys: readonly string[];
  /** Messages to log at startup (one per unknown key). */
  readonly warnings: readonly string[];

  readonly #settings: ReadonlyMap<string, RawSetting>;
  readonly #values: ReadonlyMap<BrokerConfigName, AnyConfigValue>;
  readonly #opts: ResolveOptions;
  /** Lower-precedence settings a dynamic config hides, most specific first (for synonyms). */
  readonly #shadowed: ReadonlyMap<string, readonly RawSetting[]>;
  /** Decoded `listener.name.<listener>.[<mechanism>.]<config>` settings, by listenerKey(). */
  readonly #listenerValues: ReadonlyMap<string, AnyConfigValue>;

  private constructor(settings: ReadonlyMap<string, RawSetting>, opts: ResolveOptions, shadowed: ReadonlyMap<string, readonly RawSetting[]> = new Map()) {
    this.#settings = settings;
    this.#opts = opts;
    this.#shadowed = shadowed;
    this.#values = decodeBrokerSettings(settings);
    const r = resolveBrokerConfig(this.#values, settings, opts);
    this.brokerId = r.brokerId;
    this.securityProtocolMap = r.securityProtocolMap;
    this.listeners = r.listeners;
    this.advertisedListeners = r.advertisedListeners;
    this.controlPlaneListenerName = r.controlPlaneListenerName;
    this.controlPlaneListener = r.controlPlaneListener;
    this.dataPlaneListeners = r.dataPlaneListeners;
    this.interBrokerListenerName = r.interBrokerListenerName;
    this.interBrokerSecurityProtocol = r.interBrokerSecurityProtocol;
    this.logDirs = r.logDirs;
    this.zookeeper = r.zookeeper;
    this.logRetentionMs = r.logRetentionMs;
    this.logRollMs = r.logRollMs;
    this.logRollJitterMs = r.logRollJitterMs;
    this.logFlushIntervalMs = r.logFlushIntervalMs;
    this.interBrokerProtocolVersion = r.interBrokerProtocolVersion;
    this.logMessageFormatVersion = r.logMessageFormatVersion;
    this.#listenerValues = decodeListenerSettings(settings);
    this.unknownKeys = Object.freeze([...settings.keys()].filter((k) => !isBrokerConfigName(k) && parseListenerKey(k) === undefined));
    this.warnings = Object.freeze(this.unknownKeys.map(unknownConfigWarning));
    Object.freeze(this);
  }

  /**
   * Builds a config from raw settings (key → value with origin), decoding and validating every
   * value. Throws `ConfigError` naming the offending key.
   */
  static fromSettings(settings: ReadonlyMap<string, RawSetting>): BrokerConfig {
    return new BrokerConfig(new Map(settings), {});
  }

  /** The typed value of a config by its Kafka name (`null` for unset configs without default). */
  get<K extends BrokerConfigName>(name: K): BrokerConfigValue<K> {
    return this.value(name) as BrokerConfigValue<K>;
  }

  /** The decoded value of any config, untyped. */
  value(name: BrokerConfigName): AnyConfigValue {
    const v = this.#values.get(name);
    if (v === undefined) throw new ConfigError(name, `'${name}' is not a broker configuration.`);
    return v;
  }

  /**
   * A config as one listener sees it: Kafka's `listener.name.<listener>.<config>` (listener name
   * lower-cased) when set, else the broker-wide value. With `mechanism`, the SASL mechanism level
   * comes first (`listener.name.<listener>.<mechanism>.sasl.jaas.config`, mechanism lower-cased).
   */
  forListener<K extends BrokerConfigName>(listenerName: string, name: K, mechanism?: string): BrokerConfigValue<K> {
    const l = listenerName.toLowerCase();
    if (mechanism !== undefined) {
      const v = this.#listenerValues.get(listenerKey(l, mechanism.toLowerCase(), name));
      if (v !== undefined) return v as BrokerConfigValue<K>;
    }
    const v = this.#listenerValues.get(listenerKey(l, '', name));
    return v !== undefined ? (v as BrokerConfigValue<K>) : this.get(name);
  }

  /** Whether the config was supplied (file, environment, override) rather than defaulted. */
  isSet(name: BrokerConfigName): boolean {
    return this.#settings.has(name);
  }

  origin(name: BrokerConfigName): ConfigOrigin {
    return this.#settings.get(name)?.origin ?? DEFAULT_ORIGIN;
  }

  /** Every supplied setting of `name`, the effective one first, then those it hides. */
  settingLayers(name: BrokerConfigName): RawSetting[] {
    const top = this.#settings.get(name);
    return top ? [top, ...(this.#shadowed.get(name) ?? [])] : [];
  }

  /**
   * This (static) configuration with dynamic broker configs over it (Kafka's DynamicBrokerConfig):
   * /config/brokers/<id> over /config/brokers/<default> over server.properties over defaults.
   * Throws `ConfigError` naming an invalid value.
   */
  withDynamicConfigs(clusterDefault: Readonly<Record<string, string>>, perBroker: Readonly<Record<string, string>>): BrokerConfig {
    const settings = new Map(this.#settings);
    const shadowed = new Map<string, RawSetting[]>();
    const layer = (values: Readonly<Record<string, string>>, level: 'default' | 'broker') => {
      for (const [k, value] of Object.entries(values)) {
        const below = settings.get(k);
        if (below) shadowed.set(k, [below, ...(shadowed.get(k) ?? [])]);
        settings.set(k, { value, origin: { kind: 'dynamic', level } });
      }
    };
    layer(clusterDefault, 'default');
    layer(perBroker, 'broker');
    return new BrokerConfig(settings, this.#opts, shadowed);
  }

  /** The raw settings supplied, known and unknown, with their origins (a copy). */
  settings(): Map<string, RawSetting> {
    return new Map(this.#settings);
  }

  /** Every broker config as DescribeConfigs reports it, sorted by name. */
  describe(): ConfigDescription[];
  /** One broker config as DescribeConfigs reports it. */
  describe(name: BrokerConfigName): ConfigDescription;
  describe(name?: BrokerConfigName): ConfigDescription[] | ConfigDescription {
    return name === undefined ? describeBrokerConfigs(this) : describeBrokerConfig(this, name);
  }

  /**
   * The same configuration with a broker id generated at startup (`reservedBrokerMaxId` plus the
   * new version of /brokers/seqid; see `generatedBrokerId`). The id must lie above
   * reserved.broker.max.id.
   */
  withBrokerId(id: number): BrokerConfig {
    const settings = new Map(this.#settings);
    settings.set('broker.id', { value: String(id), origin: { kind: 'generated' } });
    return new BrokerConfig(settings, { generatedBrokerId: true });
  }
}

const LISTENER_PREFIX = 'listener.name.';

function listenerKey(listener: string, mechanism: string, name: string): string {
  return `${listener}\u0000${mechanism}\u0000${name}`;
}

/**
 * `listener.name.<listener>.<config>` or `listener.name.<listener>.<mechanism>.<config>` where
 * `<config>` is a broker config; undefined for any other key.
 */
export function parseListenerKey(key: string): { listener: string; mechanism: string; name: BrokerConfigName } | undefined {
  if (!key.startsWith(LISTENER_PREFIX)) return undefined;
  const rest = key.slice(LISTENER_PREFIX.length);
  const dot = rest.indexOf('.');
  if (dot <= 0) return undefined;
  const listener = rest.slice(0, dot).toLowerCase();
  const tail = rest.slice(dot + 1);
  if (isBrokerConfigName(tail)) return { listener, mechanism: '', name: tail };
  const dot2 = tail.indexOf('.');
  const name = tail.slice(dot2 + 1);
  if (dot2 > 0 && isBrokerConfigName(name)) return { listener, mechanism: tail.slice(0, dot2).toLowerCase(), name };
  return undefined;
}

function decodeListenerSettings(settings: ReadonlyMap<string, RawSetting>): Map<string, AnyConfigValue> {
  const out = new Map<string, AnyConfigValue>();
  for (const [key, raw] of settings) {
    const k = parseListenerKey(key);
    if (!k) continue;
    out.set(listenerKey(k.listener, k.mechanism, k.name), parseValue(key, BROKER_CONFIGS[k.name], raw.value, describeOrigin(raw.origin)));
  }
  return out;
}

/**
 * Kafka's generated broker id: reserved.broker.max.id plus the version /brokers/seqid has after
 * the broker's write to it (so the first generated id is reserved.broker.max.id + 1).
 */
export function generatedBrokerId(config: BrokerConfig, seqIdVersion: number): number {
  return config.get('reserved.broker.max.id') + seqIdVersion;
}

export interface BrokerConfigInput {
  /** server.properties text. */
  propertiesText?: string;
  /** Name of that file in messages (default `server.properties`). */
  propertiesFile?: string;
  /** Static properties already parsed (same precedence as the file, applied after it). */
  properties?: Readonly<Record<string, string>>;
  /** Environment to read SAMSA_<KEY> variables from (none when omitted). */
  env?: Readonly<Record<string, string | undefined>>;
  /** `key=value` strings (from `--override`) or a record; highest precedence. */
  overrides?: readonly string[] | Readonly<Record<string, string>>;
}

/**
 * Builds and validates a broker config: override > env > properties > file > default.
 * Throws `ConfigError`; unknown keys end up in `warnings`.
 */
export function buildBrokerConfig(input: BrokerConfigInput = {}): BrokerConfig {
  const layers: ReadonlyMap<string, RawSetting>[] = [];
  if (input.propertiesText !== undefined) {
    layers.push(settingsFromPropertiesText(input.propertiesText, input.propertiesFile ?? 'server.properties'));
  }
  if (input.properties) layers.push(settingsFromRecord(input.properties));
  if (input.env) layers.push(settingsFromEnv(input.env));
  if (input.overrides) layers.push(settingsFromOverrides(input.overrides));
  return BrokerConfig.fromSettings(mergeSettings(...layers));
}

export interface LoadBrokerConfigOptions extends Omit<BrokerConfigInput, 'propertiesText' | 'propertiesFile' | 'env'> {
  /** Path of server.properties; omitted means no file. */
  file?: string;
  /** Defaults to `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
}

/** Reads `file` (if any) and builds the config with `process.env` unless `env` is given. */
export async function loadBrokerConfig(opts: LoadBrokerConfigOptions = {}): Promise<BrokerConfig> {
  const { file, env, ...rest } = opts;
  const input: BrokerConfigInput = { ...rest, env: env ?? process.env };
  if (file !== undefined) {
    try {
      input.propertiesText = await readFile(file, 'utf8');
    } catch (err) {
      throw new ConfigError(undefined, `Cannot read the configuration file ${file}: ${(err as Error).message}`, { cause: err });
    }
    input.propertiesFile = basename(file);
  }
  return buildBrokerConfig(input);
}
