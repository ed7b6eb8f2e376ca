import { describe, expect, it } from 'vitest';
import { AclOperation as Op, AclPatternType, AclPermissionType, AclResourceType, type AccessControlEntry } from '@samsa/protocol';
import { AclCache, allowingOperations, type AclDecisionSettings } from './acl-cache.js';

const T = AclResourceType.TOPIC;
const lit = (name: string) => ({ resourceType: T, name, patternType: AclPatternType.LITERAL });
const pre = (name: string) => ({ resourceType: T, name, patternType: AclPatternType.PREFIXED });
const allow = (principal: string, operation: Op, host = '*'): AccessControlEntry => ({ principal, host, operation, permissionType: AclPermissionType.ALLOW });
const deny = (principal: string, operation: Op, host = '*'): AccessControlEntry => ({ principal, host, operation, permissionType: AclPermissionType.DENY });
const settings = (over: Partial<AclDecisionSettings> = {}): AclDecisionSettings => ({ superUsers: new Set(), allowEveryoneIfNoAclFound: false, ...over });
const ALICE = 'User:alice';
const IP = '10.0.0.1';

function decide(c: AclCache, op: Op, name: string, principal = ALICE, host = IP, s = settings()) {
  return c.decide(s, principal, host, op, T, name).allowed;
}

describe('acl cache – matching rules', () => {
  it('a literal ACL applies to its name only; a prefixed one to every name starting with it; * to all', () => {
    const c = new AclCache();
    c.set(lit('orders'), [allow(ALICE, Op.READ)]);
    c.set(pre('pay-'), [allow(ALICE, Op.WRITE)]);
    expect(decide(c, Op.READ, 'orders')).toBe(true);
    expect(decide(c, Op.READ, 'orders-eu')).toBe(false);
    expect(decide(c, Op.WRITE, 'pay-eu')).toBe(true);
    expect(decide(c, Op.WRITE, 'pay')).toBe(false);
    c.set(lit('*'), [allow(ALICE, Op.READ)]);
    expect(decide(c, Op.READ, 'anything')).toBe(true);
  });

  it('DENY beats ALLOW, whatever pattern either comes from', () => {
    const c = new AclCache();
    c.set(pre('orders-'), [allow(ALICE, Op.READ)]);
    c.set(lit('orders-secret'), [deny(ALICE, Op.READ)]);
    expect(decide(c, Op.READ, 'orders-eu')).toBe(true);
    expect(decide(c, Op.READ, 'orders-secret')).toBe(false);
    expect(c.decide(settings(), ALICE, IP, Op.READ, T, 'orders-secret').reason).toBe('deny-acl');
    // DENY ALL denies everything
    c.set(lit('orders-eu'), [deny(ALICE, Op.ALL)]);
    expect(decide(c, Op.DESCRIBE, 'orders-eu')).toBe(false);
  });

  it('implied operations: ALL implies all; READ/WRITE/DELETE/ALTER imply DESCRIBE; ALTER_CONFIGS implies DESCRIBE_CONFIGS', () => {
    expect(allowingOperations(Op.DESCRIBE)).toEqual(expect.arrayContaining([Op.READ, Op.WRITE, Op.DELETE, Op.ALTER, Op.ALL]));
    const c = new AclCache();
    for (const [op, implied, not] of [
      [Op.READ, Op.DESCRIBE, Op.WRITE],
      [Op.WRITE, Op.DESCRIBE, Op.READ],
      [Op.DELETE, Op.DESCRIBE, Op.READ],
      [Op.ALTER, Op.DESCRIBE, Op.ALTER_CONFIGS],
      [Op.ALTER_CONFIGS, Op.DESCRIBE_CONFIGS, Op.DESCRIBE],
    ] as const) {
      c.set(lit('t'), [allow(ALICE, op)]);
      expect(decide(c, implied, 't'), `${op} implies ${implied}`).toBe(true);
      expect(decide(c, not, 't'), `${op} does not imply ${not}`).toBe(false);
    }
    c.set(lit('t'), [allow(ALICE, Op.ALL)]);
    for (const op of [Op.READ, Op.WRITE, Op.CREATE, Op.DELETE, Op.ALTER, Op.DESCRIBE, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS])
      expect(decide(c, op, 't')).toBe(true);
    // a DENY is never implied: DENY READ does not deny DESCRIBE
    c.set(lit('t'), [allow(ALICE, Op.ALL), deny(ALICE, Op.READ)]);
    expect(decide(c, Op.READ, 't')).toBe(false);
    expect(decide(c, Op.DESCRIBE, 't')).toBe(true);
  });

  it('principal User:* and host * match everyone; a specific host only that client IP', () => {
    const c = new AclCache();
    c.set(lit('t'), [allow('User:*', Op.READ, '10.0.0.9')]);
    expect(decide(c, Op.READ, 't', 'User:bob', '10.0.0.9')).toBe(true);
    expect(decide(c, Op.READ, 't', 'User:bob', '10.0.0.1')).toBe(false);
    c.set(lit('t'), [allow('User:bob', Op.READ)]);
    expect(decide(c, Op.READ, 't', 'User:bob')).toBe(true);
    expect(decide(c, Op.READ, 't', ALICE)).toBe(false);
  });

  it('super users are allowed everything, even against a DENY', () => {
    const c = new AclCache();
    c.set(lit('t'), [deny('User:admin', Op.ALL)]);
    expect(decide(c, Op.WRITE, 't', 'User:admin', IP, settings({ superUsers: new Set(['User:admin']) }))).toBe(true);
    expect(decide(c, Op.WRITE, 't', 'User:admin')).toBe(false);
  });

  it('allow.everyone.if.no.acl.found applies only where the resource has no ACL at all', () => {
    const c = new AclCache();
    const open = settings({ allowEveryoneIfNoAclFound: true });
    expect(decide(c, Op.WRITE, 'free', ALICE, IP, open)).toBe(true);
    expect(decide(c, Op.WRITE, 'free')).toBe(false);
    c.set(lit('guarded'), [allow('User:bob', Op.READ)]);
    expect(decide(c, Op.WRITE, 'guarded', ALICE, IP, open)).toBe(false);
    // a prefix ACL counts as an ACL on the resources it covers
    c.set(pre('gu'), [allow('User:bob', Op.READ)]);
    expect(decide(c, Op.WRITE, 'guest', ALICE, IP, open)).toBe(false);
  });

  it('ACLs of another resource type never apply', () => {
    const c = new AclCache();
    c.set({ resourceType: AclResourceType.GROUP, name: 'orders', patternType: AclPatternType.LITERAL }, [allow(ALICE, Op.READ)]);
    expect(decide(c, Op.READ, 'orders')).toBe(false);
  });
});
