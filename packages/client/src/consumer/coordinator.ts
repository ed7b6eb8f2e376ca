/**
 * Group membership (Kafka's AbstractCoordinator): finds the group coordinator, joins the group
 * (JoinGroup, with the KIP-394 MEMBER_ID_REQUIRED round trip), runs the leader's assignment and
 * SyncGroup, heartbeats on a timer of its own (heartbeat.ts) and leaves (LeaveGroup) on close,
 * unsubscribe or when max.poll.interval.ms passes without a poll.
 *
 * Error handling follows the Java client: REBALANCE_IN_PROGRESS on a heartbeat → rejoin;
 * UNKNOWN_MEMBER_ID → member id and generation reset, rejoin; ILLEGAL_GENERATION → generation reset
 * (member id kept), rejoin; NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE / lost connections →
 * coordinator unknown, FindCoordinator again; FENCED_INSTANCE_ID, INCONSISTENT_GROUP_PROTOCOL,
 * GROUP_MAX_SIZE_REACHED and the like are fatal and surface from poll().
 *
 * The group requests travel on a connection of their own to the coordinator (like the Java client's
 * separate coordinator node id), so a long-polling Fetch never delays a heartbeat.
 */
import { API_KEYS, ErrorCode, KafkaError, type JoinGroupRequestProtocol, type JoinGroupResponseMember } from '@samsa/protocol';
import type { Cluster } from '../cluster.js';
import { Connection } from '../connection.js';
import { brokerError } from '../errors.js';
import type { Logger } from '../logger.js';
import { findGroupCoordinator } from '../admin-groups.js';
import { Heartbeat, HeartbeatTimer } from './heartbeat.js';

export const MemberState = {
  UNJOINED: 'UNJOINED',
  PREPARING_REBALANCE: 'PREPARING_REBALANCE',
  COMPLETING_REBALANCE: 'COMPLETING_REBALANCE',
  STABLE: 'STABLE',
} as const;
export type MemberState = (typeof MemberState)[keyof typeof MemberState];

export interface Generation {
  generationId: number;
  memberId: string;
  protocolName: string | null;
}

export const NO_GENERATION: Readonly<Generation> = Object.freeze({ generationId: -1, memberId: '', protocolName: null });

export interface MembershipOptions {
  groupId: string;
  groupInstanceId: string | null;
  clientId: string;
  sessionTimeoutMs: number;
  /** max.poll.interval.ms */
  rebalanceTimeoutMs: number;
  heartbeatIntervalMs: number;
  requestTimeoutMs: number;
  retryBackoffMs: number;
}

