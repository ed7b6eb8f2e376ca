/**
 * Broker configuration definitions: Kafka's names, types, defaults, valid values, importance and
 * update mode (Kafka 3.8, ZooKeeper mode), with Samsa's own short documentation.
 *
 * Differences from Kafka are marked with `samsa`:
 * - `listeners`, `listener.security.protocol.map` and `control.plane.listener.name` default to a
 *   separate CONTROLLER listener, which carries Samsa's controller→broker RPC;
 * - a few configs are accepted for compatibility but have no effect on Node (`ignored`);
 * - `metrics.port`, `metrics.host`, `state.change.log.file`, `console.port`, `log.index.open.files.max` and
 *   `controller.hot.standby.*` are Samsa's own (`extension`).
 * A few obviously meaningless values that Kafka accepts are rejected (session timeouts below 1,
 * `default.replication.factor` below 1).
 */
import { DOUBLE_MAX, INT_MAX, LONG_MAX } from './values.js';
import type { ValueOfDef } from './values.js';
import { freezeTable } from './types.js';
import type { ConfigDef } from './types.js';
import { SSL_CONFIGS } from './ssl-definitions.js';
import { SASL_CONFIGS } from './sasl-definitions.js';
import { AUTHORIZER_CONFIGS } from './authorizer-definitions.js';

const RO = 'read-only';
const PB = 'per-broker';
const CW = 'cluster-wide';

/** Kafka's security protocols. */
export const SecurityProtocol = {
  PLAINTEXT: 'PLAINTEXT',
  SSL: 'SSL',
  SASL_PLAINTEXT: 'SASL_PLAINTEXT',
  SASL_SSL: 'SASL_SSL',
} as const;
export type SecurityProtocol = (typeof SecurityProtocol)[keyof typeof SecurityProtocol];
export const SECURITY_PROTOCOLS: readonly SecurityProtocol[] = Object.freeze(Object.values(SecurityProtocol));

/** Kafka's compression.type values (broker and topic). */
export const COMPRESSION_TYPES = ['uncompressed', 'zstd', 'lz4', 'snappy', 'gzip', 'producer'] as const;
export const TIMESTAMP_TYPES = ['CreateTime', 'LogAppendTime'] as const;
export const CLEANUP_POLICIES = ['compact', 'delete'] as const;

/** The smallest legal segment: one legacy record's overhead (LegacyRecord.RECORD_OVERHEAD_V0). */
export const MIN_SEGMENT_BYTES = 14;

