import { describe, expect, it } from 'vitest';
import { JaasParseError, parseJaasFile, parseJvmSystemProperties } from '@samsa/server-common';
import { CREATOR_ALL_ACL, OPEN_ACL_UNSAFE, ZkPerms, ZkSecurityError, defaultAcls, resolveZkSecurity } from './zk-security.js';

/** A JAAS file as Kafka's documentation writes it for brokers (KafkaServer and Client sections). */
const KAFKA_DOC_JAAS = `
// the broker's own SASL users
KafkaServer {
   org.apache.kafka.common.security.plain.PlainLoginModule required
   username="admin"
   password="admin-secret"
   user_admin="admin-secret";
};
/* ZooKeeper */
Client {
   org.apache.zookeeper.server.auth.DigestLoginModule required
   username="kafka"
   password="kafka-secret";
};
`;

const env = (opts: string) => ({ KAFKA_OPTS: opts });
const files = (m: Record<string, string>) => (p: string) => {
  const t = m[p];
  if (t === undefined) throw Object.assign(new Error(`ENOENT: no such file, open '${p}'`), { code: 'ENOENT' });
  return t;
};

describe('JAAS files', () => {
  it('jaas – sections, login modules, flags and quoted options as Java reads them', () => {
    const s = parseJaasFile(KAFKA_DOC_JAAS);
    expect([...s.keys()]).toEqual(['KafkaServer', 'Client']);
    expect(s.get('Client')).toEqual([
      { loginModule: 'org.apache.zookeeper.server.auth.DigestLoginModule', flag: 'required', options: { username: 'kafka', password: 'kafka-secret' } },
    ]);
    expect(s.get('KafkaServer')![0]!.options['user_admin']).toBe('admin-secret');
  });

  it('jaas – backslash escapes in quoted values, as java.io.StreamTokenizer reads them', () => {
    const text = 'Client { org.apache.zookeeper.server.auth.DigestLoginModule required username="broker" password="p\\"a\\\\ss word"; };';
    expect(parseJaasFile(text).get('Client')![0]!.options).toEqual({ username: 'broker', password: 'p"a\\ss word' });
  });

  it('jaas – a malformed file is a JaasParseError', () => {
    expect(() => parseJaasFile('Client { org.x.Y required username="a" ')).toThrow(JaasParseError);
    expect(() => parseJaasFile('Client { org.x.Y mandatory; };')).toThrow(/invalid control flag/);
  });

  it('jaas – -D system properties out of KAFKA_OPTS, quoted or bare', () => {
    expect(parseJvmSystemProperties('-Xmx1g -Djava.security.auth.login.config=/etc/kafka/jaas.conf -Dzookeeper.sasl.clientconfig="My Client" -Dflag')).toEqual({
      'java.security.auth.login.config': '/etc/kafka/jaas.conf',
      'zookeeper.sasl.clientconfig': 'My Client',
      flag: '',
    });
    expect(parseJvmSystemProperties(undefined)).toEqual({});
  });
});

