/**
 * Dynamic broker configs (Kafka's DynamicBrokerConfig, ZooKeeper mode): /config/brokers/<id>
 * over /config/brokers/<default> over server.properties over Kafka's defaults. Samsa applies the
 * configs topics inherit (log.* defaults, message.max.bytes, min.insync.replicas, the cleaner's
 * topic-level defaults) and the replication throttle rates at runtime. As Kafka, only known
 * read-only configs are refused for dynamic update; unknown names and dynamic configs Samsa does
 * not apply are stored (and skipped when applied, with a log line).
 */
import { KafkaError } from '@samsa/protocol';
import type { BrokerConfig } from './broker-config.js';
import { BROKER_CONFIGS, isBrokerConfigName } from './definitions.js';
import { ConfigError } from './errors.js';
import { TOPIC_CONFIG_SYNONYMS } from './topic-config.js';
import { DEFAULT_BROKER_ENTITY } from './config-change-notification.js';

/** Replication quota rates (bytes/s, not in server.properties: DynamicConfig.Broker). */
export const THROTTLE_RATE_CONFIGS = [
  'leader.replication.throttled.rate',
  'follower.replication.throttled.rate',
  'replica.alter.log.dirs.io.max.bytes.per.second',
] as const;

const TOPIC_SYNONYMS: ReadonlySet<string> = new Set(Object.values(TOPIC_CONFIG_SYNONYMS).flatMap((l) => l.map((s) => s.name)));

/** Whether Samsa applies `name` when set in /config/brokers/<id> or <default>. */
export function isDynamicallyUpdatable(name: string): boolean {
  if ((THROTTLE_RATE_CONFIGS as readonly string[]).includes(name)) return true;
  if (!isBrokerConfigName(name)) return false;
  const def: { readonly dynamic: string; readonly samsa?: string } = BROKER_CONFIGS[name];
  if (def.dynamic === 'read-only' || def.samsa === 'ignored') return false;
  return TOPIC_SYNONYMS.has(name) && name !== 'unclean.leader.election.enable';
}

/** A throttle rate value: a non-negative long. Returns the reason it is not, or null. */
export function invalidRate(value: string): string | null {
  return /^\d+$/.test(value.trim()) && Number(value) <= Number.MAX_SAFE_INTEGER
    ? null
    : `Invalid value ${value} for configuration: expected a non-negative long (bytes/s)`;
}

/** Kafka's ConfigResource.toString, as its error messages print it. */
function resourceName(entity: string): string {
  return `ConfigResource(type=BROKER, name='${entity === DEFAULT_BROKER_ENTITY ? '' : entity}')`;
}

/** Splits out the throttle rates (not BrokerConfig entries) from a broker entity's config. */
function configPart(config: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(config).filter(([k]) => !(THROTTLE_RATE_CONFIGS as readonly string[]).includes(k)));
}

/** Which keys of an accepted broker entity config Samsa applies at runtime, and which it only stores. */
export interface BrokerEntityKeys {
  readonly applied: readonly string[];
  /** Accepted and written to ZooKeeper as Kafka does, but without effect in Samsa: unknown names and dynamic configs Samsa does not apply. */
  readonly storedOnly: readonly string[];
}

/**
 * Checks a broker entity's new config before it is written, as Kafka's
 * DynamicBrokerConfig.validateConfigs: known read-only configs are refused (INVALID_REQUEST
 * "Cannot update these configs dynamically: Set(...)"), so are SSL secrets without a listener
 * prefix and per-broker configs at the cluster default; unknown names are accepted and stored.
 * Values of known configs must be valid for their type and range (else INVALID_CONFIG).
 */
export function validateBrokerEntityConfig(
  staticConfig: BrokerConfig,
  entity: string,
  next: Readonly<Record<string, string>>,
  other: Readonly<Record<string, string>>,
): BrokerEntityKeys {
  const keys = Object.keys(next);
  const known = (k: string) => (isBrokerConfigName(k) ? (BROKER_CONFIGS[k] as { readonly dynamic: string; readonly type: string }) : undefined);
  const refuse = (names: string[], reason: string) => {
    if (names.length > 0)
      throw new KafkaError('INVALID_REQUEST', `Invalid config value for resource ${resourceName(entity)}: ${reason}: Set(${names.join(', ')})`);
  };
  refuse(
    keys.filter((k) => known(k)?.dynamic === 'read-only'),
    'Cannot update these configs dynamically',
  );
  refuse(
    keys.filter((k) => known(k)?.type === 'password'),
    'These security configs can be dynamically updated only per-listener using the listener prefix',
  );
  if (entity === DEFAULT_BROKER_ENTITY) {
    refuse(
      keys.filter((k) => known(k)?.dynamic === 'per-broker'),
      'Cannot update these configs at default cluster level, broker id must be specified',
    );
  }
  for (const k of THROTTLE_RATE_CONFIGS) {
    const v = next[k];
    if (v !== undefined && invalidRate(v)) throw new KafkaError('INVALID_CONFIG', invalidRate(v)!);
  }
  const [defaults, perBroker] = entity === DEFAULT_BROKER_ENTITY ? [next, other] : [other, next];
  try {
    staticConfig.withDynamicConfigs(configPart(defaults), configPart(perBroker));
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    throw new KafkaError('INVALID_CONFIG', err.message, { cause: err });
  }
  return { applied: keys.filter(isDynamicallyUpdatable), storedOnly: keys.filter((k) => !isDynamicallyUpdatable(k)) };
}

/** The broker's effective configuration, rebuilt whenever its dynamic entities change. */
export class DynamicBrokerConfig {
  #current: BrokerConfig;
  readonly entities = new Map<string, Readonly<Record<string, string>>>();

  constructor(
    readonly staticConfig: BrokerConfig,
    readonly brokerId: number,
  ) {
    this.#current = staticConfig;
  }

  get current(): BrokerConfig {
    return this.#current;
  }

  entity(name: string): Readonly<Record<string, string>> {
    return this.entities.get(name) ?? {};
  }

  /**
   * Applies an entity's new content. Invalid or non-updatable entries (written behind Samsa's
   * back) are skipped one by one; their names are returned.
   */
  update(entity: string, config: Readonly<Record<string, string>>): string[] {
    this.entities.set(entity, config);
    const skipped: string[] = [];
    const usable = (c: Readonly<Record<string, string>>) =>
      Object.fromEntries(Object.entries(configPart(c)).filter(([k]) => isDynamicallyUpdatable(k) || (skipped.push(k), false)));
    let defaults = usable(this.entity(DEFAULT_BROKER_ENTITY));
    let perBroker = usable(this.entity(String(this.brokerId)));
    for (;;) {
      try {
        this.#current = this.staticConfig.withDynamicConfigs(defaults, perBroker);
        return skipped;
      } catch (err) {
        if (!(err instanceof ConfigError) || err.key === undefined) throw err;
        const bad = err.key;
        skipped.push(bad);
        if (!(bad in perBroker) && !(bad in defaults)) throw err;
        if (bad in perBroker) perBroker = Object.fromEntries(Object.entries(perBroker).filter(([k]) => k !== bad));
        else defaults = Object.fromEntries(Object.entries(defaults).filter(([k]) => k !== bad));
      }
    }
  }

  /** A throttle rate: per broker over the default; undefined when unset or invalid. */
  rate(name: (typeof THROTTLE_RATE_CONFIGS)[number]): number | undefined {
    const v = this.entity(String(this.brokerId))[name] ?? this.entity(DEFAULT_BROKER_ENTITY)[name];
    return v === undefined || invalidRate(v) !== null ? undefined : Number(v);
  }
}