export const BROKER_CONFIGS = freezeTable({
  // ZooKeeper
  'zookeeper.connect': {
    type: 'string',
    default: null,
    required: true,
    importance: 'high',
    dynamic: RO,
    doc: 'ZooKeeper ensemble as host:port[,host:port…], optionally followed by a chroot path such as /samsa.',
  },
  'zookeeper.session.timeout.ms': {
    type: 'int',
    default: 18000,
    min: 1,
    importance: 'high',
    dynamic: RO,
    doc: 'ZooKeeper session timeout requested by the broker.',
  },
  'zookeeper.connection.timeout.ms': {
    type: 'int',
    default: null,
    min: 1,
    importance: 'high',
    dynamic: RO,
    doc: 'How long to wait for a ZooKeeper connection; unset means zookeeper.session.timeout.ms.',
  },
  'zookeeper.max.in.flight.requests': {
    type: 'int',
    default: 10,
    min: 1,
    importance: 'high',
    dynamic: RO,
    samsa: 'ignored',
    doc: "Maximum unacknowledged ZooKeeper requests (not enforced by Samsa's client).",
  },
  'zookeeper.set.acl': {
    type: 'boolean',
    default: false,
    importance: 'high',
    dynamic: RO,
    doc: "Create znodes with secure ACLs (Kafka's: the broker's identity gets ALL, everyone READ except on /config/users and /config/brokers). Needs ZooKeeper credentials: a JAAS Client section with DigestLoginModule, named by -Djava.security.auth.login.config in KAFKA_OPTS (docs/security-zookeeper.md).",
  },

  // General
  'broker.id': {
    type: 'int',
    default: -1,
    importance: 'high',
    dynamic: RO,
    doc: "This broker's id. -1 generates one from /brokers/seqid (above reserved.broker.max.id).",
  },
  'broker.id.generation.enable': { type: 'boolean', default: true, importance: 'medium', dynamic: RO, doc: 'Allow broker.id=-1 to generate an id.' },
  'reserved.broker.max.id': {
    type: 'int',
    default: 1000,
    min: 0,
    importance: 'medium',
    dynamic: RO,
    doc: 'Highest id that may be configured by hand; generated ids start above it.',
  },
  'broker.rack': { type: 'string', default: null, importance: 'medium', dynamic: RO, doc: 'Rack of this broker, used for rack-aware replica placement.' },
  'message.max.bytes': {
    type: 'int',
    default: 1048588,
    min: 0,
    importance: 'high',
    dynamic: CW,
    doc: 'Largest record batch the broker accepts (topic-level max.message.bytes).',
  },
  'num.network.threads': {
    type: 'int',
    default: 3,
    min: 1,
    importance: 'high',
    dynamic: CW,
    samsa: 'ignored',
    doc: 'Network threads in Kafka; Node serves sockets on its event loop.',
  },
  'num.io.threads': {
    type: 'int',
    default: 8,
    min: 1,
    importance: 'high',
    dynamic: CW,
    samsa: 'ignored',
    doc: 'Request handler threads in Kafka; Node handles requests on its event loop.',
  },
  'background.threads': {
    type: 'int',
    default: 10,
    min: 1,
    importance: 'high',
    dynamic: CW,
    samsa: 'ignored',
    doc: 'Background task threads in Kafka; timers in Samsa.',
  },
  'num.recovery.threads.per.data.dir': {
    type: 'int',
    default: 1,
    min: 1,
    importance: 'high',
    dynamic: CW,
    doc: 'The number of threads per data directory to be used for log recovery at startup and flushing at shutdown. Samsa has no threads for it: each counts as 16 partitions loaded (or flushed) at once per log directory, since a load mostly waits for file I/O (the default loads 16 at a time).',
  },
  'request.timeout.ms': { type: 'int', default: 30000, min: 0, importance: 'high', dynamic: RO, doc: 'Timeout of requests the broker sends to other brokers.' },

  // Socket server
  listeners: {
    type: 'string',
    default: 'PLAINTEXT://:9092,CONTROLLER://:19092',
    importance: 'high',
    dynamic: PB,
    samsa: 'default-differs',
    doc: "Comma-separated NAME://host:port endpoints to listen on; an empty host means all interfaces, port 0 a random port. Kafka's default has no CONTROLLER listener.",
  },
  'advertised.listeners': {
    type: 'string',
    default: null,
    importance: 'high',
    dynamic: PB,
    doc: 'Endpoints published in ZooKeeper for clients and other brokers; unset means listeners.',
  },
  'listener.security.protocol.map': {
    type: 'string',
    default: 'SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT',
    importance: 'low',
    dynamic: PB,
    samsa: 'default-differs',
    doc: 'Security protocol of each listener name, as NAME:PROTOCOL pairs. Samsa adds CONTROLLER:PLAINTEXT.',
  },
  'control.plane.listener.name': {
    type: 'string',
    default: 'CONTROLLER',
    importance: 'high',
    dynamic: RO,
    samsa: 'default-differs',
    doc: "Listener that receives the controller's requests (Samsa's controller→broker RPC). Kafka's default is none.",
  },
  'security.inter.broker.protocol': {
    type: 'string',
    default: 'PLAINTEXT',
    oneOf: SECURITY_PROTOCOLS,
    importance: 'medium',
    dynamic: RO,
    doc: 'Protocol between brokers when inter.broker.listener.name is unset.',
  },
  'inter.broker.listener.name': {
    type: 'string',
    default: null,
    importance: 'medium',
    dynamic: RO,
    doc: 'Listener other brokers use to replicate from this one; unset means the listener named after security.inter.broker.protocol.',
  },
  'socket.send.buffer.bytes': {
    type: 'int',
    default: 102400,
    importance: 'high',
    dynamic: RO,
    samsa: 'ignored',
    doc: 'SO_SNDBUF of server sockets (-1: OS default).',
  },
  'socket.receive.buffer.bytes': {
    type: 'int',
    default: 102400,
    importance: 'high',
    dynamic: RO,
    samsa: 'ignored',
    doc: 'SO_RCVBUF of server sockets (-1: OS default).',
  },
  'socket.request.max.bytes': {
    type: 'int',
    default: 104857600,
    min: 1,
    importance: 'high',
    dynamic: RO,
    doc: 'Largest request the broker reads; larger ones close the connection.',
  },
  'socket.listen.backlog.size': { type: 'int', default: 50, min: 1, importance: 'medium', dynamic: RO, doc: 'Listen backlog of server sockets.' },
  'max.connections': { type: 'int', default: INT_MAX, min: 0, importance: 'medium', dynamic: CW, doc: 'Most connections the broker accepts at once.' },
  'max.connections.per.ip': { type: 'int', default: INT_MAX, min: 0, importance: 'medium', dynamic: CW, doc: 'Most connections accepted from one IP address.' },
  'connections.max.idle.ms': { type: 'long', default: 600000, importance: 'medium', dynamic: RO, doc: 'Idle connections are closed after this long.' },

  // Log
  'num.partitions': { type: 'int', default: 1, min: 1, importance: 'medium', dynamic: RO, doc: 'Partitions of auto-created topics.' },
  'log.dir': { type: 'string', default: '/tmp/kafka-logs', importance: 'high', dynamic: RO, doc: 'Log directory, used when log.dirs is unset.' },
  'log.dirs': { type: 'string', default: null, importance: 'high', dynamic: RO, doc: 'Comma-separated log directories; unset means log.dir.' },
  'log.segment.bytes': {
    type: 'int',
    default: 1073741824,
    min: MIN_SEGMENT_BYTES,
    importance: 'high',
    dynamic: CW,
    doc: 'Size at which a log segment is rolled.',
  },
  'log.roll.ms': { type: 'long', default: null, importance: 'high', dynamic: CW, doc: 'Age at which a segment is rolled; unset means log.roll.hours.' },
  'log.roll.hours': { type: 'int', default: 168, min: 1, importance: 'high', dynamic: RO, doc: 'Segment roll age in hours (secondary to log.roll.ms).' },
  'log.roll.jitter.ms': {
    type: 'long',
    default: null,
    importance: 'high',
    dynamic: CW,
    doc: 'Random jitter subtracted from the roll age; unset means log.roll.jitter.hours.',
  },
  'log.roll.jitter.hours': { type: 'int', default: 0, min: 0, importance: 'high', dynamic: RO, doc: 'Roll jitter in hours (secondary to log.roll.jitter.ms).' },
  'log.retention.ms': {
    type: 'long',
    default: null,
    importance: 'high',
    dynamic: CW,
    doc: 'How long to keep a segment (-1: forever); unset means log.retention.minutes, then log.retention.hours.',
  },
  'log.retention.minutes': { type: 'int', default: null, importance: 'high', dynamic: RO, doc: 'Retention in minutes (secondary to log.retention.ms).' },
  'log.retention.hours': { type: 'int', default: 168, importance: 'high', dynamic: RO, doc: 'Retention in hours (tertiary to log.retention.ms).' },
  'log.retention.bytes': {
    type: 'long',
    default: -1,
    importance: 'high',
    dynamic: CW,
    doc: 'Largest size of a partition before old segments are deleted (-1: no limit).',
  },
  'log.retention.check.interval.ms': {
    type: 'long',
    default: 300000,
    min: 1,
    importance: 'medium',
    dynamic: RO,
    doc: 'How often segments are checked for deletion.',
  },
  'log.cleanup.policy': {
    type: 'list',
    default: ['delete'],
    oneOf: CLEANUP_POLICIES,
    importance: 'medium',
    dynamic: CW,
    doc: 'What to do with old segments: delete, compact, or both.',
  },
  'log.cleaner.enable': {
    type: 'boolean',
    default: true,
    importance: 'medium',
    dynamic: RO,
    doc: 'Run the log cleaner (needed for compacted topics such as __consumer_offsets).',
  },
  'log.cleaner.threads': { type: 'int', default: 1, min: 0, importance: 'medium', dynamic: CW, doc: 'Log cleaner workers.' },
  'log.cleaner.dedupe.buffer.size': {
    type: 'long',
    default: 134217728,
    importance: 'medium',
    dynamic: CW,
    doc: 'Memory for deduplication across all cleaner workers.',
  },
  'log.cleaner.io.buffer.size': {
    type: 'int',
    default: 524288,
    min: 0,
    importance: 'medium',
    dynamic: CW,
    doc: 'Read and write buffer memory of all cleaner workers.',
  },
  'log.cleaner.io.buffer.load.factor': {
    type: 'double',
    default: 0.9,
    importance: 'medium',
    dynamic: CW,
    doc: 'How full the deduplication map of a cleaner may get before a clean stops indexing.',
  },
  'log.cleaner.io.max.bytes.per.second': { type: 'double', default: DOUBLE_MAX, importance: 'medium', dynamic: CW, doc: 'I/O throttle of the log cleaner.' },
  'log.cleaner.backoff.ms': {
    type: 'long',
    default: 15000,
    min: 0,
    importance: 'medium',
    dynamic: CW,
    doc: 'Pause of the cleaner when there is nothing to clean.',
  },
  'log.cleaner.min.cleanable.ratio': {
    type: 'double',
    default: 0.5,
    min: 0,
    max: 1,
    importance: 'medium',
    dynamic: CW,
    doc: 'Dirty/total ratio above which a log is cleaned.',
  },
  'log.cleaner.delete.retention.ms': {
    type: 'long',
    default: 86400000,
    min: 0,
    importance: 'medium',
    dynamic: CW,
    doc: 'How long tombstones are kept in compacted logs.',
  },
  'log.cleaner.min.compaction.lag.ms': {
    type: 'long',
    default: 0,
    min: 0,
    importance: 'medium',
    dynamic: CW,
    doc: 'Minimum age of a record before it may be compacted.',
  },
  'log.cleaner.max.compaction.lag.ms': {
    type: 'long',
    default: LONG_MAX,
    min: 1,
    importance: 'medium',
    dynamic: CW,
    doc: 'Maximum age of a record before it must be eligible for compaction.',
  },
  'log.index.size.max.bytes': {
    type: 'int',
    default: 10485760,
    min: 4,
    importance: 'medium',
    dynamic: CW,
    doc: 'Largest offset index of a segment; a full index rolls the segment.',
  },
  'log.index.open.files.max': {
    type: 'int',
    default: 4096,
    min: 1,
    importance: 'low',
    dynamic: RO,
    samsa: 'extension',
    doc: "Index files (.index, .timeindex) kept open at once across the broker's logs: Samsa opens an index file when it first writes to it and closes the least recently used idle ones beyond this (Kafka memory-maps indexes and has no such setting).",
  },
  'log.index.interval.bytes': {
    type: 'int',
    default: 4096,
    min: 0,
    importance: 'medium',
    dynamic: CW,
    doc: 'Bytes between offset index entries (topic-level index.interval.bytes).',
  },
  'log.flush.interval.messages': {
    type: 'long',
    default: LONG_MAX,
    min: 1,
    importance: 'high',
    dynamic: CW,
    doc: 'Messages appended before the log is fsynced.',
  },
  'log.flush.interval.ms': {
    type: 'long',
    default: null,
    importance: 'high',
    dynamic: CW,
    doc: 'Time before the log is fsynced; unset means log.flush.scheduler.interval.ms.',
  },
  'log.flush.scheduler.interval.ms': {
    type: 'long',
    default: LONG_MAX,
    importance: 'high',
    dynamic: RO,
    doc: 'How often logs are checked for a needed flush.',
  },
  'log.flush.offset.checkpoint.interval.ms': {
    type: 'int',
    default: 60000,
    min: 0,
    importance: 'high',
    dynamic: RO,
    doc: 'How often the recovery point checkpoint is written.',
  },
  'log.flush.start.offset.checkpoint.interval.ms': {
    type: 'int',
    default: 60000,
    min: 0,
    importance: 'high',
    dynamic: RO,
    doc: 'How often the log-start-offset-checkpoint file (log start offsets moved by DeleteRecords) is written.',
  },
  'log.segment.delete.delay.ms': {
    type: 'long',
    default: 60000,
    min: 0,
    importance: 'high',
    dynamic: CW,
    doc: "Delay before a deleted segment's files are removed.",
  },
  'log.preallocate': { type: 'boolean', default: false, importance: 'medium', dynamic: CW, doc: 'Preallocate segment files.' },
  'log.message.timestamp.type': {
    type: 'string',
    default: 'CreateTime',
    oneOf: TIMESTAMP_TYPES,
    importance: 'medium',
    dynamic: CW,
    doc: "Record timestamps: as the producer set them, or the broker's append time.",
  },
  'log.message.timestamp.difference.max.ms': {
    type: 'long',
    default: LONG_MAX,
    min: 0,
    importance: 'medium',
    dynamic: CW,
    doc: 'Largest accepted difference between a CreateTime timestamp and the broker clock (deprecated in Kafka).',
  },
  'log.message.timestamp.before.max.ms': {
    type: 'long',
    default: LONG_MAX,
    min: 0,
    importance: 'medium',
    dynamic: CW,
    doc: 'How far in the past a CreateTime timestamp may be.',
  },
  'log.message.timestamp.after.max.ms': {
    type: 'long',
    default: LONG_MAX,
    min: 0,
    importance: 'medium',
    dynamic: CW,
    doc: 'How far in the future a CreateTime timestamp may be.',
  },
  'log.message.format.version': {
    type: 'string',
    default: '3.0-IV1',
    importance: 'medium',
    dynamic: RO,
    doc: 'Message format version topics report as message.format.version (deprecated in Kafka 3.0; ignored when inter.broker.protocol.version is 3.0 or higher, where topics report 3.0-IV1).',
  },
  'log.message.downconversion.enable': { type: 'boolean', default: true, importance: 'low', dynamic: CW, doc: 'Down-convert records for old consumers.' },
  'auto.create.topics.enable': {
    type: 'boolean',
    default: true,
    importance: 'high',
    dynamic: RO,
    doc: 'Create a topic when a client asks for metadata of a missing one.',
  },
  'min.insync.replicas': {
    type: 'int',
    default: 1,
    min: 1,
    importance: 'high',
    dynamic: CW,
    doc: 'In-sync replicas needed for an acks=all produce to succeed.',
  },
  'compression.type': {
    type: 'string',
    default: 'producer',
    oneOf: COMPRESSION_TYPES,
    importance: 'high',
    dynamic: CW,
    doc: 'Compression of stored batches; producer keeps what the producer sent.',
  },
  'delete.topic.enable': { type: 'boolean', default: true, importance: 'high', dynamic: RO, doc: 'Allow topics to be deleted.' },

  // Replication
  'controller.socket.timeout.ms': { type: 'int', default: 30000, importance: 'medium', dynamic: RO, doc: 'Timeout of controller-to-broker requests.' },
  'controller.hot.standby.enable': {
    type: 'boolean',
    default: true,
    importance: 'low',
    dynamic: RO,
    samsa: 'extension',
    doc: "Brokers that are not the controller keep the controller's context warm (topics, assignments, partition states with their zkVersions) from ZooKeeper watches and the UpdateMetadata stream, so a new controller reads only what changed instead of every partition state znode.",
  },
  'controller.hot.standby.max.partitions': {
    type: 'int',
    default: 12000,
    min: 0,
    importance: 'low',
    dynamic: RO,
    samsa: 'extension',
    doc: "Partition state znodes a hot standby watches at most; the others are read at failover. Bounded because the ZooKeeper client re-sends every watched path in one SetWatches frame on reconnect, which must stay under the server's jute.maxbuffer (1 MiB).",
  },
  'default.replication.factor': { type: 'int', default: 1, min: 1, importance: 'medium', dynamic: RO, doc: 'Replication factor of auto-created topics.' },
  'inter.broker.protocol.version': {
    type: 'string',
    default: '3.8-IV0',
    importance: 'medium',
    dynamic: RO,
    doc: 'Inter-broker protocol version (0.8.0 … 3.8, e.g. 2.0 or 2.0-IV1). Samsa writes __consumer_offsets records in the versions Kafka writes under it (group metadata v0 before 0.10.1, v1 before 2.1, v2 before 2.3; offset commits v1 before 2.1), so tools of that age can read them.',
  },
  'replica.lag.time.max.ms': {
    type: 'long',
    default: 30000,
    importance: 'high',
    dynamic: RO,
    doc: 'A follower that has not caught up for this long leaves the ISR.',
  },
  'replica.socket.timeout.ms': {
    type: 'int',
    default: 30000,
    importance: 'high',
    dynamic: RO,
    doc: 'Timeout of follower fetch requests; at least replica.fetch.wait.max.ms.',
  },
  'replica.socket.receive.buffer.bytes': {
    type: 'int',
    default: 65536,
    importance: 'high',
    dynamic: RO,
    samsa: 'ignored',
    doc: 'Receive buffer of follower connections.',
  },
  'replica.fetch.max.bytes': {
    type: 'int',
    default: 1048576,
    min: 0,
    importance: 'medium',
    dynamic: RO,
    doc: 'Bytes per partition a follower asks for (a larger first batch is still returned).',
  },
  'replica.fetch.min.bytes': {
    type: 'int',
    default: 1,
    importance: 'high',
    dynamic: RO,
    doc: 'Bytes a follower fetch waits for, up to replica.fetch.wait.max.ms.',
  },
  'replica.fetch.wait.max.ms': {
    type: 'int',
    default: 500,
    importance: 'high',
    dynamic: RO,
    doc: 'Longest wait of a follower fetch; at most replica.lag.time.max.ms.',
  },
  'replica.fetch.backoff.ms': { type: 'int', default: 1000, min: 0, importance: 'medium', dynamic: RO, doc: 'Pause after a failed follower fetch.' },
  'replica.fetch.response.max.bytes': { type: 'int', default: 10485760, min: 0, importance: 'medium', dynamic: RO, doc: 'Bytes per follower fetch response.' },
  'quota.window.num': {
    type: 'int',
    default: 11,
    min: 1,
    importance: 'low',
    dynamic: RO,
    doc: 'Samples kept to measure client quota rates (producer_byte_rate, consumer_byte_rate).',
  },
  'quota.window.size.seconds': { type: 'int', default: 1, min: 1, importance: 'low', dynamic: RO, doc: 'Length of each client quota rate sample.' },
  'replication.quota.window.num': {
    type: 'int',
    default: 11,
    min: 1,
    importance: 'low',
    dynamic: RO,
    doc: 'Samples kept to measure the replication throttle rates.',
  },
  'replication.quota.window.size.seconds': {
    type: 'int',
    default: 1,
    min: 1,
    importance: 'low',
    dynamic: RO,
    doc: 'Length of each replication throttle rate sample.',
  },
  'num.replica.fetchers': { type: 'int', default: 1, importance: 'high', dynamic: CW, doc: 'Fetcher sessions per source broker.' },
  'replica.high.watermark.checkpoint.interval.ms': {
    type: 'long',
    default: 5000,
    importance: 'high',
    dynamic: RO,
    doc: 'How often high watermarks are checkpointed to disk.',
  },
  'auto.leader.rebalance.enable': {
    type: 'boolean',
    default: true,
    importance: 'high',
    dynamic: RO,
    doc: 'The controller moves leadership back to preferred replicas.',
  },
  'leader.imbalance.per.broker.percentage': {
    type: 'int',
    default: 10,
    importance: 'high',
    dynamic: RO,
    doc: 'Share of non-preferred leaders on a broker that triggers a rebalance.',
  },
  'leader.imbalance.check.interval.seconds': {
    type: 'long',
    default: 300,
    min: 1,
    importance: 'high',
    dynamic: RO,
    doc: 'How often the controller checks leader balance.',
  },
  'unclean.leader.election.enable': {
    type: 'boolean',
    default: false,
    importance: 'high',
    dynamic: CW,
    doc: 'Allow an out-of-sync replica to become leader as a last resort (may lose data).',
  },

  // Controlled shutdown
  'controlled.shutdown.enable': {
    type: 'boolean',
    default: true,
    importance: 'medium',
    dynamic: RO,
    doc: 'Ask the controller to move leadership away before shutting down.',
  },
  'controlled.shutdown.max.retries': {
    type: 'int',
    default: 3,
    importance: 'medium',
    dynamic: RO,
    doc: 'Attempts of a controlled shutdown before shutting down anyway.',
  },
  'controlled.shutdown.retry.backoff.ms': {
    type: 'long',
    default: 5000,
    importance: 'medium',
    dynamic: RO,
    doc: 'Pause between controlled shutdown attempts.',
  },

  // Group coordinator
  'group.min.session.timeout.ms': { type: 'int', default: 6000, importance: 'medium', dynamic: RO, doc: 'Smallest session timeout a consumer may ask for.' },
  'group.max.session.timeout.ms': { type: 'int', default: 1800000, importance: 'medium', dynamic: RO, doc: 'Largest session timeout a consumer may ask for.' },
  'group.initial.rebalance.delay.ms': {
    type: 'int',
    default: 3000,
    importance: 'medium',
    dynamic: RO,
    doc: 'Wait for more members before the first rebalance of an empty group.',
  },
  'group.max.size': { type: 'int', default: INT_MAX, min: 1, importance: 'medium', dynamic: RO, doc: 'Most members of one consumer group.' },

  // Offsets
  'offset.metadata.max.bytes': { type: 'int', default: 4096, importance: 'high', dynamic: RO, doc: 'Largest metadata string of a committed offset.' },
  'offsets.load.buffer.size': {
    type: 'int',
    default: 5242880,
    min: 1,
    importance: 'high',
    dynamic: RO,
    doc: 'Read size when loading offsets into the coordinator cache.',
  },
  'offsets.topic.replication.factor': {
    type: 'short',
    default: 3,
    min: 1,
    importance: 'high',
    dynamic: RO,
    doc: 'Replication factor of __consumer_offsets (creation waits for enough brokers).',
  },
  'offsets.topic.num.partitions': { type: 'int', default: 50, min: 1, importance: 'high', dynamic: RO, doc: 'Partitions of __consumer_offsets.' },
  'offsets.topic.segment.bytes': { type: 'int', default: 104857600, min: 1, importance: 'high', dynamic: RO, doc: 'Segment size of __consumer_offsets.' },
  'offsets.topic.compression.codec': { type: 'int', default: 0, importance: 'high', dynamic: RO, doc: 'Compression codec id of __consumer_offsets batches.' },
  'offsets.retention.minutes': {
    type: 'int',
    default: 10080,
    min: 1,
    importance: 'high',
    dynamic: RO,
    doc: 'How long committed offsets of an empty group are kept.',
  },
  'offsets.retention.check.interval.ms': {
    type: 'long',
    default: 600000,
    min: 1,
    importance: 'high',
    dynamic: RO,
    doc: 'How often stale offsets are looked for.',
  },
  'offsets.commit.timeout.ms': {
    type: 'int',
    default: 5000,
    min: 1,
    importance: 'high',
    dynamic: RO,
    doc: 'How long an offset commit waits for its replication.',
  },
  'offsets.commit.required.acks': {
    type: 'short',
    default: -1,
    importance: 'high',
    dynamic: RO,
    doc: 'acks of offset commits (deprecated in Kafka; keep -1).',
  },

  // Transactions (the transaction coordinator)
  'transaction.abort.timed.out.transaction.cleanup.interval.ms': {
    type: 'int',
    default: 10000,
    min: 1,
    importance: 'low',
    dynamic: RO,
    doc: 'How often the coordinator aborts transactions past their timeout.',
  },
  'transaction.remove.expired.transaction.cleanup.interval.ms': {
    type: 'int',
    default: 3600000,
    min: 1,
    importance: 'low',
    dynamic: RO,
    doc: 'How often the coordinator removes transactional ids past transactional.id.expiration.ms.',
  },
  'transactional.id.expiration.ms': {
    type: 'int',
    default: 604800000,
    min: 1,
    importance: 'high',
    dynamic: RO,
    doc: 'Idle time after which a transactional id expires.',
  },
  'transaction.max.timeout.ms': {
    type: 'int',
    default: 900000,
    min: 1,
    importance: 'high',
    dynamic: RO,
    doc: 'Largest transaction timeout a producer may ask for.',
  },
  'transaction.state.log.min.isr': { type: 'int', default: 2, min: 1, importance: 'high', dynamic: RO, doc: 'min.insync.replicas of __transaction_state.' },
  'transaction.state.log.load.buffer.size': {
    type: 'int',
    default: 5242880,
    min: 1,
    importance: 'high',
    dynamic: RO,
    doc: 'Read size when loading transaction state.',
  },
  'transaction.state.log.replication.factor': {
    type: 'short',
    default: 3,
    min: 1,
    importance: 'high',
    dynamic: RO,
    doc: 'Replication factor of __transaction_state.',
  },
  'transaction.state.log.num.partitions': { type: 'int', default: 50, min: 1, importance: 'high', dynamic: RO, doc: 'Partitions of __transaction_state.' },
  'transaction.state.log.segment.bytes': {
    type: 'int',
    default: 104857600,
    min: 1,
    importance: 'high',
    dynamic: RO,
    doc: 'Segment size of __transaction_state.',
  },

  // Fetch
  'fetch.max.bytes': { type: 'int', default: 57671680, min: 1024, importance: 'medium', dynamic: RO, doc: 'Most bytes returned by one consumer fetch.' },
  'max.incremental.fetch.session.cache.slots': {
    type: 'int',
    default: 1000,
    min: 0,
    importance: 'medium',
    dynamic: RO,
    doc: 'The maximum number of incremental fetch sessions that we will maintain.',
  },

  // Security: TLS, SASL, the authorizer
  ...SSL_CONFIGS,
  ...SASL_CONFIGS,
  ...AUTHORIZER_CONFIGS,

  // Samsa
  'metrics.port': {
    type: 'int',
    default: -1,
    min: -1,
    max: 65535,
    importance: 'low',
    dynamic: RO,
    samsa: 'extension',
    doc: 'Port of the HTTP endpoint serving /metrics (Prometheus), /health and /ready; -1 or 0 disables it.',
  },
  'metrics.host': {
    type: 'string',
    default: '',
    importance: 'low',
    dynamic: RO,
    samsa: 'extension',
    doc: 'Interface the metrics endpoint binds to; empty means all interfaces.',
  },
  'state.change.log.file': {
    type: 'string',
    default: null,
    importance: 'low',
    dynamic: RO,
    samsa: 'extension',
    doc: "File the state-change logger (Kafka's log4j state.change.logger) writes to; unset writes it to the main log with logger=state.change.logger.",
  },
  'console.port': {
    type: 'int',
    default: null,
    min: 0,
    max: 65535,
    importance: 'low',
    dynamic: RO,
    samsa: 'extension',
    doc: 'Port of the web console; unset disables it.',
  },
} as const satisfies Record<string, ConfigDef>);

