/**
 * KIP-227, broker side: turns a Fetch request's session id and epoch into the context that says
 * which partitions to read and which of them to answer (Kafka's FetchManager.newContext and its
 * FetchContexts). The Fetch handler decodes, reads and encodes; the session rules live here.
 */
import { ErrorCode, type FetchRequestForgottenTopic, type FetchRequestTopic } from '@samsa/protocol';
import type { Logger } from 'pino';
import {
  CachedPartition,
  cachedPartitionKey,
  FINAL_EPOCH,
  INVALID_SESSION_ID,
  isFullFetch,
  nextEpoch,
  type FetchSession,
  type FetchSessionCache,
} from './fetch-session-cache.js';

/** Fetch v7 brought sessions; older requests are sessionless. */
const FETCH_SESSION_VERSION = 7;
/** Fetch v13 names topics by id (KIP-516). */
const TOPIC_ID_VERSION = 13;

/**
 * How one fetch request is answered. Without a session error: read `partitions` in order, then
 * call `beginResponse` (an error there answers with no partitions), `include` for each partition
 * in order — synchronously, nothing else may touch the session meanwhile — and `endResponse` for
 * the response's session id. A throttled fetch calls `throttledResponse` instead.
 */
export interface FetchContext {
  /** A session error (FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH, FETCH_SESSION_TOPIC_ID_ERROR): answered at once, no partitions, session id 0. */
  readonly errorCode: number;
  /** The partitions to read: the request's, or for an incremental fetch every partition of the session. */
  readonly partitions: readonly CachedPartition[];
  /** 0, or INVALID_FETCH_SESSION_EPOCH when another request moved the session on meanwhile (answered with no partitions and the session id). */
  beginResponse(): number;
  /** Whether the response carries this partition (an incremental one only carries what changed); records what was answered. */
  include(p: CachedPartition, errorCode: number, highWatermark: bigint, logStartOffset: bigint, recordBytes: number): boolean;
  /** The response's session id: the new session's (full fetch), the session's (incremental), or 0. */
  endResponse(): number;
  /**
   * Kafka's getThrottledResponse: null to answer every partition without data and session id 0
   * (sessionless and full fetches: no session is created), or the error code and session id of an
   * answer without partitions (incremental: the session is left as it was).
   */
  throttledResponse(): { errorCode: number; sessionId: number } | null;
}

/** Resolves a topic id (base64url) to the topic's name; undefined if this broker knows no such topic. */
export type TopicNameResolver = (topicId: string) => string | undefined;

const EMPTY: readonly CachedPartition[] = Object.freeze([]) as readonly CachedPartition[];

class SessionErrorContext implements FetchContext {
  readonly partitions = EMPTY;
  constructor(readonly errorCode: number) {}
  beginResponse(): number {
    return this.errorCode;
  }
  include(): boolean {
    return false;
  }
  endResponse(): number {
    return INVALID_SESSION_ID;
  }
  throttledResponse() {
    return { errorCode: this.errorCode, sessionId: INVALID_SESSION_ID };
  }
}

/** Epoch -1, or a request before v7: every partition answered, no session. */
class SessionlessFetchContext implements FetchContext {
  readonly errorCode = 0;
  constructor(readonly partitions: readonly CachedPartition[]) {}
  beginResponse(): number {
    return 0;
  }
  include(): boolean {
    return true;
  }
  endResponse(): number {
    return INVALID_SESSION_ID;
  }
  throttledResponse() {
    return null;
  }
}

/** Epoch 0: every partition answered, and a new session holds them if the cache has room. */
class FullFetchContext implements FetchContext {
  readonly errorCode = 0;
  readonly partitions: readonly CachedPartition[];
  constructor(
    private readonly cache: FetchSessionCache,
    private readonly map: Map<string, CachedPartition>,
    private readonly privileged: boolean,
    private readonly usesTopicIds: boolean,
  ) {
    this.partitions = [...map.values()];
  }
  beginResponse(): number {
    return 0;
  }
  include(p: CachedPartition, errorCode: number, highWatermark: bigint, logStartOffset: bigint): boolean {
    p.highWatermark = errorCode === 0 ? highWatermark : -1n;
    p.localLogStartOffset = logStartOffset;
    return true;
  }
  endResponse(): number {
    return this.cache.maybeCreateSession(this.privileged, this.map, this.usesTopicIds);
  }
  throttledResponse() {
    return null;
  }
}

/** An incremental fetch of a session: reads all of it, answers what changed. */
class IncrementalFetchContext implements FetchContext {
  readonly errorCode = 0;
  readonly partitions: readonly CachedPartition[];
  private readonly expectedEpoch: number;
  constructor(
    private readonly session: FetchSession,
    requestEpoch: number,
  ) {
    this.partitions = [...session.partitions.values()];
    this.expectedEpoch = nextEpoch(requestEpoch);
  }
  private epochError(): number {
    return this.session.epoch !== this.expectedEpoch ? ErrorCode.INVALID_FETCH_SESSION_EPOCH : 0;
  }
  beginResponse(): number {
    return this.epochError();
  }
  include(p: CachedPartition, errorCode: number, highWatermark: bigint, logStartOffset: bigint, recordBytes: number): boolean {
    if (!p.maybeUpdateResponseData(errorCode, highWatermark, logStartOffset, recordBytes, true)) return false;
    // answered partitions go to the back of the session, so the next reads start with the others
    const m = this.session.partitions;
    if (m.get(p.key) === p) {
      m.delete(p.key);
      m.set(p.key, p);
    }
    return true;
  }
  endResponse(): number {
    return this.session.id;
  }
  throttledResponse() {
    return { errorCode: this.epochError(), sessionId: this.session.id };
  }
}

