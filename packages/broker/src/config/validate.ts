/**
 * Decoding of raw settings and the checks across configs that Kafka's `KafkaConfig.validateValues`
 * makes, plus the values Kafka derives from several keys (listeners, log dirs, retention, …).
 */
import { ConfigError } from './errors.js';
import { BROKER_CONFIGS, BROKER_CONFIG_NAMES, type BrokerConfigName, type BrokerConfigValue, type SecurityProtocol } from './definitions.js';
import { formatEndpoint, parseListeners, parseSecurityProtocolMap, type ListenerEndpoint } from './listeners.js';
import {
  IBP_3_0_IV1,
  highestSupportedRecordVersion,
  minReleaseForRecordVersion,
  parseMetadataVersion,
  shouldIgnoreMessageFormatVersion,
  type MetadataVersion,
} from '@samsa/server-common';
import { describeOrigin, type RawSetting } from './sources.js';
import type { AnyConfigValue, ConfigDef } from './types.js';
import { formatValue, parseValue } from './values.js';

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;

/** Decodes every defined config from `settings` (or its default). Throws `ConfigError`. */
export function decodeBrokerSettings(settings: ReadonlyMap<string, RawSetting>): Map<BrokerConfigName, AnyConfigValue> {
  const values = new Map<BrokerConfigName, AnyConfigValue>();
  for (const name of BROKER_CONFIG_NAMES) {
    const def: ConfigDef = BROKER_CONFIGS[name];
    const raw = settings.get(name);
    const value = raw ? parseValue(name, def, raw.value, describeOrigin(raw.origin)) : def.default;
    if (value === null && def.required) {
      throw new ConfigError(name, `Missing required configuration '${name}' which has no default value.`);
    }
    values.set(name, value);
  }
  return values;
}

export interface ZookeeperSettings {
  /** `host:port,…[/chroot]` (what ZkClient takes), without blanks and without a bare `/` chroot. */
  readonly connectString: string;
  readonly hosts: readonly string[];
  /** `''` when none. */
  readonly chroot: string;
  readonly sessionTimeoutMs: number;
  /** zookeeper.connection.timeout.ms, or the session timeout when unset. */
  readonly connectionTimeoutMs: number;
  readonly maxInFlightRequests: number;
}

/** Values Kafka derives from several configs (KafkaConfig's computed members). */
export interface ResolvedBrokerConfig {
  /** -1: to be generated from /brokers/seqid at startup. */
  readonly brokerId: number;
  readonly securityProtocolMap: Readonly<Record<string, SecurityProtocol>>;
  readonly listeners: readonly ListenerEndpoint[];
  /** advertised.listeners, or listeners when unset. */
  readonly advertisedListeners: readonly ListenerEndpoint[];
  readonly controlPlaneListenerName: string;
  /** The bound endpoint of the control-plane listener (from `listeners`). */
  readonly controlPlaneListener: ListenerEndpoint;
  /** Listeners serving clients and other brokers (all but the control plane). */
  readonly dataPlaneListeners: readonly ListenerEndpoint[];
  readonly interBrokerListenerName: string;
  readonly interBrokerSecurityProtocol: SecurityProtocol;
  readonly logDirs: readonly string[];
  readonly zookeeper: ZookeeperSettings;
  /** Retention from log.retention.ms / .minutes / .hours; -1 means forever. */
  readonly logRetentionMs: number;
  readonly logRollMs: number;
  readonly logRollJitterMs: number;
  /** log.flush.interval.ms, or log.flush.scheduler.interval.ms when unset. */
  readonly logFlushIntervalMs: number;
  readonly interBrokerProtocolVersion: MetadataVersion;
  /** log.message.format.version, or 3.0-IV1 when inter.broker.protocol.version is 3.0+ (KafkaConfig.logMessageFormatVersion). */
  readonly logMessageFormatVersion: MetadataVersion;
}

export interface ResolveOptions {
  /** broker.id was generated: it lies above reserved.broker.max.id by design. */
  readonly generatedBrokerId?: boolean;
}

