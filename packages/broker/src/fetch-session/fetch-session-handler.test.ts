import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ErrorCode, topicPartitionKey, type FetchResponse } from '@samsa/protocol';
import { FetchSessionHandler } from './fetch-session-handler.js';
import { FetchManager } from './fetch-manager.js';
import { FetchSessionCache } from './fetch-session-cache.js';

const silent = pino({ level: 'silent' });

/** Builds a request from partition -> fetch offset. */
function build(h: FetchSessionHandler, offsets: Record<number, bigint>, leaderEpoch = 1) {
  const b = h.newBuilder();
  for (const [p, offset] of Object.entries(offsets)) b.add(topicPartitionKey('t', Number(p)), 't', Number(p), offset, 0n, 1024, leaderEpoch, -1);
  const d = b.build();
  return { ...d, sent: d.toSend.map((p) => `${p.partition}@${p.fetchOffset}`), forgot: d.toForget.map((p) => p.partition) };
}

function response(sessionId: number, partitions: number[], errorCode = 0): Pick<FetchResponse, 'errorCode' | 'sessionId' | 'responses' | 'throttleTimeMs'> {
  return {
    errorCode,
    sessionId,
    throttleTimeMs: 0,
    responses:
      partitions.length === 0 ? [] : [{ topic: 't', topicId: Buffer.alloc(16), partitions: partitions.map((partitionIndex) => ({ partitionIndex }) as never) }],
  };
}

/** A handler whose session 42 holds t-0, t-1, t-2 at offset 5 (next epoch 1). */
function inSession() {
  const h = new FetchSessionHandler(silent);
  build(h, { 0: 5n, 1: 5n, 2: 5n });
  expect(h.handleResponse(response(42, [0, 1, 2]), topicPartitionKey)).toBe(true);
  return h;
}

describe('follower fetch session handler (KIP-227)', () => {
  it('fetch session handler – the first fetch is full (session 0, epoch 0) and lists every partition; a session id in its response makes the next one incremental at epoch 1', () => {
    const h = new FetchSessionHandler(silent);
    const d = build(h, { 0: 5n, 1: 5n });
    expect([d.sessionId, d.epoch, d.sent, d.forgot]).toEqual([0, 0, ['0@5', '1@5'], []]);
    expect(h.handleResponse(response(42, [0, 1]), topicPartitionKey)).toBe(true);
    expect(h.metadata).toEqual({ sessionId: 42, epoch: 1 });
  });

  it('fetch session handler – an incremental fetch lists only new and changed partitions and forgets those not fetched any more', () => {
    const h = inSession();
    const d = build(h, { 0: 5n, 1: 9n, 3: 0n });
    expect([d.sessionId, d.epoch, d.sent, d.forgot, d.sessionSize]).toEqual([42, 1, ['1@9', '3@0'], [2], 3]);
    expect(h.handleResponse(response(42, [1]), topicPartitionKey)).toBe(true);
    // steady state: nothing changed, nothing listed
    const steady = build(h, { 0: 5n, 1: 9n, 3: 0n });
    expect([steady.epoch, steady.sent, steady.forgot]).toEqual([2, [], []]);
    // a new leader epoch is a change too
    expect(build(h, { 0: 5n, 1: 9n, 3: 0n }, 2).sent).toEqual(['0@5', '1@9', '3@0']);
  });

  it('fetch session handler – FETCH_SESSION_ID_NOT_FOUND makes the next fetch full asking for a new session (id 0, epoch 0)', () => {
    const h = inSession();
    build(h, { 0: 5n, 1: 5n, 2: 5n });
    expect(h.handleResponse(response(0, [], ErrorCode.FETCH_SESSION_ID_NOT_FOUND), topicPartitionKey)).toBe(false);
    const d = build(h, { 0: 5n, 1: 5n, 2: 5n });
    expect([d.sessionId, d.epoch, d.sent]).toEqual([0, 0, ['0@5', '1@5', '2@5']]);
  });

  it('fetch session handler – INVALID_FETCH_SESSION_EPOCH, other errors and a failed request make the next fetch full, closing the session (its id, epoch 0)', () => {
    for (const fail of [
      (h: FetchSessionHandler) => h.handleResponse(response(0, [], ErrorCode.INVALID_FETCH_SESSION_EPOCH), topicPartitionKey),
      (h: FetchSessionHandler) => h.handleResponse(response(0, [], ErrorCode.UNKNOWN_SERVER_ERROR), topicPartitionKey),
      (h: FetchSessionHandler) => h.handleError(),
    ]) {
      const h = inSession();
      build(h, { 0: 5n, 1: 5n, 2: 5n });
      fail(h);
      const d = build(h, { 0: 5n, 1: 5n, 2: 5n });
      expect([d.sessionId, d.epoch, d.sent]).toEqual([42, 0, ['0@5', '1@5', '2@5']]);
    }
  });

  it('fetch session handler – a full response that leaves out a partition is not processed; the next fetch is full without a session', () => {
    const h = new FetchSessionHandler(silent);
    build(h, { 0: 5n, 1: 5n });
    expect(h.handleResponse(response(42, [0]), topicPartitionKey)).toBe(false);
    expect(h.metadata).toEqual({ sessionId: 0, epoch: 0 });
  });

  it('fetch session handler – an incremental response with a partition outside the session is not processed; the next fetch is full', () => {
    const h = inSession();
    build(h, { 0: 5n, 1: 5n, 2: 5n });
    expect(h.handleResponse(response(42, [7]), topicPartitionKey)).toBe(false);
    expect(h.metadata).toEqual({ sessionId: 42, epoch: 0 });
  });

  it('fetch session handler – a leader that creates no session (id 0) gets full fetches every time; one that closes the session (incremental answer with id 0) too', () => {
    const h = new FetchSessionHandler(silent);
    build(h, { 0: 5n });
    expect(h.handleResponse(response(0, [0]), topicPartitionKey)).toBe(true);
    expect(build(h, { 0: 5n }).sent).toEqual(['0@5']);
    const s = inSession();
    build(s, { 0: 5n, 1: 5n, 2: 5n });
    expect(s.handleResponse(response(0, []), topicPartitionKey)).toBe(true);
    expect(s.metadata).toEqual({ sessionId: 0, epoch: 0 });
  });

  it('fetch session handler – an empty full response with a throttle time is not processed and not an error (KIP-219)', () => {
    const h = new FetchSessionHandler(silent);
    build(h, { 0: 5n });
    expect(h.handleResponse({ ...response(0, []), throttleTimeMs: 100 }, topicPartitionKey)).toBe(false);
    expect(h.metadata).toEqual({ sessionId: 0, epoch: 0 });
  });
});