/** What the request's topics resolve to: per topic its key (name, or id in base64url) and name. */
function requestPartitions(
  version: number,
  topics: readonly FetchRequestTopic[],
  resolve: TopicNameResolver,
  each: (topicKey: string, name: string | undefined, t: FetchRequestTopic) => void,
): void {
  const useIds = version >= TOPIC_ID_VERSION;
  for (const t of topics) {
    if (useIds) {
      const id = t.topicId.toString('base64url');
      each(id, resolve(id), t);
    } else each(t.topic, t.topic, t);
  }
}

/** Adds a request's partitions to `map` (a new session's, or the session's own), updating those already there. */
function mergeRequestPartitions(map: Map<string, CachedPartition>, version: number, topics: readonly FetchRequestTopic[], resolve: TopicNameResolver): void {
  requestPartitions(version, topics, resolve, (topicKey, name, t) => {
    for (const p of t.partitions) {
      const key = cachedPartitionKey(topicKey, p.partition);
      const cached = map.get(key);
      if (cached) cached.updateRequestParams(p);
      else map.set(key, new CachedPartition(key, name, t.topicId, topicKey, p.partition, p));
    }
  });
}

/**
 * Kafka's FetchManager. A full fetch (epoch 0 or -1) naming a session closes it; epoch 0 then
 * opens a new one. An incremental fetch needs a known session id (else FETCH_SESSION_ID_NOT_FOUND)
 * at its expected epoch (else INVALID_FETCH_SESSION_EPOCH), using topic ids exactly when the
 * session does (else FETCH_SESSION_TOPIC_ID_ERROR); its partitions are added or updated, its
 * forgotten_topics_data removed, and a session left empty is closed (the fetch is then sessionless).
 */
export class FetchManager {
  constructor(
    readonly cache: FetchSessionCache,
    private readonly log?: Logger,
  ) {}

  newContext(
    version: number,
    sessionId: number,
    epoch: number,
    isFollower: boolean,
    topics: readonly FetchRequestTopic[],
    forgotten: readonly FetchRequestForgottenTopic[],
    resolve: TopicNameResolver,
  ): FetchContext {
    if (version < FETCH_SESSION_VERSION) return new SessionlessFetchContext(this.fullList(version, topics, resolve));
    if (isFullFetch(epoch)) {
      if (sessionId !== INVALID_SESSION_ID && this.cache.remove(sessionId)) this.log?.debug({ sessionId }, 'full fetch closed its fetch session');
      if (epoch === FINAL_EPOCH) return new SessionlessFetchContext(this.fullList(version, topics, resolve));
      const map = new Map<string, CachedPartition>();
      mergeRequestPartitions(map, version, topics, resolve);
      return new FullFetchContext(this.cache, map, isFollower, version >= TOPIC_ID_VERSION);
    }
    const session = this.cache.get(sessionId);
    if (!session) {
      this.log?.debug({ sessionId }, 'fetch session error: no such session id');
      return new SessionErrorContext(ErrorCode.FETCH_SESSION_ID_NOT_FOUND);
    }
    if (session.epoch !== epoch) {
      this.log?.debug({ sessionId, expected: session.epoch, epoch }, 'fetch session error: wrong epoch');
      return new SessionErrorContext(ErrorCode.INVALID_FETCH_SESSION_EPOCH);
    }
    if (session.usesTopicIds !== version >= TOPIC_ID_VERSION) {
      this.log?.debug({ sessionId, version, usesTopicIds: session.usesTopicIds }, 'fetch session error: topic ids used inconsistently');
      return new SessionErrorContext(ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR);
    }
    const m = session.partitions;
    mergeRequestPartitions(m, version, topics, resolve);
    const useIds = version >= TOPIC_ID_VERSION;
    for (const f of forgotten) {
      const topicKey = useIds ? f.topicId.toString('base64url') : f.topic;
      for (const partition of f.partitions) m.delete(cachedPartitionKey(topicKey, partition));
    }
    if (m.size === 0) {
      this.log?.debug({ sessionId }, 'incremental fetch left its session empty; closing it');
      this.cache.remove(session);
      return new SessionlessFetchContext(this.fullList(version, topics, resolve));
    }
    // a topic id unknown when it was added may be known now (Kafka's maybeResolveUnknownName)
    if (useIds) for (const p of m.values()) if (p.topic === undefined) p.topic = resolve(p.topicKey);
    this.cache.touch(session, this.cache.now());
    session.epoch = nextEpoch(session.epoch);
    return new IncrementalFetchContext(session, epoch);
  }

  /** The request's partitions, in its order (duplicates kept, as a sessionless fetch answers them). */
  private fullList(version: number, topics: readonly FetchRequestTopic[], resolve: TopicNameResolver): CachedPartition[] {
    const out: CachedPartition[] = [];
    requestPartitions(version, topics, resolve, (topicKey, name, t) => {
      for (const p of t.partitions) out.push(new CachedPartition('', name, t.topicId, topicKey, p.partition, p));
    });
    return out;
  }
}
