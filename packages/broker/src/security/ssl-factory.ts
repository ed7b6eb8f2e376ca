/**
 * Kafka's SslFactory for Node: a listener's `ssl.*` settings (with Kafka's
 * `listener.name.<listener>.` prefix taking precedence, BrokerConfig.forListener) as Node TLS
 * options — the server side of an SSL / SASL_SSL listener and the client side of the connections
 * the broker makes to such listeners (replica fetchers, transaction markers, the controller's
 * control channel). Files are read once, at startup; anything missing, unreadable or unsupported
 * is a ConfigError naming the key.
 *
 * Key stores: PEM (`ssl.keystore.location`: the private key followed by the certificate chain, or
 * inline `ssl.keystore.key` + `ssl.keystore.certificate.chain`; an encrypted key takes
 * `ssl.key.password`) and PKCS12 (Node's `pfx`, `ssl.keystore.password`). Trust stores: PEM
 * (`ssl.truststore.location` or inline `ssl.truststore.certificates`); without one, Node's bundled
 * root CAs (Java's default trust store being the JVM's).
 */
import { readFileSync } from 'node:fs';
import { getCiphers, type ConnectionOptions, type SecureVersion, type TlsOptions } from 'node:tls';
import type { BrokerConfigName, BrokerConfigValue, SecurityProtocol } from '../config/definitions.js';
import { ConfigError } from '../config/errors.js';
import { SslPrincipalMapper } from './ssl-principal-mapper.js';

/** What the factory reads: a listener's view of the config (BrokerConfig satisfies it). */
export interface ListenerConfigSource {
  forListener<K extends BrokerConfigName>(listenerName: string, name: K): BrokerConfigValue<K>;
}

export type SslClientAuth = 'required' | 'requested' | 'none';

export interface ServerTls {
  /** For tls.createServer / new TLSSocket({ isServer: true }). */
  options: TlsOptions;
  clientAuth: SslClientAuth;
  /** ssl.principal.mapping.rules of the listener. */
  principalMapper: SslPrincipalMapper;
}

/** Whether a listener of this protocol speaks TLS. */
export function usesTls(protocol: SecurityProtocol | string | undefined): boolean {
  return protocol === 'SSL' || protocol === 'SASL_SSL';
}

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]+?-----END \1-----/g;

/** The PEM blocks of a text, by label (CERTIFICATE, PRIVATE KEY, ENCRYPTED PRIVATE KEY, ...). */
export function pemBlocks(text: string): Array<{ label: string; pem: string }> {
  return [...text.matchAll(PEM_BLOCK)].map((m) => ({ label: m[1]!, pem: `${m[0]}\n` }));
}

function readText(key: BrokerConfigName, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(key, `Failed to load SSL file ${path} (${key}): ${(err as Error).message}`, { cause: err });
  }
}

function readBytes(key: BrokerConfigName, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new ConfigError(key, `Failed to load SSL file ${path} (${key}): ${(err as Error).message}`, { cause: err });
  }
}

const isKey = (label: string) => label.endsWith('PRIVATE KEY');

