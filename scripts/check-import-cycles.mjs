#!/usr/bin/env node
// Finds import cycles between folders of a package and between @samsa/* packages.
//
// A folder is the directory of a file inside its package's src/ (so log/ and log/cleaner/ are two
// folders). Every relative import of every packages/*/src/**/*.ts counts: `import`, `import type`,
// `export ... from`, side-effect imports and dynamic `import('./x.js')` (also in type positions);
// type-only imports too, since a folder that needs another's types depends on it. Packages are
// joined by their bare `@samsa/<name>` imports. Any strongly connected component of more than one
// folder (or package) is a cycle: the script prints each with one example import per step, exits 1.
//
// A barrel (an index.ts made only of `export ... from`) is a node of its own, '<folder>/index.ts':
// it gathers what a folder and the folders below it offer, so a folder's barrel re-exporting a
// sub-folder that builds on the folder's own files is no cycle, while a sub-folder importing the
// barrel back is one. Test files (*.test.ts) are left out: nothing imports a test, so a test cannot
// close a cycle between modules, yet a test beside the code it exercises (coordinator/handlers.test.ts
// driving handlers/) would show as one. Test-support modules, which tests share, do count.
//
// Usage: node scripts/check-import-cycles.mjs [repository root]   (npm run lint runs it)
// Only Node built-ins, so it runs without anything else installed.
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * Source text with comments blanked out (string and template contents kept), so that an
 * `import('./x.js')` inside a comment does not count. Regex literals are recognised from the
 * token before the slash, which is enough for this code base.
 */
export function stripComments(src) {
  let out = '';
  let i = 0;
  const n = src.length;
  // A stack of open template literals: for each, the brace depth of its current `${`.
  const templates = [];
  let braceDepth = 0;
  let prev = ''; // last significant character outside comments and strings
  while (i < n) {
    const c = src[i];
    const d = src[i + 1];
    if (c === '/' && d === '/') {
      while (i < n && src[i] !== '\n') i++;
      continue;
    }
    if (c === '/' && d === '*') {
      const end = src.indexOf('*/', i + 2);
      const stop = end === -1 ? n : end + 2;
      out += src.slice(i, stop).replace(/[^\n]/g, ' ');
      i = stop;
      continue;
    }
    if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < n && src[j] !== c && src[j] !== '\n') j += src[j] === '\\' ? 2 : 1;
      out += src.slice(i, j + 1);
      i = j + 1;
      prev = c;
      continue;
    }
    if (c === '`' || (c === '}' && templates.length > 0 && templates[templates.length - 1] === braceDepth)) {
      // Start of a template, or the end of a `${...}` inside one: read template text up to the
      // closing backtick or the next `${`.
      if (c === '}') templates.pop();
      let j = i + 1;
      while (j < n && src[j] !== '`' && !(src[j] === '$' && src[j + 1] === '{')) j += src[j] === '\\' ? 2 : 1;
      if (src[j] === '$') {
        templates.push(braceDepth);
        out += src.slice(i, j + 2);
        i = j + 2;
      } else {
        out += src.slice(i, j + 1);
        i = j + 1;
      }
      prev = '`';
      continue;
    }
    if (c === '/' && (prev === '' || '(,=:[!&|?{};+-*%<>~^'.includes(prev) || /\b(?:return|typeof|case|in|of)$/.test(out.slice(-8)))) {
      // Regex literal.
      let j = i + 1;
      let inClass = false;
      while (j < n && src[j] !== '\n' && (inClass || src[j] !== '/')) {
        if (src[j] === '\\') j++;
        else if (src[j] === '[') inClass = true;
        else if (src[j] === ']') inClass = false;
        j++;
      }
      out += src.slice(i, j + 1);
      i = j + 1;
      prev = '/';
      continue;
    }
    if (c === '{') braceDepth++;
    else if (c === '}') braceDepth--;
    if (!/\s/.test(c)) prev = c;
    out += c;
    i++;
  }
  return out;
}

