import {
  API_KEYS,
  ErrorCode,
  KafkaError,
  topicPartitionKey,
  uuidToBase64,
  ZERO_UUID,
  type AclBinding,
  type AclBindingFilter,
  type ApiKey,
  type ApiResponseMap,
  type CreateTopicsRequestCreatableTopic,
  type DescribeConfigsResponseResourceResult,
  type MetadataResponseTopic,
  type TopicPartition,
} from '@samsa/protocol';
import { Cluster, type BrokerNode } from './cluster.js';
import type { Connection, Response } from './connection.js';
import { BatchError, brokerError } from './errors.js';
import * as groups from './admin-groups.js';
import * as records from './admin-records.js';
import * as quotas from './admin-quotas.js';
import * as scram from './admin-scram.js';
import * as acls from './admin-acls.js';
import * as txns from './admin-transactions.js';

export * from './admin-types.js';
import {
  INTERNAL_TOPICS,
  ZERO_TOPIC_ID,
  type OperationOptions,
  type ListTopicsOptions,
  type TopicDescription,
  type NewTopic,
  type CreateTopicsOptions,
  type CreatedTopic,
  type NewPartitions,
  type CreatePartitionsOptions,
  type ClusterDescription,
  ConfigResourceType,
  ConfigSource,
  type ConfigResource,
  type ConfigEntry,
  type ConfigResourceResult,
  type DescribeConfigsOptions,
  type PartitionReassignment,
  ElectionType,
  type ElectionResult,
  type AdminOptions,
} from './admin-types.js';

// ---- admin ------------------------------------------------------------------------------

/** IncrementalAlterConfigs operation codes. */
const CONFIG_OPS = { SET: 0, DELETE: 1, APPEND: 2, SUBTRACT: 3 } as const;

/**
 * Kafka's AdminClient for topics and cluster metadata. Requests that only the controller serves
 * (CreateTopics, DeleteTopics, CreatePartitions, ElectLeaders, Alter/ListPartitionReassignments) go to the controller
 * and are retried against the new one on NOT_CONTROLLER; every operation retries retriable failures
 * until its deadline. Per-topic failures are KafkaErrors (Kafka's error names and the broker's
 * messages) collected in a BatchError; an API the broker does not advertise fails with
 * UnsupportedApiError naming it.
 */
export class Admin {
  readonly cluster: Cluster;
  private readonly ownsCluster: boolean;

  constructor(opts: AdminOptions | { cluster: Cluster }) {
    if ('cluster' in opts) {
      this.cluster = opts.cluster;
      this.ownsCluster = false;
    } else {
      this.cluster = new Cluster(opts);
      this.ownsCluster = true;
    }
  }

  /** Closes the connections (when this Admin created the Cluster). */
  async close(): Promise<void> {
    if (this.ownsCluster) await this.cluster.close();
  }

  /** Topic names, sorted. */
  async listTopics(opts: ListTopicsOptions = {}): Promise<string[]> {
    const res = await this.cluster.retry('listTopics', () => this.cluster.fetchMetadata(null), opts);
    const names: string[] = [];
    for (const t of res.body.topics) {
      if (t.name === null) continue;
      if (!opts.listInternal && isInternal(t, res.version)) continue;
      names.push(t.name);
    }
    return names.sort();
  }

  /** Descriptions in the order asked; rejects with BatchError if any topic failed (e.g. UNKNOWN_TOPIC_OR_PARTITION). */
  async describeTopics(names: readonly string[], opts: OperationOptions = {}): Promise<TopicDescription[]> {
    const wanted = [...new Set(names)];
    const errors = new Map<string, KafkaError>();
    const valid = wanted.filter((n) => {
      if (n.length > 0) return true;
      errors.set(n, new KafkaError('INVALID_TOPIC_EXCEPTION', "Topic name is illegal, it can't be empty"));
      return false;
    });
    const out: TopicDescription[] = [];
    if (valid.length > 0) {
      const res = await this.cluster.retry('describeTopics', () => this.cluster.fetchMetadata(valid), opts);
      const live = new Set(res.body.brokers.map((b) => b.nodeId));
      const byName = new Map(res.body.topics.map((t) => [t.name, t]));
      for (const name of valid) {
        const t = byName.get(name);
        if (!t) errors.set(name, new KafkaError('UNKNOWN_TOPIC_OR_PARTITION', `Topic '${name}' is not in the Metadata response`));
        else if (t.errorCode !== ErrorCode.NONE) errors.set(name, topicError(t.errorCode, name));
        else out.push(toDescription(t, res.version, live));
      }
    }
    if (errors.size > 0)
      throw new BatchError(
        'describeTopics',
        errors,
        out.map((d) => d.name),
      );
    return out;
  }

