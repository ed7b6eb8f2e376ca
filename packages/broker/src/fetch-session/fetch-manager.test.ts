import { describe, expect, it } from 'vitest';
import { ErrorCode, topicPartitionKey, type FetchRequestForgottenTopic, type FetchRequestTopic } from '@samsa/protocol';
import { FetchManager, type FetchContext } from './fetch-manager.js';
import { FetchSessionCache, INVALID_SESSION_ID, nextEpoch } from './fetch-session-cache.js';

const ZERO = Buffer.alloc(16);
const V = 11;

function topic(name: string, parts: Array<[number, bigint]>, topicId = ZERO): FetchRequestTopic {
  return {
    topic: name,
    topicId,
    partitions: parts.map(([partition, fetchOffset]) => ({
      partition,
      fetchOffset,
      currentLeaderEpoch: 3,
      lastFetchedEpoch: -1,
      logStartOffset: 0n,
      partitionMaxBytes: 1024,
      replicaDirectoryId: ZERO,
    })),
  };
}

const forget = (name: string, partitions: number[]): FetchRequestForgottenTopic => ({ topic: name, topicId: ZERO, partitions });
const names = () => undefined;

function setup(maxEntries = 10) {
  let now = 1_000_000;
  const cache = new FetchSessionCache({ maxEntries, evictionMs: 120_000, now: () => now });
  const m = new FetchManager(cache);
  return { cache, m, advance: (ms: number) => (now += ms) };
}

/** Answers every partition of the context with `hw` (per partition index) and no records; returns the session id. */
function answer(
  ctx: FetchContext,
  hw: (p: number) => bigint = () => 10n,
  records: (p: number) => number = () => 0,
): { sessionId: number; answered: string[]; error: number } {
  const error = ctx.beginResponse();
  const answered: string[] = [];
  if (error === 0)
    for (const p of ctx.partitions)
      if (ctx.include(p, 0, hw(p.partition), 0n, records(p.partition))) answered.push(topicPartitionKey(p.topic ?? '', p.partition));
  return { sessionId: ctx.endResponse(), answered, error };
}

/** A session on t-0, t-1, t-2 (follower), answered at HW 10. */
function withSession(maxEntries = 10) {
  const s = setup(maxEntries);
  const full = s.m.newContext(
    V,
    0,
    0,
    true,
    [
      topic('t', [
        [0, 5n],
        [1, 5n],
        [2, 5n],
      ]),
    ],
    [],
    names,
  );
  const { sessionId } = answer(full);
  return { ...s, sessionId };
}

