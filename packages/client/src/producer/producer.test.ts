import { afterEach, describe, expect, it } from 'vitest';
import { API_KEYS, KafkaError, RecordBatch } from '@samsa/protocol';
import { FakeCluster } from '../testing/fake-cluster.js';
import { keyPartition } from './partitioner.js';
import { Producer } from './producer.js';

interface Appended {
  partition: number;
  producerId: bigint;
  sequence: number;
  count: number;
}

/** `hold`: the Produce answer waits for the promise it returns. */
async function fakeWithProduce(hold?: () => Promise<void>): Promise<{ fc: FakeCluster; appended: Appended[]; offsets: Map<number, bigint> }> {
  const fc = await FakeCluster.start({ brokers: 1 });
  fc.addTopic('t', [[0], [0], [0]]);
  const appended: Appended[] = [];
  const offsets = new Map<number, bigint>();
  const b = fc.broker(0);
  b.on(API_KEYS.InitProducerId, () => ({ throttleTimeMs: 0, errorCode: 0, producerId: 42n, producerEpoch: 0 }));
  b.on(API_KEYS.Produce, async (req) => {
    await hold?.();
    return {
      throttleTimeMs: 0,
      nodeEndpoints: [],
      responses: req.topicData.map((t) => ({
        name: t.name,
        partitionResponses: t.partitionData.map((p) => {
          const batch = new RecordBatch(p.records!);
          appended.push({ partition: p.index, producerId: batch.producerId, sequence: batch.baseSequence, count: batch.recordCount });
          const base = offsets.get(p.index) ?? 0n;
          offsets.set(p.index, base + BigInt(batch.recordCount));
          return {
            index: p.index,
            errorCode: 0,
            baseOffset: base,
            logAppendTimeMs: -1n,
            logStartOffset: 0n,
            recordErrors: [],
            errorMessage: null,
            currentLeader: { leaderId: -1, leaderEpoch: -1 },
          };
        }),
      })),
    };
  });
  return { fc, appended, offsets };
}

