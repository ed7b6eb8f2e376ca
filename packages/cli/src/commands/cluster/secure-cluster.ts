/**
 * `samsa cluster up --secure` and `samsa cluster secure-init`: everything a secured cluster needs under
 * one directory (`<data-dir>/secure/`) — a CA and a broker certificate, generated passwords (kept
 * across restarts), the brokers' ZooKeeper digest JAAS file, client configuration files for Kafka's
 * tools (`client.properties`, --command-config) and kcat (`librdkafka.conf`, -F) — and the admin's
 * SCRAM-SHA-512 credential written to ZooKeeper before the brokers start, as
 * `kafka-configs.sh --zookeeper ... --alter --add-config 'SCRAM-SHA-512=[password=...]'` does.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { SCRAM_MECHANISMS, formatCredential, generateCredential, sanitizeEntityName } from '@samsa/broker';
import { generateCertificates, type LocalClusterSecurity, type ZooKeeperDigestAuth } from '@samsa/local-cluster';
import { ConfigType, KafkaZk, ZkClient } from '@samsa/zk-paths';

/** The SCRAM user with super.users rights; the brokers authenticate to each other as this user too. */
export const SECURE_ADMIN_USER = 'admin';
/** The brokers' ZooKeeper digest user. */
export const SECURE_ZOOKEEPER_USER = 'samsa';
export const SECURE_MECHANISM = 'SCRAM-SHA-512';
/**
 * The chroot of a secured local cluster. ZooKeeper's root `/` stays open (docs/security-zookeeper.md):
 * below a chroot created with the brokers' ACLs an anonymous client can neither delete the
 * `/controller` ephemeral nor create `/admin/...` znodes, and ZooKeeper's own root is left untouched.
 */
export const SECURE_ZK_CHROOT = '/kafka';

export const SECURE_FILES = {
  secrets: 'secrets.json',
  clientProperties: 'client.properties',
  librdkafka: 'librdkafka.conf',
  brokerProperties: 'broker-secure.properties',
} as const;

export interface SecureSecrets {
  adminPassword: string;
  zookeeperPassword: string;
}

export interface SecureMaterial {
  dir: string;
  secrets: SecureSecrets;
  caCert: string;
  brokerKeystore: string;
}

const SECRET_MODE = 0o600;

async function writeSecret(file: string, text: string): Promise<void> {
  await writeFile(file, text, { mode: SECRET_MODE });
  await chmod(file, SECRET_MODE);
}

const newPassword = () => randomBytes(18).toString('base64url');

/** The passwords of `dir`: those in secrets.json when it exists, else new random ones (written, 0600). */
export async function loadOrCreateSecrets(dir: string): Promise<SecureSecrets> {
  const file = join(dir, SECURE_FILES.secrets);
  if (existsSync(file)) {
    let s: Partial<SecureSecrets>;
    try {
      s = JSON.parse(await readFile(file, 'utf8')) as Partial<SecureSecrets>;
    } catch (err) {
      throw new Error(`${file} is not valid JSON; remove ${dir} to start the secure cluster afresh`, { cause: err });
    }
    if (typeof s.adminPassword !== 'string' || typeof s.zookeeperPassword !== 'string' || !s.adminPassword || !s.zookeeperPassword) {
      throw new Error(`${file} lacks adminPassword / zookeeperPassword; remove ${dir} to start the secure cluster afresh`);
    }
    return { adminPassword: s.adminPassword, zookeeperPassword: s.zookeeperPassword };
  }
  const secrets: SecureSecrets = { adminPassword: newPassword(), zookeeperPassword: newPassword() };
  await writeSecret(file, JSON.stringify(secrets, null, 2) + '\n');
  return secrets;
}

/**
 * The CA and broker certificate of `dir`: reused when present, else made (generateCertificates; SAN
 * `brokerHosts`, default localhost and 127.0.0.1), private keys mode 0600.
 */
