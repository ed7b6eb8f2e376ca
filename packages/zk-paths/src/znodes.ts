import type { TopicPartition } from '@samsa/protocol';
/**
 * Kafka's ZooKeeper layout (ZK mode, 2.8+): one definition per znode — its path and the encoding of
 * its payload, byte-compatible with what Kafka brokers write, so zkCli habits and tools carry over.
 * Names follow Kafka's ZkData.
 */
import { ZNodeDecodeError } from './zk-errors.js';
import { Fields, orderedJson, parseObject, partitionMapJson, utf8 } from './json.js';

// ---- cluster / controller ---------------------------------------------------------------

export const ClusterIdZNode = {
  path: '/cluster/id',
  encode(id: string): Buffer {
    return utf8(
      orderedJson([
        ['version', '1'],
        ['id', id],
      ]),
    );
  },
  decode(data: Buffer, path = '/cluster/id'): string {
    return new Fields(path, parseObject(path, data)).str('id');
  },
} as const;

export interface ControllerData {
  version: number;
  brokerId: number;
  /** Milliseconds since the epoch, kept as Kafka's decimal string. */
  timestamp: string;
  /** Present in version 2 (Kafka 3.4+ migration field); -1 in ZK mode. */
  kraftControllerEpoch?: number;
}

export const ControllerZNode = {
  path: '/controller',
  encode(c: ControllerData): Buffer {
    const entries: Array<[string, unknown]> = [
      ['version', c.version],
      ['brokerid', c.brokerId],
      ['timestamp', c.timestamp],
    ];
    if (c.version >= 2) entries.push(['kraftControllerEpoch', c.kraftControllerEpoch ?? -1]);
    return utf8(orderedJson(entries));
  },
  decode(data: Buffer, path = '/controller'): ControllerData {
    const f = new Fields(path, parseObject(path, data));
    const out: ControllerData = { version: f.version(1, 2), brokerId: f.int('brokerid'), timestamp: f.longString('timestamp') };
    if (f.has('kraftControllerEpoch')) out.kraftControllerEpoch = f.int('kraftControllerEpoch');
    return out;
  },
} as const;

/** The controller epoch, a bare decimal. Its zkVersion fences every controller write. */
export const ControllerEpochZNode = {
  path: '/controller_epoch',
  encode(epoch: number): Buffer {
    return utf8(String(epoch));
  },
  decode(data: Buffer, path = '/controller_epoch'): number {
    const s = data.toString('utf8').trim();
    if (!/^\d+$/.test(s)) throw new ZNodeDecodeError(path, `expected a decimal epoch, got ${JSON.stringify(s)}`);
    return Number(s);
  },
} as const;

// ---- brokers ----------------------------------------------------------------------------

export interface EndPoint {
  listenerName: string;
  host: string;
  port: number;
  securityProtocol: string;
}

export interface BrokerInfo {
  id: number;
  endpoints: EndPoint[];
  rack: string | null;
  jmxPort: number;
  /** Registration time in ms, as Kafka's decimal string. */
  timestamp: string;
  /** Supported features (version 5): name → { min_version, max_version }. */
  features: Record<string, { min_version: number; max_version: number }>;
  version: number;
  /** Broker epoch: the czxid of the registration znode (set when read with its Stat). */
  epoch?: bigint;
}

export function formatEndpoint(e: EndPoint): string {
  const host = e.host.includes(':') ? `[${e.host}]` : e.host;
  return `${e.listenerName}://${host}:${e.port}`;
}

/** Parses `NAME://host:port` (IPv6 hosts in brackets, empty host allowed). */
export function parseEndpoint(s: string, protocolMap: Record<string, string>, path = '<endpoint>'): EndPoint {
  const m = /^([A-Za-z0-9_.-]+):\/\/(\[[^\]]*\]|[^:/]*):(\d+)$/.exec(s);
  if (!m) throw new ZNodeDecodeError(path, `malformed endpoint ${JSON.stringify(s)}`);
  const listenerName = m[1]!;
  const host = m[2]!.replace(/^\[|\]$/g, '');
  const securityProtocol = protocolMap[listenerName] ?? listenerName;
  return { listenerName, host, port: Number(m[3]), securityProtocol };
}

export const BrokerIdsZNode = { path: '/brokers/ids' } as const;