describe('Producer', () => {
  let fc: FakeCluster | undefined;
  afterEach(async () => {
    await fc?.close();
    fc = undefined;
  });

  it('producer – with full batches queued for one partition, max.in.flight Produce requests are outstanding at once', async () => {
    // answers wait until 5 requests are outstanding (or 300 ms, so a sender that keeps fewer in flight finishes, and fails)
    let outstanding = 0;
    let most = 0;
    let release: (() => void) | undefined;
    let gate = new Promise<void>((r) => (release = r));
    const f = await fakeWithProduce(async () => {
      outstanding++;
      most = Math.max(most, outstanding);
      if (outstanding >= 5) release!();
      const timer = setTimeout(() => release!(), 300);
      await gate;
      clearTimeout(timer);
      if (--outstanding === 0) gate = new Promise<void>((r) => (release = r));
    });
    fc = f.fc;
    const p = new Producer({ 'bootstrap.servers': fc.bootstrapServers, 'batch.size': 1024 });
    await p.send({ topic: 't', partition: 0, value: 'first' }); // the partition's first batch goes alone (idempotence)
    const value = Buffer.alloc(400, 1);
    const acks = Array.from({ length: 40 }, () => p.send({ topic: 't', partition: 0, value }));
    await Promise.all(acks);
    await p.close();
    expect(most).toBe(5);
    expect(f.appended.reduce((n, a) => n + a.count, 0)).toBe(41);
  });

  it('producer – close() right after sends made before the topic metadata is known delivers them all', async () => {
    // producer-perf-test --num-records 10: every send waits for metadata when close() is called
    const f = await fakeWithProduce();
    fc = f.fc;
    const p = new Producer({ 'bootstrap.servers': fc.bootstrapServers });
    const results: Array<Error | null> = [];
    for (let i = 0; i < 10; i++) p.send({ topic: 't', partition: 0, value: `v${i}` }, (err) => results.push(err));
    const t0 = Date.now();
    await p.close();
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(results).toEqual(Array.from({ length: 10 }, () => null));
    expect(f.appended.reduce((n, a) => n + a.count, 0)).toBe(10);
  });

  it("producer – a Callback object (Kafka's onCompletion(metadata, exception)) is told each record's outcome, as a function callback is", async () => {
    const f = await fakeWithProduce();
    fc = f.fc;
    const p = new Producer({ 'bootstrap.servers': fc.bootstrapServers, 'max.request.size': 2000 });
    await p.send({ topic: 't', partition: 0, value: 'first' }); // metadata known: the callback path
    const seen: Array<{ offset: bigint | null; error: string | null }> = [];
    class Recorder {
      onCompletion(metadata: { offset: bigint } | null, exception: Error | null): void {
        seen.push({ offset: metadata?.offset ?? null, error: exception instanceof KafkaError ? exception.errorName : exception ? String(exception) : null });
      }
    }
    for (let i = 0; i < 3; i++) p.send({ topic: 't', partition: 0, value: `v${i}` }, new Recorder());
    p.send({ topic: 't', partition: 0, value: Buffer.alloc(3000) }, new Recorder()); // over max.request.size
    const fn: Array<bigint | null> = [];
    p.send({ topic: 't', partition: 0, value: 'v3' }, (err, m) => fn.push(err ? null : m!.offset));
    await p.flush();
    await p.close();
    expect(seen).toEqual([
      { offset: null, error: 'MESSAGE_TOO_LARGE' }, // fails at once, before the others are acknowledged
      { offset: 1n, error: null },
      { offset: 2n, error: null },
      { offset: 3n, error: null },
    ]);
    expect(fn).toEqual([4n]);
  });

  it('producer – sends to an explicit partition and numbers sequences per partition', async () => {
    const f = await fakeWithProduce();
    fc = f.fc;
    const p = new Producer({ 'bootstrap.servers': fc.bootstrapServers, 'linger.ms': 1 });
    const metas = await Promise.all(Array.from({ length: 30 }, (_, i) => p.send({ topic: 't', partition: i % 3, value: `v${i}` })));
    await p.close();
    expect(metas.filter((m) => m.partition === 1).map((m) => m.offset)).toEqual(Array.from({ length: 10 }, (_, i) => BigInt(i)));
    for (const part of [0, 1, 2]) {
      const seqs = f.appended.filter((a) => a.partition === part);
      let next = 0;
      for (const s of seqs) {
        expect(s.producerId).toBe(42n);
        expect(s.sequence).toBe(next);
        next += s.count;
      }
      expect(next).toBe(10);
    }
  });

  it('producer – keyed records go to toPositive(murmur2(key)) % partitions', async () => {
    const f = await fakeWithProduce();
    fc = f.fc;
    const p = new Producer({ 'bootstrap.servers': fc.bootstrapServers, 'linger.ms': 5 });
    const keys = Array.from({ length: 200 }, (_, i) => `key-${i}`);
    const metas = await Promise.all(keys.map((k) => p.send({ topic: 't', key: k, value: 'v' })));
    await p.close();
    expect(metas.map((m) => m.partition)).toEqual(keys.map((k) => keyPartition(Buffer.from(k), 3)));
  });

  it('producer – retries keep sequence order: a refused batch and the ones behind it are resent in order', async () => {
    const fc2 = await FakeCluster.start({ brokers: 1 });
    fc = fc2;
    fc2.addTopic('t', [[0]]);
    const b = fc2.broker(0);
    b.on(API_KEYS.InitProducerId, () => ({ throttleTimeMs: 0, errorCode: 0, producerId: 7n, producerEpoch: 0 }));
    let expected = 0;
    let failOnce = true;
    const written: number[] = [];
    const log: string[] = [];
    b.on(API_KEYS.Produce, (req) => {
      const p = req.topicData[0]!.partitionData[0]!;
      const batch = new RecordBatch(p.records!);
      let errorCode = 0;
      let baseOffset = -1n;
      if (batch.baseSequence < expected)
        errorCode = 46; // DUPLICATE_SEQUENCE_NUMBER
      else if (batch.baseSequence > expected)
        errorCode = 45; // OUT_OF_ORDER_SEQUENCE_NUMBER
      else if (failOnce && expected > 0) {
        failOnce = false;
        errorCode = 6; // NOT_LEADER_OR_FOLLOWER
      } else {
        baseOffset = BigInt(written.length);
        for (const r of batch) written.push(Number(r.value!.toString()));
        expected += batch.recordCount;
      }
      log.push(`${batch.baseSequence}:${errorCode}`);
      return {
        throttleTimeMs: 0,
        nodeEndpoints: [],
        responses: [
          {
            name: 't',
            partitionResponses: [
              {
                index: 0,
                errorCode,
                baseOffset,
                logAppendTimeMs: -1n,
                logStartOffset: 0n,
                recordErrors: [],
                errorMessage: null,
                currentLeader: { leaderId: -1, leaderEpoch: -1 },
              },
            ],
          },
        ],
      };
    });
    const p = new Producer({ 'bootstrap.servers': fc2.bootstrapServers, 'batch.size': 200, 'retry.backoff.ms': 5 });
    const sends = Array.from({ length: 200 }, (_, i) => p.send({ topic: 't', value: String(i) }));
    const metas = await Promise.all(sends);
    await p.close();
    expect(written).toEqual(Array.from({ length: 200 }, (_, i) => i));
    expect(metas.map((m) => m.offset)).toEqual(Array.from({ length: 200 }, (_, i) => BigInt(i)));
    expect(log.some((l) => l.endsWith(':6'))).toBe(true);
  });
});