// The clause between `import`/`export` and `from`: a default, a namespace, named bindings, or a mix.
const CLAUSE = String.raw`(?:type\s+)?(?:\*(?:\s+as\s+[\w$]+)?|\{[^}]*\}|[\w$]+(?:\s*,\s*(?:\{[^}]*\}|\*\s+as\s+[\w$]+))?)`;
const STATIC_RE = new RegExp(String.raw`(?:^|[;}\n])\s*(?:import|export)\s+${CLAUSE}\s*from\s*(['"])([^'"\n]+)\1`, 'g');
const SIDE_EFFECT_RE = /(?:^|[;}\n])\s*import\s*(['"])([^'"\n]+)\1/g;
const DYNAMIC_RE = /\bimport\s*\(\s*(['"])([^'"\n]+)\1\s*[,)]/g;

/** Every module specifier a TypeScript source imports or re-exports, with its line number. */
export function parseImports(src) {
  const text = stripComments(src);
  const found = [];
  for (const re of [STATIC_RE, SIDE_EFFECT_RE, DYNAMIC_RE]) {
    re.lastIndex = 0;
    for (let m; (m = re.exec(text)) !== null;) {
      const at = m.index + m[0].lastIndexOf(m[1] + m[2]);
      found.push({ specifier: m[2], line: text.slice(0, at).split('\n').length });
    }
  }
  return found.sort((a, b) => a.line - b.line);
}

/**
 * Whether a source is a barrel: nothing but `export ... from` statements (and `export {}`). A barrel
 * gathers what its folder and the folders below offer; it is a node of its own in the graph.
 */
export function isBarrel(src) {
  const rest = stripComments(src)
    .replace(new RegExp(String.raw`\bexport\s+${CLAUSE}\s*from\s*(['"])[^'"\n]+\1\s*;?`, 'g'), '')
    .replace(/\bexport\s*\{\s*\}\s*;?/g, '');
  return rest.trim() === '' && src.trim() !== '';
}

/** The file a relative specifier names, trying TypeScript's `.js` → `.ts` mapping and index files. */
export function resolveRelative(fromFile, specifier, exists = existsSync) {
  const base = resolve(dirname(fromFile), specifier);
  const candidates = [base];
  const ext = /\.(m|c)?jsx?$/.exec(base);
  if (ext) {
    const stem = base.slice(0, -ext[0].length);
    const m = ext[1] ?? '';
    candidates.unshift(`${stem}.${m}ts`, `${stem}.${m}tsx`, `${stem}.d.${m}ts`);
  } else {
    candidates.push(`${base}.ts`, `${base}.tsx`, join(base, 'index.ts'));
  }
  return candidates.find((p) => exists(p)) ?? base;
}

/**
 * Adds an edge from → to (unless it is a self-loop), keeping the first example that made it.
 * graph: Map<node, Map<node, example>>.
 */
function addEdge(graph, from, to, example) {
  if (!graph.has(from)) graph.set(from, new Map());
  if (!graph.has(to)) graph.set(to, new Map());
  if (from === to) return;
  const out = graph.get(from);
  if (!out.has(to)) out.set(to, example);
}

/**
 * Folder and package graphs of a set of sources. files: [{ pkg, srcDir, path, text }] with absolute
 * paths; returns { folders: Map<pkg, graph>, packages: graph } where an example is
 * `{ file, line, specifier }` (file relative to `root`). A folder's node is its path inside src/
 * ('.' for src/ itself); a barrel index.ts is the node '<folder>/index.ts' ('index.ts' for the
 * package's entry point).
 */
export function buildGraphs(files, { root, exists = existsSync } = {}) {
  const folders = new Map();
  const packages = new Map();
  const posix = (p) => p.split(sep).join('/');
  const rel = (p) => posix(root ? relative(root, p) : p);
  const barrels = new Set(files.filter((f) => /(^|[\\/])index\.ts$/.test(f.path) && isBarrel(f.text)).map((f) => f.path));
  const nodeOf = (srcDir, file) => {
    const folder = posix(relative(srcDir, dirname(file))) || '.';
    if (!barrels.has(file)) return folder;
    return folder === '.' ? 'index.ts' : `${folder}/index.ts`;
  };
  for (const f of files) {
    if (!folders.has(f.pkg)) folders.set(f.pkg, new Map());
    const graph = folders.get(f.pkg);
    const from = nodeOf(f.srcDir, f.path);
    addEdge(graph, from, from, null);
    addEdge(packages, f.pkg, f.pkg, null);
    for (const { specifier, line } of parseImports(f.text)) {
      const example = { file: rel(f.path), line, specifier };
      if (specifier.startsWith('.')) {
        const target = resolveRelative(f.path, specifier, exists);
        if (relative(f.srcDir, target).startsWith('..')) continue; // outside src/: not a folder of this package
        addEdge(graph, from, nodeOf(f.srcDir, target), example);
      } else {
        const m = /^@samsa\/([^/]+)/.exec(specifier);
        if (m) addEdge(packages, f.pkg, m[1], example);
      }
    }
  }
  return { folders, packages };
}

/** Strongly connected components (Tarjan), each sorted, in a stable order. */
export function stronglyConnected(graph) {
  let index = 0;
  const idx = new Map();
  const low = new Map();
  const onStack = new Set();
  const stack = [];
  const components = [];
  const visit = (v) => {
    idx.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of [...(graph.get(v)?.keys() ?? [])].sort()) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v), idx.get(w)));
      }
    }
    if (low.get(v) === idx.get(v)) {
      const comp = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        comp.push(w);
      } while (w !== v);
      components.push(comp.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!idx.has(v)) visit(v);
  return components.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

/** A shortest cycle through `start` staying inside `members`: [start, ..., start]. */
function shortestCycle(graph, start, members) {
  const parent = new Map();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift();
    for (const w of [...graph.get(v).keys()].sort()) {
      if (!members.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let u = v; u !== start; u = parent.get(u)) path.unshift(u);
        path.unshift(start);
        return path;
      }
      if (!parent.has(w)) {
        parent.set(w, v);
        queue.push(w);
      }
    }
  }
  return null;
}