export const BrokerIdZNode = {
  path: (id: number) => `/brokers/ids/${id}`,
  /** Kafka's field order for versions 4 and 5 (what zkCli shows for a real broker). */
  encode(b: BrokerInfo): Buffer {
    const plain = b.endpoints.find((e) => e.securityProtocol === 'PLAINTEXT');
    const lspm: Record<string, string> = {};
    for (const e of b.endpoints) lspm[e.listenerName] = e.securityProtocol;
    const endpoints = b.endpoints.map(formatEndpoint);
    const host = plain?.host ?? null;
    const port = plain?.port ?? -1;
    const rack: Array<[string, unknown]> = b.rack !== null ? [['rack', b.rack]] : [];
    const entries: Array<[string, unknown]> =
      b.version >= 5
        ? [
            ['features', b.features],
            ['listener_security_protocol_map', lspm],
            ['endpoints', endpoints],
            ...rack,
            ['jmx_port', b.jmxPort],
            ['port', port],
            ['host', host],
            ['version', b.version],
            ['timestamp', b.timestamp],
          ]
        : [
            ['listener_security_protocol_map', lspm],
            ['endpoints', endpoints],
            ...rack,
            ['jmx_port', b.jmxPort],
            ['host', host],
            ['timestamp', b.timestamp],
            ['port', port],
            ['version', b.version],
          ];
    return utf8(orderedJson(entries));
  },
  decode(id: number, data: Buffer, path = `/brokers/ids/${id}`): BrokerInfo {
    const f = new Fields(path, parseObject(path, data));
    const version = f.int('version');
    if (version < 1) throw new ZNodeDecodeError(path, `unsupported version ${version}`);
    const lspm = f.objectOr('listener_security_protocol_map') as Record<string, string>;
    let endpoints: EndPoint[];
    if (f.has('endpoints')) endpoints = f.strArray('endpoints').map((s) => parseEndpoint(s, lspm, path));
    else endpoints = [{ listenerName: 'PLAINTEXT', host: f.str('host'), port: f.int('port'), securityProtocol: 'PLAINTEXT' }];
    const features = f.objectOr('features') as BrokerInfo['features'];
    return {
      id,
      endpoints,
      rack: f.strOr('rack', null),
      jmxPort: f.intOr('jmx_port', -1),
      timestamp: f.has('timestamp') ? f.longString('timestamp') : '0',
      features,
      version,
    };
  },
} as const;

/** broker.id generation: the znode's zkVersion after a set, plus reserved.broker.max.id. */
export const BrokerSequenceIdZNode = { path: '/brokers/seqid' } as const;

// ---- topics and partitions --------------------------------------------------------------

export interface TopicAssignment {
  /** Base64 (URL-safe, unpadded) topic id, as Kafka 2.8+ writes it; null for old topics. */
  topicId: string | null;
  /** partition → replicas, in the payload's order. */
  partitions: Map<number, number[]>;
  addingReplicas: Map<number, number[]>;
  removingReplicas: Map<number, number[]>;
  version: number;
}

export const TopicsZNode = { path: '/brokers/topics' } as const;

export const TopicZNode = {
  path: (topic: string) => `/brokers/topics/${topic}`,
  encode(t: TopicAssignment): Buffer {
    if (t.version >= 3) {
      const entries: Array<[string, unknown, 'raw'] | [string, unknown]> = [['partitions', partitionMapJson(t.partitions), 'raw']];
      if (t.topicId !== null) entries.push(['topic_id', t.topicId]);
      entries.push(
        ['adding_replicas', partitionMapJson(t.addingReplicas), 'raw'],
        ['removing_replicas', partitionMapJson(t.removingReplicas), 'raw'],
        ['version', t.version],
      );
      return utf8(orderedJson(entries));
    }
    return utf8(
      orderedJson([
        ['version', t.version],
        ['partitions', partitionMapJson(t.partitions), 'raw'],
      ]),
    );
  },
  decode(topic: string, data: Buffer, path = `/brokers/topics/${topic}`): TopicAssignment {
    const f = new Fields(path, parseObject(path, data));
    return {
      version: f.version(1, 2, 3),
      topicId: f.strOr('topic_id', null),
      partitions: f.partitionReplicaMap('partitions'),
      addingReplicas: f.partitionReplicaMap('adding_replicas'),
      removingReplicas: f.partitionReplicaMap('removing_replicas'),
    };
  },
} as const;

export const TopicPartitionsZNode = { path: (topic: string) => `/brokers/topics/${topic}/partitions` } as const;
export const TopicPartitionZNode = {
  path: (topic: string, partition: number) => `/brokers/topics/${topic}/partitions/${partition}`,
} as const;

