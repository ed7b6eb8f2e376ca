import type { Logger } from 'pino';
import {
  ErrorCode,
  buildApiVersionsResponse,
  decodeRequest,
  encodeResponse,
  encodeUnsupportedApiVersionsResponse,
  errorCodeOf,
  supportedApiVersions,
  type ApiResponseMap,
} from '@samsa/protocol';
import { CloseConnection, type ConnectionInfo, type FrameResponse, type RequestTiming } from '../network/socket-server.js';
import type { AnyApiHandler, RequestContext, RequestThrottler, ResponseObserver } from '../api/api-handler.js';

/**
 * Decodes a frame, routes it to its handler and encodes the answer. Unknown API keys, versions
 * other than ApiVersions' and malformed requests close the connection (as Kafka does); an
 * unsupported ApiVersions version gets the KIP-511 v0 answer with UNSUPPORTED_VERSION.
 */
export class RequestHandler<S> {
  private readonly handlers = new Map<number, AnyApiHandler<S>>();

  constructor(
    handlers: Array<AnyApiHandler<S>>,
    private readonly services: S,
    private readonly log: Logger,
    private readonly observer?: ResponseObserver,
    private readonly throttler?: RequestThrottler,
  ) {
    for (const h of handlers) this.handlers.set(h.apiKey, h);
  }

  /** API keys this broker serves: what ApiVersions advertises. */
  supportedApiKeys(): Set<number> {
    return new Set(this.handlers.keys());
  }

  private advertised() {
    const keys = this.supportedApiKeys();
    return supportedApiVersions((k) => keys.has(k));
  }

  apiVersionsResponse(throttleTimeMs = 0) {
    return buildApiVersionsResponse({ apiKeys: this.advertised(), throttleTimeMs });
  }

  async handle(frame: Buffer, conn: ConnectionInfo, timing?: RequestTiming, release?: () => void): Promise<FrameResponse> {
    const d = decodeRequest(frame);
    if (timing && d.ok) timing.apiKey = d.apiKey;
    if (!d.ok) {
      switch (d.error) {
        case 'UNSUPPORTED_VERSION':
          if (d.response) {
            if (timing) timing.apiKey = d.header.apiKey;
            this.log.info(
              { apiKey: d.header.apiKey, apiVersion: d.header.apiVersion, clientId: d.header.clientId },
              'unsupported ApiVersions version; answering with our versions (KIP-511)',
            );
            return encodeUnsupportedApiVersionsResponse(d.header.correlationId, this.advertised());
          }
          throw new CloseConnection(`unsupported version ${d.header.apiVersion} of ${d.api.name} (supported ${d.api.minVersion}-${d.api.maxVersion})`);
        case 'UNKNOWN_API_KEY':
          throw new CloseConnection(`unknown api key ${d.header.apiKey}`);
        case 'MALFORMED':
          throw new CloseConnection(`malformed request: ${d.cause.message}`, { cause: d.cause });
        default: {
          const never: never = d;
          throw new CloseConnection(`undecodable request ${JSON.stringify(never)}`);
        }
      }
    }
    const handler = this.handlers.get(d.apiKey);
    if (!handler) throw new CloseConnection(`api ${d.api.name} is not served by this broker`);
    const ctx: RequestContext = {
      conn,
      clientId: d.header.clientId,
      apiKey: d.apiKey,
      listener: conn.listener,
      ...(timing ? { timing } : {}),
      ...(release ? { release } : {}),
    };
    let body: unknown;
    const t0 = performance.now();
    const remote0 = timing?.remoteMs ?? 0;
    try {
      body = await handler.handle(d, ctx, this.services);
    } catch (err) {
      if (err instanceof CloseConnection) throw err;
      const code = errorCodeOf(err);
      if (code === ErrorCode.UNKNOWN_SERVER_ERROR) this.log.error({ err, api: d.api.name, apiVersion: d.apiVersion }, 'request failed');
      else this.log.debug({ err, api: d.api.name, code }, 'request failed with an error code');
      body = handler.errorResponse(d, code);
    }
    if (this.throttler && !ctx.requestQuotaDone && !fromBroker(d.body)) {
      const handlerMs = performance.now() - t0 - ((timing?.remoteMs ?? 0) - remote0);
      const t = this.throttler.requestThrottleTimeMs(ctx, handlerMs);
      // the response reports the longer of the request and byte-rate throttles (where it has the field)
      if (t > 0 && body !== null && typeof body === 'object' && 'throttleTimeMs' in body) {
        const b = body as { throttleTimeMs: number };
        b.throttleTimeMs = Math.max(b.throttleTimeMs, t);
      }
    }
    this.observer?.onResponse(d.apiKey, body);
    if (body === null) return null;
    if (handler.encode) return handler.encode(d, body);
    return encodeResponse(d.apiKey, d.apiVersion, d.header.correlationId, body as ApiResponseMap[typeof d.apiKey]);
  }
}

/** A follower's Fetch (replica id ≥ 0): a cluster action, exempt from the request quota. */
function fromBroker(body: unknown): boolean {
  if (body === null || typeof body !== 'object') return false;
  const b = body as { replicaId?: number; replicaState?: { replicaId?: number } };
  return (b.replicaId ?? -1) >= 0 || (b.replicaState?.replicaId ?? -1) >= 0;
}
