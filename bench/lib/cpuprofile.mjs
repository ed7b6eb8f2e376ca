// Summarizes a V8 .cpuprofile (node --cpu-prof): self and inclusive time per function.
import { readFileSync } from 'node:fs';
import { REPO_ROOT } from './script.mjs';

function frameName(cf) {
  const fn = cf.functionName || '(anonymous)';
  if (!cf.url) return fn;
  let url = cf.url.replace(/^file:\/\//, '');
  if (url.startsWith(REPO_ROOT + '/')) url = url.slice(REPO_ROOT.length + 1);
  else if (url.startsWith('node:')) url = url.slice(5);
  return `${fn} ${url}:${cf.lineNumber + 1}`;
}

/**
 * Returns { wallMs, idleMs, busyMs, self: [{name, ms, pct}], total: [{name, ms, pct}] } where pct is
 * of busy time (wall minus "(idle)"), lists sorted descending and cut to `top` entries. With
 * `from`, samples before the first one whose stack has a frame containing `from` are skipped
 * (e.g. start-up).
 */
export function summarizeProfile(file, top = 20, { from } = {}) {
  const prof = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map();
  const parent = new Map();
  for (const n of prof.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  const self = new Map();
  const total = new Map();
  let wall = 0;
  let idle = 0;
  const add = (m, k, v) => m.set(k, (m.get(k) ?? 0) + v);
  const stackHas = (id, text) => {
    for (; id !== undefined; id = parent.get(id)) if (frameName(byId.get(id).callFrame).includes(text)) return true;
    return false;
  };
  let first = 0;
  if (from) while (first < prof.samples.length && !stackHas(prof.samples[first], from)) first++;
  for (let i = first; i < prof.samples.length; i++) {
    // timeDeltas[i] is the time since the previous sample; attribute it to sample i
    const dt = (prof.timeDeltas[i] ?? 0) / 1000;
    const node = byId.get(prof.samples[i]);
    wall += dt;
    const name = frameName(node.callFrame);
    if (name === '(idle)') {
      idle += dt;
      continue;
    }
    add(self, name, dt);
    const seen = new Set();
    for (let id = node.id; id !== undefined; id = parent.get(id)) {
      const k = frameName(byId.get(id).callFrame);
      if (k === '(root)' || seen.has(k)) continue;
      seen.add(k);
      add(total, k, dt);
    }
  }
  const busy = wall - idle;
  const list = (m) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, ms]) => ({ name, ms: Math.round(ms), pct: busy > 0 ? Math.round((ms / busy) * 1000) / 10 : 0 }));
  return { wallMs: Math.round(wall), idleMs: Math.round(idle), busyMs: Math.round(busy), self: list(self), total: list(total) };
}

export function formatProfile(s, label) {
  const lines = [`${label}: wall ${s.wallMs} ms, idle ${s.idleMs} ms, busy ${s.busyMs} ms`];
  lines.push('  self time (% of busy):');
  for (const f of s.self) lines.push(`    ${String(f.pct).padStart(5)}%  ${String(f.ms).padStart(7)} ms  ${f.name}`);
  lines.push('  inclusive time (% of busy):');
  for (const f of s.total) lines.push(`    ${String(f.pct).padStart(5)}%  ${String(f.ms).padStart(7)} ms  ${f.name}`);
  return lines.join('\n');
}
