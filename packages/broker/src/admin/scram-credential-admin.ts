/**
 * SCRAM credentials in ZooKeeper (Kafka's ZkAdminManager.describeUserScramCredentials /
 * alterUserScramCredentials): a user's credential of each mechanism is a key of its entity config
 * /config/users/<sanitized user> (`SCRAM-SHA-256` → `salt=...,stored_key=...,server_key=...,iterations=...`),
 * beside its quota keys, which are kept; every change is announced under /config/changes so each
 * broker's credential cache follows.
 */
import { ErrorCode, errorCodeOf } from '@samsa/protocol';
import { ConfigType, type KafkaZk } from '@samsa/zk-paths';
import type { Logger } from 'pino';
import { sanitizeEntityName, desanitizeEntityName } from './client-quota-admin.js';
import {
  SCRAM_MAX_ITERATIONS,
  SCRAM_MECHANISMS,
  credentialFromSaltedPassword,
  formatCredential,
  parseCredential,
  scramMechanismByType,
} from '../security/scram.js';

export interface UserScramResult {
  user: string;
  errorCode: number;
  errorMessage: string | null;
}

export interface DescribedUserScram extends UserScramResult {
  credentialInfos: Array<{ mechanism: number; iterations: number }>;
}

function credentialInfos(config: Readonly<Record<string, string>>): Array<{ mechanism: number; iterations: number }> | undefined {
  const present = Object.values(SCRAM_MECHANISMS).filter((m) => config[m.mechanismName] !== undefined);
  if (present.length === 0) return undefined;
  return present.map((m) => ({ mechanism: m.type, iterations: parseCredential(config[m.mechanismName]!).iterations }));
}

/** DescribeUserScramCredentials: `users` null or empty describes every user with a credential (sorted by name). */
export async function describeUserScramCredentials(kzk: KafkaZk, users: readonly string[] | null, log: Logger): Promise<DescribedUserScram[]> {
  const result = (user: string, config: Readonly<Record<string, string>>, explicit: boolean): DescribedUserScram | undefined => {
    try {
      const infos = credentialInfos(config);
      if (infos) return { user, errorCode: ErrorCode.NONE, errorMessage: null, credentialInfos: infos };
    } catch (err) {
      log.error({ err, user }, 'Error retrieving SCRAM credentials');
      return { user, errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: (err as Error).message, credentialInfos: [] };
    }
    if (!explicit) return undefined;
    return {
      user,
      errorCode: ErrorCode.RESOURCE_NOT_FOUND,
      errorMessage: `Attempt to describe a user credential that does not exist: ${user}`,
      credentialInfos: [],
    };
  };
  if (users === null || users.length === 0) {
    const out: DescribedUserScram[] = [];
    for (const [name, config] of await kzk.getAllEntityConfigs(ConfigType.User)) {
      const r = result(desanitizeEntityName(name), config, false);
      if (r) out.push(r);
    }
    return out.sort((a, b) => (a.user < b.user ? -1 : a.user > b.user ? 1 : 0));
  }
  const counts = new Map<string, number>();
  for (const u of users) counts.set(u, (counts.get(u) ?? 0) + 1);
  const out: DescribedUserScram[] = [];
  for (const user of counts.keys()) {
    if (user === '') {
      out.push({ user, errorCode: ErrorCode.RESOURCE_NOT_FOUND, errorMessage: 'Cannot describe SCRAM credentials for empty username', credentialInfos: [] });
    } else if (counts.get(user)! > 1) {
      out.push({
        user,
        errorCode: ErrorCode.DUPLICATE_RESOURCE,
        errorMessage: `Cannot describe SCRAM credentials for the same user twice in a single request: ${user}`,
        credentialInfos: [],
      });
    } else {
      out.push(result(user, await kzk.getEntityConfig(ConfigType.User, sanitizeEntityName(user)), true)!);
    }
  }
  return out;
}

export interface ScramDeletion {
  name: string;
  mechanism: number;
}

export interface ScramUpsertion extends ScramDeletion {
  iterations: number;
  salt: Buffer;
  saltedPassword: Buffer;
}

