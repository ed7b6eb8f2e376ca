/**
 * `samsa cluster up --secure` (issue #29, part 6), as a user runs it: 3 brokers serving SASL_SSL with
 * SCRAM-SHA-512 on the client ports (also the inter-broker listener), the control plane on SSL with
 * client certificates, the AclAuthorizer, ZooKeeper digest ACLs under a chroot. kcat with the written
 * librdkafka.conf and KafkaJS with the values of client.properties produce and consume; an RF=3 topic
 * has all brokers in its ISR; a plaintext client is closed; a restart keeps the admin password.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import kafkajs from 'kafkajs';
import { afterAll, describe, expect, it } from 'vitest';
import { isAlive, readState } from '@samsa/local-cluster';
import { parsePropertiesRecord, parseSingleJaasEntry } from '@samsa/server-common';
import { ZkClient, ZkCode } from '@samsa/zk-paths';

const run = promisify(execFile);
const bin = fileURLToPath(new URL('../../../bin/samsa.js', import.meta.url));
const { Kafka, logLevel } = kafkajs;

const portBase = () => 20000 + Math.floor(Math.random() * 1600) * 3;

async function kcat(args: string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = execFile('kcat', args, { timeout: 60_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`kcat failed: ${stderr}`, { cause: err })) : resolve(stdout),
    );
    if (input !== undefined) p.stdin!.end(input);
  });
}

/** Sends a plaintext ApiVersions request; resolves with the bytes received before the broker closed the connection. */
function plaintextApiVersions(port: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => reject(new Error('plaintext connection not closed within 15 s')), 15_000);
    const clientId = Buffer.from('plain');
    const body = Buffer.alloc(10 + clientId.length);
    body.writeInt16BE(18, 0);
    body.writeInt16BE(0, 2);
    body.writeInt32BE(1, 4);
    body.writeInt16BE(clientId.length, 8);
    clientId.copy(body, 10);
    const size = Buffer.alloc(4);
    size.writeInt32BE(body.length);
    sock.on('connect', () => sock.write(Buffer.concat([size, body])));
    sock.on('data', (c: Buffer) => chunks.push(c));
    sock.on('error', () => undefined);
    sock.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks));
    });
  });
}

