/**
 * Config descriptions in the shape of DescribeConfigs results (Kafka's `ConfigHelper`): each
 * config's value as a string, where it comes from, its synonyms, sensitivity and type.
 */
import { BROKER_CONFIG_NAMES, BROKER_CONFIGS, brokerConfigSynonyms } from './definitions.js';
import type { BrokerConfigName } from './definitions.js';
import type { ConfigOrigin } from './sources.js';
import type { AnyConfigValue, ConfigSourceName, ConfigType } from './types.js';
import { formatValue } from './values.js';

export interface ConfigSynonym {
  readonly name: string;
  /** `null` for sensitive configs. */
  readonly value: string | null;
  readonly source: ConfigSourceName;
}

export interface ConfigDescription {
  readonly name: string;
  /** The value as Kafka prints it; `null` when unset without default, or sensitive. */
  readonly value: string | null;
  readonly source: ConfigSourceName;
  /** Passwords: their value is never described. */
  readonly sensitive: boolean;
  /** Not changeable at runtime (Kafka's read-only update mode). */
  readonly readOnly: boolean;
  readonly type: ConfigType;
  readonly documentation: string;
  /** Where the effective value could come from, most specific first (Kafka's include_synonyms). */
  readonly synonyms: readonly ConfigSynonym[];
  /** Samsa's detail of a STATIC_BROKER_CONFIG: file and line, environment variable, or --override. */
  readonly origin: ConfigOrigin;
}

/** What `describeBrokerConfigs` needs from a BrokerConfig. */
export interface DescribableBrokerConfig {
  value(name: BrokerConfigName): AnyConfigValue;
  isSet(name: BrokerConfigName): boolean;
  origin(name: BrokerConfigName): ConfigOrigin;
  /** Every supplied setting of the config, effective first (dynamic configs hide static ones). */
  settingLayers?(name: BrokerConfigName): ReadonlyArray<{ readonly value: string; readonly origin: ConfigOrigin }>;
}

/** The DescribeConfigs source of a supplied setting. */
export function sourceOfOrigin(o: ConfigOrigin): ConfigSourceName {
  if (o.kind === 'default') return 'DEFAULT_CONFIG';
  if (o.kind !== 'dynamic') return 'STATIC_BROKER_CONFIG';
  return o.level === 'broker' ? 'DYNAMIC_BROKER_CONFIG' : o.level === 'default' ? 'DYNAMIC_DEFAULT_BROKER_CONFIG' : 'DYNAMIC_TOPIC_CONFIG';
}

const SOURCE_ORDER: readonly ConfigSourceName[] = ['DYNAMIC_BROKER_CONFIG', 'DYNAMIC_DEFAULT_BROKER_CONFIG', 'STATIC_BROKER_CONFIG'];

/**
 * Synonyms of a broker config by source — per-broker dynamic, cluster-default dynamic, static —
 * each over the synonym names in order, then defaults (Kafka's ConfigHelper.configSynonyms), less
 * every entry before the first of `name` itself (Kafka's `dropWhile(_.name != name)`): a config
 * that is not set anywhere and has no default, such as log.retention.ms, has no synonyms at all,
 * not even log.retention.hours.
 */
export function brokerSynonymEntries(config: DescribableBrokerConfig, name: BrokerConfigName): ConfigSynonym[] {
  const out: ConfigSynonym[] = [];
  const synonyms = brokerConfigSynonyms(name);
  const layers = (s: BrokerConfigName) =>
    config.settingLayers
      ? config.settingLayers(s).map((l, i) => ({ ...l, top: i === 0 }))
      : config.isSet(s)
        ? [{ value: '', origin: config.origin(s), top: true }]
        : [];
  for (const source of SOURCE_ORDER) {
    for (const s of synonyms) {
      for (const l of layers(s)) {
        if (sourceOfOrigin(l.origin) !== source) continue;
        const value = BROKER_CONFIGS[s].type === 'password' ? null : l.top ? shown(s, config.value(s)) : l.value;
        out.push({ name: s, value, source });
      }
    }
  }
  for (const s of synonyms) {
    const def = BROKER_CONFIGS[s];
    if (def.default !== null) out.push({ name: s, value: shown(s, def.default), source: 'DEFAULT_CONFIG' });
  }
  const first = out.findIndex((e) => e.name === name);
  return first < 0 ? [] : out.slice(first);
}

function shown(name: BrokerConfigName, value: AnyConfigValue): string | null {
  const def = BROKER_CONFIGS[name];
  return def.type === 'password' ? null : formatValue(def.type, value);
}

export function describeBrokerConfig(config: DescribableBrokerConfig, name: BrokerConfigName): ConfigDescription {
  const def = BROKER_CONFIGS[name];
  // another synonym's value is not this config's source (log.retention.hours does not become
  // DYNAMIC_BROKER_CONFIG because log.retention.ms was set dynamically)
  const synonyms = brokerSynonymEntries(config, name);
  return Object.freeze({
    name,
    value: shown(name, config.value(name)),
    source: synonyms[0]?.source ?? 'DEFAULT_CONFIG',
    sensitive: def.type === 'password',
    readOnly: def.dynamic === 'read-only',
    type: def.type,
    documentation: def.doc,
    synonyms: Object.freeze(synonyms),
    origin: config.origin(name),
  });
}

/** Every broker config, sorted by name. */
export function describeBrokerConfigs(config: DescribableBrokerConfig): ConfigDescription[] {
  return [...BROKER_CONFIG_NAMES].sort().map((n) => describeBrokerConfig(config, n));
}
