/**
 * The contract between the request dispatcher (server/request-handler.ts) and the API handlers
 * (handlers/): one handler per API key, the per-request context, and the quota and metrics hooks.
 */
import type { ApiKey, ApiResponseMap, DecodedRequestOf } from '@samsa/protocol';
import type { ConnectionInfo, RequestTiming } from '../network/socket-server.js';

/** Per-request context handed to API handlers. */
export interface RequestContext {
  conn: ConnectionInfo;
  clientId: string | null;
  /** The request's API key (the authorizer log names the request). */
  apiKey?: number;
  /** Listener the request arrived on (Metadata answers with that listener's endpoints). */
  listener: string;
  /**
   * Lets the connection start on its next request while this one still waits (its response still
   * goes out in order): called by a handler once nothing it does depends on what later requests
   * do — Produce after its append, while it waits for acks=all. Absent outside a socket server.
   */
  release?: () => void;
  /** The request's timing; handlers add purgatory waits to `remoteMs`. */
  timing?: RequestTiming;
  /**
   * Set by a handler that applied the request quota itself (Fetch: a throttled fetch is answered
   * empty) or is exempt from it (acks=0 Produce, as in Kafka): the dispatcher then leaves it alone.
   */
  requestQuotaDone?: boolean;
}

/**
 * The request quota (request_percentage): told each client request's handler time (ms, purgatory
 * waits excluded), returns the throttle time the client gets for it (0: none).
 */
export interface RequestThrottler {
  requestThrottleTimeMs(ctx: RequestContext, handlerMs: number): number;
}

/** Sees every decoded request's response body (the metrics registry counts its error codes). */
export interface ResponseObserver {
  onResponse(apiKey: number, body: unknown): void;
}

/**
 * One API's handler. `errorResponse` builds the API's response with `code` everywhere it applies:
 * the dispatcher uses it when `handle` throws, so exceptions become error codes in one place.
 * `handle` may return null for "no response" (produce with acks=0).
 */
export interface ApiHandler<K extends ApiKey, S> {
  apiKey: K;
  handle(req: DecodedRequestOf<K>, ctx: RequestContext, services: S): Promise<ApiResponseMap[K] | null>;
  errorResponse(req: DecodedRequestOf<K>, code: number): ApiResponseMap[K];
  /** Optional zero-copy encoder (Fetch): frame parts written to the socket in order. */
  encode?(req: DecodedRequestOf<K>, response: ApiResponseMap[K]): Buffer[];
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyApiHandler<S> = ApiHandler<any, S>;
