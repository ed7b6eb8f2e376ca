/**
 * One member of a classic group (Kafka's MemberMetadata): its session and rebalance timeouts, the
 * protocols it supports (in preference order, each with its metadata), its assignment, and the
 * callbacks of its parked JoinGroup / SyncGroup requests.
 */
import type { JoinGroupResponseMember } from '@samsa/protocol';

export interface Protocol {
  name: string;
  metadata: Buffer;
}

/** What a JoinGroup request is answered with (Kafka's JoinGroupResult). */
export interface JoinGroupResult {
  members: JoinGroupResponseMember[];
  memberId: string;
  generationId: number;
  protocolType: string | null;
  protocolName: string | null;
  leaderId: string;
  skipAssignment: boolean;
  error: number;
}

/** What a SyncGroup request is answered with. */
export interface SyncGroupResult {
  protocolType: string | null;
  protocolName: string | null;
  assignment: Buffer;
  error: number;
}

export type JoinCallback = (r: JoinGroupResult) => void;
export type SyncCallback = (r: SyncGroupResult) => void;

export const UNKNOWN_MEMBER_ID = '';
export const NO_GENERATION = -1;
const EMPTY = Buffer.alloc(0);

export function joinError(memberId: string, error: number): JoinGroupResult {
  return { members: [], memberId, generationId: NO_GENERATION, protocolType: null, protocolName: null, leaderId: '', skipAssignment: false, error };
}

export function syncError(error: number): SyncGroupResult {
  return { protocolType: null, protocolName: null, assignment: EMPTY, error };
}

export interface MemberSummary {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  metadata: Buffer;
  assignment: Buffer;
}

export class MemberMetadata {
  awaitingJoinCallback: JoinCallback | null = null;
  awaitingSyncCallback: SyncCallback | null = null;
  /** A member added in the current rebalance (its join may time out: NewMemberJoinTimeoutMs). */
  isNew = false;
  /**
   * Set when a heartbeat (or anything proving liveness) arrives; the member's DelayedHeartbeat
   * completes on it. Cleared when the next expiration is scheduled.
   */
  heartbeatSatisfied = false;

  constructor(
    public memberId: string,
    readonly groupInstanceId: string | null,
    readonly clientId: string,
    readonly clientHost: string,
    public rebalanceTimeoutMs: number,
    public sessionTimeoutMs: number,
    readonly protocolType: string,
    public supportedProtocols: Protocol[],
    public assignment: Buffer = EMPTY,
  ) {}

  get isStaticMember(): boolean {
    return this.groupInstanceId !== null;
  }

  get isAwaitingJoin(): boolean {
    return this.awaitingJoinCallback !== null;
  }

  get isAwaitingSync(): boolean {
    return this.awaitingSyncCallback !== null;
  }

  /** The metadata this member sent for `protocol`. */
  metadata(protocol: string): Buffer {
    const p = this.supportedProtocols.find((x) => x.name === protocol);
    if (!p) throw new Error(`Member ${this.memberId} does not support protocol ${protocol}`);
    return p.metadata;
  }

  /**
   * Members awaiting a join or sync answer count as alive; new members (whose join may be parked a
   * long time) and everyone else need a heartbeat.
   */
  get hasSatisfiedHeartbeat(): boolean {
    if (this.isNew) return this.heartbeatSatisfied;
    if (this.isAwaitingJoin || this.isAwaitingSync) return true;
    return this.heartbeatSatisfied;
  }

  /** Same protocols, same order, same metadata bytes. */
  matches(protocols: readonly Protocol[]): boolean {
    if (protocols.length !== this.supportedProtocols.length) return false;
    return protocols.every((p, i) => {
      const mine = this.supportedProtocols[i]!;
      return p.name === mine.name && p.metadata.equals(mine.metadata);
    });
  }

  /** Votes for its most preferred protocol among `candidates`. */
  vote(candidates: ReadonlySet<string>): string {
    const p = this.supportedProtocols.find((x) => candidates.has(x.name));
    if (!p) throw new Error(`Member ${this.memberId} does not support any of the candidate protocols`);
    return p.name;
  }

  summary(protocol: string): MemberSummary {
    return {
      memberId: this.memberId,
      groupInstanceId: this.groupInstanceId,
      clientId: this.clientId,
      clientHost: this.clientHost,
      metadata: this.metadata(protocol),
      assignment: this.assignment,
    };
  }

  summaryNoMetadata(): MemberSummary {
    return {
      memberId: this.memberId,
      groupInstanceId: this.groupInstanceId,
      clientId: this.clientId,
      clientHost: this.clientHost,
      metadata: EMPTY,
      assignment: EMPTY,
    };
  }

  toString(): string {
    return `MemberMetadata(memberId=${this.memberId}, groupInstanceId=${this.groupInstanceId}, clientId=${this.clientId}, clientHost=${this.clientHost}, sessionTimeoutMs=${this.sessionTimeoutMs}, rebalanceTimeoutMs=${this.rebalanceTimeoutMs}, supportedProtocols=[${this.supportedProtocols.map((p) => p.name).join(',')}])`;
  }
}
