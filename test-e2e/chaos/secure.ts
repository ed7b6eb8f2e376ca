/**
 * CHAOS_SECURE=1 (`npm run test:chaos:secure`): every chaos cluster runs with every listener
 * secured (issue #29's "the chaos quick subset with every listener secured"):
 *
 *  - the client listener, which is also the inter-broker one, is SASL_SSL with SCRAM-SHA-512 only
 *    (`sasl.mechanism.inter.broker.protocol=SCRAM-SHA-512`): replica fetchers, transaction markers
 *    and the clients authenticate over TLS; the brokers' SCRAM user is written to ZooKeeper before
 *    they start, as `kafka-configs.sh --zookeeper` does;
 *  - the CONTROLLER listener is SSL with `ssl.client.auth=required`: the controller presents the
 *    broker certificate (LeaderAndIsr, UpdateMetadata, StopReplica, ControlledShutdown);
 *  - certificates (a CA, a broker certificate for localhost / 127.0.0.1 / the namespace addresses)
 *    come from @samsa/local-cluster's generateCertificates, host names verified on every connection;
 *  - the harness, the verify workload and checker, the admin clients and `samsa verify`
 *    (`--command-config`) connect with TLS and SCRAM-SHA-512 as user `chaos`.
 *
 * Unset, every cluster is exactly as before (PLAINTEXT).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import type { SaslOptions } from '@samsa/client';
import { generateCertificates } from '@samsa/local-cluster';
import type { ClusterOptions, TestCluster } from '../harness.js';
import { pemSslOverrides } from '../clients/secure-helpers.js';

export const CHAOS_SECURE = process.env['CHAOS_SECURE'] === '1';

const BROKER_USER = { user: 'broker', password: 'broker-secret' } as const;
/** The SCRAM-SHA-512 user of the chaos clients (verify workload, checker, admin, samsa verify). */
export const CLIENT_SASL: SaslOptions = { mechanism: 'SCRAM-SHA-512', username: 'chaos', password: 'chaos-secret' };

/** A certificate directory per test file, removed after its last test (vitest workers end without an exit event). */
let certRoot: string | undefined;
function certDir(): string {
  certRoot ??= mkdtempSync(join(tmpdir(), 'samsa-chaos-certs-'));
  return mkdtempSync(join(certRoot, 'c-'));
}
afterAll(() => {
  if (certRoot) rmSync(certRoot, { recursive: true, force: true });
  certRoot = undefined;
});

/**
 * The ClusterOptions of a secured chaos cluster (above), merged over `o`; `o` itself without
 * CHAOS_SECURE. `hosts`: the addresses the brokers listen on besides localhost / 127.0.0.1 (their
 * certificate's subject alternative names), e.g. the network namespaces' addresses.
 */
export async function chaosClusterOptions<T extends ClusterOptions>(o: T, hosts: readonly string[] = []): Promise<T> {
  if (!CHAOS_SECURE) return o;
  const certs = await generateCertificates({ dir: certDir(), brokerHosts: ['localhost', '127.0.0.1', ...hosts] });
  const ca = readFileSync(certs.caCert, 'utf8');
  const jaas = `org.apache.kafka.common.security.scram.ScramLoginModule required username="${BROKER_USER.user}" password="${BROKER_USER.password}";`;
  return {
    ...o,
    securityProtocol: 'SASL_SSL',
    controlSecurityProtocol: 'SSL',
    clientTls: { ca: [ca] },
    sasl: CLIENT_SASL,
    scramUsers: [
      { user: BROKER_USER.user, mechanism: 'SCRAM-SHA-512', password: BROKER_USER.password },
      { user: CLIENT_SASL.username, mechanism: 'SCRAM-SHA-512', password: CLIENT_SASL.password },
    ],
    overrides: {
      ...pemSslOverrides(certs),
      'listener.name.controller.ssl.client.auth': 'required',
      'sasl.enabled.mechanisms': 'SCRAM-SHA-512',
      'sasl.mechanism.inter.broker.protocol': 'SCRAM-SHA-512',
      'listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config': jaas,
      ...o.overrides,
    },
  };
}

/**
 * Under CHAOS_SECURE, checks that the flag is in force on `c` (every broker registered
 * `SASL_SSL:SASL_SSL` and `CONTROLLER:SSL` endpoints) and says so on stdout; nothing without it.
 */
export async function assertChaosSecured(c: TestCluster): Promise<void> {
  if (!CHAOS_SECURE) return;
  for (const b of c.brokers) {
    const endpoints = (await c.admin.getBroker(b.id))?.endpoints.map((e) => `${e.listenerName}:${e.securityProtocol}`).sort();
    if (endpoints?.join(',') !== 'CONTROLLER:SSL,SASL_SSL:SASL_SSL') throw new Error(`CHAOS_SECURE: broker ${b.id} registered ${endpoints?.join(',')}`);
  }
  process.stdout.write(
    `[chaos] CHAOS_SECURE: ${c.brokers.length} brokers on SASL_SSL (SCRAM-SHA-512, client and inter-broker) and CONTROLLER SSL (client certificate required)\n`,
  );
}

/**
 * `--command-config` arguments for a samsa CLI command against a secured chaos cluster (a client
 * properties file in Kafka's format: SASL_SSL, SCRAM-SHA-512, the CA as a PEM trust store); none
 * without CHAOS_SECURE.
 */
export function chaosCommandConfig(c: { clientTls?: { ca?: unknown } | undefined }): string[] {
  if (!CHAOS_SECURE) return [];
  const dir = certDir();
  const ca = join(dir, 'ca.pem');
  const ca0 = c.clientTls?.ca;
  writeFileSync(ca, Array.isArray(ca0) ? ca0.join('\n') : String(ca0));
  const file = join(dir, 'client.properties');
  writeFileSync(
    file,
    [
      'security.protocol=SASL_SSL',
      'ssl.truststore.type=PEM',
      `ssl.truststore.location=${ca}`,
      'sasl.mechanism=SCRAM-SHA-512',
      `sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="${CLIENT_SASL.username}" password="${CLIENT_SASL.password}";`,
      '',
    ].join('\n'),
  );
  return ['--command-config', file];
}
