/**
 * SCRAM (RFC 5802, RFC 7677) primitives and Kafka's credential format: the salted password
 * (PBKDF2 "Hi"), ClientKey/StoredKey/ServerKey, and a credential as Kafka keeps it in
 * /config/users/<user>: `salt=<b64>,stored_key=<b64>,server_key=<b64>,iterations=<n>`.
 */
import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';

export interface ScramMechanismInfo {
  readonly mechanismName: 'SCRAM-SHA-256' | 'SCRAM-SHA-512';
  readonly hash: 'sha256' | 'sha512';
  readonly keyLength: number;
  /** Kafka's ScramMechanism.minIterations (4096 for both). */
  readonly minIterations: number;
  /** Kafka's org.apache.kafka.clients.admin.ScramMechanism type byte (Describe/AlterUserScramCredentials). */
  readonly type: number;
}

export const SCRAM_MECHANISMS: Readonly<Record<'SCRAM-SHA-256' | 'SCRAM-SHA-512', ScramMechanismInfo>> = Object.freeze({
  'SCRAM-SHA-256': Object.freeze({ mechanismName: 'SCRAM-SHA-256', hash: 'sha256', keyLength: 32, minIterations: 4096, type: 1 }),
  'SCRAM-SHA-512': Object.freeze({ mechanismName: 'SCRAM-SHA-512', hash: 'sha512', keyLength: 64, minIterations: 4096, type: 2 }),
});

/** Kafka refuses more iterations than this in AlterUserScramCredentials. */
export const SCRAM_MAX_ITERATIONS = 16384;

export function scramMechanism(name: string): ScramMechanismInfo | undefined {
  return Object.hasOwn(SCRAM_MECHANISMS, name) ? SCRAM_MECHANISMS[name as keyof typeof SCRAM_MECHANISMS] : undefined;
}

export function scramMechanismByType(type: number): ScramMechanismInfo | undefined {
  return Object.values(SCRAM_MECHANISMS).find((m) => m.type === type);
}

export interface ScramCredential {
  readonly salt: Buffer;
  readonly storedKey: Buffer;
  readonly serverKey: Buffer;
  readonly iterations: number;
}

export const hmac = (m: ScramMechanismInfo, key: Buffer, data: Buffer | string): Buffer => createHmac(m.hash, key).update(data).digest();
export const hash = (m: ScramMechanismInfo, data: Buffer): Buffer => createHash(m.hash).update(data).digest();

export function xor(a: Buffer, b: Buffer): Buffer {
  if (a.length !== b.length) throw new Error('SCRAM: xor of buffers of different lengths');
  const out = Buffer.allocUnsafe(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i]! ^ b[i]!;
  return out;
}

/** Hi(password, salt, i): PBKDF2 with the mechanism's HMAC. */
export function saltedPassword(m: ScramMechanismInfo, password: string, salt: Buffer, iterations: number): Buffer {
  return pbkdf2Sync(Buffer.from(password, 'utf8'), salt, iterations, m.keyLength, m.hash);
}

/** The stored credential for a salted password (what AlterUserScramCredentials sends). */
export function credentialFromSaltedPassword(m: ScramMechanismInfo, salted: Buffer, salt: Buffer, iterations: number): ScramCredential {
  const clientKey = hmac(m, salted, 'Client Key');
  return { salt, storedKey: hash(m, clientKey), serverKey: hmac(m, salted, 'Server Key'), iterations };
}

/** A new credential for `password` (random 32-byte salt, as Kafka's ScramFormatter.generateCredential). */
export function generateCredential(m: ScramMechanismInfo, password: string, iterations = m.minIterations, salt = randomBytes(32)): ScramCredential {
  return credentialFromSaltedPassword(m, saltedPassword(m, password, salt, iterations), salt, iterations);
}

/** Kafka's ScramCredentialUtils.credentialToString. */
export function formatCredential(c: ScramCredential): string {
  return `salt=${c.salt.toString('base64')},stored_key=${c.storedKey.toString('base64')},server_key=${c.serverKey.toString('base64')},iterations=${c.iterations}`;
}

/** Kafka's ScramCredentialUtils.credentialFromString; throws on a malformed value. */
export function parseCredential(s: string): ScramCredential {
  const props = new Map<string, string>();
  for (const part of s.split(',')) {
    const i = part.indexOf('=');
    if (i <= 0) throw new Error('invalid SCRAM credential: expected key=value pairs');
    props.set(part.slice(0, i), part.slice(i + 1));
  }
  const need = (k: string) => {
    const v = props.get(k);
    if (v === undefined) throw new Error(`invalid SCRAM credential: ${k} missing`);
    return v;
  };
  const iterations = Number(need('iterations'));
  if (!Number.isInteger(iterations) || iterations <= 0) throw new Error('invalid SCRAM credential: iterations');
  const b64 = (k: string) => {
    const v = need(k);
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(v)) throw new Error(`invalid SCRAM credential: ${k} is not base64`);
    return Buffer.from(v, 'base64');
  };
  return { salt: b64('salt'), storedKey: b64('stored_key'), serverKey: b64('server_key'), iterations };
}

/** RFC 5802 saslname: `=2C` for ',' and `=3D` for '='; undefined when malformed. */
export function decodeSaslName(s: string): string | undefined {
  if (/=(?!2C|3D)/.test(s)) return undefined;
  return s.replace(/=2C/g, ',').replace(/=3D/g, '=');
}

export function encodeSaslName(s: string): string {
  return s.replace(/=/g, '=3D').replace(/,/g, '=2C');
}

/** A printable nonce without ',' (RFC 5802 `printable`). */
export function scramNonce(): string {
  return randomBytes(24).toString('base64url');
}
