// Spec-driven property tests: for every API in API_TABLE, every version, request and response,
// build random messages from the JSON spec (interpreted here independently of the generator),
// write, read back, compare; and check that garbage / truncated input only ever raises
// ProtocolDecodeError.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Reader } from './codec/reader.js';
import { Writer } from './codec/writer.js';
import { ProtocolDecodeError } from './codec/errors.js';
import { API_TABLE } from './generated/index.js';
import type { AnyApiEntry } from './generated/index.js';

interface FieldSpec {
  name: string;
  type: string;
  versions?: string;
  nullable?: string;
  tag?: number;
  tagged?: string;
  default?: unknown;
  fields?: FieldSpec[];
}
interface MessageSpec {
  name: string;
  versions: string;
  flexible?: string;
  fields: FieldSpec[];
  structs?: { name: string; fields: FieldSpec[] }[];
}
interface Range {
  min: number;
  max: number;
}

const specDir = fileURLToPath(new URL('../specs/', import.meta.url));
const specs = new Map<string, MessageSpec>();
for (const f of readdirSync(specDir)) {
  if (f.endsWith('.json')) specs.set(f.slice(0, -5), JSON.parse(readFileSync(specDir + f, 'utf8')) as MessageSpec);
}

function range(s: string | undefined): Range | null {
  if (s === undefined || s === 'none') return null;
  const plus = /^(\d+)\+$/.exec(s);
  if (plus) return { min: Number(plus[1]), max: Infinity };
  const [a, b] = s.split('-');
  return { min: Number(a), max: Number(b ?? a) };
}
const within = (r: Range | null, v: number) => r !== null && v >= r.min && v <= r.max;

/** Everything needed to interpret one message spec. */
class Model {
  readonly structs = new Map<string, FieldSpec[]>();
  readonly flex: Range | null;
  constructor(readonly spec: MessageSpec) {
    this.flex = range(spec.flexible);
    for (const s of spec.structs ?? []) this.structs.set(s.name, s.fields);
    const walk = (fields: FieldSpec[]) => {
      for (const f of fields) {
        if (f.fields) {
          this.structs.set(f.type.replace(/^\[\]/, ''), f.fields);
          walk(f.fields);
        }
      }
    };
    walk(spec.fields);
  }
  isFlex(v: number): boolean {
    return within(this.flex, v);
  }
  fieldsOf(type: string): FieldSpec[] {
    const f = this.structs.get(type);
    if (!f) throw new Error(`no struct ${type}`);
    return f;
  }
}

const PRIM = new Set(['bool', 'int8', 'int16', 'uint16', 'int32', 'uint32', 'int64', 'float64', 'string', 'bytes', 'records', 'uuid']);

function defaultOf(m: Model, f: FieldSpec): unknown {
  const d = f.default;
  if (d === null) return null;
  if (f.type.startsWith('[]')) return [];
  if (!PRIM.has(f.type)) return defaultStruct(m, f.type);
  switch (f.type) {
    case 'int64':
      return d === undefined ? 0n : BigInt(d as string | number);
    case 'bool':
      return d === undefined ? false : d === true || d === 'true';
    case 'string':
      return d === undefined ? '' : d;
    case 'bytes':
      return Buffer.alloc(0);
    case 'records':
      return null;
    case 'uuid':
      return Buffer.alloc(16);
    default:
      return d === undefined ? 0 : Number(d);
  }
}

function defaultStruct(m: Model, type: string): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const f of m.fieldsOf(type)) o[f.name] = defaultOf(m, f);
  return o;
}

function primArb(type: string): fc.Arbitrary<unknown> {
  switch (type) {
    case 'bool':
      return fc.boolean();
    case 'int8':
      return fc.integer({ min: -128, max: 127 });
    case 'int16':
      return fc.integer({ min: -32768, max: 32767 });
    case 'uint16':
      return fc.integer({ min: 0, max: 65535 });
    case 'int32':
      return fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 });
    case 'uint32':
      return fc.integer({ min: 0, max: 2 ** 32 - 1 });
    case 'int64':
      return fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
    case 'float64':
      return fc.double();
    case 'string':
      return fc.string({ unit: 'grapheme', maxLength: 12 });
    case 'bytes':
    case 'records':
      return fc.uint8Array({ maxLength: 24 }).map((b) => Buffer.from(b));
    case 'uuid':
      return fc.uint8Array({ minLength: 16, maxLength: 16 }).map((b) => Buffer.from(b));
  }
  throw new Error(`unknown primitive ${type}`);
}

const unknownTagsArb = fc
  .uniqueArray(fc.integer({ min: 1000, max: 1_000_000 }), { maxLength: 2 })
  .chain((tags) => fc.tuple(...tags.sort((a, b) => a - b).map((tag) => fc.uint8Array({ maxLength: 6 }).map((d) => ({ tag, data: Buffer.from(d) })))));