export type BrokerConfigDefs = typeof BROKER_CONFIGS;
export type BrokerConfigName = keyof BrokerConfigDefs;
/** The decoded value type of a broker config. */
export type BrokerConfigValue<K extends BrokerConfigName> = ValueOfDef<BrokerConfigDefs[K]>;

export const BROKER_CONFIG_NAMES: readonly BrokerConfigName[] = Object.freeze(Object.keys(BROKER_CONFIGS) as BrokerConfigName[]);

export function isBrokerConfigName(name: string): name is BrokerConfigName {
  return Object.prototype.hasOwnProperty.call(BROKER_CONFIGS, name);
}

/** The definition of a broker config, widened to `ConfigDef`. */
export function brokerConfigDef(name: BrokerConfigName): ConfigDef {
  return BROKER_CONFIGS[name];
}

/**
 * Synonym groups Kafka reports for broker configs (`DynamicBrokerConfig.brokerConfigSynonyms`):
 * the config itself first, then the configs it falls back to.
 */
export function brokerConfigSynonyms(name: BrokerConfigName): readonly BrokerConfigName[] {
  switch (name) {
    case 'log.roll.ms':
    case 'log.roll.hours':
      return ['log.roll.ms', 'log.roll.hours'];
    case 'log.roll.jitter.ms':
    case 'log.roll.jitter.hours':
      return ['log.roll.jitter.ms', 'log.roll.jitter.hours'];
    case 'log.flush.interval.ms':
      return ['log.flush.interval.ms', 'log.flush.scheduler.interval.ms'];
    case 'log.retention.ms':
    case 'log.retention.minutes':
    case 'log.retention.hours':
      return ['log.retention.ms', 'log.retention.minutes', 'log.retention.hours'];
    default:
      return [name];
  }
}