  /** Creates topics on the controller. Rejects with BatchError (per-topic KafkaErrors) if any failed. */
  async createTopics(topics: readonly NewTopic[], opts: CreateTopicsOptions = {}): Promise<CreatedTopic[]> {
    const names = topics.map((t) => t.name);
    const dup = names.find((n, i) => names.indexOf(n) !== i);
    if (dup !== undefined) throw new TypeError(`Duplicate topic name in createTopics: ${dup}`);
    const timeoutMs = opts.timeoutMs ?? this.cluster.defaultApiTimeoutMs;
    const creatable = topics.map(toCreatable);
    // -1 (broker defaults) needs v4 (KIP-464); validateOnly needs v1
    const usesDefaults = creatable.some((t) => t.assignments.length === 0 && (t.numPartitions === -1 || t.replicationFactor === -1));
    const minVersion = Math.max(usesDefaults ? 4 : 0, opts.validateOnly ? 1 : 0);
    const res = await this.controllerCall(
      'createTopics',
      timeoutMs,
      (conn) =>
        conn.request(
          API_KEYS.CreateTopics,
          { topics: creatable, timeoutMs, validateOnly: opts.validateOnly ?? false },
          { minVersion, timeoutMs: this.requestTimeout(timeoutMs) },
        ),
      (body) => body.topics.map((t) => t.errorCode),
    );
    const errors = new Map<string, KafkaError>();
    const created: CreatedTopic[] = [];
    const byName = new Map(res.body.topics.map((t) => [t.name, t]));
    for (const name of names) {
      const t = byName.get(name);
      if (!t) errors.set(name, new KafkaError('UNKNOWN_SERVER_ERROR', `The CreateTopics response has no result for topic '${name}'`));
      else if (t.errorCode !== ErrorCode.NONE) errors.set(name, brokerError(t.errorCode, t.errorMessage));
      else {
        created.push({
          name,
          topicId: res.version >= 7 ? uuidToBase64(t.topicId) : ZERO_TOPIC_ID,
          numPartitions: res.version >= 5 ? t.numPartitions : -1,
          replicationFactor: res.version >= 5 ? t.replicationFactor : -1,
          configs:
            res.version >= 5 && t.configs
              ? t.configs.map((c) => ({ name: c.name, value: c.value, readOnly: c.readOnly, source: c.configSource, isSensitive: c.isSensitive }))
              : null,
        });
      }
    }
    if (errors.size > 0)
      throw new BatchError(
        'createTopics',
        errors,
        created.map((c) => c.name),
      );
    return created;
  }

  /** Deletes topics (by name) on the controller. Rejects with BatchError if any failed. */
  async deleteTopics(names: readonly string[], opts: OperationOptions = {}): Promise<void> {
    const topics = [...new Set(names)];
    const timeoutMs = opts.timeoutMs ?? this.cluster.defaultApiTimeoutMs;
    const res = await this.controllerCall(
      'deleteTopics',
      timeoutMs,
      (conn) =>
        conn.request(
          API_KEYS.DeleteTopics,
          (v) => ({
            topics: v >= 6 ? topics.map((name) => ({ name, topicId: ZERO_UUID })) : [],
            topicNames: v < 6 ? topics : [],
            timeoutMs,
          }),
          { timeoutMs: this.requestTimeout(timeoutMs) },
        ),
      (body) => body.responses.map((r) => r.errorCode),
    );
    const errors = new Map<string, KafkaError>();
    const byName = new Map(res.body.responses.map((r) => [r.name, r]));
    for (const name of topics) {
      const r = byName.get(name);
      if (!r) errors.set(name, new KafkaError('UNKNOWN_SERVER_ERROR', `The DeleteTopics response has no result for topic '${name}'`));
      else if (r.errorCode !== ErrorCode.NONE) errors.set(name, r.errorMessage ? brokerError(r.errorCode, r.errorMessage) : topicError(r.errorCode, name));
    }
    if (errors.size > 0)
      throw new BatchError(
        'deleteTopics',
        errors,
        topics.filter((t) => !errors.has(t)),
      );
  }

