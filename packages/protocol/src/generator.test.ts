import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('../scripts/generate.mjs', import.meta.url));

describe('generator', () => {
  it('generator – src/generated and docs/protocol.md are up to date with the specs (--check)', () => {
    const r = spawnSync(process.execPath, [script, '--check'], { encoding: 'utf8' });
    expect(r.stderr.replace(/^warning: .*\n/gm, '')).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^generated files up to date/);
  });
});
