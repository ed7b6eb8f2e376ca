/**
 * The Admin client of the admin tools (topics, consumer-groups, leader-election,
 * reassign-partitions, delete-records, configs, acls, transactions, ...): the tool's own defaults,
 * then the embedder's `adminOptions`, then the settings of the --command-config properties file,
 * its security settings (security.protocol, ssl.*, sasl.*) included.
 */
import { readFileSync } from 'node:fs';
import { Admin, type AdminOptions } from '@samsa/client';
import { clientSecurityFromProperties } from './client-security.js';
import { readPropertiesFile } from './properties.js';

/** Injection points shared by the admin tools (tests and embedders). */
export interface AdminToolDeps {
  /** Builds the Admin for --bootstrap-server. Default: `new Admin(opts)`. */
  createAdmin?: (opts: AdminOptions) => Admin;
  /** Admin options applied under the --command-config ones (e.g. shorter timeouts in tests). */
  adminOptions?: Partial<AdminOptions>;
  /**
   * Reads files named on the command line (--command-config, JSON files, the trust and key stores
   * --command-config names). Default: fs.readFileSync(path, 'utf8') (the stores: their bytes).
   */
  readFile?: (path: string) => string;
}

/** A --command-config setting this client cannot take (Kafka: ConfigException). */
export class CommandConfigError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CommandConfigError';
  }
}

/** The file reader of `deps`. */
export function fileReader(deps: AdminToolDeps): (path: string) => string {
  return deps.readFile ?? ((p: string) => readFileSync(p, 'utf8'));
}

/** The properties of a --command-config file (none when the option is not given). */
export function readCommandConfig(file: string | undefined, read: (path: string) => string): Record<string, string> {
  return file === undefined ? {} : readPropertiesFile(file, read);
}

/** The Admin client settings of a --command-config file that this client has. */
export function adminOptionsFromProperties(p: Record<string, string>): Partial<AdminOptions> {
  const num = (key: string): number | undefined => {
    const v = p[key];
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new CommandConfigError(`Invalid value ${v} for configuration ${key}: Not a number of type INT`);
    return n;
  };
  const out: Partial<AdminOptions> = {};
  if (p['client.id'] !== undefined) out.clientId = p['client.id'];
  const map: Array<[string, keyof AdminOptions]> = [
    ['request.timeout.ms', 'requestTimeoutMs'],
    ['default.api.timeout.ms', 'defaultApiTimeoutMs'],
    ['retry.backoff.ms', 'retryBackoffMs'],
    ['retry.backoff.max.ms', 'retryBackoffMaxMs'],
    ['socket.connection.setup.timeout.ms', 'connectTimeoutMs'],
    ['metadata.max.age.ms', 'metadataMaxAgeMs'],
  ];
  for (const [key, field] of map) {
    const v = num(key);
    if (v !== undefined) (out as Record<string, unknown>)[field] = v;
  }
  return out;
}

/**
 * The tool's Admin: `defaults` (bootstrap servers, client id, the tool's timeouts), then
 * `deps.adminOptions`, then the --command-config `properties` (their `tls` / `sasl` too). A
 * setting this client cannot take throws (CommandConfigError, ClientSecurityConfigError), before
 * any Admin is built.
 */
export function openAdmin(defaults: AdminOptions, deps: AdminToolDeps, properties: Record<string, string> = {}): Admin {
  const security = clientSecurityFromProperties(properties, deps.readFile ?? ((p: string) => readFileSync(p)));
  const opts: AdminOptions = { ...defaults, ...deps.adminOptions, ...adminOptionsFromProperties(properties), ...security };
  return (deps.createAdmin ?? ((o: AdminOptions) => new Admin(o)))(opts);
}
