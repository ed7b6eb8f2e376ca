/**
 * Test and local-cluster certificates: a CA, a broker certificate (SAN localhost and 127.0.0.1 by
 * default; usable as server and as client, for inter-broker mutual TLS) and client certificates
 * with a given subject DN, made with Debian's `openssl` into a directory. Keys are P-256 in PKCS#8
 * PEM ("BEGIN PRIVATE KEY"), the form Kafka's `ssl.keystore.type=PEM` reads; each keystore file
 * holds the private key followed by the certificate chain, as Kafka's PEM key stores do.
 */
import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface CertificateOptions {
  /** Directory the files go to (created if needed). */
  dir: string;
  /** Subject alternative names of the broker certificate. Default `['localhost', '127.0.0.1']`. */
  brokerHosts?: readonly string[];
  /** Client certificates to make, by file name prefix → subject DN in RFC 2253 form (`CN=alice,OU=eng,O=Samsa`). Default `{ client: 'CN=client,O=Samsa' }`. */
  clients?: Readonly<Record<string, string>>;
  /** Days the certificates are valid. Default 3650. */
  days?: number;
}

export interface KeyPairFiles {
  /** The certificate (PEM). */
  cert: string;
  /** The private key (PKCS#8 PEM, unencrypted). */
  key: string;
  /** Kafka's PEM key store: the private key, then the certificate chain (certificate, then the CA). */
  keystore: string;
}

export interface GeneratedCertificates {
  dir: string;
  /** The CA certificate (PEM): Kafka's `ssl.truststore.location` with `ssl.truststore.type=PEM`. */
  caCert: string;
  caKey: string;
  broker: KeyPairFiles;
  /** By the names given in `clients`. */
  clients: Record<string, KeyPairFiles>;
}

/** `CN=alice,OU=eng,O=Samsa` → openssl's `-subj` form `/O=Samsa/OU=eng/CN=alice` (RFC 2253 lists the last RDN first). */
export function opensslSubject(rfc2253: string): string {
  const rdns = rfc2253
    .split(/(?<!\\),/)
    .map((s) => s.trim())
    .filter(Boolean);
  return `/${rdns
    .reverse()
    .map((r) => r.replace(/\\,/g, ',').replace(/\//g, '\\/'))
    .join('/')}`;
}

async function openssl(args: string[], cwd: string): Promise<void> {
  try {
    await run('openssl', args, { cwd });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`openssl ${args[0]} failed: ${e.stderr?.trim() || e.message}`, { cause: err });
  }
}

async function newKey(file: string, cwd: string): Promise<void> {
  await openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', file], cwd);
}

async function signed(name: string, subject: string, extensions: string, o: { cwd: string; days: number }): Promise<KeyPairFiles> {
  const key = join(o.cwd, `${name}.key`);
  const cert = join(o.cwd, `${name}.crt`);
  const keystore = join(o.cwd, `${name}.keystore.pem`);
  await newKey(key, o.cwd);
  await openssl(['req', '-new', '-key', key, '-subj', opensslSubject(subject), '-out', `${name}.csr`], o.cwd);
  await writeFile(join(o.cwd, `${name}.ext`), extensions);
  await openssl(
    [
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      String(o.days),
      '-sha256',
      '-extfile',
      `${name}.ext`,
      '-out',
      cert,
    ],
    o.cwd,
  );
  const [k, c, ca] = await Promise.all([readFile(key, 'utf8'), readFile(cert, 'utf8'), readFile(join(o.cwd, 'ca.crt'), 'utf8')]);
  await writeFile(keystore, k + c + ca, { mode: 0o600 });
  return { cert, key, keystore };
}

/** Makes a CA, a broker certificate and client certificates in `o.dir` (see the module comment). */
export async function generateCertificates(o: CertificateOptions): Promise<GeneratedCertificates> {
  const dir = resolve(o.dir);
  await mkdir(dir, { recursive: true });
  const days = o.days ?? 3650;
  await newKey('ca.key', dir);
  await openssl(
    [
      'req',
      '-x509',
      '-new',
      '-key',
      'ca.key',
      '-subj',
      '/O=Samsa/CN=Samsa Test CA',
      '-days',
      String(days),
      '-sha256',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
      '-out',
      'ca.crt',
    ],
    dir,
  );
  const hosts = o.brokerHosts ?? ['localhost', '127.0.0.1'];
  const san = hosts.map((h) => (/^[\d.]+$|:/.test(h) ? `IP:${h}` : `DNS:${h}`)).join(',');
  const broker = await signed('broker', `CN=${hosts[0] ?? 'localhost'},O=Samsa`, `subjectAltName=${san}\nextendedKeyUsage=serverAuth,clientAuth\n`, {
    cwd: dir,
    days,
  });
  const clients: Record<string, KeyPairFiles> = {};
  for (const [name, dn] of Object.entries(o.clients ?? { client: 'CN=client,O=Samsa' })) {
    clients[name] = await signed(name, dn, 'extendedKeyUsage=clientAuth\n', { cwd: dir, days });
  }
  return { dir, caCert: join(dir, 'ca.crt'), caKey: join(dir, 'ca.key'), broker, clients };
}
