/** Authorizer broker configs (`authorizer.class.name`, `super.users`, …), spread into BROKER_CONFIGS. */
import type { ConfigDef } from './types.js';

/** Kafka's ZooKeeper-mode authorizer class, and its pre-2.4 name; both enable Samsa's AclAuthorizer. */
export const ACL_AUTHORIZER_CLASS = 'kafka.security.authorizer.AclAuthorizer';
export const SIMPLE_ACL_AUTHORIZER_CLASS = 'kafka.security.auth.SimpleAclAuthorizer';

export const AUTHORIZER_CONFIGS = {
  'authorizer.class.name': {
    type: 'string',
    default: '',
    importance: 'low',
    dynamic: 'read-only',
    oneOf: ['', ACL_AUTHORIZER_CLASS, SIMPLE_ACL_AUTHORIZER_CLASS],
    doc: `The authorizer: empty (no authorization, every request allowed) or ${ACL_AUTHORIZER_CLASS} (ACLs in ZooKeeper; ${SIMPLE_ACL_AUTHORIZER_CLASS} is the same). Samsa has no other authorizer classes.`,
  },
  'super.users': {
    type: 'string',
    default: '',
    importance: 'low',
    dynamic: 'read-only',
    doc: 'Principals allowed every operation on every resource, separated by semicolons: User:admin;User:broker.',
  },
  'allow.everyone.if.no.acl.found': {
    type: 'boolean',
    default: false,
    importance: 'low',
    dynamic: 'read-only',
    doc: 'With the ACL authorizer: allow every principal on a resource that has no ACLs at all (no matching literal, wildcard or prefixed ACL).',
  },
} as const satisfies Record<string, ConfigDef>;
