#!/usr/bin/env node
// Keeps the one TopicPartition of @samsa/protocol the only place that builds or parses the
// `topic-partition` string (Kafka's TopicPartition.toString): everything else calls
// topicPartitionKey() or keys a TopicPartitionMap.
//
// It flags, in packages/*/src/**/*.ts and test-e2e/**/*.ts:
//  - a template literal piece `${<topic>}-${<partition>}`: the first expression names a topic
//    (`topic`, `t.name`, `TOPIC`, `t`, ...), the second a partition (`partition`, `p`,
//    `partitionIndex`, `x.partition`, ...);
//  - a parse back with `lastIndexOf('-')`.
// Allowed: packages/protocol/src/topic-partition.ts (the helper) and the log directory parser
// packages/storage/src/topic-partition.ts (Kafka's parseTopicPartitionName reads directory names).
//
// Usage: node scripts/check-topic-partition-keys.mjs [repository root]   (npm run lint runs it)
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ALLOWED = new Set(['packages/protocol/src/topic-partition.ts', 'packages/storage/src/topic-partition.ts']);

const TOPIC = /(^|\.)(topic|topicName|name|TOPIC)$|^t$/;
const PARTITION = /(^|\.)(partition|partitionIndex|partitionId|p)$/;
const PIECE = /\$\{([^{}]*)\}-\$\{([^{}]*)\}/g;
const PARSE_BACK = /lastIndexOf\(\s*['"]-['"]\s*\)/g;

/** The offending spots of one file's text: [{ line, text, why }]. */
export function findHandBuiltKeys(src) {
  const found = [];
  const lineOf = (index) => src.slice(0, index).split('\n').length;
  for (const m of src.matchAll(PIECE)) {
    const [a, b] = [m[1].trim(), m[2].trim()];
    if (TOPIC.test(a) && PARTITION.test(b)) found.push({ line: lineOf(m.index), text: m[0], why: 'builds a topic-partition key: use topicPartitionKey()' });
  }
  for (const m of src.matchAll(PARSE_BACK))
    found.push({ line: lineOf(m.index), text: m[0], why: 'parses a key back: keep the TopicPartition (or a TopicPartitionMap) instead' });
  return found;
}

function* tsFiles(dir) {
  if (!existsSync(dir)) return;
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist') continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* tsFiles(p);
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) yield p;
  }
}

/** Every offending spot under `root`'s packages/*\/src and test-e2e. */
export function checkRepository(root) {
  const out = [];
  const dirs = [join(root, 'test-e2e')];
  const pkgs = join(root, 'packages');
  if (existsSync(pkgs)) for (const p of readdirSync(pkgs)) dirs.push(join(pkgs, p, 'src'));
  for (const dir of dirs) {
    for (const file of tsFiles(dir)) {
      const rel = relative(root, file).split(sep).join('/');
      if (ALLOWED.has(rel)) continue;
      for (const f of findHandBuiltKeys(readFileSync(file, 'utf8'))) out.push({ file: rel, ...f });
    }
  }
  return out;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const root = process.argv[2] ?? fileURLToPath(new URL('..', import.meta.url));
  const found = checkRepository(root);
  for (const f of found) process.stderr.write(`${f.file}:${f.line}: ${f.text} ${f.why}\n`);
  if (found.length > 0) {
    process.stderr.write(`check-topic-partition-keys: ${found.length} hand-built topic-partition key(s); TopicPartition lives in @samsa/protocol\n`);
    process.exit(1);
  }
  process.stdout.write('check-topic-partition-keys: every topic-partition key goes through topicPartitionKey()\n');
}
