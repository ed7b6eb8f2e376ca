/**
 * The broker side of SASL for one connection (Kafka's SaslServerAuthenticator), in front of the
 * request handler on SASL_PLAINTEXT and SASL_SSL listeners. Before authentication only ApiVersions,
 * then SaslHandshake, then SaslAuthenticate are accepted; anything else fails the authentication
 * (Kafka's ILLEGAL_SASL_STATE). SaslHandshake v0 switches to raw SASL tokens (size-prefixed, no
 * Kafka header). A failure is answered (SaslAuthenticate with SASL_AUTHENTICATION_FAILED and
 * Kafka's message, or UNSUPPORTED_SASL_MECHANISM with the enabled list) and the connection closed
 * connection.failed.authentication.delay.ms later. On success the connection's principal is
 * User:<name>. KIP-368: with connections.max.reauth.ms > 0 the session expires; a client that
 * authenticated with SaslAuthenticate v1+ re-authenticates on the same connection (same principal
 * and mechanism), and a request after expiry closes the connection.
 */
import type { Logger } from 'pino';
import { ErrorCode, decodeRequest, encodeResponse, type DecodedRequestOf } from '@samsa/protocol';
import { CloseConnection, type ConnectionInfo, type FrameInterceptor, type FrameResponse, type RequestTiming } from './socket-server.js';
import { userPrincipal } from '../security/kafka-principal.js';
import { PlainSaslServer } from '../security/plain-server.js';
import { SaslAuthenticationError, SaslMechanism, type SaslServer } from '../security/sasl-server.js';
import { ScramSaslServer } from '../security/scram-server.js';
import { scramMechanism } from '../security/scram.js';
import type { ScramCredentialCache } from '../security/scram-credential-cache.js';
import { isSaslProtocol, listenerSaslSettings, type ListenerSaslSettings } from '../security/sasl-config.js';
import type { BrokerConfig } from '../config/broker-config.js';

const API_VERSIONS = 18;
const SASL_HANDSHAKE = 17;
const SASL_AUTHENTICATE = 36;

const State = {
  /** Before the handshake: ApiVersions or SaslHandshake. */
  HANDSHAKE: 'handshake',
  /** After SaslHandshake v1: SaslAuthenticate requests carry the tokens. */
  AUTHENTICATE: 'authenticate',
  /** After SaslHandshake v0: raw size-prefixed tokens. */
  RAW_TOKENS: 'raw-tokens',
  AUTHENTICATED: 'authenticated',
  /** Re-authentication (KIP-368): SaslHandshake seen on an authenticated connection, SaslAuthenticate next. */
  REAUTHENTICATE: 'reauthenticate',
  FAILED: 'failed',
} as const;
type State = (typeof State)[keyof typeof State];

export interface SaslAuthenticatorOptions {
  settings: ListenerSaslSettings;
  credentials: ScramCredentialCache;
  logger: Logger;
  now?: () => number;
}

/** Creates the server side of a mechanism for this listener (undefined: not enabled or not served). */
export function createSaslServer(mechanism: string, settings: ListenerSaslSettings, credentials: ScramCredentialCache): SaslServer | undefined {
  if (!settings.enabledMechanisms.includes(mechanism)) return undefined;
  if (mechanism === SaslMechanism.PLAIN) return new PlainSaslServer(settings.jaas(mechanism)?.options ?? {});
  const scram = scramMechanism(mechanism);
  if (scram) return new ScramSaslServer(scram, (user) => credentials.get(mechanism, user));
  return undefined;
}

