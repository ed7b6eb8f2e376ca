/**
 * `sasl.jaas.config` as the broker reads it: exactly one login module in Kafka's JAAS syntax
 * (the one parser is @samsa/server-common's), errors as ConfigError naming the setting.
 */
import { parseJaasConfig as parseJaasEntries, type JaasLoginModule } from '@samsa/server-common';
import { ConfigError } from '../config/errors.js';

export type { JaasLoginModule };

/** Every login module of a JAAS text; ConfigError naming `key` when it does not parse. */
export function parseJaasModules(text: string, key = 'sasl.jaas.config'): JaasLoginModule[] {
  try {
    return parseJaasEntries(text);
  } catch (err) {
    throw new ConfigError(key, `Invalid value for configuration ${key}: ${(err as Error).message}`, { cause: err });
  }
}

/** The one login module of a `sasl.jaas.config` value (Kafka: "... should be 1 module"). */
export function parseJaasConfig(text: string, key = 'sasl.jaas.config'): JaasLoginModule {
  const modules = parseJaasModules(text, key);
  const only = modules[0];
  if (modules.length !== 1 || only === undefined) {
    throw new ConfigError(key, `JAAS config property ${key} contains ${modules.length} login modules, should be 1 module`);
  }
  return only;
}
