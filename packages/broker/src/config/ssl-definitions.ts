/**
 * TLS broker configs (Kafka's `ssl.*`), spread into BROKER_CONFIGS. Each may also be set per
 * listener with Kafka's `listener.name.<listener>.` prefix (BrokerConfig.forListener). Names, types
 * and defaults are Kafka 2.8's; security/ssl-factory.ts turns them into Node TLS options.
 */
import type { ConfigDef } from './types.js';

const PB = 'per-broker';
const RO = 'read-only';

/** ssl.client.auth values. */
export const SSL_CLIENT_AUTH = ['required', 'requested', 'none'] as const;

export const SSL_CONFIGS = {
  'ssl.protocol': {
    type: 'string',
    default: 'TLSv1.3',
    importance: 'medium',
    dynamic: PB,
    doc: 'The TLS protocol of the SSL context. On connections the broker makes (inter-broker, control plane) no newer version than this one is offered; ssl.enabled.protocols bounds both sides.',
  },
  'ssl.enabled.protocols': {
    type: 'list',
    default: ['TLSv1.2', 'TLSv1.3'],
    oneOf: ['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'],
    importance: 'medium',
    dynamic: PB,
    doc: 'The TLS protocol versions enabled.',
  },
  'ssl.cipher.suites': {
    type: 'list',
    default: null,
    importance: 'medium',
    dynamic: PB,
    doc: "Cipher suites allowed, by their IANA/Java names (TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, TLS_AES_128_GCM_SHA256) or OpenSSL's; empty: Node's defaults.",
  },
  'ssl.keystore.type': {
    type: 'string',
    default: 'JKS',
    importance: 'medium',
    dynamic: PB,
    doc: 'The key store format: PEM (a file with the private key and certificate chain, or ssl.keystore.key / ssl.keystore.certificate.chain) or PKCS12. JKS is refused at startup.',
  },
  'ssl.keystore.location': {
    type: 'string',
    default: null,
    importance: 'high',
    dynamic: PB,
    doc: 'The key store file: for PEM, the private key (PKCS#8, optionally encrypted with ssl.key.password) followed by the certificate chain.',
  },
  'ssl.keystore.password': {
    type: 'password',
    default: null,
    importance: 'high',
    dynamic: PB,
    doc: 'Password of the key store (PKCS12); not allowed with PEM, whose key is protected by ssl.key.password.',
  },
  'ssl.key.password': { type: 'password', default: null, importance: 'high', dynamic: PB, doc: 'Password of the private key.' },
  'ssl.keystore.key': {
    type: 'password',
    default: null,
    importance: 'high',
    dynamic: PB,
    doc: 'The private key in PEM (PKCS#8), inline (KIP-651); with ssl.keystore.certificate.chain and ssl.keystore.type=PEM.',
  },
  'ssl.keystore.certificate.chain': {
    type: 'password',
    default: null,
    importance: 'high',
    dynamic: PB,
    doc: 'The certificate chain in PEM, inline (KIP-651); with ssl.keystore.key and ssl.keystore.type=PEM.',
  },
  'ssl.truststore.type': {
    type: 'string',
    default: 'JKS',
    importance: 'medium',
    dynamic: PB,
    doc: 'The trust store format: PEM. JKS and PKCS12 trust stores are refused at startup.',
  },
  'ssl.truststore.location': { type: 'string', default: null, importance: 'high', dynamic: PB, doc: 'The trust store file: PEM CA certificates.' },
  'ssl.truststore.password': {
    type: 'password',
    default: null,
    importance: 'high',
    dynamic: PB,
    samsa: 'ignored',
    doc: 'Password of the trust store; not allowed with PEM.',
  },
  'ssl.truststore.certificates': {
    type: 'password',
    default: null,
    importance: 'high',
    dynamic: PB,
    doc: 'Trusted certificates in PEM, inline (KIP-651); with ssl.truststore.type=PEM.',
  },
  'ssl.client.auth': {
    type: 'string',
    default: 'none',
    oneOf: SSL_CLIENT_AUTH,
    importance: 'medium',
    dynamic: PB,
    doc: 'Client authentication: required (a trusted client certificate is needed), requested (asked for, optional), none.',
  },
  'ssl.endpoint.identification.algorithm': {
    type: 'string',
    default: 'https',
    importance: 'low',
    dynamic: PB,
    doc: "Checking the server's host name against its certificate on connections the broker makes (https); empty disables it.",
  },
  'ssl.principal.mapping.rules': {
    type: 'string',
    default: 'DEFAULT',
    importance: 'low',
    dynamic: RO,
    doc: "Rules mapping a client certificate's distinguished name to a principal name: RULE:pattern/replacement/[LU], ..., DEFAULT.",
  },
  'ssl.keymanager.algorithm': { type: 'string', default: 'SunX509', importance: 'low', dynamic: PB, samsa: 'ignored', doc: 'The JSSE key manager algorithm.' },
  'ssl.trustmanager.algorithm': { type: 'string', default: 'PKIX', importance: 'low', dynamic: PB, samsa: 'ignored', doc: 'The JSSE trust manager algorithm.' },
  'ssl.provider': { type: 'string', default: null, importance: 'low', dynamic: PB, samsa: 'ignored', doc: 'The JSSE security provider.' },
  'ssl.secure.random.implementation': {
    type: 'string',
    default: null,
    importance: 'low',
    dynamic: PB,
    samsa: 'ignored',
    doc: 'The SecureRandom implementation for TLS.',
  },
} as const satisfies Record<string, ConfigDef>;