export async function loadOrCreateMaterial(dir: string, brokerHosts?: readonly string[]): Promise<SecureMaterial> {
  const abs = resolve(dir);
  await mkdir(abs, { recursive: true, mode: 0o700 });
  const secrets = await loadOrCreateSecrets(abs);
  const caCert = join(abs, 'ca.crt');
  const brokerKeystore = join(abs, 'broker.keystore.pem');
  if (!existsSync(caCert) || !existsSync(brokerKeystore)) {
    await generateCertificates({ dir: abs, clients: {}, ...(brokerHosts ? { brokerHosts } : {}) });
    for (const key of ['ca.key', 'broker.key', 'broker.keystore.pem']) await chmod(join(abs, key), SECRET_MODE);
  }
  return { dir: abs, secrets, caCert, brokerKeystore };
}

const jaasQuote = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

/** Kafka's ScramLoginModule JAAS line for `user`. */
export function scramJaasConfig(user: string, password: string): string {
  return `org.apache.kafka.common.security.scram.ScramLoginModule required username=${jaasQuote(user)} password=${jaasQuote(password)};`;
}

/** A Java .properties value: backslashes, and leading blanks, escaped. */
const propValue = (v: string) => v.replace(/\\/g, '\\\\').replace(/^\s/, (c) => `\\${c}`);

/** `client.properties` for Kafka's tools' --command-config: SASL_SSL, SCRAM-SHA-512 as admin, the CA as PEM trust store. */
export function clientPropertiesText(o: { bootstrap: string; caCert: string; password: string }): string {
  return [
    '# Kafka client settings for this secured cluster (--command-config, --producer.config, --consumer.config)',
    `# bootstrap.servers=${o.bootstrap}`,
    'security.protocol=SASL_SSL',
    `sasl.mechanism=${SECURE_MECHANISM}`,
    `sasl.jaas.config=${propValue(scramJaasConfig(SECURE_ADMIN_USER, o.password))}`,
    'ssl.truststore.type=PEM',
    `ssl.truststore.location=${propValue(o.caCert)}`,
    '',
  ].join('\n');
}

/** `librdkafka.conf` for `kcat -F`. */
export function librdkafkaConfText(o: { bootstrap: string; caCert: string; password: string }): string {
  return [
    '# librdkafka settings for this secured cluster: kcat -F <this file> -L',
    `bootstrap.servers=${o.bootstrap}`,
    'security.protocol=sasl_ssl',
    `sasl.mechanisms=${SECURE_MECHANISM}`,
    `sasl.username=${SECURE_ADMIN_USER}`,
    `sasl.password=${o.password}`,
    `ssl.ca.location=${o.caCert}`,
    '',
  ].join('\n');
}

/**
 * Writes client.properties and librdkafka.conf (0600) into the material's directory; returns their paths.
 * `caPath` is the CA file as the clients will name it (default: its absolute path here).
 */
export async function writeClientConfigs(m: SecureMaterial, bootstrap: string, caPath = m.caCert): Promise<{ commandConfig: string; librdkafka: string }> {
  const o = { bootstrap, caCert: caPath, password: m.secrets.adminPassword };
  const commandConfig = join(m.dir, SECURE_FILES.clientProperties);
  const librdkafka = join(m.dir, SECURE_FILES.librdkafka);
  await writeSecret(commandConfig, clientPropertiesText(o));
  await writeSecret(librdkafka, librdkafkaConfText(o));
  return { commandConfig, librdkafka };
}

/**
 * The brokers' security settings (server.properties): `securityListener` (SASL_SSL, SCRAM-SHA-512, also
 * the inter-broker listener, where a broker logs in as admin), the CONTROLLER listener on SSL with
 * client certificates required, the PEM key and trust stores, and the AclAuthorizer with admin as
 * the only super user.
 */
export function brokerSecurityOverrides(m: SecureMaterial, securityListener: string): Record<string, string> {
  return {
    'ssl.keystore.type': 'PEM',
    'ssl.keystore.location': m.brokerKeystore,
    'ssl.truststore.type': 'PEM',
    'ssl.truststore.location': m.caCert,
    'listener.name.controller.ssl.client.auth': 'required',
    'sasl.enabled.mechanisms': SECURE_MECHANISM,
    'sasl.mechanism.inter.broker.protocol': SECURE_MECHANISM,
    [`listener.name.${securityListener.toLowerCase()}.${SECURE_MECHANISM.toLowerCase()}.sasl.jaas.config`]: scramJaasConfig(
      SECURE_ADMIN_USER,
      m.secrets.adminPassword,
    ),
    'authorizer.class.name': 'kafka.security.authorizer.AclAuthorizer',
    'super.users': `User:${SECURE_ADMIN_USER}`,
    'allow.everyone.if.no.acl.found': 'false',
  };
}

