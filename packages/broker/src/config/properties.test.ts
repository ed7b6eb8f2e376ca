import { describe, expect, it } from 'vitest';
import { ConfigError } from './errors.js';
import { parseProperties, parsePropertiesEntries } from './properties.js';

const obj = (text: string) => Object.fromEntries(parseProperties(text));

// Expected values were checked against java.util.Properties.load (OpenJDK 17).
describe('broker config – properties syntax', () => {
  it('broker config – key=value, key: value, key value and blanks around the separator', () => {
    expect(obj('a=1\nb: 2\nc 3\nd = 4\ne\t:\t5\n')).toEqual({ a: '1', b: '2', c: '3', d: '4', e: '5' });
  });

  it('broker config – # and ! comments, indented comments and blank lines are skipped', () => {
    expect(obj('# c\n! c2\n   # indented comment\n\n  \t \nx=1\n')).toEqual({ x: '1' });
  });

  it('broker config – a trailing backslash continues the line and the next line loses its indent', () => {
    expect(obj('k=one \\\n    two \\\n\tthree\n')).toEqual({ k: 'one two three' });
  });

  it('broker config – an even number of trailing backslashes is an escaped backslash, not a continuation', () => {
    expect(obj('k=ends\\\\\nnext=1\n')).toEqual({ k: 'ends\\', next: '1' });
    expect(obj('k=a\\\\\\\n  b\n')).toEqual({ k: 'a\\b' });
  });

  it('broker config – a comment line never continues', () => {
    expect(obj('# comment \\\nreal=1\n')).toEqual({ real: '1' });
  });

  it('broker config – a blank line ends a continuation; a continued line starting with # is not a comment', () => {
    expect(obj('k=a\\\n\nnext=2\n')).toEqual({ k: 'a', next: '2' });
    expect(obj('k=a\\\n   \t\nz=1\n')).toEqual({ k: 'a', z: '1' });
    expect(obj('k=a\\\n  #notcomment\n')).toEqual({ k: 'a#notcomment' });
  });

  it('broker config – escapes \\t \\n \\uXXXX \\\\ and \\ before any other character', () => {
    expect(obj('k=tab\\there\\nnl\\u0041\\\\x\\q\n')).toEqual({ k: 'tab\there\nnlA\\xq' });
  });

  it('broker config – escaped blanks, = and : belong to the key', () => {
    expect(obj('my\\ key\\=x\\:y = v\n')).toEqual({ 'my key=x:y': 'v' });
  });

  it('broker config – trailing blanks of a value are kept, as Java keeps them', () => {
    expect(obj('k=v   \n')).toEqual({ k: 'v   ' });
  });

  it('broker config – empty values, keys without separator', () => {
    expect(obj('k=\nk2\nk3 =\n')).toEqual({ k: '', k2: '', k3: '' });
  });

  it('broker config – only one separator is skipped', () => {
    expect(obj('k==v\nk2 : : v\nk3 = = v\n')).toEqual({ k: '=v', k2: ': v', k3: '= v' });
  });

  it('broker config – colons and slashes inside values', () => {
    expect(obj('zookeeper.connect=h1:2181,h2:2181/chroot\n')).toEqual({ 'zookeeper.connect': 'h1:2181,h2:2181/chroot' });
  });

  it('broker config – \\r\\n, \\r and \\n line ends; form feeds are blanks; a backslash at EOF is dropped', () => {
    expect(obj('a=1\r\nb=2\rc=3\n')).toEqual({ a: '1', b: '2', c: '3' });
    expect(obj('\fk\f=\fv\n')).toEqual({ k: 'v' });
    expect(obj('k=v\\')).toEqual({ k: 'v' });
  });

  it('broker config – UTF-8 text, a leading BOM is dropped', () => {
    expect(obj('\uFEFFk=café \\u00e9\n')).toEqual({ k: 'café é' });
  });

  it('broker config – the last of repeated keys wins', () => {
    expect(obj('k=1\nk=2\n')).toEqual({ k: '2' });
    expect(parsePropertiesEntries('k=1\nk=2\n')).toHaveLength(2);
  });

  it('broker config – entries carry the line where they start', () => {
    const e = parsePropertiesEntries('# x\n\na=1\nb=one \\\n  two\nc=3\n');
    expect(e.map((x) => [x.key, x.line])).toEqual([['a', 3], ['b', 4], ['c', 6]]);
  });

  it('broker config – a malformed \\u escape is a ConfigError naming file, line and key', () => {
    const err = (() => {
      try {
        parsePropertiesEntries('a=1\nlog.dirs=C:\\users\\x\n', 'server.properties');
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).key).toBe('log.dirs');
    expect((err as ConfigError).message).toMatch(/Malformed.*server\.properties line 2/);
    expect(() => parseProperties('k=\\u12')).toThrow(ConfigError);
  });
});
