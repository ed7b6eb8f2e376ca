/**
 * The CLI tools against a secured cluster (issue #29, part 5): 3 brokers whose client and
 * inter-broker listener is SASL_PLAINTEXT (PLAIN for the JAAS user `admin`, SCRAM-SHA-512 for users
 * created with `samsa configs`), Kafka's AclAuthorizer on, super.users admin and alice.
 *
 * Setup, honestly stated: the control-plane listener stays PLAINTEXT, so the controller's requests
 * arrive as User:ANONYMOUS; that principal gets CLUSTER_ACTION through an ACL written straight into
 * ZooKeeper (as `kafka-acls.sh --authorizer-properties zookeeper.connect=…` would).
 *
 * Then, each through bin/samsa.js with Kafka tools' properties files: `configs --alter` creates the
 * SCRAM users alice and bob as admin (--command-config admin.properties) and `--describe` prints
 * Kafka's SCRAM line; `topics --create/--list` work for alice (a super user); bob (no ACLs) gets
 * Kafka's "Error while executing topic command : Authorization failed." with exit 1 and sees no
 * topic; console-producer / console-consumer with --producer.config / --consumer.config round-trip
 * records as alice; a wrong security.protocol is a config error (exit 1).
 */
import { execFile, spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { AclOperation, AclPatternType, AclPermissionType, AclResourceType } from '@samsa/protocol';
import { AclResourceZNode, CreateMode, LiteralAclStore } from '@samsa/zk-paths';
import { TestCluster, describeCluster, until } from './harness.js';

const exec = promisify(execFile);
const bin = fileURLToPath(new URL('../packages/cli/bin/samsa.js', import.meta.url));

async function samsa(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await exec(process.execPath, [bin, ...args], { timeout: 120_000 });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** bin/samsa.js with `input` on stdin. */
function samsaWithInput(input: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? 1, stdout, stderr });
    });
    child.stdin.end(input);
  });
}

const JAAS_ADMIN = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret";';
const scramJaas = (user: string, password: string) =>
  `org.apache.kafka.common.security.scram.ScramLoginModule required username="${user}" password="${password}";`;

