/**
 * A scriptable group coordinator and partition log for consumer unit tests, installed on a
 * FakeCluster broker: FindCoordinator (this broker), JoinGroup (KIP-394 MEMBER_ID_REQUIRED for
 * v4+, members gathered for `joinWindowMs`, the first joiner leads), SyncGroup, Heartbeat,
 * LeaveGroup, OffsetCommit / OffsetFetch, ListOffsets and Fetch over in-memory logs. `inject`
 * queues error codes answered instead of the normal response, per API.
 */
import { randomUUID } from 'node:crypto';
import { API_KEYS, encodeRecordBatch, ErrorCode, topicPartitionKey, type RecordInput } from '@samsa/protocol';
import type { FakeCluster } from './fake-cluster.js';

interface Member {
  memberId: string;
  protocols: { name: string; metadata: Buffer }[];
  joined: boolean;
}

type Injectable = 'JoinGroup' | 'SyncGroup' | 'Heartbeat' | 'OffsetCommit' | 'OffsetFetch' | 'FindCoordinator' | 'Fetch';

export class FakeGroup {
  generationId = 0;
  leader = '';
  protocol = '';
  readonly members = new Map<string, Member>();
  readonly assignments = new Map<string, Buffer>();
  readonly committed = new Map<string, bigint>();
  readonly commits: Array<{ generationId: number; memberId: string; offsets: Record<string, bigint> }> = [];
  readonly leaves: string[] = [];
  readonly heartbeats: Array<{ memberId: string; generationId: number }> = [];
  readonly inject: Partial<Record<Injectable, number[]>> = {};
  /** Batches per `topic-partition`: encoded RecordBatch v2 buffers, offsets contiguous from 0. */
  readonly logs = new Map<string, { baseOffset: bigint; buf: Buffer; count: number }[]>();
  joinWindowMs = 30;
  /** Aborted transactions per `topic-partition`, returned to read_committed fetches. */
  readonly aborted = new Map<string, { producerId: bigint; firstOffset: bigint }[]>();
  generationMembers: Member[] = [];
  syncedGeneration = -1;
  private pendingJoin: { timer: NodeJS.Timeout; waiters: Array<() => void> } | undefined;

  constructor(
    private readonly fc: FakeCluster,
    public coordinatorId = 0,
  ) {
    for (const b of fc.brokers) this.install(b.nodeId);
  }

  /** Appends records to a partition log; returns the base offset. */
  append(
    topic: string,
    partition: number,
    records: RecordInput[],
    opts: { compression?: number; transactional?: boolean; producerId?: bigint; control?: boolean } = {},
  ): bigint {
    const key = topicPartitionKey(topic, partition);
    const log = this.logs.get(key) ?? [];
    const base = log.length ? log[log.length - 1]!.baseOffset + BigInt(log[log.length - 1]!.count) : 0n;
    const buf = encodeRecordBatch({
      records,
      baseOffset: base,
      compression: opts.compression as never,
      transactional: opts.transactional,
      producerId: opts.producerId,
      producerEpoch: opts.producerId !== undefined ? 0 : undefined,
      control: opts.control,
    });
    log.push({ baseOffset: base, buf, count: records.length });
    this.logs.set(key, log);
    return base;
  }

  endOffset(topic: string, partition: number): bigint {
    const log = this.logs.get(topicPartitionKey(topic, partition)) ?? [];
    return log.length ? log[log.length - 1]!.baseOffset + BigInt(log[log.length - 1]!.count) : 0n;
  }

  /** Forces a rebalance: the next heartbeats answer REBALANCE_IN_PROGRESS until members rejoin. */
  rebalancing = false;

  private take(api: Injectable): number | undefined {
    return this.inject[api]?.shift();
  }

