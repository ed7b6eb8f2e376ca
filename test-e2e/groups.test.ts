/**
 * Consumer groups against a 3-broker cluster: `__consumer_offsets` created on the first
 * FindCoordinator (50 partitions, replication factor 3, compacted), the coordinator is the leader
 * of partition abs(hash(group)) % 50; KafkaJS 2.2.4 consumers share a 6-partition topic (RF 3)
 * produced by kcat, each message consumed once, offsets committed and resumed from after a
 * restart; group requests to another broker answer NOT_COORDINATOR; kcat's balanced consumer
 * (librdkafka) in a group; a member SIGKILLed without leaving is dropped after its session timeout;
 * kill -9 of the coordinator's broker moves the group to the new leader of its offsets partition;
 * @platformatic/kafka 2.12.1's consumer (the flexible versions of the group APIs, wire-checked).
 */
import { execFile, spawn } from 'node:child_process';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import kafkajs from 'kafkajs';
import type { Admin, Consumer, Kafka as KafkaT } from 'kafkajs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { encodeRecordBatch } from '@samsa/protocol';
import { newTopicId } from '@samsa/zk-paths';
import { describeCluster, TestCluster, until } from './harness.js';
import { WireLog, rawRequest, waitForBrokerMetadata } from './clients/wire.js';
import './clients/promise-with-resolvers.js';

const { Consumer: PltConsumer, stringDeserializers, MessagesStreamModes, MessagesStreamFallbackModes } = await import('@platformatic/kafka');
const { Kafka, logLevel } = kafkajs;
const run = promisify(execFile);

const COORDINATOR_NOT_AVAILABLE = 15;
const NOT_COORDINATOR = 16;
const UNKNOWN_MEMBER_ID = 25;
const MEMBER_ID_REQUIRED = 79;

/** Java's String.hashCode and Kafka's Utils.abs, written out independently of the broker's code. */
function offsetsPartition(groupId: string, partitions = 50): number {
  let h = 0;
  for (const ch of groupId) for (let i = 0; i < ch.length; i++) h = (Math.imul(31, h) + ch.charCodeAt(i)) | 0;
  return (h === -2147483648 ? 0 : Math.abs(h)) % partitions;
}