  /** Increases partition counts on the controller. Rejects with BatchError if any topic failed. */
  async createPartitions(newPartitions: readonly NewPartitions[], opts: CreatePartitionsOptions = {}): Promise<void> {
    const timeoutMs = opts.timeoutMs ?? this.cluster.defaultApiTimeoutMs;
    const topics = newPartitions.map((p) => ({
      name: p.topic,
      count: p.count,
      assignments: p.assignments ? p.assignments.map((brokerIds) => ({ brokerIds: [...brokerIds] })) : null,
    }));
    const res = await this.controllerCall(
      'createPartitions',
      timeoutMs,
      (conn) =>
        conn.request(API_KEYS.CreatePartitions, { topics, timeoutMs, validateOnly: opts.validateOnly ?? false }, { timeoutMs: this.requestTimeout(timeoutMs) }),
      (body) => body.results.map((r) => r.errorCode),
    );
    const errors = new Map<string, KafkaError>();
    const byName = new Map(res.body.results.map((r) => [r.name, r]));
    for (const { name } of topics) {
      const r = byName.get(name);
      if (!r) errors.set(name, new KafkaError('UNKNOWN_SERVER_ERROR', `The CreatePartitions response has no result for topic '${name}'`));
      else if (r.errorCode !== ErrorCode.NONE) errors.set(name, r.errorMessage ? brokerError(r.errorCode, r.errorMessage) : topicError(r.errorCode, name));
    }
    if (errors.size > 0)
      throw new BatchError(
        'createPartitions',
        errors,
        topics.map((t) => t.name).filter((t) => !errors.has(t)),
      );
  }

  /** Brokers, controller and cluster id: DescribeCluster when advertised, Metadata otherwise. */
  async describeCluster(opts: OperationOptions = {}): Promise<ClusterDescription> {
    return this.cluster.retry(
      'describeCluster',
      async () => {
        const conn = await this.cluster.anyConnection();
        if (conn.supports(API_KEYS.DescribeCluster)) {
          const body = await conn.send(API_KEYS.DescribeCluster, { includeClusterAuthorizedOperations: false, endpointType: 1 });
          if (body.errorCode !== ErrorCode.NONE) throw brokerError(body.errorCode, body.errorMessage);
          const brokers = body.brokers.map((b) => ({ nodeId: b.brokerId, host: b.host, port: b.port, rack: b.rack })).sort((a, b) => a.nodeId - b.nodeId);
          return describe(body.clusterId, body.controllerId, brokers);
        }
        const res = await this.cluster.fetchMetadata([]);
        const brokers = res.body.brokers.map((b) => ({ nodeId: b.nodeId, host: b.host, port: b.port, rack: b.rack })).sort((a, b) => a.nodeId - b.nodeId);
        return describe(res.body.clusterId, res.body.controllerId, brokers);
      },
      opts,
    );
  }

