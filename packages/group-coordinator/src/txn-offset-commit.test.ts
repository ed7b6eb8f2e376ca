/**
 * Transactional offset commits (TxnOffsetCommit, KIP-98): pending until the transaction's marker
 * reaches the offsets partition, committed by COMMIT, dropped by ABORT, and rebuilt the same way
 * when another broker loads the partition from the log.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { encodeEndTxnMarkerBatch, ErrorCode, recordBatches } from '@samsa/protocol';
import type { GroupCoordinator } from './group-coordinator.js';
import { GroupState } from './group-metadata.js';
import type { OffsetAndMetadata } from './records.js';
import { MemoryOffsetsLog, Pending, startTestCoordinator } from './test-support.js';

const E = ErrorCode;
const GROUP = 'txn-group';
const PID = 4000n;
const EPOCH = 3;

let storage: MemoryOffsetsLog;
let coord: GroupCoordinator;

async function flush(): Promise<void> {
  await vi.advanceTimersByTimeAsync(0);
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

const start = () =>
  startTestCoordinator(storage, { groupMinSessionTimeoutMs: 1000, groupMaxSessionTimeoutMs: 60_000, groupMaxSize: 10, groupInitialRebalanceDelayMs: 0 });

const om = (offset: bigint): OffsetAndMetadata => ({
  committedOffset: offset,
  leaderEpoch: -1,
  metadata: '',
  commitTimestampMs: Date.now(),
  expireTimestampMs: null,
});

type Results = Array<[{ topic: string; partition: number }, number]>;

function txnCommit(
  offsets: Array<[string, number, bigint]>,
  o: { pid?: bigint; memberId?: string; generationId?: number; groupInstanceId?: string | null; groupId?: string } = {},
) {
  const r = new Pending<Results>();
  coord.handleTxnCommitOffsets(
    o.groupId ?? GROUP,
    o.pid ?? PID,
    EPOCH,
    o.memberId ?? '',
    o.groupInstanceId ?? null,
    o.generationId ?? -1,
    offsets.map(([topic, partition, offset]) => [{ topic, partition }, om(offset)]),
    r.callback,
  );
  return r;
}

function commit(offsets: Array<[string, number, bigint]>): Pending<Results> {
  const r = new Pending<Results>();
  coord.handleCommitOffsets(
    GROUP,
    '',
    null,
    -1,
    offsets.map(([topic, partition, offset]) => [{ topic, partition }, om(offset)]),
    r.callback,
  );
  return r;
}

const errors = (r: Pending<Results>) => r.value!.map(([, e]) => e);
const fetched = (requireStable = false) =>
  coord.handleFetchOffsets(GROUP, requireStable, [{ topic: 't', partition: 0 }]).offsets.map(([, d]) => [d.offset, d.error]);

/** The coordinator of the transaction writes its marker to offsets partition 0, then tells the group coordinator. */
async function marker(commit: boolean, pid = PID): Promise<void> {
  await storage.append(0, encodeEndTxnMarkerBatch({ producerId: pid, producerEpoch: EPOCH, commit, coordinatorEpoch: 0 }), -1, 1000);
  coord.scheduleHandleTxnCompletion(pid, [0], commit);
  await flush();
}

beforeEach(async () => {
  vi.useFakeTimers({ now: 1_000_000 });
  storage = new MemoryOffsetsLog();
  storage.leaders.add(0);
  coord = await start();
});

afterEach(async () => {
  await coord.shutdown();
  vi.useRealTimers();
});

