import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';

/** ZooKeeper digest credentials every broker of a local cluster authenticates with. */
export interface ZooKeeperDigestAuth {
  username: string;
  password: string;
}

/** The JAAS file written for the brokers, under `<dataDir>/secure/`. */
export const ZOOKEEPER_CLIENT_JAAS_FILE = 'zookeeper-client-jaas.conf';

/** A JAAS file whose `Client` section gives ZooKeeper digest credentials, as Kafka's brokers read it. */
export function zookeeperClientJaas(auth: ZooKeeperDigestAuth): string {
  const q = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  return `Client {\n  org.apache.zookeeper.server.auth.DigestLoginModule required\n  username=${q(auth.username)}\n  password=${q(auth.password)};\n};\n`;
}

/** What a broker process needs for secured ZooKeeper: KAFKA_OPTS naming the JAAS file, and zookeeper.set.acl=true. */
export interface ZooKeeperAuthSettings {
  jaasFile: string;
  env: { KAFKA_OPTS: string };
  overrides: { 'zookeeper.set.acl': 'true' };
}

/**
 * Writes `<secureDir>/zookeeper-client-jaas.conf` (mode 0600) and returns the broker environment and
 * server.properties entries that make brokers authenticate to ZooKeeper with these credentials and
 * create their znodes with Kafka's secure ACLs (docs/security-zookeeper.md).
 */
export async function zookeeperAuthSettings(secureDir: string, auth: ZooKeeperDigestAuth): Promise<ZooKeeperAuthSettings> {
  if (!auth.username || auth.username.includes(':')) throw new Error(`invalid ZooKeeper digest username '${auth.username}'`);
  const dir = resolve(secureDir);
  await mkdir(dir, { recursive: true });
  const jaasFile = join(dir, ZOOKEEPER_CLIENT_JAAS_FILE);
  await writeFile(jaasFile, zookeeperClientJaas(auth), { mode: 0o600 });
  await chmod(jaasFile, 0o600);
  const path = /\s/.test(jaasFile) ? `"${jaasFile}"` : jaasFile;
  return {
    jaasFile,
    env: { KAFKA_OPTS: `-Djava.security.auth.login.config=${path}` },
    overrides: { 'zookeeper.set.acl': 'true' },
  };
}
