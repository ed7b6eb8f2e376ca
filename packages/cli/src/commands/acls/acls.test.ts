import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { Admin } from '@samsa/client';
import { aclBindingFilterMatches, type AclBinding, type AclBindingFilter } from '@samsa/protocol';
import { runAclsCommand, type AclsDeps } from './acls.js';

/** An Admin keeping ACLs in memory, as a broker's authorizer would. */
function fakeAdmin(): { deps: AclsDeps; acls: AclBinding[] } {
  const acls: AclBinding[] = [];
  const admin = {
    createAcls: async (bs: AclBinding[]) => void acls.push(...bs),
    describeAcls: async (f: AclBindingFilter) => acls.filter((b) => aclBindingFilterMatches(f, b)),
    deleteAcls: async (fs: AclBindingFilter[]) =>
      fs.map((f) => {
        const gone = acls.filter((b) => aclBindingFilterMatches(f, b));
        for (const g of gone) acls.splice(acls.indexOf(g), 1);
        return gone;
      }),
    close: async () => undefined,
  } as unknown as Admin;
  return { deps: { createAdmin: () => admin }, acls };
}

async function run(deps: AclsDeps, args: string[], input = ''): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runAclsCommand(args, { out: (s) => (out += s), err: (s) => (err += s), input: Readable.from([input]) }, deps);
  return { code, out, err };
}

const BS = ['--bootstrap-server', 'localhost:9092'];

