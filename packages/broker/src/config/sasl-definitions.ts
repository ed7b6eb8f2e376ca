/**
 * SASL broker configs (Kafka's `sasl.*`), spread into BROKER_CONFIGS. Each may also be set per
 * listener (`listener.name.<listener>.`) and, for `sasl.jaas.config`, per listener and mechanism
 * (`listener.name.<listener>.<mechanism>.`; BrokerConfig.forListener).
 */
import type { ConfigDef } from './types.js';

const RO = 'read-only';
const PB = 'per-broker';

export const SASL_CONFIGS = {
  'sasl.enabled.mechanisms': {
    type: 'list',
    default: ['GSSAPI'],
    importance: 'medium',
    dynamic: PB,
    doc: "SASL mechanisms served on SASL listeners. Samsa serves PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512; another enabled mechanism (Kafka's default GSSAPI included) is refused at startup when a SASL listener exists.",
  },
  'sasl.mechanism.inter.broker.protocol': {
    type: 'string',
    default: 'GSSAPI',
    importance: 'medium',
    dynamic: PB,
    doc: 'SASL mechanism brokers use to each other when the inter-broker listener is SASL_PLAINTEXT or SASL_SSL; it must then be one Samsa serves and one enabled on that listener.',
  },
  'sasl.jaas.config': {
    type: 'password',
    default: null,
    importance: 'medium',
    dynamic: PB,
    doc: 'JAAS login module of a SASL listener, usually per listener and mechanism (listener.name.<listener>.<mechanism>.sasl.jaas.config): PlainLoginModule with user_<name>="<password>" options for PLAIN; username/password options are the credentials this broker uses to other brokers.',
  },
  'connections.max.reauth.ms': {
    type: 'long',
    default: 0,
    min: 0,
    importance: 'medium',
    dynamic: RO,
    doc: 'When positive, a SASL session lasts at most this long (KIP-368): SaslAuthenticate v1+ tells the client, which re-authenticates on the same connection; a request after expiry closes the connection.',
  },
  'sasl.server.max.receive.size': {
    type: 'int',
    default: 524288,
    min: 1,
    importance: 'low',
    dynamic: RO,
    doc: 'Largest frame accepted before and during SASL authentication; larger ones close the connection.',
  },
  'connection.failed.authentication.delay.ms': {
    type: 'int',
    default: 100,
    min: 0,
    importance: 'low',
    dynamic: RO,
    doc: 'A connection whose authentication failed is closed this long after the failure is answered.',
  },
} as const satisfies Record<string, ConfigDef>;
