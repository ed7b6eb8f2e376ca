import { readFileSync } from 'node:fs';
import { type JaasLoginModule, parseJaasFile, parseJvmSystemProperties } from '@samsa/server-common';
import { ConfigEntityTypeZNode, ConfigType, ConsumerPathZNode } from './znodes.js';

/** ZooKeeper's permission bits (ZooDefs.Perms). */
export const ZkPerms = { READ: 1, WRITE: 2, CREATE: 4, DELETE: 8, ADMIN: 16, ALL: 31 } as const;

/** One ZooKeeper ACL entry: permissions for `scheme:id` (world:anyone, auth:, digest:user:hash, ...). */
export interface ZkAcl {
  perms: number;
  scheme: string;
  id: string;
}

/** Credentials a session presents (ZooKeeper's addAuthInfo): e.g. `digest` with `user:password`. */
export interface ZkAuthInfo {
  scheme: string;
  auth: string;
}

/** ZooDefs.Ids.OPEN_ACL_UNSAFE: everyone may do everything. */
export const OPEN_ACL_UNSAFE: readonly ZkAcl[] = [{ perms: ZkPerms.ALL, scheme: 'world', id: 'anyone' }];
/** ZooDefs.Ids.CREATOR_ALL_ACL: every identity the creating session authenticated as gets ALL. */
export const CREATOR_ALL_ACL: readonly ZkAcl[] = [{ perms: ZkPerms.ALL, scheme: 'auth', id: '' }];
/** ZooDefs.Ids.READ_ACL_UNSAFE: everyone may read. */
export const READ_ACL_UNSAFE: readonly ZkAcl[] = [{ perms: ZkPerms.READ, scheme: 'world', id: 'anyone' }];

/** Kafka's ZkData.SensitiveRootPaths: credentials and passwords; never world-readable when secured. */
export const SENSITIVE_ROOT_PATHS: readonly string[] = [
  ConfigEntityTypeZNode.path(ConfigType.User),
  ConfigEntityTypeZNode.path(ConfigType.Broker),
  '/delegation_token/tokens',
];

/** Kafka's ZkData.sensitivePath (a prefix match, as Kafka's). */
export function isSensitivePath(path: string): boolean {
  return SENSITIVE_ROOT_PATHS.some((p) => path.startsWith(p));
}

/**
 * Kafka's ZkData.defaultAcls: with secure ACLs (zookeeper.set.acl=true) the creator gets ALL and,
 * outside the sensitive paths, everyone may READ; /consumers (the old consumers' path) and every
 * node without secure ACLs are open.
 */
export function defaultAcls(secure: boolean, path: string): readonly ZkAcl[] {
  if (!secure || path === ConsumerPathZNode.path) return OPEN_ACL_UNSAFE;
  return isSensitivePath(path) ? CREATOR_ALL_ACL : [...CREATOR_ALL_ACL, ...READ_ACL_UNSAFE];
}

// ---- where the credentials come from ------------------------------------------------------------

/** Kafka's JaasUtils property names. */
export const JAVA_LOGIN_CONFIG_PARAM = 'java.security.auth.login.config';
export const ZK_SASL_CLIENT = 'zookeeper.sasl.client';
export const ZK_LOGIN_CONTEXT_NAME_KEY = 'zookeeper.sasl.clientconfig';
const DEFAULT_ZK_LOGIN_CONTEXT_NAME = 'Client';
/** The login module Kafka's documentation configures for ZooKeeper digest credentials. */
export const DIGEST_LOGIN_MODULE = 'org.apache.zookeeper.server.auth.DigestLoginModule';

/** A ZooKeeper security setting that keeps the broker (or tool) from starting. */
export class ZkSecurityError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ZkSecurityError';
  }
}

export interface ZkSecuritySettings {
  /** Credentials to present on every connection (empty: anonymous). */
  authInfo: ZkAuthInfo[];
  /** Create znodes with Kafka's secure ACLs (defaultAcls). */
  secureAcls: boolean;
  /** The JAAS file, login context and user the credentials came from (for logs; no password). */
  source?: { loginConfig: string; contextName: string; username: string };
}

