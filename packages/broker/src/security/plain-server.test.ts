import { describe, expect, it } from 'vitest';
import { PlainSaslServer } from './plain-server.js';

const users = { username: 'admin', password: 'admin-secret', user_admin: 'admin-secret', user_alice: 'alice-secret' };
const token = (authzid: string, user: string, password: string) => Buffer.from(`${authzid}\u0000${user}\u0000${password}`);

describe('PLAIN', () => {
  it('PLAIN – a user_<name> password authenticates the user (with or without an equal authorization id)', () => {
    const s = new PlainSaslServer(users);
    expect(s.evaluate(token('', 'alice', 'alice-secret'))).toEqual(Buffer.alloc(0));
    expect(s.complete).toBe(true);
    expect(s.authorizationId).toBe('alice');
    const t = new PlainSaslServer(users);
    t.evaluate(token('admin', 'admin', 'admin-secret'));
    expect(t.authorizationId).toBe('admin');
  });

  it('PLAIN – wrong passwords, unknown users (the broker’s own username option included) and bad tokens fail with Kafka’s messages', () => {
    const fail = (t: Buffer) => {
      const s = new PlainSaslServer(users);
      expect(() => s.evaluate(t)).toThrow();
      expect(s.complete).toBe(false);
      try {
        new PlainSaslServer(users).evaluate(t);
      } catch (err) {
        return (err as Error).message;
      }
      return '';
    };
    expect(fail(token('', 'alice', 'nope'))).toBe('Authentication failed: Invalid username or password');
    expect(fail(token('', 'bob', 'x'))).toBe('Authentication failed: Invalid username or password');
    expect(fail(token('', 'name', 'admin'))).toBe('Authentication failed: Invalid username or password');
    expect(fail(token('admin', 'alice', 'alice-secret'))).toBe('Authentication failed: Client requested an authorization id that is different from username');
    expect(fail(token('', '', 'x'))).toBe('Authentication failed: username not specified');
    expect(fail(token('', 'alice', ''))).toBe('Authentication failed: password not specified');
    expect(fail(Buffer.from('alice\u0000alice-secret'))).toBe('Invalid SASL/PLAIN response: expected 3 tokens, got 2');
  });
});