export interface LeaderIsrAndControllerEpoch {
  leader: number;
  leaderEpoch: number;
  isr: number[];
  controllerEpoch: number;
  /** Kafka 3.2+ (KIP-704) writes this only when the leader is recovering; 0 = RECOVERED. */
  leaderRecoveryState?: number;
}

export const TopicPartitionStateZNode = {
  path: (topic: string, partition: number) => `/brokers/topics/${topic}/partitions/${partition}/state`,
  encode(s: LeaderIsrAndControllerEpoch): Buffer {
    const entries: Array<[string, unknown]> = [
      ['controller_epoch', s.controllerEpoch],
      ['leader', s.leader],
      ['version', 1],
      ['leader_epoch', s.leaderEpoch],
      ['isr', s.isr],
    ];
    if (s.leaderRecoveryState !== undefined && s.leaderRecoveryState !== 0) entries.push(['leader_recovery_state', s.leaderRecoveryState]);
    return utf8(orderedJson(entries));
  },
  decode(data: Buffer, path: string): LeaderIsrAndControllerEpoch {
    const f = new Fields(path, parseObject(path, data));
    f.version(1);
    const out: LeaderIsrAndControllerEpoch = {
      leader: f.int('leader'),
      leaderEpoch: f.int('leader_epoch'),
      isr: f.intArray('isr'),
      controllerEpoch: f.int('controller_epoch'),
    };
    if (f.has('leader_recovery_state')) out.leaderRecoveryState = f.int('leader_recovery_state');
    return out;
  },
} as const;

// ---- admin ------------------------------------------------------------------------------

function partitionList(f: Fields, withReplicas: false): TopicPartition[];
function partitionList(f: Fields, withReplicas: true): Array<TopicPartition & { replicas: number[] }>;
function partitionList(f: Fields, withReplicas: boolean): Array<TopicPartition & { replicas?: number[] }> {
  return f.array('partitions').map((raw, i) => {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      throw new ZNodeDecodeError(f.path, `partitions[${i}] should be an object`);
    }
    const p = new Fields(f.path, raw as Record<string, unknown>);
    const ref = { topic: p.str('topic'), partition: p.int('partition') };
    return withReplicas ? { ...ref, replicas: p.intArray('replicas') } : ref;
  });
}

export const AdminZNode = { path: '/admin' } as const;

export const DeleteTopicsZNode = { path: '/admin/delete_topics' } as const;
/** A topic marked for deletion: the child's name is the topic; it carries no data. */
export const DeleteTopicsTopicZNode = { path: (topic: string) => `/admin/delete_topics/${topic}` } as const;

export const ReassignPartitionsZNode = {
  path: '/admin/reassign_partitions',
  encode(parts: Array<TopicPartition & { replicas: number[] }>): Buffer {
    return utf8(
      orderedJson([
        ['version', 1],
        ['partitions', parts.map((p) => ({ topic: p.topic, partition: p.partition, replicas: p.replicas }))],
      ]),
    );
  },
  decode(data: Buffer, path = '/admin/reassign_partitions'): Array<TopicPartition & { replicas: number[] }> {
    const f = new Fields(path, parseObject(path, data));
    f.version(1);
    return partitionList(f, true);
  },
} as const;

function partitionsNotification(path: string) {
  return {
    path,
    encode(parts: TopicPartition[]): Buffer {
      return utf8(
        orderedJson([
          ['version', 1],
          ['partitions', parts.map((p) => ({ topic: p.topic, partition: p.partition }))],
        ]),
      );
    },
    decode(data: Buffer, p = path): TopicPartition[] {
      const f = new Fields(p, parseObject(p, data));
      f.version(1);
      return partitionList(f, false);
    },
  } as const;
}

export const PreferredReplicaElectionZNode = partitionsNotification('/admin/preferred_replica_election');

export const IsrChangeNotificationZNode = { path: '/isr_change_notification' } as const;
/** `/isr_change_notification/isr_change_<seq>` (persistent sequential), written by partition leaders. */
export const IsrChangeNotificationSequenceZNode = {
  ...partitionsNotification('/isr_change_notification/isr_change_'),
  prefix: 'isr_change_',
  /** Path to create (ZooKeeper appends the sequence number). */
  createPath: '/isr_change_notification/isr_change_',
  path: (seq: string) => `/isr_change_notification/isr_change_${seq}`,
  seqOf: (child: string) => child.slice('isr_change_'.length),
} as const;

