/**
 * The security settings of a Kafka client properties file (--command-config, --producer.config,
 * --consumer.config), as Kafka's tools take them: `security.protocol`, `ssl.*` (PEM trust and key
 * stores, files or inline; PKCS12 key stores) and `sasl.mechanism` + `sasl.jaas.config`
 * (PlainLoginModule / ScramLoginModule with username and password). They become our client's
 * `tls` and `sasl` connection options.
 */
import { readFileSync } from 'node:fs';
import type { ConnectionOptions as TlsConnectionOptions } from 'node:tls';
import { parseSingleJaasEntry } from '@samsa/server-common';

export const CLIENT_SASL_MECHANISMS = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'] as const;
export type ClientSaslMechanism = (typeof CLIENT_SASL_MECHANISMS)[number];

export interface ClientSaslOptions {
  mechanism: ClientSaslMechanism;
  username: string;
  password: string;
}

export interface ClientSecurityOptions {
  tls?: TlsConnectionOptions;
  sasl?: ClientSaslOptions;
}

/** A security setting the client cannot take (Kafka: ConfigException). */
export class ClientSecurityConfigError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ClientSecurityConfigError';
  }
}

const PROTOCOLS = ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'] as const;

/**
 * The `tls` / `sasl` options for the properties `p` (none for PLAINTEXT). `read` reads the files
 * the properties name (trust store, key store; default: their bytes from disk). Throws
 * ClientSecurityConfigError.
 */
export function clientSecurityFromProperties(
  p: Readonly<Record<string, string>>,
  read: (path: string) => string | Buffer = (path) => readFileSync(path),
): ClientSecurityOptions {
  const protocol = (p['security.protocol'] ?? 'PLAINTEXT').trim().toUpperCase();
  if (!(PROTOCOLS as readonly string[]).includes(protocol)) {
    throw new ClientSecurityConfigError(
      `Invalid value ${p['security.protocol']} for configuration security.protocol: String must be one of: ${PROTOCOLS.join(', ')}`,
    );
  }
  const out: ClientSecurityOptions = {};
  // Kafka's SSL engine factory: a store that cannot be read is a configuration error
  const readStore = (path: string): string | Buffer => {
    try {
      return read(path);
    } catch (err) {
      throw new ClientSecurityConfigError(`Failed to load SSL store ${path}: ${(err as Error).message}`, { cause: err });
    }
  };
  if (protocol === 'SSL' || protocol === 'SASL_SSL') out.tls = tlsOptions(p, readStore);
  if (protocol === 'SASL_PLAINTEXT' || protocol === 'SASL_SSL') out.sasl = saslOptions(p);
  return out;
}

function tlsOptions(p: Readonly<Record<string, string>>, read: (path: string) => string | Buffer): TlsConnectionOptions {
  const o: TlsConnectionOptions = {};
  const trustType = (p['ssl.truststore.type'] ?? 'PEM').toUpperCase();
  const trustFile = p['ssl.truststore.location'];
  const trustInline = p['ssl.truststore.certificates'];
  if (trustFile !== undefined || trustInline !== undefined) {
    if (trustType !== 'PEM') {
      throw new ClientSecurityConfigError(
        `ssl.truststore.type ${trustType} is not supported by this client; use PEM (ssl.truststore.location of a PEM file or ssl.truststore.certificates)`,
      );
    }
    o.ca = trustInline ?? read(trustFile as string);
  }
  const keyType = (p['ssl.keystore.type'] ?? 'PEM').toUpperCase();
  const keyFile = p['ssl.keystore.location'];
  const keyPassword = p['ssl.key.password'] ?? p['ssl.keystore.password'];
  if (keyType === 'PKCS12') {
    if (keyFile !== undefined) {
      o.pfx = read(keyFile);
      if (p['ssl.keystore.password'] !== undefined) o.passphrase = p['ssl.keystore.password'];
    }
  } else if (keyType === 'PEM') {
    if (p['ssl.keystore.key'] !== undefined || p['ssl.keystore.certificate.chain'] !== undefined) {
      if (p['ssl.keystore.key'] === undefined || p['ssl.keystore.certificate.chain'] === undefined) {
        throw new ClientSecurityConfigError('ssl.keystore.key and ssl.keystore.certificate.chain must be set together');
      }
      o.key = p['ssl.keystore.key'];
      o.cert = p['ssl.keystore.certificate.chain'];
    } else if (keyFile !== undefined) {
      // Kafka's PEM key store file: the private key and the certificate chain in one file
      const pem = read(keyFile);
      o.key = pem;
      o.cert = pem;
    }
    if (keyPassword !== undefined && (o.key !== undefined || o.pfx !== undefined)) o.passphrase = keyPassword;
  } else {
    throw new ClientSecurityConfigError(`ssl.keystore.type ${keyType} is not supported by this client; use PEM or PKCS12`);
  }
  // Kafka's default `https` checks the broker's host name against its certificate; empty disables it
  const identification = p['ssl.endpoint.identification.algorithm'];
  if (identification !== undefined && identification.trim() === '') o.checkServerIdentity = () => undefined;
  const protocols = p['ssl.enabled.protocols'];
  if (protocols !== undefined) {
    const list = protocols.split(',').map((s) => s.trim());
    if (list.includes('TLSv1.2') && !list.includes('TLSv1.3')) o.maxVersion = 'TLSv1.2';
    if (list.includes('TLSv1.3') && !list.includes('TLSv1.2')) o.minVersion = 'TLSv1.3';
  }
  return o;
}

function saslOptions(p: Readonly<Record<string, string>>): ClientSaslOptions {
  const mechanism = (p['sasl.mechanism'] ?? 'GSSAPI').trim().toUpperCase();
  if (!(CLIENT_SASL_MECHANISMS as readonly string[]).includes(mechanism)) {
    throw new ClientSecurityConfigError(`sasl.mechanism ${mechanism} is not supported by this client; use one of ${CLIENT_SASL_MECHANISMS.join(', ')}`);
  }
  const jaas = p['sasl.jaas.config'];
  if (jaas === undefined) {
    throw new ClientSecurityConfigError(
      `Could not find a 'KafkaClient' entry in the JAAS configuration. System property 'java.security.auth.login.config' is not set (set sasl.jaas.config)`,
    );
  }
  let entry;
  try {
    entry = parseSingleJaasEntry(jaas);
  } catch (err) {
    throw new ClientSecurityConfigError(`Invalid sasl.jaas.config: ${(err as Error).message}`, { cause: err });
  }
  const username = entry.options['username'];
  const password = entry.options['password'];
  if (username === undefined || password === undefined) {
    throw new ClientSecurityConfigError(`sasl.jaas.config for ${mechanism} needs username and password options`);
  }
  return { mechanism: mechanism as ClientSaslMechanism, username, password };
}