describe('ZooKeeper ACLs and credentials', () => {
  it("zk security – defaultAcls: Kafka's creator-all plus world read, no world read on sensitive paths", () => {
    const worldRead = { perms: ZkPerms.READ, scheme: 'world', id: 'anyone' };
    expect(defaultAcls(true, '/brokers/topics/t')).toEqual([...CREATOR_ALL_ACL, worldRead]);
    expect(defaultAcls(true, '/config/topics/t')).toEqual([...CREATOR_ALL_ACL, worldRead]);
    expect(defaultAcls(true, '/config/users')).toEqual(CREATOR_ALL_ACL);
    expect(defaultAcls(true, '/config/users/alice')).toEqual(CREATOR_ALL_ACL);
    expect(defaultAcls(true, '/config/brokers/<default>')).toEqual(CREATOR_ALL_ACL);
    expect(defaultAcls(true, '/delegation_token/tokens/x')).toEqual(CREATOR_ALL_ACL);
    expect(defaultAcls(true, '/config')).toEqual([...CREATOR_ALL_ACL, worldRead]);
    expect(defaultAcls(true, '/consumers')).toEqual(OPEN_ACL_UNSAFE);
    expect(defaultAcls(false, '/config/users/alice')).toEqual(OPEN_ACL_UNSAFE);
  });

  it('zk security – digest credentials from the JAAS Client section named by KAFKA_OPTS', () => {
    const s = resolveZkSecurity({
      setAcl: true,
      env: env('-Djava.security.auth.login.config=/j.conf'),
      readFile: files({ '/j.conf': KAFKA_DOC_JAAS }),
    });
    expect(s).toEqual({
      authInfo: [{ scheme: 'digest', auth: 'kafka:kafka-secret' }],
      secureAcls: true,
      source: { loginConfig: '/j.conf', contextName: 'Client', username: 'kafka' },
    });
  });

  it('zk security – zookeeper.sasl.clientconfig picks another login context', () => {
    const text = 'Zk { org.apache.zookeeper.server.auth.DigestLoginModule required username="u" password="p"; };';
    const s = resolveZkSecurity({
      setAcl: false,
      env: env('-Djava.security.auth.login.config=/j.conf -Dzookeeper.sasl.clientconfig=Zk'),
      readFile: files({ '/j.conf': text }),
    });
    expect(s.authInfo).toEqual([{ scheme: 'digest', auth: 'u:p' }]);
    expect(s.secureAcls).toBe(false);
  });

  it("zk security – zookeeper.set.acl=true without credentials is Kafka's startup error", () => {
    const err = (() => {
      try {
        resolveZkSecurity({ setAcl: true, env: {} });
      } catch (e) {
        return e as Error;
      }
      throw new Error('expected a ZkSecurityError');
    })();
    expect(err).toBeInstanceOf(ZkSecurityError);
    expect(err.message).toBe(
      'zookeeper.set.acl is true, but ZooKeeper client TLS configuration identifying at least zookeeper.ssl.client.enable, zookeeper.clientCnxnSocket, ' +
        'and zookeeper.ssl.keystore.location was not present and the verification of the JAAS login file failed ' +
        '[java.security.auth.login.config=null, zookeeper.sasl.client=default:true, zookeeper.sasl.clientconfig=default:Client]',
    );
    // a JAAS file without the Client section is no credentials either
    expect(() =>
      resolveZkSecurity({
        setAcl: true,
        env: env('-Djava.security.auth.login.config=/j.conf'),
        readFile: files({ '/j.conf': 'KafkaServer { a.B required; };' }),
      }),
    ).toThrow(/zookeeper.set.acl is true.*java.security.auth.login.config=\/j.conf/);
  });

  it('zk security – set.acl=false and no JAAS: anonymous with open ACLs; tools secure exactly when credentials exist', () => {
    expect(resolveZkSecurity({ setAcl: false, env: {} })).toEqual({ authInfo: [], secureAcls: false });
    expect(resolveZkSecurity({ setAcl: 'ifAuthenticated', env: {} }).secureAcls).toBe(false);
    const s = resolveZkSecurity({
      setAcl: 'ifAuthenticated',
      env: env('-Djava.security.auth.login.config=/j.conf'),
      readFile: files({ '/j.conf': KAFKA_DOC_JAAS }),
    });
    expect(s.secureAcls).toBe(true);
  });

  it('zk security – unusable JAAS settings refuse to start with the cause', () => {
    const missing = () => resolveZkSecurity({ setAcl: false, env: env('-Djava.security.auth.login.config=/nope.conf'), readFile: files({}) });
    expect(missing).toThrow(/Exception while loading Zookeeper JAAS login context \[java.security.auth.login.config=\/nope.conf/);
    try {
      missing();
    } catch (e) {
      expect((e as Error).cause).toMatchObject({ code: 'ENOENT' });
    }
    const readFile = files({ '/j.conf': KAFKA_DOC_JAAS });
    expect(() => resolveZkSecurity({ setAcl: true, env: env('-Djava.security.auth.login.config=/j.conf -Dzookeeper.sasl.client=false'), readFile })).toThrow(
      /Exception while determining if ZooKeeper is secure/,
    );
    const krb = 'Client { com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true; };';
    expect(() => resolveZkSecurity({ setAcl: true, env: env('-Djava.security.auth.login.config=/k.conf'), readFile: files({ '/k.conf': krb }) })).toThrow(
      /digest credentials only/,
    );
    const noPassword = 'Client { org.apache.zookeeper.server.auth.DigestLoginModule required username="u"; };';
    expect(() =>
      resolveZkSecurity({ setAcl: true, env: env('-Djava.security.auth.login.config=/p.conf'), readFile: files({ '/p.conf': noPassword }) }),
    ).toThrow(/needs username and password/);
  });
});
