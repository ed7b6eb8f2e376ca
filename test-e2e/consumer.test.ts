/**
 * The @samsa/client Consumer against 3 real brokers: every record a producer wrote read exactly
 * once by a group that rebalances (a second member joins midway, revocation commits), committed
 * offsets surviving a restart of the consumer, and the mixed group — our consumer, a KafkaJS 2.2.4
 * consumer and kcat -G (librdkafka 2.0.2) on a 6-partition topic with the common assignor
 * 'roundrobin' — dividing the partitions with no overlap and no gap (DescribeGroups and each
 * member's own report), rebalancing as each member leaves in turn.
 */
import { topicPartitionKey } from '@samsa/protocol';
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import kafkajs from 'kafkajs';
import type { Consumer as KafkaJsConsumer } from 'kafkajs';
import { Admin, Consumer, Producer, stringDeserializer, type TopicPartition } from '@samsa/client';
import { newTopicId } from '@samsa/zk-paths';
import { TestCluster, describeCluster, until } from './harness.js';

const { Kafka, PartitionAssigners, logLevel } = kafkajs;

describeCluster('consumer e2e (3 brokers)', () => {
  let c: TestCluster;
  let admin: Admin;
  const cleanups: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    c = await TestCluster.start({ brokers: 3, overrides: { 'group.initial.rebalance.delay.ms': '300' } });
    admin = new Admin({ bootstrapServers: c.bootstrap });
  }, 120_000);
  afterAll(async () => {
    for (const f of cleanups.splice(0).reverse()) await f().catch(() => undefined);
    await admin?.close();
    await c?.stop();
  });

  async function createTopic(topic: string, partitions: number): Promise<void> {
    await c.admin.createTopic(topic, newTopicId(), new Map(Array.from({ length: partitions }, (_, p) => [p, [p % 3, (p + 1) % 3, (p + 2) % 3]])), {});
    await c.waitForLeaders(topic, partitions);
  }

  async function produce(topic: string, n: number, prefix: string): Promise<void> {
    const p = new Producer({ 'bootstrap.servers': c.bootstrap, 'linger.ms': 5 });
    await Promise.all(Array.from({ length: n }, (_, i) => p.send({ topic, key: `k${i}`, value: `${prefix}-${i}` })));
    await p.close();
  }

  function ours(group: string, extra: Record<string, string | number | boolean> = {}): Consumer<string | null, string | null> {
    return new Consumer<string | null, string | null>({
      'bootstrap.servers': c.bootstrap,
      'group.id': group,
      'auto.offset.reset': 'earliest',
      'heartbeat.interval.ms': 300,
      'session.timeout.ms': 10_000,
      'max.poll.interval.ms': 30_000,
      'key.deserializer': stringDeserializer,
      'value.deserializer': stringDeserializer,
      ...extra,
    });
  }

  /** A background poll loop; `stop()` ends it and closes the consumer. */
  function pollLoop(consumer: Consumer<string | null, string | null>, onRecords: (values: string[]) => void = () => undefined) {
    let running = true;
    let error: unknown;
    const done = (async () => {
      while (running) {
        try {
          const rs = await consumer.poll(200);
          onRecords(rs.map((r) => r.value ?? ''));
          if (rs.length > 0 && !consumer.config.enableAutoCommit) await consumer.commitSync();
        } catch (err) {
          error = err;
          running = false;
        }
      }
    })();
    return {
      get error() {
        return error;
      },
      async stop() {
        running = false;
        await done;
        await consumer.close();
      },
    };
  }

  it('consumer – a two-member group reads every record exactly once across a rebalance (the second member joins midway; revocation commits)', async () => {
    const topic = 'cons-once';
    await createTopic(topic, 6);
    await produce(topic, 3000, 'a');
    const seen: string[] = [];
    const a = ours('once', { 'enable.auto.commit': false, 'max.poll.records': 50 });
    a.subscribe([topic], { onPartitionsRevoked: async () => void (await a.commitSync()) });
    const la = pollLoop(a, (v) => seen.push(...v));
    cleanups.push(() => la.stop());
    await until(() => seen.length >= 500, 'first member consuming', 60_000);
    const b = ours('once', { 'enable.auto.commit': false, 'max.poll.records': 50 });
    b.subscribe([topic], { onPartitionsRevoked: async () => void (await b.commitSync()) });
    const lb = pollLoop(b, (v) => seen.push(...v));
    cleanups.push(() => lb.stop());
    await until(() => a.assignment().length === 3 && b.assignment().length === 3, 'the group split 3/3', 60_000);
    await produce(topic, 1000, 'b');
    await until(() => seen.length >= 4000, 'every record', 90_000);
    await new Promise((r) => setTimeout(r, 1000)); // a duplicate would show up now
    expect(la.error).toBeUndefined();
    expect(lb.error).toBeUndefined();
    expect(seen.length).toBe(4000);
    expect(new Set(seen).size).toBe(4000);
    const keys = [...a.assignment(), ...b.assignment()].map((tp) => tp.partition).sort();
    expect(keys).toEqual([0, 1, 2, 3, 4, 5]);
  }, 240_000);

  it('consumer – committed offsets survive a restart: a new consumer of the group continues where the first one committed', async () => {
    const topic = 'cons-restart';
    await createTopic(topic, 3);
    await produce(topic, 900, 'r');
    const first = ours('restart', { 'enable.auto.commit': false, 'max.poll.records': 100 });
    first.subscribe([topic]);
    const got1: string[] = [];
    while (got1.length < 400) got1.push(...(await first.poll(500)).map((r) => r.value!));
    await first.commitSync();
    const committed = await first.committed([0, 1, 2].map((partition) => ({ topic, partition })));
    await first.close();
    const described = await admin.listGroupOffsets('restart');
    expect(described.reduce((n, o) => n + Number(o.offset), 0)).toBe(got1.length);
    const second = ours('restart', { 'auto.offset.reset': 'none' });
    second.subscribe([topic]);
    const got2: string[] = [];
    const end = Date.now() + 60_000;
    while (got2.length < 900 - got1.length && Date.now() < end) got2.push(...(await second.poll(500)).map((r) => r.value!));
    for (const p of [0, 1, 2]) {
      const tp = { topic, partition: p };
      expect(await second.position(tp)).toBe(await second.endOffsets([tp]).then((m) => m.get(topicPartitionKey(topic, p))));
      expect(committed.get(topicPartitionKey(topic, p))?.offset ?? 0n).toBeLessThanOrEqual(await second.position(tp));
    }
    await second.close();
    expect(new Set([...got1, ...got2]).size).toBe(900);
    expect(got1.length + got2.length).toBe(900);
  }, 180_000);

  it('consumer – the group leader sees partitions added to a subscribed topic (CreatePartitions) and rebalances them onto the members', async () => {
    const topic = 'cons-grow';
    await createTopic(topic, 2);
    const a = ours('grow', { 'metadata.max.age.ms': 1000 });
    const b = ours('grow', { 'metadata.max.age.ms': 1000 });
    a.subscribe([topic]);
    b.subscribe([topic]);
    const la = pollLoop(a);
    const lb = pollLoop(b);
    cleanups.push(
      () => la.stop(),
      () => lb.stop(),
    );
    await until(() => a.assignment().length + b.assignment().length === 2 && a.assignment().length === 1, 'a 1/1 split', 60_000);
    await admin.createPartitions([{ topic, count: 6 }]);
    await until(() => a.assignment().length === 3 && b.assignment().length === 3, 'a 3/3 split after the partition increase', 60_000);
    const all = [...a.assignment(), ...b.assignment()].map((tp) => tp.partition).sort();
    expect(all).toEqual([0, 1, 2, 3, 4, 5]);
    await la.stop();
    await lb.stop();
  }, 180_000);

  // ---- the mixed group ----------------------------------------------------------------

  interface Member {
    name: string;
    /** The partitions the member itself says it has. */
    reported(): number[];
    stop(): Promise<void>;
  }

  async function startOurs(group: string, topic: string): Promise<Member> {
    const consumer = ours(group, { 'partition.assignment.strategy': 'roundrobin', 'client.id': 'samsa-member' });
    consumer.subscribe([topic]);
    const loop = pollLoop(consumer);
    let stopped = false;
    const m = {
      name: 'samsa',
      reported: () => consumer.assignment().map((tp: TopicPartition) => tp.partition),
      stop: async () => {
        if (stopped) return;
        stopped = true;
        await loop.stop();
      },
    };
    cleanups.push(m.stop);
    return m;
  }

  async function startKafkaJs(group: string, topic: string): Promise<Member> {
    const kafka = new Kafka({ clientId: 'kafkajs-member', brokers: c.bootstrap.split(','), logLevel: logLevel.NOTHING });
    // KafkaJS names its assigner 'RoundRobinAssigner'; the Java protocol name is 'roundrobin'
    const consumer: KafkaJsConsumer = kafka.consumer({
      groupId: group,
      sessionTimeout: 10_000,
      rebalanceTimeout: 30_000,
      heartbeatInterval: 300,
      partitionAssigners: [(cfg) => ({ ...PartitionAssigners.roundRobin(cfg), name: 'roundrobin' })],
    });
    let assigned: number[] = [];
    consumer.on(consumer.events.GROUP_JOIN, (e) => (assigned = [...(e.payload.memberAssignment[topic] ?? [])]));
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({ eachMessage: async () => undefined });
    let stopped = false;
    const m = {
      name: 'kafkajs',
      reported: () => assigned,
      stop: async () => {
        if (stopped) return;
        stopped = true;
        await consumer.disconnect();
      },
    };
    cleanups.push(m.stop);
    return m;
  }

  async function startKcat(group: string, topic: string): Promise<Member> {
    const p: ChildProcess = spawn('kcat', [
      '-b',
      c.bootstrap,
      '-G',
      group,
      '-X',
      'partition.assignment.strategy=roundrobin',
      '-X',
      'session.timeout.ms=10000',
      '-X',
      'heartbeat.interval.ms=300',
      '-X',
      'auto.offset.reset=earliest',
      '-f',
      '%p %o\n',
      topic,
    ]);
    let stderr = '';
    let assigned: number[] = [];
    p.stdout!.on('data', () => undefined);
    p.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString();
      const lines = stderr.split('\n');
      stderr = lines.pop()!;
      for (const line of lines) {
        // "% Group g rebalanced (memberid ...): assigned: t [0], t [3]" / "...: revoked: ..."
        const m = /rebalanced \(memberid [^)]*\): (assigned|revoked): ?(.*)$/.exec(line);
        if (!m) continue;
        if (m[1] === 'revoked') assigned = [];
        else assigned = [...m[2]!.matchAll(/\[(\d+)\]/g)].map((x) => Number(x[1]));
      }
    });
    const exited = new Promise<void>((r) => p.once('close', () => r()));
    let stopped = false;
    const m = {
      name: 'kcat',
      reported: () => assigned,
      stop: async () => {
        if (stopped) return;
        stopped = true;
        p.kill('SIGTERM'); // kcat closes its consumer (LeaveGroup) on SIGTERM
        await exited;
      },
    };
    cleanups.push(m.stop);
    return m;
  }

  /** Waits until DescribeGroups shows exactly `members` Stable with a gapless, overlap-free split that each member reports too. */
  async function expectSplit(group: string, topic: string, members: Member[], partitions: number): Promise<void> {
    const desc = await until(
      async () => {
        const [d] = await admin.describeGroups([group]);
        if (!d || d.state !== 'Stable' || d.members.length !== members.length) return null;
        const all = d.members.flatMap((m) => m.assignment.filter((a) => a.topic === topic).flatMap((a) => a.partitions));
        if (all.length !== partitions) return null;
        const reported = members.map((m) => [...m.reported()].sort((a, b) => a - b));
        const described = d.members.map((m) => m.assignment.flatMap((a) => a.partitions).sort((a, b) => a - b));
        // every member's own report matches one member of the description
        const key = (l: number[][]) =>
          l
            .map((x) => x.join(','))
            .sort()
            .join(' | ');
        if (key(reported) !== key(described)) return null;
        return d;
      },
      `group ${group} stable with ${members.map((m) => m.name).join(' + ')}`,
      90_000,
      200,
    );
    expect(desc.partitionAssignor).toBe('roundrobin');
    const all = desc.members.flatMap((m) => m.assignment.flatMap((a) => a.partitions)).sort((a, b) => a - b);
    expect(all).toEqual(Array.from({ length: partitions }, (_, i) => i)); // no gap, no overlap
    for (const m of desc.members) expect(m.assignment.flatMap((a) => a.partitions).length).toBe(partitions / members.length);
    const clientIds = desc.members.map((m) => m.clientId).sort();
    expect(clientIds).toEqual(members.map((m) => (m.name === 'samsa' ? 'samsa-member' : m.name === 'kafkajs' ? 'kafkajs-member' : 'rdkafka')).sort());
  }

  for (const order of [
    ['kafkajs', 'samsa'],
    ['kcat', 'kafkajs'],
  ] as const) {
    it(`consumer – mixed group (ours + KafkaJS + kcat -G, roundrobin) divides 6 partitions with no overlap and no gap; ${order[0]} leaves, then ${order[1]}: each time the rest covers every partition`, async () => {
      const topic = `mixed-${order.join('-')}`;
      const group = `mixed-${order.join('-')}`;
      await createTopic(topic, 6);
      await produce(topic, 600, 'm');
      const members = [await startOurs(group, topic), await startKafkaJs(group, topic), await startKcat(group, topic)];
      await expectSplit(group, topic, members, 6);
      let remaining = [...members];
      for (const name of order) {
        const leaving = remaining.find((m) => m.name === name)!;
        await leaving.stop();
        remaining = remaining.filter((m) => m !== leaving);
        await expectSplit(group, topic, remaining, 6);
      }
      for (const m of remaining) await m.stop();
    }, 300_000);
  }
});