describeCluster('consumer groups against a 3-broker cluster', () => {
  let c: TestCluster;
  let kafka: KafkaT;
  let admin: Admin;
  const logs: string[] = [];
  const consumers: Consumer[] = [];

  beforeAll(async () => {
    c = await TestCluster.start({ brokers: 3, overrides: { 'group.initial.rebalance.delay.ms': '500' } });
    await waitForBrokerMetadata(c.bootstrap.split(','), () => c.controllerId());
    kafka = new Kafka({
      clientId: 'groups-e2e',
      brokers: c.bootstrap.split(','),
      retry: { retries: 10, initialRetryTime: 100 },
      logLevel: logLevel.INFO,
      logCreator:
        () =>
        ({ namespace, level, log }) => {
          const { message, ...extra } = log;
          logs.push(`[${level}] ${namespace}: ${message} ${JSON.stringify(extra)}`);
        },
    });
    admin = kafka.admin();
    await admin.connect();
  });

  afterAll(async () => {
    for (const k of consumers) await k.disconnect().catch(() => undefined);
    await admin?.disconnect();
    await c?.stop();
  });

  /** Produces `lines` ("key:value") to `topic` with kcat (acks=all). */
  async function kcatProduce(topic: string, lines: string[]): Promise<void> {
    const input = join(c.dir, `${topic}-${Date.now()}.txt`);
    await writeFile(input, lines.join('\n') + '\n');
    await run('kcat', ['-P', '-b', c.bootstrap, '-t', topic, '-K:', '-X', 'acks=all', '-l', input], { timeout: 60_000 });
  }

  interface Seen {
    consumer: number;
    partition: number;
    offset: string;
    value: string;
  }

  /** A KafkaJS consumer in `groupId` reading `topic` from the beginning; what it reads lands in `seen`. */
  async function startConsumer(
    id: number,
    groupId: string,
    topic: string,
    seen: Seen[],
    assigned?: Map<number, number[]>,
    sessionTimeout = 10_000,
  ): Promise<Consumer> {
    const consumer = kafka.consumer({ groupId, sessionTimeout, rebalanceTimeout: 20_000, heartbeatInterval: 500 });
    consumers.push(consumer);
    consumer.on(consumer.events.GROUP_JOIN, (e) => {
      assigned?.set(
        id,
        (e.payload.memberAssignment[topic] ?? []).slice().sort((a, b) => a - b),
      );
    });
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({
      autoCommitInterval: 100,
      eachMessage: async ({ partition, message }) => {
        seen.push({ consumer: id, partition, offset: message.offset, value: message.value!.toString() });
      },
    });
    return consumer;
  }

  /** The group's committed offsets per partition (KafkaJS admin → OffsetFetch). */
  async function committed(groupId: string, topic: string): Promise<Map<number, number>> {
    const r = await admin.fetchOffsets({ groupId, topics: [topic] });
    return new Map(r.flatMap((t) => t.partitions.map((p) => [p.partition, Number(p.offset)] as [number, number])));
  }

  /** Partition high watermarks (KafkaJS admin → ListOffsets). */
  async function endOffsets(topic: string): Promise<Map<number, number>> {
    return new Map((await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, Number(p.high)]));
  }

  it('groups – the first FindCoordinator creates __consumer_offsets (50 partitions, RF 3, compact); every broker names the leader of the group’s partition', async () => {
    const group = 'find-me';
    const first = await rawRequest(c.brokers[0]!.address, 10, 3, { key: group, keyType: 0, coordinatorKeys: [] });
    expect(first.errorCode).toBe(COORDINATOR_NOT_AVAILABLE);
    const assignment = await until(() => c.admin.getTopicAssignment('__consumer_offsets'), '__consumer_offsets in ZooKeeper');
    expect(assignment.partitions.size).toBe(50);
    for (const replicas of assignment.partitions.values()) expect(replicas).toHaveLength(3);
    expect(await c.admin.getTopicConfig('__consumer_offsets')).toMatchObject({ 'cleanup.policy': 'compact', 'compression.type': 'producer' });
    await c.waitForLeaders('__consumer_offsets', 50);
    const p = offsetsPartition(group);
    const leader = await c.leaderOf('__consumer_offsets', p);
    for (const b of c.brokers) {
      const r = await until(async () => {
        const x = await rawRequest(b.address, 10, 3, { key: group, keyType: 0, coordinatorKeys: [] });
        return x.errorCode === 0 ? x : null;
      }, `FindCoordinator from broker ${b.id}`);
      expect(`${r.host}:${r.port}`).toBe(c.broker(leader).address);
      expect(r.nodeId).toBe(leader);
    }
    // v4+: batched keys
    const groups = ['a', 'b', 'find-me'];
    const batched = await rawRequest(c.brokers[1]!.address, 10, 4, { key: '', keyType: 0, coordinatorKeys: groups });
    for (const [i, g] of groups.entries()) {
      const x = batched.coordinators[i]!;
      expect(x.key).toBe(g);
      expect(x.errorCode).toBe(0);
      expect(x.nodeId).toBe(await c.leaderOf('__consumer_offsets', offsetsPartition(g)));
    }
  });

  const topic = 'grp-orders';
  const groupId = 'orders-app';
  const N = 3000;

  it('groups – clients cannot produce to __consumer_offsets (INVALID_TOPIC_EXCEPTION), as Kafka', async () => {
    const r = await rawRequest(c.brokers[0]!.address, 0, 9, {
      transactionalId: null,
      acks: 1,
      timeoutMs: 5000,
      topicData: [{ name: '__consumer_offsets', partitionData: [{ index: 0, records: encodeRecordBatch({ records: [{ value: 'x' }] }) }] }],
    });
    expect(r.responses[0]!.partitionResponses[0]!.errorCode).toBe(17);
  });

  it('groups – two KafkaJS consumers split a 6-partition topic (RF 3) 3/3; every message produced by kcat is consumed exactly once; offsets committed to the end', async () => {
    await c.admin.createTopic(topic, newTopicId(), new Map([0, 1, 2, 3, 4, 5].map((p) => [p, [p % 3, (p + 1) % 3, (p + 2) % 3]])), {});
    await c.waitForLeaders(topic, 6);
    const seen: Seen[] = [];
    const assigned = new Map<number, number[]>();
    await startConsumer(1, groupId, topic, seen, assigned);
    await startConsumer(2, groupId, topic, seen, assigned);
    // both members in one generation before anything is produced: no record can be read twice
    await until(
      async () => {
        const d = await admin.describeGroups([groupId]);
        const g = d.groups[0]!;
        return g.state === 'Stable' && g.members.length === 2 && assigned.size === 2 && [...assigned.values()].flat().length === 6;
      },
      'a Stable group of 2 members with all 6 partitions assigned',
      60_000,
    );
    const parts = [...assigned.values()];
    expect(parts.map((p) => p.length)).toEqual([3, 3]);
    expect(parts.flat().sort()).toEqual([0, 1, 2, 3, 4, 5]);
    const d = (await admin.describeGroups([groupId])).groups[0]!;
    expect(d).toMatchObject({ groupId, state: 'Stable', protocolType: 'consumer', protocol: 'RoundRobinAssigner' });
    for (const m of d.members) {
      expect(m.clientId).toBe('groups-e2e');
      expect(m.clientHost).toBe('/127.0.0.1');
    }

    await kcatProduce(
      topic,
      Array.from({ length: N }, (_, i) => `k${i % 97}:v${i}`),
    );
    await until(() => seen.length >= N, `${N} messages consumed`, 60_000);
    const values = seen.map((x) => x.value);
    expect(new Set(values).size).toBe(N);
    expect(values).toHaveLength(N);
    // each consumer read only its own partitions
    for (const x of seen) expect(assigned.get(x.consumer)).toContain(x.partition);
    const ends = await endOffsets(topic);
    expect([...ends.values()].reduce((a, b) => a + b, 0)).toBe(N);
    await until(
      async () => {
        const co = await committed(groupId, topic);
        return [...ends].every(([p, end]) => co.get(p) === end);
      },
      'committed offsets at the end of every partition',
      30_000,
    );
  });

  it('groups – the consumers leave (LeaveGroup) and the group empties; a restarted consumer resumes from the committed offsets and reads only what came after', async () => {
    for (const k of consumers.splice(0)) await k.disconnect();
    await until(async () => (await admin.describeGroups([groupId])).groups[0]!.state === 'Empty', 'the group is Empty', 30_000);
    const before = await committed(groupId, topic);
    await kcatProduce(
      topic,
      Array.from({ length: 600 }, (_, i) => `k${i % 13}:after-${i}`),
    );
    const seen: Seen[] = [];
    await startConsumer(3, groupId, topic, seen);
    await until(() => seen.length >= 600, '600 new messages consumed', 60_000);
    await new Promise((r) => setTimeout(r, 1000));
    expect(seen).toHaveLength(600);
    expect(seen.every((x) => x.value.startsWith('after-'))).toBe(true);
    for (const x of seen) expect(Number(x.offset)).toBeGreaterThanOrEqual(before.get(x.partition)!);
    const ends = await endOffsets(topic);
    await until(
      async () => {
        const co = await committed(groupId, topic);
        return [...ends].every(([p, end]) => co.get(p) === end);
      },
      'committed offsets at the new ends',
      30_000,
    );
    for (const k of consumers.splice(0)) await k.disconnect();
  });

  it('groups – group requests to a broker that is not the coordinator answer NOT_COORDINATOR; the coordinator asks new members for a member id (JoinGroup v4+) and rejects unknown ones', async () => {
    const g = 'raw-group';
    const leader = await c.leaderOf('__consumer_offsets', offsetsPartition(g));
    const other = c.brokers.find((b) => b.id !== leader)!;
    const join = {
      groupId: g,
      sessionTimeoutMs: 10_000,
      rebalanceTimeoutMs: 10_000,
      memberId: '',
      groupInstanceId: null,
      protocolType: 'consumer',
      protocols: [{ name: 'range', metadata: Buffer.alloc(0) }],
      reason: null,
    };
    expect((await rawRequest(other.address, 11, 5, join)).errorCode).toBe(NOT_COORDINATOR);
    const first = await rawRequest(c.broker(leader).address, 11, 5, join);
    expect(first.errorCode).toBe(MEMBER_ID_REQUIRED);
    expect(first.memberId).toMatch(/^samsa-e2e-reader-[0-9a-f-]{36}$/);
    const hb = await rawRequest(c.broker(leader).address, 12, 3, { groupId: g, generationId: 0, memberId: 'nobody', groupInstanceId: null });
    expect(hb.errorCode).toBe(UNKNOWN_MEMBER_ID);
    const fetched = await rawRequest(other.address, 9, 7, { groupId: g, topics: null, groups: [], requireStable: false });
    expect(fetched.errorCode).toBe(NOT_COORDINATOR);
  });

  it('groups – kcat’s balanced consumer (librdkafka, -G) joins a group, consumes everything and commits', async () => {
    const kt = 'grp-kcat';
    const kg = 'kcat-group';
    await c.admin.createTopic(kt, newTopicId(), new Map([0, 1, 2, 3, 4, 5].map((p) => [p, [p % 3, (p + 1) % 3, (p + 2) % 3]])), {});
    await c.waitForLeaders(kt, 6);
    await kcatProduce(
      kt,
      Array.from({ length: 500 }, (_, i) => `k${i}:kv${i}`),
    );
    const out = await new Promise<string>((resolve, reject) => {
      const p = spawn('kcat', [
        '-b',
        c.bootstrap,
        '-G',
        kg,
        '-X',
        'auto.offset.reset=earliest',
        '-X',
        'enable.auto.commit=true',
        '-X',
        'auto.commit.interval.ms=100',
        '-e',
        '-q',
        '-f',
        '%p\t%o\t%s\n',
        kt,
      ]);
      let stdout = '';
      let stderr = '';
      p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const timer = setTimeout(() => p.kill('SIGKILL'), 90_000);
      p.on('close', (code) => {
        clearTimeout(timer);
        if (code === 0) resolve(stdout);
        else reject(new Error(`kcat -G exited ${code}: ${stderr}`));
      });
    });
    const rows = out.split('\n').filter(Boolean);
    expect(rows).toHaveLength(500);
    expect(new Set(rows.map((r) => r.split('\t')[2])).size).toBe(500);
    const ends = await endOffsets(kt);
    const co = await committed(kg, kt);
    for (const [p, end] of ends) expect(co.get(p)).toBe(end);
  });

  it('groups – a 3-member KafkaJS group (2 partitions each); one member SIGKILLed without leaving is dropped after its session timeout and the other two take its partitions', async () => {
    const kt = 'grp-kill';
    const kg = 'kill-group';
    await c.admin.createTopic(kt, newTopicId(), new Map([0, 1, 2, 3, 4, 5].map((p) => [p, [p % 3, (p + 1) % 3, (p + 2) % 3]])), {});
    await c.waitForLeaders(kt, 6);
    const seen: Seen[] = [];
    const assigned = new Map<number, number[]>();
    // member 3 runs in its own process, so it can die without a LeaveGroup
    const script = `
      const { Kafka, logLevel } = require('kafkajs');
      const kafka = new Kafka({ clientId: 'groups-e2e-child', brokers: process.env.BROKERS.split(','), logLevel: logLevel.NOTHING });
      const consumer = kafka.consumer({ groupId: process.env.GROUP, sessionTimeout: 6000, rebalanceTimeout: 20000, heartbeatInterval: 500 });
      consumer.on(consumer.events.GROUP_JOIN, (e) => console.log('ASSIGNED ' + JSON.stringify(e.payload.memberAssignment[process.env.TOPIC] || [])));
      (async () => {
        await consumer.connect();
        await consumer.subscribe({ topics: [process.env.TOPIC], fromBeginning: true });
        await consumer.run({ autoCommitInterval: 100, eachMessage: async ({ partition, message }) => console.log('MSG ' + partition + ' ' + message.offset + ' ' + message.value) });
      })();`;
    const child = spawn(process.execPath, ['-e', script], {
      cwd: process.cwd(),
      env: { ...process.env, BROKERS: c.bootstrap, GROUP: kg, TOPIC: kt },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let buffered = '';
    child.stdout.on('data', (d: Buffer) => {
      buffered += d.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) {
        if (line.startsWith('ASSIGNED '))
          assigned.set(
            3,
            (JSON.parse(line.slice(9)) as number[]).sort((a, b) => a - b),
          );
        else if (line.startsWith('MSG ')) {
          const [, p, o, v] = line.split(' ');
          seen.push({ consumer: 3, partition: Number(p), offset: o!, value: v! });
        }
      }
    });
    try {
      await startConsumer(1, kg, kt, seen, assigned, 10_000);
      await startConsumer(2, kg, kt, seen, assigned, 10_000);
      await until(
        async () => {
          const g = (await admin.describeGroups([kg])).groups[0]!;
          return g.state === 'Stable' && g.members.length === 3 && assigned.size === 3 && [...assigned.values()].every((p) => p.length === 2);
        },
        'a Stable group of 3 members with 2 partitions each',
        60_000,
      );
      expect([...assigned.values()].flat().sort()).toEqual([0, 1, 2, 3, 4, 5]);
      const generation = (await rawGroup(kg)).generation;
      await kcatProduce(
        kt,
        Array.from({ length: 600 }, (_, i) => `k${i}:before-${i}`),
      );
      await until(() => new Set(seen.map((x) => x.value)).size >= 600, '600 messages consumed by 3 members', 60_000);
      expect(new Set(seen.map((x) => x.consumer))).toEqual(new Set([1, 2, 3]));
      const orphaned = assigned.get(3)!;
      await until(
        async () => {
          const co = await committed(kg, kt);
          const ends = await endOffsets(kt);
          return [...ends].every(([p, end]) => co.get(p) === end);
        },
        'offsets committed by all three',
        30_000,
      );

      const killedAt = Date.now();
      child.kill('SIGKILL');
      await until(
        () => (assigned.get(1)?.length ?? 0) + (assigned.get(2)?.length ?? 0) === 6 && [...(assigned.get(1) ?? []), ...(assigned.get(2) ?? [])].length === 6,
        'members 1 and 2 own all 6 partitions',
        60_000,
      );
      const tookMs = Date.now() - killedAt;
      // not before the dead member's session (6 s) ran out, less the heartbeat it may have sent just before dying
      expect(tookMs).toBeGreaterThan(5000);
      const g = (await admin.describeGroups([kg])).groups[0]!;
      expect(g.members).toHaveLength(2);
      expect(g.state).toBe('Stable');
      expect((await rawGroup(kg)).generation).toBeGreaterThan(generation);
      expect([...assigned.get(1)!, ...assigned.get(2)!].sort()).toEqual([0, 1, 2, 3, 4, 5]);

      const mark = seen.length;
      await kcatProduce(
        kt,
        Array.from({ length: 600 }, (_, i) => `k${i}:after-${i}`),
      );
      await until(
        () =>
          new Set(
            seen
              .slice(mark)
              .filter((x) => x.value.startsWith('after-'))
              .map((x) => x.value),
          ).size >= 600,
        '600 more messages consumed by the two survivors',
        60_000,
      );
      const after = seen.slice(mark).filter((x) => x.value.startsWith('after-'));
      expect(after).toHaveLength(600);
      expect(after.filter((x) => orphaned.includes(x.partition)).length).toBeGreaterThan(0);
      expect(new Set(after.map((x) => x.consumer))).toEqual(new Set([1, 2]));
    } finally {
      child.kill('SIGKILL');
      for (const k of consumers.splice(0)) await k.disconnect();
    }
  });

  it('groups – kill -9 of the coordinator’s broker during consumption: the group moves to the new leader of its offsets partition, committed offsets survive, consumption continues', async () => {
    const ft = 'grp-failover';
    const fg = 'failover-group';
    await c.admin.createTopic(ft, newTopicId(), new Map([0, 1, 2, 3, 4, 5].map((p) => [p, [p % 3, (p + 1) % 3, (p + 2) % 3]])), {});
    await c.waitForLeaders(ft, 6);
    const seen: Seen[] = [];
    const assigned = new Map<number, number[]>();
    await startConsumer(1, fg, ft, seen, assigned);
    await startConsumer(2, fg, ft, seen, assigned);
    await until(
      async () => {
        const g = (await admin.describeGroups([fg])).groups[0]!;
        return g.state === 'Stable' && g.members.length === 2 && [...assigned.values()].flat().length === 6;
      },
      'a Stable group of 2 members',
      60_000,
    );
    await kcatProduce(
      ft,
      Array.from({ length: 600 }, (_, i) => `k${i}:one-${i}`),
    );
    await until(() => seen.length >= 600, '600 messages consumed', 60_000);
    const ends1 = await endOffsets(ft);
    await until(
      async () => {
        const co = await committed(fg, ft);
        return [...ends1].every(([p, end]) => co.get(p) === end);
      },
      'offsets committed',
      30_000,
    );

    const partition = offsetsPartition(fg);
    const oldCoordinator = await c.leaderOf('__consumer_offsets', partition);
    await c.broker(oldCoordinator).kill();
    const newCoordinator = await until(
      async () => {
        const l = await c.leaderOf('__consumer_offsets', partition);
        return l >= 0 && l !== oldCoordinator ? l : null;
      },
      'a new leader of the offsets partition',
      60_000,
    );
    // committed offsets are read back from the replicated log by the new coordinator
    const survivor = c.brokers.find((b) => b.id !== oldCoordinator)!;
    const fetchedOffsets = await until(
      async () => {
        const r = await rawRequest(c.broker(newCoordinator).address, 9, 7, {
          groupId: fg,
          topics: [{ name: ft, partitionIndexes: [0, 1, 2, 3, 4, 5] }],
          groups: [],
          requireStable: true,
        }).catch(() => null);
        return r && r.errorCode === 0 ? r : null;
      },
      'OffsetFetch from the new coordinator',
      60_000,
    );
    for (const p of fetchedOffsets.topics[0]!.partitions) expect(p.committedOffset).toBe(BigInt(ends1.get(p.partitionIndex)!));
    expect(survivor).toBeDefined();

    const mark = seen.length;
    const live = c.brokers
      .filter((b) => b.id !== oldCoordinator)
      .map((b) => b.address)
      .join(',');
    const input = join(c.dir, 'failover-two.txt');
    await writeFile(input, Array.from({ length: 600 }, (_, i) => `k${i}:two-${i}`).join('\n') + '\n');
    await run('kcat', ['-P', '-b', live, '-t', ft, '-K:', '-X', 'acks=all', '-l', input], { timeout: 60_000 });
    await until(
      () =>
        new Set(
          seen
            .slice(mark)
            .filter((x) => x.value.startsWith('two-'))
            .map((x) => x.value),
        ).size >= 600,
      'consumption continues after the failover',
      90_000,
    );
    const g = await rawGroup(fg, newCoordinator);
    expect(g.state).toBe('Stable');
    expect(g.members).toBe(2);
    const ends2 = await endOffsets(ft);
    await until(
      async () => {
        const co = await committed(fg, ft);
        return [...ends2].every(([p, end]) => co.get(p) === end);
      },
      'new offsets committed to the new coordinator',
      60_000,
    );
    for (const k of consumers.splice(0)) await k.disconnect();
    await c.broker(oldCoordinator).launch();
    await c.broker(oldCoordinator).waitReady();
  });

  /** DescribeGroups straight from the coordinator (generation is not in KafkaJS's describe). */
  async function rawGroup(groupId: string, coordinator?: number): Promise<{ state: string; members: number; generation: number }> {
    const id = coordinator ?? (await c.leaderOf('__consumer_offsets', offsetsPartition(groupId)));
    const d = await rawRequest(c.broker(id).address, 15, 5, { groups: [groupId], includeAuthorizedOperations: false });
    const g = d.groups[0]!;
    return { state: g.groupState, members: g.members.length, generation: await generationOf(groupId, id, g.members[0]?.memberId) };
  }

  /** The group's generation (DescribeGroups has none), found by probing Heartbeat: ILLEGAL_GENERATION until it matches. */
  async function generationOf(groupId: string, coordinator: number, memberId: string | undefined): Promise<number> {
    if (!memberId) return -1;
    for (let gen = 0; gen < 100; gen++) {
      const r = await rawRequest(c.broker(coordinator).address, 12, 3, { groupId, generationId: gen, memberId, groupInstanceId: null });
      if (r.errorCode !== 22) return gen;
    }
    return -1;
  }

  it('groups – two @platformatic/kafka consumers (the flexible versions: JoinGroup v9, SyncGroup v5, OffsetCommit/OffsetFetch v9…) share a topic, consume everything and commit', async () => {
    const pt = 'grp-plt';
    const pg = 'plt-group';
    await c.admin.createTopic(pt, newTopicId(), new Map([0, 1, 2, 3, 4, 5].map((p) => [p, [p % 3, (p + 1) % 3, (p + 2) % 3]])), {});
    await c.waitForLeaders(pt, 6);
    await kcatProduce(
      pt,
      Array.from({ length: 600 }, (_, i) => `k${i}:plt-${i}`),
    );
    const wire = new WireLog();
    const onConnect = (ctx: unknown) => {
      const socket = (ctx as { connection?: { socket?: Socket } }).connection?.socket;
      if (socket) wire.tap(socket);
    };
    subscribe('tracing:plt:kafka:connections:connects:end', onConnect);
    const values = new Map<string, number>();
    const plt = [1, 2].map(
      (i) =>
        new PltConsumer({
          clientId: `plt-consumer-${i}`,
          groupId: pg,
          bootstrapBrokers: c.bootstrap.split(','),
          deserializers: stringDeserializers,
          sessionTimeout: 10_000,
          rebalanceTimeout: 20_000,
          heartbeatInterval: 500,
          retries: 10,
          retryDelay: 200,
        }),
    );
    try {
      const streams = await Promise.all(
        plt.map((k) => k.consume({ topics: [pt], mode: MessagesStreamModes.COMMITTED, fallbackMode: MessagesStreamFallbackModes.EARLIEST, autocommit: 100 })),
      );
      for (const st of streams) st.on('data', (m: { value: string }) => values.set(m.value, (values.get(m.value) ?? 0) + 1));
      await until(() => values.size >= 600, '600 messages consumed by the platformatic consumers', 60_000);
      expect([...values.keys()].every((v) => v.startsWith('plt-'))).toBe(true);
      await until(
        async () => {
          const g = (await admin.describeGroups([pg])).groups[0]!;
          return g.state === 'Stable' && g.members.length === 2;
        },
        'a Stable group of the 2 platformatic consumers',
        60_000,
      );
      const ends = await endOffsets(pt);
      await until(
        async () => {
          const co = await committed(pg, pt);
          return [...ends].every(([p, end]) => co.get(p) === end);
        },
        'platformatic committed to the end',
        30_000,
      );
      await until(() => wire.versions('Heartbeat').length > 0, 'a platformatic heartbeat', 15_000);
      const v = (api: string) => wire.versions(api);
      expect({
        FindCoordinator: v('FindCoordinator'),
        JoinGroup: v('JoinGroup'),
        SyncGroup: v('SyncGroup'),
        Heartbeat: v('Heartbeat'),
        OffsetCommit: v('OffsetCommit'),
        OffsetFetch: v('OffsetFetch'),
      }).toEqual({
        FindCoordinator: [6],
        JoinGroup: [9],
        SyncGroup: [5],
        Heartbeat: [4],
        OffsetCommit: [9],
        OffsetFetch: [9],
      });
      expect(wire.problems()).toEqual([]);
    } finally {
      await Promise.all(plt.map((k) => k.close(true).catch(() => undefined)));
      unsubscribe('tracing:plt:kafka:connections:connects:end', onConnect);
    }
    console.log(`@platformatic/kafka consumer negotiated: ${JSON.stringify(wire.summary())}`);
  });

  it('groups – deleting a topic removes its committed offsets from every group (tombstones in __consumer_offsets)', async () => {
    const g = 'plt-group';
    const coordinator = c.broker(await c.leaderOf('__consumer_offsets', offsetsPartition(g))).address;
    const all = async () => (await rawRequest(coordinator, 9, 7, { groupId: g, topics: null, groups: [], requireStable: false })).topics.map((t) => t.name);
    expect(await all()).toEqual(['grp-plt']);
    await admin.deleteTopics({ topics: ['grp-plt'], timeout: 30_000 });
    await until(async () => (await all()).length === 0, 'the deleted topic’s offsets gone', 30_000);
  });
});
