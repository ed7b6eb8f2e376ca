/**
 * docker/docker-compose.secure.yml cannot be run here (no Docker daemon or compose plugin on the
 * build machine), so its wiring is checked statically: the services and volumes, the init service's
 * `samsa cluster secure-init` arguments (run for real into a temporary directory), and every SAMSA_*
 * variable of the brokers naming a broker config.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { BROKER_CONFIG_NAMES, envVariableFor } from '@samsa/broker';
import { ZOOKEEPER_CLIENT_JAAS_FILE } from '@samsa/local-cluster';
import { parsePropertiesRecord, parseSingleJaasEntry } from '@samsa/server-common';
import { runCommand } from '../../shared/runner.js';
import { clusterCommand } from './cluster.js';
import { SECURE_FILES } from './secure-cluster.js';

const composeFile = fileURLToPath(new URL('../../../../../docker/docker-compose.secure.yml', import.meta.url));
const SECURE_DIR = '/var/lib/samsa/secure';

interface Service {
  command?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  volumes?: string[];
  ports?: string[];
  healthcheck?: { test?: string[]; disable?: boolean };
}

const load = async () => parse(await readFile(composeFile, 'utf8'), { merge: true }) as { services: Record<string, Service>; volumes: Record<string, unknown> };

describe('docker-compose.secure.yml', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it('docker secure – 3 ZooKeeper servers, a one-shot secure-init the brokers wait for, 3 brokers reading the shared secure volume', async () => {
    const { services, volumes } = await load();
    expect(Object.keys(services).sort()).toEqual(['broker-1', 'broker-2', 'broker-3', 'secure-init', 'zookeeper-1', 'zookeeper-2', 'zookeeper-3']);
    expect(volumes).toHaveProperty('secure');
    const init = services['secure-init']!;
    expect(init.volumes).toEqual([`secure:${SECURE_DIR}`]);
    expect(init.command!.slice(0, 4)).toEqual(['cluster', 'secure-init', '--dir', SECURE_DIR]);
    for (const id of [1, 2, 3]) {
      const b = services[`broker-${id}`]!;
      expect(b.depends_on).toEqual({ 'secure-init': { condition: 'service_completed_successfully' } });
      expect(b.volumes).toContain(`secure:${SECURE_DIR}:ro`);
      expect(b.command).toEqual(['broker', 'start', `${SECURE_DIR}/${SECURE_FILES.brokerProperties}`]);
      expect(b.environment!['SAMSA_BROKER_ID']).toBe(String(id));
      expect(init.command!.join(' ')).toContain(`broker-${id}`); // in the certificate's SAN
    }
  });

  it('docker secure – every listener secured; every SAMSA_* variable names a broker config; ZooKeeper chroot, JAAS file and stores in the secure volume', async () => {
    const { services } = await load();
    const env = services['broker-1']!.environment!;
    const known = new Set(BROKER_CONFIG_NAMES.map((n) => envVariableFor(n)));
    for (const k of Object.keys(env).filter((k) => k.startsWith('SAMSA_'))) expect(known.has(k), k).toBe(true);
    expect(env['SAMSA_LISTENER_SECURITY_PROTOCOL_MAP']).toBe('INTERNAL:SASL_SSL,EXTERNAL:SASL_SSL,CONTROLLER:SSL');
    expect(env).toMatchObject({
      SAMSA_ZOOKEEPER_SET_ACL: 'true',
      KAFKA_OPTS: `-Djava.security.auth.login.config=${SECURE_DIR}/${ZOOKEEPER_CLIENT_JAAS_FILE}`,
      SAMSA_SSL_KEYSTORE_LOCATION: `${SECURE_DIR}/broker.keystore.pem`,
      SAMSA_SSL_TRUSTSTORE_LOCATION: `${SECURE_DIR}/ca.crt`,
      SAMSA_SASL_MECHANISM_INTER_BROKER_PROTOCOL: 'SCRAM-SHA-512',
      SAMSA_SUPER_USERS: 'User:admin',
      SAMSA_AUTHORIZER_CLASS_NAME: 'kafka.security.authorizer.AclAuthorizer',
    });
    const cmd = services['secure-init']!.command!;
    const arg = (name: string) => cmd[cmd.indexOf(name) + 1];
    expect(arg('--zookeeper')).toBe(env['SAMSA_ZOOKEEPER_CONNECT']);
    expect(arg('--zookeeper')).toMatch(/\/samsa$/);
    expect(arg('--listeners')).toBe('INTERNAL,EXTERNAL');
  });

  it('docker secure – the secure-init arguments run (without ZooKeeper): per-listener JAAS logins and controller client certificates in broker-secure.properties', async () => {
    const { services } = await load();
    const dir = await mkdtemp(join(tmpdir(), 'samsa-secure-init-'));
    dirs.push(dir);
    const cmd = services['secure-init']!.command!.map((a) => a.replace(/\$\{SAMSA_[A-Z_0-9]+:-([^}]*)\}/g, '$1'));
    const args = cmd.slice(1).map((a) => (a === SECURE_DIR ? dir : a));
    args.splice(args.indexOf('--zookeeper'), 2);
    let out = '';
    let err = '';
    const code = await runCommand(clusterCommand, args, { out: (s) => (out += s), err: (s) => (err += s) });
    expect({ code, err }).toEqual({ code: 0, err: '' });
    const props = parsePropertiesRecord(await readFile(join(dir, SECURE_FILES.brokerProperties), 'utf8'), 'broker-secure.properties');
    expect(props['listener.name.controller.ssl.client.auth']).toBe('required');
    for (const l of ['internal', 'external']) {
      expect(parseSingleJaasEntry(props[`listener.name.${l}.scram-sha-512.sasl.jaas.config`]!).options['username']).toBe('admin');
    }
    const librdkafka = await readFile(join(dir, SECURE_FILES.librdkafka), 'utf8');
    expect(librdkafka).toContain('bootstrap.servers=localhost:9092,localhost:9093,localhost:9094');
    expect(librdkafka).toContain('ssl.ca.location=secure/ca.crt');
    expect(await readFile(join(dir, ZOOKEEPER_CLIENT_JAAS_FILE), 'utf8')).toContain('username="samsa"');
    expect(out).toContain('per-listener settings');
  }, 30_000);
});