describe('samsa cluster up --secure', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) {
      await run(process.execPath, [bin, 'cluster', 'down', '--data-dir', d]).catch(() => undefined);
      await rm(d, { recursive: true, force: true });
    }
  }, 120_000);

  it('cluster secure – kcat -F librdkafka.conf and KafkaJS with client.properties produce and consume over SASL_SSL/SCRAM-SHA-512; RF=3 fully in sync; plaintext closed; password kept across restarts', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'samsa-cli-secure-'));
    dirs.push(dir);
    const base = portBase();
    const args = [
      '--data-dir',
      dir,
      '--zk-servers',
      '1',
      '--zk-port',
      String(base),
      '--zk-peer-port',
      String(base + 10000),
      '--zk-election-port',
      String(base + 20000),
      '--broker-port',
      String(base + 5),
      '--metrics-port',
      '0',
      '--secure',
    ];
    const up = await run(process.execPath, [bin, 'cluster', 'up', '--detach', ...args], { timeout: 180_000 });
    const secureDir = join(dir, 'secure');
    const librdkafka = join(secureDir, 'librdkafka.conf');
    const clientProps = join(secureDir, 'client.properties');
    expect(up.stdout).toContain(`kcat -F ${librdkafka} -L`);
    expect(up.stdout).toContain(clientProps);
    expect(up.stdout).toContain(`zookeeper.connect=127.0.0.1:${base}/kafka`);
    const state = readState(dir)!;
    expect(state.secure).toBe(true);
    expect(state.clientConfigs).toEqual({ commandConfig: clientProps, librdkafka });
    for (const f of [librdkafka, clientProps, join(secureDir, 'secrets.json'), join(secureDir, 'ca.key'), join(secureDir, 'broker.keystore.pem')]) {
      expect((await stat(f)).mode & 0o777, f).toBe(0o600);
    }
    expect((await stat(join(dir, 'broker-0', 'server.properties'))).mode & 0o777).toBe(0o600);

    // client.properties in Kafka's format, read the way Kafka's tools read it
    const props = parsePropertiesRecord(await readFile(clientProps, 'utf8'), clientProps);
    expect(props).toMatchObject({ 'security.protocol': 'SASL_SSL', 'sasl.mechanism': 'SCRAM-SHA-512', 'ssl.truststore.type': 'PEM' });
    const jaas = parseSingleJaasEntry(props['sasl.jaas.config']!);
    expect(jaas.loginModule).toBe('org.apache.kafka.common.security.scram.ScramLoginModule');
    expect(jaas.options['username']).toBe('admin');
    const password = jaas.options['password']!;
    expect(password.length).toBeGreaterThanOrEqual(20);

    const kafka = new Kafka({
      clientId: 'secure-cluster-it',
      brokers: state.bootstrap.split(','),
      ssl: { ca: [await readFile(props['ssl.truststore.location']!, 'utf8')] },
      sasl: { mechanism: 'scram-sha-512', username: 'admin', password },
      logLevel: logLevel.NOTHING,
    });
    const admin = kafka.admin();
    const producer = kafka.producer();
    try {
      await admin.connect();
      await admin.createTopics({
        topics: [{ topic: 'secure-rf3', numPartitions: 3, replicationFactor: 3, configEntries: [{ name: 'min.insync.replicas', value: '3' }] }],
        waitForLeaders: true,
      });
      // acks=all with min.insync.replicas=3: the followers replicate over the SASL_SSL inter-broker listener
      await producer.connect();
      await producer.send({ topic: 'secure-rf3', acks: -1, messages: Array.from({ length: 30 }, (_, i) => ({ key: `k${i}`, value: `kafkajs-${i}` })) });
      await kcat(['-F', librdkafka, '-P', '-t', 'secure-rf3', '-X', 'acks=all'], Array.from({ length: 20 }, (_, i) => `kcat-${i}`).join('\n') + '\n');
      const meta = await admin.fetchTopicMetadata({ topics: ['secure-rf3'] });
      for (const p of meta.topics[0]!.partitions) expect([...p.isr].sort()).toEqual([0, 1, 2]);
    } finally {
      await producer.disconnect().catch(() => undefined);
      await admin.disconnect().catch(() => undefined);
    }
    const read = (await kcat(['-F', librdkafka, '-C', '-t', 'secure-rf3', '-e', '-o', 'beginning', '-q', '-f', '%s\n'])).split('\n').filter(Boolean);
    expect(read.filter((v) => v.startsWith('kafkajs-'))).toHaveLength(30);
    expect(read.filter((v) => v.startsWith('kcat-'))).toHaveLength(20);

    // the admin tools take client.properties (--command-config), as Kafka's do
    const listed = await run(process.execPath, [bin, 'topics', '--bootstrap-server', state.bootstrap, '--command-config', clientProps, '--list']);
    expect(listed.stdout.split('\n')).toContain('secure-rf3');

    // a wrong password is refused by the brokers
    await expect(kcat(['-F', librdkafka, '-X', 'sasl.password=wrong', '-L', '-m', '10'])).rejects.toThrow(/Authentication failed|SASL authentication error/i);

    // a plaintext client on a client port gets no Kafka answer, only a closed connection
    const got = await plaintextApiVersions(base + 5);
    expect(got.length === 0 || got.readInt32BE(0) !== got.length - 4).toBe(true);

    // the SCRAM credential is not readable by an anonymous ZooKeeper client
    const anon = await ZkClient.connect({ connectString: state.zookeeper.connect, sessionTimeoutMs: 6000 });
    try {
      await expect(anon.get('/config/users/admin')).rejects.toMatchObject({ code: ZkCode.NO_AUTH });
    } finally {
      await anon.close();
    }

    // status works without plaintext; a restart of the same data dir keeps the password and the CA
    const st = await run(process.execPath, [bin, 'cluster', 'status', '--data-dir', dir]);
    expect(st.stdout).toContain('live brokers: 0,1,2');
    const ca = await readFile(join(secureDir, 'ca.crt'), 'utf8');
    await run(process.execPath, [bin, 'cluster', 'down', '--data-dir', dir]);
    expect(state.brokers.some((b) => isAlive(b.pid))).toBe(false);
    // without --secure the data dir is refused
    await expect(run(process.execPath, [bin, 'cluster', 'up', '--detach', ...args.slice(0, -1)])).rejects.toMatchObject({
      stderr: expect.stringContaining('holds a secure cluster') as unknown,
    });
    await run(process.execPath, [bin, 'cluster', 'up', '--detach', ...args], { timeout: 180_000 });
    expect(parseSingleJaasEntry(parsePropertiesRecord(await readFile(clientProps, 'utf8'), clientProps)['sasl.jaas.config']!).options['password']).toBe(
      password,
    );
    expect(await readFile(join(secureDir, 'ca.crt'), 'utf8')).toBe(ca);
    const again = (await kcat(['-F', librdkafka, '-C', '-t', 'secure-rf3', '-e', '-o', 'beginning', '-q', '-f', '%s\n'])).split('\n').filter(Boolean);
    expect(again).toHaveLength(50);
  }, 300_000);
});
