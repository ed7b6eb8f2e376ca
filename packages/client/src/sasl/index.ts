/**
 * SASL for this client's connections (Kafka's SaslClientAuthenticator, SASL_PLAINTEXT): once
 * ApiVersions is negotiated, SaslHandshake then SaslAuthenticate until the mechanism (PLAIN,
 * SCRAM-SHA-256, SCRAM-SHA-512; tokens from @samsa/protocol's sasl-client) is done.
 */
import { API_KEYS, runSaslExchange, type ApiRequestMap, type ApiResponseMap } from '@samsa/protocol';

type SaslApi = typeof API_KEYS.SaslHandshake | typeof API_KEYS.SaslAuthenticate;
/** Connection.request, as far as SASL needs it. */
export type SaslRequest = <K extends SaslApi>(apiKey: K, body: ApiRequestMap[K], opts?: { minVersion?: number }) => Promise<{ body: ApiResponseMap[K] }>;

export interface SaslOptions {
  mechanism: 'PLAIN' | 'SCRAM-SHA-256' | 'SCRAM-SHA-512';
  username: string;
  password: string;
}

/**
 * Authenticates a connection (`request`: its Connection.request); rejects with the broker's KafkaError (SASL_AUTHENTICATION_FAILED with its
 * message, UNSUPPORTED_SASL_MECHANISM, ...). Resolves with the session lifetime (ms, 0: unlimited).
 */
export async function authenticate(request: SaslRequest, sasl: SaslOptions): Promise<number> {
  const { sessionLifetimeMs } = await runSaslExchange(
    {
      handshake: async (mechanism) => (await request(API_KEYS.SaslHandshake, { mechanism }, { minVersion: 1 })).body,
      authenticate: async (authBytes) => (await request(API_KEYS.SaslAuthenticate, { authBytes })).body,
    },
    sasl,
  );
  return sessionLifetimeMs;
}