/** Checks configs against each other and computes the derived values. Throws `ConfigError`. */
export function resolveBrokerConfig(
  values: ReadonlyMap<BrokerConfigName, AnyConfigValue>,
  settings: ReadonlyMap<string, RawSetting>,
  opts: ResolveOptions = {},
): ResolvedBrokerConfig {
  const get = <K extends BrokerConfigName>(k: K): BrokerConfigValue<K> => values.get(k) as BrokerConfigValue<K>;
  const isSet = (k: BrokerConfigName): boolean => settings.has(k);
  const fail = (k: BrokerConfigName, reason: string): ConfigError => {
    const raw = settings.get(k);
    const shown = raw ? raw.value : (formatValue(BROKER_CONFIGS[k].type, values.get(k) ?? null) ?? 'null');
    const from = raw ? describeOrigin(raw.origin) : 'default';
    return new ConfigError(k, `Invalid value '${shown}' for configuration '${k}' (${from}): ${reason}.`);
  };

  // broker.id
  const brokerId = get('broker.id');
  const reservedMax = get('reserved.broker.max.id');
  if (opts.generatedBrokerId) {
    if (brokerId <= reservedMax) throw fail('broker.id', `a generated broker id must be above reserved.broker.max.id (${reservedMax})`);
  } else if (get('broker.id.generation.enable')) {
    if (brokerId < -1 || brokerId > reservedMax) {
      throw fail('broker.id', `must be from -1 (generate one) to reserved.broker.max.id (${reservedMax})`);
    }
  } else if (brokerId < 0) {
    throw fail('broker.id', 'must be at least 0 when broker.id.generation.enable is false');
  }

  const zookeeper = resolveZookeeper(get, fail);

  // Listeners
  const securityProtocolMap = parseSecurityProtocolMap(get('listener.security.protocol.map'));
  const listeners = parseListeners(get('listeners'), securityProtocolMap, { key: 'listeners', requireDistinctPorts: true });
  if (listeners.length === 0) throw fail('listeners', 'at least one listener is needed');
  const advertisedRaw = get('advertised.listeners');
  const advertisedListeners =
    advertisedRaw === null ? listeners : parseListeners(advertisedRaw, securityProtocolMap, { key: 'advertised.listeners', requireDistinctPorts: false });
  const listenerNames = listeners.map((l) => l.listenerName);
  const advertisedNames = advertisedListeners.map((l) => l.listenerName);
  const unknownAdvertised = advertisedNames.filter((n) => !listenerNames.includes(n));
  if (unknownAdvertised.length > 0) {
    throw fail(
      'advertised.listeners',
      `listener names must be a subset of those in listeners (${listenerNames.join(', ')}); found ${unknownAdvertised.join(', ')}`,
    );
  }
  const metaAddress = advertisedListeners.find((l) => l.host === '0.0.0.0' || l.host === '::');
  if (metaAddress) {
    const hint = advertisedRaw === null ? '; set advertised.listeners, which defaults to listeners' : '';
    throw fail(
      advertisedRaw === null ? 'listeners' : 'advertised.listeners',
      `cannot advertise the non-routable meta-address in ${formatEndpoint(metaAddress)}; use a routable address${hint}`,
    );
  }

  // Inter-broker listener
  let interBrokerListenerName: string;
  const ibln = get('inter.broker.listener.name');
  if (ibln !== null) {
    if (isSet('security.inter.broker.protocol')) {
      throw fail('inter.broker.listener.name', 'only one of inter.broker.listener.name and security.inter.broker.protocol may be set');
    }
    interBrokerListenerName = ibln.toUpperCase();
    if (securityProtocolMap[interBrokerListenerName] === undefined) {
      throw fail('inter.broker.listener.name', `listener ${interBrokerListenerName} is not in listener.security.protocol.map`);
    }
  } else {
    interBrokerListenerName = get('security.inter.broker.protocol');
  }
  if (!advertisedNames.includes(interBrokerListenerName)) {
    throw fail(
      ibln !== null ? 'inter.broker.listener.name' : 'security.inter.broker.protocol',
      `the inter-broker listener ${interBrokerListenerName} must be one of the advertised listeners (${advertisedNames.join(', ')})`,
    );
  }
  const interBrokerSecurityProtocol = securityProtocolMap[interBrokerListenerName] ?? 'PLAINTEXT';

  // Control-plane listener
  const controlPlaneListenerName = get('control.plane.listener.name').toUpperCase();
  if (controlPlaneListenerName === '') throw fail('control.plane.listener.name', 'a listener name is needed');
  if (securityProtocolMap[controlPlaneListenerName] === undefined) {
    throw fail('control.plane.listener.name', `listener ${controlPlaneListenerName} is not in listener.security.protocol.map`);
  }
  const controlPlaneListener = listeners.find((l) => l.listenerName === controlPlaneListenerName);
  if (!controlPlaneListener) {
    throw fail('control.plane.listener.name', `listener ${controlPlaneListenerName} must be one of listeners (${listenerNames.join(', ')})`);
  }
  if (!advertisedNames.includes(controlPlaneListenerName)) {
    throw fail('control.plane.listener.name', `listener ${controlPlaneListenerName} must be one of the advertised listeners (${advertisedNames.join(', ')})`);
  }
  if (controlPlaneListenerName === interBrokerListenerName) {
    throw fail('control.plane.listener.name', `must differ from the inter-broker listener name (both are ${controlPlaneListenerName})`);
  }
  const dataPlaneListeners = Object.freeze(listeners.filter((l) => l.listenerName !== controlPlaneListenerName));

  // Samsa's own ports must not collide with listeners or each other.
  const taken = new Map<number, string>(listeners.filter((l) => l.port !== 0).map((l) => [l.port, `listener ${l.listenerName}`]));
  for (const k of ['metrics.port', 'console.port'] as const) {
    const port = get(k);
    if (port === null || port <= 0) continue;
    const other = taken.get(port);
    if (other) throw fail(k, `port ${port} is already used by ${other}`);
    taken.set(port, k);
  }

  // Log directories
  const dirsKey = get('log.dirs') !== null ? 'log.dirs' : 'log.dir';
  const dirsRaw = (get('log.dirs') ?? get('log.dir')).trim();
  const logDirs = dirsRaw === '' ? [] : dirsRaw.split(/\s*,\s*/);
  if (logDirs.length === 0) throw fail(dirsKey, 'at least one log directory must be defined via log.dirs or log.dir');
  if (logDirs.includes('')) throw fail(dirsKey, 'a log directory path is empty');
  const dupDir = logDirs.find((d, i) => logDirs.indexOf(d) !== i);
  if (dupDir !== undefined) throw fail(dirsKey, `log directory ${dupDir} is listed twice`);

  // Time-based log settings (KafkaConfig.logRollTimeMillis & co.)
  const logRollMs = get('log.roll.ms') ?? get('log.roll.hours') * HOUR_MS;
  if (logRollMs < 1) throw fail('log.roll.ms', 'must be at least 1');
  const logRollJitterMs = get('log.roll.jitter.ms') ?? get('log.roll.jitter.hours') * HOUR_MS;
  if (logRollJitterMs < 0) throw fail('log.roll.jitter.ms', 'must be at least 0');
  const retentionKey: BrokerConfigName =
    get('log.retention.ms') !== null ? 'log.retention.ms' : get('log.retention.minutes') !== null ? 'log.retention.minutes' : 'log.retention.hours';
  const minutes = get('log.retention.minutes');
  let logRetentionMs = get('log.retention.ms') ?? (minutes !== null ? minutes * MINUTE_MS : get('log.retention.hours') * HOUR_MS);
  if (logRetentionMs < 0) logRetentionMs = -1;
  if (logRetentionMs === 0) throw fail(retentionKey, 'retention must be unlimited (-1) or at least 1 ms');
  const logFlushIntervalMs = get('log.flush.interval.ms') ?? get('log.flush.scheduler.interval.ms');

  // Other cross checks of KafkaConfig.validateValues
  const cleanerThreads = get('log.cleaner.threads');
  if (cleanerThreads > 0 && get('log.cleaner.dedupe.buffer.size') / cleanerThreads <= 1024 * 1024) {
    throw fail('log.cleaner.dedupe.buffer.size', `must be more than 1 MiB per cleaner thread (log.cleaner.threads=${cleanerThreads})`);
  }
  const fetchWait = get('replica.fetch.wait.max.ms');
  if (fetchWait > get('replica.socket.timeout.ms')) {
    throw fail('replica.socket.timeout.ms', `must be at least replica.fetch.wait.max.ms (${fetchWait}) to avoid needless socket timeouts`);
  }
  if (fetchWait > get('replica.lag.time.max.ms')) {
    throw fail('replica.fetch.wait.max.ms', `must be at most replica.lag.time.max.ms (${get('replica.lag.time.max.ms')}) to avoid ISR churn`);
  }
  const acks = get('offsets.commit.required.acks');
  const offsetsRf = get('offsets.topic.replication.factor');
  if (acks < -1 || acks > offsetsRf) {
    throw fail('offsets.commit.required.acks', `must be from -1 to offsets.topic.replication.factor (${offsetsRf})`);
  }
  if (get('group.min.session.timeout.ms') > get('group.max.session.timeout.ms')) {
    throw fail('group.min.session.timeout.ms', `must not exceed group.max.session.timeout.ms (${get('group.max.session.timeout.ms')})`);
  }

  // Protocol versions (MetadataVersionValidator, and the record version check of validateValues)
  const version = (k: 'inter.broker.protocol.version' | 'log.message.format.version'): MetadataVersion => {
    const v = parseMetadataVersion(get(k));
    if (!v) throw fail(k, `Version ${get(k)} is not a valid version`);
    return v;
  };
  const interBrokerProtocolVersion = version('inter.broker.protocol.version');
  const configuredFormat = version('log.message.format.version');
  const logMessageFormatVersion = shouldIgnoreMessageFormatVersion(interBrokerProtocolVersion) ? IBP_3_0_IV1 : configuredFormat;
  const recordVersion = highestSupportedRecordVersion(logMessageFormatVersion);
  if (highestSupportedRecordVersion(interBrokerProtocolVersion) < recordVersion) {
    throw fail(
      'log.message.format.version',
      `log.message.format.version ${get('log.message.format.version')} can only be used when inter.broker.protocol.version is set to version ${minReleaseForRecordVersion(recordVersion)} or higher`,
    );
  }

  return {
    brokerId,
    securityProtocolMap,
    listeners,
    advertisedListeners,
    controlPlaneListenerName,
    controlPlaneListener,
    dataPlaneListeners,
    interBrokerListenerName,
    interBrokerSecurityProtocol,
    logDirs: Object.freeze(logDirs),
    zookeeper,
    logRetentionMs,
    logRollMs,
    logRollJitterMs,
    logFlushIntervalMs,
    interBrokerProtocolVersion,
    logMessageFormatVersion,
  };
}