/** The listener's key store as Node options (key + cert, or pfx), or undefined when none is configured. */
function keyStore(c: ListenerConfigSource, l: string): Pick<TlsOptions, 'key' | 'cert' | 'pfx' | 'passphrase'> | undefined {
  const type = c.forListener(l, 'ssl.keystore.type').toUpperCase();
  const location = c.forListener(l, 'ssl.keystore.location');
  const inlineKey = c.forListener(l, 'ssl.keystore.key')?.value;
  const inlineChain = c.forListener(l, 'ssl.keystore.certificate.chain')?.value;
  const storePassword = c.forListener(l, 'ssl.keystore.password')?.value;
  const keyPassword = c.forListener(l, 'ssl.key.password')?.value;
  if (location === null && inlineKey === undefined && inlineChain === undefined) return undefined;
  if (type === 'PKCS12') {
    if (location === null) throw new ConfigError('ssl.keystore.location', 'a PKCS12 key store needs ssl.keystore.location');
    const passphrase = keyPassword ?? storePassword;
    return { pfx: readBytes('ssl.keystore.location', location), ...(passphrase !== undefined ? { passphrase } : {}) };
  }
  if (type !== 'PEM') {
    throw new ConfigError('ssl.keystore.type', `ssl.keystore.type=${type} is not supported: Samsa reads PEM and PKCS12 key stores (set ssl.keystore.type=PEM)`);
  }
  if (storePassword !== undefined) {
    throw new ConfigError('ssl.keystore.password', 'SSL key store password cannot be specified with PEM format, only key password may be specified');
  }
  let text: string;
  let source: BrokerConfigName;
  if (inlineKey !== undefined || inlineChain !== undefined) {
    if (location !== null)
      throw new ConfigError('ssl.keystore.key', 'Both ssl.keystore.location and ssl.keystore.key/ssl.keystore.certificate.chain are set; use one');
    if (inlineKey === undefined) throw new ConfigError('ssl.keystore.key', 'ssl.keystore.certificate.chain needs ssl.keystore.key');
    if (inlineChain === undefined) throw new ConfigError('ssl.keystore.certificate.chain', 'ssl.keystore.key needs ssl.keystore.certificate.chain');
    text = `${inlineKey}\n${inlineChain}`;
    source = 'ssl.keystore.key';
  } else {
    text = readText('ssl.keystore.location', location!);
    source = 'ssl.keystore.location';
  }
  const blocks = pemBlocks(text);
  const keys = blocks.filter((b) => isKey(b.label));
  const certs = blocks.filter((b) => b.label === 'CERTIFICATE');
  if (keys.length !== 1) throw new ConfigError(source, `the PEM key store must hold exactly one private key, found ${keys.length}`);
  if (certs.length === 0)
    throw new ConfigError(source === 'ssl.keystore.key' ? 'ssl.keystore.certificate.chain' : source, 'the PEM key store holds no certificate');
  if (keys[0]!.label === 'ENCRYPTED PRIVATE KEY' && keyPassword === undefined) {
    throw new ConfigError('ssl.key.password', 'the PEM private key is encrypted: set ssl.key.password');
  }
  return { key: keys[0]!.pem, cert: certs.map((b) => b.pem).join(''), ...(keyPassword !== undefined ? { passphrase: keyPassword } : {}) };
}

/** The listener's trusted certificates (PEM), or undefined for Node's default CAs. */
function trustStore(c: ListenerConfigSource, l: string): string[] | undefined {
  const type = c.forListener(l, 'ssl.truststore.type').toUpperCase();
  const location = c.forListener(l, 'ssl.truststore.location');
  const inline = c.forListener(l, 'ssl.truststore.certificates')?.value;
  if (location === null && inline === undefined) return undefined;
  if (type !== 'PEM') {
    throw new ConfigError('ssl.truststore.type', `ssl.truststore.type=${type} is not supported: Samsa reads PEM trust stores (set ssl.truststore.type=PEM)`);
  }
  if (c.forListener(l, 'ssl.truststore.password') !== null) {
    throw new ConfigError('ssl.truststore.password', 'SSL trust store password cannot be specified for PEM format');
  }
  if (location !== null && inline !== undefined) {
    throw new ConfigError('ssl.truststore.certificates', 'Both ssl.truststore.location and ssl.truststore.certificates are set; use one');
  }
  const key: BrokerConfigName = location !== null ? 'ssl.truststore.location' : 'ssl.truststore.certificates';
  const certs = pemBlocks(location !== null ? readText(key, location) : inline!).filter((b) => b.label === 'CERTIFICATE');
  if (certs.length === 0) throw new ConfigError(key, 'the PEM trust store holds no certificate');
  return certs.map((b) => b.pem);
}

const VERSIONS: readonly SecureVersion[] = ['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'];

function protocolRange(c: ListenerConfigSource, l: string, clientSide: boolean): { minVersion: SecureVersion; maxVersion: SecureVersion } {
  const enabled = c.forListener(l, 'ssl.enabled.protocols');
  const idx = enabled.map((p) => VERSIONS.indexOf(p as SecureVersion)).filter((i) => i >= 0);
  if (idx.length === 0) throw new ConfigError('ssl.enabled.protocols', 'no TLS protocol enabled');
  let max = Math.max(...idx);
  if (clientSide) {
    // a context of ssl.protocol offers no newer version (Kafka's note on TLSv1.2 clients)
    const cap = VERSIONS.indexOf(c.forListener(l, 'ssl.protocol') as SecureVersion);
    if (cap >= 0) max = Math.min(max, cap);
  }
  return { minVersion: VERSIONS[Math.min(...idx)]!, maxVersion: VERSIONS[Math.max(max, Math.min(...idx))]! };
}

