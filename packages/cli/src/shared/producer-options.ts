/** Shared option parsing for the producer tools: `k=v` lists and properties files into producer config. */
import { readFileSync } from 'node:fs';
import { parseProperties as parsePropertyLines, type ProducerConfigInput } from '@samsa/client';

export const collect = (v: string, prev: string[]): string[] => [...prev, v];

/** Properties from `--producer.config` (file) then `k=v` items; later entries win. */
export function producerProps(file: string | undefined, items: readonly string[]): Record<string, string> {
  const fromFile = file ? parsePropertyLines(readFileSync(file, 'utf8').split(/\r?\n/)) : {};
  return { ...fromFile, ...parsePropertyLines(items) };
}

/** A config input from string properties (numbers and booleans are parsed by the producer). */
export function toConfig(props: Record<string, string>): ProducerConfigInput {
  return props as unknown as ProducerConfigInput;
}