  /**
   * Configs of topics and brokers. Topic resources go to any broker, broker resources to that
   * broker. Rejects with BatchError (keyed by resource name) if any resource failed.
   */
  async describeConfigs(resources: readonly ConfigResource[], opts: DescribeConfigsOptions = {}): Promise<ConfigResourceResult[]> {
    const byTarget = new Map<number | 'any', ConfigResource[]>();
    for (const r of resources) {
      let key: number | 'any' = 'any';
      if (r.type === ConfigResourceType.Broker || r.type === ConfigResourceType.BrokerLogger) {
        // "" is the cluster-wide default (any broker answers)
        key = r.name === '' ? 'any' : Number(r.name);
        if (key !== 'any' && !Number.isInteger(key))
          throw new TypeError(`Broker config resource name must be a broker id or "", got ${JSON.stringify(r.name)}`);
      }
      const g = byTarget.get(key) ?? [];
      g.push(r);
      byTarget.set(key, g);
    }
    const results = new Map<string, ConfigResourceResult>();
    const errors = new Map<string, KafkaError>();
    await Promise.all(
      [...byTarget].map(async ([target, group]) => {
        const res = await this.cluster.retry(
          'describeConfigs',
          async () => {
            const conn = target === 'any' ? await this.cluster.anyConnection() : await this.cluster.connectionTo(target);
            return conn.request(
              API_KEYS.DescribeConfigs,
              {
                resources: group.map((r) => ({ resourceType: r.type, resourceName: r.name, configurationKeys: r.configNames ? [...r.configNames] : null })),
                includeSynonyms: opts.includeSynonyms ?? false,
                includeDocumentation: opts.includeDocumentation ?? false,
              },
              { minVersion: opts.includeDocumentation ? 3 : opts.includeSynonyms ? 1 : 0 },
            );
          },
          opts,
        );
        for (const r of res.body.results) {
          const key = `${r.resourceType}:${r.resourceName}`;
          if (r.errorCode !== ErrorCode.NONE) errors.set(r.resourceName, brokerError(r.errorCode, r.errorMessage));
          else {
            results.set(key, {
              type: r.resourceType as ConfigResourceType,
              name: r.resourceName,
              entries: r.configs.map((c) => toConfigEntry(c, res.version, r.resourceType)),
            });
          }
        }
      }),
    );
    const out: ConfigResourceResult[] = [];
    for (const r of resources) {
      const got = results.get(`${r.type}:${r.name}`);
      if (got) out.push(got);
      else if (!errors.has(r.name)) errors.set(r.name, new KafkaError('UNKNOWN_SERVER_ERROR', `The DescribeConfigs response has no result for ${r.name}`));
    }
    if (errors.size > 0)
      throw new BatchError(
        'describeConfigs',
        errors,
        out.map((r) => r.name),
      );
    return out;
  }