/**
 * The cycles of a graph: one per strongly connected component of more than one node, plus further
 * ones until every member of the component lies on a printed cycle. Each cycle is a list of steps
 * `{ from, to, example }`.
 */
export function findCycles(graph) {
  const cycles = [];
  for (const comp of stronglyConnected(graph)) {
    if (comp.length < 2) continue;
    const members = new Set(comp);
    const covered = new Set();
    const group = [];
    for (const start of comp) {
      if (covered.has(start)) continue;
      const path = shortestCycle(graph, start, members);
      path.forEach((v) => covered.add(v));
      group.push(path.slice(1).map((to, i) => ({ from: path[i], to, example: graph.get(path[i]).get(to) })));
    }
    cycles.push({ members: comp, cycles: group });
  }
  return cycles;
}

/** Human-readable report of the cycles of one graph. */
export function formatCycles(title, found) {
  const lines = [];
  for (const { members, cycles } of found) {
    lines.push(`${title}: import cycle between ${members.join(', ')}`);
    for (const steps of cycles) {
      lines.push(`  cycle: ${[steps[0].from, ...steps.map((s) => s.to)].join(' -> ')}`);
      for (const { from, to, example } of steps) {
        lines.push(`    ${from} -> ${to}: ${example.file}:${example.line} imports '${example.specifier}'`);
      }
    }
  }
  return lines.join('\n');
}

function listSources(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) {
      if (name !== 'node_modules' && name !== 'dist') out.push(...listSources(p));
    } else if (/\.(m|c)?tsx?$/.test(name) && !/\.test\.(m|c)?tsx?$/.test(name)) {
      out.push(p);
    }
  }
  return out;
}

/** Reads packages/*\/src of the repository at `root` and returns every cycle found there. */
export function checkRepository(root) {
  const files = [];
  const pkgsDir = join(root, 'packages');
  for (const pkg of readdirSync(pkgsDir).sort()) {
    const srcDir = join(pkgsDir, pkg, 'src');
    if (!existsSync(srcDir)) continue;
    for (const path of listSources(srcDir)) files.push({ pkg, srcDir, path, text: readFileSync(path, 'utf8') });
  }
  const { folders, packages } = buildGraphs(files, { root });
  const reports = [];
  for (const [pkg, graph] of [...folders].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const found = findCycles(graph);
    if (found.length > 0) reports.push(formatCycles(`packages/${pkg}/src`, found));
  }
  const pkgCycles = findCycles(packages);
  if (pkgCycles.length > 0) reports.push(formatCycles('@samsa packages', pkgCycles));
  return { files: files.length, reports };
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  // The repository to check: this script's own, or the directory given (the tests' fixtures).
  const root = process.argv[2] ? resolve(process.argv[2]) : join(dirname(fileURLToPath(import.meta.url)), '..');
  const { files, reports } = checkRepository(root);
  if (reports.length > 0) {
    process.stderr.write(`${reports.join('\n')}\n`);
    process.exit(1);
  }
  process.stdout.write(`check-import-cycles: no cycles between folders or packages (${files} files)\n`);
}
