import { ZNodeDecodeError } from './zk-errors.js';

export type JsonObject = Record<string, unknown>;

/** Parses a znode payload as a JSON object; anything else is a ZNodeDecodeError naming the path. */
export function parseObject(path: string, data: Buffer): JsonObject {
  let v: unknown;
  const text = data.toString('utf8');
  try {
    v = JSON.parse(text);
  } catch (err) {
    throw new ZNodeDecodeError(path, `malformed JSON (${(err as Error).message})`, { cause: err });
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new ZNodeDecodeError(path, 'expected a JSON object');
  rawText.set(v as JsonObject, text);
  return v as JsonObject;
}

/** Raw payload text of parsed objects, for the few fields whose key order JSON.parse loses. */
const rawText = new WeakMap<JsonObject, string>();

/** Key order of the object at top-level `key` as it appears in the raw text (numeric keys included). */
function rawKeyOrder(obj: JsonObject, key: string): string[] | undefined {
  const text = rawText.get(obj);
  if (!text) return undefined;
  const at = text.indexOf(`${JSON.stringify(key)}`);
  if (at < 0) return undefined;
  const open = text.indexOf('{', at);
  const close = text.indexOf('}', open);
  if (open < 0 || close < 0) return undefined;
  return [...text.slice(open + 1, close).matchAll(/"((?:[^"\\]|\\.)*)"\s*:/g)].map((m) => m[1]!);
}

/** Typed field readers over a parsed znode object; every failure names the path and the field. */
export class Fields {
  constructor(
    readonly path: string,
    readonly obj: JsonObject,
  ) {}

  private fail(key: string, want: string): never {
    throw new ZNodeDecodeError(this.path, `field "${key}" should be ${want}, got ${JSON.stringify(this.obj[key])}`);
  }

  has(key: string): boolean {
    return this.obj[key] !== undefined && this.obj[key] !== null;
  }

  int(key: string): number {
    const v = this.obj[key];
    if (typeof v !== 'number' || !Number.isInteger(v)) this.fail(key, 'an integer');
    return v;
  }

  intOr(key: string, dflt: number): number {
    return this.has(key) ? this.int(key) : dflt;
  }

  str(key: string): string {
    const v = this.obj[key];
    if (typeof v !== 'string') this.fail(key, 'a string');
    return v;
  }

  strOr<T>(key: string, dflt: T): string | T {
    return this.has(key) ? this.str(key) : dflt;
  }

  /** A long carried as a JSON string (Kafka writes timestamps and producer-id blocks that way). */
  longString(key: string): string {
    const v = this.obj[key];
    if (typeof v === 'number' && Number.isInteger(v)) return String(v);
    if (typeof v !== 'string' || !/^-?\d+$/.test(v)) this.fail(key, 'a decimal string');
    return v;
  }

  intArray(key: string): number[] {
    const v = this.obj[key];
    if (!Array.isArray(v) || !v.every((x) => typeof x === 'number' && Number.isInteger(x))) this.fail(key, 'an array of integers');
    return v as number[];
  }

  strArray(key: string): string[] {
    const v = this.obj[key];
    if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) this.fail(key, 'an array of strings');
    return v as string[];
  }

  object(key: string): JsonObject {
    const v = this.obj[key];
    if (v === null || typeof v !== 'object' || Array.isArray(v)) this.fail(key, 'an object');
    return v as JsonObject;
  }

  objectOr(key: string): JsonObject {
    return this.has(key) ? this.object(key) : {};
  }

  array(key: string): unknown[] {
    const v = this.obj[key];
    if (!Array.isArray(v)) this.fail(key, 'an array');
    return v;
  }

  /** `{"0":[1,2],...}` → Map keeping the payload's key order (JS objects would reorder numeric keys). */
  partitionReplicaMap(key: string): Map<number, number[]> {
    const out = new Map<number, number[]>();
    if (!this.has(key)) return out;
    const o = this.object(key);
    const order = rawKeyOrder(this.obj, key);
    const keys = order && order.length === Object.keys(o).length && order.every((k) => k in o) ? order : Object.keys(o);
    for (const k of keys) {
      const v = o[k];
      const p = Number(k);
      if (!Number.isInteger(p) || p < 0) this.fail(key, 'a map from partition number to replica list');
      if (!Array.isArray(v) || !v.every((x) => typeof x === 'number' && Number.isInteger(x))) {
        this.fail(key, 'a map from partition number to replica list');
      }
      out.set(p, v as number[]);
    }
    return out;
  }

  version(...allowed: number[]): number {
    const v = this.int('version');
    if (allowed.length > 0 && !allowed.includes(v)) {
      throw new ZNodeDecodeError(this.path, `unsupported version ${v} (expected ${allowed.join(' or ')})`);
    }
    return v;
  }
}

/** Object key order is preserved by JSON.parse for string keys only; this keeps ours explicit. */
export function partitionMapJson(m: ReadonlyMap<number, readonly number[]>): string {
  const parts: string[] = [];
  for (const [p, r] of m) parts.push(`${JSON.stringify(String(p))}:${JSON.stringify(r)}`);
  return `{${parts.join(',')}}`;
}

/** Emits a JSON object with keys in exactly the given order (Kafka's payload order). */
export function orderedJson(entries: Array<[string, unknown] | [string, unknown, 'raw']>): string {
  return `{${entries.map((e) => `${JSON.stringify(e[0])}:${e[2] === 'raw' ? (e[1] as string) : JSON.stringify(e[1])}`).join(',')}}`;
}

export function utf8(s: string): Buffer {
  return Buffer.from(s, 'utf8');
}
