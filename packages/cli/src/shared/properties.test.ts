import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileThenArgs, parseKeyValueArgs, readPropertiesFile } from './properties.js';

describe('tool properties', () => {
  it('tool properties – key=value arguments split at the first =, a missing = is an error', () => {
    expect(parseKeyValueArgs(['a=1', 'b=x=y', 'c=', 'a=2'])).toEqual({ a: '2', b: 'x=y', c: '' });
    expect(() => parseKeyValueArgs(['nokey'])).toThrow("Invalid property 'nokey': expected key=value");
  });

  it('tool properties – config files are Java .properties (continuations, escapes, key value), arguments override them', async () => {
    expect(readPropertiesFile('f', () => 'acks all\nclient.id=a\\\n  b\nk=\\u0041\n')).toEqual({ acks: 'all', 'client.id': 'ab', k: 'A' });
    const dir = await mkdtemp(join(tmpdir(), 'samsa-props-'));
    try {
      const file = join(dir, 'producer.properties');
      await writeFile(file, '# producer\nacks=1\nlinger.ms: 5\n');
      expect(fileThenArgs(file, ['acks=all'])).toEqual({ acks: 'all', 'linger.ms': '5' });
      expect(fileThenArgs(undefined, ['x=1'])).toEqual({ x: '1' });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
