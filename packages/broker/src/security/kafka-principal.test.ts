import { describe, expect, it } from 'vitest';
import { ANONYMOUS, parsePrincipal, principalToString, samePrincipal, userPrincipal } from './kafka-principal.js';

describe('kafka principal – parse and print', () => {
  it('round-trips User:alice and keeps colons in the name', () => {
    expect(principalToString(parsePrincipal('User:alice'))).toBe('User:alice');
    expect(parsePrincipal('User:CN=a:b,O=x')).toEqual({ principalType: 'User', name: 'CN=a:b,O=x' });
    expect(samePrincipal(parsePrincipal('User:ANONYMOUS'), ANONYMOUS)).toBe(true);
    expect(samePrincipal(userPrincipal('bob'), userPrincipal('alice'))).toBe(false);
  });

  it('rejects a principal without a type or a name', () => {
    for (const bad of ['alice', ':alice', 'User:', '']) expect(() => parsePrincipal(bad)).toThrow(/Invalid principal/);
  });
});
