/**
 * A reader for Java's JAAS login configuration format, as Kafka's brokers and tools take it from the
 * file named by `-Djava.security.auth.login.config=...`:
 *
 *     Client {
 *       org.apache.zookeeper.server.auth.DigestLoginModule required
 *       username="kafka"
 *       password="kafka-secret";
 *     };
 *
 * Sections hold login modules; each module has a control flag and `key=value` options (values
 * quoted or bare). `//` and `/* *\/` comments are skipped.
 */

export interface JaasLoginModule {
  loginModule: string;
  /** required | requisite | sufficient | optional */
  flag: string;
  options: Record<string, string>;
}

export class JaasParseError extends Error {}

type Token = { kind: 'word' | 'string' | 'punct'; text: string };

function tokenize(text: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (/\s/.test(ch)) {
      i++;
    } else if (text.startsWith('//', i)) {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (text.startsWith('/*', i)) {
      const end = text.indexOf('*/', i + 2);
      if (end < 0) throw new JaasParseError('unterminated comment');
      i = end + 2;
    } else if (ch === '"' || ch === "'") {
      let j = i + 1;
      let s = '';
      while (j < text.length && text[j] !== ch) {
        if (text[j] === '\\' && j + 1 < text.length) j++;
        s += text[j];
        j++;
      }
      if (j >= text.length) throw new JaasParseError('unterminated quoted value');
      out.push({ kind: 'string', text: s });
      i = j + 1;
    } else if ('{};='.includes(ch)) {
      out.push({ kind: 'punct', text: ch });
      i++;
    } else {
      let j = i;
      while (j < text.length && !/\s/.test(text[j]!) && !'{};="\''.includes(text[j]!)) j++;
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

  private peek(): Token | undefined {
    return this.t[this.i];
  }

  private next(what: string): Token {
    const tok = this.t[this.i++];
    if (!tok) throw new JaasParseError(`unexpected end of JAAS configuration, expected ${what}`);
    return tok;
  }

  private expectPunct(p: string): void {
    const tok = this.next(`'${p}'`);
    if (tok.kind !== 'punct' || tok.text !== p) throw new JaasParseError(`expected '${p}' but found '${tok.text}'`);
  }

  private word(what: string): string {
    const tok = this.next(what);
    if (tok.kind !== 'word') throw new JaasParseError(`expected ${what} but found '${tok.text}'`);
    return tok.text;
  }

  isPunct(p: string): boolean {
    const tok = this.peek();
    return tok?.kind === 'punct' && tok.text === p;
  }

  /** `module flag k=v k=v;` */
  module(): JaasLoginModule {
    const loginModule = this.word('a login module class');
    const flag = this.word('a control flag');
    if (!['required', 'requisite', 'sufficient', 'optional'].includes(flag.toLowerCase()))
      throw new JaasParseError(`invalid control flag '${flag}' for ${loginModule}`);
    const options: Record<string, string> = {};
    while (!this.isPunct(';')) {
      const key = this.word('an option name');
      this.expectPunct('=');
      const v = this.next(`a value for ${key}`);
      if (v.kind === 'punct') throw new JaasParseError(`expected a value for ${key} but found '${v.text}'`);
      options[key] = v.text;
    }
    this.expectPunct(';');
    return { loginModule, flag: flag.toLowerCase(), options };
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
    out[m[1]!] = v;
  }
  return out;
}
