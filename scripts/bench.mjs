#!/usr/bin/env node
// npm run bench [-- <name>...] [--option value ...]
// Runs the benchmarks in bench/ (all of the default ones when no name is given), prints one line per
// figure on stdout (`name: value unit (comparison)`), progress on stderr, and writes
// bench/results.json. Everything a benchmark starts is stopped and removed, also on failure or Ctrl-C.
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { cleanupAll, installSignalHandlers } from '../bench/lib/cleanup.mjs';
import { probePageCacheWrites } from '../bench/lib/page-cache-probe.mjs';
import { Report, log } from '../bench/lib/report.mjs';
import { REPO_ROOT, referenceDir } from '../bench/lib/script.mjs';

const BENCHMARKS = {
  codec: () => import('../bench/codec.mjs'),
  'produce-single': () => import('../bench/produce-single.mjs'),
  'produce-rf3': () => import('../bench/produce-rf3.mjs'),
  'peer-nats': () => import('../bench/peer-nats.mjs'),
  'producer-vs-kcat': () => import('../bench/producer-vs-kcat.mjs'),
  partitions: () => import('../bench/partitions.mjs'),
};

function parseArgs(argv) {
  const names = [];
  const opts = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--')) {
      names.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const key = (eq > 0 ? a.slice(2, eq) : a.slice(2)).replace(/-([a-z])/g, (_, c) => c.toUpperCase());
    let value = eq > 0 ? a.slice(eq + 1) : undefined;
    if (value === undefined && argv[i + 1] !== undefined && !argv[i + 1].startsWith('--') && !(argv[i + 1] in BENCHMARKS)) value = argv[++i];
    opts[key] = value === undefined ? true : value === 'false' ? false : Number.isNaN(Number(value)) ? value : Number(value);
  }
  return { names, opts };
}

async function usage() {
  const lines = ['usage: npm run bench [-- <name>...] [--option value ...]', '', 'benchmarks (options and defaults):'];
  for (const [name, load] of Object.entries(BENCHMARKS)) {
    const m = await load();
    lines.push(`  ${name}${m.byNameOnly ? ' (by name only)' : ''}: ${m.description}`);
    lines.push(
      `      ${Object.entries(m.defaults)
        .map(([k, v]) => `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}=${v}`)
        .join(' ')}`,
    );
  }
  lines.push('', `reference scripts (floor/, peer-nats/): ${referenceDir()} (SAMSA_BENCH_REFERENCE_DIR)`);
  return lines.join('\n');
}

async function main() {
  const { names, opts } = parseArgs(process.argv.slice(2));
  if (opts.help) {
    process.stdout.write(`${await usage()}\n`);
    return 0;
  }
  const unknown = names.filter((n) => !(n in BENCHMARKS));
  if (unknown.length) {
    process.stderr.write(`unknown benchmark ${unknown.join(', ')}\n${await usage()}\n`);
    return 2;
  }
  const mods = Object.fromEntries(await Promise.all(Object.entries(BENCHMARKS).map(async ([n, load]) => [n, await load()])));
  const selected = names.length ? names : Object.keys(BENCHMARKS).filter((n) => !mods[n].byNameOnly);
  const known = new Set(selected.flatMap((n) => Object.keys(mods[n].defaults)).concat('help'));
  const stray = Object.keys(opts).filter((k) => !known.has(k));
  if (stray.length) {
    process.stderr.write(`option(s) ${stray.join(', ')} not used by ${selected.join(', ')}\n${await usage()}\n`);
    return 2;
  }

  installSignalHandlers();
  const report = new Report();
  const errors = {};
  const started = new Date();
  log(`node ${process.version}, ${cpus().length} x ${cpus()[0]?.model ?? '?'}; running ${selected.join(', ')}`);
  const pageCache = {};
  for (const name of selected) {
    const t0 = Date.now();
    const before = probePageCacheWrites();
    try {
      const m = mods[name];
      const mine = Object.fromEntries(Object.entries(opts).filter(([k]) => k in m.defaults));
      await m.run(mine, report);
    } catch (err) {
      errors[name] = String(err?.stack ?? err);
      process.stderr.write(`[bench] ${name} failed: ${err?.stack ?? err}\n`);
    } finally {
      await cleanupAll();
    }
    const after = probePageCacheWrites();
    pageCache[name] = { beforeMbps: before.mbps, afterMbps: after.mbps };
    log(
      `${name}: ${((Date.now() - t0) / 1000).toFixed(1)} s; page-cache writes (64 MiB in 16 KiB, new file) ${before.mbps} MB/s before, ${after.mbps} MB/s after`,
    );
  }
  const out = join(REPO_ROOT, 'bench', 'results.json');
  const results = {
    started: started.toISOString(),
    seconds: Math.round((Date.now() - started.getTime()) / 100) / 10,
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model,
    mbIs: '10^6 bytes',
    benchmarks: selected,
    options: opts,
    pageCacheWriteMbps: pageCache,
    figures: report.figures,
    details: report.details,
    errors,
  };
  writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
  log(`wrote ${out}`);
  return Object.keys(errors).length ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  async (err) => {
    process.stderr.write(`[bench] ${err?.stack ?? err}\n`);
    await cleanupAll();
    process.exit(1);
  },
);
