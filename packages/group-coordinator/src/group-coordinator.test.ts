/**
 * The group coordinator's state machine and protocol logic with the purgatory's timing wheel on a
 * fake clock (vitest fake timers drive Date.now and setTimeout) and `__consumer_offsets` in memory.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import pino from 'pino';
import { ErrorCode } from '@samsa/protocol';
import { GroupCoordinator, NEW_MEMBER_JOIN_TIMEOUT_MS, type GroupConfig, type JoinGroupParams, type SyncGroupParams } from './group-coordinator.js';
import { GroupMetadata, GroupState, VALID_PREVIOUS_STATES, canTransition } from './group-metadata.js';
import type { JoinGroupResult, SyncGroupResult } from './member-metadata.js';
import type { OffsetAndMetadata } from './records.js';
import { MemoryOffsetsLog, Pending, startTestCoordinator, subscription } from './test-support.js';

const E = ErrorCode;
const GROUP = 'g';
const DELAY = 3000;
const CONFIG: GroupConfig = { groupMinSessionTimeoutMs: 1000, groupMaxSessionTimeoutMs: 60_000, groupMaxSize: 10, groupInitialRebalanceDelayMs: DELAY };
const SUB = subscription(['t']);

let storage: MemoryOffsetsLog;
let coord: GroupCoordinator;

async function flush(): Promise<void> {
  await vi.advanceTimersByTimeAsync(0);
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

async function advance(ms: number): Promise<void> {
  await vi.advanceTimersByTimeAsync(ms);
  await flush();
}

/**
 * Members joining an Empty group together: a member arriving during the initial delay extends it
 * once more (InitialDelayedJoin), so the first generation forms after two delays.
 */
const settle = () => advance(2 * DELAY);

async function newCoordinator(config: Partial<GroupConfig> = {}, s = storage): Promise<GroupCoordinator> {
  return startTestCoordinator(s, { ...CONFIG, ...config });
}

function join(p: Partial<JoinGroupParams> = {}): Pending<JoinGroupResult> {
  const r = new Pending<JoinGroupResult>();
  coord.handleJoinGroup(
    {
      groupId: GROUP,
      memberId: '',
      groupInstanceId: null,
      requireKnownMemberId: false,
      supportSkippingAssignment: false,
      clientId: 'client',
      clientHost: '/127.0.0.1',
      rebalanceTimeoutMs: 10_000,
      sessionTimeoutMs: 5000,
      protocolType: 'consumer',
      protocols: [{ name: 'range', metadata: SUB }],
      reason: null,
      ...p,
    },
    r.callback,
  );
  return r;
}

function sync(p: Partial<SyncGroupParams> & { memberId: string; generationId: number }): Pending<SyncGroupResult> {
  const r = new Pending<SyncGroupResult>();
  coord.handleSyncGroup({ groupId: GROUP, protocolType: null, protocolName: null, groupInstanceId: null, assignments: new Map(), ...p }, r.callback);
  return r;
}

const heartbeat = (memberId: string, generationId: number, groupInstanceId: string | null = null) =>
  coord.handleHeartbeat(GROUP, memberId, groupInstanceId, generationId);
const group = () => coord.groupManager.getGroup(GROUP)!;
const state = () => coord.groupManager.getGroup(GROUP)?.currentState;

function commit(
  memberId: string,
  generationId: number,
  offsets: Array<[string, number, bigint, string?]>,
  groupId = GROUP,
  groupInstanceId: string | null = null,
): Pending<Array<[{ topic: string; partition: number }, number]>> {
  const r = new Pending<Array<[{ topic: string; partition: number }, number]>>();
  const o: Array<[{ topic: string; partition: number }, OffsetAndMetadata]> = offsets.map(([topic, partition, offset, metadata]) => [
    { topic, partition },
    { committedOffset: offset, leaderEpoch: -1, metadata: metadata ?? '', commitTimestampMs: Date.now(), expireTimestampMs: null },
  ]);
  coord.handleCommitOffsets(groupId, memberId, groupInstanceId, generationId, o, r.callback);
  return r;
}

const errors = (r: { value: Array<[unknown, number]> | undefined }) => r.value!.map(([, e]) => e);
const fetched = (groupId = GROUP) => coord.handleFetchOffsets(groupId, false, null).offsets.map(([tp, d]) => [tp.topic, tp.partition, d.offset]);

/** n dynamic members join an empty group and sync: a Stable group of generation 1. */
async function stableGroup(n: number, p: Partial<JoinGroupParams> = {}): Promise<{ ids: string[]; leader: string; generation: number }> {
  const joins = Array.from({ length: n }, () => join(p));
  await (n > 1 ? settle() : advance(DELAY));
  const results = joins.map((j) => j.value!);
  for (const r of results) expect(r.error).toBe(E.NONE);
  const leader = results[0]!.leaderId;
  const generation = results[0]!.generationId;
  const ids = results.map((r) => r.memberId);
  const syncs = ids.map((id) =>
    sync({ memberId: id, generationId: generation, assignments: id === leader ? new Map(ids.map((m, i) => [m, Buffer.from([i])])) : new Map() }),
  );
  await flush();
  for (const s of syncs) expect(s.value!.error).toBe(E.NONE);
  expect(state()).toBe(GroupState.Stable);
  return { ids, leader, generation };
}

beforeEach(async () => {
  vi.useFakeTimers({ now: 1_000_000 });
  storage = new MemoryOffsetsLog();
  storage.leaders.add(0);
  coord = await newCoordinator();
});

afterEach(async () => {
  await coord.shutdown();
  vi.useRealTimers();
});

