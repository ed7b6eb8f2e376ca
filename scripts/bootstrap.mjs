#!/usr/bin/env node
// Bootstrap for a fresh clone: npm deps, system packages (ZooKeeper, kcat, Chromium), build.
// Uses only Node built-ins so it runs before `npm ci`.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = new Set(process.argv.slice(2));
const quiet = args.has('--quiet');
const say = (msg) => {
  if (!quiet) process.stderr.write(`[bootstrap] ${msg}\n`);
};

function run(cmd, argv, opts = {}) {
  const r = spawnSync(cmd, argv, { cwd: root, stdio: 'inherit', ...opts });
  if (r.status !== 0) {
    process.stderr.write(`[bootstrap] ${cmd} ${argv.join(' ')} failed (exit ${r.status ?? r.signal})\n`);
    process.exit(1);
  }
}

function mtime(p) {
  try {
    return statSync(p).mtimeMs;
  } catch {
    return 0;
  }
}

// 1. npm dependencies
const lock = join(root, 'package-lock.json');
const installed = join(root, 'node_modules', '.package-lock.json');
if (!existsSync(installed) || mtime(lock) > mtime(installed)) {
  say('installing npm dependencies (npm ci)');
  run('npm', ['ci', '--no-audit', '--no-fund']);
}

// 2. system packages: ZooKeeper (Debian's `zookeeper`), kcat, python3-confluent-kafka (librdkafka's
//    transactional producer in the transactions e2e tests) and Chromium (the web console's browser e2e test)
const missing = [];
if (!existsSync('/usr/share/java/zookeeper.jar')) missing.push('zookeeper');
if (!args.has('--no-kcat') && spawnSync('sh', ['-c', 'command -v kcat']).status !== 0) missing.push('kcat');
if (!args.has('--no-kcat') && spawnSync('/usr/bin/python3', ['-c', 'import confluent_kafka']).status !== 0) missing.push('python3-confluent-kafka');
if (!args.has('--no-chromium') && spawnSync('sh', ['-c', 'command -v chromium']).status !== 0) missing.push('chromium');
if (missing.length > 0) {
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const sudo = isRoot ? [] : ['sudo', '-n'];
  say(`installing Debian packages: ${missing.join(', ')}`);
  const apt = (...a) =>
    run(sudo[0] ?? 'apt-get', sudo.length ? [...sudo.slice(1), 'apt-get', ...a] : a, {
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  apt('-o', 'DPkg::Lock::Timeout=600', 'update', '-qq');
  apt('-o', 'DPkg::Lock::Timeout=600', 'install', '-y', '-qq', ...missing);
}
try {
  execFileSync('java', ['-version'], { stdio: 'ignore' });
} catch {
  process.stderr.write('[bootstrap] java not found; ZooKeeper needs a JRE (apt-get install default-jre-headless)\n');
  process.exit(1);
}

if (args.has('--deps-only')) process.exit(0);

// 3. build (tsc -b is incremental: a no-op when nothing changed)
run(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-b']);