/** Kafka's JaasUtils.zkSecuritySysConfigString, from the `-D` properties. */
export function zkSecuritySysConfigString(props: Record<string, string>): string {
  const loginConfig = props[JAVA_LOGIN_CONFIG_PARAM] ?? 'null';
  const clientEnabled = props[ZK_SASL_CLIENT] ?? 'default:true';
  const contextName = props[ZK_LOGIN_CONTEXT_NAME_KEY] ?? `default:${DEFAULT_ZK_LOGIN_CONTEXT_NAME}`;
  return `[${JAVA_LOGIN_CONFIG_PARAM}=${loginConfig}, ${ZK_SASL_CLIENT}=${clientEnabled}, ${ZK_LOGIN_CONTEXT_NAME_KEY}=${contextName}]`;
}

function digestCredentials(contextName: string, modules: JaasLoginModule[], loginConfig: string): ZkAuthInfo & { username: string } {
  const digest = modules.find((m) => m.loginModule === DIGEST_LOGIN_MODULE || m.loginModule.endsWith('.DigestLoginModule'));
  if (!digest) {
    throw new ZkSecurityError(
      `JAAS login context '${contextName}' in ${loginConfig} has no ${DIGEST_LOGIN_MODULE} (found ${modules.map((m) => m.loginModule).join(', ') || 'none'}): ` +
        'Samsa authenticates to ZooKeeper with digest credentials only (no Kerberos)',
    );
  }
  const { username, password } = digest.options;
  if (username === undefined || password === undefined || username === '')
    throw new ZkSecurityError(`${DIGEST_LOGIN_MODULE} in JAAS login context '${contextName}' of ${loginConfig} needs username and password`);
  if (username.includes(':')) throw new ZkSecurityError(`the ZooKeeper digest username '${username}' may not contain ':'`);
  return { scheme: 'digest', auth: `${username}:${password}`, username };
}

/**
 * The ZooKeeper credentials and ACL mode of a broker (or tool), the way Kafka finds them: the JAAS
 * file named by `-Djava.security.auth.login.config=<file>` in KAFKA_OPTS, its login context `Client`
 * (or `-Dzookeeper.sasl.clientconfig=<name>`) with a DigestLoginModule's username and password.
 *
 * `setAcl` is zookeeper.set.acl; `'ifAuthenticated'` is what Kafka's tools do (secure ACLs exactly
 * when credentials are configured). Throws ZkSecurityError with Kafka's message when secure ACLs
 * are wanted and no credentials are configured, or when the JAAS file is unusable.
 */
export function resolveZkSecurity(o: {
  setAcl: boolean | 'ifAuthenticated';
  env?: NodeJS.ProcessEnv;
  readFile?: (path: string) => string;
}): ZkSecuritySettings {
  const props = parseJvmSystemProperties((o.env ?? process.env)['KAFKA_OPTS']);
  const sys = zkSecuritySysConfigString(props);
  const loginConfig = props[JAVA_LOGIN_CONFIG_PARAM];
  const contextName = props[ZK_LOGIN_CONTEXT_NAME_KEY] ?? DEFAULT_ZK_LOGIN_CONTEXT_NAME;
  const saslClient = (props[ZK_SASL_CLIENT] ?? 'true').toLowerCase() === 'true';
  let modules: JaasLoginModule[] | undefined;
  if (loginConfig) {
    try {
      modules = parseJaasFile((o.readFile ?? ((p) => readFileSync(p, 'utf8')))(loginConfig)).get(contextName);
    } catch (err) {
      throw new ZkSecurityError(`Exception while loading Zookeeper JAAS login context ${sys}`, { cause: err });
    }
  }
  if (modules && !saslClient) throw new ZkSecurityError(`Exception while determining if ZooKeeper is secure ${sys}`);
  const creds = modules ? digestCredentials(contextName, modules, loginConfig!) : undefined;
  const secureAcls = o.setAcl === 'ifAuthenticated' ? creds !== undefined : o.setAcl;
  if (secureAcls && !creds) {
    throw new ZkSecurityError(
      'zookeeper.set.acl is true, but ZooKeeper client TLS configuration identifying at least zookeeper.ssl.client.enable, ' +
        'zookeeper.clientCnxnSocket, and zookeeper.ssl.keystore.location was not present and the ' +
        `verification of the JAAS login file failed ${sys}`,
    );
  }
  if (!creds) return { authInfo: [], secureAcls };
  return {
    authInfo: [{ scheme: creds.scheme, auth: creds.auth }],
    secureAcls,
    source: { loginConfig: loginConfig!, contextName, username: creds.username },
  };
}
