import { afterEach, describe, expect, it } from 'vitest';
import { encodeConsumerAssignment } from '@samsa/client';
import { FakeCluster, type FakeBroker } from '@samsa/client/testing';
import type { ApiRequestMap } from '@samsa/protocol';
import { runConsumerGroupsCommand } from './consumer-groups.js';

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

/** A 1-broker fake cluster coordinating group `g` in `state`, topic t (2 partitions: earliest 0/latest 10+p), committed t-0 = 4. */
async function setup(
  state: string,
  files: Record<string, string> = {},
): Promise<{ fc: FakeCluster; b: FakeBroker; run: (...argv: string[]) => Promise<{ code: number; out: string; err: string }> }> {
  const fc = await FakeCluster.start({ brokers: 1 });
  cleanup.push(() => fc.close());
  fc.addTopic('t', [[0], [0]]);
  const b = fc.broker(0);
  b.on(10, (req, ctx) =>
    ctx.version >= 4
      ? {
          throttleTimeMs: 0,
          errorCode: 0,
          errorMessage: null,
          nodeId: 0,
          host: '',
          port: 0,
          coordinators: req.coordinatorKeys.map((key) => ({ key, nodeId: 0, host: b.host, port: b.port, errorCode: 0, errorMessage: null })),
        }
      : { throttleTimeMs: 0, errorCode: 0, errorMessage: null, nodeId: 0, host: b.host, port: b.port, coordinators: [] },
  );
  b.on(15, (req) => ({
    throttleTimeMs: 0,
    groups: req.groups.map((groupId) => ({
      errorCode: 0,
      groupId,
      groupState: groupId === 'g' ? state : 'Dead',
      protocolType: groupId === 'g' ? 'consumer' : '',
      protocolData: state === 'Stable' ? 'range' : '',
      members:
        groupId === 'g' && state === 'Stable'
          ? [
              {
                memberId: 'm1',
                groupInstanceId: null,
                clientId: 'c1',
                clientHost: '/10.0.0.1',
                memberMetadata: Buffer.alloc(0),
                memberAssignment: encodeConsumerAssignment([{ topic: 't', partitions: [0, 1] }]),
              },
            ]
          : [],
      authorizedOperations: -2147483648,
    })),
  }));
  b.on(9, (req) => ({
    throttleTimeMs: 0,
    errorCode: 0,
    groups: req.groups.map((g) => ({
      groupId: g.groupId,
      errorCode: 0,
      topics:
        g.groupId === 'g'
          ? [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: 4n, committedLeaderEpoch: -1, metadata: '', errorCode: 0 }] }]
          : [],
    })),
    topics: [],
  }));
  b.on(2, (req) => ({
    throttleTimeMs: 0,
    topics: req.topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((p) => ({
        partitionIndex: p.partitionIndex,
        errorCode: 0,
        oldStyleOffsets: [],
        timestamp: -1n,
        offset: p.timestamp === -2n ? 0n : BigInt(10 + p.partitionIndex),
        leaderEpoch: 0,
      })),
    })),
  }));
  b.on(8, (req) => ({
    throttleTimeMs: 0,
    topics: req.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: 0 })) })),
  }));
  const run = async (...argv: string[]) => {
    let out = '';
    let err = '';
    const code = await runConsumerGroupsCommand(
      ['--bootstrap-server', fc.bootstrapServers, ...argv],
      { out: (s) => (out += s), err: (s) => (err += s) },
      {
        adminOptions: { retryBackoffMs: 10, retryBackoffMaxMs: 20 },
        readFile: (path) => {
          if (files[path] === undefined) throw new Error(`no file ${path}`);
          return files[path];
        },
      },
    );
    return { code, out, err };
  };
  return { fc, b, run };
}

