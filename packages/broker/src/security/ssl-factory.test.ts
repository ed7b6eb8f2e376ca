import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, createSecureContext, createServer } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCertificates, type GeneratedCertificates } from '@samsa/local-cluster';
import { buildBrokerConfig } from '../config/broker-config.js';
import { ConfigError } from '../config/errors.js';
import { brokerTls } from './broker-tls.js';
import { clientTls, opensslCipherName, pemBlocks, serverTls } from './ssl-factory.js';

const ZK = { 'zookeeper.connect': '127.0.0.1:2181' };
const cfg = (p: Record<string, string>) => buildBrokerConfig({ properties: { ...ZK, ...p } });
let certs: GeneratedCertificates;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'samsa-ssl-factory-'));
  certs = await generateCertificates({ dir, clients: { alice: 'CN=alice,OU=eng,O=Samsa' } });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const pemKeystore = () => ({
  'ssl.keystore.type': 'PEM',
  'ssl.keystore.location': certs.broker.keystore,
  'ssl.truststore.type': 'PEM',
  'ssl.truststore.location': certs.caCert,
});

/** The config error a function throws (its key and message). */
function configError(f: () => unknown): ConfigError {
  try {
    f();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('no ConfigError thrown');
}

describe('ssl factory', () => {
  it("ssl factory – a PEM key store file (Kafka's: private key, then the chain) and a PEM trust store make a server context Node accepts", () => {
    const s = serverTls(cfg(pemKeystore()), 'SSL');
    expect(pemBlocks(String(s.options.key)).map((b) => b.label)).toEqual(['PRIVATE KEY']);
    expect(pemBlocks(String(s.options.cert)).map((b) => b.label)).toEqual(['CERTIFICATE', 'CERTIFICATE']);
    expect(s.options.ca).toHaveLength(1);
    expect(s.clientAuth).toBe('none');
    expect(s.options).toMatchObject({ requestCert: false, rejectUnauthorized: false, minVersion: 'TLSv1.2', maxVersion: 'TLSv1.3' });
    expect(() => createSecureContext(s.options)).not.toThrow();
  });

  it('ssl factory – inline PEM (KIP-651): ssl.keystore.key + ssl.keystore.certificate.chain and ssl.truststore.certificates', () => {
    const s = serverTls(
      cfg({
        'ssl.keystore.type': 'PEM',
        'ssl.keystore.key': readFileSync(certs.broker.key, 'utf8'),
        'ssl.keystore.certificate.chain': readFileSync(certs.broker.cert, 'utf8'),
        'ssl.truststore.type': 'PEM',
        'ssl.truststore.certificates': readFileSync(certs.caCert, 'utf8'),
      }),
      'SSL',
    );
    expect(() => createSecureContext(s.options)).not.toThrow();
    expect(s.options.ca).toHaveLength(1);
  });

  it('ssl factory – ssl.client.auth: required rejects unauthorized peers, requested asks without requiring, per listener with listener.name.<l>.', () => {
    const c = cfg({ ...pemKeystore(), 'ssl.client.auth': 'requested', 'listener.name.internal.ssl.client.auth': 'required' });
    expect(serverTls(c, 'SSL').options).toMatchObject({ requestCert: true, rejectUnauthorized: false });
    expect(serverTls(c, 'INTERNAL').options).toMatchObject({ requestCert: true, rejectUnauthorized: true });
    expect(serverTls(c, 'INTERNAL').clientAuth).toBe('required');
  });

  it('ssl factory – an encrypted PEM key needs ssl.key.password, and works with it', () => {
    const enc = join(dir, 'enc.keystore.pem');
    const encKey = execFileSync('openssl', ['pkcs8', '-topk8', '-in', certs.broker.key, '-passout', 'pass:k3y', '-v2', 'aes-256-cbc'], { encoding: 'utf8' });
    writeFileSync(enc, encKey + readFileSync(certs.broker.cert, 'utf8'));
    const props = { 'ssl.keystore.type': 'PEM', 'ssl.keystore.location': enc };
    expect(configError(() => serverTls(cfg(props), 'SSL')).key).toBe('ssl.key.password');
    const s = serverTls(cfg({ ...props, 'ssl.key.password': 'k3y' }), 'SSL');
    expect(() => createSecureContext(s.options)).not.toThrow();
  });

  it('ssl factory – a PKCS12 key store is served through Node pfx with ssl.keystore.password', () => {
    const p12 = join(dir, 'broker.p12');
    execFileSync('openssl', ['pkcs12', '-export', '-inkey', certs.broker.key, '-in', certs.broker.cert, '-passout', 'pass:st0re', '-out', p12]);
    const s = serverTls(cfg({ 'ssl.keystore.type': 'PKCS12', 'ssl.keystore.location': p12, 'ssl.keystore.password': 'st0re' }), 'SSL');
    expect(s.options.pfx).toBeInstanceOf(Buffer);
    expect(() => createSecureContext(s.options)).not.toThrow();
  });

  it('ssl factory – startup errors name the key: JKS stores, missing files, no key store, PEM with a store password, both location and inline', () => {
    expect(configError(() => serverTls(cfg({ 'ssl.keystore.location': certs.broker.keystore }), 'SSL'))).toMatchObject({
      key: 'ssl.keystore.type',
      message: expect.stringContaining('ssl.keystore.type=JKS is not supported'),
    });
    const missing = configError(() => serverTls(cfg({ ...pemKeystore(), 'ssl.keystore.location': '/nonexistent/ks.pem' }), 'SSL'));
    expect(missing.key).toBe('ssl.keystore.location');
    expect(missing.message).toContain('/nonexistent/ks.pem');
    expect(missing.cause).toBeInstanceOf(Error);
    expect(configError(() => serverTls(cfg({ ...pemKeystore(), 'ssl.truststore.location': '/nonexistent/ca.pem' }), 'SSL')).key).toBe(
      'ssl.truststore.location',
    );
    expect(configError(() => serverTls(cfg({}), 'SSL')).message).toContain('listener SSL serves TLS but has no key store');
    expect(configError(() => serverTls(cfg({ ...pemKeystore(), 'ssl.keystore.password': 'x' }), 'SSL')).key).toBe('ssl.keystore.password');
    expect(configError(() => serverTls(cfg({ ...pemKeystore(), 'ssl.truststore.type': 'JKS' }), 'SSL')).key).toBe('ssl.truststore.type');
    expect(configError(() => serverTls(cfg({ ...pemKeystore(), 'ssl.keystore.key': 'x' }), 'SSL')).key).toBe('ssl.keystore.key');
    expect(configError(() => serverTls(cfg({ ...pemKeystore(), 'ssl.principal.mapping.rules': 'RULE:x' }), 'SSL')).key).toBe('ssl.principal.mapping.rules');
  });

  it('ssl factory – the broker fails at startup (brokerTls) on an SSL listener without a key store, PLAINTEXT-only needs none', () => {
    const listeners = {
      listeners: 'SSL://127.0.0.1:0,CONTROLLER://127.0.0.1:0',
      'listener.security.protocol.map': 'SSL:SSL,CONTROLLER:PLAINTEXT',
      'security.inter.broker.protocol': 'SSL',
    };
    expect(configError(() => brokerTls(cfg(listeners))).key).toBe('ssl.keystore.location');
    const t = brokerTls(cfg({ ...listeners, ...pemKeystore() }));
    expect([...t.servers.keys()]).toEqual(['SSL']);
    expect(t.interBroker?.ca).toHaveLength(1);
    expect(brokerTls(cfg({ listeners: 'PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:0' })).servers.size).toBe(0);
  });

  it('ssl factory – client side: trust store, own key store for mutual TLS, host-name check unless ssl.endpoint.identification.algorithm is empty', () => {
    const c = clientTls(cfg(pemKeystore()), 'SSL');
    expect(c.ca).toHaveLength(1);
    expect(c.key).toContain('PRIVATE KEY');
    expect(c.rejectUnauthorized).toBe(true);
    expect(c.checkServerIdentity).toBeUndefined();
    const off = clientTls(cfg({ ...pemKeystore(), 'ssl.endpoint.identification.algorithm': '' }), 'SSL');
    expect(off.checkServerIdentity?.('wrong.host', {} as never)).toBeUndefined();
    expect(clientTls(cfg({}), 'SSL').ca).toBeUndefined();
  });

  it('ssl factory – protocols: ssl.enabled.protocols bounds both sides, ssl.protocol caps what the client offers', () => {
    expect(serverTls(cfg({ ...pemKeystore(), 'ssl.enabled.protocols': 'TLSv1.3' }), 'SSL').options).toMatchObject({
      minVersion: 'TLSv1.3',
      maxVersion: 'TLSv1.3',
    });
    expect(clientTls(cfg({ 'ssl.protocol': 'TLSv1.2' }), 'SSL')).toMatchObject({ minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2' });
    expect(serverTls(cfg({ ...pemKeystore(), 'ssl.protocol': 'TLSv1.2' }), 'SSL').options.maxVersion).toBe('TLSv1.3');
  });

  it("ssl factory – ssl.cipher.suites take Java/IANA names (as OpenSSL's) and refuse unknown ones", () => {
    expect(opensslCipherName('TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256')).toBe('ECDHE-RSA-AES128-GCM-SHA256');
    expect(opensslCipherName('TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384')).toBe('ECDHE-ECDSA-AES256-GCM-SHA384');
    expect(opensslCipherName('TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256')).toBe('ECDHE-RSA-CHACHA20-POLY1305');
    expect(opensslCipherName('TLS_RSA_WITH_AES_128_CBC_SHA')).toBe('AES128-SHA');
    expect(opensslCipherName('TLS_AES_128_GCM_SHA256')).toBe('TLS_AES_128_GCM_SHA256');
    const s = serverTls(cfg({ ...pemKeystore(), 'ssl.cipher.suites': 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_AES_128_GCM_SHA256' }), 'SSL');
    expect(s.options.ciphers).toBe('ECDHE-ECDSA-AES128-GCM-SHA256:TLS_AES_128_GCM_SHA256');
    expect(() => createSecureContext(s.options)).not.toThrow();
    expect(configError(() => serverTls(cfg({ ...pemKeystore(), 'ssl.cipher.suites': 'TLS_FOO_WITH_BAR' }), 'SSL')).key).toBe('ssl.cipher.suites');
  });
});

describe('ssl factory handshakes', () => {
  it('ssl factory – client side against a real TLS server: https checks the host name (SAN), an empty algorithm does not; the CA must be trusted', async () => {
    const named = await generateCertificates({ dir: join(dir, 'named'), brokerHosts: ['broker.example'] });
    const server = createServer(serverTls(cfg({ 'ssl.keystore.type': 'PEM', 'ssl.keystore.location': named.broker.keystore }), 'SSL').options, (s) => s.end());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as { port: number }).port;
    const trust = { 'ssl.truststore.type': 'PEM', 'ssl.truststore.location': named.caCert };
    const attempt = (props: Record<string, string>) =>
      new Promise<string>((resolve) => {
        const s = connect({ ...clientTls(cfg(props), 'SSL'), host: '127.0.0.1', port });
        s.once('secureConnect', () => {
          s.destroy();
          resolve('ok');
        });
        s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
      });
    try {
      expect(await attempt(trust)).toBe('ERR_TLS_CERT_ALTNAME_INVALID');
      expect(await attempt({ ...trust, 'ssl.endpoint.identification.algorithm': '' })).toBe('ok');
      // another CA's trust store: the certificate chain is not trusted, with or without the host-name check
      expect(await attempt({ 'ssl.truststore.type': 'PEM', 'ssl.truststore.location': certs.caCert, 'ssl.endpoint.identification.algorithm': '' })).toMatch(
        /UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED|UNABLE_TO_GET_ISSUER/,
      );
    } finally {
      server.close();
    }
  });
});