describe('TxnOffsetCommit', () => {
  it('pending until COMMIT: written as the producer’s transactional batch, invisible (UNSTABLE_OFFSET_COMMIT with require_stable), then committed', async () => {
    const r = txnCommit([['t', 0, 42n]]);
    await flush();
    expect(errors(r)).toEqual([E.NONE]);
    const [batch] = [...recordBatches(Buffer.concat(storage.batches.get(0)!))];
    expect(batch!.isTransactional).toBe(true);
    expect(batch!.producerId).toBe(PID);
    expect(batch!.producerEpoch).toBe(EPOCH);
    // the group was created for the commit (a consumer without group management)
    expect(coord.groupManager.getGroup(GROUP)!.currentState).toBe(GroupState.Empty);
    expect(fetched()).toEqual([[-1n, E.NONE]]);
    expect(fetched(true)).toEqual([[-1n, E.UNSTABLE_OFFSET_COMMIT]]);
    await marker(true);
    expect(fetched(true)).toEqual([[42n, E.NONE]]);
  });

  it('ABORT drops the pending commits and keeps the offset committed before', async () => {
    await commit([['t', 0, 7n]]).promise;
    txnCommit([['t', 0, 42n]]);
    await flush();
    await marker(false);
    expect(fetched(true)).toEqual([[7n, E.NONE]]);
    expect(coord.groupManager.getGroup(GROUP)!.pendingTxnOffsetCommits.size).toBe(0);
  });

  it('a marker completes only its own producer’s commits, and only for the offsets partitions it was written to', async () => {
    txnCommit([['t', 0, 10n]], { pid: 1n });
    txnCommit([['t', 1, 20n]], { pid: 2n });
    await flush();
    coord.scheduleHandleTxnCompletion(1n, [5], true); // another offsets partition: nothing here
    await flush();
    expect(fetched(true)).toEqual([[-1n, E.UNSTABLE_OFFSET_COMMIT]]);
    await marker(true, 1n);
    expect(fetched(true)).toEqual([[10n, E.NONE]]);
    const g = coord.groupManager.getGroup(GROUP)!;
    expect(g.pendingTxnOffsetCommits.producerIds()).toEqual([2n]);
    expect(g.offset({ topic: 't', partition: 1 })).toBeUndefined();
  });

  it('a commit written after the transaction’s offset stays when the transaction commits later (log order wins)', async () => {
    txnCommit([['t', 0, 10n]]);
    await flush();
    await commit([['t', 0, 99n]]).promise;
    await marker(true);
    expect(fetched()).toEqual([[99n, E.NONE]]);
  });

  it('a failed write forgets the pending commit and answers the translated error', async () => {
    storage.nextError = E.NOT_LEADER_OR_FOLLOWER;
    const r = txnCommit([['t', 0, 10n]]);
    await flush();
    expect(errors(r)).toEqual([E.NOT_COORDINATOR]);
    expect(coord.groupManager.getGroup(GROUP)!.pendingTxnOffsetCommits.size).toBe(0);
    expect(fetched(true)).toEqual([[-1n, E.NONE]]);
  });

  it('validation: empty group id, unknown member, fenced instance id, wrong generation; coordinator errors', async () => {
    expect(errors(txnCommit([['t', 0, 1n]], { groupId: '' }))).toEqual([E.INVALID_GROUP_ID]);
    txnCommit([['t', 0, 1n]]);
    await flush();
    expect(errors(txnCommit([['t', 0, 1n]], { memberId: 'nobody' }))).toEqual([E.UNKNOWN_MEMBER_ID]);
    expect(errors(txnCommit([['t', 0, 1n]], { memberId: '', groupInstanceId: 'i-1' }))).toEqual([E.FENCED_INSTANCE_ID]);
    expect(errors(txnCommit([['t', 0, 1n]], { generationId: 3 }))).toEqual([E.ILLEGAL_GENERATION]);
    coord.onResignation(0, 1);
    expect(errors(txnCommit([['t', 0, 1n]]))).toEqual([E.NOT_COORDINATOR]);
  });
});

describe('TxnOffsetCommit – loading the offsets partition', () => {
  it('a new coordinator replays markers: committed transactions’ offsets are committed, aborted ones dropped, open ones pending and completed later', async () => {
    txnCommit([['t', 0, 10n]], { pid: 1n });
    txnCommit([['t', 1, 20n]], { pid: 2n });
    txnCommit([['t', 2, 30n]], { pid: 3n });
    await flush();
    await storage.append(0, encodeEndTxnMarkerBatch({ producerId: 1n, producerEpoch: EPOCH, commit: true, coordinatorEpoch: 0 }), -1, 1000);
    await storage.append(0, encodeEndTxnMarkerBatch({ producerId: 2n, producerEpoch: EPOCH, commit: false, coordinatorEpoch: 0 }), -1, 1000);
    coord.onResignation(0, 1);
    await coord.shutdown();

    coord = await start();
    const offsets = () =>
      coord
        .handleFetchOffsets(
          GROUP,
          true,
          [0, 1, 2].map((partition) => ({ topic: 't', partition })),
        )
        .offsets.map(([tp, d]) => [tp.partition, d.offset, d.error]);
    expect(offsets()).toEqual([
      [0, 10n, E.NONE],
      [1, -1n, E.NONE],
      [2, -1n, E.UNSTABLE_OFFSET_COMMIT],
    ]);
    // the still-open transaction of producer 3 commits after the failover
    await marker(true, 3n);
    expect(offsets()).toEqual([
      [0, 10n, E.NONE],
      [1, -1n, E.NONE],
      [2, 30n, E.NONE],
    ]);
  });
});