const ZK_HOST = /^(\[[0-9a-fA-F:.%a-zA-Z]+\]|[^\s:[\]/,]+)(:(\d+))?$/;

function resolveZookeeper(
  get: <K extends BrokerConfigName>(k: K) => BrokerConfigValue<K>,
  fail: (k: BrokerConfigName, reason: string) => ConfigError,
): ZookeeperSettings {
  const connectString = get('zookeeper.connect');
  if (connectString === '') throw fail('zookeeper.connect', 'a ZooKeeper address is needed, e.g. 127.0.0.1:2181');
  const slash = connectString.indexOf('/');
  const hostsPart = slash < 0 ? connectString : connectString.slice(0, slash);
  let chroot = slash < 0 ? '' : connectString.slice(slash);
  const hosts = hostsPart.split(',').map((h) => h.trim());
  for (const h of hosts) {
    const m = ZK_HOST.exec(h);
    const port = m?.[3] === undefined ? 2181 : Number(m[3]);
    if (!m || port < 1 || port > 65535) {
      throw fail('zookeeper.connect', `'${h}' is not a host[:port] ZooKeeper address (expected host:port[,host:port…][/chroot])`);
    }
  }
  if (chroot === '/') chroot = '';
  if (chroot !== '' && (!/^(\/[^/\s]+)+$/.test(chroot) || chroot.split('/').some((seg) => seg === '.' || seg === '..'))) {
    throw fail('zookeeper.connect', `chroot '${chroot}' is not a valid ZooKeeper path (like /samsa or /kafka/prod, no trailing slash)`);
  }
  const sessionTimeoutMs = get('zookeeper.session.timeout.ms');
  return Object.freeze({
    connectString: hosts.join(',') + chroot,
    hosts: Object.freeze(hosts),
    chroot,
    sessionTimeoutMs,
    connectionTimeoutMs: get('zookeeper.connection.timeout.ms') ?? sessionTimeoutMs,
    maxInFlightRequests: get('zookeeper.max.in.flight.requests'),
  });
}