describe('acls', () => {
  it("acls – --add prints Kafka's Adding and Current ACLs blocks", async () => {
    const f = fakeAdmin();
    const r = await run(f.deps, [
      ...BS,
      '--add',
      '--allow-principal',
      'User:alice',
      '--operation',
      'Read',
      '--topic',
      'orders-',
      '--resource-pattern-type',
      'prefixed',
    ]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const pattern = 'ResourcePattern(resourceType=TOPIC, name=orders-, patternType=PREFIXED)';
    const acl = '(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)';
    expect(r.out).toBe(`Adding ACLs for resource \`${pattern}\`: \n \t${acl} \n\nCurrent ACLs for resource \`${pattern}\`: \n \t${acl} \n\n`);
  });

  it('acls – principals × hosts × operations, deny entries, default operation All; --list of everything', async () => {
    const f = fakeAdmin();
    await run(f.deps, [
      ...BS,
      '--add',
      '--allow-principal',
      'User:a',
      '--allow-host',
      '10.0.0.1',
      '--operation',
      'Read',
      '--operation',
      'Describe',
      '--group',
      'g1',
    ]);
    await run(f.deps, [...BS, '--add', '--deny-principal', 'User:b', '--cluster']);
    expect(f.acls.map((b) => `${b.entry.principal} ${b.entry.host} ${b.entry.operation} ${b.entry.permissionType} ${b.pattern.name}`)).toEqual([
      'User:a 10.0.0.1 3 3 g1',
      'User:a 10.0.0.1 8 3 g1',
      'User:b * 2 2 kafka-cluster',
    ]);
    const r = await run(f.deps, [...BS, '--list']);
    expect(r.out).toContain(
      'Current ACLs for resource `ResourcePattern(resourceType=GROUP, name=g1, patternType=LITERAL)`: \n \t(principal=User:a, host=10.0.0.1, operation=READ',
    );
    expect(r.out).toContain('ResourcePattern(resourceType=CLUSTER, name=kafka-cluster, patternType=LITERAL)');
  });

  it('acls – --remove asks unless --force, and removes only what the principal filter names', async () => {
    const f = fakeAdmin();
    await run(f.deps, [...BS, '--add', '--allow-principal', 'User:a', '--allow-principal', 'User:b', '--operation', 'Write', '--topic', 't']);
    const no = await run(f.deps, [...BS, '--remove', '--allow-principal', 'User:a', '--operation', 'Write', '--topic', 't'], 'n\n');
    expect(no.out).toContain(
      'Are you sure you want to remove ACLs: \n \t(principal=User:a, host=*, operation=WRITE, permissionType=ALLOW) \n from resource filter',
    );
    expect(f.acls).toHaveLength(2);
    await run(f.deps, [...BS, '--remove', '--force', '--allow-principal', 'User:a', '--operation', 'Write', '--topic', 't']);
    expect(f.acls.map((b) => b.entry.principal)).toEqual(['User:b']);
    await run(f.deps, [...BS, '--remove', '--topic', 't'], 'y\n');
    expect(f.acls).toEqual([]);
  });

  it('acls – usage errors as kafka-acls.sh reports them', async () => {
    const f = fakeAdmin();
    expect((await run(f.deps, [...BS, '--add', '--list'])).err).toMatch(/exactly one action/);
    expect((await run(f.deps, [...BS, '--add', '--topic', 't'])).err).toMatch(/--allow-principal, --deny-principal/);
    expect((await run(f.deps, [...BS, '--add', '--allow-principal', 'User:a', '--operation', 'Read', '--cluster'])).err).toMatch(
      /ResourceType CLUSTER only supports operations CREATE,CLUSTER_ACTION/,
    );
    expect((await run(f.deps, [...BS, '--add', '--allow-principal', 'alice', '--topic', 't'])).err).toMatch(/Invalid principal/);
    expect((await run(f.deps, [...BS, '--add', '--allow-principal', 'User:a', '--topic', 't', '--resource-pattern-type', 'match'])).code).toBe(1);
    expect(f.acls).toEqual([]);
  });

  it('acls – --producer and --consumer add the role sets as kafka-acls.sh does (and --remove takes them off)', async () => {
    const f = fakeAdmin();
    const show = () => f.acls.map((b) => `${b.pattern.resourceType}:${b.pattern.name} ${b.entry.principal} ${b.entry.operation}`).sort();
    const p = await run(f.deps, [...BS, '--add', '--allow-principal', 'User:p', '--producer', '--topic', 'orders', '--transactional-id', 'tx', '--idempotent']);
    expect(p.code).toBe(0);
    // topic 2, cluster 4, transactional id 5; ops: CREATE 5, WRITE 4, DESCRIBE 8, IDEMPOTENT_WRITE 12
    expect(show()).toEqual(['2:orders User:p 4', '2:orders User:p 5', '2:orders User:p 8', '4:kafka-cluster User:p 12', '5:tx User:p 4', '5:tx User:p 8']);
    const c = await run(f.deps, [...BS, '--add', '--allow-principal', 'User:c', '--consumer', '--topic', 'orders', '--group', 'g1']);
    expect(c.code).toBe(0);
    // READ 3 on the topic and the group (3), DESCRIBE 8 on the topic
    expect(show().filter((x) => x.includes('User:c'))).toEqual(['2:orders User:c 3', '2:orders User:c 8', '3:g1 User:c 3']);
    await run(f.deps, [...BS, '--remove', '--force', '--allow-principal', 'User:c', '--consumer', '--topic', 'orders', '--group', 'g1']);
    expect(show().filter((x) => x.includes('User:c'))).toEqual([]);
    expect(f.acls).toHaveLength(6);
  });

  it('acls – --producer/--consumer usage errors', async () => {
    const f = fakeAdmin();
    expect((await run(f.deps, [...BS, '--add', '--allow-principal', 'User:c', '--consumer', '--topic', 't'])).err).toMatch(
      /With --consumer you must specify a --topic and a --group/,
    );
    expect((await run(f.deps, [...BS, '--add', '--allow-principal', 'User:p', '--producer', '--group', 'g'])).err).toMatch(
      /With --producer you must specify a --topic/,
    );
    expect((await run(f.deps, [...BS, '--add', '--allow-principal', 'User:p', '--producer', '--topic', 't', '--operation', 'Read'])).err).toMatch(
      /can't be used with option "\[operation\]"/,
    );
    expect((await run(f.deps, [...BS, '--list', '--producer', '--topic', 't'])).err).toMatch(/only valid with --add or --remove/);
    expect(f.acls).toEqual([]);
  });
});
