/** Shared option parsing for the producer tools: `k=v` lists and properties files into producer config. */
import type { ProducerConfigInput } from '@samsa/client';
import { clientSecurityFromProperties } from './client-security.js';
import { fileThenArgs } from './properties.js';

export const collect = (v: string, prev: string[]): string[] => [...prev, v];

/** Properties from `--producer.config` (file) then `k=v` items; later entries win. */
export function producerProps(file: string | undefined, items: readonly string[]): Record<string, string> {
  return fileThenArgs(file, items);
}

/**
 * A config input from string properties (numbers and booleans are parsed by the producer), with
 * the `tls` / `sasl` of their security settings (security.protocol, ssl.*, sasl.*; the stores read
 * by `read`). Throws ClientSecurityConfigError for a setting this client cannot take.
 */
export function toConfig(props: Record<string, string>, read?: (path: string) => string | Buffer): ProducerConfigInput {
  return { ...(props as unknown as ProducerConfigInput), ...clientSecurityFromProperties(props, read) };
}
