import { afterEach, describe, expect, it } from 'vitest';
import { KafkaError } from '@samsa/client';
import { FakeCluster } from '@samsa/client/testing';
import {
  formatElectionResults,
  javaExceptionName,
  parseReplicaElectionData,
  runLeaderElectionCommand,
  validateLeaderElectionOptions,
  type LeaderElectionDeps,
} from './leader-election.js';

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function cluster(opts: Parameters<typeof FakeCluster.start>[0] = { brokers: 3 }): Promise<FakeCluster> {
  const fc = await FakeCluster.start(opts);
  cleanup.push(() => fc.close());
  return fc;
}

const files = new Map<string, string>();
const deps: LeaderElectionDeps = {
  adminOptions: { retryBackoffMs: 10, retryBackoffMaxMs: 20 },
  readFile: (p) => {
    const f = files.get(p);
    if (f === undefined) throw new Error(`${p} (No such file or directory)`);
    return f;
  },
};

async function run(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runLeaderElectionCommand(args, { out: (s) => (out += s), err: (s) => (err += s) }, deps);
  return { code, out, err };
}

describe('samsa leader-election: options (LeaderElectionCommandOptions)', () => {
  const base = { bootstrapServer: 'h:9092', electionType: 'preferred' };

  it('election type is case-insensitive; a bad one is a parse error', () => {
    for (const t of ['preferred', 'PREFERRED', 'Preferred'])
      expect(validateLeaderElectionOptions({ ...base, electionType: t, allTopicPartitions: true }).electionType).toBe('PREFERRED');
    expect(validateLeaderElectionOptions({ ...base, electionType: 'unClean', allTopicPartitions: true }).electionType).toBe('UNCLEAN');
    expect(() => validateLeaderElectionOptions({ ...base, electionType: 'dirty', allTopicPartitions: true })).toThrow(
      "Cannot parse argument 'dirty' of option election-type",
    );
  });

  it("required options and the one-of rule, in Kafka's order and words", () => {
    expect(() => validateLeaderElectionOptions({ allTopicPartitions: true })).toThrow('Missing required option(s): bootstrap-server, election-type');
    expect(() => validateLeaderElectionOptions({ bootstrapServer: 'h:1', allTopicPartitions: true })).toThrow('Missing required option(s): election-type');
    const oneOf = 'One and only one of the following options is required: topic, all-topic-partitions, path-to-json-file';
    expect(() => validateLeaderElectionOptions(base)).toThrow(oneOf);
    expect(() => validateLeaderElectionOptions({ ...base, allTopicPartitions: true, topic: 't', partition: '0' })).toThrow(oneOf);
    expect(() => validateLeaderElectionOptions({ ...base, allTopicPartitions: true, pathToJsonFile: 'f' })).toThrow(oneOf);
    expect(() => validateLeaderElectionOptions({ ...base, topic: 't' })).toThrow('Missing required option(s): partition');
    expect(() => validateLeaderElectionOptions({ ...base, allTopicPartitions: true, partition: '1' })).toThrow(
      'Option partition is only allowed if topic is used',
    );
    expect(() => validateLeaderElectionOptions({ ...base, topic: 't', partition: 'x' })).toThrow("Cannot parse argument 'x' of option partition");
    expect(() => validateLeaderElectionOptions({ ...base, allTopicPartitions: true, commandConfig: 'a', 'admin.config': 'b' })).toThrow(
      'Option "[admin.config]" can\'t be used with option "[command-config]"',
    );
    expect(validateLeaderElectionOptions({ ...base, topic: 't', partition: '3' })).toMatchObject({ topic: 't', partition: 3, allTopicPartitions: false });
  });

  it("the JSON file: Kafka's format and errors", () => {
    expect(parseReplicaElectionData('{"partitions":[{"topic":"a","partition":1},{"topic":"b","partition":0}]}')).toEqual([
      { topic: 'a', partition: 1 },
      { topic: 'b', partition: 0 },
    ]);
    expect(parseReplicaElectionData('{"partitions":[]}')).toEqual([]);
    expect(() => parseReplicaElectionData('not json')).toThrow('Replica election data is empty');
    expect(() => parseReplicaElectionData('{"version":1}')).toThrow('Replica election data is missing "partitions" field');
    expect(() => parseReplicaElectionData('{"partitions":[{"topic":"a","partition":1},{"topic":"a","partition":1}]}')).toThrow(
      'Replica election data contains duplicate partitions: [a-1]',
    );
    expect(() => parseReplicaElectionData('{"partitions":[{"topic":"a","partition":"1"}]}')).toThrow('partitions[0].partition should be an int');
    expect(() => parseReplicaElectionData('{"partitions":[{"partition":1}]}')).toThrow('partitions[0].topic should be a string');
  });

  it('report lines: succeeded, already elected, then one line per failure with the Java exception', () => {
    const r = formatElectionResults('PREFERRED', [
      { topic: 't', partition: 0, error: null },
      { topic: 't', partition: 1, error: null },
      { topic: 't', partition: 2, error: new KafkaError('PREFERRED_LEADER_NOT_AVAILABLE', 'Failed to elect leader for partition t-2') },
      { topic: 'u', partition: 0, error: new KafkaError('ELECTION_NOT_NEEDED', 'Leader election not needed for topic partition.') },
      { topic: 'u', partition: 1, error: new KafkaError('ELECTION_NOT_NEEDED', 'Leader election not needed for topic partition.') },
      { topic: 'v', partition: 9, error: new KafkaError('UNKNOWN_TOPIC_OR_PARTITION', 'The partition does not exist.') },
    ]);
    expect(r).toEqual({
      failed: 2,
      lines: [
        'Successfully completed leader election (PREFERRED) for partitions t-0, t-1',
        'Valid replica already elected for partitions u-0, u-1',
        'Error completing leader election (PREFERRED) for partition: t-2: org.apache.kafka.common.errors.PreferredLeaderNotAvailableException: Failed to elect leader for partition t-2',
        'Error completing leader election (PREFERRED) for partition: v-9: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: The partition does not exist.',
      ],
    });
    expect(formatElectionResults('UNCLEAN', [])).toEqual({ lines: [], failed: 0 });
    expect(javaExceptionName('ELIGIBLE_LEADERS_NOT_AVAILABLE')).toBe('org.apache.kafka.common.errors.EligibleLeadersNotAvailableException');
    expect(javaExceptionName('INVALID_TOPIC_EXCEPTION')).toBe('org.apache.kafka.common.errors.InvalidTopicException');
    expect(javaExceptionName('CLUSTER_AUTHORIZATION_FAILED')).toBe('org.apache.kafka.common.errors.ClusterAuthorizationException');
  });
});