describe('samsa consumer-groups (fake broker)', () => {
  it('consumer-groups command – --describe: rows from the member assignment, lag from ListOffsets; an unknown group is an error (exit 1)', async () => {
    const { run } = await setup('Stable');
    const d = await run('--describe', '--group', 'g');
    expect(d.code).toBe(0);
    expect(
      d.out
        .split('\n')
        .slice(2, 4)
        .map((l) => l.split(/\s+/)),
    ).toEqual([
      ['g', 't', '0', '4', '10', '6', 'm1', '/10.0.0.1', 'c1'],
      ['g', 't', '1', '-', '11', '-', 'm1', '/10.0.0.1', 'c1'],
    ]);
    const missing = await run('--describe', '--group', 'nope');
    expect(missing).toEqual({ code: 1, out: "\nError: Consumer group 'nope' does not exist.\n", err: '' });
  });

  it('consumer-groups command – --reset-offsets: a Stable group is refused (exit 1, nothing committed); an Empty group gets OffsetCommit (generation -1) with --execute only', async () => {
    const stable = await setup('Stable');
    const refused = await stable.run('--reset-offsets', '--group', 'g', '--all-topics', '--to-latest', '--execute');
    expect(refused.code).toBe(1);
    expect(refused.out).toContain("\nError: Assignments can only be reset if the group 'g' is inactive, but the current state is Stable.\n");
    expect(stable.b.requestsFor(8)).toHaveLength(0);

    const empty = await setup('Empty');
    const dry = await empty.run('--reset-offsets', '--group', 'g', '--topic', 't', '--to-latest');
    expect(dry.code).toBe(0);
    expect(dry.err).toContain('WARN: No action will be performed as the --execute option is missing.');
    expect(dry.out).toBe(
      '\nGROUP           TOPIC           PARTITION  NEW-OFFSET\ng               t               0          10\ng               t               1          11\n',
    );
    expect(empty.b.requestsFor(8)).toHaveLength(0);
    const done = await empty.run('--reset-offsets', '--group', 'g', '--topic', 't:1', '--to-offset', '3', '--execute');
    expect(done.code).toBe(0);
    const sent = empty.b.requestsFor(8)[0]!.body as ApiRequestMap[8];
    expect(sent).toMatchObject({
      groupId: 'g',
      generationIdOrMemberEpoch: -1,
      memberId: '',
      topics: [{ name: 't', partitions: [{ partitionIndex: 1, committedOffset: 3n }] }],
    });
    const unknown = await empty.run('--reset-offsets', '--group', 'g', '--topic', 't:7', '--to-earliest', '--dry-run');
    expect(unknown).toMatchObject({ code: 1, out: '\nError: Executing consumer group command failed due to The partitions "t-7" do not exist\n' });
  });

  it('consumer-groups command – --from-file: the exported CSV plan, clamped to [earliest, latest]; a group without a plan is an error', async () => {
    const { b, run } = await setup('Empty', { 'plan.csv': 't,0,3\nt,1,99\n', 'other.csv': 'x,t,0,1\n' });
    const r = await run('--reset-offsets', '--group', 'g', '--from-file', 'plan.csv', '--execute');
    expect(r.code).toBe(0);
    expect(r.err).toContain('WARN New offset (99) is higher than latest offset for topic partition t-1. Value will be set to 11.');
    const sent = b.requestsFor(8)[0]!.body as ApiRequestMap[8];
    expect(sent.topics[0]!.partitions.map((p) => [p.partitionIndex, p.committedOffset])).toEqual([
      [0, 3n],
      [1, 11n],
    ]);
    const none = await run('--reset-offsets', '--group', 'g', '--from-file', 'other.csv', '--dry-run');
    expect(none.code).toBe(0);
    expect(none.out).toContain('\nError: No reset plan for group g found.\n');
    const exported = await run('--reset-offsets', '--group', 'g', '--topic', 't', '--to-earliest', '--export');
    expect(exported.out).toBe('t,0,0\nt,1,0\n\n');
  });

  it('consumer-groups command – usage errors go to stderr with exit code 1', async () => {
    const { run } = await setup('Empty');
    const r = await run('--describe');
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err).toContain('Option [describe] takes one of these options: [all-groups], [group]');
  });
});