/**
 * A cipher suite name as OpenSSL knows it: TLS 1.3 suites keep their IANA names; TLS 1.2 IANA/Java
 * names (TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256) become OpenSSL's (ECDHE-RSA-AES128-GCM-SHA256);
 * OpenSSL names pass through.
 */
export function opensslCipherName(name: string): string {
  const m = /^(?:TLS|SSL)_(.+?)_WITH_(.+)$/.exec(name);
  if (!m) return name;
  const kx = m[1] === 'RSA' ? '' : `${m[1]!.replace(/_/g, '-')}-`;
  const enc = m[2]!
    .replace(/^AES_(\d+)_GCM_(SHA\d+)$/, 'AES$1-GCM-$2')
    .replace(/^AES_(\d+)_CBC_SHA$/, 'AES$1-SHA')
    .replace(/^AES_(\d+)_CBC_(SHA\d+)$/, 'AES$1-$2')
    .replace(/^CHACHA20_POLY1305_SHA256$/, 'CHACHA20-POLY1305');
  return `${kx}${enc}`;
}

function ciphers(c: ListenerConfigSource, l: string): string | undefined {
  const suites = c.forListener(l, 'ssl.cipher.suites') ?? [];
  if (suites.length === 0) return undefined;
  const known = new Set(getCiphers().map((x) => x.toUpperCase()));
  const names = suites.map((s) => {
    const n = opensslCipherName(s.trim());
    if (!known.has(n.toUpperCase())) throw new ConfigError('ssl.cipher.suites', `unknown cipher suite ${s}`);
    return n;
  });
  return names.join(':');
}

/** The server side of an SSL / SASL_SSL listener. */
export function serverTls(c: ListenerConfigSource, listener: string): ServerTls {
  const ks = keyStore(c, listener);
  if (!ks) {
    throw new ConfigError(
      'ssl.keystore.location',
      `listener ${listener} serves TLS but has no key store: set ssl.keystore.type=PEM and ssl.keystore.location (or ssl.keystore.key and ssl.keystore.certificate.chain)`,
    );
  }
  const ca = trustStore(c, listener);
  const clientAuth = c.forListener(listener, 'ssl.client.auth') as SslClientAuth;
  const suites = ciphers(c, listener);
  return {
    options: {
      ...ks,
      ...(ca ? { ca } : {}),
      ...protocolRange(c, listener, false),
      ...(suites ? { ciphers: suites } : {}),
      requestCert: clientAuth !== 'none',
      // 'requested': a connection without a certificate is served (User:ANONYMOUS); one with an
      // untrusted certificate is closed by the socket server, as Java's handshake fails it
      rejectUnauthorized: clientAuth === 'required',
    },
    clientAuth,
    principalMapper: new SslPrincipalMapper(c.forListener(listener, 'ssl.principal.mapping.rules')),
  };
}

/**
 * The client side towards a peer's `listener` (inter-broker, control plane): the trust store, the
 * broker's own key store (presented when the peer asks for a certificate), and host-name
 * verification unless ssl.endpoint.identification.algorithm is empty.
 */
export function clientTls(c: ListenerConfigSource, listener: string): ConnectionOptions {
  const ks = keyStore(c, listener);
  const ca = trustStore(c, listener);
  const algorithm = (c.forListener(listener, 'ssl.endpoint.identification.algorithm') ?? '').trim();
  if (algorithm !== '' && algorithm.toLowerCase() !== 'https') {
    throw new ConfigError('ssl.endpoint.identification.algorithm', `unsupported endpoint identification algorithm ${algorithm} (https, or empty for none)`);
  }
  const suites = ciphers(c, listener);
  return {
    ...(ks ?? {}),
    ...(ca ? { ca } : {}),
    ...protocolRange(c, listener, true),
    ...(suites ? { ciphers: suites } : {}),
    rejectUnauthorized: true,
    ...(algorithm === '' ? { checkServerIdentity: () => undefined } : {}),
  };
}
