/** What a server-side SASL mechanism is to the authenticator (Java's javax.security.sasl.SaslServer). */
export interface SaslServer {
  readonly mechanism: string;
  /** Takes the client's next token and returns the server's answer; throws SaslAuthenticationError. */
  evaluate(token: Buffer): Buffer;
  /** The exchange is over and the client authenticated. */
  readonly complete: boolean;
  /** The authenticated user (once complete). */
  readonly authorizationId: string;
}

/**
 * An authentication failure whose message goes to the client in SaslAuthenticate's error_message
 * (Kafka's SaslAuthenticationException); other errors get Kafka's generic message instead.
 */
export class SaslAuthenticationError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SaslAuthenticationError';
  }
}

/** Kafka's SaslException: the client gets the generic "invalid credentials" message, not this one. */
export class SaslError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SaslError';
  }
}

export const SaslMechanism = { PLAIN: 'PLAIN', SCRAM_SHA_256: 'SCRAM-SHA-256', SCRAM_SHA_512: 'SCRAM-SHA-512' } as const;
export type SaslMechanism = (typeof SaslMechanism)[keyof typeof SaslMechanism];
export const SERVED_MECHANISMS: readonly string[] = Object.freeze(Object.values(SaslMechanism));
