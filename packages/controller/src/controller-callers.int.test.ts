/**
 * Callers of the controller are answered when the controller goes away in the middle of their
 * event (issue #30 item 6): real ZooKeeper, three in-process controllers. The active controller's
 * ZooKeeper writes are held at a gate, so its event is "in the middle" for as long as the test
 * wants; then the controller resigns (/controller deleted, another controller elected with a new
 * epoch) or shuts down, and every caller — the one in progress and one queued behind it — must get
 * an answer.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '@samsa/protocol';
import { ZooKeeperEnsemble } from '@samsa/local-cluster';
import { KafkaZk, ZkClient, newTopicId, type BrokerInfo } from '@samsa/zk-paths';
import { KafkaController } from './controller.js';
import { RecordingChannel, until } from './test-support.js';

const logger = pino({ level: process.env['SAMSA_TEST_LOG'] ?? 'silent' });

const brokerInfo = (id: number): BrokerInfo => ({
  id,
  endpoints: [{ listenerName: 'PLAINTEXT', host: '127.0.0.1', port: 9092 + id, securityProtocol: 'PLAINTEXT' }],
  rack: null,
  jmxPort: -1,
  timestamp: String(Date.now()),
  features: {},
  version: 5,
});

/** The controller's fenced ZooKeeper writes (partition states, topic assignments), held while the gate is armed. */
const GATED_WRITES = ['updateLeaderAndIsr', 'setTopicAssignment'] as const;

interface Gate {
  /** Resolves when a write reached the gate: the event is in the middle of its work. */
  hit: Promise<void>;
  release(): void;
}

function armGate(kzk: KafkaZk): Gate {
  let hit!: () => void;
  let release!: () => void;
  const hitP = new Promise<void>((r) => (hit = r));
  const released = new Promise<void>((r) => (release = r));
  for (const name of GATED_WRITES) {
    const original = kzk[name].bind(kzk) as (...a: unknown[]) => Promise<unknown>;
    (kzk as unknown as Record<string, unknown>)[name] = async (...args: unknown[]) => {
      hit();
      await released;
      return original(...args);
    };
  }
  return { hit: hitP, release };
}

type Answer = { errorCode: number };

/** Settles with the answer, or rejects if none came within `ms` (a hang). */
function answered<T extends Answer>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([p, new Promise<T>((_r, reject) => setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms).unref())]);
}

