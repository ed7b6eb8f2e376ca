/**
 * The per-connection SASL authenticator (Kafka's SaslServerAuthenticator) driven frame by frame:
 * the order of requests, SaslHandshake v0 raw tokens, failures and their delayed close, KIP-368
 * re-authentication and session expiry.
 */
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ErrorCode, decodeResponse, encodeRequest, type ApiKey, type ApiRequestMap } from '@samsa/protocol';
import { SaslServerAuthenticator } from './sasl-authenticator.js';
import { CloseConnection, type ConnectionInfo, type RequestTiming } from './socket-server.js';
import { ScramCredentialCache } from '../security/scram-credential-cache.js';
import type { ListenerSaslSettings } from '../security/sasl-config.js';
import { parseJaasConfig } from '../security/jaas.js';

const JAAS = parseJaasConfig('org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret" user_bob="bob-secret";');
const settings = (over: Partial<ListenerSaslSettings> = {}): ListenerSaslSettings => ({
  listenerName: 'SASL',
  enabledMechanisms: ['PLAIN', 'SCRAM-SHA-256'],
  jaas: (m) => (m === 'PLAIN' ? JAAS : undefined),
  reauthMs: 0,
  failedAuthDelayMs: 100,
  maxReceiveSize: 524288,
  ...over,
});
const timing = (): RequestTiming => ({ receivedAt: 0, startedAt: 0, handledAt: 0, sendStartedAt: 0, remoteMs: 0, throttleMs: 0, apiKey: -1 });
const req = <K extends ApiKey>(key: K, version: number, body: ApiRequestMap[K]) => encodeRequest(key, version, 5, 'test', body).subarray(4);
const plain = (user: string, password: string) => Buffer.from(`\u0000${user}\u0000${password}`);
const METADATA = req(3, 4, { topics: [], allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false });
const API_VERSIONS = req(18, 3, { clientSoftwareName: 't', clientSoftwareVersion: '1' });

let conn: ConnectionInfo;
let closed: number;
let now: number;
const make = (over: Partial<ListenerSaslSettings> = {}) =>
  new SaslServerAuthenticator(conn, () => closed++, {
    settings: settings(over),
    credentials: new ScramCredentialCache(),
    logger: pino({ level: 'silent' }),
    now: () => now,
  });

async function answer<K extends 17 | 36>(a: SaslServerAuthenticator, key: K, version: number, frame: Buffer) {
  const out = await a.intercept(frame, timing());
  if (!Buffer.isBuffer(out)) throw new Error(`expected a response, got ${String(out)}`);
  return decodeResponse(key, version, out.subarray(4)).body;
}
const handshake = (a: SaslServerAuthenticator, mechanism: string, v = 1) => answer(a, 17, v, req(17, v, { mechanism }));
const authenticate = (a: SaslServerAuthenticator, bytes: Buffer, v = 1) => answer(a, 36, v, req(36, v, { authBytes: bytes }));

