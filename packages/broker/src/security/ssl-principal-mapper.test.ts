import { describe, expect, it } from 'vitest';
import { ConfigError } from '../config/errors.js';
import { NoMatchingRule, SslPrincipalMapper } from './ssl-principal-mapper.js';

describe('ssl principal mapper', () => {
  it("ssl principal mapper – Kafka's documented example rules map DNs to principal names", () => {
    const mapper = new SslPrincipalMapper(
      [
        'RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L',
        'RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L',
        'RULE:^cn=(.*?),ou=(.*?),dc=(.*?),dc=(.*?)$/$1@$2/U',
        'RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U',
        'DEFAULT',
      ].join(', '),
    );
    expect(mapper.getName('CN=Duke,OU=ServiceUsers,O=Org,C=US')).toBe('duke');
    expect(mapper.getName('CN=Duke,OU=SME,O=mycp,L=Fulton,ST=MD,C=US')).toBe('duke@sme');
    expect(mapper.getName('cn=duke,ou=sme,dc=mycp,dc=com')).toBe('DUKE@SME');
    expect(mapper.getName('cN=duke,OU=JavaSoft,O=Sun Microsystems')).toBe('DUKE');
    expect(mapper.getName('OU=JavaSoft,O=Sun Microsystems,C=US')).toBe('OU=JavaSoft,O=Sun Microsystems,C=US');
  });

  it('ssl principal mapper – the docs example: serviceuser and adminuser@admin, /U upper-cases', () => {
    const rules =
      'RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L,RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L,DEFAULT';
    const m = new SslPrincipalMapper(rules);
    expect(m.getName('CN=serviceuser,OU=ServiceUsers,O=Unknown,L=Unknown,ST=Unknown,C=Unknown')).toBe('serviceuser');
    expect(m.getName('CN=adminUser,OU=Admin,O=Unknown,L=Unknown,ST=Unknown,C=Unknown')).toBe('adminuser@admin');
    expect(
      new SslPrincipalMapper('RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/U').getName(
        'CN=adminUser,OU=Admin,O=Unknown,L=Unknown,ST=Unknown,C=Unknown',
      ),
    ).toBe('ADMINUSER@ADMIN');
  });

  it('ssl principal mapper – DEFAULT (and null) is the DN itself', () => {
    expect(new SslPrincipalMapper('DEFAULT').getName('CN=alice,OU=eng,O=Samsa')).toBe('CN=alice,OU=eng,O=Samsa');
    expect(new SslPrincipalMapper(null).getName('CN=alice')).toBe('CN=alice');
  });

  it('ssl principal mapper – a DN no rule matches throws NoMatchingRule', () => {
    const m = new SslPrincipalMapper('RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/');
    expect(() => m.getName('CN=alice,OU=eng')).toThrow(NoMatchingRule);
    expect(() => m.getName('CN=alice,OU=eng')).toThrow('No rules apply to CN=alice,OU=eng, rules [RULE:^CN=(.*?),OU=ServiceUsers.*$/$1]');
  });

  it("ssl principal mapper – Kafka's valid and invalid rules", () => {
    for (const r of [
      'DEFAULT',
      'RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/',
      'RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, DEFAULT',
      'RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/',
      'RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L',
      'RULE:^cn=(.?),ou=(.?),dc=(.?),dc=(.?)$/$1@$2/U',
      'RULE:^CN=([^,ADEFLTU,]+)(,.*|$)/$1/',
      'RULE:^CN=([^,DEFAULT,]+)(,.*|$)/$1/',
    ])
      expect(() => new SslPrincipalMapper(r), r).not.toThrow();
    for (const r of [
      'default',
      'DEFAUL',
      'DEFAULT/L',
      'DEFAULT/U',
      'RULE:CN=(.*?),OU=ServiceUsers.*/$1',
      'rule:^CN=(.*?),OU=ServiceUsers.*$/$1/',
      'RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L/U',
      'RULE:^CN=(.*?),OU=ServiceUsers.*$/L',
      'RULE:^CN=(.*?),OU=ServiceUsers.*$/U',
      'RULE:^CN=(.*?),OU=ServiceUsers.*$/LU',
    ])
      expect(() => new SslPrincipalMapper(r), r).toThrow(ConfigError);
    expect(() => new SslPrincipalMapper('DEFAULT/L')).toThrow('Invalid rule: `DEFAULT/L`, unmatched substring: `/L`');
  });

  it("ssl principal mapper – rules split as Kafka's: spaces, empty rules, escapes", () => {
    const split = (rules: string) => new SslPrincipalMapper(rules).toString();
    const cases: Array<[string, string]> = [
      ['[]', ''],
      ['[DEFAULT]', 'DEFAULT'],
      ['[RULE:/]', 'RULE://'],
      ['[RULE:/.*]', 'RULE:/.*/'],
      ['[RULE:/.*/L]', 'RULE:/.*/L'],
      ['[RULE:/, DEFAULT]', 'RULE://,DEFAULT'],
      ['[RULE:/, DEFAULT]', '  RULE:// ,  DEFAULT  '],
      ['[RULE:   /     , DEFAULT]', '  RULE:   /     / ,  DEFAULT  '],
      ['[RULE:  /     /U, DEFAULT]', '  RULE:  /     /U   ,DEFAULT  '],
      ['[RULE:([A-Z]*)/$1/U, RULE:([a-z]+)/$1, DEFAULT]', '  RULE:([A-Z]*)/$1/U   ,RULE:([a-z]+)/$1/,   DEFAULT  '],
      ['[]', ',   , , ,      , , ,   '],
      ['[RULE:/, DEFAULT]', ',,RULE://,,,DEFAULT,,'],
      ['[RULE: /   , DEFAULT]', ',  , RULE: /   /    ,,,   DEFAULT, ,   '],
      ['[RULE:   /  /U, DEFAULT]', '     ,  , RULE:   /  /U    ,,  ,DEFAULT, ,'],
      [String.raw`[RULE:\/\\\(\)\n\t/\/\/]`, String.raw`RULE:\/\\\(\)\n\t/\/\//`],
      [String.raw`[RULE:\**\/+/*/L, RULE:\/*\**/**]`, String.raw`RULE:\**\/+/*/L,RULE:\/*\**/**/`],
      [
        String.raw`[RULE:,RULE:,/,RULE:,\//U, RULE:,/RULE:,, RULE:,RULE:,/L,RULE:,/L, RULE:, DEFAULT, /DEFAULT, DEFAULT]`,
        String.raw`RULE:,RULE:,/,RULE:,\//U,RULE:,/RULE:,/,RULE:,RULE:,/L,RULE:,/L,RULE:, DEFAULT, /DEFAULT/,DEFAULT`,
      ],
    ];
    for (const [expected, rules] of cases) expect(split(rules), rules).toBe(`SslPrincipalMapper(rules = ${expected})`);
  });

  it('ssl principal mapper – an escaped comma inside a CN (Kafka: "Tkac\\, Adam")', () => {
    const m = new SslPrincipalMapper(String.raw`RULE:^CN=((\\, *|\w)+)(,.*|$)/$1/,DEFAULT`);
    expect(m.getName(String.raw`CN=Tkac\, Adam,OU=ITZ,DC=geodis,DC=cz`)).toBe(String.raw`Tkac\, Adam`);
  });

  it('ssl principal mapper – replacement: a $n beyond the groups stays literal, \\ escapes, $12 falls back to $1 then "2"', () => {
    expect(new SslPrincipalMapper('RULE:^CN=([a-z]+),O=([a-z]+)$/$1@$2-$3/').getName('CN=alice,O=samsa')).toBe('alice@samsa-$3');
    expect(new SslPrincipalMapper(String.raw`RULE:^CN=([a-z]+)$/\$1=$1/`).getName('CN=bob')).toBe('$1=bob');
    expect(new SslPrincipalMapper('RULE:^CN=([a-z]+)$/$12/').getName('CN=bob')).toBe('bob2');
    expect(new SslPrincipalMapper('RULE:^CN=([a-z]+)$/<$0>/').getName('CN=bob')).toBe('<CN=bob>');
  });
});