/**
 * Writes `user`'s SCRAM-SHA-512 credential to /config/users/<user> (quota keys kept) and announces it
 * under /config/changes, authenticated as the brokers (digest) and with their secure ACLs, so the
 * credential is readable by the brokers only.
 */
export async function writeScramCredential(o: { zookeeperConnect: string; zookeeper: ZooKeeperDigestAuth; user: string; password: string }): Promise<void> {
  const zk = await ZkClient.connect({
    connectString: o.zookeeperConnect,
    sessionTimeoutMs: 10_000,
    authInfo: [{ scheme: 'digest', auth: `${o.zookeeper.username}:${o.zookeeper.password}` }],
    secureAcls: true,
  });
  try {
    const kzk = new KafkaZk(zk);
    const name = sanitizeEntityName(o.user);
    const config = { ...(await kzk.getEntityConfig(ConfigType.User, name)) };
    const m = SCRAM_MECHANISMS[SECURE_MECHANISM];
    config[m.mechanismName] = formatCredential(generateCredential(m, o.password));
    await kzk.changeEntityConfig(ConfigType.User, name, config);
  } catch (err) {
    throw new Error(`writing the SCRAM credential of ${o.user} to ZooKeeper ${o.zookeeperConnect} failed: ${(err as Error).message}`, { cause: err });
  } finally {
    await zk.close();
  }
}

export interface SecureLocalCluster {
  secureZooKeeper: ZooKeeperDigestAuth;
  security: LocalClusterSecurity;
  files: { commandConfig: string; librdkafka: string; caCert: string };
}

/** The client listener of `cluster up --secure` (named after its protocol by BrokerProcess). */
const LOCAL_LISTENER = 'SASL_SSL';

/** The LocalCluster options of `samsa cluster up --secure` for `<dataDir>/secure/`. */
export async function prepareSecureLocalCluster(o: { dataDir: string; bootstrap: string }): Promise<SecureLocalCluster> {
  const m = await loadOrCreateMaterial(join(resolve(o.dataDir), 'secure'));
  const files = await writeClientConfigs(m, o.bootstrap);
  const secureZooKeeper = { username: SECURE_ZOOKEEPER_USER, password: m.secrets.zookeeperPassword };
  return {
    secureZooKeeper,
    files: { ...files, caCert: m.caCert },
    security: {
      securityProtocol: LOCAL_LISTENER,
      controlSecurityProtocol: 'SSL',
      overrides: brokerSecurityOverrides(m, LOCAL_LISTENER),
      zkChroot: SECURE_ZK_CHROOT,
      clientConfigs: files,
      beforeBrokers: (zookeeperConnect) =>
        writeScramCredential({ zookeeperConnect, zookeeper: secureZooKeeper, user: SECURE_ADMIN_USER, password: m.secrets.adminPassword }),
    },
  };
}

/**
 * A data directory serves one kind of cluster: a plaintext one (brokers' log dirs, znodes at the root)
 * cannot be restarted with --secure, nor a secure one (`secure/secrets.json`) without it. Returns the
 * complaint, or undefined.
 */
export function dataDirModeMismatch(dataDir: string, secure: boolean): string | undefined {
  const hasSecrets = existsSync(join(resolve(dataDir), 'secure', SECURE_FILES.secrets));
  const hasBrokers = existsSync(join(resolve(dataDir), 'broker-0'));
  if (!secure && hasSecrets) return `${dataDir} holds a secure cluster (secure/${SECURE_FILES.secrets}); start it with --secure, or use another --data-dir`;
  if (secure && hasBrokers && !hasSecrets) return `${dataDir} holds a plaintext cluster; start a secure one in another --data-dir`;
  return undefined;
}