describe('samsa leader-election against a (fake) cluster', () => {
  it('no arguments: the description and usage on stderr, exit 1; a usage error: the message, exit 1', async () => {
    const none = await run();
    expect(none.code).toBe(1);
    expect(none.out).toBe('');
    expect(none.err).toMatch(/^This tool attempts to elect a new leader for a set of topic partitions\. .*\nUsage: leader-election \[options\]/s);
    expect(await run('--bootstrap-server', 'h:1', '--election-type', 'preferred')).toEqual({
      code: 1,
      out: '',
      err: 'One and only one of the following options is required: topic, all-topic-partitions, path-to-json-file\n',
    });
    expect((await run('--bootstrap-server', 'h:1', '--all-topic-partitions', '--election-type', 'sideways')).err).toBe(
      "Cannot parse argument 'sideways' of option election-type\n",
    );
  });

  it('--all-topic-partitions PREFERRED moves leaders back, goes to the controller, exit 0', async () => {
    const fc = await cluster();
    fc.controllerId = 2;
    const t = fc.addTopic('t', [
      [0, 1],
      [1, 2],
      [2, 0],
    ]);
    t.partitions[0]!.leader = 1;
    t.partitions[2]!.leader = 0;
    const r = await run('--bootstrap-server', fc.broker(0).address, '--election-type', 'PREFERRED', '--all-topic-partitions');
    expect(r).toEqual({ code: 0, out: 'Successfully completed leader election (PREFERRED) for partitions t-0, t-2\n', err: '' });
    expect(t.partitions.map((p) => p.leader)).toEqual([0, 1, 2]);
    const sent = fc.broker(2).requestsFor(43);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.body).toMatchObject({ electionType: 0, topicPartitions: null });
    expect(fc.broker(0).requestsFor(43)).toHaveLength(0);
  });

  it('--topic/--partition: "Valid replica already elected" when the preferred replica leads (exit 0)', async () => {
    const fc = await cluster();
    fc.addTopic('t', [[0, 1]]);
    const r = await run('--bootstrap-server', fc.bootstrapServers, '--election-type', 'preferred', '--topic', 't', '--partition', '0');
    expect(r).toEqual({ code: 0, out: 'Valid replica already elected for partitions t-0\n', err: '' });
    expect(fc.broker(0).requestsFor(43)[0]!.body).toMatchObject({ topicPartitions: [{ topic: 't', partitions: [0] }] });
  });

  it('--path-to-json-file with a failure: every line on stdout, "N replica(s) could not be elected" on stderr, exit 1', async () => {
    const fc = await cluster();
    const t = fc.addTopic('t', [
      [0, 1],
      [1, 0],
      [2, 0],
    ]);
    t.partitions[0]!.leader = 1;
    t.partitions[2]!.leader = 0;
    fc.live.delete(2);
    files.set(
      '/elect.json',
      JSON.stringify({ partitions: [0, 1, 2].map((partition) => ({ topic: 't', partition })).concat([{ topic: 'nope', partition: 0 }]) }),
    );
    const r = await run('--bootstrap-server', fc.broker(0).address, '--election-type', 'preferred', '--path-to-json-file', '/elect.json');
    expect(r.code).toBe(1);
    expect(r.out.split('\n')).toEqual([
      'Successfully completed leader election (PREFERRED) for partitions t-0',
      'Valid replica already elected for partitions t-1',
      'Error completing leader election (PREFERRED) for partition: nope-0: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: The partition does not exist.',
      'Error completing leader election (PREFERRED) for partition: t-2: org.apache.kafka.common.errors.PreferredLeaderNotAvailableException: Failed to elect leader for partition t-2 under strategy PreferredReplicaPartitionLeaderElectionStrategy',
      '',
    ]);
    expect(r.err).toBe('2 replica(s) could not be elected\n');
  });

  it('UNCLEAN elects a live replica for a leaderless partition (ElectLeaders v1+)', async () => {
    const fc = await cluster();
    const t = fc.addTopic('t', [[2, 1]]);
    t.partitions[0]!.isr = [2];
    fc.live.delete(2);
    const r = await run('--bootstrap-server', fc.broker(0).address, '--election-type', 'unclean', '--topic', 't', '--partition', '0');
    expect(r).toEqual({ code: 0, out: 'Successfully completed leader election (UNCLEAN) for partitions t-0\n', err: '' });
    expect(t.partitions[0]!.leader).toBe(1);
    expect(fc.broker(0).requestsFor(43)[0]!.version).toBeGreaterThanOrEqual(1);
  });

  it('a missing JSON file or a bad --command-config: the message on stderr, exit 1; --admin.config is deprecated', async () => {
    const fc = await cluster({ brokers: 1 });
    fc.addTopic('t', [[0]]);
    expect(await run('--bootstrap-server', fc.bootstrapServers, '--election-type', 'preferred', '--path-to-json-file', '/missing.json')).toEqual({
      code: 1,
      out: '',
      err: '/missing.json (No such file or directory)\n',
    });
    files.set('/admin.properties', 'request.timeout.ms=5000\n');
    const r = await run(
      '--bootstrap-server',
      fc.bootstrapServers,
      '--election-type',
      'preferred',
      '--all-topic-partitions',
      '--admin.config',
      '/admin.properties',
    );
    expect(r).toEqual({
      code: 0,
      out: 'Option --admin.config has been deprecated and will be removed in a future version. Use --command-config instead.\n',
      err: '',
    });
    files.set('/bad.properties', 'request.timeout.ms=soon\n');
    const bad = await run(
      '--bootstrap-server',
      fc.bootstrapServers,
      '--election-type',
      'preferred',
      '--all-topic-partitions',
      '--command-config',
      '/bad.properties',
    );
    expect(bad).toEqual({ code: 1, out: '', err: 'Invalid value soon for configuration request.timeout.ms: Not a number of type INT\n' });
  });

  it('an unreachable cluster: "Timeout waiting for election results", exit 1', async () => {
    files.set('/fast.properties', 'default.api.timeout.ms=600\nrequest.timeout.ms=300\nsocket.connection.setup.timeout.ms=200\n');
    const r = await run('--bootstrap-server', '127.0.0.1:1', '--election-type', 'preferred', '--all-topic-partitions', '--command-config', '/fast.properties');
    expect(r.code).toBe(1);
    expect(r.out).toBe('Timeout waiting for election results\n');
    expect(r.err).toMatch(/^Timeout waiting for election results: electLeaders timed out after 600 ms/);
  });
});
