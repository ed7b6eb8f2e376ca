import { describe, expect, test } from 'vitest';
import { pino } from 'pino';
import { ErrorCode, type DecodedRequestOf } from '@samsa/protocol';
import { ProducerIdBlockZNode, ZkCode, ZkError, type ZkStat } from '@samsa/zk-paths';
import { initProducerIdHandler } from '../handlers/init-producer-id.js';
import type { RequestContext } from '../api/api-handler.js';
import type { BrokerServices } from '../handlers/services.js';
import { ProducerIdManager, type ProducerIdZk } from './producer-id-manager.js';

const stat = (version: number) => ({ version }) as ZkStat;

/** `/latest_producer_id_block` in memory, with ZooKeeper's version check; `interlopers` simulates other brokers winning races. */
class FakeZk implements ProducerIdZk {
  data: Buffer | null = Buffer.alloc(0);
  version = 0;
  interlopers = 0;
  sets = 0;
  fail: Error | null = null;

  async getOrNull(_path: string) {
    if (this.fail) throw this.fail;
    return this.data === null ? null : { data: this.data, stat: stat(this.version) };
  }

  async set(path: string, data: Buffer, version = -1) {
    this.sets++;
    if (this.interlopers > 0) {
      this.interlopers--;
      // another broker claims the next block between our read and our write
      const cur = this.data && this.data.length > 0 ? ProducerIdBlockZNode.decode(this.data) : null;
      const start = cur ? BigInt(cur.blockEnd) + 1n : 0n;
      this.data = ProducerIdBlockZNode.encode({ brokerId: 99, blockStart: String(start), blockEnd: String(start + 999n) });
      this.version++;
    }
    if (version !== -1 && version !== this.version) throw new ZkError(ZkCode.BAD_VERSION, path);
    this.data = data;
    this.version++;
    return stat(this.version);
  }

  async create(path: string, data: Buffer | null = null) {
    if (this.data !== null) throw new ZkError(ZkCode.NODE_EXISTS, path);
    this.data = data ?? Buffer.alloc(0);
    this.version = 0;
    return path;
  }

  block() {
    return this.data && this.data.length > 0 ? ProducerIdBlockZNode.decode(this.data) : null;
  }
}

describe('producer id manager', () => {
  test('producer ids – the first block is 0..999, written to /latest_producer_id_block as Kafka writes it', async () => {
    const zk = new FakeZk();
    const m = new ProducerIdManager({ brokerId: 2, zk });
    expect(await m.generateProducerId()).toBe(0n);
    expect(await m.generateProducerId()).toBe(1n);
    expect(zk.block()).toEqual({ brokerId: 2, blockStart: '0', blockEnd: '999' });
    expect(JSON.parse(zk.data!.toString())).toEqual({ version: 1, broker: 2, block_start: '0', block_end: '999' });
  });

  test('producer ids – brokers claim consecutive blocks; a used-up block claims the next', async () => {
    const zk = new FakeZk();
    const a = new ProducerIdManager({ brokerId: 0, zk });
    const b = new ProducerIdManager({ brokerId: 1, zk });
    expect(await a.generateProducerId()).toBe(0n);
    expect(await b.generateProducerId()).toBe(1000n);
    for (let i = 1; i < 1000; i++) expect(await a.generateProducerId()).toBe(BigInt(i));
    expect(await a.generateProducerId()).toBe(2000n);
    expect(zk.block()).toEqual({ brokerId: 0, blockStart: '2000', blockEnd: '2999' });
  });

  test('producer ids – a lost race (BAD_VERSION) re-reads and claims the block after the winner’s', async () => {
    const zk = new FakeZk();
    zk.interlopers = 2;
    const m = new ProducerIdManager({ brokerId: 3, zk });
    expect(await m.generateProducerId()).toBe(2000n);
    expect(zk.sets).toBe(3);
    expect(m.currentBlock).toEqual({ first: 2000n, last: 2999n });
  });

  test('producer ids – concurrent requests share one claim and get distinct ids', async () => {
    const zk = new FakeZk();
    const m = new ProducerIdManager({ brokerId: 0, zk });
    const ids = await Promise.all(Array.from({ length: 50 }, () => m.generateProducerId()));
    expect(new Set(ids).size).toBe(50);
    expect(ids.sort((x, y) => (x < y ? -1 : 1))[49]).toBe(49n);
    expect(zk.sets).toBe(1);
  });

  test('producer ids – a missing znode is created with the first block', async () => {
    const zk = new FakeZk();
    zk.data = null;
    const m = new ProducerIdManager({ brokerId: 0, zk });
    expect(await m.generateProducerId()).toBe(0n);
    expect(zk.block()).toEqual({ brokerId: 0, blockStart: '0', blockEnd: '999' });
  });
});