  /**
   * Leader elections (KIP-460) run by the controller: PREFERRED moves leadership to each partition's
   * first replica, UNCLEAN elects any live replica for partitions without a leader. `partitions`
   * null means every partition (the controller reports those it acted on). Per-partition outcomes
   * come back as results (sorted by topic, partition), not as a rejection; a request-level error
   * (other than NOT_CONTROLLER, which is retried against the new controller) rejects with its
   * KafkaError.
   */
  async electLeaders(partitions: readonly TopicPartition[] | null, electionType: ElectionType, opts: OperationOptions = {}): Promise<ElectionResult[]> {
    if (electionType !== ElectionType.PREFERRED && electionType !== ElectionType.UNCLEAN) throw new TypeError(`Unknown election type ${String(electionType)}`);
    const timeoutMs = opts.timeoutMs ?? this.cluster.defaultApiTimeoutMs;
    let topicPartitions: Array<{ topic: string; partitions: number[] }> | null = null;
    if (partitions !== null) {
      const byTopic = new Map<string, Set<number>>();
      for (const { topic, partition } of partitions) {
        const set = byTopic.get(topic) ?? new Set<number>();
        set.add(partition);
        byTopic.set(topic, set);
      }
      topicPartitions = [...byTopic].map(([topic, ps]) => ({ topic, partitions: [...ps] }));
    }
    // v0 can only ask for preferred elections (electionType is v1+)
    const minVersion = electionType === ElectionType.UNCLEAN ? 1 : 0;
    const res = await this.controllerCall(
      'electLeaders',
      timeoutMs,
      (conn) => conn.request(API_KEYS.ElectLeaders, { electionType, topicPartitions, timeoutMs }, { minVersion, timeoutMs: this.requestTimeout(timeoutMs) }),
      (body) => [body.errorCode, ...body.replicaElectionResults.flatMap((t) => t.partitionResult.map((p) => p.errorCode))],
    );
    if (res.version >= 1 && res.body.errorCode !== ErrorCode.NONE) throw brokerError(res.body.errorCode, null);
    const out: ElectionResult[] = [];
    for (const t of res.body.replicaElectionResults) {
      for (const p of t.partitionResult) {
        out.push({ topic: t.topic, partition: p.partitionId, error: p.errorCode === ErrorCode.NONE ? null : brokerError(p.errorCode, p.errorMessage) });
      }
    }
    return out.sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition));
  }

  /** Ongoing reassignments (all, or of the given partitions), from the controller. */
  async listPartitionReassignments(
    partitions: ReadonlyArray<{ topic: string; partitions: readonly number[] }> | null = null,
    opts: OperationOptions = {},
  ): Promise<PartitionReassignment[]> {
    const timeoutMs = opts.timeoutMs ?? this.cluster.defaultApiTimeoutMs;
    const res = await this.controllerCall(
      'listPartitionReassignments',
      timeoutMs,
      (conn) =>
        conn.request(
          API_KEYS.ListPartitionReassignments,
          { timeoutMs, topics: partitions ? partitions.map((p) => ({ name: p.topic, partitionIndexes: [...p.partitions] })) : null },
          { timeoutMs: this.requestTimeout(timeoutMs) },
        ),
      (body) => [body.errorCode],
    );
    if (res.body.errorCode !== ErrorCode.NONE) throw brokerError(res.body.errorCode, res.body.errorMessage);
    return res.body.topics.flatMap((t) =>
      t.partitions.map((p) => ({
        topic: t.name,
        partition: p.partitionIndex,
        replicas: p.replicas,
        addingReplicas: p.addingReplicas,
        removingReplicas: p.removingReplicas,
      })),
    );
  }

  // ---- consumer groups and offsets (admin-groups.ts) ---------------------------------------

  /** Groups of every broker, merged, sorted by id (optionally only in `states`). */
  listGroups(opts?: groups.ListGroupsOptions): Promise<groups.GroupListing[]> {
    return groups.listGroups(this.cluster, opts);
  }

  /** Describes groups via their coordinators; consumer members with decoded assignments. BatchError on failures. */
  describeGroups(groupIds: readonly string[], opts?: OperationOptions): Promise<groups.GroupDescription[]> {
    return groups.describeGroups(this.cluster, groupIds, opts);
  }

  /** A group's committed offsets (of `partitions`, or all when null). */
  listGroupOffsets(groupId: string, partitions?: readonly TopicPartition[] | null, opts?: OperationOptions): Promise<groups.CommittedOffset[]> {
    return groups.listGroupOffsets(this.cluster, groupId, partitions ?? null, opts);
  }

  /** Commits offsets for an inactive group (generation -1, no member id), as Kafka's admin. */
  alterGroupOffsets(groupId: string, offsets: readonly groups.NewCommittedOffset[], opts?: OperationOptions): Promise<void> {
    return groups.alterGroupOffsets(this.cluster, groupId, offsets, opts);
  }

  /** Deletes Empty groups. BatchError (by group id) on failures. */
  deleteGroups(groupIds: readonly string[], opts?: OperationOptions): Promise<void> {
    return groups.deleteGroups(this.cluster, groupIds, opts);
  }

  /** Deletes a group's committed offsets (OffsetDelete); per-partition outcomes. */
  deleteGroupOffsets(groupId: string, partitions: readonly TopicPartition[], opts?: OperationOptions): Promise<groups.PartitionResult[]> {
    return groups.deleteGroupOffsets(this.cluster, groupId, partitions, opts);
  }

  /** Earliest / latest / by-timestamp offsets from the partition leaders. */
  listOffsets(requests: readonly groups.ListOffsetsRequest[], opts?: OperationOptions): Promise<groups.ListedOffset[]> {
    return groups.listOffsets(this.cluster, requests, opts);
  }

  /** AlterClientQuotas (admin-quotas.ts): set or remove (null) quota keys of user / client-id / ip entities. */
  alterClientQuotas(alterations: readonly quotas.ClientQuotaAlteration[], opts?: OperationOptions & { validateOnly?: boolean }): Promise<void> {
    return quotas.alterClientQuotas(this.cluster, alterations, opts);
  }

  /** DescribeClientQuotas (admin-quotas.ts): the quota entities matching the filter and their values. */
  describeClientQuotas(
    components: readonly quotas.ClientQuotaFilterComponent[],
    opts?: OperationOptions & { strict?: boolean },
  ): Promise<quotas.DescribedClientQuota[]> {
    return quotas.describeClientQuotas(this.cluster, components, opts);
  }

  /** AlterUserScramCredentials on the controller (admin-scram.ts): upsert (password) or delete SCRAM credentials. */
  alterUserScramCredentials(alterations: readonly scram.UserScramCredentialAlteration[], opts?: OperationOptions): Promise<void> {
    return scram.alterUserScramCredentials(this.cluster, alterations, opts);
  }

  /** DescribeUserScramCredentials (admin-scram.ts): mechanisms and iterations per user. */
  describeUserScramCredentials(users?: readonly string[], opts?: OperationOptions): Promise<scram.UserScramCredentialsDescription[]> {
    return scram.describeUserScramCredentials(this.cluster, users, opts);
  }

  /** CreateAcls (admin-acls.ts); rejects with a BatchError naming each binding that failed. */
  createAcls(bindings: readonly AclBinding[], opts?: OperationOptions): Promise<void> {
    return acls.createAcls(this.cluster, bindings, opts);
  }

  /** DescribeAcls (admin-acls.ts): the ACLs matching the filter. */
  describeAcls(filter: AclBindingFilter, opts?: OperationOptions): Promise<AclBinding[]> {
    return acls.describeAcls(this.cluster, filter, opts);
  }

  /** DeleteAcls (admin-acls.ts): per filter, the ACLs deleted. */
  deleteAcls(filters: readonly AclBindingFilter[], opts?: OperationOptions): Promise<AclBinding[][]> {
    return acls.deleteAcls(this.cluster, filters, opts);
  }

  /** DeleteRecords to each partition's leader (admin-records.ts); per-partition outcomes. */
  deleteRecords(
    entries: readonly records.DeleteRecordsRequestEntry[],
    opts?: OperationOptions & { operationTimeoutMs?: number },
  ): Promise<records.DeleteRecordsResult[]> {
    return records.deleteRecords(this.cluster, entries, opts);
  }

  // ---- transactions (admin-transactions.ts, KIP-664) -----------------------------------------

  /** The transactions each broker coordinates (ListTransactions to every broker), by broker id. */
  listTransactions(opts?: txns.ListTransactionsOptions): Promise<txns.TransactionListing[]> {
    return txns.listTransactions(this.cluster, opts);
  }

  /** Describes transactional ids via their coordinators (FindCoordinator key type 1). BatchError on failures. */
  describeTransactions(transactionalIds: readonly string[], opts?: OperationOptions): Promise<txns.TransactionDescription[]> {
    return txns.describeTransactions(this.cluster, transactionalIds, opts);
  }

  /** The active producers of partitions, from their leaders or one given broker. BatchError on failures. */
  describeProducers(partitions: readonly TopicPartition[], opts?: txns.DescribeProducersOptions): Promise<txns.PartitionProducerState[]> {
    return txns.describeProducers(this.cluster, partitions, opts);
  }

  /** Ends a partition's open (hanging) transaction with an ABORT marker written by its leader (WriteTxnMarkers). */
  abortTransaction(spec: txns.AbortTransactionSpec, opts?: OperationOptions): Promise<void> {
    return txns.abortTransaction(this.cluster, spec, opts);
  }

  // ---- partition reassignment and configs ---------------------------------------------------

  /**
   * Starts (replicas) or cancels (null) partition reassignments on the controller (KIP-455). The
   * returned map has an entry per partition the controller refused (e.g. INVALID_REPLICA_ASSIGNMENT,
   * NO_REASSIGNMENT_IN_PROGRESS); accepted ones are absent. A request-level error rejects.
   */
  async alterPartitionReassignments(
    reassignments: ReadonlyArray<{ topic: string; partition: number; replicas: readonly number[] | null }>,
    opts: OperationOptions = {},
  ): Promise<Map<string, KafkaError>> {
    const timeoutMs = opts.timeoutMs ?? this.cluster.defaultApiTimeoutMs;
    const byTopic = new Map<string, Array<{ partitionIndex: number; replicas: number[] | null }>>();
    for (const r of reassignments) {
      const list = byTopic.get(r.topic) ?? [];
      list.push({ partitionIndex: r.partition, replicas: r.replicas === null ? null : [...r.replicas] });
      byTopic.set(r.topic, list);
    }
    const topics = [...byTopic].map(([name, partitions]) => ({ name, partitions }));
    const res = await this.controllerCall(
      'alterPartitionReassignments',
      timeoutMs,
      (conn) =>
        conn.request(
          API_KEYS.AlterPartitionReassignments,
          { timeoutMs, allowReplicationFactorChange: true, topics },
          { timeoutMs: this.requestTimeout(timeoutMs) },
        ),
      (body) => [body.errorCode],
    );
    if (res.body.errorCode !== ErrorCode.NONE) throw brokerError(res.body.errorCode, res.body.errorMessage);
    const errors = new Map<string, KafkaError>();
    for (const t of res.body.responses) {
      for (const p of t.partitions)
        if (p.errorCode !== ErrorCode.NONE) errors.set(topicPartitionKey(t.name, p.partitionIndex), brokerError(p.errorCode, p.errorMessage));
    }
    return errors;
  }

  /**
   * IncrementalAlterConfigs (KIP-339): SET (value) or DELETE (null) — or an explicit op, APPEND /
   * SUBTRACT for list configs — config entries of topics and
   * brokers. Broker resources go to that broker (an empty name is the cluster default), topic
   * resources to any broker. Rejects with BatchError (keyed by resource name) if any failed.
   */
  async incrementalAlterConfigs(
    resources: ReadonlyArray<{
      type: ConfigResourceType;
      name: string;
      configs: ReadonlyArray<{ name: string; value: string | null; op?: 'SET' | 'DELETE' | 'APPEND' | 'SUBTRACT' }>;
    }>,
    opts: OperationOptions = {},
  ): Promise<void> {
    const byTarget = new Map<number | 'any', (typeof resources)[number][]>();
    for (const r of resources) {
      const key = r.type === ConfigResourceType.Broker && r.name !== '' ? Number(r.name) : 'any';
      const g = byTarget.get(key) ?? [];
      g.push(r);
      byTarget.set(key, g);
    }
    const errors = new Map<string, KafkaError>();
    await Promise.all(
      [...byTarget].map(async ([target, group]) => {
        const res = await this.cluster.retry(
          'incrementalAlterConfigs',
          async () => {
            const conn = target === 'any' ? await this.cluster.anyConnection() : await this.cluster.connectionTo(target);
            return conn.request(API_KEYS.IncrementalAlterConfigs, {
              resources: group.map((r) => ({
                resourceType: r.type,
                resourceName: r.name,
                configs: r.configs.map((c) => ({
                  name: c.name,
                  configOperation: c.op !== undefined ? CONFIG_OPS[c.op] : c.value === null ? 1 : 0,
                  value: c.value,
                })),
              })),
              validateOnly: false,
            });
          },
          opts,
        );
        for (const r of res.body.responses) if (r.errorCode !== ErrorCode.NONE) errors.set(r.resourceName, brokerError(r.errorCode, r.errorMessage));
      }),
    );
    if (errors.size > 0)
      throw new BatchError(
        'incrementalAlterConfigs',
        errors,
        resources.map((r) => r.name).filter((n) => !errors.has(n)),
      );
  }

  /**
   * AlterConfigs (the legacy, non-incremental API Kafka's AdminClient still has as alterConfigs):
   * replaces the whole dynamic config set of each resource with `configs` (entries left out are
   * removed). Routed like incrementalAlterConfigs; rejects with BatchError if any resource failed.
   */
  async alterConfigs(
    resources: ReadonlyArray<{ type: ConfigResourceType; name: string; configs: ReadonlyArray<{ name: string; value: string | null }> }>,
    opts: OperationOptions & { validateOnly?: boolean } = {},
  ): Promise<void> {
    const byTarget = new Map<number | 'any', (typeof resources)[number][]>();
    for (const r of resources) {
      const key = r.type === ConfigResourceType.Broker && r.name !== '' ? Number(r.name) : 'any';
      byTarget.set(key, [...(byTarget.get(key) ?? []), r]);
    }
    const errors = new Map<string, KafkaError>();
    await Promise.all(
      [...byTarget].map(async ([target, group]) => {
        const res = await this.cluster.retry(
          'alterConfigs',
          async () => {
            const conn = target === 'any' ? await this.cluster.anyConnection() : await this.cluster.connectionTo(target);
            return conn.request(API_KEYS.AlterConfigs, {
              resources: group.map((r) => ({ resourceType: r.type, resourceName: r.name, configs: r.configs.map((c) => ({ name: c.name, value: c.value })) })),
              validateOnly: opts.validateOnly ?? false,
            });
          },
          opts,
        );
        for (const r of res.body.responses) if (r.errorCode !== ErrorCode.NONE) errors.set(r.resourceName, brokerError(r.errorCode, r.errorMessage));
      }),
    );
    if (errors.size > 0)
      throw new BatchError(
        'alterConfigs',
        errors,
        resources.map((r) => r.name).filter((n) => !errors.has(n)),
      );
  }

  // ---- internals ------------------------------------------------------------------------

  /** Per-request timeout for a request carrying a server-side `timeoutMs`. */
  private requestTimeout(serverTimeoutMs: number): number {
    return Math.max(this.cluster.requestTimeoutMs, serverTimeoutMs + 5_000);
  }

  /**
   * Sends to the controller, with retries. A response whose error codes include NOT_CONTROLLER
   * (the controller moved) is thrown as retriable so the call goes to the new controller.
   */
  private controllerCall<K extends ApiKey>(
    operation: string,
    timeoutMs: number,
    send: (conn: Connection) => Promise<Response<K>>,
    codes: (body: ApiResponseMap[K]) => number[],
  ): Promise<Response<K>> {
    return this.cluster.retry(
      operation,
      async () => {
        const conn = await this.cluster.controllerConnection();
        const res = await send(conn);
        if (codes(res.body).includes(ErrorCode.NOT_CONTROLLER)) {
          this.cluster.invalidateController();
          throw new KafkaError('NOT_CONTROLLER', `Broker ${conn.describe()} is not the controller`);
        }
        return res;
      },
      { timeoutMs },
    );
  }
}