export class SaslServerAuthenticator implements FrameInterceptor {
  private state: State = State.HANDSHAKE;
  private server: SaslServer | undefined;
  private mechanism: string | undefined;
  /** The mechanism and user of the current session (re-authentication must keep both). */
  private session: { mechanism: string; user: string } | undefined;
  /** Epoch ms after which the session is over (undefined: never). */
  private expiresAt: number | undefined;
  /** The client authenticated with SaslAuthenticate v1+ (it may re-authenticate). */
  private clientSupportsReauth = false;
  private readonly log: Logger;
  private readonly now: () => number;
  private closeTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly conn: ConnectionInfo,
    private readonly closeConnection: () => void,
    private readonly o: SaslAuthenticatorOptions,
  ) {
    this.log = o.logger.child({ connection: conn.id, remote: conn.remote });
    this.now = o.now ?? Date.now;
  }

  get authenticated(): boolean {
    return this.state === State.AUTHENTICATED;
  }

  maxFrameSize(): number | undefined {
    return this.state === State.AUTHENTICATED ? undefined : this.o.settings.maxReceiveSize;
  }

  intercept(frame: Buffer, timing: RequestTiming): Promise<FrameResponse> | undefined {
    if (this.state === State.FAILED) return Promise.resolve(null);
    if (this.state === State.RAW_TOKENS) return Promise.resolve(this.rawToken(frame));
    if (frame.length < 8) throw new CloseConnection('request too short for a request header during SASL authentication');
    const apiKey = frame.readInt16BE(0);
    timing.apiKey = apiKey;
    switch (this.state) {
      case State.HANDSHAKE:
        if (apiKey === API_VERSIONS) return undefined;
        if (apiKey !== SASL_HANDSHAKE) return Promise.resolve(this.illegal(apiKey, 'during SASL handshake'));
        return Promise.resolve(this.handshake(frame, false));
      case State.AUTHENTICATE:
      case State.REAUTHENTICATE:
        if (apiKey !== SASL_AUTHENTICATE) return Promise.resolve(this.illegal(apiKey, 'during SASL authentication'));
        return Promise.resolve(this.authenticate(frame));
      case State.AUTHENTICATED: {
        const expired = this.expiresAt !== undefined && this.now() >= this.expiresAt;
        if (apiKey === SASL_HANDSHAKE && this.clientSupportsReauth && this.expiresAt !== undefined && !expired) {
          return Promise.resolve(this.handshake(frame, true));
        }
        if (expired) throw new CloseConnection(`SASL session of ${this.session?.user ?? '?'} expired (connections.max.reauth.ms) without re-authentication`);
        return undefined;
      }
      default: {
        const never: never = this.state;
        throw new CloseConnection(`unknown SASL state ${String(never)}`);
      }
    }
  }

  /** Clears the delayed close (the socket server closed the connection first). */
  dispose(): void {
    clearTimeout(this.closeTimer);
  }

  private decode<K extends 17 | 36>(frame: Buffer, apiKey: K): DecodedRequestOf<K> {
    const d = decodeRequest(frame);
    if (!d.ok) throw new CloseConnection(`undecodable ${apiKey === SASL_HANDSHAKE ? 'SaslHandshake' : 'SaslAuthenticate'} request (${d.error})`);
    return d as DecodedRequestOf<K>;
  }

  private illegal(apiKey: number, when: string): FrameResponse {
    return this.fail(`Unexpected Kafka request of type ${apiKey} ${when}.`, null);
  }

  private handshake(frame: Buffer, reauth: boolean): FrameResponse {
    const d = this.decode(frame, SASL_HANDSHAKE);
    const mechanism = d.body.mechanism;
    const enabled = [...this.o.settings.enabledMechanisms];
    const answer = (errorCode: number) => encodeResponse(SASL_HANDSHAKE, d.apiVersion, d.header.correlationId, { errorCode, mechanisms: enabled });
    if (reauth && mechanism !== this.session?.mechanism) {
      return this.fail(
        `SASL mechanism '${mechanism}' requested by client is not supported for re-authentication of mechanism '${this.session?.mechanism ?? ''}'`,
        answer(ErrorCode.UNSUPPORTED_SASL_MECHANISM),
      );
    }
    const server = createSaslServer(mechanism, this.o.settings, this.o.credentials);
    if (!server) return this.fail(`Unsupported SASL mechanism ${mechanism}`, answer(ErrorCode.UNSUPPORTED_SASL_MECHANISM));
    if (reauth && d.apiVersion === 0) return this.fail('Re-authentication needs SaslHandshake v1 or later', null);
    this.server = server;
    this.mechanism = mechanism;
    this.state = reauth ? State.REAUTHENTICATE : d.apiVersion === 0 ? State.RAW_TOKENS : State.AUTHENTICATE;
    this.log.debug({ mechanism, handshakeVersion: d.apiVersion, reauth }, 'SASL handshake');
    return answer(ErrorCode.NONE);
  }

  private authenticate(frame: Buffer): FrameResponse {
    const d = this.decode(frame, SASL_AUTHENTICATE);
    const respond = (errorCode: number, errorMessage: string | null, authBytes: Buffer, sessionLifetimeMs = 0n) =>
      encodeResponse(SASL_AUTHENTICATE, d.apiVersion, d.header.correlationId, { errorCode, errorMessage, authBytes, sessionLifetimeMs });
    let out: Buffer;
    try {
      out = this.server!.evaluate(d.body.authBytes);
    } catch (err) {
      const message = this.failureMessage(err);
      return this.fail(message, respond(ErrorCode.SASL_AUTHENTICATION_FAILED, message, Buffer.alloc(0)), err);
    }
    if (!this.server!.complete) return respond(ErrorCode.NONE, null, out);
    const reauth = this.state === State.REAUTHENTICATE;
    const problem = this.complete();
    if (problem) return this.fail(problem, respond(ErrorCode.SASL_AUTHENTICATION_FAILED, problem, Buffer.alloc(0)));
    if (!reauth) this.clientSupportsReauth = d.apiVersion >= 1;
    // v0 cannot carry it: such a client is just disconnected once the session is over
    const lifetime = this.expiresAt === undefined || d.apiVersion === 0 ? 0 : this.o.settings.reauthMs;
    return respond(ErrorCode.NONE, null, out, BigInt(lifetime));
  }

  private rawToken(token: Buffer): FrameResponse {
    let out: Buffer;
    try {
      out = this.server!.evaluate(token);
    } catch (err) {
      // no Kafka response exists in this mode: the connection is just closed
      return this.fail(this.failureMessage(err), null, err);
    }
    if (this.server!.complete) {
      const problem = this.complete();
      if (problem) return this.fail(problem, null);
    }
    const frame = Buffer.allocUnsafe(4 + out.length);
    frame.writeInt32BE(out.length, 0);
    out.copy(frame, 4);
    return frame;
  }

  /** The exchange completed: the session starts (or is renewed). Returns a failure reason, if any. */
  private complete(): string | undefined {
    const user = this.server!.authorizationId;
    const mechanism = this.mechanism!;
    if (this.session && this.session.user !== user) {
      return `Cannot change principals during re-authentication from User:${this.session.user}: User:${user}`;
    }
    const reauth = this.session !== undefined;
    this.session = { mechanism, user };
    this.conn.principal = userPrincipal(user);
    const reauthMs = this.o.settings.reauthMs;
    this.expiresAt = reauthMs > 0 ? this.now() + reauthMs : undefined;
    this.state = State.AUTHENTICATED;
    this.server = undefined;
    this.log.info(
      { user, mechanism, reauth, sessionLifetimeMs: reauthMs > 0 ? reauthMs : undefined },
      reauth ? 'SASL re-authentication succeeded' : 'SASL authentication succeeded',
    );
    return undefined;
  }

  private failureMessage(err: unknown): string {
    if (err instanceof SaslAuthenticationError) return err.message;
    return `Authentication failed during authentication due to invalid credentials with SASL mechanism ${this.mechanism ?? ''}`;
  }

  /** Authentication failed: answers `response` (if any) and closes the connection after the delay. */
  private fail(reason: string, response: FrameResponse, cause?: unknown): FrameResponse {
    this.state = State.FAILED;
    this.server = undefined;
    this.log.info(
      { mechanism: this.mechanism, reason, ...(cause instanceof Error && !(cause instanceof SaslAuthenticationError) ? { detail: cause.message } : {}) },
      'Failed authentication',
    );
    this.closeTimer = setTimeout(() => this.closeConnection(), this.o.settings.failedAuthDelayMs);
    return response;
  }
}

/**
 * The socket server's interceptor for a listener: a SaslServerAuthenticator per connection on
 * SASL_PLAINTEXT / SASL_SSL listeners, undefined on the others. Settings are read once per listener.
 */
export function saslInterceptorFor(
  config: BrokerConfig,
  listenerName: string,
  credentials: ScramCredentialCache,
  logger: Logger,
): ((conn: ConnectionInfo, close: () => void) => FrameInterceptor) | undefined {
  const protocol = config.securityProtocolMap[listenerName];
  if (!isSaslProtocol(protocol)) return undefined;
  const settings = listenerSaslSettings(config, listenerName);
  const log = logger.child({ component: 'sasl-authenticator', listener: listenerName });
  return (conn, close) => new SaslServerAuthenticator(conn, close, { settings, credentials, logger: log });
}
