/**
 * SASL/PLAIN (RFC 4616) on the broker, as Kafka's PlainSaslServer with its default callback handler:
 * the client sends `[authzid] NUL authcid NUL passwd` once; the password must equal the JAAS
 * config's `user_<authcid>` option. Passwords are compared in constant time.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { SaslAuthenticationError, SaslMechanism, type SaslServer } from './sasl-server.js';

/** Constant-time string equality (both sides hashed first, so lengths leak nothing either). */
export function safeEqual(a: string | Buffer, b: string | Buffer): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}

export class PlainSaslServer implements SaslServer {
  readonly mechanism = SaslMechanism.PLAIN;
  complete = false;
  authorizationId = '';

  /** `jaasOptions`: the listener's PlainLoginModule options (`user_<name>=<password>`). */
  constructor(private readonly jaasOptions: Readonly<Record<string, string>>) {}

  evaluate(token: Buffer): Buffer {
    if (this.complete) throw new SaslAuthenticationError('Authentication failed: SASL/PLAIN exchange is already complete');
    const parts = token.toString('utf8').split('\u0000');
    if (parts.length !== 3) throw new SaslAuthenticationError(`Invalid SASL/PLAIN response: expected 3 tokens, got ${parts.length}`);
    const [authzid, username, password] = parts as [string, string, string];
    if (username === '') throw new SaslAuthenticationError('Authentication failed: username not specified');
    if (password === '') throw new SaslAuthenticationError('Authentication failed: password not specified');
    const expected = Object.hasOwn(this.jaasOptions, `user_${username}`) ? this.jaasOptions[`user_${username}`] : undefined;
    // compared even for an unknown user, so the time taken does not tell which users exist
    const ok = safeEqual(password, expected ?? '\u0000unknown user');
    if (expected === undefined || !ok) throw new SaslAuthenticationError('Authentication failed: Invalid username or password');
    if (authzid !== '' && authzid !== username) {
      throw new SaslAuthenticationError('Authentication failed: Client requested an authorization id that is different from username');
    }
    this.authorizationId = username;
    this.complete = true;
    return Buffer.alloc(0);
  }
}