const COORDINATOR_ERRORS: ReadonlySet<number> = new Set([ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE]);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export abstract class GroupMembership {
  state: MemberState = MemberState.UNJOINED;
  generation: Generation = { ...NO_GENERATION };
  /** Set by a failed heartbeat, a metadata change on the leader, or a subscription change. */
  rejoinNeeded = true;
  rejoinReason = 'initial join';
  /** The error that stops the group (fatal), thrown from the next poll(). */
  fatalError: Error | undefined;
  readonly heartbeat: Heartbeat;
  protected readonly log: Logger;
  private readonly timer: HeartbeatTimer;
  private coordinator: { nodeId: number; host: string; port: number } | undefined;
  private coordinatorConn: Promise<Connection> | undefined;
  private joinPromise: Promise<void> | undefined;
  private needsJoinPrepare = true;
  private closed = false;

  constructor(
    protected readonly cluster: Cluster,
    protected readonly opts: MembershipOptions,
    log: Logger,
  ) {
    this.log = log.child({ groupId: opts.groupId });
    this.heartbeat = new Heartbeat(opts.heartbeatIntervalMs, opts.sessionTimeoutMs, opts.rebalanceTimeoutMs);
    this.timer = new HeartbeatTimer(this.heartbeat, {
      // with the coordinator unknown the next heartbeat looks it up again (Java's heartbeat thread does)
      active: () => this.state === MemberState.STABLE && !this.closed,
      sendHeartbeat: () => this.sendHeartbeat(),
      onSessionTimeout: () => {
        this.log.info({ sessionTimeoutMs: opts.sessionTimeoutMs }, 'no heartbeat answered within the session timeout; marking the coordinator unknown');
        this.markCoordinatorUnknown('session timed out without receiving a heartbeat response');
        this.heartbeat.resetSession();
      },
      onPollTimeout: () => void this.onPollTimeout(),
    });
  }

  /** The JoinGroup protocols (name + metadata), preferred first. */
  protected abstract protocols(): JoinGroupRequestProtocol[];
  /** Before (re)joining: revoke (eager) or lose partitions. `generation` is the one being left. */
  protected abstract onJoinPrepare(generation: Generation, memberId: string): Promise<void>;
  /** Leader only: the assignment bytes per member. */
  protected abstract performAssignment(leaderId: string, protocol: string, members: JoinGroupResponseMember[]): Promise<Map<string, Buffer>>;
  /** After SyncGroup succeeded. */
  protected abstract onJoinComplete(generation: Generation, protocol: string, assignment: Buffer): Promise<void>;

  get memberId(): string {
    return this.generation.memberId;
  }

  get coordinatorUnknown(): boolean {
    return this.coordinator === undefined;
  }

  requestRejoin(reason: string): void {
    if (!this.rejoinNeeded) this.log.info({ reason }, 'request joining group');
    this.rejoinNeeded = true;
    this.rejoinReason = reason;
  }

  /** Called by poll(): records the poll for max.poll.interval.ms. */
  pollHeartbeat(): void {
    this.heartbeat.poll();
  }

  markCoordinatorUnknown(reason: string): void {
    if (!this.coordinator) return;
    this.log.info({ coordinator: this.coordinator.nodeId, reason }, 'group coordinator is unavailable or invalid; will attempt rediscovery');
    this.coordinator = undefined;
    const c = this.coordinatorConn;
    this.coordinatorConn = undefined;
    void c?.then((conn) => conn.close()).catch(() => undefined);
  }

  /** Resets the generation (and the member id when asked); the next poll rejoins. */
  resetGeneration(reason: string, resetMemberId: boolean): void {
    this.log.info({ reason, resetMemberId, generation: this.generation.generationId }, 'resetting generation');
    this.generation = { generationId: -1, memberId: resetMemberId ? '' : this.generation.memberId, protocolName: null };
    this.state = MemberState.UNJOINED;
    this.needsJoinPrepare = true;
    this.requestRejoin(reason);
  }

  /** The coordinator connection, finding the coordinator first when unknown. */
  async coordinatorConnection(): Promise<Connection> {
    for (let attempt = 0; ; attempt++) {
      if (this.closed) throw new KafkaError('UNKNOWN_SERVER_ERROR', 'The consumer is closed');
      try {
        if (!this.coordinator) {
          const node = await findGroupCoordinator(this.cluster, this.opts.groupId);
          this.coordinator = node;
          this.log.info({ coordinator: node.nodeId, host: node.host, port: node.port }, 'discovered group coordinator');
        }
        const node = this.coordinator;
        this.coordinatorConn ??= Connection.connect({
          host: node.host,
          port: node.port,
          nodeId: node.nodeId,
          clientId: this.opts.clientId,
          requestTimeoutMs: this.opts.requestTimeoutMs,
          ...(this.cluster.sasl ? { sasl: this.cluster.sasl } : {}),
          ...(this.cluster.tls ? { tls: this.cluster.tls } : {}),
          logger: this.log,
        });
        const conn = await this.coordinatorConn;
        if (conn.isOpen) return conn;
        this.markCoordinatorUnknown('coordinator connection closed');
      } catch (err) {
        if (!(err instanceof KafkaError) || !err.retriable) throw err;
        this.markCoordinatorUnknown((err as Error).message);
        this.log.debug({ err: (err as Error).message, attempt }, 'coordinator lookup failed; retrying');
        await sleep(Math.min(1000, this.opts.retryBackoffMs * 2 ** Math.min(attempt, 4)));
      }
    }
  }

  /** Runs one request on the coordinator connection; a lost connection marks the coordinator unknown. */
  async onCoordinator<T>(fn: (c: Connection) => Promise<T>): Promise<T> {
    const conn = await this.coordinatorConnection();
    try {
      return await fn(conn);
    } catch (err) {
      if (err instanceof KafkaError && err.retriable) this.markCoordinatorUnknown(err.message);
      throw err;
    }
  }

  /**
   * Ensures the member is in a stable generation, joining / rejoining when needed. Concurrent
   * callers (poll after poll while a join is slow) share one join.
   */
  ensureActiveGroup(): Promise<void> {
    if (this.fatalError) return Promise.reject(this.fatalError);
    if (!this.rejoinNeeded && this.state === MemberState.STABLE) return Promise.resolve();
    this.timer.start();
    this.joinPromise ??= this.joinGroupIfNeeded().finally(() => (this.joinPromise = undefined));
    return this.joinPromise;
  }

  private async joinGroupIfNeeded(): Promise<void> {
    while ((this.rejoinNeeded || this.state !== MemberState.STABLE) && !this.closed) {
      await this.coordinatorConnection();
      if (this.needsJoinPrepare) {
        // needsJoinPrepare is cleared first so a failing prepare is not repeated forever
        this.needsJoinPrepare = false;
        await this.onJoinPrepare({ ...this.generation }, this.generation.memberId);
      }
      try {
        await this.joinOnce();
      } catch (err) {
        if (this.fatalError) throw this.fatalError;
        if (err instanceof KafkaError && err.retriable) {
          this.markCoordinatorUnknown(err.message);
          await sleep(this.opts.retryBackoffMs);
          continue;
        }
        throw err;
      }
    }
  }

  /** One JoinGroup (+ SyncGroup) attempt; returns normally when the caller should loop again. */
  private async joinOnce(): Promise<void> {
    this.state = MemberState.PREPARING_REBALANCE;
    const reason = this.rejoinReason;
    // JoinGroup may be held up to the rebalance timeout by the coordinator
    const joinTimeout = Math.max(this.opts.requestTimeoutMs, this.opts.rebalanceTimeoutMs + 5000);
    const res = await this.onCoordinator((c) =>
      c.request(
        API_KEYS.JoinGroup,
        (v) => ({
          groupId: this.opts.groupId,
          sessionTimeoutMs: this.opts.sessionTimeoutMs,
          rebalanceTimeoutMs: this.opts.rebalanceTimeoutMs,
          memberId: this.generation.memberId,
          groupInstanceId: v >= 5 ? this.opts.groupInstanceId : null,
          protocolType: 'consumer',
          protocols: this.protocols(),
          reason: v >= 8 ? reason : null,
        }),
        { timeoutMs: joinTimeout },
      ),
    );
    const body = res.body;
    const code = body.errorCode;
    if (code === ErrorCode.MEMBER_ID_REQUIRED) {
      // KIP-394: the coordinator gave us a member id; join again with it right away
      this.log.debug({ memberId: body.memberId }, 'JoinGroup answered MEMBER_ID_REQUIRED; rejoining with the member id');
      this.generation = { ...this.generation, memberId: body.memberId };
      this.rejoinNeeded = true;
      return;
    }
    if (code !== ErrorCode.NONE) return this.onGroupError('JoinGroup', code, null);
    this.generation = { generationId: body.generationId, memberId: body.memberId, protocolName: body.protocolName };
    this.state = MemberState.COMPLETING_REBALANCE;
    const isLeader = body.leader === body.memberId;
    this.log.info(
      { generation: body.generationId, memberId: body.memberId, protocol: body.protocolName, leader: isLeader, members: body.members.length },
      'joined group',
    );
    let assignments: Map<string, Buffer> = new Map();
    if (isLeader && !body.skipAssignment) assignments = await this.performAssignment(body.leader, body.protocolName ?? '', body.members);
    const sync = await this.onCoordinator((c) =>
      c.send(API_KEYS.SyncGroup, (v) => ({
        groupId: this.opts.groupId,
        generationId: body.generationId,
        memberId: body.memberId,
        groupInstanceId: v >= 3 ? this.opts.groupInstanceId : null,
        protocolType: v >= 5 ? 'consumer' : null,
        protocolName: v >= 5 ? body.protocolName : null,
        assignments: [...assignments].map(([memberId, assignment]) => ({ memberId, assignment })),
      })),
    );
    if (sync.errorCode !== ErrorCode.NONE) return this.onGroupError('SyncGroup', sync.errorCode, null);
    if (this.generation.generationId !== body.generationId) return; // reset while SyncGroup was in flight
    this.state = MemberState.STABLE;
    this.rejoinNeeded = false;
    this.needsJoinPrepare = true;
    this.heartbeat.resetSession();
    this.heartbeat.poll();
    this.timer.kick();
    await this.onJoinComplete({ ...this.generation }, sync.protocolName ?? body.protocolName ?? '', sync.assignment);
  }

  private onGroupError(api: string, code: number, message: string | null): void {
    const err = brokerError(code, message);
    this.log.info({ api, error: err.errorName }, 'group request failed');
    switch (code) {
      case ErrorCode.UNKNOWN_MEMBER_ID:
        this.resetGeneration(`encountered ${err.errorName} from ${api} response`, true);
        return;
      case ErrorCode.ILLEGAL_GENERATION:
        this.resetGeneration(`encountered ${err.errorName} from ${api} response`, false);
        return;
      case ErrorCode.REBALANCE_IN_PROGRESS:
        this.state = MemberState.UNJOINED;
        this.requestRejoin(`${api} answered REBALANCE_IN_PROGRESS`);
        return;
      case ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
        this.state = MemberState.UNJOINED;
        this.requestRejoin('coordinator loading');
        return;
      default:
        if (COORDINATOR_ERRORS.has(code)) {
          this.state = MemberState.UNJOINED;
          this.markCoordinatorUnknown(err.errorName);
          this.requestRejoin(`${api} answered ${err.errorName}`);
          return;
        }
        this.state = MemberState.UNJOINED;
        this.fatalError = new KafkaError(code, `${api} failed for group ${this.opts.groupId}: ${err.message}`, { cause: err });
        throw this.fatalError;
    }
  }

  /** One Heartbeat (from the timer). */
  async sendHeartbeat(): Promise<void> {
    const gen = this.generation;
    try {
      const res = await this.onCoordinator((c) =>
        c.send(API_KEYS.Heartbeat, (v) => ({
          groupId: this.opts.groupId,
          generationId: gen.generationId,
          memberId: gen.memberId,
          groupInstanceId: v >= 3 ? this.opts.groupInstanceId : null,
        })),
      );
      const code = res.errorCode;
      if (code === ErrorCode.NONE) {
        this.heartbeat.receivedHeartbeat();
        return;
      }
      this.heartbeat.failedHeartbeat();
      if (gen !== this.generation && gen.generationId !== this.generation.generationId) return; // stale answer
      const name = brokerError(code).errorName;
      if (code === ErrorCode.REBALANCE_IN_PROGRESS) {
        // the member stays in its generation until it rejoins (cooperative keeps its partitions)
        this.heartbeat.receivedHeartbeat();
        this.requestRejoin('group is already rebalancing');
      } else if (code === ErrorCode.UNKNOWN_MEMBER_ID) {
        this.resetGeneration(`encountered ${name} from Heartbeat response`, true);
      } else if (code === ErrorCode.ILLEGAL_GENERATION) {
        this.resetGeneration(`encountered ${name} from Heartbeat response`, false);
      } else if (COORDINATOR_ERRORS.has(code)) {
        this.markCoordinatorUnknown(name);
      } else if (code === ErrorCode.FENCED_INSTANCE_ID) {
        this.fatalError = new KafkaError(code, `Heartbeat: this member's group.instance.id ${this.opts.groupInstanceId} was fenced by another member`);
      } else {
        this.log.warn({ error: name }, 'unexpected heartbeat error');
      }
    } catch (err) {
      this.heartbeat.failedHeartbeat();
      this.log.debug({ err: (err as Error).message }, 'heartbeat failed');
    }
  }

  private async onPollTimeout(): Promise<void> {
    if (this.state === MemberState.UNJOINED) return;
    this.log.warn(
      { maxPollIntervalMs: this.opts.rebalanceTimeoutMs },
      'consumer poll timeout has expired. This means the time between subsequent calls to poll() was longer than the configured max.poll.interval.ms, which typically implies that the poll loop is spending too much time processing messages. You can address this either by increasing max.poll.interval.ms or by reducing the maximum size of batches returned in poll() with max.poll.records.',
    );
    await this.maybeLeaveGroup('consumer poll timeout has expired.');
  }

  /**
   * Sends LeaveGroup (dynamic members only: a static member's partitions wait for it to return
   * within the session timeout) and resets the generation and member id.
   */
  async maybeLeaveGroup(reason: string): Promise<void> {
    const gen = this.generation;
    if (this.opts.groupInstanceId === null && gen.memberId !== '' && !this.coordinatorUnknown && this.state !== MemberState.UNJOINED) {
      this.log.info({ memberId: gen.memberId, reason }, 'member sending LeaveGroup request to coordinator');
      try {
        const conn = await this.coordinatorConnection();
        const res = await conn.send(API_KEYS.LeaveGroup, (v) => ({
          groupId: this.opts.groupId,
          memberId: v < 3 ? gen.memberId : '',
          members: v >= 3 ? [{ memberId: gen.memberId, groupInstanceId: null, reason: v >= 5 ? reason : null }] : [],
        }));
        const code = res.errorCode || res.members.find((m) => m.errorCode !== 0)?.errorCode || 0;
        if (code !== 0) this.log.info({ error: brokerError(code).errorName }, 'LeaveGroup failed');
      } catch (err) {
        this.log.info({ err: (err as Error).message }, 'LeaveGroup failed');
      }
    }
    this.generation = { ...NO_GENERATION };
    this.state = MemberState.UNJOINED;
    this.needsJoinPrepare = true;
    this.requestRejoin(reason);
  }

  /** Stops heartbeats and closes the coordinator connection (call maybeLeaveGroup first). */
  async closeMembership(): Promise<void> {
    this.closed = true;
    this.timer.stop();
    const c = this.coordinatorConn;
    this.coordinatorConn = undefined;
    this.coordinator = undefined;
    await c?.then((conn) => conn.close()).catch(() => undefined);
  }
}
