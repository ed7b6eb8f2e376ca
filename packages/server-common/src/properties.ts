/**
 * A reader for Java properties files (`server.properties`), with java.util.Properties' rules:
 *
 * - lines end at `\n`, `\r` or `\r\n`; leading spaces, tabs and form feeds are skipped;
 * - a line whose first non-blank character is `#` or `!` is a comment, as is a blank line;
 * - a line ending in an odd number of backslashes continues on the next line, whose leading
 *   blanks are dropped (a comment line never continues; a blank line ends the continuation);
 * - the key ends at the first unescaped `=`, `:` or blank; blanks around one `=`/`:` separator
 *   are skipped, so `k=v`, `k: v`, `k v` and `k = v` are the same; trailing blanks of the value stay;
 * - escapes: `\t \n \r \f`, `\uXXXX`, and `\` before any other character yields that character;
 * - a repeated key keeps its last value.
 *
 * Java reads these files as ISO-8859-1; Samsa reads them as UTF-8 (and drops a leading BOM).
 *
 * The one reader of the format in Samsa: the broker's server.properties, meta.properties and
 * partition.metadata, and the tools' --command-config, --producer.config and --consumer.config.
 */

/** Text that is not valid properties syntax (a malformed `\uXXXX` escape). */
export class PropertiesSyntaxError extends Error {
  constructor(
    /** The key of the entry, when the error is in its value. */
    readonly key: string | undefined,
    message: string,
  ) {
    super(message);
    this.name = 'PropertiesSyntaxError';
  }
}

export interface PropertyEntry {
  readonly key: string;
  readonly value: string;
  /** 1-based line where the entry starts. */
  readonly line: number;
}

const isBlank = (c: string | undefined): boolean => c === ' ' || c === '\t' || c === '\f';

function skipBlanks(s: string): string {
  let i = 0;
  while (i < s.length && isBlank(s[i])) i++;
  return s.slice(i);
}

function trailingBackslashes(s: string): number {
  let n = 0;
  for (let i = s.length - 1; i >= 0 && s[i] === '\\'; i--) n++;
  return n;
}

/** Resolves escapes (Java's `Properties.loadConvert`). */
function unescape(s: string, where: string, key: string | undefined): string {
  if (!s.includes('\\')) return s;
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c !== '\\') {
      out += c;
      continue;
    }
    const e = s[++i];
    if (e === undefined) break;
    if (e === 'u') {
      const hex = s.slice(i + 1, i + 5);
      if (!/^[0-9a-fA-F]{4}$/.test(hex)) {
        throw new PropertiesSyntaxError(key, `Malformed \\uxxxx escape '\\u${hex}' ${where}.`);
      }
      out += String.fromCharCode(parseInt(hex, 16));
      i += 4;
    } else if (e === 't') out += '\t';
    else if (e === 'n') out += '\n';
    else if (e === 'r') out += '\r';
    else if (e === 'f') out += '\f';
    else out += e;
  }
  return out;
}

/** Splits a logical line into raw key and raw value (Java's `Properties.load0`). */
function splitKeyValue(line: string): [string, string] {
  let keyLen = 0;
  let valueStart = line.length;
  let hasSep = false;
  let escaped = false;
  while (keyLen < line.length) {
    const c = line[keyLen];
    if ((c === '=' || c === ':') && !escaped) {
      valueStart = keyLen + 1;
      hasSep = true;
      break;
    }
    if (isBlank(c) && !escaped) {
      valueStart = keyLen + 1;
      break;
    }
    escaped = c === '\\' ? !escaped : false;
    keyLen++;
  }
  while (valueStart < line.length) {
    const c = line[valueStart];
    if (!isBlank(c)) {
      if (!hasSep && (c === '=' || c === ':')) hasSep = true;
      else break;
    }
    valueStart++;
  }
  return [line.slice(0, keyLen), line.slice(valueStart)];
}

/**
 * Parses properties text into entries in file order (repeated keys appear repeatedly).
 * `source` names the file in error messages. Throws `PropertiesSyntaxError` on a malformed `\u` escape.
 */
export function parsePropertiesEntries(text: string, source = 'properties'): PropertyEntry[] {
  const lines = (text.startsWith('\uFEFF') ? text.slice(1) : text).split(/\r\n|\r|\n/);
  const entries: PropertyEntry[] = [];
  let i = 0;
  while (i < lines.length) {
    const lineNo = i + 1;
    let logical = skipBlanks(lines[i] ?? '');
    i++;
    if (logical === '' || logical.startsWith('#') || logical.startsWith('!')) continue;
    while (trailingBackslashes(logical) % 2 === 1) {
      logical = logical.slice(0, -1);
      if (i >= lines.length) break;
      const next = skipBlanks(lines[i] ?? '');
      i++;
      if (next === '') break;
      logical += next;
    }
    const [rawKey, rawValue] = splitKeyValue(logical);
    const where = `in ${source} line ${lineNo}`;
    const key = unescape(rawKey, where, undefined);
    entries.push({ key, value: unescape(rawValue, where, key), line: lineNo });
  }
  return entries;
}

/** Parses properties text into a map (last value of a repeated key wins, first position kept). */
export function parseProperties(text: string, source?: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const e of parsePropertiesEntries(text, source)) map.set(e.key, e.value);
  return map;
}

/** Parses properties text into a plain object (last value of a repeated key wins). */
export function parsePropertiesRecord(text: string, source?: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of parsePropertiesEntries(text, source)) out[e.key] = e.value;
  return out;
}
