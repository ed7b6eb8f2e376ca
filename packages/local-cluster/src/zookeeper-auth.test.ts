import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { zookeeperAuthSettings, zookeeperClientJaas } from './zookeeper-auth.js';

describe('local cluster – secured ZooKeeper', () => {
  it('zookeeper auth – a JAAS Client section with DigestLoginModule, quotes escaped', () => {
    expect(zookeeperClientJaas({ username: 'samsa-broker', password: 'pa"ss\\word' })).toBe(
      'Client {\n  org.apache.zookeeper.server.auth.DigestLoginModule required\n  username="samsa-broker"\n  password="pa\\"ss\\\\word";\n};\n',
    );
  });

  it('zookeeper auth – writes the JAAS file readable by its owner only and names it in KAFKA_OPTS, with zookeeper.set.acl=true', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'samsa-zkauth dir-'));
    try {
      const s = await zookeeperAuthSettings(join(dir, 'secure'), { username: 'broker', password: 'secret' });
      expect(s.jaasFile).toBe(join(dir, 'secure', 'zookeeper-client-jaas.conf'));
      expect((await stat(s.jaasFile)).mode & 0o777).toBe(0o600);
      expect(await readFile(s.jaasFile, 'utf8')).toContain('username="broker"\n  password="secret";');
      // the path has a space: quoted, as a java command line would have it
      expect(s.env.KAFKA_OPTS).toBe(`-Djava.security.auth.login.config="${s.jaasFile}"`);
      expect(s.overrides).toEqual({ 'zookeeper.set.acl': 'true' });
      await expect(zookeeperAuthSettings(dir, { username: 'a:b', password: 'x' })).rejects.toThrow(/invalid ZooKeeper digest username/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
