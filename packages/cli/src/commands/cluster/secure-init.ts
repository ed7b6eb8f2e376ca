/**
 * `samsa cluster secure-init --dir <dir>`: the one-shot preparation of a secured cluster outside the
 * local cluster (docker/docker-compose.secure.yml's init service): certificates, passwords, the
 * brokers' ZooKeeper JAAS file, a properties file with the per-listener broker settings (which
 * SAMSA_* environment variables cannot express), client configuration files, and — with
 * --zookeeper — the admin's SCRAM credential in ZooKeeper. Rerunning it reuses what is there.
 */
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { zookeeperAuthSettings, type LocalClusterState } from '@samsa/local-cluster';
import { commandBuilder } from '../../shared/runner.js';
import {
  SECURE_ADMIN_USER,
  SECURE_FILES,
  SECURE_MECHANISM,
  SECURE_ZOOKEEPER_USER,
  loadOrCreateMaterial,
  scramJaasConfig,
  writeClientConfigs,
  writeScramCredential,
} from './secure-cluster.js';

/** What a newcomer needs to reach a secured local cluster (cluster up, cluster status). */
export function secureHints(state: LocalClusterState): string[] {
  if (!state.secure) return [];
  const files = state.clientConfigs ?? {};
  const lines = [`secured: SASL_SSL with ${SECURE_MECHANISM} on ${state.bootstrap}, user ${SECURE_ADMIN_USER} (super user); ACLs enforced`];
  if (files['commandConfig'])
    lines.push(
      `Kafka tools (--command-config, --producer.config, --consumer.config): ${files['commandConfig']}`,
      `KafkaJS / other clients: security.protocol, sasl.jaas.config (user and password) and the CA (ssl.truststore.location) are in that file`,
    );
  if (files['librdkafka']) lines.push(`kcat: kcat -F ${files['librdkafka']} -L`);
  return lines;
}

/** The per-listener broker settings: each SASL listener's JAAS login (admin) and client certificates on CONTROLLER. */
export function brokerListenerProperties(listeners: readonly string[], adminPassword: string): string {
  const jaas = scramJaasConfig(SECURE_ADMIN_USER, adminPassword).replace(/\\/g, '\\\\');
  return [
    '# written by samsa cluster secure-init: per-listener settings (no SAMSA_* variable can name them)',
    'listener.name.controller.ssl.client.auth=required',
    ...listeners.map((l) => `listener.name.${l.toLowerCase()}.${SECURE_MECHANISM.toLowerCase()}.sasl.jaas.config=${jaas}`),
    '',
  ].join('\n');
}

interface SecureInitOptions {
  dir: string;
  brokerHosts: string;
  bootstrapServer: string;
  listeners: string;
  zookeeper?: string;
  clientCaPath?: string;
}

const list = (s: string) =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);

export const secureInitCommand = commandBuilder(
  'secure-init',
  'prepare a secured cluster in a directory: CA and broker certificate, passwords, ZooKeeper JAAS file, client configs, and (with --zookeeper) the admin SCRAM credential',
  (cmd) =>
    cmd
      .requiredOption('--dir <dir>', 'where the files go (reused when present)')
      .option('--broker-hosts <hosts>', 'host names and IPs of the broker certificate (subject alternative names)', 'localhost,127.0.0.1')
      .option('--bootstrap-server <servers>', 'bootstrap.servers written to the client config files', 'localhost:9092')
      .option('--client-ca-path <path>', 'the CA file as the client config files name it (when clients read a copy elsewhere); default its path in --dir')
      .option('--listeners <names>', 'the SASL_SSL listener names of the brokers (each gets the admin JAAS login)', 'SASL_SSL')
      .option('--zookeeper <connect>', `write the ${SECURE_MECHANISM} credential of ${SECURE_ADMIN_USER} to this ZooKeeper (host:port[,...][/chroot])`),
  async (opts: SecureInitOptions, io) => {
    const say = (msg: string) => io.out(`[samsa] ${msg}\n`);
    const m = await loadOrCreateMaterial(opts.dir, list(opts.brokerHosts));
    const zkAuth = { username: SECURE_ZOOKEEPER_USER, password: m.secrets.zookeeperPassword };
    const zk = await zookeeperAuthSettings(m.dir, zkAuth);
    const files = await writeClientConfigs(m, opts.bootstrapServer, opts.clientCaPath);
    const brokerProps = join(m.dir, SECURE_FILES.brokerProperties);
    await writeFile(brokerProps, brokerListenerProperties(list(opts.listeners), m.secrets.adminPassword), { mode: 0o600 });
    await chmod(brokerProps, 0o600);
    if (opts.zookeeper) {
      await writeScramCredential({ zookeeperConnect: opts.zookeeper, zookeeper: zkAuth, user: SECURE_ADMIN_USER, password: m.secrets.adminPassword });
      say(`${SECURE_MECHANISM} credential of ${SECURE_ADMIN_USER} written to ${opts.zookeeper}`);
    }
    say(`CA ${m.caCert}, broker key store ${m.brokerKeystore}`);
    say(`brokers: ${brokerProps} (per-listener settings), KAFKA_OPTS=${zk.env.KAFKA_OPTS}`);
    say(`clients: --command-config ${files.commandConfig}; kcat -F ${files.librdkafka}`);
  },
);
