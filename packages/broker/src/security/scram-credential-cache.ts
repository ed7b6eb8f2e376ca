/**
 * Every SCRAM credential of the cluster, per mechanism and user (Kafka's CredentialCache), filled
 * from /config/users/<user> at startup and after each `users/<user>` config change notification.
 */
import { SCRAM_MECHANISMS, parseCredential, type ScramCredential } from './scram.js';

export class ScramCredentialCache {
  private readonly byMechanism = new Map<string, Map<string, ScramCredential>>(Object.keys(SCRAM_MECHANISMS).map((m) => [m, new Map()]));

  get(mechanism: string, user: string): ScramCredential | undefined {
    return this.byMechanism.get(mechanism)?.get(user);
  }

  /**
   * Takes a user's whole config (quota keys are ignored): each `SCRAM-SHA-*` key replaces the user's
   * credential of that mechanism, a missing key removes it. Returns the keys that could not be
   * parsed (their credentials are removed too).
   */
  updateUser(user: string, config: Readonly<Record<string, string>>): string[] {
    const bad: string[] = [];
    for (const [mechanism, users] of this.byMechanism) {
      const v = config[mechanism];
      if (v === undefined) {
        users.delete(user);
        continue;
      }
      try {
        users.set(user, parseCredential(v));
      } catch {
        users.delete(user);
        bad.push(mechanism);
      }
    }
    return bad;
  }
}

/** A user config without its credentials (what may be logged). */
export function withoutCredentials(config: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(config)) out[k] = Object.hasOwn(SCRAM_MECHANISMS, k) ? '[hidden]' : v;
  return out;
}
