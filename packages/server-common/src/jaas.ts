/**
 * Kafka's JAAS configuration syntax (`sasl.jaas.config`, JaasConfig): one or more entries
 * `<LoginModule class> <flag> [<option>=<value>]* ;` where the flag is required, requisite,
 * sufficient or optional and values are bare words or double-quoted strings (backslash escapes
 * the next character). Brokers read their PLAIN users and inter-broker credentials from it;
 * clients (the tools' --command-config) their username and password.
 */

export const JaasControlFlag = { REQUIRED: 'required', REQUISITE: 'requisite', SUFFICIENT: 'sufficient', OPTIONAL: 'optional' } as const;
export type JaasControlFlag = (typeof JaasControlFlag)[keyof typeof JaasControlFlag];

export interface JaasEntry {
  readonly loginModule: string;
  readonly flag: JaasControlFlag;
  readonly options: Readonly<Record<string, string>>;
}

export class JaasConfigError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'JaasConfigError';
  }
}

const FLAGS = new Set<string>(Object.values(JaasControlFlag));

type Token = { kind: 'word' | 'string'; text: string } | { kind: 'punct'; text: '=' | ';' };

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (/\s/.test(c)) {
      i++;
    } else if (c === '=' || c === ';') {
      tokens.push({ kind: 'punct', text: c });
      i++;
    } else if (c === '"') {
      let s = '';
      i++;
      for (;;) {
        if (i >= text.length) throw new JaasConfigError('Value not specified for key: unterminated quoted string in JAAS config');
        const d = text[i] as string;
        if (d === '\\' && i + 1 < text.length) {
          s += text[i + 1];
          i += 2;
        } else if (d === '"') {
          i++;
          break;
        } else {
          s += d;
          i++;
        }
      }
      tokens.push({ kind: 'string', text: s });
    } else {
      let j = i;
      while (j < text.length && !/[\s=;"]/.test(text[j] as string)) j++;
      tokens.push({ kind: 'word', text: text.slice(i, j) });
      i = j;
    }
  }
  return tokens;
}

/** Parses every entry of a JAAS configuration. Throws JaasConfigError with Kafka-like messages. */
export function parseJaasConfig(text: string): JaasEntry[] {
  const tokens = tokenize(text);
  const entries: JaasEntry[] = [];
  let i = 0;
  const next = () => tokens[i++];
  while (i < tokens.length) {
    const module = next();
    if (!module || module.kind !== 'word') throw new JaasConfigError(`Invalid JAAS config: expected a login module class, found '${module?.text ?? 'end of text'}'`);
    const flag = next();
    if (!flag || flag.kind !== 'word' || !FLAGS.has(flag.text.toLowerCase())) {
      throw new JaasConfigError(`Invalid JAAS config: invalid control flag '${flag?.text ?? ''}' for ${module.text} (required, requisite, sufficient or optional)`);
    }
    const options: Record<string, string> = {};
    for (;;) {
      const t = next();
      if (!t) throw new JaasConfigError(`Invalid JAAS config: the entry for ${module.text} does not end with ';'`);
      if (t.kind === 'punct' && t.text === ';') break;
      if (t.kind !== 'word') throw new JaasConfigError(`Invalid JAAS config: expected an option name in the entry for ${module.text}, found '${t.text}'`);
      const eq = next();
      if (!eq || eq.kind !== 'punct' || eq.text !== '=') throw new JaasConfigError(`Value not specified for key: ${t.text}`);
      const v = next();
      if (!v || v.kind === 'punct') throw new JaasConfigError(`Value not specified for key: ${t.text}`);
      options[t.text] = v.text;
    }
    entries.push(Object.freeze({ loginModule: module.text, flag: flag.text.toLowerCase() as JaasControlFlag, options: Object.freeze(options) }));
  }
  return entries;
}

/**
 * `sasl.jaas.config` takes exactly one login module (Kafka: "JAAS config property contains N
 * login modules, should be 1 module").
 */
export function parseSingleJaasEntry(text: string): JaasEntry {
  const entries = parseJaasConfig(text);
  if (entries.length !== 1) throw new JaasConfigError(`JAAS config property contains ${entries.length} login modules, should be 1 module`);
  return entries[0] as JaasEntry;
}
