/**
 * The broker side of SCRAM-SHA-256/512 (RFC 5802, RFC 7677), as Kafka's ScramSaslServer:
 * client-first → server-first (client nonce + ours, the user's salt and iterations), client-final →
 * the proof is checked against the stored key (ClientProof xor ClientSignature must hash to
 * StoredKey), then server-final with the ServerSignature. Credentials come from the broker's cache
 * of /config/users; iteration counts under the mechanism's minimum are refused.
 */
import { timingSafeEqual } from 'node:crypto';
import { SaslAuthenticationError, SaslError, type SaslServer } from './sasl-server.js';
import { decodeSaslName, hash, hmac, scramNonce, xor, type ScramCredential, type ScramMechanismInfo } from './scram.js';

/** `n,[a=<authzid>],n=<saslname>,r=<nonce>[,<extensions>]` (Kafka accepts only the `n` gs2 flag). */
const CLIENT_FIRST = /^n,(?:a=([^,]*))?,(n=([^,]*),r=([^,]+)(?:,[A-Za-z]=[^,]*)*)$/;
/** `c=<b64>,r=<nonce>[,<extensions>],p=<b64>`. */
const CLIENT_FINAL = /^(c=([A-Za-z0-9+/=]*),r=([^,]+)(?:,[A-Za-z]=[^,]*)*),p=([A-Za-z0-9+/=]+)$/;

const State = { CLIENT_FIRST: 'client-first', CLIENT_FINAL: 'client-final', COMPLETE: 'complete', FAILED: 'failed' } as const;
type State = (typeof State)[keyof typeof State];

export class ScramSaslServer implements SaslServer {
  readonly mechanism: string;
  authorizationId = '';
  private state: State = State.CLIENT_FIRST;
  private credential: ScramCredential | undefined;
  private gs2Header = '';
  private clientFirstBare = '';
  private serverFirst = '';
  private nonce = '';

  constructor(
    private readonly m: ScramMechanismInfo,
    private readonly credentials: (username: string) => ScramCredential | undefined,
    private readonly makeNonce: () => string = scramNonce,
  ) {
    this.mechanism = m.mechanismName;
  }

  get complete(): boolean {
    return this.state === State.COMPLETE;
  }

  evaluate(token: Buffer): Buffer {
    try {
      switch (this.state) {
        case State.CLIENT_FIRST:
          return this.clientFirst(token.toString('utf8'));
        case State.CLIENT_FINAL:
          return this.clientFinal(token.toString('utf8'));
        default:
          throw new SaslError(`Unexpected SCRAM message in state ${this.state}`);
      }
    } catch (err) {
      this.state = State.FAILED;
      throw err;
    }
  }

  private clientFirst(msg: string): Buffer {
    const m = CLIENT_FIRST.exec(msg);
    if (!m) throw new SaslError('Invalid SCRAM client first message format');
    const [, authzid, bare, saslName, clientNonce] = m as unknown as [string, string | undefined, string, string, string];
    const username = decodeSaslName(saslName);
    if (username === undefined || username === '') throw new SaslError('Invalid SCRAM username');
    if (authzid !== undefined && authzid !== '' && decodeSaslName(authzid) !== username) {
      throw new SaslAuthenticationError('Authentication failed: Client requested an authorization id that is different from username');
    }
    const credential = this.credentials(username);
    if (!credential) throw new SaslError('Authentication failed: Invalid user credentials');
    if (credential.iterations < this.m.minIterations) {
      throw new SaslError(`Iterations ${credential.iterations} is less than the minimum ${this.m.minIterations} for ${this.m.mechanismName}`);
    }
    this.authorizationId = username;
    this.credential = credential;
    this.gs2Header = msg.slice(0, msg.length - bare.length);
    this.clientFirstBare = bare;
    this.nonce = clientNonce + this.makeNonce();
    this.serverFirst = `r=${this.nonce},s=${credential.salt.toString('base64')},i=${credential.iterations}`;
    this.state = State.CLIENT_FINAL;
    return Buffer.from(this.serverFirst, 'utf8');
  }

  private clientFinal(msg: string): Buffer {
    const m = CLIENT_FINAL.exec(msg);
    if (!m) throw new SaslError('Invalid SCRAM client final message format');
    const [, withoutProof, channelBinding, nonce, proofB64] = m as unknown as [string, string, string, string, string];
    // Kafka checks only that it ends with ours: librdkafka sends its own nonce before the server's
    if (!nonce.endsWith(this.nonce)) throw new SaslError('Invalid client nonce in the final client message.');
    if (Buffer.from(channelBinding, 'base64').toString('utf8') !== this.gs2Header) throw new SaslError('Invalid channel binding in the final client message.');
    const c = this.credential!;
    const authMessage = `${this.clientFirstBare},${this.serverFirst},${withoutProof}`;
    const proof = Buffer.from(proofB64, 'base64');
    const clientSignature = hmac(this.m, c.storedKey, authMessage);
    if (proof.length !== clientSignature.length) throw new SaslError('Invalid client credentials');
    const computedStoredKey = hash(this.m, xor(proof, clientSignature));
    if (computedStoredKey.length !== c.storedKey.length || !timingSafeEqual(computedStoredKey, c.storedKey)) throw new SaslError('Invalid client credentials');
    this.state = State.COMPLETE;
    return Buffer.from(`v=${hmac(this.m, c.serverKey, authMessage).toString('base64')}`, 'utf8');
  }
}
