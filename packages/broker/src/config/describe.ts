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
}

/** Synonyms of a broker config with their static values then defaults (Kafka's order by source). */
export function brokerSynonymEntries(config: DescribableBrokerConfig, name: BrokerConfigName): ConfigSynonym[] {
  const out: ConfigSynonym[] = [];
  const synonyms = brokerConfigSynonyms(name);
  for (const s of synonyms) {
    if (config.isSet(s)) out.push({ name: s, value: shown(s, config.value(s)), source: 'STATIC_BROKER_CONFIG' });
  }
  for (const s of synonyms) {
    const def = BROKER_CONFIGS[s];
    if (def.default !== null) out.push({ name: s, value: shown(s, def.default), source: 'DEFAULT_CONFIG' });
  }
  return out;
}

function shown(name: BrokerConfigName, value: AnyConfigValue): string | null {
  const def = BROKER_CONFIGS[name];
  return def.type === 'password' ? null : formatValue(def.type, value);
}

export function describeBrokerConfig(config: DescribableBrokerConfig, name: BrokerConfigName): ConfigDescription {
  const def = BROKER_CONFIGS[name];
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
