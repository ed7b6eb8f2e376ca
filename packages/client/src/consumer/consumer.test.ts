import { afterEach, describe, expect, it } from 'vitest';
import { API_KEYS, CompressionType, encodeEndTxnMarkerBatch, ErrorCode, topicPartitionKey, type JoinGroupRequest } from '@samsa/protocol';
import { FakeCluster } from '../testing/fake-cluster.js';
import { FakeGroup } from '../testing/fake-group.js';
import { Consumer } from './consumer.js';
import { CommitFailedError, NoOffsetForPartitionError } from './errors.js';
import { stringDeserializer, type TopicPartition } from './types.js';

const until = async (cond: () => boolean | Promise<boolean>, ms = 10_000, what = 'condition') => {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

interface Setup {
  fc: FakeCluster;
  group: FakeGroup;
}

async function setup(brokers = 1, partitions = 3): Promise<Setup> {
  const fc = await FakeCluster.start({ brokers });
  fc.addTopic(
    't',
    Array.from({ length: partitions }, (_, p) => [p % brokers]),
  );
  const group = new FakeGroup(fc, 0);
  return { fc, group };
}

function consumerFor(s: Setup, extra: Record<string, unknown> = {}): Consumer<string | null, string | null> {
  return new Consumer<string | null, string | null>({
    'bootstrap.servers': s.fc.bootstrapServers,
    'group.id': 'g',
    'client.id': 'c1',
    'auto.offset.reset': 'earliest',
    'heartbeat.interval.ms': 20,
    'session.timeout.ms': 2000,
    'fetch.max.wait.ms': 20,
    'retry.backoff.ms': 10,
    'key.deserializer': stringDeserializer,
    'value.deserializer': stringDeserializer,
    ...extra,
  });
}

/** Polls until `n` records arrived (or the deadline). */
async function pollN<K, V>(c: Consumer<K, V>, n: number, ms = 10_000) {
  const out: Awaited<ReturnType<Consumer<K, V>['poll']>> = [];
  const end = Date.now() + ms;
  while (out.length < n && Date.now() < end) out.push(...(await c.poll(100)));
  return out;
}

const joins = (s: Setup) =>
  s.fc
    .broker(0)
    .requestsFor(API_KEYS.JoinGroup)
    .map((r) => r.body as JoinGroupRequest);

describe('Consumer (fake brokers)', () => {
  let s: Setup | undefined;
  const consumers: Consumer<unknown, unknown>[] = [];
  afterEach(async () => {
    await Promise.all(consumers.splice(0).map((c) => c.close({ timeoutMs: 2000 }).catch(() => undefined)));
    await s?.fc.close();
    s = undefined;
  });

  it('coordinator – JoinGroup answered MEMBER_ID_REQUIRED is retried with the member id given; the member gets every partition and reads them', async () => {
    s = await setup();
    for (let p = 0; p < 3; p++) s.group.append('t', p, [{ value: `a${p}` }, { value: `b${p}` }]);
    const c = consumerFor(s);
    consumers.push(c);
    const assigned: TopicPartition[][] = [];
    c.subscribe(['t'], { onPartitionsAssigned: (tps) => void assigned.push(tps) });
    const records = await pollN(c, 6);
    expect(records.map((r) => r.value).sort()).toEqual(['a0', 'a1', 'a2', 'b0', 'b1', 'b2']);
    const j = joins(s);
    expect(j[0]!.memberId).toBe('');
    expect(j[1]!.memberId).toMatch(/^c1-/);
    expect(j[1]!.protocols.map((p) => p.name)).toEqual(['range', 'cooperative-sticky'].filter((n) => c.assignors.some((a) => a.name === n)));
    expect(assigned).toEqual([[0, 1, 2].map((partition) => ({ topic: 't', partition }))]);
    expect(c.groupMetadata().generationId).toBe(s.group.generationId);
  });

  it('coordinator – REBALANCE_IN_PROGRESS on a heartbeat makes the next poll rejoin (eager: revoke, then assign)', async () => {
    s = await setup();
    const c = consumerFor(s);
    consumers.push(c);
    const events: string[] = [];
    c.subscribe(['t'], {
      onPartitionsRevoked: (t) => void events.push(`revoked ${t.length}`),
      onPartitionsAssigned: (t) => void events.push(`assigned ${t.length}`),
    });
    await until(async () => (await c.poll(50), c.assignment().length === 3), 10_000, 'assignment');
    const gen = s.group.generationId;
    s.group.rebalancing = true;
    await until(async () => (await c.poll(50), s!.group.generationId > gen && c.assignment().length === 3), 10_000, 'rejoin');
    expect(events).toEqual(['assigned 3', 'revoked 3', 'assigned 3']);
    expect(joins(s).at(-1)!.memberId).toBe(c.groupMetadata().memberId);
  });

  it('coordinator – UNKNOWN_MEMBER_ID on a heartbeat resets the member id: partitions lost, rejoin from an empty member id', async () => {
    s = await setup();
    const c = consumerFor(s);
    consumers.push(c);
    const events: string[] = [];
    c.subscribe(['t'], {
      onPartitionsLost: (t) => void events.push(`lost ${t.length}`),
      onPartitionsRevoked: (t) => void events.push(`revoked ${t.length}`),
      onPartitionsAssigned: (t) => void events.push(`assigned ${t.length}`),
    });
    await until(async () => (await c.poll(50), c.assignment().length === 3));
    const oldId = c.groupMetadata().memberId;
    const before = joins(s).length;
    s.group.inject.Heartbeat = [ErrorCode.UNKNOWN_MEMBER_ID];
    await until(() => c.groupMetadata().generationId === -1, 5000, 'generation reset');
    await until(async () => (await c.poll(50), c.groupMetadata().generationId > 0));
    expect(joins(s)[before]!.memberId).toBe('');
    expect(c.groupMetadata().memberId).not.toBe(oldId);
    expect(events).toEqual(['assigned 3', 'lost 3', 'assigned 3']);
  });

  it('coordinator – ILLEGAL_GENERATION on a heartbeat resets the generation but keeps the member id', async () => {
    s = await setup();
    const c = consumerFor(s);
    consumers.push(c);
    const events: string[] = [];
    c.subscribe(['t'], {
      onPartitionsLost: (t) => void events.push(`lost ${t.length}`),
      onPartitionsAssigned: (t) => void events.push(`assigned ${t.length}`),
    });
    await until(async () => (await c.poll(50), c.assignment().length === 3));
    const id = c.groupMetadata().memberId;
    const before = joins(s).length;
    s.group.inject.Heartbeat = [ErrorCode.ILLEGAL_GENERATION];
    await until(() => c.groupMetadata().generationId === -1, 5000, 'generation reset');
    await until(async () => (await c.poll(50), c.groupMetadata().generationId > 0));
    expect(joins(s)[before]!.memberId).toBe(id);
    expect(events).toEqual(['assigned 3', 'lost 3', 'assigned 3']);
  });

  it('coordinator – NOT_COORDINATOR: the coordinator is looked up again and heartbeats go to the new one', async () => {
    s = await setup(2);
    const c = consumerFor(s);
    consumers.push(c);
    c.subscribe(['t']);
    await until(async () => (await c.poll(50), c.assignment().length === 3));
    const finds = () => s!.fc.brokers.reduce((n, b) => n + b.requestsFor(API_KEYS.FindCoordinator).length, 0);
    const before = finds();
    s.group.coordinatorId = 1;
    await until(() => s!.fc.broker(1).requestsFor(API_KEYS.Heartbeat).length > 0, 10_000, 'heartbeat on broker 1');
    expect(finds()).toBeGreaterThan(before);
    expect(c.assignment().length).toBe(3);
  });

  it('coordinator – max.poll.interval.ms without a poll: the member sends LeaveGroup; the next poll rejoins and reports the partitions lost', async () => {
    s = await setup();
    const c = consumerFor(s, { 'max.poll.interval.ms': 300 });
    consumers.push(c);
    const events: string[] = [];
    c.subscribe(['t'], {
      onPartitionsLost: (t) => void events.push(`lost ${t.length}`),
      onPartitionsAssigned: (t) => void events.push(`assigned ${t.length}`),
    });
    await until(async () => (await c.poll(50), c.assignment().length === 3));
    const id = c.groupMetadata().memberId;
    await until(() => s!.group.leaves.includes(id) && c.groupMetadata().memberId === '', 5000, 'LeaveGroup');
    await until(async () => (await c.poll(50), c.groupMetadata().generationId > 0));
    expect(events).toEqual(['assigned 3', 'lost 3', 'assigned 3']);
  });

  it('coordinator – two members split the partitions (range) with no overlap; when one closes the other takes all', async () => {
    s = await setup(1, 4);
    const a = consumerFor(s, { 'client.id': 'a' });
    const b = consumerFor(s, { 'client.id': 'b' });
    consumers.push(a, b);
    s.group.joinWindowMs = 300;
    a.subscribe(['t']);
    b.subscribe(['t']);
    await until(
      async () => (await Promise.all([a.poll(50), b.poll(50)]), a.assignment().length + b.assignment().length === 4 && a.assignment().length === 2),
      10_000,
      'split',
    );
    const keys = [...a.assignment(), ...b.assignment()].map((tp) => tp.partition).sort();
    expect(keys).toEqual([0, 1, 2, 3]);
    await b.close();
    s.group.joinWindowMs = 30;
    await until(async () => (await a.poll(50), a.assignment().length === 4), 10_000, 'takeover');
  });

  it('coordinator – cooperative-sticky: a joining member takes half without the first member revoking the partitions it keeps (revoke only what moves, then rejoin)', async () => {
    s = await setup(1, 4);
    s.group.joinWindowMs = 150;
    const events: string[] = [];
    const listener = (name: string) => ({
      onPartitionsRevoked: (t: TopicPartition[]) => void events.push(`${name} revoked ${t.map((x) => x.partition).join(',')}`),
      onPartitionsAssigned: (t: TopicPartition[]) => void events.push(`${name} assigned ${t.map((x) => x.partition).join(',')}`),
    });
    const a = consumerFor(s, { 'client.id': 'a', 'partition.assignment.strategy': 'cooperative-sticky' });
    consumers.push(a);
    a.subscribe(['t'], listener('a'));
    await until(async () => (await a.poll(50), a.assignment().length === 4), 10_000, 'a owns all');
    const b = consumerFor(s, { 'client.id': 'b', 'partition.assignment.strategy': 'cooperative-sticky' });
    consumers.push(b);
    b.subscribe(['t'], listener('b'));
    const overlaps: string[] = [];
    await until(
      async () => {
        await Promise.all([a.poll(50), b.poll(50)]);
        const pa = a.assignment().map((x) => x.partition);
        const pb = b.assignment().map((x) => x.partition);
        if (pa.some((p) => pb.includes(p))) overlaps.push(`${pa} / ${pb}`);
        return pa.length === 2 && pb.length === 2;
      },
      15_000,
      'a 2/2 split',
    );
    expect(overlaps).toEqual([]);
    const aEvents = events.filter((e) => e.startsWith('a '));
    expect(aEvents[0]).toBe('a assigned 0,1,2,3');
    // a revokes exactly the two partitions that move, never all four
    const revoked = aEvents.filter((e) => e.includes('revoked'));
    expect(revoked).toHaveLength(1);
    expect(revoked[0]!.split(' ')[2]!.split(',')).toHaveLength(2);
    expect(a.assignors[0]!.supportedProtocols).toContain('COOPERATIVE');
    const moved = revoked[0]!.split(' ')[2]!;
    expect(events.filter((e) => e.startsWith('b assigned') && e !== 'b assigned ').map((e) => e.split(' ')[2])).toEqual([moved]);
  });

  it('offsets – auto.offset.reset: earliest reads from the start, latest from the end, none throws NoOffsetForPartitionError; a committed offset wins', async () => {
    s = await setup(1, 1);
    s.group.append('t', 0, [{ value: 'x0' }, { value: 'x1' }, { value: 'x2' }]);
    const tp = { topic: 't', partition: 0 };
    const earliest = consumerFor(s, { 'group.id': null, 'enable.auto.commit': false });
    consumers.push(earliest);
    earliest.assign([tp]);
    expect((await pollN(earliest, 3)).map((r) => r.offset)).toEqual([0n, 1n, 2n]);
    const latest = consumerFor(s, { 'auto.offset.reset': 'latest', 'group.id': null });
    consumers.push(latest);
    latest.assign([tp]);
    expect(await latest.position(tp)).toBe(3n);
    const none = consumerFor(s, { 'auto.offset.reset': 'none' });
    consumers.push(none);
    none.assign([tp]);
    await expect(none.poll(500)).rejects.toBeInstanceOf(NoOffsetForPartitionError);
    s.group.committed.set('t-0', 1n);
    const committed = consumerFor(s, { 'auto.offset.reset': 'none' });
    consumers.push(committed);
    committed.assign([tp]);
    expect((await pollN(committed, 2)).map((r) => r.value)).toEqual(['x1', 'x2']);
  });

  it('offsets – commitSync commits the positions with the generation; a commit rejected with ILLEGAL_GENERATION is a CommitFailedError and resets the generation', async () => {
    s = await setup(1, 2);
    s.group.append('t', 0, [{ value: 'a' }, { value: 'b' }]);
    s.group.append('t', 1, [{ value: 'c' }]);
    const c = consumerFor(s, { 'enable.auto.commit': false });
    consumers.push(c);
    c.subscribe(['t']);
    await pollN(c, 3);
    await c.commitSync();
    expect(s.group.commits.at(-1)).toEqual({ generationId: s.group.generationId, memberId: c.groupMetadata().memberId, offsets: { 't-0': 2n, 't-1': 1n } });
    expect(await c.committed([{ topic: 't', partition: 0 }])).toEqual(new Map([['t-0', { offset: 2n, leaderEpoch: -1, metadata: '' }]]));
    s.group.inject.OffsetCommit = [ErrorCode.ILLEGAL_GENERATION];
    await expect(c.commitSync([{ topic: 't', partition: 0, offset: 1 }])).rejects.toBeInstanceOf(CommitFailedError);
    expect(c.groupMetadata().generationId).toBe(-1);
  });

  it('offsets – commitSync retries NOT_COORDINATOR after finding the coordinator again; commitAsync reports errors to its callback', async () => {
    s = await setup();
    const c = consumerFor(s, { 'enable.auto.commit': false });
    consumers.push(c);
    c.subscribe(['t']);
    await until(async () => (await c.poll(50), c.assignment().length === 3));
    s.group.inject.OffsetCommit = [ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS];
    await c.commitSync([{ topic: 't', partition: 2, offset: 7 }]);
    expect(s.group.committed.get('t-2')).toBe(7n);
    s.group.inject.OffsetCommit = [ErrorCode.REBALANCE_IN_PROGRESS];
    const got = await new Promise<Error | null>((resolve) => void c.commitAsync([{ topic: 't', partition: 1, offset: 3 }], (_o, err) => resolve(err)));
    expect(got).toBeInstanceOf(CommitFailedError);
    expect(s.group.committed.has('t-1')).toBe(false);
  });

  it('offsets – enable.auto.commit commits the consumed positions from poll every auto.commit.interval.ms and on close', async () => {
    s = await setup(1, 1);
    s.group.append('t', 0, [{ value: 'a' }, { value: 'b' }]);
    const c = consumerFor(s, { 'auto.commit.interval.ms': 100 });
    c.subscribe(['t']);
    await pollN(c, 2);
    await until(async () => (await c.poll(20), s!.group.committed.get('t-0') === 2n), 5000, 'auto commit');
    s.group.append('t', 0, [{ value: 'c' }]);
    await pollN(c, 1);
    await c.close();
    expect(s.group.committed.get('t-0')).toBe(3n);
    expect(s.group.leaves.length).toBe(1);
  });

  it('offsets – manual assign() with a group.id: auto commit on close commits without a generation (generation -1, no member id)', async () => {
    s = await setup(1, 1);
    s.group.append('t', 0, [{ value: 'a' }, { value: 'b' }, { value: 'c' }]);
    const c = consumerFor(s);
    c.assign([{ topic: 't', partition: 0 }]);
    await pollN(c, 3);
    await c.close();
    expect(s.group.commits.at(-1)).toEqual({ generationId: -1, memberId: '', offsets: { 't-0': 3n } });
  });

  it('fetcher – compressed batches are decoded, max.poll.records caps a poll, control batches are skipped, seek / pause / resume', async () => {
    s = await setup(1, 2);
    s.group.append(
      't',
      0,
      Array.from({ length: 5 }, (_, i) => ({ key: `k${i}`, value: `g${i}` })),
      { compression: CompressionType.GZIP },
    );
    s.group.append(
      't',
      0,
      Array.from({ length: 5 }, (_, i) => ({ value: `l${i}` })),
      { compression: CompressionType.LZ4 },
    );
    s.group.append(
      't',
      0,
      Array.from({ length: 5 }, (_, i) => ({ value: `z${i}` })),
      { compression: CompressionType.ZSTD },
    );
    s.group.append(
      't',
      0,
      Array.from({ length: 5 }, (_, i) => ({ value: `s${i}` })),
      { compression: CompressionType.SNAPPY },
    );
    // a transaction marker at offset 20 (as a control batch of its own)
    const log = s.group.logs.get('t-0')!;
    log.push({
      baseOffset: 20n,
      buf: encodeEndTxnMarkerBatch({ baseOffset: 20n, producerId: 9n, producerEpoch: 0, commit: true, coordinatorEpoch: 0, timestamp: Date.now() }),
      count: 1,
    });
    s.group.append('t', 0, [{ value: 'after' }]);
    s.group.append('t', 1, [{ value: 'p1' }]);
    const c = consumerFor(s, { 'group.id': null, 'max.poll.records': 7 });
    consumers.push(c);
    c.assign([{ topic: 't', partition: 0 }]);
    const first = await c.poll(5000);
    expect(first.length).toBeLessThanOrEqual(7);
    const all = [...first, ...(await pollN(c, 21 - first.length))];
    expect(all.map((r) => r.value)).toEqual([...['g', 'l', 'z', 's'].flatMap((p) => Array.from({ length: 5 }, (_, i) => `${p}${i}`)), 'after']);
    expect(all.at(-1)!.offset).toBe(21n);
    expect(all[0]!.key).toBe('k0');
    c.seek({ topic: 't', partition: 0 }, 19);
    expect((await pollN(c, 2)).map((r) => r.value)).toEqual(['s4', 'after']);
    c.assign([
      { topic: 't', partition: 0 },
      { topic: 't', partition: 1 },
    ]);
    c.pause([{ topic: 't', partition: 1 }]);
    expect(await c.poll(200)).toEqual([]);
    c.resume([{ topic: 't', partition: 1 }]);
    expect((await pollN(c, 1)).map((r) => r.value)).toEqual(['p1']);
    c.seekToBeginning([{ topic: 't', partition: 1 }]);
    expect(await c.position({ topic: 't', partition: 1 })).toBe(0n);
    c.seekToEnd([{ topic: 't', partition: 0 }]);
    expect(await c.position({ topic: 't', partition: 0 })).toBe(22n);
  });

  it('fetcher – isolation.level=read_committed skips the batches of aborted transactions (abortedTransactions) and every control batch; read_uncommitted returns them', async () => {
    s = await setup(1, 1);
    const g = s.group;
    g.append('t', 0, [{ value: 'aborted-1' }, { value: 'aborted-2' }], { transactional: true, producerId: 5n });
    const log = g.logs.get('t-0')!;
    log.push({
      baseOffset: 2n,
      buf: encodeEndTxnMarkerBatch({ baseOffset: 2n, producerId: 5n, producerEpoch: 0, commit: false, coordinatorEpoch: 0 }),
      count: 1,
    });
    g.append('t', 0, [{ value: 'committed-1' }], { transactional: true, producerId: 6n });
    log.push({
      baseOffset: 4n,
      buf: encodeEndTxnMarkerBatch({ baseOffset: 4n, producerId: 6n, producerEpoch: 0, commit: true, coordinatorEpoch: 0 }),
      count: 1,
    });
    g.append('t', 0, [{ value: 'plain' }]);
    g.aborted.set('t-0', [{ producerId: 5n, firstOffset: 0n }]);
    const read = async (level: string) => {
      const c = consumerFor(s!, { 'group.id': null, 'isolation.level': level });
      consumers.push(c);
      c.assign([{ topic: 't', partition: 0 }]);
      const out: string[] = [];
      const end = Date.now() + 5000;
      while (Date.now() < end && (await c.position({ topic: 't', partition: 0 })) < 6n) out.push(...(await c.poll(100)).map((r) => r.value!));
      return out;
    };
    expect(await read('read_committed')).toEqual(['committed-1', 'plain']);
    expect(await read('read_uncommitted')).toEqual(['aborted-1', 'aborted-2', 'committed-1', 'plain']);
  });

  it('coordinator – the leader watches metadata: a partition added to a subscribed topic triggers a rebalance that assigns it', async () => {
    s = await setup(1, 2);
    const c = consumerFor(s, { 'metadata.max.age.ms': 100 });
    consumers.push(c);
    c.subscribe(['t']);
    await until(async () => (await c.poll(50), c.assignment().length === 2));
    const gen = s.group.generationId;
    s.fc.topics.get('t')!.partitions.push({ partition: 2, leader: 0, leaderEpoch: 0, replicas: [0], isr: [0] });
    await until(async () => (await c.poll(50), c.assignment().length === 3), 10_000, 'the new partition assigned');
    expect(s.group.generationId).toBeGreaterThan(gen);
    expect(joins(s).at(-1)!.reason ?? '').toMatch(/metadata has changed/);
  });

  it('interceptors – onConsume may change the records poll returns; onCommit sees committed offsets', async () => {
    s = await setup(1, 1);
    s.group.append('t', 0, [{ value: 'a' }, { value: 'b' }]);
    const committed: string[] = [];
    const c = consumerFor(s, {
      'enable.auto.commit': false,
      'interceptor.classes': [
        { onConsume: (rs: { value: unknown }[]) => rs.filter((r) => r.value !== 'a') },
        { onCommit: (m: Map<TopicPartition, { offset: bigint }>) => void committed.push(...[...m].map(([tp, o]) => `${topicPartitionKey(tp)}@${o.offset}`)) },
      ],
    });
    consumers.push(c);
    c.subscribe(['t']);
    const got = await pollN(c, 1);
    expect(got.map((r) => r.value)).toEqual(['b']);
    await c.commitSync();
    expect(committed).toEqual(['t-0@2']);
  });

  it('config – Kafka names and defaults; validation errors', () => {
    const c = new Consumer({ 'bootstrap.servers': '127.0.0.1:1', 'group.id': 'x' });
    expect(c.config.sessionTimeoutMs).toBe(45000);
    expect(c.config.maxPollRecords).toBe(500);
    expect(c.config.autoOffsetReset).toBe('latest');
    expect(c.config.enableAutoCommit).toBe(true);
    expect(() => new Consumer({ 'bootstrap.servers': 'h:1', 'heartbeat.interval.ms': 5000, 'session.timeout.ms': 3000 })).toThrow(/heartbeat.interval.ms/);
    expect(() => new Consumer({ 'bootstrap.servers': 'h:1', 'enable.auto.commit': true })).toThrow(/group id/);
    expect(() => new Consumer({ 'bootstrap.servers': 'h:1', 'auto.offset.reset': 'smallest' as never })).toThrow(/auto.offset.reset/);
    expect(() => new Consumer({ 'bootstrap.servers': 'h:1' }).subscribe(['t'])).toThrow(/group.id/);
    void c.close();
  });
});
