/**
 * SCRAM credentials in `samsa configs --entity-type users` (Kafka's ConfigCommand, KIP-554):
 * `--add-config 'SCRAM-SHA-256=[iterations=8192,password=alice-secret]'` and
 * `--delete-config SCRAM-SHA-512` go through AlterUserScramCredentials with --bootstrap-server (the
 * password is salted and hashed by the client); with --zookeeper (Kafka 2.8's bootstrapping path)
 * the tool writes the credential itself, `salt=...,stored_key=...,server_key=...,iterations=...`,
 * with the broker's SCRAM formatter. `--describe` prints Kafka's
 * `SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=8192` line.
 */
import { BatchError, type KafkaError, type Admin, type ScramMechanismName, type UserScramCredentialAlteration } from '@samsa/client';
import { SCRAM_MECHANISMS, formatCredential, generateCredential } from '@samsa/broker';
import { javaExceptionName } from '../../shared/java-errors.js';

export const SCRAM_CONFIG_NAMES = ['SCRAM-SHA-256', 'SCRAM-SHA-512'] as const satisfies readonly ScramMechanismName[];
/** Kafka's ScramCredentialUtils default (and ScramMechanism.minIterations). */
export const DEFAULT_SCRAM_ITERATIONS = 4096;

/** ScramMechanism.isScram: a SCRAM credential config key. */
export function isScramConfig(key: string): key is ScramMechanismName {
  return (SCRAM_CONFIG_NAMES as readonly string[]).includes(key);
}

/** A ConfigCommand argument error (IllegalArgumentException: the message on stderr, exit 1). */
export class ScramConfigError extends Error {}

/** The Java enum constant's name (ScramMechanism.toString): SCRAM_SHA_256. */
const enumName = (m: ScramMechanismName) => m.replace(/-/g, '_');

/**
 * A credential config value, `[iterations=<n>,]password=<password>`, as ConfigCommand reads it:
 * with --bootstrap-server (`bootstrap`) iterations -1 means the default; iterations under the
 * mechanism's minimum (4096) are refused.
 */
export function parseScramCredentialConfig(mechanism: ScramMechanismName, value: string, bootstrap: boolean): { iterations: number; password: string } {
  const m = (bootstrap ? /^(?:iterations=(-?[0-9]*),)?password=(.*)$/ : /^(?:iterations=([0-9]*),)?password=(.*)$/).exec(value);
  if (!m || m[1] === '') throw new ScramConfigError(`Invalid credential property ${enumName(mechanism)}=${value}`);
  const iterations = m[1] === undefined || (bootstrap && m[1] === '-1') ? DEFAULT_SCRAM_ITERATIONS : Number(m[1]);
  const min = SCRAM_MECHANISMS[mechanism].minIterations;
  if (iterations < min) {
    throw new ScramConfigError(`Iterations ${iterations} is less than the minimum ${min} required for ${bootstrap ? mechanism : enumName(mechanism)}`);
  }
  return { iterations, password: m[2]! };
}

/** Scala's collection toString, as ConfigCommand's messages print the config names. */
const scalaList = (kind: 'Set' | 'ArrayBuffer', names: readonly string[]) => `${kind}(${names.join(', ')})`;

/**
 * ConfigCommand's checks of a users/clients --alter with --bootstrap-server: only quota keys
 * for clients and (user, client-id) entities; quota or SCRAM keys for users, not both at once
 * (Kafka refuses to mix them), SCRAM not for the default user. `isQuota` tells a quota key.
 * Returns the SCRAM alterations (empty: a quota change).
 */