describe('group state machine (transition table)', () => {
  const states = Object.values(GroupState);
  it('allows exactly Kafka’s transitions and throws on any other', () => {
    const allowed: string[] = [];
    for (const from of states) {
      for (const to of states) {
        if (canTransition(from, to)) allowed.push(`${from}→${to}`);
        const g = new GroupMetadata('x', from);
        if (VALID_PREVIOUS_STATES[to].has(from)) {
          g.transitionTo(to);
          expect(g.currentState).toBe(to);
        } else {
          expect(() => g.transitionTo(to)).toThrow(/should be in the .* states before moving to/);
        }
      }
    }
    expect(allowed.sort()).toEqual(
      [
        'Empty→PreparingRebalance',
        'PreparingRebalance→CompletingRebalance',
        'PreparingRebalance→Empty',
        'CompletingRebalance→Stable',
        'CompletingRebalance→PreparingRebalance',
        'Stable→PreparingRebalance',
        'Empty→Dead',
        'PreparingRebalance→Dead',
        'CompletingRebalance→Dead',
        'Stable→Dead',
        'Dead→Dead',
      ].sort(),
    );
  });

  it('records the time of each transition (currentStateTimestamp)', () => {
    const g = new GroupMetadata('x', GroupState.Empty);
    vi.advanceTimersByTime(500);
    g.transitionTo(GroupState.PreparingRebalance);
    expect(g.currentStateTimestamp).toBe(Date.now());
  });
});

describe('coordinator status errors', () => {
  it('INVALID_GROUP_ID for an empty group id (not for offset APIs), INVALID_SESSION_TIMEOUT outside group.min/max.session.timeout.ms', async () => {
    expect(join({ groupId: '' }).value!.error).toBe(E.INVALID_GROUP_ID);
    expect(heartbeat('m', 1)).toBe(E.UNKNOWN_MEMBER_ID);
    expect(coord.handleHeartbeat('', 'm', null, 1)).toBe(E.INVALID_GROUP_ID);
    expect(coord.handleFetchOffsets('', false, null).error).toBe(E.NONE);
    expect(join({ sessionTimeoutMs: 999 }).value!.error).toBe(E.INVALID_SESSION_TIMEOUT);
    expect(join({ sessionTimeoutMs: 60_001 }).value!.error).toBe(E.INVALID_SESSION_TIMEOUT);
  });

  it('NOT_COORDINATOR for groups of partitions not led here, COORDINATOR_LOAD_IN_PROGRESS while loading (heartbeats answered blindly, SyncGroup REBALANCE_IN_PROGRESS), COORDINATOR_NOT_AVAILABLE before startup', async () => {
    const s2 = new MemoryOffsetsLog();
    let open!: () => void;
    s2.readGate = new Promise((r) => (open = r));
    s2.leaders.add(0);
    await coord.shutdown();
    coord = new GroupCoordinator({
      brokerId: 1,
      groupConfig: CONFIG,
      offsetConfig: {
        maxMetadataSize: 10,
        loadBufferSize: 1024,
        offsetsRetentionMs: 1,
        offsetsRetentionCheckIntervalMs: 1,
        offsetCommitTimeoutMs: 1,
        compression: 0,
      },
      storage: s2,
      logger: pino({ enabled: false }),
      partitionCount: 1,
    });
    expect(join().value!.error).toBe(E.COORDINATOR_NOT_AVAILABLE);
    expect(coord.handleListGroups(new Set(), new Set()).error).toBe(E.COORDINATOR_NOT_AVAILABLE);
    coord.startup(1, false);
    expect(join().value!.error).toBe(E.NOT_COORDINATOR);
    const loading = coord.onElection(0, 3);
    expect(join().value!.error).toBe(E.COORDINATOR_LOAD_IN_PROGRESS);
    expect(heartbeat('m', 1)).toBe(E.NONE);
    expect(sync({ memberId: 'm', generationId: 1 }).value!.error).toBe(E.REBALANCE_IN_PROGRESS);
    expect(coord.handleListGroups(new Set(), new Set()).error).toBe(E.COORDINATOR_LOAD_IN_PROGRESS);
    open();
    await loading;
    expect(join().value).toBeUndefined(); // parked: accepted
    // a stale resignation (older epoch) is ignored; the current one unloads
    coord.onResignation(0, 2);
    expect(state()).toBe(GroupState.PreparingRebalance);
    coord.onResignation(0, 3);
    expect(coord.groupManager.getGroup(GROUP)).toBeUndefined();
    expect(join().value!.error).toBe(E.NOT_COORDINATOR);
  });
});

