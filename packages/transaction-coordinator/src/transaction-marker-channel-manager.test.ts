/**
 * The marker channel (Kafka 3.x's TransactionMarkerChannelManager and its completion handler):
 * markers per leader, retries after a backoff, partitions of deleted topics, epoch changes, and
 * the completion write with its retries.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ErrorCode } from '@samsa/protocol';
import { TransactionResult } from './transaction-state-manager.js';
import { TransactionState } from './transaction-state.js';
import { flush, newHarness, type Harness } from './test-support.js';

const E = ErrorCode;
const S = TransactionState;
const TXN = 'txn';
const BACKOFF = 100;
const tp = (topic: string, partition: number) => ({ topic, partition });

let h: Harness;

beforeEach(async () => {
  vi.useFakeTimers({ now: 1_000_000, toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
  h = await newHarness();
});

afterEach(async () => {
  await h.coord.shutdown();
  vi.useRealTimers();
});

function metadata() {
  const r = h.coord.txnManager.getTransactionState(TXN);
  if (!('found' in r) || !r.found) throw new Error('no metadata');
  return r.found.metadata;
}

/** An open transaction on `partitions`, then EndTxn commit (answered NONE). */
async function commit(partitions = [tp('t', 0), tp('t', 1), tp('u', 0)], id = TXN) {
  const r = await h.coord.handleInitProducerId(id, 60_000, null);
  expect(await h.coord.handleAddPartitionsToTransaction(id, r.producerId, r.producerEpoch, partitions)).toBe(E.NONE);
  expect(await h.coord.handleEndTransaction(id, r.producerId, r.producerEpoch, TransactionResult.COMMIT)).toBe(E.NONE);
  return r;
}

describe('transaction markers – sending', () => {
  it('one WriteTxnMarkers request per leader, each with that leader’s partitions', async () => {
    await commit();
    await flush();
    expect(h.brokers.requests.map((r) => [r.brokerId, r.markers.map((m) => m.partitions)])).toEqual([
      [1, [[tp('t', 0), tp('t', 1)]]],
      [2, [[tp('u', 0)]]],
    ]);
    expect(h.brokers.requests[0]!.markers[0]).toMatchObject({ producerId: 1000n, producerEpoch: 0, coordinatorEpoch: 1, result: TransactionResult.COMMIT });
    expect(metadata().state).toBe(S.CompleteCommit);
    expect(h.coord.markerChannel.numTxnsWithPendingMarkers).toBe(0);
  });

  it('one request in flight per broker: markers queued meanwhile go in the next request', async () => {
    h.brokers.hold = true;
    await commit([tp('t', 0)], 'a');
    await flush();
    await commit([tp('t', 1)], 'b');
    await flush();
    expect(h.brokers.requests).toHaveLength(1);
    expect(h.coord.markerChannel.queuedMarkers(1)).toBe(1);
    h.brokers.answer();
    await flush();
    expect(h.brokers.requests).toHaveLength(2);
    h.brokers.answer();
    await flush();
    expect(h.coord.markerChannel.numTxnsWithPendingMarkers).toBe(0);
  });

  it('retriable errors are retried after the backoff; the completion waits for every partition', async () => {
    h.brokers.errors.set('t-1', [E.NOT_LEADER_OR_FOLLOWER, E.REQUEST_TIMED_OUT]);
    await commit();
    await flush();
    expect(metadata().state).toBe(S.PrepareCommit);
    expect(metadata().topicPartitions.toArray()).toEqual([tp('t', 1)]);
    // the leader moved meanwhile: the retry looks it up again
    h.brokers.leaders.set('t-1', 2);
    await vi.advanceTimersByTimeAsync(BACKOFF);
    await flush();
    expect(h.brokers.markersFor('t', 1).map((m) => m.brokerId)).toEqual([1, 2]);
    expect(metadata().state).toBe(S.PrepareCommit);
    await vi.advanceTimersByTimeAsync(BACKOFF);
    await flush();
    expect(h.brokers.markersFor('t', 1)).toHaveLength(3);
    expect(metadata().state).toBe(S.CompleteCommit);
  });

  it('a failed request (disconnection) sends its markers again', async () => {
    h.brokers.disconnects = 1;
    await commit([tp('t', 0)]);
    await flush();
    expect(metadata().state).toBe(S.PrepareCommit);
    await vi.advanceTimersByTimeAsync(BACKOFF);
    await flush();
    expect(h.brokers.markersFor('t', 0)).toHaveLength(2);
    expect(metadata().state).toBe(S.CompleteCommit);
  });

  it('a partition without an available leader waits, and gets its marker once a leader is known', async () => {
    h.brokers.leaders.set('t-0', -1);
    await commit([tp('t', 0)]);
    await flush();
    expect(h.brokers.requests).toHaveLength(0);
    expect(h.coord.markerChannel.queuedMarkers(-1)).toBe(1);
    await vi.advanceTimersByTimeAsync(BACKOFF);
    await flush();
    expect(h.brokers.requests).toHaveLength(0);
    h.brokers.leaders.set('t-0', 1);
    await vi.advanceTimersByTimeAsync(BACKOFF);
    await flush();
    expect(h.brokers.markersFor('t', 0)).toHaveLength(1);
    expect(metadata().state).toBe(S.CompleteCommit);
  });

  it('a deleted topic (the retry finds no such partition) needs no marker: the transaction completes without it', async () => {
    h.brokers.errors.set('u-0', [E.UNKNOWN_TOPIC_OR_PARTITION]);
    await commit();
    await flush();
    expect(metadata().state).toBe(S.PrepareCommit);
    h.brokers.leaders.delete('u-0');
    await vi.advanceTimersByTimeAsync(BACKOFF);
    await flush();
    expect(h.brokers.markersFor('u', 0)).toHaveLength(1);
    expect(metadata().state).toBe(S.CompleteCommit);
  });

  it('a partition unknown from the start is skipped at once', async () => {
    h.brokers.leaders.delete('u-0');
    await commit();
    await flush();
    expect(h.brokers.requests.map((r) => r.brokerId)).toEqual([1]);
    expect(metadata().state).toBe(S.CompleteCommit);
  });

  it('UNSUPPORTED_FOR_MESSAGE_FORMAT removes the partition from those waiting', async () => {
    h.brokers.errors.set('t-0', [E.UNSUPPORTED_FOR_MESSAGE_FORMAT]);
    await commit([tp('t', 0)]);
    await flush();
    expect(metadata().state).toBe(S.CompleteCommit);
  });

  it('INVALID_PRODUCER_EPOCH or TRANSACTION_COORDINATOR_FENCED drops the transaction: no completion is written', async () => {
    for (const code of [E.INVALID_PRODUCER_EPOCH, E.TRANSACTION_COORDINATOR_FENCED]) {
      const id = `x${code}`;
      h.brokers.errors.set('t-0', [code]);
      const appends = h.storage.appends.length;
      await commit([tp('t', 0)], id);
      await flush();
      await vi.advanceTimersByTimeAsync(BACKOFF * 3);
      const r = h.coord.txnManager.getTransactionState(id);
      expect('found' in r && r.found?.metadata.state).toBe(S.PrepareCommit);
      // PrepareCommit was the last write for it
      expect(h.storage.appends.length - appends).toBe(3);
    }
    expect(h.coord.markerChannel.numTxnsWithPendingMarkers).toBe(0);
  });
});

