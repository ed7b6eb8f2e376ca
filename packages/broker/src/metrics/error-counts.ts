import { ErrorCode } from '@samsa/protocol';

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
  if (body === null || typeof body !== 'object' || Buffer.isBuffer(body)) return into;
  if (Array.isArray(body)) {
    for (const x of body) countErrorCodes(x, into);
    return into;
  }
  for (const [k, v] of Object.entries(body)) {
    if (k === 'errorCode' && typeof v === 'number') into.set(v, (into.get(v) ?? 0) + 1);
    else if (v !== null && typeof v === 'object') countErrorCodes(v, into);
  }
  return into;
}
