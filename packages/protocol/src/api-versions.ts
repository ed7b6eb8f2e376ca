import { Writer } from './codec/writer.js';
import { writeResponseHeader } from './headers.js';
import type { RequestHeader } from './headers.js';
import { API_TABLE, getApi, writeApiVersionsResponse } from './generated/index.js';
import type {
  ApiVersionsResponse,
  ApiVersionsResponseApiKey,
  ApiVersionsResponseFinalizedFeature,
  ApiVersionsResponseSupportedFeature,
} from './generated/index.js';

const API_VERSIONS_KEY = 18;
const UNSUPPORTED_VERSION_CODE = 35;

/** [min, max] per api key, from API_TABLE (optionally filtered, e.g. to hide APIs a broker does not serve yet). */
export function supportedApiVersions(include?: (apiKey: number) => boolean): ApiVersionsResponseApiKey[] {
  const out: ApiVersionsResponseApiKey[] = [];
  for (const e of API_TABLE) {
    if (include && e.apiKey !== API_VERSIONS_KEY && !include(e.apiKey)) continue;
    out.push({ apiKey: e.apiKey, minVersion: e.minVersion, maxVersion: e.maxVersion });
  }
  return out.sort((a, b) => a.apiKey - b.apiKey);
}

export interface ApiVersionsResponseOptions {
  errorCode?: number;
  throttleTimeMs?: number;
  apiKeys?: ApiVersionsResponseApiKey[];
  supportedFeatures?: ApiVersionsResponseSupportedFeature[];
  finalizedFeaturesEpoch?: bigint;
  finalizedFeatures?: ApiVersionsResponseFinalizedFeature[];
}

/** The ApiVersions response body advertising API_TABLE (or `opts.apiKeys`). */
export function buildApiVersionsResponse(opts: ApiVersionsResponseOptions = {}): ApiVersionsResponse {
  return {
    errorCode: opts.errorCode ?? 0,
    apiKeys: opts.apiKeys ?? supportedApiVersions(),
    throttleTimeMs: opts.throttleTimeMs ?? 0,
    supportedFeatures: opts.supportedFeatures ?? [],
    finalizedFeaturesEpoch: opts.finalizedFeaturesEpoch ?? -1n,
    finalizedFeatures: opts.finalizedFeatures ?? [],
    zkMigrationReady: false,
  };
}

/**
 * KIP-511: the reply to an ApiVersions request whose version is above our maximum.
 * The client cannot know our encoding, so the reply is always ApiVersions v0 (header v0)
 * with error UNSUPPORTED_VERSION (35) and our supported versions; the client then retries
 * with the highest ApiVersions version we list.
 *
 * Returns the whole frame, 4-byte size prefix included.
 */
export function encodeUnsupportedApiVersionsResponse(correlationId: number, apiKeys: ApiVersionsResponseApiKey[] = supportedApiVersions()): Buffer {
  const w = new Writer(16 + apiKeys.length * 6);
  w.writeInt32(0); // size, patched below
  writeResponseHeader(w, 0, { correlationId });
  writeApiVersionsResponse(w, 0, buildApiVersionsResponse({ errorCode: UNSUPPORTED_VERSION_CODE, apiKeys }));
  const frame = w.finish();
  frame.writeInt32BE(frame.length - 4, 0);
  return frame;
}

/**
 * KIP-511 for a decoded request header: the fallback frame when `header` is an ApiVersions request
 * with a version above our maximum, otherwise undefined (the request is handled normally).
 */
export function apiVersionsFallback(header: RequestHeader, apiKeys?: ApiVersionsResponseApiKey[]): Buffer | undefined {
  if (header.apiKey !== API_VERSIONS_KEY) return undefined;
  const api = getApi(API_VERSIONS_KEY);
  if (api === undefined || header.apiVersion <= api.maxVersion) return undefined;
  return encodeUnsupportedApiVersionsResponse(header.correlationId, apiKeys);
}
