import { API_KEYS, ErrorCode } from '@samsa/protocol';

const NAMES = new Map<number, string>(Object.entries(ErrorCode).map(([name, code]) => [code as number, name]));

/** Kafka's error name for a code (as in the ErrorsPerSec `error` tag); unknown codes by number. */
export function errorName(code: number): string {
  return NAMES.get(code) ?? `UNKNOWN_${code}`;
}

/**
 * Kafka's AbstractResponse.errorCounts: every `errorCode` field in a response (top level, per
 * topic, per partition, per group), NONE included. Walks the response's objects and arrays once;
 * record data (Buffers) is never entered, so the cost is per partition, not per record.
 */
export function countErrorCodes(body: unknown, into = new Map<number, number>()): Map<number, number> {
  if (body !== null && typeof body === 'object') walk(body as object, into);
  return into;
}

function walk(v: object, into: Map<number, number>): void {
  if (ArrayBuffer.isView(v)) return;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      if (x !== null && typeof x === 'object') walk(x, into);
    }
    return;
  }
  const o = v as Record<string, unknown>;
  for (const k in o) {
    const x = o[k];
    if (typeof x === 'object') {
      if (x !== null) walk(x, into);
    } else if (typeof x === 'number' && k === 'errorCode') {
      into.set(x, (into.get(x) ?? 0) + 1);
    }
  }
}

function add(into: Map<number, number>, code: unknown): void {
  if (typeof code === 'number') into.set(code, (into.get(code) ?? 0) + 1);
}

/**
 * countErrorCodes for a response of `apiKey`: Produce, Fetch (most of a broker's responses) and
 * Metadata (the largest) are counted along their known shape — Kafka's ProduceResponse /
 * FetchResponse / MetadataResponse.errorCounts: each partition's error, and Fetch's top-level one or
 * each Metadata topic's — with the same result as the generic walk, which every other API gets.
 */
export function countResponseErrors(apiKey: number, body: unknown, into = new Map<number, number>()): Map<number, number> {
  if (body === null || typeof body !== 'object') return into;
  const b = body as { errorCode?: unknown; responses?: unknown };
  if ((apiKey === API_KEYS.Produce || apiKey === API_KEYS.Fetch) && Array.isArray(b.responses)) {
    if (apiKey === API_KEYS.Fetch) add(into, b.errorCode);
    const field = apiKey === API_KEYS.Produce ? 'partitionResponses' : 'partitions';
    for (const t of b.responses as Array<Record<string, unknown>>) {
      const parts = t[field];
      if (!Array.isArray(parts)) continue;
      for (const p of parts as Array<{ errorCode?: unknown }>) add(into, p.errorCode);
    }
    return into;
  }
  if (apiKey === API_KEYS.Metadata && Array.isArray((body as { topics?: unknown }).topics)) {
    // Kafka's MetadataResponse.errorCounts: each topic's error and each partition's; a 10,000-partition
    // answer is not walked through its replica, ISR and offline-replica arrays
    for (const t of (body as { topics: Array<{ errorCode?: unknown; partitions?: unknown }> }).topics) {
      add(into, t.errorCode);
      if (!Array.isArray(t.partitions)) continue;
      for (const p of t.partitions as Array<{ errorCode?: unknown }>) add(into, p.errorCode);
    }
    return into;
  }
  return countErrorCodes(body, into);
}