describe('fetch session manager (KIP-227)', () => {
  it('fetch session – a full fetch at epoch 0 creates a session: random non-zero id, next epoch 1, every partition answered', () => {
    const { cache, sessionId } = withSession();
    expect(sessionId).not.toBe(INVALID_SESSION_ID);
    expect(sessionId).toBeGreaterThan(0);
    expect(cache.size).toBe(1);
    expect(cache.totalPartitions).toBe(3);
    expect(cache.get(sessionId)!.epoch).toBe(1);
  });

  it('fetch session – epoch -1 (and every request before v7) is sessionless: all partitions answered, session id 0, nothing cached', () => {
    const { m, cache } = setup();
    for (const [v, epoch] of [
      [V, -1],
      [6, 0],
    ] as const) {
      const ctx = m.newContext(
        v,
        0,
        epoch,
        false,
        [
          topic('t', [
            [0, 0n],
            [1, 0n],
          ]),
        ],
        [],
        names,
      );
      expect(answer(ctx)).toEqual({ sessionId: 0, answered: ['t-0', 't-1'], error: 0 });
    }
    expect(cache.size).toBe(0);
  });

  it('fetch session – an incremental fetch adds new partitions, updates listed ones, removes forgotten ones and reads the whole session', () => {
    const { m, cache, sessionId } = withSession();
    const ctx = m.newContext(
      V,
      sessionId,
      1,
      true,
      [
        topic('t', [
          [1, 7n],
          [3, 0n],
        ]),
      ],
      [forget('t', [0])],
      names,
    );
    expect(ctx.errorCode).toBe(0);
    expect(ctx.partitions.map((p) => `${p.partition}@${p.fetchOffset}`)).toEqual(['1@7', '2@5', '3@0']);
    expect(cache.get(sessionId)!.epoch).toBe(2);
    answer(ctx);
    expect(cache.totalPartitions).toBe(3);
  });

  it('fetch session – an incremental response carries only partitions with records, a changed high watermark or log start offset, or an error', () => {
    const { m, sessionId } = withSession();
    // t-0 unchanged, t-1 has records, t-2's HW moved
    let ctx = m.newContext(V, sessionId, 1, true, [], [], names);
    const r = answer(
      ctx,
      (p) => (p === 2 ? 12n : 10n),
      (p) => (p === 1 ? 100 : 0),
    );
    expect(r).toEqual({ sessionId, answered: ['t-1', 't-2'], error: 0 });
    // nothing changed: an empty response, the session kept
    ctx = m.newContext(V, sessionId, 2, true, [], [], names);
    expect(answer(ctx, (p) => (p === 2 ? 12n : 10n))).toEqual({ sessionId, answered: [], error: 0 });
    // an error is always answered, and forgets the cached HW: the partition is answered again once it clears
    ctx = m.newContext(V, sessionId, 3, true, [], [], names);
    expect(ctx.beginResponse()).toBe(0);
    const included = ctx.partitions.filter((p) =>
      ctx.include(p, p.partition === 0 ? ErrorCode.NOT_LEADER_OR_FOLLOWER : 0, p.partition === 2 ? 12n : 10n, 0n, 0),
    );
    expect(included.map((p) => p.partition)).toEqual([0]);
    ctx = m.newContext(V, sessionId, 4, true, [], [], names);
    expect(answer(ctx, (p) => (p === 2 ? 12n : 10n)).answered).toEqual(['t-0']);
    // a moved log start offset is answered
    ctx = m.newContext(V, sessionId, 5, true, [], [], names);
    expect(ctx.beginResponse()).toBe(0);
    const moved = ctx.partitions.filter((p) => ctx.include(p, 0, p.partition === 2 ? 12n : 10n, p.partition === 1 ? 4n : 0n, 0));
    expect(moved.map((p) => p.partition)).toEqual([1]);
  });

  it('fetch session – answered partitions move to the back of the session, so the next read starts with the others', () => {
    const { m, sessionId } = withSession();
    const ctx = m.newContext(V, sessionId, 1, true, [], [], names);
    answer(
      ctx,
      () => 10n,
      (p) => (p === 0 ? 1 : 0),
    );
    const next = m.newContext(V, sessionId, 2, true, [], [], names);
    expect(next.partitions.map((p) => p.partition)).toEqual([1, 2, 0]);
  });

  it('fetch session – an unknown session id is FETCH_SESSION_ID_NOT_FOUND (70), a wrong epoch INVALID_FETCH_SESSION_EPOCH (71), topic ids used inconsistently FETCH_SESSION_TOPIC_ID_ERROR (106)', () => {
    const { m, sessionId, cache } = withSession();
    const notFound = m.newContext(V, sessionId + 1, 1, true, [], [], names);
    expect(notFound.errorCode).toBe(70);
    expect(notFound.partitions).toHaveLength(0);
    expect(notFound.endResponse()).toBe(0);
    expect(m.newContext(V, sessionId, 2, true, [], [], names).errorCode).toBe(71);
    expect(m.newContext(13, sessionId, 1, true, [], [], names).errorCode).toBe(106);
    // errors leave the session as it was
    expect(cache.get(sessionId)!.epoch).toBe(1);
    expect(m.newContext(V, sessionId, 1, true, [], [], names).errorCode).toBe(0);
  });

  it('fetch session – a request that moved the session on while another waited makes the other answer INVALID_FETCH_SESSION_EPOCH with no partitions', () => {
    const { m, sessionId } = withSession();
    const first = m.newContext(V, sessionId, 1, true, [], [], names);
    const second = m.newContext(V, sessionId, 2, true, [], [], names);
    expect(answer(first)).toEqual({ sessionId, answered: [], error: 71 });
    expect(first.throttledResponse()).toEqual({ errorCode: 71, sessionId });
    expect(answer(second).error).toBe(0);
  });

  it('fetch session – a full fetch naming a session closes it: epoch 0 opens a new one, epoch -1 stays sessionless', () => {
    const { m, cache, sessionId } = withSession();
    const reopened = answer(m.newContext(V, sessionId, 0, true, [topic('t', [[0, 0n]])], [], names)).sessionId;
    expect(cache.get(sessionId)).toBeUndefined();
    expect(reopened).not.toBe(0);
    expect(cache.size).toBe(1);
    expect(answer(m.newContext(V, reopened, -1, true, [topic('t', [[0, 0n]])], [], names)).sessionId).toBe(0);
    expect(cache.size).toBe(0);
  });

  it('fetch session – an incremental fetch that forgets every partition closes the session and is answered sessionless', () => {
    const { m, cache, sessionId } = withSession();
    const ctx = m.newContext(V, sessionId, 1, true, [], [forget('t', [0, 1, 2])], names);
    expect(answer(ctx)).toEqual({ sessionId: 0, answered: [], error: 0 });
    expect(cache.size).toBe(0);
  });

  it('fetch session – a throttled full fetch creates no session; a throttled incremental one answers no partitions and keeps the session', () => {
    const { m, cache, sessionId } = withSession();
    expect(m.newContext(V, 0, 0, false, [topic('u', [[0, 0n]])], [], names).throttledResponse()).toBeNull();
    expect(cache.size).toBe(1);
    const ctx = m.newContext(V, sessionId, 1, true, [], [], names);
    expect(ctx.throttledResponse()).toEqual({ errorCode: 0, sessionId });
    // the HW was never answered, so the next incremental fetch still answers it
    expect(answer(m.newContext(V, sessionId, 2, true, [], [], names), () => 11n).answered).toEqual(['t-0', 't-1', 't-2']);
  });

  it('fetch session – with topic ids (v13+) an id unknown when added is answered unresolved and resolved once the topic is known', () => {
    const { m } = setup();
    const id = Buffer.alloc(16, 7);
    const known = new Map<string, string>();
    const resolve = (topicId: string) => known.get(topicId);
    const full = m.newContext(13, 0, 0, false, [topic('', [[0, 0n]], id)], [], resolve);
    expect(full.partitions[0]!.topic).toBeUndefined();
    const sessionId = answer(full).sessionId;
    known.set(id.toString('base64url'), 'orders');
    const ctx = m.newContext(13, sessionId, 1, false, [], [], resolve);
    expect(ctx.partitions[0]!.topic).toBe('orders');
    expect(ctx.partitions[0]!.topicId.equals(id)).toBe(true);
    // forgotten by id
    const gone = m.newContext(13, sessionId, 2, false, [], [{ topic: '', topicId: id, partitions: [0] }], resolve);
    expect(answer(gone).sessionId).toBe(0);
  });

  it("fetch session – epochs wrap from 2147483647 to 1, and after -1 stays -1 (Kafka's nextEpoch)", () => {
    expect(nextEpoch(0)).toBe(1);
    expect(nextEpoch(0x7fffffff)).toBe(1);
    expect(nextEpoch(-1)).toBe(-1);
  });
});

