import { ErrorCode, TopicPartitionMap } from '@samsa/protocol';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  alterReassignmentsCall,
  callTimeoutMs,
  controlledShutdownCall,
  electLeadersCall,
  listReassignmentsCall,
  type ControllerCaller,
} from './controller-calls.js';
import type { ControllerEvent } from './events.js';

/** A controller whose event loop never gets to the events (stuck on ZooKeeper, say). */
function stuck(fallbackTimeoutMs = 30_000): ControllerCaller & { queued: ControllerEvent[] } {
  const queued: ControllerEvent[] = [];
  return { queued, fallbackTimeoutMs, put: (e) => queued.push(e) };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('controller calls', () => {
  it('controller calls – ElectLeaders not answered within its timeoutMs: each named partition REQUEST_TIMED_OUT; all partitions: the request', async () => {
    const c = stuck();
    const named = electLeadersCall(
      c,
      [
        { topic: 't', partition: 0 },
        { topic: 't', partition: 3 },
      ],
      0,
      500,
    );
    const all = electLeadersCall(c, null, 0, 800);
    await vi.advanceTimersByTimeAsync(499);
    let settled = false;
    void named.then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const n = await named;
    expect(n.errorCode).toBe(ErrorCode.NONE);
    expect([...n.results].map(([tp, r]) => [tp.partition, r.errorCode])).toEqual([
      [0, ErrorCode.REQUEST_TIMED_OUT],
      [3, ErrorCode.REQUEST_TIMED_OUT],
    ]);
    await vi.advanceTimersByTimeAsync(300);
    expect((await all).errorCode).toBe(ErrorCode.REQUEST_TIMED_OUT);
    expect(c.queued.map((e) => e.type)).toEqual(['ReplicaLeaderElection', 'ReplicaLeaderElection']);
  });

  it('controller calls – reassignments and controlled shutdown time out with REQUEST_TIMED_OUT (controlled shutdown after request.timeout.ms)', async () => {
    const c = stuck(2_000);
    const alter = alterReassignmentsCall(c, [{ topic: 't', partition: 0, replicas: [1, 2] }], 1_000);
    const list = listReassignmentsCall(c, null, 1_000);
    const shutdown = controlledShutdownCall(c, 1, 3n);
    await vi.advanceTimersByTimeAsync(1_000);
    expect((await alter).errorCode).toBe(ErrorCode.REQUEST_TIMED_OUT);
    expect((await list).errorCode).toBe(ErrorCode.REQUEST_TIMED_OUT);
    let shutdownAnswered = false;
    void shutdown.then(() => (shutdownAnswered = true));
    await Promise.resolve();
    expect(shutdownAnswered).toBe(false);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await shutdown).toEqual({ errorCode: ErrorCode.REQUEST_TIMED_OUT, remaining: [] });
  });

  it('controller calls – the first answer wins: a late controller answer after the timeout, or a timeout after the answer, changes nothing', async () => {
    const c = stuck();
    const late = controlledShutdownCall(c, 1, 3n, 100);
    await vi.advanceTimersByTimeAsync(100);
    const e = c.queued[0];
    if (e?.type !== 'ControlledShutdown') throw new Error('no ControlledShutdown queued');
    e.callback(ErrorCode.NONE, []);
    expect((await late).errorCode).toBe(ErrorCode.REQUEST_TIMED_OUT);

    const early = electLeadersCall(c, null, 1, 100);
    const e2 = c.queued[1];
    if (e2?.type !== 'ReplicaLeaderElection') throw new Error('no ReplicaLeaderElection queued');
    e2.callback(new TopicPartitionMap(), ErrorCode.NONE);
    await vi.advanceTimersByTimeAsync(100);
    expect((await early).errorCode).toBe(ErrorCode.NONE);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('controller calls – a request timeout of 0 or less waits request.timeout.ms instead', () => {
    expect(callTimeoutMs(5_000, 30_000)).toBe(5_000);
    expect(callTimeoutMs(0, 30_000)).toBe(30_000);
    expect(callTimeoutMs(-1, 30_000)).toBe(30_000);
    expect(callTimeoutMs(undefined, 12_000)).toBe(12_000);
  });
});
