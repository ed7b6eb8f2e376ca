/**
 * kill -9 of the controller in the middle of work somebody waits for (issue #30 item 6), with real
 * broker processes: a CreateTopics (Samsa's admin client: KafkaJS 2.2.4 leaves an unhandled
 * KafkaJSConnectionClosedError behind when its broker dies) and a broker's controlled shutdown are
 * answered (an error or success, never a hang), and the work completes under the next controller. The in-process
 * cases (resignation and shutdown in the middle of ElectLeaders, a reassignment and a controlled
 * shutdown) are packages/controller/src/controller-callers.int.test.ts.
 */
import { Admin } from '@samsa/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newTopicId } from '@samsa/zk-paths';
import { describeCluster, TestCluster, until } from './harness.js';

const SESSION_TIMEOUT_MS = 6000;

/** The outcome of `p`, or a rejection if it neither resolves nor rejects within `ms` (a hang). */
async function settlesWithin<T>(p: Promise<T>, ms: number, what: string): Promise<{ ok: T } | { err: Error }> {
  const outcome = p.then(
    (ok) => ({ ok }),
    (err: Error) => ({ err }),
  );
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_r, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms)));
  try {
    return await Promise.race([outcome, hang]);
  } finally {
    clearTimeout(timer);
  }
}

async function newController(c: TestCluster, old: number): Promise<number> {
  return (
    await until(
      async () => {
        const id = await c.controllerId();
        return id !== null && id !== old ? { id } : null;
      },
      `a controller other than ${old}`,
      SESSION_TIMEOUT_MS + 10_000,
    )
  ).id;
}

describeCluster('controller callers: kill -9 of the controller mid-request', () => {
  let c: TestCluster;
  let admin: Admin;

  beforeAll(async () => {
    c = await TestCluster.start({
      brokers: 3,
      overrides: { 'zookeeper.session.timeout.ms': String(SESSION_TIMEOUT_MS), 'controlled.shutdown.retry.backoff.ms': '500' },
    });
    await until(async () => (await c.admin.getBrokerIds()).length === 3 && (await c.controllerId()) !== null, 'brokers and a controller');
    admin = new Admin({ bootstrapServers: c.bootstrap });
  });
  afterAll(async () => {
    await admin?.close();
    await c?.stop();
  });

  it('createTopics: the controller is killed once the topic is in ZooKeeper; the call is answered and the topic gets every leader', async () => {
    const topic = 'made-while-dying';
    const partitions = 300;
    const ctrl = (await c.controllerId())!;
    const t0 = Date.now();
    const creating = admin.createTopics([{ name: topic, numPartitions: partitions, replicationFactor: 3 }], { timeoutMs: 20_000 });
    await until(() => c.admin.topicExists(topic), 'topic znode', 15_000, 5);
    await c.broker(ctrl).kill();
    const outcome = await settlesWithin(creating, SESSION_TIMEOUT_MS + 40_000, 'createTopics');
    console.log(
      `[controller-callers e2e] createTopics ${'ok' in outcome ? `answered ${JSON.stringify(outcome.ok)}` : `failed: ${outcome.err.message}`} ${Date.now() - t0} ms after it was sent`,
    );
    const next = await newController(c, ctrl);
    expect(next).not.toBe(ctrl);
    await c.waitForLeaders(topic, partitions, 30_000);
    const states = await c.admin.getPartitionStates(Array.from({ length: partitions }, (_, partition) => ({ topic, partition })));
    expect([...states.values()].every((s) => s.state.leader >= 0 && s.state.leader !== ctrl)).toBe(true);
    await c.startBroker(ctrl);
    await until(async () => (await c.admin.getBrokerIds()).length === 3, 'killed broker re-registered');
  });

  it('controlled shutdown: the controller is killed while moving the stopping broker’s leaders; the broker still exits on its own and every partition keeps a leader', async () => {
    const topic = 'led-by-stopping';
    const partitions = 90;
    await until(async () => (await c.admin.getBrokerIds()).length === 3, 'three brokers');
    const ctrl = (await c.controllerId())!;
    const stopping = [0, 1, 2].find((b) => b !== ctrl)!;
    const last = [0, 1, 2].find((b) => b !== ctrl && b !== stopping)!;
    const order = [stopping, last, ctrl];
    await c.admin.createTopic(
      topic,
      newTopicId(),
      new Map(Array.from({ length: partitions }, (_, p) => [p, [order[p % 3]!, order[(p + 1) % 3]!, order[(p + 2) % 3]!]])),
      {},
    );
    await c.waitForLeaders(topic, partitions, 30_000);
    await c.waitForFullIsr(topic, partitions, 60_000);
    const ledByStopping = Array.from({ length: partitions / 3 }, (_, i) => ({ topic, partition: i * 3 }));
    const t0 = Date.now();
    // SIGTERM: the broker asks the controller for a controlled shutdown; SIGKILL only after 60 s
    const stopped = c.broker(stopping).stop(60_000);
    await until(
      async () => [...(await c.admin.getPartitionStates(ledByStopping)).values()].some((s) => s.state.leader !== stopping),
      'the controller moving leaders off the stopping broker',
      15_000,
      5,
    );
    await c.broker(ctrl).kill();
    await settlesWithin(stopped, 45_000, 'the stopping broker');
    const ms = Date.now() - t0;
    console.log(`[controller-callers e2e] broker ${stopping} exited ${ms} ms after SIGTERM; controller ${ctrl} was killed mid-shutdown`);
    // the ControlledShutdown sent to the killed controller fails when its connection closes and is
    // retried, not after controller.socket.timeout.ms (30 s); stop() would SIGKILL only after 60 s
    expect(ms).toBeLessThan(20_000);
    await until(
      async () =>
        [...(await c.admin.getPartitionStates(Array.from({ length: partitions }, (_, partition) => ({ topic, partition })))).values()].every(
          (s) => s.state.leader === last,
        ),
      `every partition led by the last live broker ${last}`,
      SESSION_TIMEOUT_MS + 20_000,
      100,
    );
  });
});
