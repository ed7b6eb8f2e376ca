import { ProtocolDecodeError } from './codec/errors.js';
import { Reader } from './codec/reader.js';
import { Writer } from './codec/writer.js';
import { readRequestHeader, readResponseHeader, requestHeaderVersion, responseHeaderVersion, writeRequestHeader, writeResponseHeader } from './headers.js';
import type { RequestHeader, ResponseHeader } from './headers.js';
import { getApi, isFlexibleVersion } from './generated/index.js';
import type { AnyApiEntry, ApiEntry, ApiKey, ApiRequestMap, ApiResponseMap } from './generated/index.js';
import { apiVersionsFallback } from './api-versions.js';

/** A request decoded successfully; narrowing on `apiKey` narrows `body`. */
export interface DecodedRequestOf<K extends ApiKey> {
  ok: true;
  apiKey: K;
  apiVersion: number;
  header: RequestHeader;
  body: ApiRequestMap[K];
  api: ApiEntry<K>;
  /** Bytes after the body (0 for well-formed requests; tolerated like Kafka does). */
  trailingBytes: number;
}

export type DecodedRequest = { [K in ApiKey]: DecodedRequestOf<K> }[ApiKey];

export type RequestDecodeFailure =
  /** The api key is not in API_TABLE. Kafka closes the connection. */
  | { ok: false; error: 'UNKNOWN_API_KEY'; header: RequestHeader }
  /**
   * The version is outside [minVersion, maxVersion]. For ApiVersions, `response` holds the
   * KIP-511 reply frame to send; for other APIs Kafka closes the connection.
   */
  | { ok: false; error: 'UNSUPPORTED_VERSION'; header: RequestHeader; api: AnyApiEntry; response: Buffer | undefined }
  /** Truncated or garbage header/body. `header` is set when the header itself decoded. */
  | { ok: false; error: 'MALFORMED'; header: RequestHeader | undefined; cause: ProtocolDecodeError };

export type DecodeRequestResult = DecodedRequest | RequestDecodeFailure;

/**
 * Decodes one request frame (the bytes after the 4-byte size prefix): header, api lookup,
 * version check, body. Never throws on bad input; every failure is a typed result.
 * Bytes/records fields in the body are views of `frame`.
 */
export function decodeRequest(frame: Buffer): DecodeRequestResult {
  const r = new Reader(frame);
  let apiKey: number;
  let apiVersion: number;
  let correlationId: number;
  try {
    apiKey = r.readInt16();
    apiVersion = r.readInt16();
    correlationId = r.readInt32();
  } catch (e) {
    if (e instanceof ProtocolDecodeError) return { ok: false, error: 'MALFORMED', header: undefined, cause: e.withContext('request header') };
    throw e;
  }
  const api = getApi(apiKey);
  if (api === undefined || apiVersion < api.minVersion || apiVersion > api.maxVersion) {
    // Header v1 and v2 share the client id encoding; the tagged fields of v2 are not needed.
    let clientId: string | null = null;
    try {
      clientId = r.readNullableString();
    } catch {
      // header v0 or a truncated client id: not needed to answer
    }
    const header: RequestHeader = { apiKey, apiVersion, correlationId, clientId };
    if (api === undefined) return { ok: false, error: 'UNKNOWN_API_KEY', header };
    return { ok: false, error: 'UNSUPPORTED_VERSION', header, api, response: apiVersionsFallback(header) };
  }
  r.offset = 0;
  let header: RequestHeader | undefined;
  try {
    header = readRequestHeader(r, requestHeaderVersion(apiKey, apiVersion, isFlexibleVersion(api, apiVersion)));
    const body = api.readRequest(r, apiVersion);
    return { ok: true, apiKey: api.apiKey, apiVersion, header, body, api, trailingBytes: r.remaining } as DecodedRequest;
  } catch (e) {
    if (e instanceof ProtocolDecodeError) {
      return { ok: false, error: 'MALFORMED', header, cause: e.withContext(`${api.name} request v${apiVersion}${header ? '' : ' header'}`) };
    }
    throw e;
  }
}

/** Encodes a response frame, 4-byte size prefix included (header v0/v1 chosen per api and version). */
export function encodeResponse<K extends ApiKey>(apiKey: K, apiVersion: number, correlationId: number, body: ApiResponseMap[K]): Buffer {
  const api = lookup(apiKey, apiVersion);
  const w = new Writer(256);
  w.writeInt32(0); // size, patched below
  writeResponseHeader(w, responseHeaderVersion(apiKey, isFlexibleVersion(api, apiVersion)), { correlationId });
  (api as ApiEntry<K>).writeResponse(w, apiVersion, body);
  const frame = w.finish();
  frame.writeInt32BE(frame.length - 4, 0);
  return frame;
}