describe('fetch session cache eviction', () => {
  const create = (cache: FetchSessionCache, privileged: boolean, size: number) =>
    cache.maybeCreateSession(privileged, new Map(Array.from({ length: size }, (_, i) => [String(i), {} as never])), false);

  it('fetch session cache – with every slot taken by fresh sessions a new consumer session is not created (the fetch is sessionless)', () => {
    const { cache } = setup(2);
    expect(create(cache, false, 5)).not.toBe(0);
    expect(create(cache, false, 5)).not.toBe(0);
    expect(create(cache, false, 50)).toBe(0);
    expect(cache.size).toBe(2);
    expect(cache.evictions).toBe(0);
  });

  it('fetch session cache – max.incremental.fetch.session.cache.slots=0 never creates a session', () => {
    const { cache } = setup(0);
    expect(create(cache, true, 5)).toBe(0);
  });

  it('fetch session cache – the least recently used session idle over the eviction time goes first, whatever its kind or size', () => {
    const { cache, advance } = setup(2);
    const follower = create(cache, true, 100);
    advance(1000);
    const consumer = create(cache, false, 1);
    advance(119_500);
    cache.touch(cache.get(consumer)!, 1_000_000 + 120_500);
    advance(1);
    // the follower's session is idle for 120.5 s: evicted, though it is privileged and larger
    expect(create(cache, false, 1)).not.toBe(0);
    expect(cache.get(follower)).toBeUndefined();
    expect(cache.get(consumer)).toBeDefined();
    expect(cache.evictions).toBe(1);
  });

  it("fetch session cache – a follower's session evicts a consumer's, smallest first; a consumer's cannot evict a follower's", () => {
    const { cache } = setup(3);
    const big = create(cache, false, 10);
    const small = create(cache, false, 2);
    const follower = create(cache, true, 1);
    expect(create(cache, true, 1)).not.toBe(0);
    expect(cache.get(small)).toBeUndefined();
    expect(cache.get(big)).toBeDefined();
    expect(create(cache, true, 1)).not.toBe(0);
    expect(cache.get(big)).toBeUndefined();
    // only followers' sessions left, all younger than the eviction time: a consumer gets none
    expect(create(cache, false, 1000)).toBe(0);
    expect(cache.get(follower)).toBeDefined();
  });

  it('fetch session cache – sessions past their first eviction time are evictable by a larger session of the same kind, not by a smaller or equal one', () => {
    const { cache, advance } = setup(2);
    const a = create(cache, false, 5);
    const b = create(cache, false, 8);
    advance(120_001);
    // both touched now: not stale, but created over 120 s ago, so evictable by all
    cache.touch(cache.get(a)!, 1_000_000 + 120_001);
    cache.touch(cache.get(b)!, 1_000_000 + 120_001);
    expect(create(cache, false, 5)).toBe(0);
    expect(create(cache, false, 6)).not.toBe(0);
    expect(cache.get(a)).toBeUndefined();
    expect(cache.get(b)).toBeDefined();
  });

  it("fetch session cache – a follower's session younger than the eviction time is not evicted by another follower's", () => {
    const { cache } = setup(1);
    const first = create(cache, true, 1);
    expect(create(cache, true, 500)).toBe(0);
    expect(cache.get(first)).toBeDefined();
  });
});