describe('InitProducerId handler', () => {
  const initCalls: unknown[][] = [];
  function services(zk: FakeZk): BrokerServices {
    const transactionCoordinator = {
      handleInitProducerId: async (...args: unknown[]) => {
        initCalls.push(args);
        return { errorCode: ErrorCode.NOT_COORDINATOR, producerId: -1n, producerEpoch: -1 };
      },
    };
    return {
      brokerId: 1,
      producerIds: new ProducerIdManager({ brokerId: 1, zk }),
      transactionCoordinator,
      log: pino({ enabled: false }),
    } as unknown as BrokerServices;
  }
  const req = (body: Partial<DecodedRequestOf<22>['body']>, apiVersion = 4) =>
    ({
      apiKey: 22,
      apiVersion,
      body: { transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1, ...body },
    }) as unknown as DecodedRequestOf<22>;
  const ctx = {} as RequestContext;

  test('InitProducerId – no transactional id: ids from this broker’s block, epoch 0', async () => {
    const s = services(new FakeZk());
    expect(await initProducerIdHandler.handle(req({}), ctx, s)).toEqual({ throttleTimeMs: 0, errorCode: 0, producerId: 0n, producerEpoch: 0 });
    expect(await initProducerIdHandler.handle(req({}, 0), ctx, s)).toMatchObject({ errorCode: 0, producerId: 1n, producerEpoch: 0 });
    // KIP-360: an idempotent producer bumping its epoch gets a new id, as Kafka does without a transactional id
    expect(await initProducerIdHandler.handle(req({ producerId: 1n, producerEpoch: 0 }), ctx, s)).toMatchObject({
      errorCode: 0,
      producerId: 2n,
      producerEpoch: 0,
    });
  });

  test('InitProducerId – transactional ids go to the transaction coordinator with the timeout, the KIP-360 id/epoch and the version', async () => {
    const s = services(new FakeZk());
    initCalls.length = 0;
    expect(await initProducerIdHandler.handle(req({ transactionalId: 'tx-1' }), ctx, s)).toEqual({
      throttleTimeMs: 0,
      errorCode: ErrorCode.NOT_COORDINATOR,
      producerId: -1n,
      producerEpoch: -1,
    });
    await initProducerIdHandler.handle(req({ transactionalId: 'tx-1', producerId: 7n, producerEpoch: 2 }, 3), ctx, s);
    expect(initCalls).toEqual([
      ['tx-1', 60_000, null, 4],
      ['tx-1', 60_000, { producerId: 7n, producerEpoch: 2 }, 3],
    ]);
  });

  test('InitProducerId – producerId and producerEpoch must be both set or both -1', async () => {
    const s = services(new FakeZk());
    expect(await initProducerIdHandler.handle(req({ producerId: 5n }), ctx, s)).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST, producerId: -1n });
    expect(await initProducerIdHandler.handle(req({ producerEpoch: 3 }), ctx, s)).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST });
  });

  test('InitProducerId – ZooKeeper trouble is the retriable COORDINATOR_LOAD_IN_PROGRESS', async () => {
    const zk = new FakeZk();
    zk.fail = new ZkError(ZkCode.CONNECTION_LOSS, '/latest_producer_id_block');
    const s = services(zk);
    const err = await initProducerIdHandler.handle(req({}), ctx, s).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: ErrorCode.COORDINATOR_LOAD_IN_PROGRESS });
    expect(initProducerIdHandler.errorResponse(req({}), ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)).toEqual({
      throttleTimeMs: 0,
      errorCode: 14,
      producerId: -1n,
      producerEpoch: -1,
    });
    zk.fail = null;
    expect(await initProducerIdHandler.handle(req({}), ctx, s)).toMatchObject({ errorCode: 0, producerId: 0n });
  });
});