/**
 * Like `encodeResponse`, but `byReference` buffers found in the body (records) are not copied:
 * the frame comes back as chunks to write in order (the size prefix counts them all).
 */
export function encodeResponseChunks<K extends ApiKey>(
  apiKey: K,
  apiVersion: number,
  correlationId: number,
  body: ApiResponseMap[K],
  byReference: Iterable<Buffer>,
): Buffer[] {
  const api = lookup(apiKey, apiVersion);
  const w = new Writer(1024);
  for (const b of byReference) w.byReference(b);
  w.writeInt32(0);
  writeResponseHeader(w, responseHeaderVersion(apiKey, isFlexibleVersion(api, apiVersion)), { correlationId });
  (api as ApiEntry<K>).writeResponse(w, apiVersion, body);
  const total = w.totalLength;
  const chunks = w.finishChunks();
  chunks[0]!.writeInt32BE(total - 4, 0);
  return chunks;
}

/**
 * Like `encodeRequest`, but `byReference` buffers found in the body (Produce records) are not
 * copied: the frame comes back as chunks to write in order (the size prefix counts them all).
 */
export function encodeRequestChunks<K extends ApiKey>(
  apiKey: K,
  apiVersion: number,
  correlationId: number,
  clientId: string | null,
  body: ApiRequestMap[K],
  byReference: Iterable<Buffer>,
): Buffer[] {
  const api = lookup(apiKey, apiVersion);
  const w = new Writer(512);
  for (const b of byReference) w.byReference(b);
  w.writeInt32(0);
  writeRequestHeader(w, requestHeaderVersion(apiKey, apiVersion, isFlexibleVersion(api, apiVersion)), { apiKey, apiVersion, correlationId, clientId });
  (api as ApiEntry<K>).writeRequest(w, apiVersion, body);
  const total = w.totalLength;
  const chunks = w.finishChunks();
  chunks[0]!.writeInt32BE(total - 4, 0);
  return chunks;
}

/** Encodes a request frame, 4-byte size prefix included (client side; used by tests and tools). */
export function encodeRequest<K extends ApiKey>(apiKey: K, apiVersion: number, correlationId: number, clientId: string | null, body: ApiRequestMap[K]): Buffer {
  const api = lookup(apiKey, apiVersion);
  const w = new Writer(256);
  w.writeInt32(0);
  writeRequestHeader(w, requestHeaderVersion(apiKey, apiVersion, isFlexibleVersion(api, apiVersion)), {
    apiKey,
    apiVersion,
    correlationId,
    clientId,
  });
  (api as ApiEntry<K>).writeRequest(w, apiVersion, body);
  const frame = w.finish();
  frame.writeInt32BE(frame.length - 4, 0);
  return frame;
}

export interface DecodedResponse<K extends ApiKey> {
  header: ResponseHeader;
  body: ApiResponseMap[K];
  trailingBytes: number;
}

/**
 * Decodes a response frame (without the size prefix) for a request sent with `apiKey`/`apiVersion`.
 * Throws ProtocolDecodeError on malformed input.
 */
export function decodeResponse<K extends ApiKey>(apiKey: K, apiVersion: number, frame: Buffer): DecodedResponse<K> {
  const api = lookup(apiKey, apiVersion);
  const r = new Reader(frame);
  try {
    const header = readResponseHeader(r, responseHeaderVersion(apiKey, isFlexibleVersion(api, apiVersion)));
    const body = (api as ApiEntry<K>).readResponse(r, apiVersion);
    return { header, body, trailingBytes: r.remaining };
  } catch (e) {
    if (e instanceof ProtocolDecodeError) throw e.withContext(`${api.name} response v${apiVersion}`);
    throw e;
  }
}

function lookup(apiKey: number, apiVersion: number): AnyApiEntry {
  const api = getApi(apiKey);
  if (api === undefined) throw new RangeError(`unknown api key ${apiKey}`);
  if (apiVersion < api.minVersion || apiVersion > api.maxVersion) {
    throw new RangeError(`${api.name} v${apiVersion} is outside ${api.minVersion}-${api.maxVersion}`);
  }
  return api;
}
