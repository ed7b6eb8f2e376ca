/**
 * A reader of the Prometheus text exposition format (version 0.0.4), enough for the console: sample
 * lines `name{label="value",...} value [timestamp]`; comments (# HELP / # TYPE) are skipped.
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses exposition text into samples; malformed lines are skipped. */
export function parsePrometheusText(text: string): Sample[] {
  const out: Sample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const s = parseLine(line);
    if (s) out.push(s);
  }
  return out;
}

function parseLine(line: string): Sample | null {
  let i = 0;
  while (i < line.length && line[i] !== '{' && line[i] !== ' ' && line[i] !== '\t') i++;
  const name = line.slice(0, i);
  if (name === '') return null;
  const labels: Record<string, string> = {};
  if (line[i] === '{') {
    i++;
    for (;;) {
      while (line[i] === ' ' || line[i] === ',') i++;
      if (line[i] === '}') {
        i++;
        break;
      }
      const eq = line.indexOf('=', i);
      if (eq < 0 || line[eq + 1] !== '"') return null;
      const key = line.slice(i, eq).trim();
      let j = eq + 2;
      let value = '';
      while (j < line.length && line[j] !== '"') {
        if (line[j] === '\\' && j + 1 < line.length) {
          const c = line[j + 1];
          value += c === 'n' ? '\n' : c;
          j += 2;
        } else value += line[j++];
      }
      if (j >= line.length) return null;
      labels[key] = value;
      i = j + 1;
    }
  }
  const rest = line.slice(i).trim().split(/\s+/);
  const value = parseValue(rest[0] ?? '');
  if (value === null) return null;
  return { name, labels, value };
}

function parseValue(s: string): number | null {
  if (s === '+Inf') return Infinity;
  if (s === '-Inf') return -Infinity;
  if (s === 'NaN') return NaN;
  if (s === '') return null;
  const v = Number(s);
  return Number.isNaN(v) ? null : v;
}

/** Sum of the samples named `name` (optionally only those whose labels match `where`). */
export function sumOf(samples: readonly Sample[], name: string, where: Record<string, string> = {}): number | null {
  let sum = 0;
  let found = false;
  for (const s of samples) {
    if (s.name !== name) continue;
    if (!Object.entries(where).every(([k, v]) => s.labels[k] === v)) continue;
    sum += s.value;
    found = true;
  }
  return found ? sum : null;
}

/** Sums of the samples named `name`, keyed by the value of `label`. */
export function sumBy(samples: readonly Sample[], name: string, label: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of samples) {
    if (s.name !== name) continue;
    const key = s.labels[label];
    if (key === undefined) continue;
    out.set(key, (out.get(key) ?? 0) + s.value);
  }
  return out;
}