export function scramAlterations(
  types: readonly string[],
  user: string | undefined,
  add: Readonly<Record<string, string>>,
  del: readonly string[],
  isQuota: (key: string) => boolean,
): { upserts: Array<[ScramMechanismName, string]>; deletes: ScramMechanismName[] } {
  const addKeys = Object.keys(add);
  const scramAdds = addKeys.filter(isScramConfig);
  const scramDeletes = del.filter(isScramConfig);
  const unknownAdds = addKeys.filter((k) => !isScramConfig(k) && !isQuota(k));
  const unknownDeletes = del.filter((k) => !isScramConfig(k) && !isQuota(k));
  const quota = addKeys.some(isQuota) || del.some(isQuota);
  if (types[0] === 'clients' || types.length === 2) {
    if (unknownAdds.length > 0 || scramAdds.length > 0) {
      throw new ScramConfigError(
        `Only quota configs can be added for 'clients' using --bootstrap-server. Unexpected config names: ${scalaList('Set', [...unknownAdds, ...scramAdds])}`,
      );
    }
    if (unknownDeletes.length > 0 || scramDeletes.length > 0) {
      throw new ScramConfigError(
        `Only quota configs can be deleted for 'clients' using --bootstrap-server. Unexpected config names: ${scalaList('ArrayBuffer', [...unknownDeletes, ...scramDeletes])}`,
      );
    }
    return { upserts: [], deletes: [] };
  }
  if (unknownAdds.length > 0) {
    throw new ScramConfigError(
      `Only quota and SCRAM credential configs can be added for 'users' using --bootstrap-server. Unexpected config names: ${scalaList('Set', unknownAdds)}`,
    );
  }
  if (unknownDeletes.length > 0) {
    throw new ScramConfigError(
      `Only quota and SCRAM credential configs can be deleted for 'users' using --bootstrap-server. Unexpected config names: ${scalaList('ArrayBuffer', unknownDeletes)}`,
    );
  }
  if (scramAdds.length === 0 && scramDeletes.length === 0) return { upserts: [], deletes: [] };
  if (user === undefined) {
    throw new ScramConfigError('The use of --entity-default or --user-defaults is not allowed with User SCRAM Credentials using --bootstrap-server.');
  }
  if (quota) throw new ScramConfigError("Cannot alter both quota and SCRAM credential configs simultaneously for 'users' using --bootstrap-server.");
  return { upserts: scramAdds.map((m) => [m, add[m]!]), deletes: scramDeletes };
}

/** AlterUserScramCredentials for one user (ConfigCommand.alterUserScramCredentialConfigs). */
export async function alterUserScram(
  admin: Admin,
  user: string,
  change: { upserts: ReadonlyArray<[ScramMechanismName, string]>; deletes: readonly ScramMechanismName[] },
): Promise<void> {
  const alterations: UserScramCredentialAlteration[] = change.deletes.map((mechanism) => ({ user, mechanism, delete: true as const }));
  for (const [mechanism, value] of change.upserts) {
    const { iterations, password } = parseScramCredentialConfig(mechanism, value, true);
    alterations.push({ user, mechanism, password, iterations });
  }
  await admin.alterUserScramCredentials(alterations);
}

/** `SCRAM-SHA-256=iterations=8192, SCRAM-SHA-512=iterations=4096` */
function describeText(credentials: ReadonlyArray<{ mechanism: string; iterations: number }>): string {
  return credentials.map((c) => `${c.mechanism}=iterations=${c.iterations}`).join(', ');
}

/**
 * ConfigCommand.describeClientQuotaAndUserScramCredentialConfigs' SCRAM part: one line per user
 * with credentials (all of them when `user` is undefined); a user without any is not printed
 * (DescribeUserScramCredentialsResult.users leaves RESOURCE_NOT_FOUND out); another error is
 * `Error retrieving SCRAM credential configs for user-principal 'u': <Exception>: <message>`.
 */
export async function describeUserScram(admin: Admin, user: string | undefined, println: (line: string) => void): Promise<void> {
  let described;
  const failed = new Map<string, KafkaError>();
  try {
    described = await admin.describeUserScramCredentials(user === undefined ? undefined : [user]);
  } catch (err) {
    if (!(err instanceof BatchError)) throw err;
    for (const [u, e] of err.errors) if (e.errorName !== 'RESOURCE_NOT_FOUND') failed.set(u, e);
    described = err.succeeded.length > 0 ? await admin.describeUserScramCredentials(err.succeeded) : [];
  }
  for (const d of described) println(`SCRAM credential configs for user-principal '${d.user}' are ${describeText(d.credentials)}`);
  for (const [u, e] of failed) {
    const simple = javaExceptionName(e.errorName).split('.').pop()!;
    println(`Error retrieving SCRAM credential configs for user-principal '${u}': ${simple}: ${e.message}`);
  }
}

/**
 * ConfigCommand.preProcessScramCredentials (--zookeeper): each SCRAM key of `add` becomes the
 * stored credential, as the brokers read it from /config/users/<user>.
 */
export function scramCredentialsForZk(add: Readonly<Record<string, string>>): Record<string, string> {
  const out = { ...add };
  for (const mechanism of SCRAM_CONFIG_NAMES) {
    const value = add[mechanism];
    if (value === undefined) continue;
    const { iterations, password } = parseScramCredentialConfig(mechanism, value, false);
    out[mechanism] = formatCredential(generateCredential(SCRAM_MECHANISMS[mechanism], password, iterations));
  }
  return out;
}
