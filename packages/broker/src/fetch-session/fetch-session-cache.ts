/**
 * KIP-227 incremental fetch sessions, broker side: the cached partitions of a session, the session,
 * and the cache that creates, finds, touches and evicts sessions (Kafka's FetchSession.scala).
 */
import { randomInt } from 'node:crypto';

/** Session id 0: no session (the fetch is sessionless, or a full fetch asking for a new one). */
export const INVALID_SESSION_ID = 0;
/** Epoch 0: a full fetch that asks for a new session (closing the one named, if any). */
export const INITIAL_EPOCH = 0;
/** Epoch -1: a full fetch without a session (closing the one named, if any). */
export const FINAL_EPOCH = -1;
/** Kafka's KafkaServer.MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS: a session idle this long may be evicted by any other. */
export const MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS = 120_000;

const INT32_MAX = 0x7fffffff;

/** Kafka's FetchMetadata.nextEpoch: after FINAL_EPOCH comes FINAL_EPOCH, after INT32_MAX comes 1. */
export function nextEpoch(epoch: number): number {
  if (epoch < 0) return FINAL_EPOCH;
  if (epoch === INT32_MAX) return 1;
  return epoch + 1;
}

/** A fetch with epoch 0 or -1 lists every partition it wants (a full fetch); any other epoch is incremental. */
export function isFullFetch(epoch: number): boolean {
  return epoch === INITIAL_EPOCH || epoch === FINAL_EPOCH;
}

/** What a fetch request says of one partition. */
export interface PartitionFetchParams {
  fetchOffset: bigint;
  partitionMaxBytes: number;
  currentLeaderEpoch: number;
  /** The fetcher's log start offset (followers; -1 for consumers). */
  logStartOffset: bigint;
  lastFetchedEpoch: number;
}

/**
 * One partition of a fetch (Kafka's CachedPartition): the request parameters last sent for it and,
 * once in a session, the high watermark and log start offset last answered. It is also the entry
 * the read takes (`topic`, `partition`, `fetchOffset`, `maxBytes`, `currentLeaderEpoch`,
 * `logStartOffset`), so an incremental fetch reads its session without building new objects.
 */
export class CachedPartition {
  maxBytes: number;
  fetchOffset: bigint;
  currentLeaderEpoch: number;
  /** The fetcher's log start offset. */
  logStartOffset: bigint;
  lastFetchedEpoch: number;
  /** The high watermark last answered (-1: none, or an error, so the partition is answered again). */
  highWatermark = -1n;
  /** This broker's log start offset last answered. */
  localLogStartOffset = -1n;

  constructor(
    /** Unique in a session: `topicKey` and partition. */
    readonly key: string,
    /** The topic name; undefined while a topic id (Fetch v13+) names no topic this broker knows. */
    public topic: string | undefined,
    /** The topic id as the request sent it (Fetch v13+; zeros before). */
    readonly topicId: Buffer,
    /** The topic name (Fetch ≤ 12) or its id in base64url (v13+): partitions of one topic share it. */
    readonly topicKey: string,
    readonly partition: number,
    params: PartitionFetchParams,
  ) {
    this.maxBytes = params.partitionMaxBytes;
    this.fetchOffset = params.fetchOffset;
    this.currentLeaderEpoch = params.currentLeaderEpoch;
    this.logStartOffset = params.logStartOffset;
    this.lastFetchedEpoch = params.lastFetchedEpoch;
  }

  updateRequestParams(params: PartitionFetchParams): void {
    this.maxBytes = params.partitionMaxBytes;
    this.fetchOffset = params.fetchOffset;
    this.currentLeaderEpoch = params.currentLeaderEpoch;
    this.logStartOffset = params.logStartOffset;
    this.lastFetchedEpoch = params.lastFetchedEpoch;
  }

  /**
   * Kafka's maybeUpdateResponseData: whether an incremental response must carry this partition —
   * it has records, its high watermark or log start offset changed, or it has an error (which also
   * forgets the cached high watermark, so the partition is answered again once the error clears).
   * With `update`, the cached values become the answered ones. (Kafka also always answers a
   * diverging epoch or a preferred read replica; this broker answers neither.) Aborted
   * transactions and the last stable offset are not compared, as in Kafka: aborted transactions
   * come only with records, and the LSO only moves with the high watermark.
   */
  maybeUpdateResponseData(errorCode: number, highWatermark: bigint, logStartOffset: bigint, recordBytes: number, update: boolean): boolean {
    let mustRespond = recordBytes > 0;
    if (this.highWatermark !== highWatermark) {
      mustRespond = true;
      if (update) this.highWatermark = highWatermark;
    }
    if (this.localLogStartOffset !== logStartOffset) {
      mustRespond = true;
      if (update) this.localLogStartOffset = logStartOffset;
    }
    if (errorCode !== 0) {
      if (update) this.highWatermark = -1n;
      mustRespond = true;
    }
    return mustRespond;
  }
}

/** The key of a partition in a session. */
export function cachedPartitionKey(topicKey: string, partition: number): string {
  return `${topicKey}\u0000${partition}`;
}

/**
 * One incremental fetch session. `partitions` keeps Kafka's order: partitions are read in it, and a
 * partition answered moves to the end, so a response cut at max_bytes serves the others next time.
 */
export class FetchSession {
  /** The size the cache last accounted for (-1: not in the cache). */
  cachedSize = -1;
  /** In Kafka's evictableByAll tree: created more than the eviction time ago (as of its last use). */
  evictableByAll = false;
  /** In Kafka's evictableByPrivileged tree: a consumer's session, or created more than the eviction time ago. */
  evictableByPrivileged = false;