describe('JoinGroup', () => {
  it('two-step join (v4+): MEMBER_ID_REQUIRED with a <clientId>-<uuid> id, then the member joins with it; the group stays Empty meanwhile', async () => {
    const first = join({ requireKnownMemberId: true });
    expect(first.value).toMatchObject({ error: E.MEMBER_ID_REQUIRED, generationId: -1, leaderId: '' });
    const id = first.value!.memberId;
    expect(id).toMatch(/^client-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(state()).toBe(GroupState.Empty);
    expect(group().isPendingMember(id)).toBe(true);
    const second = join({ memberId: id, requireKnownMemberId: true });
    expect(second.done).toBe(false);
    expect(state()).toBe(GroupState.PreparingRebalance);
    await advance(DELAY);
    expect(second.value).toMatchObject({ error: E.NONE, memberId: id, leaderId: id, generationId: 1, protocolType: 'consumer', protocolName: 'range' });
    expect(second.value!.members).toEqual([{ memberId: id, groupInstanceId: null, metadata: SUB }]);
    expect(state()).toBe(GroupState.CompletingRebalance);
  });

  it('a pending member that never comes back is removed after its session timeout; its id is then unknown', async () => {
    const first = join({ requireKnownMemberId: true, sessionTimeoutMs: 2000 });
    const id = first.value!.memberId;
    await advance(1999);
    expect(group().isPendingMember(id)).toBe(true);
    await advance(1);
    expect(group().isPendingMember(id)).toBe(false);
    expect(join({ memberId: id }).value!.error).toBe(E.UNKNOWN_MEMBER_ID);
  });

  it('a known member id for a group that does not exist is UNKNOWN_MEMBER_ID', () => {
    expect(join({ groupId: 'other', memberId: 'm-1' }).value).toMatchObject({ error: E.UNKNOWN_MEMBER_ID, memberId: 'm-1' });
    expect(coord.groupManager.getGroup('other')).toBeUndefined();
  });

  it('group.initial.rebalance.delay.ms: the first rebalance waits the delay, again while members arrive, bounded by the rebalance timeout', async () => {
    const a = join({ rebalanceTimeoutMs: 10_000 });
    await advance(2000);
    const b = join({ rebalanceTimeoutMs: 10_000 });
    await advance(1000); // t=3000: a member arrived during the delay → another delay of min(3000, 7000)
    expect(a.done || b.done).toBe(false);
    await advance(2999);
    expect(a.done).toBe(false);
    await advance(1); // t=6000
    expect(a.value!.generationId).toBe(1);
    expect(b.value!.generationId).toBe(1);
    expect(a.value!.members).toHaveLength(2);
    expect(b.value!.members).toEqual([]);
  });

  it('the initial delay stops extending once the rebalance timeout is used up', async () => {
    const a = join({ rebalanceTimeoutMs: 4000 });
    // remaining after the first delay: 4000 - 3000 = 1000 → at most one extension of 1000
    for (let t = 0; t < 10; t++) {
      await advance(500);
      if (!a.done) join({ rebalanceTimeoutMs: 4000 });
    }
    expect(a.value!.generationId).toBe(1);
    expect(Date.now() - 1_000_000).toBe(5000);
  });

  it('the group protocol is chosen by vote among the protocols every member supports', async () => {
    const a = join({
      protocols: [
        { name: 'range', metadata: SUB },
        { name: 'roundrobin', metadata: SUB },
        { name: 'sticky', metadata: SUB },
      ],
    });
    const b = join({
      protocols: [
        { name: 'roundrobin', metadata: SUB },
        { name: 'range', metadata: SUB },
      ],
    });
    const c = join({
      protocols: [
        { name: 'sticky', metadata: SUB },
        { name: 'roundrobin', metadata: SUB },
        { name: 'range', metadata: SUB },
      ],
    });
    await settle();
    // candidates {range, roundrobin} (sticky is not supported by b): votes range 1, roundrobin 2
    for (const r of [a, b, c]) expect(r.value!.protocolName).toBe('roundrobin');
  });

  it('INCONSISTENT_GROUP_PROTOCOL: no common protocol, another protocol type, or an empty type/list for an empty group', async () => {
    join();
    expect(join({ protocols: [{ name: 'roundrobin', metadata: SUB }] }).value!.error).toBe(E.INCONSISTENT_GROUP_PROTOCOL);
    expect(join({ protocolType: 'connect' }).value!.error).toBe(E.INCONSISTENT_GROUP_PROTOCOL);
    expect(join({ groupId: 'fresh', protocolType: '' }).value!.error).toBe(E.INCONSISTENT_GROUP_PROTOCOL);
    expect(join({ groupId: 'fresh2', protocols: [] }).value!.error).toBe(E.INCONSISTENT_GROUP_PROTOCOL);
  });

  it('GROUP_MAX_SIZE_REACHED beyond group.max.size', async () => {
    await coord.shutdown();
    coord = await newCoordinator({ groupMaxSize: 2 });
    join();
    join();
    await settle();
    const third = join();
    expect(third.value).toMatchObject({ error: E.GROUP_MAX_SIZE_REACHED, memberId: '' });
  });

  it('a follower rejoining a Stable group with the same metadata gets the current generation without a rebalance; new metadata or the leader rejoining rebalances', async () => {
    const { ids, leader, generation } = await stableGroup(2);
    const follower = ids.find((x) => x !== leader)!;
    const same = join({ memberId: follower });
    expect(same.value).toMatchObject({ error: E.NONE, generationId: generation, leaderId: leader, members: [] });
    expect(state()).toBe(GroupState.Stable);
    const changed = join({ memberId: follower, protocols: [{ name: 'range', metadata: subscription(['t', 'u']) }] });
    expect(changed.done).toBe(false);
    expect(state()).toBe(GroupState.PreparingRebalance);
    const l = join({ memberId: leader });
    expect(l.value!.generationId).toBe(generation + 1);
    expect(changed.value!.generationId).toBe(generation + 1);
    // leader rejoining a Stable group rebalances too
    await flush();
    const syncs = [
      sync({ memberId: leader, generationId: generation + 1, assignments: new Map() }),
      sync({ memberId: follower, generationId: generation + 1 }),
    ];
    await flush();
    expect(syncs.map((s) => s.value!.error)).toEqual([E.NONE, E.NONE]);
    join({ memberId: leader });
    expect(state()).toBe(GroupState.PreparingRebalance);
  });

  it('in CompletingRebalance a member rejoining with the same metadata gets the JoinGroup answer again (the leader with the members)', async () => {
    const a = join();
    const b = join();
    await settle();
    const leader = a.value!.leaderId;
    const again = join({ memberId: leader });
    expect(again.value).toMatchObject({ error: E.NONE, generationId: 1, leaderId: leader });
    expect(again.value!.members).toHaveLength(2);
    expect(state()).toBe(GroupState.CompletingRebalance);
    // different metadata during CompletingRebalance: parked syncs get REBALANCE_IN_PROGRESS
    const follower = b.value!.memberId === leader ? a.value!.memberId : b.value!.memberId;
    const parked = sync({ memberId: follower, generationId: 1 });
    expect(parked.done).toBe(false);
    join({ memberId: leader, protocols: [{ name: 'range', metadata: subscription(['x']) }] });
    expect(parked.value!.error).toBe(E.REBALANCE_IN_PROGRESS);
    expect(state()).toBe(GroupState.PreparingRebalance);
  });

  it('DelayedJoin waits for the largest rebalance timeout; members that did not rejoin are removed and the leader moves to one that did', async () => {
    const a = join({ rebalanceTimeoutMs: 5000, sessionTimeoutMs: 30_000 });
    const b = join({ rebalanceTimeoutMs: 8000, sessionTimeoutMs: 30_000 });
    await settle();
    const leader = a.value!.leaderId;
    const follower = [a, b].map((x) => x.value!.memberId).find((x) => x !== leader)!;
    const s1 = sync({ memberId: leader, generationId: 1, assignments: new Map() });
    sync({ memberId: follower, generationId: 1 });
    await flush();
    expect(s1.value!.error).toBe(E.NONE);
    // the follower forces a rebalance; the leader never rejoins (it keeps heartbeating)
    const rejoin = join({
      memberId: follower,
      rebalanceTimeoutMs: 8000,
      sessionTimeoutMs: 30_000,
      protocols: [{ name: 'range', metadata: subscription(['y']) }],
    });
    expect(heartbeat(leader, 1)).toBe(E.REBALANCE_IN_PROGRESS);
    await advance(7999);
    expect(rejoin.done).toBe(false);
    await advance(1);
    expect(rejoin.value).toMatchObject({ error: E.NONE, generationId: 2, leaderId: follower });
    expect(group().has(leader)).toBe(false);
    expect(heartbeat(leader, 1)).toBe(E.UNKNOWN_MEMBER_ID);
  });

  it('a new member’s JoinGroup is parked at most NewMemberJoinTimeoutMs (5 min), then answered UNKNOWN_MEMBER_ID', async () => {
    const { ids, leader } = await stableGroup(1, { rebalanceTimeoutMs: 600_000, sessionTimeoutMs: 60_000 });
    // the old member keeps heartbeating but never rejoins; a new member waits for it
    const late = join({ rebalanceTimeoutMs: 600_000 });
    expect(state()).toBe(GroupState.PreparingRebalance);
    for (let t = 0; t < NEW_MEMBER_JOIN_TIMEOUT_MS; t += 20_000) {
      expect(heartbeat(ids[0]!, 1)).toBe(E.REBALANCE_IN_PROGRESS);
      await advance(20_000);
    }
    expect(late.value).toMatchObject({ error: E.UNKNOWN_MEMBER_ID, memberId: '' });
    expect(group().size).toBe(1);
    expect(group().isLeader(leader)).toBe(true);
  });
});

describe('SyncGroup', () => {
  it('followers wait for the leader; its assignment is stored (GroupMetadataValue) and handed out; left-out members get an empty one; Stable', async () => {
    const joins = [join(), join(), join()];
    await settle();
    const leader = joins[0]!.value!.leaderId;
    const ids = joins.map((j) => j.value!.memberId);
    const followers = ids.filter((x) => x !== leader);
    const f1 = sync({ memberId: followers[0]!, generationId: 1 });
    expect(f1.done).toBe(false);
    const l = sync({
      memberId: leader,
      generationId: 1,
      assignments: new Map([
        [leader, Buffer.from('L')],
        [followers[0]!, Buffer.from('F')],
      ]),
    });
    expect(l.done).toBe(false); // waits for the append
    await flush();
    expect(l.value).toMatchObject({ error: E.NONE, protocolType: 'consumer', protocolName: 'range', assignment: Buffer.from('L') });
    expect(f1.value!.assignment).toEqual(Buffer.from('F'));
    expect(state()).toBe(GroupState.Stable);
    const f2 = sync({ memberId: followers[1]!, generationId: 1 });
    expect(f2.value).toMatchObject({ error: E.NONE, assignment: Buffer.alloc(0) });
    const stored = storage.records().filter((r) => r.key.type === 'group');
    expect(stored).toHaveLength(1);
    expect(stored[0]!.value).toMatchObject({ protocolType: 'consumer', generation: 1, protocol: 'range', leader });
    expect((stored[0]!.value as { members: unknown[] }).members).toHaveLength(3);
  });

  it('error paths: UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, INCONSISTENT_GROUP_PROTOCOL, REBALANCE_IN_PROGRESS during PreparingRebalance, UNKNOWN_MEMBER_ID for a missing group', async () => {
    const a = join();
    expect(sync({ memberId: 'x', generationId: 0 }).value!.error).toBe(E.UNKNOWN_MEMBER_ID);
    const b = join();
    await settle();
    const id = a.value!.memberId;
    const other = b.value!.memberId;
    expect(sync({ memberId: id, generationId: 7 }).value!.error).toBe(E.ILLEGAL_GENERATION);
    expect(sync({ memberId: id, generationId: 1, protocolType: 'connect' }).value!.error).toBe(E.INCONSISTENT_GROUP_PROTOCOL);
    expect(sync({ memberId: id, generationId: 1, protocolName: 'roundrobin' }).value!.error).toBe(E.INCONSISTENT_GROUP_PROTOCOL);
    const leader = a.value!.leaderId;
    expect(sync({ memberId: leader, generationId: 1, protocolType: 'consumer', protocolName: 'range', assignments: new Map() }).done).toBe(false);
    sync({ memberId: leader === id ? other : id, generationId: 1 });
    await flush();
    expect(state()).toBe(GroupState.Stable);
    // one member rejoins with new metadata; the other has not rejoined yet
    join({ memberId: id, protocols: [{ name: 'range', metadata: subscription(['z']) }] });
    expect(state()).toBe(GroupState.PreparingRebalance);
    expect(sync({ memberId: other, generationId: 1 }).value!.error).toBe(E.REBALANCE_IN_PROGRESS);
    const missing = new Pending<SyncGroupResult>();
    coord.handleSyncGroup(
      { groupId: 'nope', generationId: 1, memberId: 'm', protocolType: null, protocolName: null, groupInstanceId: null, assignments: new Map() },
      missing.callback,
    );
    expect(missing.value!.error).toBe(E.UNKNOWN_MEMBER_ID);
  });

  it('a failed assignment write (NOT_LEADER_OR_FOLLOWER → NOT_COORDINATOR, REQUEST_TIMED_OUT → REBALANCE_IN_PROGRESS) answers every waiting member and rebalances', async () => {
    for (const [append, answer] of [
      [E.NOT_LEADER_OR_FOLLOWER, E.NOT_COORDINATOR],
      [E.REQUEST_TIMED_OUT, E.REBALANCE_IN_PROGRESS],
      [E.NOT_ENOUGH_REPLICAS, E.COORDINATOR_NOT_AVAILABLE],
    ] as const) {
      const g = `g-${append}`;
      const j = [join({ groupId: g }), join({ groupId: g })];
      await settle();
      const leader = j[0]!.value!.leaderId;
      const follower = j.map((x) => x.value!.memberId).find((x) => x !== leader)!;
      const fs = new Pending<SyncGroupResult>();
      coord.handleSyncGroup(
        { groupId: g, generationId: 1, memberId: follower, protocolType: null, protocolName: null, groupInstanceId: null, assignments: new Map() },
        fs.callback,
      );
      storage.nextError = append;
      const ls = new Pending<SyncGroupResult>();
      coord.handleSyncGroup(
        { groupId: g, generationId: 1, memberId: leader, protocolType: null, protocolName: null, groupInstanceId: null, assignments: new Map() },
        ls.callback,
      );
      await flush();
      expect([ls.value!.error, fs.value!.error]).toEqual([answer, answer]);
      expect(coord.groupManager.getGroup(g)!.currentState).toBe(GroupState.PreparingRebalance);
    }
  });

  it('members that do not send SyncGroup within the rebalance timeout are removed and the group rebalances', async () => {
    const j = [join({ rebalanceTimeoutMs: 4000 }), join({ rebalanceTimeoutMs: 4000 })];
    await settle();
    const leader = j[0]!.value!.leaderId;
    const follower = j.map((x) => x.value!.memberId).find((x) => x !== leader)!;
    sync({ memberId: leader, generationId: 1, assignments: new Map() });
    await flush();
    expect(state()).toBe(GroupState.Stable);
    await advance(4000);
    expect(group().has(follower)).toBe(false);
    expect(state()).toBe(GroupState.PreparingRebalance);
  });
});

describe('Heartbeat and session expiry', () => {
  it('answers per state: NONE when Stable or CompletingRebalance, REBALANCE_IN_PROGRESS while preparing, ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID', async () => {
    const a = join();
    const b = join();
    await settle();
    const ids = [a, b].map((x) => x.value!.memberId);
    expect(heartbeat(ids[0]!, 1)).toBe(E.NONE); // CompletingRebalance
    expect(heartbeat(ids[0]!, 0)).toBe(E.ILLEGAL_GENERATION);
    expect(heartbeat('stranger', 1)).toBe(E.UNKNOWN_MEMBER_ID);
    expect(coord.handleHeartbeat('nope', ids[0]!, null, 1)).toBe(E.UNKNOWN_MEMBER_ID);
    const leader = a.value!.leaderId;
    sync({ memberId: leader, generationId: 1, assignments: new Map() });
    sync({ memberId: ids.find((x) => x !== leader)!, generationId: 1 });
    await flush();
    expect(heartbeat(ids[1]!, 1)).toBe(E.NONE); // Stable
    join({ memberId: leader });
    expect(heartbeat(ids[1]!, 1)).toBe(E.REBALANCE_IN_PROGRESS);
  });

  it('a member that stops heartbeating is removed after session.timeout.ms; the others rebalance without it', async () => {
    const { ids } = await stableGroup(2, { sessionTimeoutMs: 6000 });
    const [alive, dead] = ids as [string, string];
    for (let t = 0; t < 5; t++) {
      await advance(1000);
      expect(heartbeat(alive, 1)).toBe(E.NONE);
    }
    await advance(1000); // 6 s after dead's last sign of life (its SyncGroup)
    expect(group().has(dead)).toBe(false);
    expect(state()).toBe(GroupState.PreparingRebalance);
    expect(heartbeat(alive, 1)).toBe(E.REBALANCE_IN_PROGRESS);
    const r = join({ memberId: alive, sessionTimeoutMs: 6000 });
    expect(r.value).toMatchObject({ error: E.NONE, generationId: 2, leaderId: alive });
    expect(r.value!.members.map((m) => m.memberId)).toEqual([alive]);
  });

  it('heartbeats keep a member alive indefinitely; offset commits count as heartbeats', async () => {
    const { ids } = await stableGroup(1, { sessionTimeoutMs: 2000 });
    for (let t = 0; t < 20; t++) {
      await advance(1500);
      if (t % 2 === 0) expect(heartbeat(ids[0]!, 1)).toBe(E.NONE);
      else {
        const r = commit(ids[0]!, 1, [['t', 0, BigInt(t)]]);
        await flush();
        expect(errors(r)).toEqual([E.NONE]);
      }
    }
    expect(group().has(ids[0]!)).toBe(true);
    expect(state()).toBe(GroupState.Stable);
  });

  it('the last member expiring empties the group (Empty, next generation, empty metadata stored)', async () => {
    await stableGroup(1, { sessionTimeoutMs: 2000 });
    await advance(2000);
    expect(state()).toBe(GroupState.Empty);
    expect(group().generationId).toBe(2);
    const last = storage
      .records()
      .filter((r) => r.key.type === 'group')
      .at(-1)!;
    expect(last.value).toMatchObject({ generation: 2, protocol: null, leader: null, members: [] });
  });
});

describe('LeaveGroup', () => {
  it('a member leaving a Stable group triggers a rebalance; the last one leaving empties the group', async () => {
    const { ids } = await stableGroup(2);
    const r = coord.handleLeaveGroup(GROUP, [{ memberId: ids[1]!, groupInstanceId: null, reason: 'bye' }]);
    expect(r).toEqual({ topLevelError: E.NONE, members: [{ memberId: ids[1], groupInstanceId: null, error: E.NONE }] });
    expect(state()).toBe(GroupState.PreparingRebalance);
    const again = join({ memberId: ids[0]! });
    expect(again.value!.generationId).toBe(2);
    // the last member leaves (CompletingRebalance → PreparingRebalance): nobody left to wait for,
    // the join completes at once → Empty, next generation
    coord.handleLeaveGroup(GROUP, [{ memberId: ids[0]!, groupInstanceId: null, reason: null }]);
    expect(state()).toBe(GroupState.Empty);
    expect(group().generationId).toBe(3);
  });

  it('batched (v3+): unknown members, pending members, removal by group.instance.id, fenced instance ids; missing group', async () => {
    const pending = join({ requireKnownMemberId: true, sessionTimeoutMs: 30_000 }).value!.memberId;
    const s = join({ groupInstanceId: 'inst-1' });
    await settle();
    const staticId = s.value!.memberId;
    const r = coord.handleLeaveGroup(GROUP, [
      { memberId: 'ghost', groupInstanceId: null, reason: null },
      { memberId: pending, groupInstanceId: null, reason: null },
      { memberId: 'wrong-id', groupInstanceId: 'inst-1', reason: null },
      { memberId: '', groupInstanceId: 'inst-1', reason: null },
      { memberId: '', groupInstanceId: 'inst-x', reason: null },
    ]);
    expect(r.members.map((m) => m.error)).toEqual([E.UNKNOWN_MEMBER_ID, E.NONE, E.FENCED_INSTANCE_ID, E.NONE, E.UNKNOWN_MEMBER_ID]);
    expect(group().has(staticId)).toBe(false);
    expect(coord.handleLeaveGroup('missing', [{ memberId: 'm', groupInstanceId: null, reason: null }])).toEqual({
      topLevelError: E.NONE,
      members: [{ memberId: 'm', groupInstanceId: null, error: E.UNKNOWN_MEMBER_ID }],
    });
  });
});

describe('static membership', () => {
  it('no MEMBER_ID_REQUIRED; a restarted static member (same group.instance.id, no member id) replaces the old id without a rebalance; the old id is FENCED_INSTANCE_ID', async () => {
    const a = join({ groupInstanceId: 'i-a', requireKnownMemberId: false });
    const b = join({ groupInstanceId: 'i-b' });
    await settle();
    const leader = a.value!.leaderId;
    const ids = [a.value!.memberId, b.value!.memberId];
    expect(ids[0]).toMatch(/^i-a-/);
    sync({
      memberId: ids[0]!,
      generationId: 1,
      groupInstanceId: 'i-a',
      assignments: new Map([
        [ids[0]!, Buffer.from('A')],
        [ids[1]!, Buffer.from('B')],
      ]),
    });
    sync({ memberId: ids[1]!, generationId: 1, groupInstanceId: 'i-b' });
    await flush();
    expect(state()).toBe(GroupState.Stable);
    const restarted = join({ groupInstanceId: 'i-b' });
    await flush();
    const newId = restarted.value!.memberId;
    expect(restarted.value).toMatchObject({ error: E.NONE, generationId: 1, leaderId: leader, members: [] });
    expect(newId).not.toBe(ids[1]);
    expect(state()).toBe(GroupState.Stable);
    expect(heartbeat(ids[1]!, 1, 'i-b')).toBe(E.FENCED_INSTANCE_ID);
    expect(heartbeat(newId, 1, 'i-b')).toBe(E.NONE);
    // it keeps its assignment
    expect(sync({ memberId: newId, generationId: 1, groupInstanceId: 'i-b' }).value!.assignment).toEqual(Buffer.from('B'));
    expect(commit(ids[1]!, 1, [['t', 0, 1n]], GROUP, 'i-b').value!.map(([, e]) => e)).toEqual([E.FENCED_INSTANCE_ID]);
  });

  it('static members that miss a rebalance stay in the group (only dynamic ones are dropped)', async () => {
    const a = join({ groupInstanceId: 'i-a', rebalanceTimeoutMs: 4000, sessionTimeoutMs: 60_000 });
    const d = join({ rebalanceTimeoutMs: 4000, sessionTimeoutMs: 60_000 });
    await settle();
    const leader = a.value!.leaderId;
    const dyn = d.value!.memberId;
    const st = a.value!.memberId;
    sync({ memberId: leader, generationId: 1, assignments: new Map(), groupInstanceId: leader === st ? 'i-a' : null });
    sync({ memberId: leader === st ? dyn : st, generationId: 1, groupInstanceId: leader === st ? null : 'i-a' });
    await flush();
    const r = join({ memberId: dyn, rebalanceTimeoutMs: 4000, sessionTimeoutMs: 60_000, protocols: [{ name: 'range', metadata: subscription(['q']) }] });
    await advance(4000);
    expect(r.value!.generationId).toBe(2);
    expect(group().has(st)).toBe(true);
  });

  it('JoinGroup v9: a replaced static leader learns it leads but skips the assignment', async () => {
    const a = join({ groupInstanceId: 'i-a', supportSkippingAssignment: true });
    await advance(DELAY);
    const id = a.value!.memberId;
    sync({ memberId: id, generationId: 1, groupInstanceId: 'i-a', assignments: new Map([[id, Buffer.from('A')]]) });
    await flush();
    const again = join({ groupInstanceId: 'i-a', supportSkippingAssignment: true });
    await flush();
    expect(again.value).toMatchObject({ error: E.NONE, skipAssignment: true, generationId: 1 });
    expect(again.value!.leaderId).toBe(again.value!.memberId);
    expect(again.value!.members).toHaveLength(1);
  });
});

describe('OffsetCommit and OffsetFetch', () => {
  it('simple commits (generation -1) create an offsets-only Empty group; a positive generation for an unknown group is ILLEGAL_GENERATION', async () => {
    const r = commit(
      '',
      -1,
      [
        ['t', 0, 42n, 'meta'],
        ['t', 1, 7n],
      ],
      'simple',
    );
    await flush();
    expect(errors(r)).toEqual([E.NONE, E.NONE]);
    expect(coord.groupManager.getGroup('simple')!.currentState).toBe(GroupState.Empty);
    expect(fetched('simple')).toEqual([
      ['t', 0, 42n],
      ['t', 1, 7n],
    ]);
    const d = coord.handleFetchOffsets('simple', false, [
      { topic: 't', partition: 0 },
      { topic: 't', partition: 9 },
    ]);
    expect(d.offsets.map(([, x]) => x)).toEqual([
      { offset: 42n, leaderEpoch: -1, metadata: 'meta', error: E.NONE },
      { offset: -1n, leaderEpoch: -1, metadata: '', error: E.NONE },
    ]);
    expect(errors(commit('', 3, [['t', 0, 1n]], 'unknown-group'))).toEqual([E.ILLEGAL_GENERATION]);
    expect(coord.handleFetchOffsets('unknown-group', false, [{ topic: 't', partition: 0 }]).offsets[0]![1].offset).toBe(-1n);
  });

  it('member commits: generation and membership checks; REBALANCE_IN_PROGRESS while CompletingRebalance; allowed while PreparingRebalance; non-members of a non-empty group get UNKNOWN_MEMBER_ID', async () => {
    const a = join();
    const b = join();
    await settle();
    const leader = a.value!.leaderId;
    const follower = [a, b].map((x) => x.value!.memberId).find((x) => x !== leader)!;
    expect(errors(commit(leader, 1, [['t', 0, 5n]]))).toEqual([E.REBALANCE_IN_PROGRESS]);
    sync({ memberId: leader, generationId: 1, assignments: new Map() });
    sync({ memberId: follower, generationId: 1 });
    await flush();
    const ok = commit(leader, 1, [['t', 0, 5n]]);
    await flush();
    expect(errors(ok)).toEqual([E.NONE]);
    expect(errors(commit(leader, 0, [['t', 0, 6n]]))).toEqual([E.ILLEGAL_GENERATION]);
    expect(errors(commit('stranger', 1, [['t', 0, 6n]]))).toEqual([E.UNKNOWN_MEMBER_ID]);
    expect(errors(commit('', -1, [['t', 0, 6n]]))).toEqual([E.UNKNOWN_MEMBER_ID]);
    join({ memberId: leader });
    const during = commit(follower, 1, [['t', 1, 9n]]);
    await flush();
    expect(errors(during)).toEqual([E.NONE]);
    expect(fetched()).toEqual([
      ['t', 0, 5n],
      ['t', 1, 9n],
    ]);
    const rec = storage.records().filter((r) => r.key.type === 'offset');
    expect(rec.map((r) => [r.key, (r.value as OffsetAndMetadata).committedOffset])).toEqual([
      [{ type: 'offset', version: 1, group: GROUP, topic: 't', partition: 0 }, 5n],
      [{ type: 'offset', version: 1, group: GROUP, topic: 't', partition: 1 }, 9n],
    ]);
  });

  it('OFFSET_METADATA_TOO_LARGE per partition; failed appends are translated (NOT_LEADER_OR_FOLLOWER → NOT_COORDINATOR) and not cached', async () => {
    const r = commit(
      '',
      -1,
      [
        ['t', 0, 1n, 'x'.repeat(11)],
        ['t', 1, 2n, 'ok'],
      ],
      'm',
    );
    await flush();
    expect(errors(r)).toEqual([E.OFFSET_METADATA_TOO_LARGE, E.NONE]);
    storage.nextError = E.NOT_LEADER_OR_FOLLOWER;
    const f = commit('', -1, [['t', 2, 3n]], 'm');
    await flush();
    expect(errors(f)).toEqual([E.NOT_COORDINATOR]);
    storage.nextError = E.MESSAGE_TOO_LARGE;
    const big = commit('', -1, [['t', 2, 3n]], 'm');
    await flush();
    expect(errors(big)).toEqual([E.INVALID_COMMIT_OFFSET_SIZE]);
    expect(fetched('m')).toEqual([['t', 1, 2n]]);
  });

  it('requireStable: UNSTABLE_OFFSET_COMMIT while a commit is being replicated; the offset is visible only once it is', async () => {
    commit('', -1, [['t', 0, 1n]], 's');
    await flush();
    storage.hold = true;
    const r = commit('', -1, [['t', 0, 2n]], 's');
    await flush();
    expect(r.done).toBe(false);
    expect(coord.handleFetchOffsets('s', true, [{ topic: 't', partition: 0 }]).offsets[0]![1].error).toBe(E.UNSTABLE_OFFSET_COMMIT);
    expect(coord.handleFetchOffsets('s', false, [{ topic: 't', partition: 0 }]).offsets[0]![1].offset).toBe(1n);
    storage.release();
    await flush();
    expect(errors(r)).toEqual([E.NONE]);
    expect(coord.handleFetchOffsets('s', true, [{ topic: 't', partition: 0 }]).offsets[0]![1]).toMatchObject({ offset: 2n, error: E.NONE });
  });

  it('offsets of deleted topics are dropped (tombstones)', async () => {
    commit(
      '',
      -1,
      [
        ['gone', 0, 1n],
        ['kept', 0, 2n],
      ],
      'd',
    );
    await flush();
    coord.handleDeletedTopics(['gone']);
    await flush();
    expect(fetched('d')).toEqual([['kept', 0, 2n]]);
    expect(storage.records().at(-1)).toMatchObject({ key: { type: 'offset', group: 'd', topic: 'gone', partition: 0 }, value: null });
  });

  it('offsets.retention.minutes: an Empty group’s offsets expire after the retention since it became Empty; then the group is Dead and gone', async () => {
    await coord.shutdown();
    coord = new GroupCoordinator({
      brokerId: 1,
      groupConfig: CONFIG,
      offsetConfig: {
        maxMetadataSize: 100,
        loadBufferSize: 1 << 20,
        offsetsRetentionMs: 60_000,
        offsetsRetentionCheckIntervalMs: 10_000,
        offsetCommitTimeoutMs: 5000,
        compression: 0,
      },
      storage,
      logger: pino({ enabled: false }),
      partitionCount: 1,
    });
    coord.startup(1, true);
    await coord.onElection(0, 0);
    commit('', -1, [['t', 0, 1n]], 'old');
    await flush();
    await advance(50_000);
    expect(fetched('old')).toEqual([['t', 0, 1n]]);
    await advance(20_000);
    expect(coord.groupManager.getGroup('old')).toBeUndefined();
    expect(storage.records().at(-1)).toMatchObject({ key: { type: 'offset', group: 'old' }, value: null });
  });
});

describe('DeleteGroups, ListGroups, DescribeGroups', () => {
  it('deletes Empty groups with their offsets; NON_EMPTY_GROUP, GROUP_ID_NOT_FOUND', async () => {
    commit('', -1, [['t', 0, 1n]], 'empty');
    await flush();
    await stableGroup(1);
    const r = coord.handleDeleteGroups(['empty', GROUP, 'missing']);
    expect(Object.fromEntries(r)).toEqual({ empty: E.NONE, [GROUP]: E.NON_EMPTY_GROUP, missing: E.GROUP_ID_NOT_FOUND });
    expect(coord.groupManager.getGroup('empty')).toBeUndefined();
    expect(fetched('empty')).toEqual([]);
    await flush();
    expect(storage.records().at(-1)).toMatchObject({ key: { type: 'offset', group: 'empty', topic: 't' }, value: null });
  });

  it('lists groups with state and type filters; describes Stable groups with metadata, others without, unknown ones as Dead', async () => {
    commit('', -1, [['t', 0, 1n]], 'e');
    await flush();
    const { ids } = await stableGroup(1);
    const all = coord.handleListGroups(new Set(), new Set());
    expect(all.groups.map((g) => [g.groupId, g.state, g.protocolType, g.groupType]).sort()).toEqual([
      ['e', 'Empty', '', 'classic'],
      [GROUP, 'Stable', 'consumer', 'classic'],
    ]);
    expect(coord.handleListGroups(new Set(['STABLE']), new Set()).groups.map((g) => g.groupId)).toEqual([GROUP]);
    expect(coord.handleListGroups(new Set(), new Set(['consumer'])).groups).toEqual([]);
    expect(coord.handleListGroups(new Set(), new Set(['Classic'])).groups).toHaveLength(2);
    const d = coord.handleDescribeGroup(GROUP);
    expect(d.summary).toMatchObject({ state: 'Stable', protocolType: 'consumer', protocol: 'range' });
    expect(d.summary.members).toEqual([
      { memberId: ids[0], groupInstanceId: null, clientId: 'client', clientHost: '/127.0.0.1', metadata: SUB, assignment: Buffer.from([0]) },
    ]);
    expect(coord.handleDescribeGroup('nope')).toEqual({ error: E.NONE, summary: { state: 'Dead', protocolType: '', protocol: '', members: [] } });
    // the only member (the leader) rejoins: the next generation forms at once, CompletingRebalance
    join({ memberId: ids[0]! });
    expect(coord.handleDescribeGroup(GROUP).summary).toMatchObject({ state: 'CompletingRebalance', protocol: '' });
    expect(coord.handleDescribeGroup(GROUP).summary.members[0]!.metadata).toEqual(Buffer.alloc(0));
  });
});

describe('persistence and coordinator failover', () => {
  it('a new coordinator of the partition loads groups (Stable with members and assignments) and offsets from the log; sessions restart', async () => {
    const { ids, leader } = await stableGroup(2, { sessionTimeoutMs: 5000 });
    const c1 = commit(ids[0]!, 1, [
      ['t', 0, 10n],
      ['t', 1, 20n],
    ]);
    await flush();
    expect(errors(c1)).toEqual([E.NONE, E.NONE]);
    commit('', -1, [['u', 0, 3n]], 'offsets-only');
    await flush();
    // the partition moves away: parked and future requests answer NOT_COORDINATOR
    coord.onResignation(0, 1);
    expect(heartbeat(ids[0]!, 1)).toBe(E.NOT_COORDINATOR);
    await coord.shutdown();
    // another broker (same log) takes over
    coord = await newCoordinator();
    const g = group();
    expect(g.currentState).toBe(GroupState.Stable);
    expect(g.generationId).toBe(1);
    expect(g.leaderOrNull).toBe(leader);
    expect(g.allMembers.sort()).toEqual([...ids].sort());
    expect(g.protocolName).toBe('range');
    expect(fetched()).toEqual([
      ['t', 0, 10n],
      ['t', 1, 20n],
    ]);
    expect(fetched('offsets-only')).toEqual([['u', 0, 3n]]);
    expect(coord.groupManager.getGroup('offsets-only')!.currentState).toBe(GroupState.Empty);
    expect(heartbeat(ids[0]!, 1)).toBe(E.NONE);
    expect(sync({ memberId: ids[1]!, generationId: 1 }).value!.assignment).toEqual(Buffer.from([1]));
    // a member that does not come back expires after its session timeout
    await advance(2500);
    expect(heartbeat(ids[0]!, 1)).toBe(E.NONE);
    await advance(2500);
    expect(group().has(ids[1]!)).toBe(false);
    expect(state()).toBe(GroupState.PreparingRebalance);
  });

  it('unloading answers parked JoinGroups with NOT_COORDINATOR and parked SyncGroups with NOT_COORDINATOR', async () => {
    const j = join();
    coord.onResignation(0, 0);
    expect(j.value!.error).toBe(E.NOT_COORDINATOR);
    await coord.shutdown();
    coord = await newCoordinator();
    const a = join();
    const b = join();
    await settle();
    const follower = [a, b].map((x) => x.value!.memberId).find((x) => x !== a.value!.leaderId)!;
    const s = sync({ memberId: follower, generationId: 1 });
    coord.onResignation(0, null);
    expect(s.value!.error).toBe(E.NOT_COORDINATOR);
  });

  it('deleted groups stay deleted after a reload (group tombstone)', async () => {
    await stableGroup(1, { sessionTimeoutMs: 2000 });
    await advance(2000); // expired → Empty (generation 2)
    expect(Object.fromEntries(coord.handleDeleteGroups([GROUP]))).toEqual({ [GROUP]: E.NONE });
    await flush();
    await coord.shutdown();
    coord = await newCoordinator();
    expect(coord.groupManager.getGroup(GROUP)).toBeUndefined();
  });
});