// ---- configs ----------------------------------------------------------------------------

export const ConfigType = { Topic: 'topics', Client: 'clients', User: 'users', Broker: 'brokers', Ip: 'ips' } as const;
export type ConfigType = (typeof ConfigType)[keyof typeof ConfigType];

export const ConfigZNode = { path: '/config' } as const;
export const ConfigEntityTypeZNode = { path: (type: ConfigType) => `/config/${type}` } as const;

export const ConfigEntityZNode = {
  path: (type: ConfigType, name: string) => `/config/${type}/${name}`,
  encode(config: Record<string, string>): Buffer {
    return utf8(
      orderedJson([
        ['version', 1],
        ['config', config],
      ]),
    );
  },
  decode(data: Buffer, path: string): Record<string, string> {
    // Kafka writes an empty payload for a never-configured entity
    if (data.length === 0) return {};
    const f = new Fields(path, parseObject(path, data));
    const cfg = f.objectOr('config');
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(cfg)) {
      if (typeof v !== 'string') throw new ZNodeDecodeError(path, `config value for "${k}" should be a string`);
      out[k] = v;
    }
    return out;
  },
} as const;

export const ConfigEntityChangeNotificationZNode = { path: '/config/changes' } as const;
/** `/config/changes/config_change_<seq>`: `{"version":2,"entity_path":"topics/t"}`. */
export const ConfigEntityChangeNotificationSequenceZNode = {
  prefix: 'config_change_',
  createPath: '/config/changes/config_change_',
  path: (seq: string) => `/config/changes/config_change_${seq}`,
  encode(entityPath: string): Buffer {
    return utf8(
      orderedJson([
        ['version', 2],
        ['entity_path', entityPath],
      ]),
    );
  },
  decode(data: Buffer, path: string): { entityPath: string } {
    const f = new Fields(path, parseObject(path, data));
    f.version(2);
    return { entityPath: f.str('entity_path') };
  },
} as const;

// ---- producer ids, log dirs, consumers ----------------------------------------------------

export interface ProducerIdBlock {
  brokerId: number;
  /** Inclusive bounds, as decimal strings (Kafka writes longs as strings here). */
  blockStart: string;
  blockEnd: string;
}

export const ProducerIdBlockZNode = {
  path: '/latest_producer_id_block',
  encode(b: ProducerIdBlock): Buffer {
    return utf8(
      orderedJson([
        ['version', 1],
        ['broker', b.brokerId],
        ['block_start', b.blockStart],
        ['block_end', b.blockEnd],
      ]),
    );
  },
  decode(data: Buffer, path = '/latest_producer_id_block'): ProducerIdBlock | null {
    if (data.length === 0) return null;
    const f = new Fields(path, parseObject(path, data));
    f.version(1);
    return { brokerId: f.int('broker'), blockStart: f.longString('block_start'), blockEnd: f.longString('block_end') };
  },
} as const;

export const LogDirEventNotificationZNode = { path: '/log_dir_event_notification' } as const;
export const LogDirEventNotificationSequenceZNode = {
  prefix: 'log_dir_event_',
  createPath: '/log_dir_event_notification/log_dir_event_',
  path: (seq: string) => `/log_dir_event_notification/log_dir_event_${seq}`,
  encode(brokerId: number): Buffer {
    return utf8(
      orderedJson([
        ['version', 1],
        ['broker', brokerId],
        ['event', 1],
      ]),
    );
  },
  decode(data: Buffer, path: string): { brokerId: number } {
    const f = new Fields(path, parseObject(path, data));
    f.version(1);
    return { brokerId: f.int('broker') };
  },
} as const;

export const ConsumerPathZNode = { path: '/consumers' } as const;

/** Created (empty, persistent) at broker startup, as Kafka's ZkData.PersistentZkPaths. */
export const PERSISTENT_PATHS: readonly string[] = [
  ConsumerPathZNode.path,
  BrokerIdsZNode.path,
  TopicsZNode.path,
  ConfigEntityChangeNotificationZNode.path,
  DeleteTopicsZNode.path,
  BrokerSequenceIdZNode.path,
  IsrChangeNotificationZNode.path,
  ProducerIdBlockZNode.path,
  LogDirEventNotificationZNode.path,
  ...Object.values(ConfigType).map((t) => ConfigEntityTypeZNode.path(t)),
];
