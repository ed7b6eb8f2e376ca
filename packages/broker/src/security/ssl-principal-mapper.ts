/**
 * Kafka's SslPrincipalMapper (`ssl.principal.mapping.rules`, KIP-371): a comma-separated list of
 * rules applied in order to a client certificate's distinguished name (RFC 2253, as Java's
 * X500Principal.getName() prints it); the first rule whose pattern matches the whole DN gives the
 * principal name:
 * - `DEFAULT`: the DN itself;
 * - `RULE:pattern/replacement/` with an optional `L` or `U` after the last slash (lower/upper-case
 *   the result); `$n` in the replacement is capture group n, `\` escapes the next character (a `/`
 *   inside pattern or replacement is written `\/`).
 * A DN that no rule matches is an authentication failure. Patterns are JavaScript regular
 * expressions, which agree with Java's for the constructs the rules use.
 */
import { ConfigError } from '../config/errors.js';

/** Kafka's rule grammar: DEFAULT, RULE:pattern/replacement/[LU], or an empty rule. */
const RULE = String.raw`(DEFAULT)|RULE:((\\.|[^\\/])*)/((\\.|[^\\/])*)/([LU]?).*?|(.*?)`;
const RULE_SPLITTER = new RegExp(String.raw`\s*(${RULE})\s*(,\s*|$)`, 'g');
const RULE_PARSER = new RegExp(`^(?:${RULE})`);

interface Rule {
  /** As Kafka prints it: `DEFAULT`, `RULE:pattern/replacement[/L|/U]`. */
  readonly text: string;
  apply(dn: string): string | undefined;
}

const DEFAULT_RULE: Rule = { text: 'DEFAULT', apply: (dn) => dn };

/** Thrown when no rule applies to a DN (Kafka's NoMatchingRule): the handshake's principal cannot be built. */
export class NoMatchingRule extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NoMatchingRule';
  }
}

/**
 * Expands a Java replacement string (`Matcher.appendReplacement`): `\c` is `c`, `$n` group n with
 * as many digits as still name a group; a `$n` beyond the groups stays literal (as Kafka's
 * escapeLiteralBackReferences makes it).
 */
function expand(replacement: string, groups: ReadonlyArray<string | undefined>): string {
  const count = groups.length - 1;
  let out = '';
  for (let i = 0; i < replacement.length; i++) {
    const c = replacement[i]!;
    if (c === '\\' && i + 1 < replacement.length) {
      out += replacement[++i];
      continue;
    }
    const d = c === '$' ? replacement.charCodeAt(i + 1) - 48 : -1;
    if (d < 0 || d > 9 || d > count) {
      out += c;
      continue;
    }
    let n = d;
    i++;
    while (n > 0 && i + 1 < replacement.length) {
      const next = replacement.charCodeAt(i + 1) - 48;
      if (next < 0 || next > 9 || n * 10 + next > count) break;
      n = n * 10 + next;
      i++;
    }
    out += groups[n] ?? '';
  }
  return out;
}

function parseRule(text: string): Rule | undefined {
  const m = RULE_PARSER.exec(text);
  const end = m?.[0].length ?? 0;
  if (!m) throw new ConfigError('ssl.principal.mapping.rules', `Invalid rule: ${text}`);
  if (end !== text.length) {
    throw new ConfigError('ssl.principal.mapping.rules', `Invalid rule: \`${text}\`, unmatched substring: \`${text.slice(end)}\``);
  }
  if (m[1] !== undefined) return DEFAULT_RULE;
  if (m[2] === undefined) return undefined; // an empty rule is ignored
  const source = m[2];
  const replacement = m[4] ?? '';
  const lower = m[6] === 'L';
  const upper = m[6] === 'U';
  let whole: RegExp;
  let all: RegExp;
  try {
    whole = new RegExp(`^(?:${source})$`);
    all = new RegExp(source, 'g');
  } catch (err) {
    throw new ConfigError('ssl.principal.mapping.rules', `Invalid rule: \`${text}\`: ${(err as Error).message}`, { cause: err });
  }
  return {
    text: `RULE:${source}/${replacement}${lower ? '/L' : upper ? '/U' : ''}`,
    apply(dn) {
      if (!whole.test(dn)) return undefined;
      // Java's String.replaceAll: every match of the pattern, each with the replacement expanded
      const result = dn.replace(all, (...args: unknown[]) => {
        // (match, p1..pn, offset, string[, named groups])
        const last = args[args.length - 1];
        const groups = args.slice(0, typeof last === 'object' && last !== null ? -3 : -2) as Array<string | undefined>;
        return expand(replacement, groups);
      });
      return lower ? result.toLowerCase() : upper ? result.toUpperCase() : result;
    },
  };
}

/** Splits the config value into rules as Kafka does (commas between rules, spaces around them). */
export function splitRules(rules: string): string[] {
  return [...rules.trim().matchAll(RULE_SPLITTER)].map((m) => m[1]!);
}

export class SslPrincipalMapper {
  private readonly rules: readonly Rule[];

  /** Parses `ssl.principal.mapping.rules`; throws ConfigError naming it for an invalid rule. */
  constructor(rules: string | null = 'DEFAULT') {
    this.rules = splitRules(rules ?? 'DEFAULT').flatMap((r) => parseRule(r) ?? []);
  }

  /** As Kafka prints it: `SslPrincipalMapper(rules = [RULE:..., DEFAULT])`. */
  toString(): string {
    return `SslPrincipalMapper(rules = [${this.rules.map((r) => r.text).join(', ')}])`;
  }

  /** The principal name of `dn`; throws NoMatchingRule when no rule applies. */
  getName(dn: string): string {
    for (const r of this.rules) {
      const name = r.apply(dn);
      if (name !== undefined) return name;
    }
    throw new NoMatchingRule(`No rules apply to ${dn}, rules [${this.rules.map((r) => r.text).join(', ')}]`);
  }
}