  constructor(
    readonly id: number,
    /** A follower's session: only other followers, or staleness, evict it. */
    readonly privileged: boolean,
    readonly partitions: Map<string, CachedPartition>,
    /** Created by a Fetch v13+ (topic ids): its incremental requests must use them too. */
    readonly usesTopicIds: boolean,
    readonly creationMs: number,
    public lastUsedMs: number,
    /** The epoch the next incremental request must carry. */
    public epoch: number,
  ) {}

  get size(): number {
    return this.partitions.size;
  }
}

/** Kafka's EvictableKey order: consumers before followers, then smaller sessions, then lower ids. */
function compareEvictable(aPrivileged: boolean, aSize: number, aId: number, b: FetchSession): number {
  if (aPrivileged !== b.privileged) return aPrivileged ? 1 : -1;
  if (aSize !== b.cachedSize) return aSize - b.cachedSize;
  return aId - b.id;
}

export interface FetchSessionCacheOptions {
  /** max.incremental.fetch.session.cache.slots */
  maxEntries: number;
  /** The idle time after which any new session may evict a session (MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS). */
  evictionMs?: number;
  /** The clock (ms); Date.now by default. */
  now?: () => number;
}

/**
 * Kafka's FetchSessionCache. At most `maxEntries` sessions; when full, a new session may evict
 * (Kafka's tryEvict) the least recently used one if it has been idle over `evictionMs`, else the
 * first of the evictable ones in EvictableKey order (consumers first, then the smallest), if the
 * new one ranks above it: a follower's session evicts any consumer's and smaller followers' that
 * are past their first `evictionMs`; a consumer's only evicts smaller consumers' (or any session
 * past its first `evictionMs` that is smaller). Otherwise no session is created and the fetch is
 * answered sessionless (session id 0).
 */
export class FetchSessionCache {
  /** Sessions by id, in least recently used order (touching one moves it to the end). */
  private readonly sessions = new Map<number, FetchSession>();
  private numPartitions = 0;
  /** Sessions evicted so far (Kafka's IncrementalFetchSessionEvictionsPerSec counts them). */
  evictions = 0;
  readonly maxEntries: number;
  private readonly evictionMs: number;
  readonly now: () => number;

  constructor(o: FetchSessionCacheOptions) {
    this.maxEntries = o.maxEntries;
    this.evictionMs = o.evictionMs ?? MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS;
    this.now = o.now ?? Date.now;
  }

  get(id: number): FetchSession | undefined {
    return this.sessions.get(id);
  }

  /** Sessions in the cache (Kafka's NumIncrementalFetchSessions). */
  get size(): number {
    return this.sessions.size;
  }

  /** Partitions over all sessions, as of their last use (Kafka's NumIncrementalFetchPartitionsCached). */
  get totalPartitions(): number {
    return this.numPartitions;
  }

  /** A random positive int32 no session has. */
  private newSessionId(): number {
    let id: number;
    do id = randomInt(1, INT32_MAX);
    while (this.sessions.has(id));
    return id;
  }

  /**
   * Creates a session holding `partitions` if there is a free slot or one can be evicted; returns
   * its id, or INVALID_SESSION_ID (the fetch stays sessionless). Its next epoch is 1.
   */
  maybeCreateSession(privileged: boolean, partitions: Map<string, CachedPartition>, usesTopicIds: boolean): number {
    const now = this.now();
    if (this.sessions.size >= this.maxEntries && !this.tryEvict(privileged, partitions.size, now)) return INVALID_SESSION_ID;
    const session = new FetchSession(this.newSessionId(), privileged, partitions, usesTopicIds, now, now, nextEpoch(INITIAL_EPOCH));
    this.sessions.set(session.id, session);
    this.touch(session, now);
    return session.id;
  }

  /** Kafka's tryEvict (see the class comment). */
  private tryEvict(privileged: boolean, size: number, now: number): boolean {
    const lru = this.sessions.values().next();
    if (lru.done) return false;
    if (now - lru.value.lastUsedMs > this.evictionMs) {
      this.remove(lru.value);
      this.evictions++;
      return true;
    }
    let first: FetchSession | undefined;
    for (const s of this.sessions.values()) {
      if (!(privileged ? s.evictableByPrivileged : s.evictableByAll)) continue;
      if (!first || compareEvictable(s.privileged, s.cachedSize, s.id, first) < 0) first = s;
    }
    // the new session (id 0 in the comparison) must rank strictly above the one it would evict
    if (!first || compareEvictable(privileged, size, 0, first) < 0) return false;
    this.remove(first);
    this.evictions++;
    return true;
  }

  remove(session: FetchSession | number): FetchSession | undefined {
    const s = typeof session === 'number' ? this.sessions.get(session) : session;
    if (!s || this.sessions.get(s.id) !== s) return undefined;
    this.sessions.delete(s.id);
    this.numPartitions -= s.cachedSize;
    s.cachedSize = -1;
    return s;
  }

  /** Marks the session used now: last in LRU order, its size and evictability recomputed (Kafka's touch). */
  touch(session: FetchSession, now: number): void {
    if (this.sessions.get(session.id) !== session) return;
    this.sessions.delete(session.id);
    this.sessions.set(session.id, session);
    session.lastUsedMs = now;
    if (session.cachedSize !== -1) this.numPartitions -= session.cachedSize;
    session.cachedSize = session.size;
    this.numPartitions += session.cachedSize;
    const old = now - session.creationMs > this.evictionMs;
    session.evictableByPrivileged = !session.privileged || old;
    session.evictableByAll = old;
  }
}
