/**
 * The tools' properties: files (--command-config, --producer.config, --consumer.config) are Java
 * .properties files, read by the one parser in @samsa/server-common; `--property k=v`-style
 * arguments are Kafka's CommandLineUtils.parseKeyValueArgs: split at the first `=`.
 */
import { readFileSync } from 'node:fs';
import { parsePropertiesRecord } from '@samsa/server-common';

/** A Java .properties file as a plain object. */
export function readPropertiesFile(file: string, read: (path: string) => string = (p) => readFileSync(p, 'utf8')): Record<string, string> {
  return parsePropertiesRecord(read(file), file);
}

/** `key=value` arguments (the value may contain `=`; later keys win). */
export function parseKeyValueArgs(items: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of items) {
    const i = item.indexOf('=');
    if (i < 0) throw new Error(`Invalid property '${item}': expected key=value`);
    out[item.slice(0, i)] = item.slice(i + 1);
  }
  return out;
}

/** Properties from a config file (if any), then `key=value` arguments; the arguments win. */
export function fileThenArgs(file: string | undefined, items: readonly string[]): Record<string, string> {
  return { ...(file ? readPropertiesFile(file) : {}), ...parseKeyValueArgs(items) };
}
