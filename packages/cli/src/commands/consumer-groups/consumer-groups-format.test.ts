import { describe, expect, it } from 'vitest';
import {
  assignmentString,
  buildOffsetRows,
  computeResetOffsets,
  formatDeleteGroups,
  formatDeleteOffsets,
  formatGroupStates,
  formatMembers,
  formatOffsets,
  formatResetCsv,
  formatResetOffsets,
  formatState,
  groupStateNotice,
  lagOf,
  parseResetPlan,
  parseTopicArg,
  topicPartitionMap,
} from './consumer-groups-format.js';
import { ConsumerGroupsUsageError } from './consumer-groups-options.js';

const member = (memberId: string, assignment: Array<{ topic: string; partitions: number[] }>, groupInstanceId: string | null = null) => ({
  memberId,
  groupInstanceId,
  clientId: 'app',
  host: '/127.0.0.1',
  assignment,
  subscription: null,
});

const tpm = <V>(entries: Array<[string, number, V]>) => topicPartitionMap(entries.map(([topic, partition, v]) => [{ topic, partition }, v] as const));

describe('consumer-groups output', () => {
  it('consumer-groups output – offsets rows: busiest member first, then committed partitions nobody owns; lag only with both offsets', () => {
    const d = {
      groupId: 'g',
      members: [member('m-small', [{ topic: 't', partitions: [2] }]), member('m-big', [{ topic: 't', partitions: [1, 0] }]), member('m-idle', [])],
    };
    const committed = tpm([
      ['t', 0, 5n],
      ['t', 2, 7n],
      ['other-topic', 0, 3n],
    ]);
    const leo = tpm([
      ['t', 0, 10n],
      ['t', 1, 4n],
      ['t', 2, null],
      ['other-topic', 0, 3n],
    ]);
    const rows = buildOffsetRows(d, committed, leo);
    expect(rows.map((r) => [r.topic, r.partition, r.offset, r.logEndOffset, r.lag, r.consumerId])).toEqual([
      ['t', 0, 5n, 10n, 5n, 'm-big'],
      ['t', 1, null, 4n, null, 'm-big'],
      ['t', 2, 7n, null, null, 'm-small'],
      ['other-topic', 0, 3n, 3n, 0n, '-'],
    ]);
    expect(rows[3]).toMatchObject({ host: '-', clientId: '-' });
    expect(lagOf(-1n, 5n)).toBeNull();
  });

  it('consumer-groups output – the offsets table: leading blank line, Kafka’s widths (15 minimum, wider for long values)', () => {
    const out = formatOffsets([
      {
        group: 'g',
        topic: 't',
        partition: 0,
        offset: 5n,
        logEndOffset: 10n,
        lag: 5n,
        consumerId: 'consumer-1-abc',
        host: '/127.0.0.1',
        clientId: 'consumer-1',
      },
      { group: 'g', topic: 'a-much-longer-topic-name', partition: 1, offset: null, logEndOffset: 4n, lag: null, consumerId: '-', host: '-', clientId: '-' },
    ]);
    expect(out).toBe(
      '\n' +
        'GROUP           TOPIC                    PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID     HOST            CLIENT-ID\n' +
        'g               t                        0          5               10              5               consumer-1-abc  /127.0.0.1      consumer-1\n' +
        'g               a-much-longer-topic-name 1          -               4               -               -               -               -\n',
    );
  });

  it('consumer-groups output – members (#PARTITIONS, verbose ASSIGNMENT, GROUP-INSTANCE-ID only when some member has one) and state', () => {
    const d = {
      groupId: 'g',
      members: [
        member('m1', [
          { topic: 'b', partitions: [3, 1] },
          { topic: 'a', partitions: [0] },
        ]),
        member('m2', []),
      ],
    };
    expect(formatMembers(d, false)).toBe(
      '\nGROUP           CONSUMER-ID     HOST            CLIENT-ID       #PARTITIONS     \n' +
        'g               m1              /127.0.0.1      app             3               \n' +
        'g               m2              /127.0.0.1      app             0               \n',
    );
    expect(formatMembers(d, true).split('\n').slice(1, 4)).toEqual([
      'GROUP           CONSUMER-ID     HOST            CLIENT-ID       #PARTITIONS     ASSIGNMENT',
      'g               m1              /127.0.0.1      app             3               a(0), b(1,3)',
      'g               m2              /127.0.0.1      app             0               -',
    ]);
    const statik = formatMembers({ groupId: 'g', members: [member('m1', [], 'instance-1')] }, false);
    expect(statik.split('\n')[1]).toBe('GROUP           CONSUMER-ID     GROUP-INSTANCE-ID HOST            CLIENT-ID       #PARTITIONS     ');
    expect(assignmentString([])).toBe('-');
    expect(
      formatState({
        groupId: 'g',
        coordinator: { nodeId: 2, host: '127.0.0.1', port: 9092, rack: null },
        partitionAssignor: 'range',
        state: 'Stable',
        members: [member('m', [])],
      }),
    ).toBe(
      '\nGROUP           COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE                #MEMBERS' +
        '\ng               127.0.0.1:9092  (2)       range                Stable               1\n',
    );
    expect(
      formatState({ groupId: 'g', coordinator: { nodeId: 0, host: 'h', port: 1, rack: null }, partitionAssignor: '', state: 'Empty', members: [] }),
    ).toContain('h:1  (0)                  -                    Empty                0');
  });

  it('consumer-groups output – state notices: Dead is an error on stdout, Empty and rebalancing on stderr; tables only with rows', () => {
    expect(groupStateNotice('g', 'Dead', 0)).toEqual({ out: "\nError: Consumer group 'g' does not exist.\n", err: '', failed: true, print: false });
    expect(groupStateNotice('g', 'Empty', 0)).toEqual({ out: '', err: "\nConsumer group 'g' has no active members.\n", failed: false, print: false });
    expect(groupStateNotice('g', 'Empty', 2).print).toBe(true);
    expect(groupStateNotice('g', 'CompletingRebalance', 1)).toMatchObject({ err: "\nWarning: Consumer group 'g' is rebalancing.\n", print: true });
    expect(groupStateNotice('g', 'PreparingRebalance', 1).err).toBe("\nWarning: Consumer group 'g' is rebalancing.\n");
    expect(groupStateNotice('g', 'Stable', 1)).toEqual({ out: '', err: '', failed: false, print: true });
  });

  it('consumer-groups output – --list --state, reset plan, CSV export, deletion reports', () => {
    expect(
      formatGroupStates([
        { groupId: 'orders', state: 'Stable' },
        { groupId: 'a-very-long-group-name', state: 'Empty' },
      ]),
    ).toBe('GROUP                  STATE\n' + 'orders                 Stable\n' + 'a-very-long-group-name Empty\n');
    const plan = new Map([
      [
        'g',
        [
          { topic: 't', partition: 1, offset: 7n },
          { topic: 't', partition: 0, offset: 3n },
        ],
      ],
      ['idle', []],
    ]);
    expect(formatResetOffsets(plan)).toBe(
      '\nGROUP           TOPIC           PARTITION  NEW-OFFSET' +
        '\ng               t               0          3' +
        '\ng               t               1          7\n',
    );
    expect(formatResetCsv(plan, true)).toBe('t,0,3\nt,1,7\n');
    expect(formatResetCsv(plan, false)).toBe('g,t,0,3\ng,t,1,7\n');
    expect(formatDeleteGroups(['a', 'b'], new Map())).toBe("Deletion of requested consumer groups ('a', 'b') was successful.\n");
    expect(formatDeleteGroups(['a'], new Map([['b', 'org.apache.kafka.common.errors.GroupNotEmptyException: The group is not empty.']]))).toBe(
      "\nError: Deletion of some consumer groups failed:\n* Group 'b' could not be deleted due to: org.apache.kafka.common.errors.GroupNotEmptyException: The group is not empty.\n\nThese consumer groups were deleted successfully: 'a'\n",
    );
    expect(formatDeleteOffsets('g', null, [{ topic: 't', partition: 0, error: null }])).toBe(
      'Request succeeded for deleting offsets from group g.\n\nTOPIC           PARTITION  STATUS         \nt               0          Successful     \n',
    );
    const partial = formatDeleteOffsets('g', null, [
      { topic: 't', partition: 1, error: 'X: subscribed' },
      { topic: 'u', partition: -1, error: 'Y: unknown' },
    ]);
    expect(partial.split('\n')).toEqual([
      '',
      'Error: Encountered some partition-level error, see the follow-up details.',
      '',
      'TOPIC           PARTITION  STATUS         ',
      't               1          Error: X: subscribed',
      'u               -          Error: Y: unknown',
      '',
    ]);
    expect(
      formatDeleteOffsets('g', { name: 'GROUP_ID_NOT_FOUND', message: 'The group does not exist.' }, []).startsWith('\nError: The group does not exist.\n'),
    ).toBe(true);
  });

  it('consumer-groups output – reset scenarios: clamping to [earliest, latest], shift without a committed offset, to-current, empty partitions by timestamp', () => {
    const tps = [
      { topic: 't', partition: 0 },
      { topic: 't', partition: 1 },
    ];
    const l = {
      committed: tpm([['t', 0, 8n]]),
      earliest: tpm([
        ['t', 0, 2n],
        ['t', 1, 0n],
      ]),
      latest: tpm([
        ['t', 0, 10n],
        ['t', 1, 4n],
      ]),
      byTimestamp: tpm([
        ['t', 0, 6n],
        ['t', 1, -1n],
      ]),
    };
    const to = computeResetOffsets({ kind: 'to-offset', offset: 5n }, tps, l);
    expect(to.offsets.map((o) => o.offset)).toEqual([5n, 4n]);
    expect(to.err).toBe('WARN New offset (5) is higher than latest offset for topic partition t-1. Value will be set to 4.\n');
    expect(computeResetOffsets({ kind: 'to-offset', offset: 0n }, tps, l).offsets.map((o) => o.offset)).toEqual([2n, 0n]);
    expect(computeResetOffsets({ kind: 'shift-by', shift: -10n }, [tps[0]!], l).offsets[0]!.offset).toBe(2n);
    expect(computeResetOffsets({ kind: 'shift-by', shift: 1n }, [tps[0]!], l).offsets[0]!.offset).toBe(9n);
    expect(() => computeResetOffsets({ kind: 'shift-by', shift: 1n }, tps, l)).toThrow(
      new ConsumerGroupsUsageError('Cannot shift offset for partition t-1 since there is no current committed offset'),
    );
    expect(computeResetOffsets({ kind: 'to-current' }, tps, l).offsets.map((o) => o.offset)).toEqual([8n, 4n]);
    expect(computeResetOffsets({ kind: 'to-earliest' }, tps, l).offsets.map((o) => o.offset)).toEqual([2n, 0n]);
    expect(computeResetOffsets({ kind: 'to-latest' }, tps, l).offsets.map((o) => o.offset)).toEqual([10n, 4n]);
    const ts = computeResetOffsets({ kind: 'to-datetime', timestamp: 0 }, tps, l);
    expect(ts.offsets.map((o) => o.offset)).toEqual([6n, 4n]);
    expect(ts.out).toBe('\nWarn: Partition 1 from topic t is empty. Falling back to latest known offset.\n');
    expect(() => computeResetOffsets({ kind: 'to-earliest' }, [{ topic: 'x', partition: 0 }], l)).toThrow(
      'Error getting starting offset of topic partition: x-0',
    );
  });

  it('consumer-groups output – --from-file plans: `topic,partition,offset` for one group, `group,topic,partition,offset` otherwise', () => {
    expect(parseResetPlan('t,0,5\nt,1,6\n', ['g'])).toEqual(
      new Map([
        [
          'g',
          [
            { topic: 't', partition: 0, offset: 5n },
            { topic: 't', partition: 1, offset: 6n },
          ],
        ],
      ]),
    );
    expect(parseResetPlan('a,t,0,5\nb,t,0,6', ['a', 'b'])).toEqual(
      new Map([
        ['a', [{ topic: 't', partition: 0, offset: 5n }]],
        ['b', [{ topic: 't', partition: 0, offset: 6n }]],
      ]),
    );
    expect(parseResetPlan('a,t,0,5', ['a']).get('a')).toEqual([{ topic: 't', partition: 0, offset: 5n }]);
    expect(() => parseResetPlan('t,x,5', ['g'])).toThrow("Invalid reset plan line 't,x,5'");
  });

  it('consumer-groups output – topic arguments: `t` or `t:0,1`', () => {
    expect(parseTopicArg('t')).toEqual({ topic: 't', partitions: null });
    expect(parseTopicArg('t:0,2')).toEqual({ topic: 't', partitions: [0, 2] });
    expect(() => parseTopicArg('t:a')).toThrow("Invalid partition 'a' specified in topic arg 't:a''");
    expect(() => parseTopicArg('t:0:1')).toThrow("Invalid topic arg 't:0:1', expected topic name and partitions");
  });
});