function describe(clusterId: string | null, controllerId: number, brokers: BrokerNode[]): ClusterDescription {
  return { clusterId, controllerId, controller: brokers.find((b) => b.nodeId === controllerId) ?? null, brokers };
}

function isInternal(t: MetadataResponseTopic, version: number): boolean {
  return version >= 1 ? t.isInternal : t.name !== null && INTERNAL_TOPICS.has(t.name);
}

function topicError(code: number, topic: string): KafkaError {
  if (code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) return new KafkaError(code, `Topic '${topic}' does not exist (UNKNOWN_TOPIC_OR_PARTITION)`);
  return new KafkaError(code);
}

function toDescription(t: MetadataResponseTopic, version: number, liveBrokers: ReadonlySet<number>): TopicDescription {
  return {
    name: t.name!,
    topicId: version >= 10 ? uuidToBase64(t.topicId) : ZERO_TOPIC_ID,
    isInternal: isInternal(t, version),
    partitions: t.partitions
      .map((p) => ({
        partition: p.partitionIndex,
        leader: p.leaderId >= 0 && liveBrokers.has(p.leaderId) ? p.leaderId : null,
        leaderEpoch: version >= 7 ? p.leaderEpoch : -1,
        replicas: p.replicaNodes,
        isr: p.isrNodes,
        offline: version >= 5 ? p.offlineReplicas : [],
      }))
      .sort((a, b) => a.partition - b.partition),
  };
}