describe('transaction markers – coordinator changes and the completion write', () => {
  it('resigning while markers are in flight drops the transaction; the next coordinator completes it', async () => {
    h.brokers.hold = true;
    await commit([tp('t', 0)]);
    await flush();
    h.coord.onResignation(0, 1);
    h.brokers.answer();
    await flush();
    expect(h.coord.markerChannel.numTxnsWithPendingMarkers).toBe(0);
    expect(h.storage.records(0).at(-1)!.value!.state).toBe(S.PrepareCommit);
    // elected again: the load finds PrepareCommit and sends the markers again
    h.brokers.hold = false;
    await h.coord.onElection(0, 2);
    await flush();
    expect(h.brokers.markersFor('t', 0).map((m) => m.coordinatorEpoch)).toEqual([1, 2]);
    expect(metadata().state).toBe(S.CompleteCommit);
  });

  it('loaded again at a new coordinator epoch while a request of the old one is in flight: its end (failed or answered) leaves the new completion alone', async () => {
    // the controller bumps the leader epoch of a partition whose leader stays (a follower died and
    // left the ISR): the coordinator loads it again while a WriteTxnMarkers request of the old term
    // is still out (its destination was the broker that died)
    for (const [id, end] of [
      ['failed', () => h.brokers.fail()],
      ['answered', () => h.brokers.answer()],
    ] as const) {
      h.brokers.hold = true;
      const r = await commit([tp('t', 0)], id);
      await flush();
      expect(h.brokers.held).toHaveLength(1);
      const epoch = h.coord.txnManager.getTransactionState(id);
      const next = ('found' in epoch ? epoch.found!.coordinatorEpoch : 0) + 1;
      await h.coord.onElection(0, next);
      await flush();
      h.brokers.hold = false;
      end();
      await flush();
      await vi.advanceTimersByTimeAsync(BACKOFF);
      await flush();
      expect(h.brokers.markersFor('t', 0).filter((m) => m.producerEpoch === r.producerEpoch && m.coordinatorEpoch === next)).not.toHaveLength(0);
      const s = h.coord.txnManager.getTransactionState(id);
      expect([id, 'found' in s && s.found?.metadata.state]).toEqual([id, S.CompleteCommit]);
      expect(h.coord.markerChannel.numTxnsWithPendingMarkers).toBe(0);
      // the producer's next transaction is not answered CONCURRENT_TRANSACTIONS
      expect(await h.coord.handleAddPartitionsToTransaction(id, r.producerId, r.producerEpoch, [tp('t', 1)])).toBe(E.NONE);
    }
  });

  it('queued markers of a resigned partition are dropped', async () => {
    h.brokers.leaders.set('t-0', -1);
    await commit([tp('t', 0)]);
    await flush();
    h.coord.onResignation(0, 1);
    expect(h.coord.markerChannel.queuedMarkers(-1)).toBe(0);
    expect(h.coord.markerChannel.numTxnsWithPendingMarkers).toBe(0);
  });

  it('a completion write that finds the log unavailable is retried after the backoff', async () => {
    h.brokers.hold = true;
    await commit([tp('t', 0)]);
    h.storage.nextErrors.push(E.NOT_ENOUGH_REPLICAS);
    await flush();
    h.brokers.answer();
    await flush();
    expect(metadata().state).toBe(S.PrepareCommit);
    expect(metadata().pendingState).toBe(S.CompleteCommit);
    expect(h.coord.markerChannel.logAppendRetries).toBe(1);
    await vi.advanceTimersByTimeAsync(BACKOFF);
    await flush();
    expect([metadata().state, metadata().pendingState]).toEqual([S.CompleteCommit, null]);
  });
});