beforeEach(() => {
  conn = { id: 1, remote: '127.0.0.1:1', listener: 'SASL', securityProtocol: 'SASL_PLAINTEXT' };
  closed = 0;
  now = 1_000_000;
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('SASL authenticator', () => {
  it('SASL authenticator – ApiVersions goes to the handler, then SaslHandshake v1 and SaslAuthenticate (PLAIN) set the principal', async () => {
    const a = make();
    expect(a.intercept(API_VERSIONS, timing())).toBeUndefined();
    expect(a.maxFrameSize()).toBe(524288);
    expect(await handshake(a, 'PLAIN')).toEqual({ errorCode: ErrorCode.NONE, mechanisms: ['PLAIN', 'SCRAM-SHA-256'] });
    const r = await authenticate(a, plain('alice', 'alice-secret'));
    expect(r.errorCode).toBe(ErrorCode.NONE);
    expect(r.sessionLifetimeMs).toBe(0n);
    expect(conn.principal).toEqual({ principalType: 'User', name: 'alice' });
    expect(a.authenticated).toBe(true);
    expect(a.maxFrameSize()).toBeUndefined();
    // now every request goes to the handler, SaslHandshake too (no re-authentication without a session lifetime)
    expect(a.intercept(METADATA, timing())).toBeUndefined();
    expect(a.intercept(req(17, 1, { mechanism: 'PLAIN' }), timing())).toBeUndefined();
  });

  it('SASL authenticator – a request other than ApiVersions / SaslHandshake first, or other than SaslAuthenticate after the handshake, closes after the failure delay', async () => {
    const a = make();
    expect(await a.intercept(METADATA, timing())).toBeNull();
    expect(closed).toBe(0);
    // later frames are ignored while the close is pending
    expect(await a.intercept(API_VERSIONS, timing())).toBeNull();
    vi.advanceTimersByTime(99);
    expect(closed).toBe(0);
    vi.advanceTimersByTime(1);
    expect(closed).toBe(1);

    const b = make();
    await handshake(b, 'PLAIN');
    expect(await b.intercept(METADATA, timing())).toBeNull();
    vi.advanceTimersByTime(100);
    expect(closed).toBe(2);
    expect(conn.principal).toBeUndefined();
  });

  it('SASL authenticator – an unsupported mechanism is UNSUPPORTED_SASL_MECHANISM with the enabled list, then a delayed close', async () => {
    const a = make();
    expect(await handshake(a, 'GSSAPI')).toEqual({ errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM, mechanisms: ['PLAIN', 'SCRAM-SHA-256'] });
    // served by Samsa but not enabled on this listener
    const b = make();
    expect((await handshake(b, 'SCRAM-SHA-512')).errorCode).toBe(ErrorCode.UNSUPPORTED_SASL_MECHANISM);
    vi.advanceTimersByTime(100);
    expect(closed).toBe(2);
  });

  it('SASL authenticator – a wrong password is SASL_AUTHENTICATION_FAILED with Kafka’s message, then a delayed close', async () => {
    const a = make({ failedAuthDelayMs: 250 });
    await handshake(a, 'PLAIN', 0 + 1);
    const r = await authenticate(a, plain('alice', 'wrong'), 0);
    expect(r).toMatchObject({ errorCode: ErrorCode.SASL_AUTHENTICATION_FAILED, errorMessage: 'Authentication failed: Invalid username or password' });
    expect(conn.principal).toBeUndefined();
    vi.advanceTimersByTime(249);
    expect(closed).toBe(0);
    vi.advanceTimersByTime(1);
    expect(closed).toBe(1);

    // SCRAM failures get Kafka's generic message
    const b = make();
    await handshake(b, 'SCRAM-SHA-256');
    expect((await authenticate(b, Buffer.from('n,,n=nobody,r=abc'))).errorMessage).toBe(
      'Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256',
    );
  });

  it('SASL authenticator – SaslHandshake v0 switches to raw size-prefixed tokens (PLAIN answers an empty token)', async () => {
    const a = make();
    expect((await handshake(a, 'PLAIN', 0)).errorCode).toBe(ErrorCode.NONE);
    const out = await a.intercept(plain('bob', 'bob-secret'), timing());
    expect(out).toEqual(Buffer.from([0, 0, 0, 0]));
    expect(conn.principal?.name).toBe('bob');
    // a wrong raw token just closes (no Kafka response exists in this mode)
    const b = make();
    await handshake(b, 'PLAIN', 0);
    expect(await b.intercept(plain('bob', 'nope'), timing())).toBeNull();
    vi.advanceTimersByTime(100);
    expect(closed).toBe(1);
  });

  it('SASL authenticator – malformed SASL requests and frames too short for a header close the connection at once', async () => {
    const a = make();
    expect(() => a.intercept(Buffer.from([0, 17, 0]), timing())).toThrow(CloseConnection);
    const b = make();
    await expect(Promise.resolve().then(() => b.intercept(Buffer.from([0, 17, 0, 1, 0, 0, 0, 1, 0xff, 0xff, 0xff]), timing()))).rejects.toThrow(
      CloseConnection,
    );
  });

  it('SASL authenticator – KIP-368: SaslAuthenticate v1+ gets connections.max.reauth.ms as session lifetime; re-authentication as the same user renews it, another user is refused', async () => {
    const a = make({ reauthMs: 1000 });
    await handshake(a, 'PLAIN');
    expect((await authenticate(a, plain('alice', 'alice-secret'), 2)).sessionLifetimeMs).toBe(1000n);
    now += 900;
    expect(await handshake(a, 'PLAIN')).toMatchObject({ errorCode: ErrorCode.NONE });
    expect((await authenticate(a, plain('alice', 'alice-secret'))).sessionLifetimeMs).toBe(1000n);
    now += 900;
    // renewed: still inside the new session
    expect(a.intercept(METADATA, timing())).toBeUndefined();
    // a different mechanism is refused
    expect((await handshake(a, 'SCRAM-SHA-256')).errorCode).toBe(ErrorCode.UNSUPPORTED_SASL_MECHANISM);

    const b = make({ reauthMs: 1000 });
    await handshake(b, 'PLAIN');
    await authenticate(b, plain('alice', 'alice-secret'));
    await handshake(b, 'PLAIN');
    const r = await authenticate(b, plain('bob', 'bob-secret'));
    expect(r).toMatchObject({ errorCode: ErrorCode.SASL_AUTHENTICATION_FAILED, errorMessage: expect.stringMatching(/Cannot change principals/) as unknown });
    expect(conn.principal?.name).toBe('alice');
    vi.advanceTimersByTime(100);
    expect(closed).toBe(2);
  });

  it('SASL authenticator – a request after the session expired closes the connection; a v0 SaslAuthenticate client cannot re-authenticate', async () => {
    const a = make({ reauthMs: 1000 });
    await handshake(a, 'PLAIN');
    await authenticate(a, plain('alice', 'alice-secret'), 0);
    // v0 clients do not re-authenticate: SaslHandshake goes to the handler (ILLEGAL_SASL_STATE)
    expect(a.intercept(req(17, 1, { mechanism: 'PLAIN' }), timing())).toBeUndefined();
    now += 1000;
    expect(() => a.intercept(METADATA, timing())).toThrow(/expired/);
  });
});
