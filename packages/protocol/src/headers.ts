import type { Reader } from './codec/reader.js';
import type { Writer } from './codec/writer.js';
import type { TaggedField } from './codec/types.js';

/**
 * Request header.
 * v0: api_key INT16, api_version INT16, correlation_id INT32
 * v1: v0 + client_id NULLABLE_STRING
 * v2: v1 + tagged fields (client_id stays a classic INT16-length string)
 */
export interface RequestHeader {
  apiKey: number;
  apiVersion: number;
  correlationId: number;
  /** null in header v0 or when the client sends a null id. */
  clientId: string | null;
  unknownTaggedFields?: TaggedField[] | undefined;
}

export type RequestHeaderVersion = 0 | 1 | 2;
export type ResponseHeaderVersion = 0 | 1;

export function readRequestHeader(r: Reader, headerVersion: RequestHeaderVersion): RequestHeader {
  const apiKey = r.readInt16();
  const apiVersion = r.readInt16();
  const correlationId = r.readInt32();
  const clientId = headerVersion >= 1 ? r.readNullableString() : null;
  const unknownTaggedFields = headerVersion >= 2 ? r.readTaggedFields() : undefined;
  return { apiKey, apiVersion, correlationId, clientId, unknownTaggedFields };
}

export function writeRequestHeader(w: Writer, headerVersion: RequestHeaderVersion, h: RequestHeader): void {
  w.writeInt16(h.apiKey);
  w.writeInt16(h.apiVersion);
  w.writeInt32(h.correlationId);
  if (headerVersion >= 1) w.writeNullableString(h.clientId);
  if (headerVersion >= 2) w.writeTaggedFields(h.unknownTaggedFields);
}

/**
 * Response header.
 * v0: correlation_id INT32
 * v1: v0 + tagged fields
 */
export interface ResponseHeader {
  correlationId: number;
  unknownTaggedFields?: TaggedField[] | undefined;
}

export function readResponseHeader(r: Reader, headerVersion: ResponseHeaderVersion): ResponseHeader {
  const correlationId = r.readInt32();
  const unknownTaggedFields = headerVersion >= 1 ? r.readTaggedFields() : undefined;
  return { correlationId, unknownTaggedFields };
}

export function writeResponseHeader(w: Writer, headerVersion: ResponseHeaderVersion, h: ResponseHeader): void {
  w.writeInt32(h.correlationId);
  if (headerVersion >= 1) w.writeTaggedFields(h.unknownTaggedFields);
}

const API_VERSIONS_KEY = 18;
const CONTROLLED_SHUTDOWN_KEY = 7;

/**
 * Header version a request uses: v2 for flexible API versions, v1 otherwise
 * (v0 only for ControlledShutdown v0, which predates client ids).
 */
export function requestHeaderVersion(apiKey: number, apiVersion: number, flexible: boolean): RequestHeaderVersion {
  if (flexible) return 2;
  if (apiKey === CONTROLLED_SHUTDOWN_KEY && apiVersion === 0) return 0;
  return 1;
}

/**
 * Header version a response uses: v1 for flexible API versions, v0 otherwise.
 * ApiVersions responses always use v0, so a client that does not know the broker's
 * versions can still read the correlation id and error code (KIP-511).
 */
export function responseHeaderVersion(apiKey: number, flexible: boolean): ResponseHeaderVersion {
  if (apiKey === API_VERSIONS_KEY) return 0;
  return flexible ? 1 : 0;
}