describeCluster('CLI tools on a SASL_PLAINTEXT cluster with the ACL authorizer (--command-config, --producer.config, SCRAM users)', () => {
  let c: TestCluster;
  const files = { admin: '', alice: '', bob: '', bad: '' };

  beforeAll(async () => {
    c = await TestCluster.start({
      brokers: 3,
      sasl: { mechanism: 'PLAIN', username: 'admin', password: 'admin-secret' },
      overrides: {
        'listener.security.protocol.map': 'PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT',
        'sasl.enabled.mechanisms': 'PLAIN,SCRAM-SHA-512',
        'sasl.mechanism.inter.broker.protocol': 'PLAIN',
        'listener.name.plaintext.plain.sasl.jaas.config': JAAS_ADMIN,
        'authorizer.class.name': 'kafka.security.authorizer.AclAuthorizer',
        'super.users': 'User:admin;User:alice',
        'allow.everyone.if.no.acl.found': 'false',
      },
    });
    const cluster = { resourceType: AclResourceType.CLUSTER, name: 'kafka-cluster', patternType: AclPatternType.LITERAL };
    const entry = { principal: 'User:ANONYMOUS', host: '*', operation: AclOperation.CLUSTER_ACTION, permissionType: AclPermissionType.ALLOW };
    await c.admin.zk.create(AclResourceZNode.path(cluster), AclResourceZNode.encode([entry]), { mkdirp: true });
    await c.admin.zk.create(`${LiteralAclStore.changePath}/acl_changes_`, LiteralAclStore.encodeChange(cluster), {
      mode: CreateMode.PersistentSequential,
      mkdirp: true,
    });
    const props = (name: string, lines: string[]) => {
      const path = join(c.dir, `${name}.properties`);
      return writeFile(path, `${lines.join('\n')}\n`).then(() => path);
    };
    files.admin = await props('admin', [
      'security.protocol=SASL_PLAINTEXT',
      'sasl.mechanism=PLAIN',
      `sasl.jaas.config=${JAAS_ADMIN.replace(' user_admin="admin-secret"', '')}`,
    ]);
    files.alice = await props('alice', [
      'security.protocol=SASL_PLAINTEXT',
      'sasl.mechanism=SCRAM-SHA-512',
      `sasl.jaas.config=${scramJaas('alice', 'alice-secret')}`,
    ]);
    files.bob = await props('bob', ['security.protocol=SASL_PLAINTEXT', 'sasl.mechanism=SCRAM-SHA-512', `sasl.jaas.config=${scramJaas('bob', 'bob-secret')}`]);
    files.bad = await props('bad', ['security.protocol=SASL_TLS']);
  });
  afterAll(async () => {
    await c?.stop();
  });

  it('security cli – configs --alter creates SCRAM users as admin (--command-config) and --describe prints Kafka’s SCRAM line', async () => {
    const users = ['--bootstrap-server', c.bootstrap, '--command-config', files.admin, '--entity-type', 'users'];
    const alice = await samsa(
      'configs',
      ...users,
      '--entity-name',
      'alice',
      '--alter',
      '--add-config',
      'SCRAM-SHA-512=[iterations=8192,password=alice-secret]',
    );
    expect(alice, alice.stderr).toMatchObject({ code: 0, stdout: 'Completed updating config for user alice.\n' });
    const bob = await samsa('configs', ...users, '--entity-name', 'bob', '--alter', '--add-config', 'SCRAM-SHA-512=[password=bob-secret]');
    expect(bob.code, bob.stderr).toBe(0);
    const d = await samsa('configs', ...users, '--entity-name', 'alice', '--describe');
    expect(d, d.stderr).toMatchObject({ code: 0, stdout: "SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-512=iterations=8192\n" });
    const low = await samsa('configs', ...users, '--entity-name', 'carol', '--alter', '--add-config', 'SCRAM-SHA-512=[iterations=1024,password=x]');
    expect(low).toMatchObject({ code: 1, stderr: 'Iterations 1024 is less than the minimum 4096 required for SCRAM-SHA-512\n' });
    // without credentials the tool cannot even connect to a SASL listener
    const anonymous = await samsa('configs', '--bootstrap-server', c.bootstrap, '--entity-type', 'users', '--describe', '--command-config', files.bad);
    expect(anonymous.code).toBe(1);
    expect(anonymous.stderr).toContain(
      'Invalid value SASL_TLS for configuration security.protocol: String must be one of: PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL',
    );
  });

  it('security cli – topics --create/--list work for a super user; a user without ACLs gets Kafka’s authorization failure (exit 1) and sees nothing', async () => {
    const topics = (file: string, ...args: string[]) => samsa('topics', '--bootstrap-server', c.bootstrap, '--command-config', file, ...args);
    // the credentials reach every broker through /config/changes
    const created = await until(
      async () => {
        const r = await topics(files.alice, '--create', '--topic', 'cli-secure', '--partitions', '3', '--replication-factor', '3');
        return r.code === 0 ? r : undefined;
      },
      'alice creates a topic',
      30_000,
      500,
    );
    expect(created.stdout).toBe('Created topic cli-secure.\n');
    await c.waitForLeaders('cli-secure', 3);
    const list = await topics(files.alice, '--list');
    expect(list, list.stderr).toMatchObject({ code: 0, stdout: 'cli-secure\n' });

    const denied = await topics(files.bob, '--create', '--topic', 'bob-topic', '--partitions', '1', '--replication-factor', '1');
    expect(denied.code).toBe(1);
    expect(denied.stdout).toBe('Error while executing topic command : Authorization failed.\n');
    const bobList = await topics(files.bob, '--list');
    // Metadata hides every topic from bob: Kafka's empty line
    expect(bobList, bobList.stderr).toMatchObject({ code: 0, stdout: '\n' });
  });

  it('security cli – console-producer and console-consumer with --producer.config / --consumer.config round-trip records', async () => {
    await c.waitForLeaders('cli-secure', 3);
    const lines = Array.from({ length: 20 }, (_, i) => `k${i}:secure-${i}`);
    const produced = await samsaWithInput(
      `${lines.join('\n')}\n`,
      'console-producer',
      '--bootstrap-server',
      c.bootstrap,
      '--topic',
      'cli-secure',
      '--producer.config',
      files.alice,
      '--property',
      'parse.key=true',
      '--property',
      'key.separator=:',
    );
    expect(produced.code, produced.stderr).toBe(0);
    const consumed = await samsa(
      'console-consumer',
      '--bootstrap-server',
      c.bootstrap,
      '--topic',
      'cli-secure',
      '--from-beginning',
      '--max-messages',
      '20',
      '--consumer.config',
      files.alice,
      '--property',
      'print.key=true',
      '--property',
      'key.separator=:',
    );
    expect(consumed.code, consumed.stderr).toBe(0);
    expect(consumed.stdout.split('\n').filter(Boolean).sort()).toEqual([...lines].sort());
  });
});