/** Arbitrary message/struct object for `fields` at version v. */
function structArb(m: Model, fields: FieldSpec[], v: number, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const f of fields) {
    if (!within(range(f.versions ?? '0+'), v)) {
      model[f.name] = fc.constant(defaultOf(m, f));
      continue;
    }
    const nullable = f.type === 'records' || within(range(f.nullable), v);
    let arb: fc.Arbitrary<unknown>;
    if (f.type.startsWith('[]')) {
      const elem = f.type.slice(2);
      const elemArb = PRIM.has(elem) ? primArb(elem) : structArb(m, m.fieldsOf(elem), v, depth + 1);
      arb = fc.array(elemArb, { maxLength: depth > 1 ? 2 : 3 });
    } else if (PRIM.has(f.type)) {
      arb = primArb(f.type);
      // tagged fields are often left at their default (then omitted on the wire)
      if (f.tag !== undefined) arb = fc.oneof(fc.constant(defaultOf(m, f)), arb);
    } else {
      arb = structArb(m, m.fieldsOf(f.type), v, depth + 1);
      if (f.tag !== undefined) {
        // a default struct is omitted, unless it carries unknown tagged fields of its own
        const withUnknown = unknownTagsArb.map((u) => (u.length > 0 ? { ...defaultStruct(m, f.type), unknownTaggedFields: u } : defaultStruct(m, f.type)));
        arb = fc.oneof(fc.constant(defaultStruct(m, f.type)), withUnknown, arb);
      }
    }
    model[f.name] = nullable ? fc.option(arb, { nil: null }) : arb;
  }
  const rec = fc.record(model);
  if (!m.isFlex(v)) return rec;
  return fc.tuple(rec, fc.option(unknownTagsArb, { nil: undefined })).map(([o, u]) => (u && u.length > 0 ? { ...o, unknownTaggedFields: u } : o));
}

type Kind = 'request' | 'response';
const codecs = (api: AnyApiEntry, kind: Kind) => {
  const e = api as unknown as {
    readRequest(r: Reader, v: number): unknown;
    writeRequest(w: Writer, v: number, m: unknown): void;
    readResponse(r: Reader, v: number): unknown;
    writeResponse(w: Writer, v: number, m: unknown): void;
  };
  return kind === 'request' ? { read: e.readRequest.bind(e), write: e.writeRequest.bind(e) } : { read: e.readResponse.bind(e), write: e.writeResponse.bind(e) };
};

function encode(write: (w: Writer, v: number, m: unknown) => void, v: number, msg: unknown): Buffer {
  const w = new Writer(8);
  write(w, v, msg);
  return w.toBuffer();
}

function expectDecodeError(f: () => unknown): void {
  try {
    f();
  } catch (e) {
    if (!(e instanceof ProtocolDecodeError)) throw new Error(`expected ProtocolDecodeError, got ${String(e)}`, { cause: e });
    return;
  }
  throw new Error('expected a ProtocolDecodeError, decoding succeeded');
}

const KINDS: Kind[] = ['request', 'response'];

describe('messages', () => {
  it('messages – every API in API_TABLE has request and response specs', () => {
    expect(API_TABLE.length).toBeGreaterThanOrEqual(8);
    for (const api of API_TABLE) {
      for (const kind of KINDS) expect(specs.has(`${api.name}${kind === 'request' ? 'Request' : 'Response'}`)).toBe(true);
    }
  });

  for (const api of API_TABLE) {
    it(`messages – ${api.name} (key ${api.apiKey}) round-trips at every version ${api.minVersion}-${api.maxVersion}`, () => {
      for (const kind of KINDS) {
        const m = new Model(specs.get(`${api.name}${kind === 'request' ? 'Request' : 'Response'}`)!);
        const { read, write } = codecs(api, kind);
        for (let v = api.minVersion; v <= api.maxVersion; v++) {
          fc.assert(
            fc.property(structArb(m, m.spec.fields, v, 0), (msg) => {
              const bytes = encode(write, v, msg);
              const r = new Reader(bytes);
              const back = read(r, v);
              expect(r.remaining, `${m.spec.name} v${v}: unread bytes`).toBe(0);
              expect(back, `${m.spec.name} v${v}`).toEqual(msg);
              // re-encoding the decoded value gives the same bytes
              expect(encode(write, v, back).equals(bytes), `${m.spec.name} v${v}: re-encode`).toBe(true);
            }),
            { numRuns: 25 },
          );
        }
      }
    });

    it(`messages – ${api.name} (key ${api.apiKey}) decoders reject garbage and truncation with ProtocolDecodeError`, () => {
      for (const kind of KINDS) {
        const m = new Model(specs.get(`${api.name}${kind === 'request' ? 'Request' : 'Response'}`)!);
        const { read, write } = codecs(api, kind);
        for (let v = api.minVersion; v <= api.maxVersion; v++) {
          // random bytes: either a successful decode or a ProtocolDecodeError, nothing else
          fc.assert(
            fc.property(fc.uint8Array({ maxLength: 96 }), (raw) => {
              try {
                read(new Reader(Buffer.from(raw)), v);
              } catch (e) {
                if (!(e instanceof ProtocolDecodeError)) throw e;
              }
            }),
            { numRuns: 40 },
          );
          // every strict prefix of a valid encoding fails to decode
          fc.assert(
            fc.property(structArb(m, m.spec.fields, v, 0), (msg) => {
              const bytes = encode(write, v, msg);
              for (let cut = 0; cut < bytes.length; cut++) expectDecodeError(() => read(new Reader(bytes.subarray(0, cut)), v));
            }),
            { numRuns: 4 },
          );
        }
      }
    });
  }
});
