import { describe, expect, it } from 'vitest';
import {
  BrokerIdZNode,
  ClusterIdZNode,
  ConfigEntityChangeNotificationSequenceZNode,
  ConfigEntityZNode,
  ControllerEpochZNode,
  ControllerZNode,
  IsrChangeNotificationSequenceZNode,
  PERSISTENT_PATHS,
  PreferredReplicaElectionZNode,
  ProducerIdBlockZNode,
  ReassignPartitionsZNode,
  TopicPartitionStateZNode,
  TopicZNode,
} from './znodes.js';
import { ZNodeDecodeError } from './zk-errors.js';
import { newTopicId, topicIdFromString, topicIdToString } from './topic-id.js';

const b = (s: string) => Buffer.from(s, 'utf8');

/** Payloads as real Kafka brokers wrote them (zkCli `get` output). */
const REAL = {
  state: '{"controller_epoch":160,"leader":1,"version":1,"leader_epoch":227,"isr":[2,1,0]}',
  controller: '{"version":1,"brokerid":0,"timestamp":"1669261529715"}',
  controllerV2: '{"version":2,"brokerid":1,"timestamp":"1704032949256","kraftControllerEpoch":-1}',
  brokerV4:
    '{"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"endpoints":["PLAINTEXT://192.168.0.101:9092"],"jmx_port":-1,"host":"192.168.0.101","timestamp":"1669438275755","port":9092,"version":4}',
  brokerV5:
    '{"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT","EXTERNAL":"PLAINTEXT"},"endpoints":["PLAINTEXT://kafka-1:29092","EXTERNAL://localhost:9092"],"jmx_port":-1,"port":29092,"host":"kafka-1","version":5,"timestamp":"1724097127252"}',
  topicV3:
    '{"partitions":{"0":[1,0,2],"1":[0,2,1],"2":[2,1,0],"3":[1,2,0]},"topic_id":"W3mXDtj1RsWmsEhQrZjN5g","adding_replicas":{},"removing_replicas":{},"version":3}',
  topicV1Unordered: '{"version":1,"partitions":{"2":[0,2,1],"1":[2,1,0],"3":[1,2,0],"0":[1,0,2]}}',
};

