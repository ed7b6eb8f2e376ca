/**
 * TLS broker configs (Kafka's `ssl.*`), spread into BROKER_CONFIGS. Each may also be set per
 * listener with Kafka's `listener.name.<listener>.` prefix (BrokerConfig.forListener).
 */
import type { ConfigDef } from './types.js';

const PB = 'per-broker';

export const SSL_CONFIGS = {
  'ssl.keystore.password': { type: 'password', default: null, importance: 'high', dynamic: PB, samsa: 'ignored', doc: 'Password of the key store.' },
  'ssl.key.password': { type: 'password', default: null, importance: 'high', dynamic: PB, samsa: 'ignored', doc: 'Password of the private key.' },
  'ssl.truststore.password': { type: 'password', default: null, importance: 'high', dynamic: PB, samsa: 'ignored', doc: 'Password of the trust store.' },
} as const satisfies Record<string, ConfigDef>;