function toCreatable(t: NewTopic): CreateTopicsRequestCreatableTopic {
  const assignments: Array<{ partitionIndex: number; brokerIds: number[] }> = [];
  if (t.replicaAssignment) {
    const entries: Array<[number, readonly number[]]> =
      t.replicaAssignment instanceof Map
        ? [...(t.replicaAssignment as ReadonlyMap<number, readonly number[]>)]
        : [...(t.replicaAssignment as ReadonlyArray<readonly number[]>).entries()];
    for (const [partitionIndex, brokerIds] of entries.sort((a, b) => a[0] - b[0])) assignments.push({ partitionIndex, brokerIds: [...brokerIds] });
  }
  const withAssignment = assignments.length > 0;
  return {
    name: t.name,
    numPartitions: withAssignment ? -1 : (t.numPartitions ?? -1),
    replicationFactor: withAssignment ? -1 : (t.replicationFactor ?? -1),
    assignments,
    configs: Object.entries(t.configs ?? {}).map(([name, value]) => ({ name, value })),
  };
}

function toConfigEntry(c: DescribeConfigsResponseResourceResult, version: number, resourceType: number): ConfigEntry {
  // v0 has only isDefault: derive the source as the Java client does
  const source =
    version >= 1
      ? c.configSource
      : c.isDefault
        ? ConfigSource.DefaultConfig
        : resourceType === ConfigResourceType.Topic
          ? ConfigSource.DynamicTopicConfig
          : ConfigSource.StaticBrokerConfig;
  return {
    name: c.name,
    value: c.value,
    source,
    isDefault: source === ConfigSource.DefaultConfig,
    isReadOnly: c.readOnly,
    isSensitive: c.isSensitive,
    synonyms: version >= 1 ? c.synonyms.map((s) => ({ name: s.name, value: s.value, source: s.source })) : [],
    type: version >= 3 ? c.configType : 0,
    documentation: version >= 3 ? c.documentation : null,
  };
}
