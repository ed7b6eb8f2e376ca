/** Option parsing shared by `samsa verify` and `samsa chaos`. */

/** `90`, `90s`, `500ms`, `5m`, `1h` → milliseconds (a bare number is seconds). */
export function parseDuration(s: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h)?$/.exec(s.trim());
  if (!m) throw new Error(`Invalid duration '${s}': expected e.g. 90s, 5m, 1h or 500ms`);
  const n = Number(m[1]);
  const unit = m[2] ?? 's';
  return Math.round(n * (unit === 'ms' ? 1 : unit === 's' ? 1000 : unit === 'm' ? 60_000 : 3_600_000));
}

/** `0=/data/b0/logs,1=/data/b1/logs` → { 0: '/data/b0/logs', 1: ... }. */
export function parseLogDirs(s: string): Record<number, string> {
  const out: Record<number, string> = {};
  for (const part of s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean)) {
    const i = part.indexOf('=');
    const id = Number(part.slice(0, i));
    if (i <= 0 || !Number.isInteger(id) || !part.slice(i + 1)) throw new Error(`Invalid --log-dirs entry '${part}': expected brokerId=/path/to/log.dir`);
    out[id] = part.slice(i + 1);
  }
  return out;
}

export function parseIntOption(name: string, s: string, min = 0): number {
  const n = Number(s);
  if (!Number.isInteger(n) || n < min) throw new Error(`Invalid value '${s}' for ${name}: expected an integer >= ${min}`);
  return n;
}

export function parseAcks(s: string): -1 | 0 | 1 {
  if (s === 'all' || s === '-1') return -1;
  if (s === '0') return 0;
  if (s === '1') return 1;
  throw new Error(`Invalid value '${s}' for --acks: expected all, -1, 0 or 1`);
}

export const COMPRESSIONS = ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const;
export function parseCompression(s: string): (typeof COMPRESSIONS)[number] {
  if (!(COMPRESSIONS as readonly string[]).includes(s)) throw new Error(`Invalid value '${s}' for --compression: expected one of ${COMPRESSIONS.join(', ')}`);
  return s as (typeof COMPRESSIONS)[number];
}
