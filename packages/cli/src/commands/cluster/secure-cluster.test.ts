import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parsePropertiesRecord, parseSingleJaasEntry } from '@samsa/server-common';
import { clientSecurityFromProperties } from '../../shared/client-security.js';
import {
  brokerSecurityOverrides,
  clientPropertiesText,
  dataDirModeMismatch,
  librdkafkaConfText,
  loadOrCreateSecrets,
  type SecureMaterial,
} from './secure-cluster.js';
import { brokerListenerProperties, secureHints } from './secure-init.js';

const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'samsa-secure-unit-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const material: SecureMaterial = {
  dir: '/d/secure',
  secrets: { adminPassword: 'p"w\\1', zookeeperPassword: 'zk' },
  caCert: '/d/secure/ca.crt',
  brokerKeystore: '/d/secure/broker.keystore.pem',
};

describe('secure cluster files', () => {
  it('secure cluster – client.properties is read by Kafka-style tools as SASL_SSL / SCRAM-SHA-512 admin with the CA as PEM trust store', () => {
    const text = clientPropertiesText({ bootstrap: 'h:1', caCert: '/d/ca.crt', password: material.secrets.adminPassword });
    const props = parsePropertiesRecord(text, 'client.properties');
    expect(props).toMatchObject({
      'security.protocol': 'SASL_SSL',
      'sasl.mechanism': 'SCRAM-SHA-512',
      'ssl.truststore.type': 'PEM',
      'ssl.truststore.location': '/d/ca.crt',
    });
    const sec = clientSecurityFromProperties(props, () => 'CA PEM');
    expect(sec).toEqual({ tls: { ca: 'CA PEM' }, sasl: { mechanism: 'SCRAM-SHA-512', username: 'admin', password: 'p"w\\1' } });
  });

  it('secure cluster – librdkafka.conf has kcat -F keys', () => {
    const lines = librdkafkaConfText({ bootstrap: 'h:1,h:2', caCert: '/d/ca.crt', password: 'pw' }).split('\n');
    expect(lines).toEqual(
      expect.arrayContaining([
        'bootstrap.servers=h:1,h:2',
        'security.protocol=sasl_ssl',
        'sasl.mechanisms=SCRAM-SHA-512',
        'sasl.username=admin',
        'sasl.password=pw',
        'ssl.ca.location=/d/ca.crt',
      ]),
    );
  });

  it('secure cluster – broker settings: SCRAM-SHA-512 inter-broker login as admin on the listener, controller client certs, AclAuthorizer with admin only', () => {
    const o = brokerSecurityOverrides(material, 'SASL_SSL');
    expect(o).toMatchObject({
      'sasl.enabled.mechanisms': 'SCRAM-SHA-512',
      'sasl.mechanism.inter.broker.protocol': 'SCRAM-SHA-512',
      'listener.name.controller.ssl.client.auth': 'required',
      'authorizer.class.name': 'kafka.security.authorizer.AclAuthorizer',
      'super.users': 'User:admin',
      'allow.everyone.if.no.acl.found': 'false',
      'ssl.keystore.type': 'PEM',
      'ssl.keystore.location': material.brokerKeystore,
    });
    const jaas = parseSingleJaasEntry(o['listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config']!);
    expect(jaas.options).toEqual({ username: 'admin', password: 'p"w\\1' });
  });

  it('secure cluster – secure-init broker properties carry a JAAS login per listener that survives the properties parser', () => {
    const props = parsePropertiesRecord(brokerListenerProperties(['INTERNAL', 'EXTERNAL'], 'p"w\\1'), 'broker-secure.properties');
    expect(props['listener.name.controller.ssl.client.auth']).toBe('required');
    for (const l of ['internal', 'external']) {
      expect(parseSingleJaasEntry(props[`listener.name.${l}.scram-sha-512.sasl.jaas.config`]!).options['password']).toBe('p"w\\1');
    }
  });

  it('secure cluster – passwords are generated once (0600) and reused for the same directory', async () => {
    const d = tmp();
    const a = await loadOrCreateSecrets(d);
    expect(a.adminPassword).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(a.zookeeperPassword).not.toBe(a.adminPassword);
    expect(statSync(join(d, 'secrets.json')).mode & 0o777).toBe(0o600);
    expect(await loadOrCreateSecrets(d)).toEqual(a);
    expect(await loadOrCreateSecrets(tmp())).not.toEqual(a);
    writeFileSync(join(d, 'secrets.json'), '{');
    await expect(loadOrCreateSecrets(d)).rejects.toThrow(/not valid JSON/);
  });

  it('secure cluster – a data dir keeps its kind: secure without --secure, or plaintext with it, is refused', () => {
    const d = tmp();
    expect(dataDirModeMismatch(d, true)).toBeUndefined();
    expect(dataDirModeMismatch(d, false)).toBeUndefined();
    mkdirSync(join(d, 'broker-0'));
    expect(dataDirModeMismatch(d, true)).toMatch(/holds a plaintext cluster/);
    mkdirSync(join(d, 'secure'));
    writeFileSync(join(d, 'secure', 'secrets.json'), '{}');
    expect(dataDirModeMismatch(d, true)).toBeUndefined();
    expect(dataDirModeMismatch(d, false)).toMatch(/holds a secure cluster/);
  });

  it('secure cluster – status hints name the client files only for a secure cluster', () => {
    const base = {
      supervisorPid: 1,
      state: 'running' as const,
      startedAt: '',
      dataDir: '/d',
      zookeeper: { connect: 'z', servers: [] },
      brokers: [],
      bootstrap: 'h:1',
    };
    expect(secureHints(base)).toEqual([]);
    const lines = secureHints({
      ...base,
      secure: true,
      clientConfigs: { commandConfig: '/d/secure/client.properties', librdkafka: '/d/secure/librdkafka.conf' },
    });
    expect(lines.join('\n')).toContain('kcat -F /d/secure/librdkafka.conf -L');
    expect(lines.join('\n')).toContain('/d/secure/client.properties');
  });
});
