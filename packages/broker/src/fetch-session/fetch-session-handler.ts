/**
 * KIP-227, fetching side (Kafka's FetchSessionHandler): one per fetcher and leader. It remembers
 * what the leader's session holds, so a request lists only the partitions that are new or whose
 * fetch parameters changed, forgets those no longer fetched, and falls back to a full fetch (a new
 * session) when the leader loses or rejects the session.
 */
import { ErrorCode, errorName, type FetchResponse } from '@samsa/protocol';
import type { Logger } from 'pino';
import { INITIAL_EPOCH, INVALID_SESSION_ID, isFullFetch, nextEpoch } from './fetch-session-cache.js';

/** What the fetcher sends for one partition (compared with what the session holds). */
export interface SessionPartition {
  readonly key: string;
  readonly topic: string;
  readonly partition: number;
  fetchOffset: bigint;
  logStartOffset: bigint;
  maxBytes: number;
  currentLeaderEpoch: number;
  lastFetchedEpoch: number;
  /** The builder that last listed it. */
  seen: number;
}

/** One request: its session id and epoch, the partitions to send and those to forget. */
export interface FetchRequestData {
  sessionId: number;
  epoch: number;
  /** The partitions in the request: all of them for a full fetch, else the new and changed ones. */
  toSend: SessionPartition[];
  toForget: Array<{ topic: string; partition: number }>;
  /** Partitions in the session once this request is served (those sent and those implied). */
  sessionSize: number;
}

export class FetchSessionHandler {
  private sessionId = INVALID_SESSION_ID;
  private epoch = INITIAL_EPOCH;
  /** What the leader's session holds (or will, once the request built last is served). */
  private readonly session = new Map<string, SessionPartition>();
  private generation = 0;

  constructor(private readonly log: Logger) {}

  /** The next request's session id and epoch (epoch 0: a full fetch asking for a session). */
  get metadata(): { sessionId: number; epoch: number } {
    return { sessionId: this.sessionId, epoch: this.epoch };
  }

  /** Starts a request: `add` each partition to fetch, then `build`. */
  newBuilder(): FetchRequestBuilder {
    const full = isFullFetch(this.epoch);
    if (full) this.session.clear();
    return new FetchRequestBuilder(this, this.session, full, ++this.generation);
  }

  /** @internal the builder's result */
  requestData(toSend: SessionPartition[], toForget: Array<{ topic: string; partition: number }>): FetchRequestData {
    return { sessionId: this.sessionId, epoch: this.epoch, toSend, toForget, sessionSize: this.session.size };
  }

  /**
   * Takes the response to the request built last. Returns whether its partitions may be processed:
   * not after a top-level error (FETCH_SESSION_ID_NOT_FOUND: the next fetch asks for a new
   * session; any other: it closes this one and asks for a new one), nor for a full response that
   * does not answer exactly the session's partitions, nor an incremental one answering others.
   */
  handleResponse(
    response: Pick<FetchResponse, 'errorCode' | 'sessionId' | 'responses' | 'throttleTimeMs'>,
    keyOf: (topic: string, partition: number) => string,
  ): boolean {
    if (response.errorCode !== 0) {
      this.log.info({ sessionId: this.sessionId, epoch: this.epoch, error: errorName(response.errorCode) }, 'the leader could not serve the fetch session');
      if (response.errorCode === ErrorCode.FETCH_SESSION_ID_NOT_FOUND) this.sessionId = INVALID_SESSION_ID;
      this.epoch = INITIAL_EPOCH;
      return false;
    }
    let answered = 0;
    for (const t of response.responses) {
      for (const p of t.partitions) {
        if (!this.session.has(keyOf(t.topic, p.partitionIndex))) return this.invalid(response.sessionId, 'a partition outside the session');
        answered++;
      }
    }
    if (isFullFetch(this.epoch)) {
      if (answered === 0 && response.throttleTimeMs > 0) {
        // KIP-219: a throttled full fetch is answered empty; not an error, but nothing to process
        this.sessionId = INVALID_SESSION_ID;
        this.epoch = INITIAL_EPOCH;
        return false;
      }
      if (answered !== this.session.size) return this.invalid(response.sessionId, 'a full response without every partition');
      this.sessionId = response.sessionId;
      this.epoch = response.sessionId === INVALID_SESSION_ID ? INITIAL_EPOCH : nextEpoch(INITIAL_EPOCH);
      return true;
    }
    if (response.sessionId === INVALID_SESSION_ID) {
      // the leader closed the session
      this.sessionId = INVALID_SESSION_ID;
      this.epoch = INITIAL_EPOCH;
    } else this.epoch = nextEpoch(this.epoch);
    return true;
  }

  /** The request failed (no response): the next fetch is full, closing this session and asking for a new one. */
  handleError(): void {
    this.epoch = INITIAL_EPOCH;
  }

  private invalid(responseSessionId: number, problem: string): false {
    this.log.info({ sessionId: this.sessionId, epoch: this.epoch, responseSessionId, problem }, 'invalid fetch response; the next fetch is full');
    if (isFullFetch(this.epoch)) this.sessionId = INVALID_SESSION_ID;
    this.epoch = INITIAL_EPOCH;
    return false;
  }
}

/**
 * Kafka's FetchSessionHandler.Builder. A full fetch sends every partition added; an incremental
 * one sends those new to the session or whose fetch offset, log start offset, max bytes, leader
 * epoch or last fetched epoch changed, and forgets the session's partitions not added this time.
 * Unchanged partitions cost no allocation.
 */
export class FetchRequestBuilder {
  private readonly toSend: SessionPartition[] = [];

  constructor(
    private readonly handler: FetchSessionHandler,
    private readonly session: Map<string, SessionPartition>,
    private readonly full: boolean,
    private readonly generation: number,
  ) {}

  add(
    key: string,
    topic: string,
    partition: number,
    fetchOffset: bigint,
    logStartOffset: bigint,
    maxBytes: number,
    currentLeaderEpoch: number,
    lastFetchedEpoch: number,
  ): void {
    const prev = this.session.get(key);
    if (prev && prev.seen === this.generation) return; // listed twice
    if (
      prev &&
      !this.full &&
      prev.fetchOffset === fetchOffset &&
      prev.logStartOffset === logStartOffset &&
      prev.maxBytes === maxBytes &&
      prev.currentLeaderEpoch === currentLeaderEpoch &&
      prev.lastFetchedEpoch === lastFetchedEpoch
    ) {
      prev.seen = this.generation;
      return;
    }
    const p: SessionPartition = { key, topic, partition, fetchOffset, logStartOffset, maxBytes, currentLeaderEpoch, lastFetchedEpoch, seen: this.generation };
    this.session.set(key, p);
    this.toSend.push(p);
  }

  build(): FetchRequestData {
    const toForget: Array<{ topic: string; partition: number }> = [];
    if (!this.full) {
      for (const [key, p] of this.session) {
        if (p.seen === this.generation) continue;
        this.session.delete(key);
        toForget.push({ topic: p.topic, partition: p.partition });
      }
    }
    return this.handler.requestData(this.toSend, toForget);
  }
}
