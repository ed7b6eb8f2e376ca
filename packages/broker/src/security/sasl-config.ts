/**
 * The SASL settings of a broker as the authenticator and the inter-broker connections need them:
 * per listener the enabled mechanisms and the JAAS login module of each (Kafka's
 * `listener.name.<listener>.<mechanism>.sasl.jaas.config` first), plus startup checks.
 */
import type { BrokerConfig } from '../config/broker-config.js';
import { ConfigError } from '../config/errors.js';
import { parseJaasConfig, type JaasLoginModule } from './jaas.js';
import { SERVED_MECHANISMS, SaslMechanism } from './sasl-server.js';

export const isSaslProtocol = (p: string | undefined): boolean => p === 'SASL_PLAINTEXT' || p === 'SASL_SSL';

export interface ListenerSaslSettings {
  readonly listenerName: string;
  readonly enabledMechanisms: readonly string[];
  /** The mechanism's login module on this listener, if configured. */
  jaas(mechanism: string): JaasLoginModule | undefined;
  /** connections.max.reauth.ms (0: sessions do not expire). */
  readonly reauthMs: number;
  readonly failedAuthDelayMs: number;
  readonly maxReceiveSize: number;
}

function jaasFor(config: BrokerConfig, listenerName: string, mechanism: string): JaasLoginModule | undefined {
  const v = config.forListener(listenerName, 'sasl.jaas.config', mechanism);
  if (v === null) return undefined;
  const key = `listener.name.${listenerName.toLowerCase()}.${mechanism.toLowerCase()}.sasl.jaas.config`;
  return parseJaasConfig(v.value, key);
}

export function listenerSaslSettings(config: BrokerConfig, listenerName: string): ListenerSaslSettings {
  const jaas = new Map<string, JaasLoginModule | undefined>();
  const enabledMechanisms = config.forListener(listenerName, 'sasl.enabled.mechanisms');
  for (const m of enabledMechanisms) jaas.set(m, jaasFor(config, listenerName, m));
  return {
    listenerName,
    enabledMechanisms,
    jaas: (m) => jaas.get(m),
    reauthMs: config.forListener(listenerName, 'connections.max.reauth.ms'),
    failedAuthDelayMs: config.get('connection.failed.authentication.delay.ms'),
    maxReceiveSize: config.forListener(listenerName, 'sasl.server.max.receive.size'),
  };
}

/**
 * Startup checks when some listener is SASL_*: every enabled mechanism must be one Samsa serves,
 * PLAIN needs a JAAS config (its users), the control-plane listener is not SASL (not served), and
 * a SASL inter-broker listener needs a served, enabled sasl.mechanism.inter.broker.protocol with
 * username and password in its JAAS config. Throws ConfigError.
 */
export function validateSaslConfig(config: BrokerConfig): void {
  const sasl = config.listeners.filter((l) => isSaslProtocol(l.securityProtocol));
  if (sasl.length === 0) return;
  if (isSaslProtocol(config.securityProtocolMap[config.controlPlaneListenerName])) {
    throw new ConfigError('control.plane.listener.name', `SASL on the control-plane listener ${config.controlPlaneListenerName} is not supported by Samsa`);
  }
  for (const l of sasl) {
    const s = listenerSaslSettings(config, l.listenerName);
    if (s.enabledMechanisms.length === 0) throw new ConfigError('sasl.enabled.mechanisms', `no SASL mechanism is enabled on listener ${l.listenerName}`);
    const unserved = s.enabledMechanisms.filter((m) => !SERVED_MECHANISMS.includes(m));
    if (unserved.length > 0) {
      throw new ConfigError(
        'sasl.enabled.mechanisms',
        `SASL mechanism(s) ${unserved.join(', ')} enabled on listener ${l.listenerName} are not served by Samsa (it serves ${SERVED_MECHANISMS.join(', ')})`,
      );
    }
    if (s.enabledMechanisms.includes(SaslMechanism.PLAIN) && !s.jaas(SaslMechanism.PLAIN)) {
      throw new ConfigError(
        'sasl.jaas.config',
        `listener ${l.listenerName} enables PLAIN but has no sasl.jaas.config for it (its user_<name>="<password>" options)`,
      );
    }
  }
  if (isSaslProtocol(config.interBrokerSecurityProtocol)) interBrokerSaslCredentials(config);
}

export interface SaslClientCredentials {
  mechanism: 'PLAIN' | 'SCRAM-SHA-256' | 'SCRAM-SHA-512';
  username: string;
  password: string;
}

/**
 * What this broker authenticates with to other brokers when the inter-broker listener is SASL_*
 * (undefined otherwise): sasl.mechanism.inter.broker.protocol and the `username`/`password` options
 * of that listener's JAAS config for the mechanism. Throws ConfigError when they are missing.
 */
export function interBrokerSaslCredentials(config: BrokerConfig): SaslClientCredentials | undefined {
  const listener = config.interBrokerListenerName;
  if (!isSaslProtocol(config.interBrokerSecurityProtocol)) return undefined;
  const mechanism = config.forListener(listener, 'sasl.mechanism.inter.broker.protocol');
  if (!SERVED_MECHANISMS.includes(mechanism)) {
    throw new ConfigError(
      'sasl.mechanism.inter.broker.protocol',
      `the inter-broker listener ${listener} is ${config.interBrokerSecurityProtocol}, so sasl.mechanism.inter.broker.protocol must be one of ${SERVED_MECHANISMS.join(', ')} (found ${mechanism})`,
    );
  }
  if (!config.forListener(listener, 'sasl.enabled.mechanisms').includes(mechanism)) {
    throw new ConfigError('sasl.mechanism.inter.broker.protocol', `${mechanism} is not in sasl.enabled.mechanisms of the inter-broker listener ${listener}`);
  }
  const jaas = jaasFor(config, listener, mechanism);
  const username = jaas?.options['username'];
  const password = jaas?.options['password'];
  if (username === undefined || password === undefined) {
    throw new ConfigError('sasl.jaas.config', `the JAAS config of ${mechanism} on the inter-broker listener ${listener} needs username and password options`);
  }
  return { mechanism: mechanism as SaslClientCredentials['mechanism'], username, password };
}