  private install(nodeId: number): void {
    const b = this.fc.broker(nodeId);
    const isNot = () => nodeId !== this.coordinatorId;
    b.on(API_KEYS.FindCoordinator, (req, ctx) => {
      const code = this.take('FindCoordinator') ?? 0;
      const coordinator = this.fc.broker(this.coordinatorId);
      const node = { nodeId: coordinator.nodeId, host: coordinator.host, port: coordinator.port };
      if (ctx.version >= 4)
        return {
          throttleTimeMs: 0,
          errorCode: 0,
          errorMessage: null,
          nodeId: 0,
          host: '',
          port: 0,
          coordinators: req.coordinatorKeys.map((key) => ({ key, ...node, errorCode: code, errorMessage: null })),
        };
      return { throttleTimeMs: 0, errorCode: code, errorMessage: null, ...node, coordinators: [] };
    });
    const guard = <T>(f: () => T | Promise<T>, err: (code: number) => T) => (isNot() ? err(ErrorCode.NOT_COORDINATOR) : f());
    b.on(API_KEYS.JoinGroup, (req, ctx) => {
      const fail = (code: number, memberId = req.memberId) => ({
        throttleTimeMs: 0,
        errorCode: code,
        generationId: -1,
        protocolType: null,
        protocolName: null,
        leader: '',
        skipAssignment: false,
        memberId,
        members: [],
      });
      return guard(
        async () => {
          const injected = this.take('JoinGroup');
          if (injected !== undefined) return fail(injected);
          if (req.memberId === '' && ctx.version >= 4) {
            const id = `${ctx.clientId ?? 'member'}-${randomUUID()}`;
            this.members.set(id, { memberId: id, protocols: [], joined: false });
            return fail(ErrorCode.MEMBER_ID_REQUIRED, id);
          }
          const memberId = req.memberId || `${ctx.clientId ?? 'member'}-${randomUUID()}`;
          if (req.memberId !== '' && !this.members.has(memberId)) return fail(ErrorCode.UNKNOWN_MEMBER_ID);
          this.members.set(memberId, { memberId, protocols: req.protocols.map((p) => ({ name: p.name, metadata: p.metadata })), joined: true });
          this.rebalancing = true;
          await this.joinBarrier();
          const joined = this.generationMembers;
          return {
            throttleTimeMs: 0,
            errorCode: 0,
            generationId: this.generationId,
            protocolType: 'consumer',
            protocolName: this.protocol,
            leader: this.leader,
            skipAssignment: false,
            memberId,
            members:
              memberId === this.leader
                ? joined.map((m) => ({ memberId: m.memberId, groupInstanceId: null, metadata: m.protocols.find((p) => p.name === this.protocol)!.metadata }))
                : [],
          };
        },
        (c) => fail(c),
      );
    });
    b.on(API_KEYS.SyncGroup, async (req) => {
      const fail = (code: number) => ({ throttleTimeMs: 0, errorCode: code, protocolType: null, protocolName: null, assignment: Buffer.alloc(0) });
      if (isNot()) return fail(ErrorCode.NOT_COORDINATOR);
      const injected = this.take('SyncGroup');
      if (injected !== undefined) return fail(injected);
      if (!this.members.has(req.memberId)) return fail(ErrorCode.UNKNOWN_MEMBER_ID);
      if (req.generationId !== this.generationId) return fail(ErrorCode.ILLEGAL_GENERATION);
      if (req.memberId === this.leader) {
        this.assignments.clear();
        for (const a of req.assignments) this.assignments.set(a.memberId, a.assignment);
        this.syncedGeneration = req.generationId;
        if (!this.pendingJoin) this.rebalancing = false;
      } else {
        // wait for the leader's assignment; a rebalance starting meanwhile answers REBALANCE_IN_PROGRESS, as Kafka does
        for (let i = 0; i < 200 && this.syncedGeneration !== req.generationId; i++) {
          if (this.pendingJoin || this.generationId !== req.generationId) return fail(ErrorCode.REBALANCE_IN_PROGRESS);
          await new Promise((r) => setTimeout(r, 10));
        }
      }
      return {
        throttleTimeMs: 0,
        errorCode: 0,
        protocolType: 'consumer',
        protocolName: this.protocol,
        assignment: this.assignments.get(req.memberId) ?? Buffer.alloc(0),
      };
    });
    b.on(API_KEYS.Heartbeat, (req) => {
      this.heartbeats.push({ memberId: req.memberId, generationId: req.generationId });
      if (isNot()) return { throttleTimeMs: 0, errorCode: ErrorCode.NOT_COORDINATOR };
      const injected = this.take('Heartbeat');
      if (injected !== undefined) return { throttleTimeMs: 0, errorCode: injected };
      if (!this.members.has(req.memberId)) return { throttleTimeMs: 0, errorCode: ErrorCode.UNKNOWN_MEMBER_ID };
      if (req.generationId !== this.generationId) return { throttleTimeMs: 0, errorCode: ErrorCode.ILLEGAL_GENERATION };
      return { throttleTimeMs: 0, errorCode: this.rebalancing ? ErrorCode.REBALANCE_IN_PROGRESS : 0 };
    });
    b.on(API_KEYS.LeaveGroup, (req) => {
      const ids = req.members.length ? req.members.map((m) => m.memberId) : [req.memberId];
      for (const id of ids) {
        this.leaves.push(id);
        this.members.delete(id);
      }
      if (this.members.size > 0) this.rebalancing = true;
      return { throttleTimeMs: 0, errorCode: 0, members: req.members.map((m) => ({ memberId: m.memberId, groupInstanceId: null, errorCode: 0 })) };
    });
    b.on(API_KEYS.OffsetCommit, (req) => {
      const code = isNot()
        ? ErrorCode.NOT_COORDINATOR
        : (this.take('OffsetCommit') ??
          (req.generationIdOrMemberEpoch >= 0 && req.generationIdOrMemberEpoch !== this.generationId ? ErrorCode.ILLEGAL_GENERATION : 0));
      const offsets: Record<string, bigint> = {};
      for (const t of req.topics) for (const p of t.partitions) offsets[topicPartitionKey(t.name, p.partitionIndex)] = p.committedOffset;
      if (code === 0) {
        this.commits.push({ generationId: req.generationIdOrMemberEpoch, memberId: req.memberId, offsets });
        for (const [k, v] of Object.entries(offsets)) this.committed.set(k, v);
      }
      return {
        throttleTimeMs: 0,
        topics: req.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: code })) })),
      };
    });
    b.on(API_KEYS.OffsetFetch, (req, ctx) => {
      const code = isNot() ? ErrorCode.NOT_COORDINATOR : (this.take('OffsetFetch') ?? 0);
      const topicsReq = ctx.version >= 8 ? (req.groups[0]?.topics ?? []) : (req.topics ?? []);
      const topics = topicsReq.map((t) => ({
        name: t.name,
        partitions: t.partitionIndexes.map((p) => ({
          partitionIndex: p,
          committedOffset: this.committed.get(topicPartitionKey(t.name, p)) ?? -1n,
          committedLeaderEpoch: -1,
          metadata: '',
          errorCode: 0,
        })),
      }));
      if (ctx.version >= 8) return { throttleTimeMs: 0, topics: [], errorCode: 0, groups: [{ groupId: req.groups[0]!.groupId, topics, errorCode: code }] };
      return { throttleTimeMs: 0, topics, errorCode: code, groups: [] };
    });
    b.on(API_KEYS.ListOffsets, (req) => ({
      throttleTimeMs: 0,
      topics: req.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({
          partitionIndex: p.partitionIndex,
          errorCode: 0,
          oldStyleOffsets: [],
          timestamp: -1n,
          offset: p.timestamp === -2n ? 0n : this.endOffset(t.name, p.partitionIndex),
          leaderEpoch: 0,
        })),
      })),
    }));
    b.on(API_KEYS.Fetch, async (req) => {
      const injected = this.take('Fetch');
      const answer = () => ({
        throttleTimeMs: 0,
        errorCode: 0,
        sessionId: 0,
        nodeEndpoints: [],
        responses: req.topics.map((t) => ({
          topic: t.topic,
          topicId: t.topicId,
          partitions: t.partitions.map((p) => {
            const log = this.logs.get(topicPartitionKey(t.topic, p.partition)) ?? [];
            const end = this.endOffset(t.topic, p.partition);
            const out = p.fetchOffset > end ? null : Buffer.concat(log.filter((x) => x.baseOffset + BigInt(x.count) > p.fetchOffset).map((x) => x.buf));
            return {
              partitionIndex: p.partition,
              errorCode: injected ?? (p.fetchOffset > end ? ErrorCode.OFFSET_OUT_OF_RANGE : 0),
              highWatermark: end,
              lastStableOffset: end,
              logStartOffset: 0n,
              divergingEpoch: { epoch: -1, endOffset: -1n },
              currentLeader: { leaderId: -1, leaderEpoch: -1 },
              snapshotId: { endOffset: -1n, epoch: -1 },
              abortedTransactions: req.isolationLevel === 1 ? (this.aborted.get(topicPartitionKey(t.topic, p.partition)) ?? []) : null,
              preferredReadReplica: -1,
              records: out,
            };
          }),
        })),
      });
      const first = answer();
      const hasData = first.responses.some((t) => t.partitions.some((p) => p.records && p.records.length > 0));
      if (!hasData && injected === undefined) await new Promise((r) => setTimeout(r, Math.min(req.maxWaitMs, 50)));
      return hasData ? first : answer();
    });
  }

  /** Every member joining within joinWindowMs of the first joins the same generation. */
  private joinBarrier(): Promise<void> {
    return new Promise<void>((resolve) => {
      if (!this.pendingJoin) {
        const waiters: Array<() => void> = [];
        const timer = setTimeout(() => {
          this.pendingJoin = undefined;
          const joined = [...this.members.values()].filter((m) => m.joined);
          // members that did not rejoin are dropped
          for (const [id, m] of this.members) if (!m.joined && m.protocols.length > 0) this.members.delete(id);
          this.generationId++;
          this.generationMembers = joined;
          this.leader = joined[0]!.memberId;
          this.protocol = joined[0]!.protocols.find((p) => joined.every((m) => m.protocols.some((q) => q.name === p.name)))?.name ?? '';
          for (const m of this.members.values()) m.joined = false;
          for (const w of waiters) w();
        }, this.joinWindowMs);
        this.pendingJoin = { timer, waiters };
      }
      this.pendingJoin.waiters.push(resolve);
    });
  }
}