describe('znodes', () => {
  it('znodes – partition state decodes and re-encodes byte for byte', () => {
    const path = TopicPartitionStateZNode.path('t', 0);
    const s = TopicPartitionStateZNode.decode(b(REAL.state), path);
    expect(s).toEqual({ controllerEpoch: 160, leader: 1, leaderEpoch: 227, isr: [2, 1, 0] });
    expect(TopicPartitionStateZNode.encode(s).toString()).toBe(REAL.state);
  });

  it('znodes – controller v1 and v2 round-trip byte for byte', () => {
    const c = ControllerZNode.decode(b(REAL.controller));
    expect(c).toEqual({ version: 1, brokerId: 0, timestamp: '1669261529715' });
    expect(ControllerZNode.encode(c).toString()).toBe(REAL.controller);
    const c2 = ControllerZNode.decode(b(REAL.controllerV2));
    expect(c2.kraftControllerEpoch).toBe(-1);
    expect(ControllerZNode.encode(c2).toString()).toBe(REAL.controllerV2);
  });

  it('znodes – broker registration v4 and v5 round-trip byte for byte', () => {
    const v4 = BrokerIdZNode.decode(0, b(REAL.brokerV4));
    expect(v4.endpoints).toEqual([{ listenerName: 'PLAINTEXT', host: '192.168.0.101', port: 9092, securityProtocol: 'PLAINTEXT' }]);
    expect(BrokerIdZNode.encode(v4).toString()).toBe(REAL.brokerV4);
    const v5 = BrokerIdZNode.decode(1, b(REAL.brokerV5));
    expect(v5.endpoints.map((e) => e.listenerName)).toEqual(['PLAINTEXT', 'EXTERNAL']);
    expect(v5.rack).toBeNull();
    expect(BrokerIdZNode.encode(v5).toString()).toBe(REAL.brokerV5);
  });

  it('znodes – broker registration with rack and a CONTROLLER listener round-trips', () => {
    const info = {
      id: 2,
      endpoints: [
        { listenerName: 'PLAINTEXT', host: '127.0.0.1', port: 9094, securityProtocol: 'PLAINTEXT' },
        { listenerName: 'CONTROLLER', host: '127.0.0.1', port: 19094, securityProtocol: 'PLAINTEXT' },
      ],
      rack: 'rack-a',
      jmxPort: -1,
      timestamp: '1700000000000',
      features: {},
      version: 5,
    };
    const bytes = BrokerIdZNode.encode(info);
    expect(bytes.toString()).toContain('"endpoints":["PLAINTEXT://127.0.0.1:9094","CONTROLLER://127.0.0.1:19094"],"rack":"rack-a"');
    expect(BrokerIdZNode.decode(2, bytes)).toEqual(info);
  });

  it('znodes – topic assignment v3 keeps partition order and round-trips byte for byte', () => {
    const t = TopicZNode.decode('secondTopic', b(REAL.topicV3));
    expect(t.topicId).toBe('W3mXDtj1RsWmsEhQrZjN5g');
    expect([...t.partitions.entries()]).toEqual([
      [0, [1, 0, 2]],
      [1, [0, 2, 1]],
      [2, [2, 1, 0]],
      [3, [1, 2, 0]],
    ]);
    expect(TopicZNode.encode(t).toString()).toBe(REAL.topicV3);
    const old = TopicZNode.decode('x', b(REAL.topicV1Unordered));
    expect([...old.partitions.keys()]).toEqual([2, 1, 3, 0]);
    expect(TopicZNode.encode(old).toString()).toBe(REAL.topicV1Unordered);
  });

  it('znodes – admin, notification, config and producer-id payloads round-trip', () => {
    const reassign = '{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2]}]}';
    expect(ReassignPartitionsZNode.encode(ReassignPartitionsZNode.decode(b(reassign))).toString()).toBe(reassign);
    const pre = '{"version":1,"partitions":[{"topic":"t","partition":3}]}';
    expect(PreferredReplicaElectionZNode.decode(b(pre))).toEqual([{ topic: 't', partition: 3 }]);
    expect(PreferredReplicaElectionZNode.encode([{ topic: 't', partition: 3 }]).toString()).toBe(pre);
    expect(IsrChangeNotificationSequenceZNode.encode([{ topic: 't', partition: 3 }]).toString()).toBe(pre);
    expect(IsrChangeNotificationSequenceZNode.path('0000000007')).toBe('/isr_change_notification/isr_change_0000000007');
    const cfg = '{"version":1,"config":{"retention.ms":"1000","cleanup.policy":"compact"}}';
    expect(ConfigEntityZNode.encode(ConfigEntityZNode.decode(b(cfg), '/config/topics/t')).toString()).toBe(cfg);
    const change = '{"version":2,"entity_path":"topics/t"}';
    expect(ConfigEntityChangeNotificationSequenceZNode.encode('topics/t').toString()).toBe(change);
    const pid = '{"version":1,"broker":0,"block_start":"0","block_end":"999"}';
    expect(ProducerIdBlockZNode.encode(ProducerIdBlockZNode.decode(b(pid))!).toString()).toBe(pid);
    expect(ClusterIdZNode.decode(ClusterIdZNode.encode('abc'))).toBe('abc');
    expect(ClusterIdZNode.encode('abc').toString()).toBe('{"version":"1","id":"abc"}');
    expect(ControllerEpochZNode.decode(b('7'))).toBe(7);
  });

  it('znodes – malformed payloads raise ZNodeDecodeError naming the path', () => {
    const path = TopicPartitionStateZNode.path('orders', 4);
    const cases = ['{not json', '[1,2]', '{"controller_epoch":1,"leader":"x","version":1,"leader_epoch":0,"isr":[]}', '{"version":1}', ''];
    for (const c of cases) {
      let err: unknown;
      try {
        TopicPartitionStateZNode.decode(b(c), path);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ZNodeDecodeError);
      expect((err as ZNodeDecodeError).path).toBe(path);
      expect((err as Error).message).toContain(path);
    }
    expect(() => ControllerEpochZNode.decode(b('seven'))).toThrow(ZNodeDecodeError);
    expect(() => BrokerIdZNode.decode(1, b('{"version":5,"endpoints":["nonsense"]}'))).toThrow(/\/brokers\/ids\/1/);
    expect(() => TopicZNode.decode('t', b('{"version":3,"partitions":{"x":[1]}}'))).toThrow(ZNodeDecodeError);
  });

  it('znodes – persistent paths match Kafka', () => {
    expect(PERSISTENT_PATHS).toEqual(
      expect.arrayContaining([
        '/brokers/ids',
        '/brokers/topics',
        '/brokers/seqid',
        '/admin/delete_topics',
        '/isr_change_notification',
        '/config/changes',
        '/config/topics',
        '/config/brokers',
        '/latest_producer_id_block',
      ]),
    );
  });

  it('znodes – topic ids are 22-char URL-safe base64 of 16 bytes', () => {
    for (let i = 0; i < 100; i++) {
      const id = newTopicId();
      expect(id).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{21}$/);
      expect(topicIdToString(topicIdFromString(id))).toBe(id);
    }
    expect(() => topicIdFromString('short')).toThrow();
  });
});
