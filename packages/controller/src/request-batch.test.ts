import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { BrokerInfo } from '@samsa/zk-paths';
import { ControllerContext } from './context.js';
import { RequestBatch, STOP_REPLICA_PARTITIONS_LOGGED } from './request-batch.js';
import type { BrokerChannel, ControlRequest, ControlResponse } from './requests.js';
import { testBroker } from './test-support.js';

const log = pino({ level: 'silent' });
const tp = { topic: 't', partition: 0 };

const broker = (id: number): BrokerInfo => testBroker(id, BigInt(100 + id));

/** A channel whose requests wait until the test answers or drops them. */
function setup(timeoutMs = 30_000, logger = log) {
  const ctx = new ControllerContext();
  ctx.epoch = 1;
  for (const id of [0, 1, 2]) ctx.liveBrokers.set(id, broker(id));
  ctx.addTopic('t', 'AAAAAAAAAAAAAAAAAAAAAA');
  ctx.setAssignment(tp, { replicas: [0, 1, 2], addingReplicas: [], removingReplicas: [] });
  ctx.setLeadership(tp, { state: { leader: 1, leaderEpoch: 4, isr: [1, 2], controllerEpoch: 1 }, zkVersion: 3 });
  const pending: Array<{ brokerId: number; request: ControlRequest; answer: (r: ControlResponse) => void; drop: () => void }> = [];
  const channel: BrokerChannel = {
    addBroker: () => undefined,
    removeBroker: () => undefined,
    send: (brokerId, request, onResponse, onDropped) => pending.push({ brokerId, request, answer: (r) => onResponse?.(r), drop: () => onDropped?.() }),
    close: async () => undefined,
  };
  return { ctx, pending, batch: new RequestBatch(ctx, 0, channel, logger, timeoutMs) };
}

const ok: ControlResponse = { errorCode: 0, partitionErrors: [] };
const settled = async (p: Promise<void>) => {
  let done = false;
  void p.then(() => (done = true));
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  return done;
};

describe('request batch', () => {
  it('request batch – send() resolves only once every broker answered its UpdateMetadata', async () => {
    const { batch, pending } = setup();
    batch.addLeaderAndIsr([1, 2], tp);
    const propagated = batch.send();
    const updates = pending.filter((p) => p.request.kind === 'UpdateMetadata');
    expect(updates.map((u) => u.brokerId).sort()).toEqual([0, 1, 2]);
    // LeaderAndIsr answers alone do not settle it
    for (const p of pending.filter((x) => x.request.kind === 'LeaderAndIsr')) p.answer(ok);
    updates[0]!.answer(ok);
    updates[1]!.answer(ok);
    expect(await settled(propagated)).toBe(false);
    updates[2]!.answer(ok);
    expect(await settled(propagated)).toBe(true);
  });

  it('request batch – a dropped UpdateMetadata (broker gone) counts as done', async () => {
    const { batch, pending } = setup();
    batch.addUpdateMetadata([0, 1], [tp]);
    const propagated = batch.send();
    pending[0]!.answer(ok);
    expect(await settled(propagated)).toBe(false);
    pending[1]!.drop();
    expect(await settled(propagated)).toBe(true);
  });

  it('request batch – a broker that never answers holds it for the timeout only', async () => {
    const { batch } = setup(50);
    batch.addUpdateMetadata([0, 1, 2], [tp]);
    const started = Date.now();
    await batch.send();
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
  });

  it('request batch – a batch without UpdateMetadata resolves at once', async () => {
    const { batch, pending } = setup();
    batch.addStopReplica([2], tp, false);
    expect(await settled(batch.send())).toBe(true);
    expect(pending.map((p) => p.request.kind)).toEqual(['StopReplica']);
  });

  it('request batch – a small StopReplica names its partitions in the state-change log, a large one is counted', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino({ level: 'info' }, { write: (l: string) => lines.push(JSON.parse(l) as Record<string, unknown>) });
    const { ctx, batch, pending } = setup(30_000, logger);
    const sent = () => lines.filter((l) => l.msg === 'sending StopReplica');
    batch.addStopReplica([2], tp, false);
    await batch.send();
    expect(sent().map((l) => l.partitions)).toEqual([['t-0']]);
    const many = STOP_REPLICA_PARTITIONS_LOGGED + 1;
    ctx.addTopic('big', 'BBBBBBBBBBBBBBBBBBBBBB');
    for (let p = 0; p < many; p++) batch.addStopReplica([2], { topic: 'big', partition: p }, p === 0);
    await batch.send();
    expect(sent()[1]).toMatchObject({ broker: 2, partitionCount: many, deletePartitions: 1 });
    expect(sent()[1]).not.toHaveProperty('partitions');
    // the request itself still carries every partition
    const last = pending.at(-1)!.request;
    expect(last.kind === 'StopReplica' && last.partitions.length).toBe(many);
  });
});
