import { describe, expect, it } from 'vitest';
import { buildBrokerConfig } from './broker-config.js';
import { ConfigError } from './errors.js';

const build = (properties: Record<string, string> = {}) => buildBrokerConfig({ properties: { 'zookeeper.connect': '127.0.0.1:2181', ...properties } });

describe('authorizer configs', () => {
  it("authorizer configs – Kafka's defaults: no authorizer, no super users, deny when no ACL", () => {
    const c = build();
    expect(c.get('authorizer.class.name')).toBe('');
    expect(c.get('super.users')).toBe('');
    expect(c.get('allow.everyone.if.no.acl.found')).toBe(false);
  });

  it("authorizer configs – Kafka's AclAuthorizer class names are accepted, any other class is a ConfigError", () => {
    expect(build({ 'authorizer.class.name': 'kafka.security.authorizer.AclAuthorizer' }).get('authorizer.class.name')).toBe(
      'kafka.security.authorizer.AclAuthorizer',
    );
    expect(build({ 'authorizer.class.name': 'kafka.security.auth.SimpleAclAuthorizer' }).get('authorizer.class.name')).toBe(
      'kafka.security.auth.SimpleAclAuthorizer',
    );
    expect(() => build({ 'authorizer.class.name': 'com.example.MyAuthorizer' })).toThrow(ConfigError);
    expect(() => build({ 'authorizer.class.name': 'com.example.MyAuthorizer' })).toThrow(/authorizer\.class\.name/);
  });
});
