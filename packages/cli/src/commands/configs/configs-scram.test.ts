import { describe, expect, it } from 'vitest';
import { BatchError, KafkaError, type Admin, type UserScramCredentialAlteration, type UserScramCredentialsDescription } from '@samsa/client';
import { SCRAM_MECHANISMS, generateCredential, parseCredential } from '@samsa/broker';
import { runConfigsCommand, type ConfigsDeps } from './configs.js';
import { ScramConfigError, parseScramCredentialConfig, scramAlterations, scramCredentialsForZk } from './configs-scram.js';

const isQuota = (k: string) => ['producer_byte_rate', 'consumer_byte_rate', 'request_percentage'].includes(k);

/** An Admin recording SCRAM and quota calls; describe answers from `credentials`. */
function fakeAdmin(credentials: Record<string, UserScramCredentialsDescription['credentials']> = {}) {
  const altered: UserScramCredentialAlteration[][] = [];
  const quotas: unknown[] = [];
  const admin = {
    alterUserScramCredentials: async (a: UserScramCredentialAlteration[]) => void altered.push(a),
    describeUserScramCredentials: async (users?: string[]) => {
      const names = users ?? Object.keys(credentials).sort();
      const missing = names.filter((u) => !(u in credentials));
      const found = names.filter((u) => u in credentials).map((user) => ({ user, credentials: credentials[user]! }));
      if (missing.length > 0) {
        const errors = new Map(
          missing.map((u) => [u, new KafkaError('RESOURCE_NOT_FOUND', `Attempt to describe a user credential that does not exist: ${u}`)]),
        );
        throw new BatchError(
          'describeUserScramCredentials',
          errors,
          found.map((f) => f.user),
        );
      }
      return found;
    },
    describeClientQuotas: async () => [{ entity: { user: 'alice' }, values: { producer_byte_rate: 1024 } }],
    alterClientQuotas: async (q: unknown) => void quotas.push(q),
    close: async () => undefined,
  } as unknown as Admin;
  const deps: ConfigsDeps = { createAdmin: () => admin };
  return { deps, altered, quotas };
}

async function run(deps: ConfigsDeps, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runConfigsCommand(args, { out: (s) => (out += s), err: (s) => (err += s) }, deps);
  return { code, out, err };
}

const USER = ['--bootstrap-server', 'b:9092', '--entity-type', 'users', '--entity-name', 'alice'];

