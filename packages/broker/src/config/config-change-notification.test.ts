import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { ConfigEntityChangeNotificationSequenceZNode, ConfigEntityZNode, ConfigType, CreateMode, FakeZkClient, KafkaZk } from '@samsa/zk-paths';
import { ConfigChangeNotificationHandler, DEFAULT_BROKER_ENTITY } from './config-change-notification.js';

const log = pino({ level: 'silent' });

async function until(f: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 2000;
  while (!f()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('config change notifications', () => {
  it("config changes – existing topic and broker configs are applied at startup; each /config/changes notification re-reads its entity; other brokers' entities are ignored", async () => {
    const kzk = new KafkaZk(new FakeZkClient());
    await kzk.createPersistentPaths();
    await kzk.changeEntityConfig(ConfigType.Topic, 't', { 'retention.ms': '1000' });
    await kzk.changeEntityConfig(ConfigType.Broker, DEFAULT_BROKER_ENTITY, { 'leader.replication.throttled.rate': '10' });
    const topics: Array<[string, Record<string, string>]> = [];
    const brokers: Array<[string, Record<string, string>]> = [];
    const h = new ConfigChangeNotificationHandler(kzk, 1, { topics: (n, c) => void topics.push([n, c]), brokers: (n, c) => void brokers.push([n, c]) }, log);
    await h.startup();
    expect(topics).toEqual([['t', { 'retention.ms': '1000' }]]);
    expect(brokers).toEqual([
      [DEFAULT_BROKER_ENTITY, { 'leader.replication.throttled.rate': '10' }],
      ['1', {}],
    ]);
    await kzk.changeEntityConfig(ConfigType.Topic, 'u', { 'follower.replication.throttled.replicas': '*' });
    await kzk.changeEntityConfig(ConfigType.Broker, '2', { 'follower.replication.throttled.rate': '5' });
    await kzk.changeEntityConfig(ConfigType.Broker, '1', { 'follower.replication.throttled.rate': '7' });
    await until(() => brokers.length === 3, 'the broker 1 change');
    await h.idle();
    expect(topics[1]).toEqual(['u', { 'follower.replication.throttled.replicas': '*' }]);
    expect(brokers[2]).toEqual(['1', { 'follower.replication.throttled.rate': '7' }]);
    expect(topics).toHaveLength(2);
    // a malformed notification is skipped
    await kzk.zk.create(ConfigEntityChangeNotificationSequenceZNode.createPath, Buffer.from('{"version":2}'), { mode: CreateMode.PersistentSequential });
    await kzk.zk.set(ConfigEntityZNode.path(ConfigType.Topic, 't'), ConfigEntityZNode.encode({}));
    await kzk.zk.create(ConfigEntityChangeNotificationSequenceZNode.createPath, ConfigEntityChangeNotificationSequenceZNode.encode('topics/t'), {
      mode: CreateMode.PersistentSequential,
    });
    await until(() => topics.length === 3, 'the topic t change');
    expect(topics[2]).toEqual(['t', {}]);
    h.shutdown();
  });
});
