/**
 * The vocabulary of configuration definitions, following Kafka's `ConfigDef` (types, importance)
 * and its broker documentation ("Update Mode"), plus DescribeConfigs' source and type codes.
 */

/** Value types of configurations (Kafka's `ConfigDef.Type`; Samsa has no CLASS configs). */
export const ConfigType = {
  BOOLEAN: 'boolean',
  STRING: 'string',
  INT: 'int',
  SHORT: 'short',
  LONG: 'long',
  DOUBLE: 'double',
  LIST: 'list',
  PASSWORD: 'password',
} as const;
export type ConfigType = (typeof ConfigType)[keyof typeof ConfigType];

/** DescribeConfigs (v3+) `config_type` code of each type. */
export const CONFIG_TYPE_CODES: Readonly<Record<ConfigType, number>> = Object.freeze({
  boolean: 1,
  string: 2,
  int: 3,
  short: 4,
  long: 5,
  double: 6,
  list: 7,
  password: 9,
});

export const Importance = { HIGH: 'high', MEDIUM: 'medium', LOW: 'low' } as const;
export type Importance = (typeof Importance)[keyof typeof Importance];

/**
 * Whether Kafka lets a broker config change at runtime (the broker docs' "Update Mode"):
 * `read-only` needs a restart, `per-broker` can be set per broker, `cluster-wide` also as a
 * cluster default.
 */
export const UpdateMode = { READ_ONLY: 'read-only', PER_BROKER: 'per-broker', CLUSTER_WIDE: 'cluster-wide' } as const;
export type UpdateMode = (typeof UpdateMode)[keyof typeof UpdateMode];

/**
 * Where a described value comes from, with the admin client's names (`ConfigEntry.ConfigSource`)
 * and the DescribeConfigs wire codes (on the wire 1 is called TOPIC_CONFIG).
 */
export const ConfigSource = {
  UNKNOWN: 0,
  DYNAMIC_TOPIC_CONFIG: 1,
  DYNAMIC_BROKER_CONFIG: 2,
  DYNAMIC_DEFAULT_BROKER_CONFIG: 3,
  STATIC_BROKER_CONFIG: 4,
  DEFAULT_CONFIG: 5,
  DYNAMIC_BROKER_LOGGER_CONFIG: 6,
  CLIENT_METRICS_CONFIG: 7,
} as const;
export type ConfigSourceName = keyof typeof ConfigSource;

/**
 * How Samsa treats a config differently from Kafka:
 * `ignored` — accepted and validated, but has no effect (e.g. thread counts on Node's event loop);
 * `extension` — Samsa's own config, not in Kafka;
 * `default-differs` — same meaning as Kafka, different default (documented on the entry).
 */
export const SamsaNote = { IGNORED: 'ignored', EXTENSION: 'extension', DEFAULT_DIFFERS: 'default-differs' } as const;
export type SamsaNote = (typeof SamsaNote)[keyof typeof SamsaNote];

/** Decoded value of a config of any type (`null` only for unset configs without default). */
export type AnyConfigValue = number | boolean | string | readonly string[] | { readonly value: string } | null;

/** What decoding and checking a value needs (Kafka's type plus validator). */
export interface ValueSpec {
  readonly type: ConfigType;
  /** Inclusive lower bound for numeric types. */
  readonly min?: number;
  /** Inclusive upper bound for numeric types. */
  readonly max?: number;
  /** Allowed values of a string, or of each element of a list (case-sensitive, as Kafka's). */
  readonly oneOf?: readonly string[];
}

/** One row of the topic config table. */
export interface TopicConfigDef extends ValueSpec {
  /** Kafka's default, already decoded. Longs use `LONG_MAX` for Long.MAX_VALUE. */
  readonly default: number | boolean | string | readonly string[];
  readonly importance: Importance;
  readonly doc: string;
}

/** One row of the broker config table. */
export interface ConfigDef extends ValueSpec {
  /** The default, already decoded (`null`: no default). Longs use `LONG_MAX` for Long.MAX_VALUE. */
  readonly default: number | boolean | string | readonly string[] | null;
  readonly importance: Importance;
  /** Update mode per Kafka. */
  readonly dynamic: UpdateMode;
  readonly doc: string;
  /** A value must be supplied (there is no usable default). */
  readonly required?: true;
  readonly samsa?: SamsaNote;
}

/** Freezes a definition table, its rows and their arrays (the tables are shared constants). */
export function freezeTable<T extends Record<string, ValueSpec & { readonly default: unknown }>>(table: T): T {
  for (const def of Object.values(table)) {
    if (Array.isArray(def.default)) Object.freeze(def.default);
    if (def.oneOf) Object.freeze(def.oneOf);
    Object.freeze(def);
  }
  return Object.freeze(table);
}
