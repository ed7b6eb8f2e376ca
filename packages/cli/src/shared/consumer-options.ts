/** Shared option parsing for the consumer tools: `k=v` lists and properties files into consumer config. */
import type { ConsumerConfigInput } from '@samsa/client';
import { clientSecurityFromProperties } from './client-security.js';
import { fileThenArgs } from './properties.js';

/** Properties from `--consumer.config` (file) then `k=v` items; later entries win. */
export function consumerProps(file: string | undefined, items: readonly string[]): Record<string, string> {
  return fileThenArgs(file, items);
}

/**
 * A config input from string properties (numbers and booleans are parsed by the consumer), with
 * the `tls` / `sasl` of their security settings (security.protocol, ssl.*, sasl.*; the stores read
 * by `read`). Throws ClientSecurityConfigError for a setting this client cannot take.
 */
export function toConsumerConfig(props: Record<string, string>, read?: (path: string) => string | Buffer): ConsumerConfigInput {
  return { ...(props as unknown as ConsumerConfigInput), ...clientSecurityFromProperties(props, read) };
}

/** Kafka's log4j-ish stderr line for tool errors: `[2026-12-03 07:00:00,123] ERROR msg (class)`. */
export function toolLogLine(level: string, msg: string, cls: string): string {
  const d = new Date();
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  const ts = `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())},${p(d.getMilliseconds(), 3)}`;
  return `[${ts}] ${level} ${msg} (${cls})\n`;
}
