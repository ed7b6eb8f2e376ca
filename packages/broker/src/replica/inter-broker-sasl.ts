/**
 * SASL from this broker to the others (replica fetchers, transaction markers) when the inter-broker
 * listener is SASL_*: SaslHandshake v1 + SaslAuthenticate v1 with sasl.mechanism.inter.broker.protocol
 * and the listener's JAAS `username` / `password` (security/sasl-config.ts).
 */
import { runSaslExchange, type SaslCredentials } from '@samsa/protocol';
import type { ConnectHook } from './broker-connection.js';
import type { BrokerConfig } from '../config/broker-config.js';
import { interBrokerSaslCredentials } from '../security/sasl-config.js';

const SASL_HANDSHAKE_VERSION = 1;
const SASL_AUTHENTICATE_VERSION = 1;

export function saslConnectHook(credentials: SaslCredentials): ConnectHook {
  return (send) =>
    runSaslExchange(
      {
        handshake: (mechanism) => send(17, SASL_HANDSHAKE_VERSION, { mechanism }),
        authenticate: (authBytes) => send(36, SASL_AUTHENTICATE_VERSION, { authBytes }),
      },
      credentials,
    );
}

/** `{ onConnect }` for inter-broker connections when the inter-broker listener is SASL_*, else `{}`. */
export function interBrokerConnectHook(config: BrokerConfig): { onConnect?: ConnectHook } {
  const credentials = interBrokerSaslCredentials(config);
  return credentials ? { onConnect: saslConnectHook(credentials) } : {};
}
