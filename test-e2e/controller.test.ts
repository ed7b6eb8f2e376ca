/**
 * The controller running a real cluster: broker failure and re-election from the ISR, preferred
 * leader election (samsa leader-election and auto rebalance), controller failover and fencing of
 * a paused controller, controlled shutdown on SIGTERM, topic deletion with a replica's broker down.
 */
import { API_KEYS, topicPartitionKey } from '@samsa/protocol';
import { Connection, metadataRequestBody } from '@samsa/client';
import { execFile } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DeleteTopicsTopicZNode, TopicPartitionStateZNode, TopicZNode, newTopicId, type LeaderIsrAndControllerEpoch } from '@samsa/zk-paths';
import { describeCluster, logLines, logOf, TestCluster, until } from './harness.js';
import type { BrokerProcess } from '@samsa/local-cluster';

const exec = promisify(execFile);
const bin = fileURLToPath(new URL('../packages/cli/bin/samsa.js', import.meta.url));

async function samsa(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await exec(process.execPath, [bin, ...args], { timeout: 60_000 });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

const SESSION_TIMEOUT_MS = 6000;
const BASE = {
  'zookeeper.session.timeout.ms': String(SESSION_TIMEOUT_MS),
  'replica.lag.time.max.ms': '4000',
  // Kafka's broker-level setting behind the topic config file.delete.delay.ms: how long a deleted
  // partition's renamed <topic>-<p>.<id>-delete directory stays
  'log.segment.delete.delay.ms': '1000',
};

/** Partition p → `replicas(p)`. */
function assignment(n: number, replicas: (p: number) => number[]): Map<number, number[]> {
  return new Map(Array.from({ length: n }, (_, p) => [p, replicas(p)]));
}

async function states(c: TestCluster, topic: string, n: number): Promise<LeaderIsrAndControllerEpoch[]> {
  const m = await c.admin.getPartitionStates(Array.from({ length: n }, (_, partition) => ({ topic, partition })));
  return Array.from({ length: n }, (_, p) => {
    const s = m.get(topicPartitionKey(topic, p));
    if (!s) throw new Error(`no state for ${topicPartitionKey(topic, p)}`);
    return s.state;
  });
}

/** Every partition led by its first replica with the whole replica set in sync. */
async function waitForPreferredAndFullIsr(c: TestCluster, topic: string, a: Map<number, number[]>, timeoutMs = 60_000): Promise<void> {
  await until(
    async () => {
      const ss = await states(c, topic, a.size).catch(() => null);
      return ss?.every((s, p) => s.leader === a.get(p)![0] && s.isr.length === a.get(p)!.length);
    },
    `${topic}: preferred leaders and full ISRs`,
    timeoutMs,
    100,
  );
}

const partitionRows = (out: string) => out.split('\n').filter((l) => l.startsWith('\tTopic:'));

/** Waits for a controller other than `old` (broker ids start at 0: wrapped, as `until` wants truthy). */
async function newController(c: TestCluster, old: number): Promise<number> {
  const r = await until(
    async () => {
      const id = await c.controllerId();
      return id !== null && id !== old ? { id } : null;
    },
    `a controller other than ${old}`,
    SESSION_TIMEOUT_MS + 10_000,
    50,
  );
  return r.id;
}

/** Every broker process running and registered (a failed test may leave one down). */
async function ensureAllRunning(c: TestCluster): Promise<void> {
  const down = c.brokers.filter((b) => b.pid === undefined);
  for (const b of down) await b.launch();
  await Promise.all(down.map((b) => b.waitReady()));
  await until(async () => (await c.admin.getBrokerIds()).length === c.brokers.length, 'every broker registered', 30_000, 100);
}

describeCluster(
  'controller: failover, preferred election, deletion, controlled shutdown (3 brokers)',
  () => {
    let c: TestCluster;
    beforeAll(async () => {
      c = await TestCluster.start({ brokers: 3, overrides: { ...BASE, 'auto.leader.rebalance.enable': 'false' } });
    });
    afterAll(async () => {
      await c?.stop();
    });

    it('kill -9 of the broker leading most partitions: every partition led from the ISR within the session timeout + 2 s; back in every ISR after a restart; samsa leader-election restores preferred leaders', async () => {
      await ensureAllRunning(c);
      const topic = 'failover';
      const ctrl = (await c.controllerId())!;
      const victim = (ctrl + 1) % 3;
      const other = (ctrl + 2) % 3;
      // the victim is the preferred leader of half the partitions
      const leaders = [victim, ctrl, victim, other];
      const a = assignment(30, (p) => {
        const l = leaders[p % 4]!;
        const rest = [0, 1, 2].filter((b) => b !== l);
        return [l, ...(p % 2 === 0 ? rest : rest.reverse())];
      });
      await c.admin.createTopic(topic, newTopicId(), a, {});
      await waitForPreferredAndFullIsr(c, topic, a);
      const led = (await states(c, topic, 30)).filter((s) => s.leader === victim).length;
      expect(led).toBe(15);

      const t0 = Date.now();
      await c.broker(victim).kill();
      await until(
        async () => {
          const live = new Set(await c.admin.getBrokerIds());
          if (live.has(victim)) return false;
          return (await states(c, topic, 30)).every((s) => s.leader >= 0 && s.leader !== victim && live.has(s.leader) && s.isr.includes(s.leader));
        },
        'every partition led by a live ISR member',
        SESSION_TIMEOUT_MS + 10_000,
        50,
      );
      const failoverMs = Date.now() - t0;
      console.log(
        `[controller e2e] failover of ${led} leaderships after kill -9 of broker ${victim}: ${failoverMs} ms (session timeout ${SESSION_TIMEOUT_MS} ms)`,
      );
      expect(failoverMs).toBeLessThanOrEqual(SESSION_TIMEOUT_MS + 2000);
      for (const s of await states(c, topic, 30)) expect(s.isr).not.toContain(victim);

      // the brokers' metadata says the same: all 30 partitions under-replicated, none unavailable
      const bs = ['--bootstrap-server', c.broker(ctrl).address];
      const under = await until(
        async () => {
          const r = await samsa('topics', ...bs, '--describe', '--under-replicated-partitions');
          return r.code === 0 && partitionRows(r.stdout).length === 30 ? r : null;
        },
        '30 under-replicated partitions in samsa topics',
        15_000,
        200,
      );
      for (const row of partitionRows(under.stdout)) {
        expect(row).toMatch(new RegExp(`^\\tTopic: failover\\tPartition: \\d+\\tLeader: \\d\\tReplicas: \\d,\\d,\\d\\tIsr: \\d,\\d\\tOffline: ${victim}$`));
        expect(row).not.toMatch(new RegExp(`Leader: ${victim}`));
      }
      expect(new Set(partitionRows(under.stdout).map((r) => /Partition: (\d+)/.exec(r)![1]))).toEqual(new Set(Array.from({ length: 30 }, (_, p) => String(p))));
      expect((await samsa('topics', ...bs, '--describe', '--unavailable-partitions')).stdout).toBe('');

      // back in every ISR after a restart, but not leading: the preferred election brings it back
      await c.broker(victim).launch();
      await c.broker(victim).waitReady();
      await until(async () => (await states(c, topic, 30)).every((s) => s.isr.length === 3), 'restarted broker back in every ISR', 30_000, 100);
      expect((await states(c, topic, 30)).filter((s) => s.leader === victim)).toHaveLength(0);
      await until(
        async () => partitionRows((await samsa('topics', ...bs, '--describe', '--under-replicated-partitions')).stdout).length === 0,
        'no under-replicated partitions',
        15_000,
        200,
      );

      const moved = [...a].filter(([, r]) => r[0] === victim).map(([p]) => p);
      const elect = await samsa('leader-election', ...bs, '--election-type', 'PREFERRED', '--all-topic-partitions');
      expect(elect).toEqual({
        code: 0,
        stdout: `Successfully completed leader election (PREFERRED) for partitions ${moved.map((p) => topicPartitionKey(topic, p)).join(', ')}\n`,
        stderr: '',
      });
      const after = await states(c, topic, 30);
      after.forEach((s, p) => expect(s.leader).toBe(a.get(p)![0]));
      // nothing left to elect: Kafka prints nothing; a named partition is "already elected"
      expect(await samsa('leader-election', ...bs, '--election-type', 'preferred', '--all-topic-partitions')).toEqual({ code: 0, stdout: '', stderr: '' });
      expect(await samsa('leader-election', ...bs, '--election-type', 'Preferred', '--topic', topic, '--partition', '0')).toEqual({
        code: 0,
        stdout: `Valid replica already elected for partitions ${topic}-0\n`,
        stderr: '',
      });
      const unknown = await samsa('leader-election', ...bs, '--election-type', 'preferred', '--topic', topic, '--partition', '99');
      expect(unknown.code).toBe(1);
      expect(unknown.stdout).toBe(
        `Error completing leader election (PREFERRED) for partition: ${topic}-99: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: The partition does not exist.\n`,
      );
      expect(unknown.stderr).toBe('1 replica(s) could not be elected\n');
    });

    it("topic deletion with a replica's broker down stays pending, completes when it returns, and leaves no log directory", async () => {
      await ensureAllRunning(c);
      const topic = 'doomed';
      const ctrl = (await c.controllerId())!;
      const down = (ctrl + 2) % 3;
      const a = assignment(6, (p) => [p % 3, (p + 1) % 3]);
      await c.admin.createTopic(topic, newTopicId(), a, {});
      await waitForPreferredAndFullIsr(c, topic, a);
      const dirsOf = async (b: number) => (await readdir(join(c.broker(b).o.dir, 'logs')).catch(() => [] as string[])).filter((d) => d.startsWith(`${topic}-`));
      // the replicas' logs exist (LeaderAndIsr follows the state znodes)
      await until(async () => (await Promise.all([0, 1, 2].map(dirsOf))).flat().length === 12, `12 ${topic}-* log directories`, 15_000, 100);

      await c.broker(down).kill();
      await until(async () => !(await c.admin.getBrokerIds()).includes(down), `broker ${down} gone from ZooKeeper`, SESSION_TIMEOUT_MS + 10_000, 100);
      const del = await samsa('topics', '--bootstrap-server', c.broker(ctrl).address, '--delete', '--topic', topic);
      expect(del).toMatchObject({ code: 0, stdout: '' });
      // the live replicas are deleted, but the topic waits for the dead broker's
      await new Promise((r) => setTimeout(r, 4000));
      expect(await c.admin.zk.exists(TopicZNode.path(topic))).not.toBeNull();
      expect(await c.admin.zk.exists(DeleteTopicsTopicZNode.path(topic))).not.toBeNull();

      const t0 = Date.now();
      await c.broker(down).launch();
      await c.broker(down).waitReady();
      await until(
        async () => !(await c.admin.zk.exists(TopicZNode.path(topic))) && !(await c.admin.zk.exists(DeleteTopicsTopicZNode.path(topic))),
        'topic deletion completes',
        30_000,
        100,
      );
      console.log(`[controller e2e] deletion completed ${Date.now() - t0} ms after broker ${down} was relaunched`);
      expect(await c.admin.zk.exists(`/brokers/topics/${topic}/partitions`)).toBeNull();
      // no <topic>-<p> directory anywhere, and the renamed <topic>-<p>.<id>-delete ones go after the delete delay
      const t1 = Date.now();
      await until(async () => (await Promise.all([0, 1, 2].map(dirsOf))).flat().length === 0, `no ${topic}-* directory left`, 15_000, 100);
      console.log(`[controller e2e] last ${topic}-* directory gone ${Date.now() - t1} ms after the deletion completed (log.segment.delete.delay.ms 1000)`);
      for (const b of [0, 1, 2]) {
        const left = (await readdir(join(c.broker(b).o.dir, 'logs'))).filter((d) => d.includes(topic) || d.endsWith('-delete'));
        expect(left, `broker ${b}`).toEqual([]);
      }
      expect((await samsa('topics', '--bootstrap-server', c.broker(down).address, '--list')).stdout.split('\n')).not.toContain(topic);
    });

    it("SIGTERM of a broker leading 1,000 partitions (RF 2): leadership moves before it exits, in ZooKeeper and in every broker's Metadata, no partition ever offline (target 3 s)", async () => {
      await ensureAllRunning(c);
      const topic = 'drain';
      // the issue asks for a broker leading 1,000 partitions (SAMSA_E2E_DRAIN_PARTITIONS changes it)
      const N = Number(process.env['SAMSA_E2E_DRAIN_PARTITIONS'] ?? 1000);
      const ctrl = (await c.controllerId())!;
      const victim = (ctrl + 1) % 3;
      // the victim is the preferred leader of every partition; followers alternate over the other two
      const others = [0, 1, 2].filter((b) => b !== victim);
      const a = assignment(N, (p) => [victim, others[p % 2]!]);
      const tCreate = Date.now();
      await c.admin.createTopic(topic, newTopicId(), a, {});
      await waitForPreferredAndFullIsr(c, topic, a, 120_000);
      // the state znodes are written before the brokers apply LeaderAndIsr: wait for every replica's log
      const replicaDirs = async () =>
        (
          await Promise.all([0, 1, 2].map(async (b) => (await readdir(join(c.broker(b).o.dir, 'logs'))).filter((d) => d.startsWith(`${topic}-`)).length))
        ).reduce((x, y) => x + y, 0);
      await until(async () => (await replicaDirs()) === 2 * N, `${2 * N} ${topic} replica logs`, 120_000, 200);
      console.log(`[controller e2e] ${N} partitions (RF 2) online with full ISRs in ${Date.now() - tCreate} ms`);
      expect((await states(c, topic, N)).filter((s) => s.leader === victim)).toHaveLength(N);

      // Metadata as the surviving brokers answer it, on connections opened before the shutdown
      const survivorConns = await Promise.all(
        others.map((b) => Connection.connect({ host: c.broker(b).host, port: c.broker(b).o.port, nodeId: b, clientId: 'e2e-controlled-shutdown' })),
      );
      const ledByVictimInMetadata = async () =>
        Promise.all(
          survivorConns.map(async (conn) => {
            const res = await conn.request(API_KEYS.Metadata, (v) => metadataRequestBody([topic], v));
            return res.body.topics[0]!.partitions.filter((p) => p.leaderId === victim).length;
          }),
        );
      expect((await ledByVictimInMetadata()).every((n) => n === N)).toBe(true);
      const logFrom = (await logOf(c, victim)).length;
      let exited = false;
      let polls = 0;
      const offline: string[] = [];
      const poller = (async () => {
        while (!exited) {
          const ss = await states(c, topic, N);
          polls++;
          ss.forEach((s, p) => {
            if (s.leader < 0 || !s.isr.includes(s.leader)) offline.push(`${topicPartitionKey(topic, p)}: ${JSON.stringify(s)}`);
          });
        }
      })();
      const t0 = Date.now();
      await c.broker(victim).stop(30_000);
      const shutdownMs = Date.now() - t0;
      exited = true;
      await poller;
      // right after the exit, before its session could expire, nothing is led by it any more: in
      // ZooKeeper, and in every surviving broker's Metadata (the controller answers the
      // ControlledShutdown only once they acked the UpdateMetadata naming the new leaders)
      try {
        expect(await ledByVictimInMetadata()).toEqual([0, 0]);
      } finally {
        await Promise.all(survivorConns.map((conn) => conn.close()));
      }
      const right = await states(c, topic, N);
      expect(right.filter((s) => s.leader === victim)).toHaveLength(0);
      expect(right.filter((s) => s.isr.includes(victim))).toHaveLength(0);
      expect(offline).toEqual([]);
      expect(polls).toBeGreaterThan(0);
      const msgs = await logLines(c, victim, logFrom);
      const done = msgs.find((m) => m['msg'] === 'controlled shutdown succeeded');
      expect(done, 'the broker logs a successful controlled shutdown').toBeDefined();
      console.log(
        `[controller e2e] controlled shutdown of broker ${victim} (${N} leaderships, RF 2): ControlledShutdown answered after ${String(done!['ms'])} ms, process exited ${shutdownMs} ms after SIGTERM; ${polls} polls of all ${N} partition states, none offline`,
      );
      // the compass target is 3 s (0.8-1.3 s measured on an idle box); the hard limit leaves room for a loaded CI machine
      if (Number(done!['ms']) > 3000) console.warn(`[controller e2e] controlled shutdown took ${String(done!['ms'])} ms, above the 3 s target`);
      expect(Number(done!['ms'])).toBeLessThanOrEqual(10_000);
    });
  },
  { processesOnly: "reads the brokers' log files and log directories" },
);

describeCluster(
  'controller: auto leader rebalance, controller failover and fencing (3 brokers)',
  () => {
    let c: TestCluster;
    beforeAll(async () => {
      c = await TestCluster.start({
        brokers: 3,
        overrides: { ...BASE, 'auto.leader.rebalance.enable': 'true', 'leader.imbalance.check.interval.seconds': '5' },
        metrics: true,
      });
    });
    afterAll(async () => {
      await c?.stop();
    });

    it('auto rebalance (every 5 s) gives leadership back to a restarted preferred replica without a command', async () => {
      await ensureAllRunning(c);
      const topic = 'balance';
      const a = assignment(12, (p) => [p % 3, (p + 1) % 3, (p + 2) % 3]);
      await c.admin.createTopic(topic, newTopicId(), a, {});
      await waitForPreferredAndFullIsr(c, topic, a);
      const ctrl = (await c.controllerId())!;
      const victim = (ctrl + 1) % 3;
      await c.broker(victim).kill();
      await until(
        async () => (await states(c, topic, 12)).every((s) => s.leader >= 0 && s.leader !== victim),
        'leaders moved off the killed broker',
        SESSION_TIMEOUT_MS + 10_000,
        100,
      );
      await c.broker(victim).launch();
      await c.broker(victim).waitReady();
      await until(async () => (await states(c, topic, 12)).every((s) => s.isr.length === 3), 'restarted broker back in every ISR', 30_000, 100);
      const t0 = Date.now();
      await waitForPreferredAndFullIsr(c, topic, a, 30_000);
      console.log(`[controller e2e] auto rebalance restored the preferred leaders ${Date.now() - t0} ms after broker ${victim} rejoined the ISRs`);
      expect((await logLines(c, ctrl)).some((m) => m['msg'] === 'auto leader rebalance: moving leadership back to preferred replicas')).toBe(true);
    });

    it('kill -9 of the controller: another broker takes over with controller epoch + 1, from its hot-standby context', async () => {
      await ensureAllRunning(c);
      const old = (await c.controllerId())!;
      const before = (await c.admin.getControllerEpoch())!.epoch;
      const logFrom = new Map(await Promise.all([0, 1, 2].map(async (b) => [b, (await logOf(c, b)).length] as const)));
      // a topic of its own, and standbys that have its partition states (and every other) clean
      if (!(await c.admin.topicExists('standby')))
        await c.admin.createTopic(
          'standby',
          newTopicId(),
          assignment(30, (p) => [p % 3, (p + 1) % 3]),
          {},
        );
      await c.waitForLeaders('standby', 30, 15_000);
      const partitionCount = async () =>
        (await c.admin.getAllTopics()).length > 0 &&
        (await Promise.all((await c.admin.getAllTopics()).map((t) => c.admin.getTopicAssignment(t)))).reduce((n, t) => n + (t?.partitions.size ?? 0), 0);
      const expected = Number(await partitionCount());
      await until(
        async () => {
          for (const b of [0, 1, 2].filter((x) => x !== old)) {
            const m = await (await fetch(`${(c.broker(b) as BrokerProcess).metricsUrl!}/metrics`)).text();
            const clean = /kafka_controller_kafkacontroller_hotstandbypartitions\{state="clean"\} (\d+)/.exec(m)?.[1];
            if (Number(clean) !== expected) return false;
          }
          return true;
        },
        'hot standbys warm',
        15_000,
      );
      const t0 = Date.now();
      await c.broker(old).kill();
      const now = await newController(c, old);
      console.log(`[controller e2e] broker ${now} became the controller ${Date.now() - t0} ms after kill -9 of controller ${old}`);
      expect((await c.admin.getControllerEpoch())!.epoch).toBe(before + 1);
      expect(Date.now() - t0).toBeLessThanOrEqual(SESSION_TIMEOUT_MS + 2000);
      // the new controller took the partition states its hot standby kept warm and read few (none changed but the dead broker's)
      const failover = await until(
        async () => (await logLines(c, now, logFrom.get(now))).find((m) => m['msg'] === 'controller failover done'),
        'the failover log line',
        15_000,
      );
      console.log(
        `[controller e2e] failover load: ${JSON.stringify({ warmStates: failover['warmStates'], readStates: failover['readStates'], sampledStates: failover['sampledStates'], loadMs: failover['loadMs'] })}`,
      );
      const total = Number(failover['warmStates']) + Number(failover['readStates']);
      expect(total).toBe(Number(failover['partitions']));
      // the sample of warm states agreed with ZooKeeper (a disagreement reads everything and says so)
      const disagreed = (await logLines(c, now, logFrom.get(now))).find(
        (m) => m['msg'] === 'hot-standby context disagreed with ZooKeeper; reading every partition state',
      );
      expect(disagreed, JSON.stringify(disagreed)).toBeUndefined();
      // warm states are adopted; those the leaders' ISR shrinks (replica.lag.time.max.ms 4 s, before the 6 s session
      // timeout ends) dirtied are read, so how many are warm depends on timing: the integration test pins it down
      expect(Number(failover['warmStates']) + Number(failover['sampledStates'])).toBeGreaterThan(0);
      // the new controller works: a new topic gets leaders
      const live = [0, 1, 2].filter((b) => b !== old);
      await c.admin.createTopic(
        'after-failover',
        newTopicId(),
        assignment(3, (p) => [live[p % 2]!, live[(p + 1) % 2]!]),
        {},
      );
      await c.waitForLeaders('after-failover', 3, 15_000);
      await c.broker(old).launch();
      await c.broker(old).waitReady();
      await until(async () => (await c.admin.getBrokerIds()).length === 3, 'old controller re-registered', 30_000);
      expect(await c.controllerId()).toBe(now);
    });

    it('a controller paused past its session timeout is fenced: after SIGCONT it writes no partition state and resigns', async () => {
      await ensureAllRunning(c);
      // the topics of the tests before (after-failover only if that test got that far)
      const sizes = new Map([['balance', 12]]);
      if (await c.admin.topicExists('after-failover')) sizes.set('after-failover', 3);
      const topics = [...sizes.keys()];
      await until(async () => (await states(c, 'balance', 12)).every((s) => s.isr.length === 3), 'balance fully in sync', 30_000, 100);
      const old = (await c.controllerId())!;
      const epochBefore = (await c.admin.getControllerEpoch())!.epoch;
      c.broker(old).pause();
      try {
        const now = await newController(c, old);
        const fence = (await c.admin.getControllerEpoch())!;
        expect(fence.epoch).toBe(epochBefore + 1);
        // the new controller acts: the stopped broker's leaderships move, a topic is created
        await until(
          async () => (await states(c, 'balance', 12)).every((s) => s.leader >= 0 && s.leader !== old && !s.isr.includes(old)),
          'leaders off the stopped broker',
          15_000,
          100,
        );
        const live = [0, 1, 2].filter((b) => b !== old);
        await c.admin.createTopic(
          'while-fenced',
          newTopicId(),
          assignment(4, (p) => [live[p % 2]!, live[(p + 1) % 2]!]),
          {},
        );
        topics.push('while-fenced');
        sizes.set('while-fenced', 4);
        await c.waitForLeaders('while-fenced', 4, 15_000);
        if (sizes.has('after-failover')) {
          await until(
            async () => (await states(c, 'after-failover', 3)).every((s) => s.leader >= 0 && s.leader !== old),
            'after-failover led by live brokers',
            15_000,
            100,
          );
        }

        // partition states as the new controller left them, with the zxid of their last write
        const snapshot = new Map<string, { mzxid: bigint; state: LeaderIsrAndControllerEpoch }>();
        for (const t of topics) {
          for (let p = 0; p < sizes.get(t)!; p++) {
            const path = TopicPartitionStateZNode.path(t, p);
            const n = await c.admin.zk.get(path);
            snapshot.set(path, { mzxid: n.stat.mzxid, state: TopicPartitionStateZNode.decode(n.data, path) });
          }
        }
        const logFrom = (await logOf(c, old)).length;
        c.broker(old).resume();
        const resigned = await until(
          async () => (await logLines(c, old, logFrom)).find((m) => m['msg'] === 'resigned as controller'),
          'the old controller logs its resignation',
          20_000,
          100,
        );
        expect(resigned['brokerId']).toBe(old);
        // it comes back as a plain broker: registered again and back in the ISRs
        await until(async () => (await c.admin.getBrokerIds()).includes(old), 'old controller re-registered', 30_000, 100);
        await until(async () => (await states(c, 'balance', 12)).every((s) => s.isr.length === 3), 'old controller back in every ISR', 30_000, 100);
        await new Promise((r) => setTimeout(r, 1000));

        expect(await c.controllerId()).toBe(now);
        expect((await c.admin.getControllerEpoch())!.epoch).toBe(fence.epoch);
        let changed = 0;
        for (const [path, before] of snapshot) {
          const n = await c.admin.zk.get(path);
          const s = TopicPartitionStateZNode.decode(n.data, path);
          expect(n.stat.mzxid >= fence.stat.mzxid || n.stat.mzxid === before.mzxid).toBe(true);
          if (n.stat.mzxid === before.mzxid) continue;
          changed++;
          // written after the resume: by the new controller (its epoch), or an ISR change by the leader
          // (same leader and leader epoch); a write of the old controller would carry the old epoch
          // and a new leader epoch
          const leaderOnly = s.leader === before.state.leader && s.leaderEpoch === before.state.leaderEpoch;
          expect(s.controllerEpoch >= fence.epoch || leaderOnly, `${path}: ${JSON.stringify(s)} (before ${JSON.stringify(before.state)})`).toBe(true);
        }
        const oldMsgs = await logLines(c, old, logFrom);
        console.log(
          `[controller e2e] fenced controller ${old} (epoch ${epochBefore} → ${fence.epoch}, controller ${now}): resigned; ${changed} of ${snapshot.size} partition states changed after SIGCONT, none by it; its log after SIGCONT: ${oldMsgs
            .filter((m) => m['component'] === 'controller')
            .map((m) => String(m['msg']))
            .join(' | ')}`,
        );
      } finally {
        c.broker(old).resume();
      }
    });
  },
  { processesOnly: "reads the brokers' log files and log directories" },
);
