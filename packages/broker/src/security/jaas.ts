/**
 * Kafka's JAAS configuration syntax as `sasl.jaas.config` takes it (Kafka's JaasConfig): one login
 * module, `<LoginModuleClass> <flag> [<option>=<value>]... ;` where a value is a word or a
 * double-quoted string (backslash escapes the next character, as Java's StreamTokenizer).
 */
import { ConfigError } from '../config/errors.js';

export const JaasFlag = { REQUIRED: 'required', REQUISITE: 'requisite', SUFFICIENT: 'sufficient', OPTIONAL: 'optional' } as const;
export type JaasFlag = (typeof JaasFlag)[keyof typeof JaasFlag];

export interface JaasLoginModule {
  readonly loginModule: string;
  readonly flag: JaasFlag;
  readonly options: Readonly<Record<string, string>>;
}

type Token = { kind: 'word' | 'quoted'; text: string } | { kind: 'punct'; text: '=' | ';' };

function tokenize(s: string, key: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (c === '=' || c === ';') {
      out.push({ kind: 'punct', text: c });
      i++;
    } else if (c === '"') {
      let text = '';
      i++;
      for (;;) {
        if (i >= s.length) throw new ConfigError(key, 'unterminated quoted value in JAAS configuration');
        const d = s[i]!;
        if (d === '"') {
          i++;
          break;
        }
        if (d === '\\' && i + 1 < s.length) {
          text += s[i + 1];
          i += 2;
          continue;
        }
        text += d;
        i++;
      }
      out.push({ kind: 'quoted', text });
    } else {
      let j = i;
      while (j < s.length && !/[\s=;"]/.test(s[j]!)) j++;
      out.push({ kind: 'word', text: s.slice(i, j) });
      i = j;
    }
  }
  return out;
}

/** Every login module of a JAAS text (a `sasl.jaas.config` value holds exactly one: `parseJaasConfig`). */
export function parseJaasModules(text: string, key = 'sasl.jaas.config'): JaasLoginModule[] {
  const tokens = tokenize(text, key);
  const modules: JaasLoginModule[] = [];
  let i = 0;
  const next = () => tokens[i++];
  while (i < tokens.length) {
    const name = next();
    if (!name || name.kind !== 'word') throw new ConfigError(key, 'expected a login module class name in JAAS configuration');
    const flagTok = next();
    const flag = flagTok?.kind === 'word' ? flagTok.text.toLowerCase() : '';
    if (!(Object.values(JaasFlag) as string[]).includes(flag)) {
      throw new ConfigError(key, `invalid JAAS login module control flag '${flagTok?.text ?? ''}' (required, requisite, sufficient or optional)`);
    }
    const options: Record<string, string> = {};
    for (;;) {
      const t = next();
      if (!t) throw new ConfigError(key, "JAAS login module options must end with ';'");
      if (t.kind === 'punct' && t.text === ';') break;
      if (t.kind !== 'word') throw new ConfigError(key, `expected a JAAS option name, found '${t.text}'`);
      const eq = next();
      if (!eq || eq.kind !== 'punct' || eq.text !== '=') throw new ConfigError(key, `JAAS option '${t.text}' has no value ('${t.text}=<value>')`);
      const v = next();
      if (!v || v.kind === 'punct') throw new ConfigError(key, `JAAS option '${t.text}' has no value`);
      options[t.text] = v.text;
    }
    modules.push(Object.freeze({ loginModule: name.text, flag: flag as JaasFlag, options: Object.freeze(options) }));
  }
  return modules;
}

/** A `sasl.jaas.config` value: exactly one login module (Kafka: "must contain one login module"). */
export function parseJaasConfig(text: string, key = 'sasl.jaas.config'): JaasLoginModule {
  const modules = parseJaasModules(text, key);
  if (modules.length !== 1) throw new ConfigError(key, `JAAS config property must contain one login module, found ${modules.length}`);
  return modules[0]!;
}

export const PLAIN_LOGIN_MODULE = 'org.apache.kafka.common.security.plain.PlainLoginModule';
export const SCRAM_LOGIN_MODULE = 'org.apache.kafka.common.security.scram.ScramLoginModule';
