import { describe, expect, it } from 'vitest';
import { PropertiesSyntaxError, parseProperties, parsePropertiesEntries, parsePropertiesRecord } from './properties.js';

const obj = (text: string) => Object.fromEntries(parseProperties(text));

// Expected values were checked against java.util.Properties.load (OpenJDK 17).
describe('properties – Java .properties syntax', () => {
  it('properties – key=value, key: value, key value and blanks around the separator', () => {
    expect(obj('a=1\nb: 2\nc 3\nd = 4\ne\t:\t5\n')).toEqual({ a: '1', b: '2', c: '3', d: '4', e: '5' });
  });

  it('properties – # and ! comments, indented comments and blank lines are skipped', () => {
    expect(obj('# c\n! c2\n   # indented comment\n\n  \t \nx=1\n')).toEqual({ x: '1' });
  });

  it('properties – a trailing backslash continues the line and the next line loses its indent', () => {
    expect(obj('k=one \\\n    two \\\n\tthree\n')).toEqual({ k: 'one two three' });
  });

  it('properties – an even number of trailing backslashes is an escaped backslash, not a continuation', () => {
    expect(obj('k=ends\\\\\nnext=1\n')).toEqual({ k: 'ends\\', next: '1' });
    expect(obj('k=a\\\\\\\n  b\n')).toEqual({ k: 'a\\b' });
  });

  it('properties – a comment line never continues', () => {
    expect(obj('# comment \\\nreal=1\n')).toEqual({ real: '1' });
  });

  it('properties – a blank line ends a continuation; a continued line starting with # is not a comment', () => {
    expect(obj('k=a\\\n\nnext=2\n')).toEqual({ k: 'a', next: '2' });
    expect(obj('k=a\\\n   \t\nz=1\n')).toEqual({ k: 'a', z: '1' });
    expect(obj('k=a\\\n  #notcomment\n')).toEqual({ k: 'a#notcomment' });
  });

  it('properties – escapes \\t \\n \\uXXXX \\\\ and \\ before any other character', () => {
    expect(obj('k=tab\\there\\nnl\\u0041\\\\x\\q\n')).toEqual({ k: 'tab\there\nnlA\\xq' });
  });

  it('properties – escaped blanks, = and : belong to the key', () => {
    expect(obj('my\\ key\\=x\\:y = v\n')).toEqual({ 'my key=x:y': 'v' });
  });

  it('properties – trailing blanks of a value are kept, as Java keeps them', () => {
    expect(obj('k=v   \n')).toEqual({ k: 'v   ' });
  });

  it('properties – empty values, keys without separator', () => {
    expect(obj('k=\nk2\nk3 =\n')).toEqual({ k: '', k2: '', k3: '' });
  });

  it('properties – only one separator is skipped', () => {
    expect(obj('k==v\nk2 : : v\nk3 = = v\n')).toEqual({ k: '=v', k2: ': v', k3: '= v' });
  });

  it('properties – colons and slashes inside values', () => {
    expect(obj('zookeeper.connect=h1:2181,h2:2181/chroot\n')).toEqual({ 'zookeeper.connect': 'h1:2181,h2:2181/chroot' });
  });

  it('properties – \\r\\n, \\r and \\n line ends; form feeds are blanks; a backslash at EOF is dropped', () => {
    expect(obj('a=1\r\nb=2\rc=3\n')).toEqual({ a: '1', b: '2', c: '3' });
    expect(obj('\fk\f=\fv\n')).toEqual({ k: 'v' });
    expect(obj('k=v\\')).toEqual({ k: 'v' });
  });

  it('properties – UTF-8 text, a leading BOM is dropped', () => {
    expect(obj('\uFEFFk=café \\u00e9\n')).toEqual({ k: 'café é' });
  });

  it('properties – the last of repeated keys wins', () => {
    expect(obj('k=1\nk=2\n')).toEqual({ k: '2' });
    expect(parsePropertiesEntries('k=1\nk=2\n')).toHaveLength(2);
  });

  it('properties – entries carry the line where they start', () => {
    const e = parsePropertiesEntries('# x\n\na=1\nb=one \\\n  two\nc=3\n');
    expect(e.map((x) => [x.key, x.line])).toEqual([
      ['a', 3],
      ['b', 4],
      ['c', 6],
    ]);
  });

  it('properties – a malformed \\u escape is a PropertiesSyntaxError naming file, line and key', () => {
    const err = (() => {
      try {
        parsePropertiesEntries('a=1\nlog.dirs=C:\\users\\x\n', 'server.properties');
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(PropertiesSyntaxError);
    expect((err as PropertiesSyntaxError).key).toBe('log.dirs');
    expect((err as PropertiesSyntaxError).message).toMatch(/Malformed.*server\.properties line 2/);
    expect(() => parseProperties('k=\\u12')).toThrow(PropertiesSyntaxError);
  });

  it('properties – as a plain object for the tools: last value wins, blanks kept inside values', () => {
    expect(
      parsePropertiesRecord(
        '# admin\nclient.id = cli\nrequest.timeout.ms=500\n! other\ndefault.api.timeout.ms: 2000\nk=1\nk=2\nsasl.jaas.config=a b \\\n  c\n',
      ),
    ).toEqual({
      'client.id': 'cli',
      'request.timeout.ms': '500',
      'default.api.timeout.ms': '2000',
      k: '2',
      'sasl.jaas.config': 'a b c',
    });
  });
});