/** What is wrong with one upsertion or deletion, if anything. */
function invalid(op: ScramDeletion | ScramUpsertion): UserScramResult | undefined {
  const fail = (errorCode: number, errorMessage: string) => ({ user: op.name, errorCode, errorMessage });
  if (op.name === '') return fail(ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Username must not be empty');
  const m = scramMechanismByType(op.mechanism);
  if (!m) return fail(ErrorCode.UNSUPPORTED_SASL_MECHANISM, 'Unknown SCRAM mechanism');
  if ('iterations' in op) {
    if (op.iterations < m.minIterations) return fail(ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Too few iterations');
    if (op.iterations > SCRAM_MAX_ITERATIONS) return fail(ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Too many iterations');
    if (op.salt.length === 0) return fail(ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Salt must not be empty');
    if (op.saltedPassword.length === 0) return fail(ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Salted password must not be empty');
  }
  return undefined;
}

/**
 * AlterUserScramCredentials: a user with an invalid alteration (empty name, unknown mechanism,
 * iterations outside [4096, 16384]), with one mechanism altered twice (DUPLICATE_RESOURCE), or
 * deleting a credential it does not have (RESOURCE_NOT_FOUND) fails as a whole; the others have
 * their credentials written to /config/users/<user> (quota keys kept) and announced.
 */
export async function alterUserScramCredentials(
  kzk: KafkaZk,
  deletions: readonly ScramDeletion[],
  upsertions: readonly ScramUpsertion[],
  log: Logger,
): Promise<UserScramResult[]> {
  const results: UserScramResult[] = [];
  const failed = new Set<string>();
  const failUser = (r: UserScramResult) => {
    if (failed.has(r.user)) return;
    failed.add(r.user);
    results.push(r);
  };
  for (const op of [...upsertions, ...deletions]) {
    const bad = invalid(op);
    if (bad) failUser(bad);
  }
  const seen = new Map<string, number>();
  for (const op of [...upsertions, ...deletions]) seen.set(`${op.mechanism}:${op.name}`, (seen.get(`${op.mechanism}:${op.name}`) ?? 0) + 1);
  for (const op of [...upsertions, ...deletions]) {
    if (seen.get(`${op.mechanism}:${op.name}`)! > 1) {
      failUser({ user: op.name, errorCode: ErrorCode.DUPLICATE_RESOURCE, errorMessage: 'A user credential cannot be altered twice in the same request' });
    }
  }
  const users = [...new Set([...upsertions, ...deletions].map((op) => op.name))].filter((u) => !failed.has(u));
  const configs = new Map<string, Record<string, string>>();
  for (const user of users) configs.set(user, { ...(await kzk.getEntityConfig(ConfigType.User, sanitizeEntityName(user))) });
  for (const d of deletions) {
    if (failed.has(d.name)) continue;
    if (configs.get(d.name)![scramMechanismByType(d.mechanism)!.mechanismName] === undefined) {
      failUser({ user: d.name, errorCode: ErrorCode.RESOURCE_NOT_FOUND, errorMessage: 'Attempt to delete a user credential that does not exist' });
    }
  }
  for (const user of users) {
    if (failed.has(user)) continue;
    const config = configs.get(user)!;
    for (const d of deletions) if (d.name === user) delete config[scramMechanismByType(d.mechanism)!.mechanismName];
    for (const u of upsertions) {
      if (u.name !== user) continue;
      const m = scramMechanismByType(u.mechanism)!;
      config[m.mechanismName] = formatCredential(credentialFromSaltedPassword(m, u.saltedPassword, u.salt, u.iterations));
    }
    try {
      await kzk.changeEntityConfig(ConfigType.User, sanitizeEntityName(user), config);
      results.push({ user, errorCode: ErrorCode.NONE, errorMessage: null });
      log.info({ user }, 'SCRAM credentials altered');
    } catch (err) {
      log.error({ err, user }, 'altering SCRAM credentials failed');
      results.push({ user, errorCode: errorCodeOf(err), errorMessage: (err as Error).message });
    }
  }
  return results;
}
