import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeCluster, TestCluster } from './harness.js';

const exec = promisify(execFile);
const bin = fileURLToPath(new URL('../packages/cli/bin/samsa.js', import.meta.url));

async function samsa(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await exec(process.execPath, [bin, ...args], { timeout: 60_000 });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** `Topic: t\tPartition: 0\tLeader: 1\tReplicas: 1,0,2\tIsr: 0,1,2` rows of a --describe. */
function partitionRows(out: string) {
  return out
    .split('\n')
    .filter((l) => l.startsWith('\tTopic:'))
    .map((l) =>
      Object.fromEntries(
        l
          .trim()
          .split('\t')
          .map((kv) => kv.split(': ') as [string, string]),
      ),
    );
}

describeCluster('samsa topics against a 3-broker cluster', () => {
  let c: TestCluster;
  let bs: string[];
  beforeAll(async () => {
    c = await TestCluster.start({ brokers: 3 });
    bs = ['--bootstrap-server', c.brokers[0]!.address];
  });
  afterAll(async () => {
    await c?.stop();
  });

  it('samsa topics – --create 6 partitions RF 1 then --describe shows leaders spread over 0,1,2', async () => {
    const created = await samsa('topics', ...bs, '--create', '--topic', 't1', '--partitions', '6', '--replication-factor', '1');
    expect(created).toMatchObject({ code: 0, stdout: 'Created topic t1.\n' });
    const d = await samsa('topics', ...bs, '--describe', '--topic', 't1');
    expect(d.code).toBe(0);
    expect(d.stdout).toMatch(/^Topic: t1\tTopicId: [A-Za-z0-9_-]{22}\tPartitionCount: 6\tReplicationFactor: 1\tConfigs: /);
    const rows = partitionRows(d.stdout);
    expect(rows.map((r) => r['Partition'])).toEqual(['0', '1', '2', '3', '4', '5']);
    expect(new Set(rows.map((r) => r['Leader']))).toEqual(new Set(['0', '1', '2']));
    for (const r of rows) expect(r['Isr']).toBe(r['Replicas']);
  });

  it('samsa topics – RF 3 with a config, --list, --alter --partitions, errors with exit code 1', async () => {
    expect(
      (await samsa('topics', ...bs, '--create', '--topic', 't3', '--partitions', '2', '--replication-factor', '3', '--config', 'min.insync.replicas=2')).code,
    ).toBe(0);
    const d = await samsa('topics', ...bs, '--describe', '--topic', 't3');
    expect(d.stdout).toContain('Configs: min.insync.replicas=2');
    for (const r of partitionRows(d.stdout)) expect(r['Replicas']!.split(',').sort()).toEqual(['0', '1', '2']);
    expect((await samsa('topics', ...bs, '--alter', '--topic', 't3', '--partitions', '4')).code).toBe(0);
    expect(partitionRows((await samsa('topics', ...bs, '--describe', '--topic', 't3')).stdout)).toHaveLength(4);
    const shrink = await samsa('topics', ...bs, '--alter', '--topic', 't3', '--partitions', '1');
    expect(shrink.code).toBe(1);
    expect(shrink.stdout).toContain('Topic currently has 4 partitions, which is higher than the requested 1.');
    const dup = await samsa('topics', ...bs, '--create', '--topic', 't3', '--partitions', '1', '--replication-factor', '1');
    expect(dup.code).toBe(1);
    expect(dup.stdout).toContain("Topic 't3' already exists.");
    const rf = await samsa('topics', ...bs, '--create', '--topic', 'big', '--partitions', '1', '--replication-factor', '4');
    expect(rf.code).toBe(1);
    expect(rf.stdout).toContain('Replication factor: 4 larger than available brokers: 3.');
    const list = await samsa('topics', ...bs, '--list');
    expect(list.stdout.split('\n').filter(Boolean)).toEqual(['t1', 't3']);
  });

  it('samsa topics – --delete removes the topic from every broker', async () => {
    expect((await samsa('topics', ...bs, '--create', '--topic', 'gone', '--partitions', '3', '--replication-factor', '2')).code).toBe(0);
    expect((await samsa('topics', ...bs, '--delete', '--topic', 'gone')).code).toBe(0);
    for (const b of c.brokers) {
      const l = await samsa('topics', '--bootstrap-server', b.address, '--list');
      expect(l.stdout.split('\n')).not.toContain('gone');
    }
    expect(await c.admin.topicExists('gone')).toBe(false);
  });

  it('samsa topics – --zookeeper mode writes the assignment znodes directly (Kafka 2.x)', async () => {
    const zk = ['--zookeeper', c.zk.connectString('/samsa')];
    expect((await samsa('topics', ...zk, '--create', '--topic', 'zt', '--partitions', '3', '--replication-factor', '2')).stdout).toContain('Created topic zt.');
    await c.waitForLeaders('zt', 3);
    const d = await samsa('topics', ...zk, '--describe', '--topic', 'zt');
    const rows = partitionRows(d.stdout);
    expect(rows).toHaveLength(3);
    for (const r of rows) expect(r['Replicas']!.split(',')).toHaveLength(2);
    // brokers serve it too
    const viaBroker = await samsa('topics', ...bs, '--describe', '--topic', 'zt');
    expect(partitionRows(viaBroker.stdout)).toHaveLength(3);
  });
});
