/**
 * The client side of the SASL mechanisms Kafka clients use with Samsa, token by token (what goes
 * in SaslAuthenticate's auth_bytes): PLAIN (RFC 4616) and SCRAM-SHA-256/512 (RFC 5802, RFC 7677).
 * Used by @samsa/client connections and by brokers to each other (inter-broker SASL).
 */
import { createHash, createHmac, pbkdf2, randomBytes, timingSafeEqual } from 'node:crypto';
import { KafkaError, errorName } from './errors.js';
import type { SaslAuthenticateResponse, SaslHandshakeResponse } from './generated/index.js';

export type SaslClientMechanism = 'PLAIN' | 'SCRAM-SHA-256' | 'SCRAM-SHA-512';

export interface SaslCredentials {
  mechanism: SaslClientMechanism;
  username: string;
  password: string;
}

/** One exchange: the first token, then the answer to each server token until `done`. */
export interface SaslClient {
  initial(): Promise<Buffer>;
  /** The answer to the server's token (undefined: nothing more to send; the exchange is over). */
  evaluate(serverToken: Buffer): Promise<Buffer | undefined>;
  readonly done: boolean;
}

export function createSaslClient(c: SaslCredentials, nonce?: string): SaslClient {
  if (c.mechanism === 'PLAIN') return new PlainClient(c.username, c.password);
  if (c.mechanism === 'SCRAM-SHA-256' || c.mechanism === 'SCRAM-SHA-512') return new ScramClient(c.mechanism, c.username, c.password, nonce);
  throw new Error(`SASL mechanism ${String((c as { mechanism: unknown }).mechanism)} is not supported (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)`);
}

class PlainClient implements SaslClient {
  done = false;
  constructor(
    private readonly username: string,
    private readonly password: string,
  ) {}
  async initial(): Promise<Buffer> {
    return Buffer.from(`\u0000${this.username}\u0000${this.password}`, 'utf8');
  }
  async evaluate(): Promise<undefined> {
    this.done = true;
    return undefined;
  }
}

const saslName = (s: string) => s.replace(/=/g, '=3D').replace(/,/g, '=2C');

class ScramClient implements SaslClient {
  done = false;
  private readonly hash: 'sha256' | 'sha512';
  private readonly keyLength: number;
  private readonly clientNonce: string;
  private clientFirstBare = '';
  private expectedServerSignature: Buffer | undefined;

  constructor(
    mechanism: 'SCRAM-SHA-256' | 'SCRAM-SHA-512',
    private readonly username: string,
    private readonly password: string,
    nonce?: string,
  ) {
    this.hash = mechanism === 'SCRAM-SHA-256' ? 'sha256' : 'sha512';
    this.keyLength = mechanism === 'SCRAM-SHA-256' ? 32 : 64;
    this.clientNonce = nonce ?? randomBytes(24).toString('base64url');
  }

  async initial(): Promise<Buffer> {
    this.clientFirstBare = `n=${saslName(this.username)},r=${this.clientNonce}`;
    return Buffer.from(`n,,${this.clientFirstBare}`, 'utf8');
  }

  async evaluate(serverToken: Buffer): Promise<Buffer | undefined> {
    const msg = serverToken.toString('utf8');
    if (this.expectedServerSignature) return this.serverFinal(msg);
    const attrs = parseAttributes(msg);
    const nonce = attrs.get('r');
    const salt = attrs.get('s');
    const iterations = Number(attrs.get('i'));
    if (attrs.has('e')) throw new Error(`SCRAM: the server refused: ${attrs.get('e')}`);
    if (!nonce || !nonce.startsWith(this.clientNonce) || salt === undefined || !Number.isInteger(iterations) || iterations <= 0) {
      throw new Error('SCRAM: invalid server first message');
    }
    const salted = await new Promise<Buffer>((resolve, reject) =>
      pbkdf2(Buffer.from(this.password, 'utf8'), Buffer.from(salt, 'base64'), iterations, this.keyLength, this.hash, (err, key) =>
        err ? reject(err) : resolve(key),
      ),
    );
    const clientKey = createHmac(this.hash, salted).update('Client Key').digest();
    const storedKey = createHash(this.hash).update(clientKey).digest();
    const withoutProof = `c=${Buffer.from('n,,').toString('base64')},r=${nonce}`;
    const authMessage = `${this.clientFirstBare},${msg},${withoutProof}`;
    const clientSignature = createHmac(this.hash, storedKey).update(authMessage).digest();
    const proof = Buffer.alloc(clientKey.length);
    for (let i = 0; i < proof.length; i++) proof[i] = clientKey[i]! ^ clientSignature[i]!;
    const serverKey = createHmac(this.hash, salted).update('Server Key').digest();
    this.expectedServerSignature = createHmac(this.hash, serverKey).update(authMessage).digest();
    return Buffer.from(`${withoutProof},p=${proof.toString('base64')}`, 'utf8');
  }

  private serverFinal(msg: string): undefined {
    const attrs = parseAttributes(msg);
    if (attrs.has('e')) throw new Error(`SCRAM: the server refused: ${attrs.get('e')}`);
    const v = Buffer.from(attrs.get('v') ?? '', 'base64');
    const expected = this.expectedServerSignature!;
    if (v.length !== expected.length || !timingSafeEqual(v, expected)) throw new Error('SCRAM: invalid server signature');
    this.done = true;
    return undefined;
  }
}

function parseAttributes(msg: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of msg.split(',')) {
    const i = part.indexOf('=');
    if (i === 1) out.set(part[0]!, part.slice(2));
  }
  return out;
}

/** The two requests of an authentication, as the caller's connection sends them. */
export interface SaslExchange {
  handshake(mechanism: string): Promise<SaslHandshakeResponse>;
  authenticate(authBytes: Buffer): Promise<SaslAuthenticateResponse>;
}

/**
 * SaslHandshake (v1) then SaslAuthenticate until the mechanism is done. Rejects with a KafkaError
 * (UNSUPPORTED_SASL_MECHANISM naming the broker's mechanisms, SASL_AUTHENTICATION_FAILED with the
 * broker's message, ...). Resolves with the session lifetime the broker granted (0: unlimited).
 */
export async function runSaslExchange(x: SaslExchange, c: SaslCredentials): Promise<{ sessionLifetimeMs: number }> {
  const hs = await x.handshake(c.mechanism);
  if (hs.errorCode !== 0) {
    const name = errorName(hs.errorCode);
    throw new KafkaError(hs.errorCode, `SASL handshake for ${c.mechanism} failed with ${name}; the broker's enabled mechanisms: ${hs.mechanisms.join(', ')}`);
  }
  const client = createSaslClient(c);
  let token: Buffer | undefined = await client.initial();
  let lifetime = 0n;
  while (token !== undefined) {
    const res = await x.authenticate(token);
    if (res.errorCode !== 0) throw new KafkaError(res.errorCode, res.errorMessage ?? `SASL authentication with ${c.mechanism} failed`);
    lifetime = res.sessionLifetimeMs;
    token = await client.evaluate(res.authBytes);
  }
  return { sessionLifetimeMs: Number(lifetime) };
}
