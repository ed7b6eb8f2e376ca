import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { fixture } from './test-fixture.mjs';
import { checkRepository, findCycles, isBarrel, parseImports, stronglyConnected } from './check-import-cycles.mjs';

const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'check-import-cycles.mjs');

const run = (root) => spawnSync(process.execPath, [SCRIPT, root], { encoding: 'utf8' });

describe('check-import-cycles – parsing', () => {
  it('parseImports – finds import, import type, export from, side-effect and dynamic imports', () => {
    const src = [
      "import { a } from './a.js';",
      "import type { B } from '../b/b.js';",
      'import c, {',
      '  d,',
      "} from './c.js';",
      "import * as e from './e.js';",
      "export { f } from './f.js';",
      "export * from './g.js';",
      "export * as h from './h.js';",
      "export type { I } from './i.js';",
      "import './side-effect.js';",
      "const j = await import('./j.js');",
      "type K = typeof import('./k.js');",
      "import { readFileSync } from 'node:fs';",
    ].join('\n');
    expect(parseImports(src).map((i) => i.specifier)).toEqual([
      './a.js',
      '../b/b.js',
      './c.js',
      './e.js',
      './f.js',
      './g.js',
      './h.js',
      './i.js',
      './side-effect.js',
      './j.js',
      './k.js',
      'node:fs',
    ]);
    expect(parseImports(src).find((i) => i.specifier === './c.js')?.line).toBe(5);
  });

  it('parseImports – ignores imports in comments, and is not thrown by strings, templates and regexes', () => {
    const src = [
      "// import { x } from './commented.js';",
      "/* const y = await import('./block.js'); */",
      '/**',
      " * import { z } from './jsdoc.js';",
      ' */',
      "const url = 'http://example.com'; const re = /['\"`]/g; const t = `a ${'b'} // c`;",
      "import { real } from './real.js';",
    ].join('\n');
    expect(parseImports(src).map((i) => i.specifier)).toEqual(['./real.js']);
  });

  it('isBarrel – an index made only of re-exports is a barrel; one with code is not', () => {
    expect(isBarrel("// the folder's API\nexport * from './a.js';\nexport { b, type C } from './b.js';\nexport {};\n")).toBe(true);
    expect(isBarrel("import { a } from './a.js';\nexport const x = a;\n")).toBe(false);
  });
});

describe('check-import-cycles – graph', () => {
  const graph = (edges) => {
    const g = new Map();
    for (const [from, to] of edges) {
      if (!g.has(from)) g.set(from, new Map());
      if (!g.has(to)) g.set(to, new Map());
      g.get(from).set(to, { file: `${from}/f.ts`, line: 1, specifier: `../${to}/g.js` });
    }
    return g;
  };

  it('stronglyConnected – groups folders that reach each other', () => {
    const g = graph([
      ['a', 'b'],
      ['b', 'c'],
      ['c', 'a'],
      ['c', 'd'],
      ['d', 'e'],
    ]);
    expect(stronglyConnected(g)).toEqual([['a', 'b', 'c'], ['d'], ['e']]);
  });

  it('findCycles – a DAG has none', () => {
    expect(
      findCycles(
        graph([
          ['a', 'b'],
          ['b', 'c'],
          ['a', 'c'],
        ]),
      ),
    ).toEqual([]);
  });

  it('findCycles – every folder of a component lies on a printed cycle, each step with an example', () => {
    const found = findCycles(
      graph([
        ['a', 'b'],
        ['b', 'a'],
        ['b', 'c'],
        ['c', 'b'],
      ]),
    );
    expect(found).toHaveLength(1);
    expect(found[0].members).toEqual(['a', 'b', 'c']);
    const steps = found[0].cycles.map((c) => c.map((s) => `${s.from}->${s.to}`));
    expect(steps).toEqual([
      ['a->b', 'b->a'],
      ['c->b', 'b->c'],
    ]);
    expect(found[0].cycles[0][0].example).toEqual({ file: 'a/f.ts', line: 1, specifier: '../b/g.js' });
  });
});

describe('check-import-cycles – repository', () => {
  it('exits 1 and prints each step of a folder cycle made by a type-only import', () => {
    const root = fixture({
      'packages/p/src/a/x.ts': "import { y } from '../b/y.js';\nexport const x = y;\n",
      'packages/p/src/b/y.ts': "import type { Z } from '../a/z.js';\nexport const y: Z = 1;\n",
      'packages/p/src/a/z.ts': 'export type Z = number;\n',
    });
    const r = run(root);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('packages/p/src: import cycle between a, b');
    expect(r.stderr).toContain("a -> b: packages/p/src/a/x.ts:1 imports '../b/y.js'");
    expect(r.stderr).toContain("b -> a: packages/p/src/b/y.ts:1 imports '../a/z.js'");
  });

  it('exits 0 when imports only go one way', () => {
    const root = fixture({
      'packages/p/src/a/x.ts': "import { y } from '../b/y.js';\nexport const x = y;\n",
      'packages/p/src/b/y.ts': 'export const y = 1;\n',
    });
    const r = run(root);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('a folder and its sub-folder importing each other are a cycle', () => {
    const root = fixture({
      'packages/p/src/log/manager.ts': "import { clean } from './cleaner/cleaner.js';\nexport const m = clean;\n",
      'packages/p/src/log/segment.ts': 'export const s = 1;\n',
      'packages/p/src/log/cleaner/cleaner.ts': "import { s } from '../segment.js';\nexport const clean = s;\n",
    });
    expect(checkRepository(root).reports.join('\n')).toContain('import cycle between log, log/cleaner');
  });

  it('a barrel re-exporting a sub-folder is no cycle; the sub-folder importing the barrel is', () => {
    const files = {
      'packages/p/src/index.ts': "export * from './a/x.js';\nexport * from './b/y.js';\n",
      'packages/p/src/a/x.ts': "import { y } from '../b/y.js';\nexport const x = y;\n",
      'packages/p/src/b/y.ts': 'export const y = 1;\n',
    };
    expect(checkRepository(fixture(files)).reports).toEqual([]);
    const back = fixture({ ...files, 'packages/p/src/b/y.ts': "import type { x } from '../index.js';\nexport const y: typeof x = 1;\n" });
    expect(checkRepository(back).reports.join('\n')).toContain('import cycle between a, b, index.ts');
  });

  it('tests are left out: a test importing the folder that imports its own does not make a cycle', () => {
    const root = fixture({
      'packages/p/src/a/x.ts': "import { y } from '../b/y.js';\nexport const x = y;\n",
      'packages/p/src/b/y.ts': 'export const y = 1;\n',
      'packages/p/src/b/y.test.ts': "import { x } from '../a/x.js';\nconsole.log(x);\n",
    });
    expect(checkRepository(root).reports).toEqual([]);
  });

  it('finds cycles between @samsa packages', () => {
    const root = fixture({
      'packages/p/src/index.ts': "import { q } from '@samsa/q';\nexport const p = q;\n",
      'packages/q/src/index.ts': "import type { p } from '@samsa/p/sub';\nexport const q: typeof p = 1;\n",
    });
    const r = run(root);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('@samsa packages: import cycle between p, q');
    expect(r.stderr).toContain("q -> p: packages/q/src/index.ts:1 imports '@samsa/p/sub'");
  });
});
