/**
 * Kafka's JAAS configuration syntax, in its two forms:
 * - a `sasl.jaas.config` value: login module entries `<LoginModule class> <flag> [<option>=<value>]* ;`
 *   (brokers read their PLAIN users and inter-broker credentials from it, clients their username
 *   and password);
 * - a JAAS file named by `-Djava.security.auth.login.config=` (KAFKA_OPTS), with named sections
 *   `Client { <entries> };` (brokers read their ZooKeeper credentials from it).
 * The flag is required, requisite, sufficient or optional; values are bare words or quoted
 * strings (backslash escapes the next character, as java.io.StreamTokenizer reads them); `//` and
 * `/* *\/` comments are skipped.
 */

export const JaasControlFlag = { REQUIRED: 'required', REQUISITE: 'requisite', SUFFICIENT: 'sufficient', OPTIONAL: 'optional' } as const;
export type JaasControlFlag = (typeof JaasControlFlag)[keyof typeof JaasControlFlag];

export interface JaasLoginModule {
  readonly loginModule: string;
  readonly flag: JaasControlFlag;
  readonly options: Readonly<Record<string, string>>;
}

export class JaasParseError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'JaasParseError';
  }
}

const FLAGS = new Set<string>(Object.values(JaasControlFlag));
const PUNCT = '{};=';

type Token = { kind: 'word' | 'string' | 'punct'; text: string };

function tokenize(text: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i] as string;
    if (/\s/.test(ch)) {
      i++;
    } else if (text.startsWith('//', i)) {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (text.startsWith('/*', i)) {
      const end = text.indexOf('*/', i + 2);
      if (end < 0) throw new JaasParseError('Invalid JAAS config: unterminated comment');
      i = end + 2;
    } else if (ch === '"' || ch === "'") {
      let j = i + 1;
      let s = '';
      while (j < text.length && text[j] !== ch) {
        if (text[j] === '\\' && j + 1 < text.length) j++;
        s += text[j];
        j++;
      }
      if (j >= text.length) throw new JaasParseError('Invalid JAAS config: unterminated quoted value');
      out.push({ kind: 'string', text: s });
      i = j + 1;
    } else if (PUNCT.includes(ch)) {
      out.push({ kind: 'punct', text: ch });
      i++;
    } else {
      let j = i;
      while (j < text.length && !/\s/.test(text[j] as string) && !`${PUNCT}"'`.includes(text[j] as string)) j++;
      out.push({ kind: 'word', text: text.slice(i, j) });
      i = j;
    }
  }
  return out;
}

class Parser {
  private i = 0;
  constructor(private readonly t: Token[]) {}

  get done(): boolean {
    return this.i >= this.t.length;
  }

  private next(what: string): Token {
    const tok = this.t[this.i++];
    if (!tok) throw new JaasParseError(`Invalid JAAS config: unexpected end, expected ${what}`);
    return tok;
  }

  private word(what: string): string {
    const tok = this.next(what);
    if (tok.kind !== 'word') throw new JaasParseError(`Invalid JAAS config: expected ${what} but found '${tok.text}'`);
    return tok.text;
  }

  private expectPunct(p: string): void {
    const tok = this.next(`'${p}'`);
    if (tok.kind !== 'punct' || tok.text !== p) throw new JaasParseError(`Invalid JAAS config: expected '${p}' but found '${tok.text}'`);
  }

  isPunct(p: string): boolean {
    const tok = this.t[this.i];
    return tok?.kind === 'punct' && tok.text === p;
  }

  /** `module flag k=v k=v;` */
  module(): JaasLoginModule {
    const loginModule = this.word('a login module class');
    const flag = this.word(`a control flag for ${loginModule}`);
    if (!FLAGS.has(flag.toLowerCase())) {
      throw new JaasParseError(`Invalid JAAS config: invalid control flag '${flag}' for ${loginModule} (required, requisite, sufficient or optional)`);
    }
    const options: Record<string, string> = {};
    while (!this.isPunct(';')) {
      const key = this.word(`an option name or ';' in the entry for ${loginModule}`);
      const eq = this.t[this.i];
      if (eq?.kind !== 'punct' || eq.text !== '=') throw new JaasParseError(`Value not specified for key: ${key}`);
      this.i++;
      const v = this.t[this.i++];
      if (!v || v.kind === 'punct') throw new JaasParseError(`Value not specified for key: ${key}`);
      options[key] = v.text;
    }
    this.expectPunct(';');
    return Object.freeze({ loginModule, flag: flag.toLowerCase() as JaasControlFlag, options: Object.freeze(options) });
  }

  /** `Name { module...; module...; };` */
  section(): [string, JaasLoginModule[]] {
    const name = this.word('a login context name');
    this.expectPunct('{');
    const modules: JaasLoginModule[] = [];
    while (!this.isPunct('}')) modules.push(this.module());
    this.expectPunct('}');
    if (this.isPunct(';')) this.expectPunct(';');
    return [name, modules];
  }
}

/** The login module entries of a `sasl.jaas.config` value. Throws JaasParseError. */
export function parseJaasConfig(text: string): JaasLoginModule[] {
  const p = new Parser(tokenize(text));
  const entries: JaasLoginModule[] = [];
  while (!p.done) entries.push(p.module());
  return entries;
}

/**
 * `sasl.jaas.config` takes exactly one login module (Kafka: "JAAS config property contains N
 * login modules, should be 1 module").
 */
export function parseSingleJaasEntry(text: string): JaasLoginModule {
  const entries = parseJaasConfig(text);
  if (entries.length !== 1) throw new JaasParseError(`JAAS config property contains ${entries.length} login modules, should be 1 module`);
  return entries[0] as JaasLoginModule;
}

/** Parses a JAAS file: login context name → its login modules. Throws JaasParseError. */
export function parseJaasFile(text: string): Map<string, JaasLoginModule[]> {
  const p = new Parser(tokenize(text));
  const sections = new Map<string, JaasLoginModule[]>();
  while (!p.done) {
    const [name, modules] = p.section();
    sections.set(name, [...(sections.get(name) ?? []), ...modules]);
  }
  return sections;
}

/**
 * Reads the JVM system properties (`-Dkey=value`) out of a java command line such as the
 * KAFKA_OPTS environment variable. Values may be quoted (`-Dkey="a b"`).
 */
export function parseJvmSystemProperties(opts: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!opts) return out;
  const re = /(?:^|\s)-D([^=\s]+)(?:=("[^"]*"|'[^']*'|\S*))?/g;
  for (const m of opts.matchAll(re)) {
    let v = m[2] ?? '';
    if (v.length >= 2 && (v[0] === '"' || v[0] === "'") && v.endsWith(v[0])) v = v.slice(1, -1);
    out[m[1] as string] = v;
  }
  return out;
}