describe('follower fetch session handler with the broker fetch manager', () => {
  it('fetch session handler – against the broker side: full then incremental requests, only changed partitions on the wire, a lost session recovered with a full fetch', () => {
    const cache = new FetchSessionCache({ maxEntries: 10 });
    const leader = new FetchManager(cache);
    const h = new FetchSessionHandler(silent);
    const offsets = new Map([
      [0, 0n],
      [1, 0n],
      [2, 0n],
    ]);
    const leo = new Map([
      [0, 5n],
      [1, 0n],
      [2, 0n],
    ]);
    /** One fetch round trip: the follower builds, the leader answers (records up to its LEO), the follower advances. */
    const round = () => {
      const b = h.newBuilder();
      for (const [p, o] of offsets) b.add(topicPartitionKey('t', p), 't', p, o, 0n, 1024, 1, -1);
      const d = b.build();
      const topics =
        d.toSend.length === 0
          ? []
          : [
              {
                topic: 't',
                topicId: Buffer.alloc(16),
                partitions: d.toSend.map((p) => ({ ...p, partitionMaxBytes: p.maxBytes, replicaDirectoryId: Buffer.alloc(16) })),
              },
            ];
      const forgotten = d.toForget.length === 0 ? [] : [{ topic: 't', topicId: Buffer.alloc(16), partitions: d.toForget.map((p) => p.partition) }];
      const ctx = leader.newContext(11, d.sessionId, d.epoch, true, topics, forgotten, () => undefined);
      const partitions: Array<{ partitionIndex: number }> = [];
      let errorCode = ctx.errorCode;
      if (errorCode === 0) errorCode = ctx.beginResponse();
      if (errorCode === 0)
        for (const p of ctx.partitions) {
          const end = leo.get(p.partition)!;
          const bytes = end > p.fetchOffset ? Number(end - p.fetchOffset) : 0;
          if (ctx.include(p, 0, end, 0n, bytes)) partitions.push({ partitionIndex: p.partition });
        }
      const sessionId = errorCode === 0 ? ctx.endResponse() : 0;
      const resp = {
        errorCode,
        sessionId,
        throttleTimeMs: 0,
        responses: partitions.length ? [{ topic: 't', topicId: Buffer.alloc(16), partitions: partitions as never[] }] : [],
      };
      const ok = h.handleResponse(resp, topicPartitionKey);
      if (ok) for (const p of partitions) offsets.set(p.partitionIndex, leo.get(p.partitionIndex)!);
      return { sent: d.toSend.map((p) => p.partition), epoch: d.epoch, answered: partitions.map((p) => p.partitionIndex), ok };
    };
    expect(round()).toEqual({ sent: [0, 1, 2], epoch: 0, answered: [0, 1, 2], ok: true });
    // partition 0 advanced to 5: listed once, then nothing moves and nothing is listed or answered
    expect(round()).toEqual({ sent: [0], epoch: 1, answered: [], ok: true });
    expect(round()).toEqual({ sent: [], epoch: 2, answered: [], ok: true });
    // new data on partition 2: answered without being listed
    leo.set(2, 3n);
    expect(round()).toEqual({ sent: [], epoch: 3, answered: [2], ok: true });
    expect(round()).toEqual({ sent: [2], epoch: 4, answered: [], ok: true });
    // the leader restarts (its sessions are gone): one failed round, then a full fetch opens a new session
    cache.remove(h.metadata.sessionId);
    expect(round()).toEqual({ sent: [], epoch: 5, answered: [], ok: false });
    expect(round()).toEqual({ sent: [0, 1, 2], epoch: 0, answered: [0, 1, 2], ok: true });
    expect(cache.size).toBe(1);
  });
});