describe('configs – SCRAM credentials', () => {
  it('configs scram – a credential value: iterations default 4096, fewer than 4096 refused as ConfigCommand', () => {
    expect(parseScramCredentialConfig('SCRAM-SHA-256', 'iterations=8192,password=alice-secret', true)).toEqual({ iterations: 8192, password: 'alice-secret' });
    expect(parseScramCredentialConfig('SCRAM-SHA-512', 'password=p=w,x', true)).toEqual({ iterations: 4096, password: 'p=w,x' });
    expect(parseScramCredentialConfig('SCRAM-SHA-512', 'iterations=-1,password=p', true)).toEqual({ iterations: 4096, password: 'p' });
    expect(() => parseScramCredentialConfig('SCRAM-SHA-256', 'iterations=1000,password=p', true)).toThrow(
      new ScramConfigError('Iterations 1000 is less than the minimum 4096 required for SCRAM-SHA-256'),
    );
    expect(() => parseScramCredentialConfig('SCRAM-SHA-256', 'iterations=1000,password=p', false)).toThrow(
      'Iterations 1000 is less than the minimum 4096 required for SCRAM_SHA_256',
    );
    expect(() => parseScramCredentialConfig('SCRAM-SHA-256', 'secret', true)).toThrow('Invalid credential property SCRAM_SHA_256=secret');
    expect(() => parseScramCredentialConfig('SCRAM-SHA-256', 'iterations=-1,password=p', false)).toThrow('Invalid credential property');
  });

  it('configs scram – ConfigCommand’s checks: SCRAM only for a named user, never mixed with quotas', () => {
    const add = { 'SCRAM-SHA-256': 'password=x' };
    expect(scramAlterations(['users'], 'alice', add, ['SCRAM-SHA-512'], isQuota)).toEqual({
      upserts: [['SCRAM-SHA-256', 'password=x']],
      deletes: ['SCRAM-SHA-512'],
    });
    expect(scramAlterations(['users'], 'alice', { producer_byte_rate: '1' }, [], isQuota)).toEqual({ upserts: [], deletes: [] });
    expect(() => scramAlterations(['users'], 'alice', { ...add, consumer_byte_rate: '5' }, [], isQuota)).toThrow(
      "Cannot alter both quota and SCRAM credential configs simultaneously for 'users' using --bootstrap-server.",
    );
    expect(() => scramAlterations(['users'], undefined, add, [], isQuota)).toThrow(
      'The use of --entity-default or --user-defaults is not allowed with User SCRAM Credentials using --bootstrap-server.',
    );
    expect(() => scramAlterations(['users'], 'alice', {}, ['foo', 'bar'], isQuota)).toThrow(
      "Only quota and SCRAM credential configs can be deleted for 'users' using --bootstrap-server. Unexpected config names: ArrayBuffer(foo, bar)",
    );
    expect(() => scramAlterations(['clients'], 'c1', add, [], isQuota)).toThrow(
      "Only quota configs can be added for 'clients' using --bootstrap-server. Unexpected config names: Set(SCRAM-SHA-256)",
    );
    expect(() => scramAlterations(['users', 'clients'], 'alice', {}, ['SCRAM-SHA-256'], isQuota)).toThrow(
      "Only quota configs can be deleted for 'clients' using --bootstrap-server. Unexpected config names: ArrayBuffer(SCRAM-SHA-256)",
    );
  });

  it('configs scram – --alter --add-config / --delete-config go to AlterUserScramCredentials', async () => {
    const f = fakeAdmin();
    const r = await run(
      f.deps,
      ...USER,
      '--alter',
      '--add-config',
      'SCRAM-SHA-256=[iterations=8192,password=alice-secret],SCRAM-SHA-512=[password=alice-secret]',
    );
    expect(r).toEqual({ code: 0, out: 'Completed updating config for user alice.\n', err: '' });
    expect(f.altered).toEqual([
      [
        { user: 'alice', mechanism: 'SCRAM-SHA-256', password: 'alice-secret', iterations: 8192 },
        { user: 'alice', mechanism: 'SCRAM-SHA-512', password: 'alice-secret', iterations: 4096 },
      ],
    ]);
    expect((await run(f.deps, ...USER, '--alter', '--delete-config', 'SCRAM-SHA-512')).out).toBe('Completed updating config for user alice.\n');
    expect(f.altered[1]).toEqual([{ user: 'alice', mechanism: 'SCRAM-SHA-512', delete: true }]);
    expect(f.quotas).toEqual([]);
  });

  it('configs scram – refused alterations print ConfigCommand’s message on stderr, exit 1, nothing sent', async () => {
    const f = fakeAdmin();
    const low = await run(f.deps, ...USER, '--alter', '--add-config', 'SCRAM-SHA-256=[iterations=100,password=x]');
    expect(low).toEqual({ code: 1, out: '', err: 'Iterations 100 is less than the minimum 4096 required for SCRAM-SHA-256\n' });
    const mixed = await run(f.deps, ...USER, '--alter', '--add-config', 'SCRAM-SHA-256=[password=x],producer_byte_rate=1024');
    expect(mixed.code).toBe(1);
    expect(mixed.err).toBe("Cannot alter both quota and SCRAM credential configs simultaneously for 'users' using --bootstrap-server.\n");
    expect(f.altered).toEqual([]);
    expect(f.quotas).toEqual([]);
  });

  it('configs scram – --describe prints the quota line then Kafka’s SCRAM credential line', async () => {
    const f = fakeAdmin({
      alice: [
        { mechanism: 'SCRAM-SHA-256', iterations: 8192 },
        { mechanism: 'SCRAM-SHA-512', iterations: 4096 },
      ],
    });
    const r = await run(f.deps, ...USER, '--describe');
    expect(r).toEqual({
      code: 0,
      out:
        "Quota configs for user-principal 'alice' are producer_byte_rate=1024.0\n" +
        "SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=8192, SCRAM-SHA-512=iterations=4096\n",
      err: '',
    });
    // a user without credentials: only its quotas
    const bob = await run(f.deps, '--bootstrap-server', 'b:9092', '--entity-type', 'users', '--entity-name', 'bob', '--describe');
    expect(bob.out).toBe("Quota configs for user-principal 'alice' are producer_byte_rate=1024.0\n");
    // the default user: no SCRAM part
    const def = await run(f.deps, '--bootstrap-server', 'b:9092', '--entity-type', 'users', '--entity-default', '--describe');
    expect(def.out).not.toContain('SCRAM');
  });

  it('configs scram – with --zookeeper a SCRAM key becomes the stored credential the brokers verify', () => {
    const out = scramCredentialsForZk({ 'SCRAM-SHA-512': 'iterations=8192,password=alice-secret', producer_byte_rate: '10' });
    expect(out['producer_byte_rate']).toBe('10');
    const c = parseCredential(out['SCRAM-SHA-512']!);
    expect(c.iterations).toBe(8192);
    const again = generateCredential(SCRAM_MECHANISMS['SCRAM-SHA-512'], 'alice-secret', 8192, Buffer.from(c.salt));
    expect(again.storedKey.equals(c.storedKey)).toBe(true);
    expect(again.serverKey.equals(c.serverKey)).toBe(true);
    expect(() => scramCredentialsForZk({ 'SCRAM-SHA-256': 'password' })).toThrow('Invalid credential property SCRAM_SHA_256=password');
  });
});