describe('controller callers against real ZooKeeper', () => {
  let dir: string;
  let ens: ZooKeeperEnsemble;
  const clients: ZkClient[] = [];
  const controllers: KafkaController[] = [];
  const gates: Gate[] = [];
  let chroot = 0;
  let cs = '';

  const zkClient = async () => {
    const c = await ZkClient.connect({ connectString: cs, sessionTimeoutMs: 4000 });
    clients.push(c);
    return c;
  };
  const startBroker = async (id: number) => {
    const zk = await zkClient();
    const kzk = new KafkaZk(zk);
    await kzk.createPersistentPaths();
    await kzk.registerBroker(brokerInfo(id));
    const controller = new KafkaController({
      brokerId: id,
      kzk,
      channel: new RecordingChannel(),
      logger,
      stateChangeLogger: logger,
      uncleanLeaderElectionEnable: false,
      autoLeaderRebalanceEnable: false,
    });
    controllers.push(controller);
    controller.startup();
    return { id, zk, kzk, controller };
  };
  type TestBroker = Awaited<ReturnType<typeof startBroker>>;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'samsa-ctl-callers-'));
    ens = await ZooKeeperEnsemble.start({ size: 1, baseDir: dir });
  });
  afterEach(async () => {
    for (const g of gates.splice(0)) g.release();
    for (const c of controllers.splice(0)) await c.shutdown().catch(() => undefined);
    for (const c of clients.splice(0)) await c.close();
  });
  afterAll(async () => {
    await ens?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  /** Three brokers; `active` is the controller, `p` and `f` the two others. */
  async function cluster() {
    cs = ens.connectString(`/callers-${++chroot}`);
    const brokers = await Promise.all([0, 1, 2].map(startBroker));
    const active = await until(() => brokers.find((b) => b.controller.isActive), 'active controller');
    const [p, f] = brokers.filter((b) => b !== active) as [TestBroker, TestBroker];
    const admin = new KafkaZk(await zkClient());
    return { brokers, active, p, f, admin };
  }
  type Cluster = Awaited<ReturnType<typeof cluster>>;

  /** Per caller: what makes the controller write to ZooKeeper, and the call (with a timeout) that does it. */
  const calls: Array<{ name: string; prepare(c: Cluster): Promise<void>; call(c: Cluster, timeoutMs?: number): Promise<Answer> }> = [
    {
      name: 'ElectLeaders (unclean)',
      // the only ISR member's broker is gone: the partition is offline until an unclean election
      async prepare({ admin, p, f }) {
        await admin.createTopic('t', newTopicId(), new Map([[0, [p.id, f.id]]]), {});
        const st = await until(async () => {
          const s = await admin.getPartitionState({ topic: 't', partition: 0 });
          return s?.state.leader === p.id ? s : undefined;
        }, 'leader p');
        await admin.conditionalUpdatePartitionState({ topic: 't', partition: 0 }, { ...st.state, isr: [p.id] }, st.zkVersion);
        await p.controller.shutdown();
        await p.zk.close();
        await until(async () => (await admin.getPartitionState({ topic: 't', partition: 0 }))?.state.leader === -1, 'offline partition');
      },
      call: ({ active }, timeoutMs) => active.controller.electLeaders([{ topic: 't', partition: 0 }], 1, timeoutMs),
    },
    {
      name: 'AlterPartitionReassignments',
      async prepare({ admin, p, f }) {
        await admin.createTopic('t', newTopicId(), new Map([[0, [p.id, f.id]]]), {});
        await until(async () => (await admin.getPartitionState({ topic: 't', partition: 0 }))?.state.leader === p.id, 'leader p');
      },
      call: ({ active, f }, timeoutMs) => active.controller.alterPartitionReassignments([{ topic: 't', partition: 0, replicas: [f.id, active.id] }], timeoutMs),
    },
    {
      name: 'ControlledShutdown',
      async prepare({ admin, p, f, active }) {
        await admin.createTopic('t', newTopicId(), new Map([[0, [p.id, f.id, active.id]]]), {});
        await until(async () => (await admin.getPartitionState({ topic: 't', partition: 0 }))?.state.leader === p.id, 'leader p');
      },
      call: ({ active, p }, timeoutMs) => active.controller.controlledShutdown(p.id, -1n, timeoutMs),
    },
  ];

  for (const c of calls) {
    it(`controller callers – ${c.name}: the controller resigns in the middle; the caller in progress and one queued both get NOT_CONTROLLER`, async () => {
      const cl = await cluster();
      await c.prepare(cl);
      const gate = armGate(cl.active.kzk);
      gates.push(gate);
      const inProgress = c.call(cl);
      await gate.hit;
      const queued = c.call(cl);
      const epoch = cl.active.controller.epoch;
      await cl.admin.zk.delete('/controller');
      const others = cl.brokers.filter((b) => b !== cl.active);
      await until(() => others.find((b) => b.controller.isActive && b.controller.epoch > epoch), 'a new controller');
      gate.release();
      expect((await answered(inProgress, 10_000, 'caller in progress')).errorCode).toBe(ErrorCode.NOT_CONTROLLER);
      expect((await answered(queued, 10_000, 'queued caller')).errorCode).toBe(ErrorCode.NOT_CONTROLLER);
      expect(cl.active.controller.isActive).toBe(false);
    });

    it(`controller callers – ${c.name}: the controller shuts down in the middle; the queued caller gets NOT_CONTROLLER at once, the stuck one REQUEST_TIMED_OUT`, async () => {
      const cl = await cluster();
      await c.prepare(cl);
      const gate = armGate(cl.active.kzk);
      gates.push(gate);
      const started = Date.now();
      const inProgress = c.call(cl, 1_500);
      await gate.hit;
      const queued = c.call(cl);
      const shutdown = cl.active.controller.shutdown();
      // the queued event is dropped at close, while the one in progress is still held at the gate
      expect((await answered(queued, 5_000, 'queued caller')).errorCode).toBe(ErrorCode.NOT_CONTROLLER);
      // ZooKeeper never answers the one in progress: its caller times out
      const stuck = await answered(inProgress, 10_000, 'caller in progress');
      const timedOut = stuck.errorCode === ErrorCode.REQUEST_TIMED_OUT || ('results' in stuck && timedOutPerPartition(stuck.results));
      expect(timedOut).toBe(true);
      // answered by its 1,500 ms timeout, not at once; Node's timers run on libuv's cached loop clock, so
      // Date.now() can show up to a few ms less when a timer fires (a CI run saw 1,499)
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_500 - 5);
      gate.release();
      await shutdown;
    });
  }
});

/** ElectLeaders with named partitions times out per partition (Kafka's DelayedElectLeader expiry). */
function timedOutPerPartition(results: unknown): boolean {
  if (!(results instanceof Map) && !(results && typeof results === 'object' && Symbol.iterator in results)) return false;
  const entries = [...(results as Iterable<[unknown, { errorCode: number }]>)];
  return entries.length > 0 && entries.every(([, r]) => r.errorCode === ErrorCode.REQUEST_TIMED_OUT);
}
