import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeCluster } from '@samsa/client/testing';
import { runTopicsCommand, type TopicsDeps } from './topics.js';

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function cluster(opts: Parameters<typeof FakeCluster.start>[0] = { brokers: 3 }): Promise<FakeCluster> {
  const fc = await FakeCluster.start(opts);
  cleanup.push(() => fc.close());
  return fc;
}

const fast: TopicsDeps = { adminOptions: { retryBackoffMs: 10, retryBackoffMaxMs: 20, defaultApiTimeoutMs: 2_000 } };

async function run(fc: FakeCluster | string, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const bootstrap = typeof fc === 'string' ? fc : fc.bootstrapServers;
  const code = await runTopicsCommand(['--bootstrap-server', bootstrap, ...args], { out: (s) => (out += s), err: (s) => (err += s) }, fast);
  return { code, out, err };
}

describe('samsa topics --bootstrap-server', () => {
  it('--create prints "Created topic T." and creates what was asked', async () => {
    const fc = await cluster();
    const r = await run(
      fc,
      '--create',
      '--topic',
      'orders',
      '--partitions',
      '3',
      '--replication-factor',
      '2',
      '--config',
      'retention.ms=1000',
      '--config',
      'cleanup.policy=compact',
    );
    expect(r).toEqual({ code: 0, out: 'Created topic orders.\n', err: '' });
    const t = fc.topics.get('orders')!;
    expect(t.partitions.map((p) => p.replicas.length)).toEqual([2, 2, 2]);
    expect(t.configs).toEqual({ 'retention.ms': '1000', 'cleanup.policy': 'compact' });
  });

  it('--create with --replica-assignment, and the collision warning', async () => {
    const fc = await cluster();
    const r = await run(fc, '--create', '--topic', 'my.topic', '--replica-assignment', '0:1,1:2,2:0');
    expect(r.out).toBe(
      "WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') could collide. To avoid issues it is best to use either, but not both.\nCreated topic my.topic.\n",
    );
    expect(fc.topics.get('my.topic')!.partitions.map((p) => p.replicas)).toEqual([
      [0, 1],
      [1, 2],
      [2, 0],
    ]);
  });

  it("--create of an existing topic: Kafka's error and exit code 1; --if-not-exists succeeds quietly", async () => {
    const fc = await cluster();
    fc.addTopic('x', [[0]]);
    const r = await run(fc, '--create', '--topic', 'x', '--partitions', '1', '--replication-factor', '1');
    expect(r.code).toBe(1);
    expect(r.out).toBe("Error while executing topic command : Topic 'x' already exists.\n");
    expect(r.err).toMatch(/^ERROR KafkaError \[TOPIC_ALREADY_EXISTS\]: Topic 'x' already exists\.\n$/);
    expect(await run(fc, '--create', '--topic', 'x', '--partitions', '1', '--replication-factor', '1', '--if-not-exists')).toEqual({
      code: 0,
      out: '',
      err: '',
    });
  });

  it('--create errors from the broker and from the tool', async () => {
    const fc = await cluster({ brokers: 1 });
    expect((await run(fc, '--create', '--topic', 'x', '--partitions', '1', '--replication-factor', '3')).out).toBe(
      'Error while executing topic command : Replication factor: 3 larger than available brokers: 1.\n',
    );
    expect((await run(fc, '--create', '--topic', 'x', '--partitions', '0')).out).toBe(
      'Error while executing topic command : The partitions must be greater than 0\n',
    );
    expect((await run(fc, '--create', '--topic', 'x', '--replication-factor', '0')).out).toBe(
      'Error while executing topic command : The replication factor must be between 1 and 32767 inclusive\n',
    );
    expect((await run(fc, '--create', '--topic', 'x', '--config', 'bad')).out).toBe(
      'Error while executing topic command : requirement failed: Invalid topic config: all configs to be added must be in the format "key=val".\n',
    );
    // without --partitions/--replication-factor the broker defaults apply
    expect((await run(fc, '--create', '--topic', 'defaults')).out).toBe('Created topic defaults.\n');
  });

  it('--list: sorted, one per line; --exclude-internal; an empty line when there are none', async () => {
    const fc = await cluster();
    expect(await run(fc, '--list')).toEqual({ code: 0, out: '\n', err: '' });
    fc.addTopic('b', [[0]]);
    fc.addTopic('a', [[0]]);
    fc.addTopic('__consumer_offsets', [[0]]);
    expect((await run(fc, '--list')).out).toBe('__consumer_offsets\na\nb\n');
    expect((await run(fc, '--list', '--exclude-internal')).out).toBe('a\nb\n');
    expect((await run(fc, '--list', '--topic', 'a|__.*')).out).toBe('__consumer_offsets\na\n');
  });

  it('--describe prints Kafka 3.x lines', async () => {
    const fc = await cluster();
    const t = fc.addTopic(
      'orders',
      [
        [1, 0, 2],
        [2, 1, 0],
      ],
      { configs: { 'retention.ms': '1000' } },
    );
    t.partitions[0]!.isr = [0, 1, 2];
    fc.addTopic('plain', [[0]]);
    const id = t.topicId.toString('base64url');
    const r = await run(fc, '--describe', '--topic', 'orders');
    expect(r).toEqual({
      code: 0,
      err: '',
      out:
        `Topic: orders\tTopicId: ${id}\tPartitionCount: 2\tReplicationFactor: 3\tConfigs: retention.ms=1000\n` +
        '\tTopic: orders\tPartition: 0\tLeader: 1\tReplicas: 1,0,2\tIsr: 0,1,2\n' +
        '\tTopic: orders\tPartition: 1\tLeader: 2\tReplicas: 2,1,0\tIsr: 2,1,0\n',
    });
    // all topics, sorted
    const all = await run(fc, '--describe');
    expect(
      all.out
        .split('\n')
        .filter((l) => l.startsWith('Topic:'))
        .map((l) => l.split('\t')[0]),
    ).toEqual(['Topic: orders', 'Topic: plain']);
    expect(all.out).toContain(
      `Topic: plain\tTopicId: ${fc.topics.get('plain')!.topicId.toString('base64url')}\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: \n`,
    );
  });

  it('--describe with a dead broker: Leader none, Offline column, report filters', async () => {
    const fc = await cluster();
    const t = fc.addTopic(
      't',
      [
        [0, 1],
        [2, 1],
        [1, 0],
      ],
      { configs: { 'min.insync.replicas': '2' } },
    );
    t.partitions[1]!.isr = [2, 1];
    t.partitions[2]!.isr = [1];
    fc.live.delete(2);
    const r = await run(fc, '--describe', '--topic', 't');
    expect(r.out.split('\n').slice(1)).toEqual([
      '\tTopic: t\tPartition: 0\tLeader: 0\tReplicas: 0,1\tIsr: 0,1',
      '\tTopic: t\tPartition: 1\tLeader: none\tReplicas: 2,1\tIsr: 2,1\tOffline: 2',
      '\tTopic: t\tPartition: 2\tLeader: 1\tReplicas: 1,0\tIsr: 1',
      '',
    ]);
    expect((await run(fc, '--describe', '--unavailable-partitions')).out).toBe('\tTopic: t\tPartition: 1\tLeader: none\tReplicas: 2,1\tIsr: 2,1\tOffline: 2\n');
    expect((await run(fc, '--describe', '--under-replicated-partitions')).out).toBe('\tTopic: t\tPartition: 2\tLeader: 1\tReplicas: 1,0\tIsr: 1\n');
    expect((await run(fc, '--describe', '--under-min-isr-partitions')).out).toBe(
      '\tTopic: t\tPartition: 1\tLeader: none\tReplicas: 2,1\tIsr: 2,1\tOffline: 2\n\tTopic: t\tPartition: 2\tLeader: 1\tReplicas: 1,0\tIsr: 1\n',
    );
    expect((await run(fc, '--describe', '--at-min-isr-partitions')).out).toBe(
      '\tTopic: t\tPartition: 0\tLeader: 0\tReplicas: 0,1\tIsr: 0,1\n\tTopic: t\tPartition: 1\tLeader: none\tReplicas: 2,1\tIsr: 2,1\tOffline: 2\n',
    );
  });

  it('--describe --topics-with-overrides, reassignments, and missing topics', async () => {
    const fc = await cluster();
    fc.addTopic('plain', [[0]]);
    fc.addTopic('tuned', [[0, 1, 2]], { configs: { 'segment.ms': '100' } });
    fc.reassignments = [{ topic: 'tuned', partition: 0, replicas: [0, 1, 2], addingReplicas: [2], removingReplicas: [] }];
    const r = await run(fc, '--describe', '--topics-with-overrides');
    expect(r.out).toMatch(/^Topic: tuned\tTopicId: \S+\tPartitionCount: 1\tReplicationFactor: 2\tConfigs: segment.ms=100\n$/);
    expect((await run(fc, '--describe', '--topic', 'tuned')).out).toContain('\tIsr: 0,1,2\tAdding Replicas: 2\n');
    expect(await run(fc, '--describe', '--topic', 'nope')).toMatchObject({
      code: 1,
      out: "Error while executing topic command : Topic 'nope' does not exist as expected\n",
    });
    expect(await run(fc, '--describe', '--topic', 'nope', '--if-exists')).toEqual({ code: 0, out: '', err: '' });
  });

  it('--delete by name, list, or regex; missing topics', async () => {
    const fc = await cluster();
    for (const n of ['a', 'b', 'c', 'logs-1', 'logs-2']) fc.addTopic(n, [[0]]);
    expect(await run(fc, '--delete', '--topic', 'a')).toEqual({ code: 0, out: '', err: '' });
    expect(await run(fc, '--delete', '--topic', 'b,c')).toEqual({ code: 0, out: '', err: '' });
    expect(await run(fc, '--delete', '--topic', 'logs-.*')).toEqual({ code: 0, out: '', err: '' });
    expect([...fc.topics.keys()]).toEqual([]);
    expect(await run(fc, '--delete', '--topic', 'a')).toMatchObject({
      code: 1,
      out: "Error while executing topic command : Topic 'a' does not exist as expected\n",
    });
    expect((await run(fc, '--delete', '--topic', 'a', '--if-exists')).code).toBe(0);
  });

  it('--alter --partitions, with and without --replica-assignment', async () => {
    const fc = await cluster();
    fc.addTopic('t', [[0, 1]]);
    expect(await run(fc, '--alter', '--topic', 't', '--partitions', '2')).toEqual({ code: 0, out: '', err: '' });
    expect(await run(fc, '--alter', '--topic', 't', '--partitions', '4', '--replica-assignment', '0:1,1:2,2:0,0:2')).toEqual({ code: 0, out: '', err: '' });
    expect(
      fc.topics
        .get('t')!
        .partitions.map((p) => p.replicas)
        .slice(2),
    ).toEqual([
      [2, 0],
      [0, 2],
    ]);
    expect((await run(fc, '--alter', '--topic', 't', '--partitions', '3')).out).toBe(
      'Error while executing topic command : Topic currently has 4 partitions, which is higher than the requested 3.\n',
    );
  });

  it('usage errors go to stderr with exit code 1', async () => {
    const fc = await cluster({ brokers: 1 });
    const r = await run(fc, '--list', '--describe');
    expect(r).toEqual({
      code: 1,
      out: '',
      err: 'Command must include exactly one action: --list, --describe, --create, --alter or --delete\nRun `samsa topics --help` for the options.\n',
    });
    let err = '';
    expect(await runTopicsCommand(['--bogus'], { out: () => undefined, err: (s) => (err += s) })).toBe(1);
    expect(err).toMatch(/unknown option '--bogus'/);
    let help = '';
    expect(await runTopicsCommand(['--help'], { out: (s) => (help += s), err: () => undefined })).toBe(0);
    expect(help).toMatch(/--bootstrap-server <servers>/);
  });

  it('reports an unreachable cluster after the API timeout', async () => {
    const fc = await cluster({ brokers: 1 });
    const addr = fc.bootstrapServers;
    await fc.close();
    cleanup.length = 0;
    const r = await run(addr, '--list');
    expect(r.code).toBe(1);
    expect(r.out).toMatch(
      /^Error while executing topic command : listTopics timed out after 2000 ms \(\d+ attempts\); last error: Could not connect to any broker/,
    );
  });

  it('--command-config sets Admin client options', async () => {
    const fc = await cluster({ brokers: 1 });
    const dir = mkdtempSync(join(tmpdir(), 'samsa-topics-'));
    const file = join(dir, 'admin.properties');
    writeFileSync(file, 'client.id=my-tool\n');
    expect((await run(fc, '--list', '--command-config', file)).code).toBe(0);
    expect(fc.broker(0).requests.every((r) => r.clientId === 'my-tool')).toBe(true);
    expect((await run(fc, '--list', '--command-config', join(dir, 'missing'))).out).toMatch(
      /^Error while executing topic command : Cannot read --command-config/,
    );
  });
});
