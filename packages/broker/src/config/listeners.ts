/**
 * Listener endpoints (`NAME://host:port`) and the listener security protocol map, parsed and
 * checked as Kafka does (`SocketServerConfigs.listenerListToEndPoints`, `CoreUtils`).
 */
import { isIP, isIPv4, isIPv6 } from 'node:net';
import { ConfigError } from './errors.js';
import { SECURITY_PROTOCOLS } from './definitions.js';
import type { SecurityProtocol } from './definitions.js';

export interface ListenerEndpoint {
  /** Listener name, upper-cased as Kafka normalises it. */
  readonly listenerName: string;
  /** Host name or IP literal (IPv6 without brackets); `''` means all interfaces. */
  readonly host: string;
  /** 0 asks for a random port (tests). */
  readonly port: number;
  readonly securityProtocol: SecurityProtocol;
}

/** Kafka's endpoint pattern: the host may be bracketed (IPv6) and may carry a %zone. */
const ENDPOINT = /^(.*):\/\/\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)$/;

/** `NAME://host:port`, IPv6 hosts in brackets, `NAME://:port` for all interfaces. */
export function formatEndpoint(e: Pick<ListenerEndpoint, 'listenerName' | 'host' | 'port'>): string {
  const host = e.host.includes(':') ? `[${e.host}]` : e.host;
  return `${e.listenerName}://${host}:${e.port}`;
}

/**
 * Parses `NAME:PROTOCOL,…` (protocols case-insensitive). Names are upper-cased. Throws
 * `ConfigError` for `key` when an entry is malformed or names an unknown protocol.
 */
export function parseSecurityProtocolMap(value: string, key = 'listener.security.protocol.map'): Readonly<Record<string, SecurityProtocol>> {
  const map: Record<string, SecurityProtocol> = {};
  const trimmed = value.trim();
  if (trimmed === '') return Object.freeze(map);
  for (const entry of trimmed.split(/\s*,\s*/)) {
    const i = entry.lastIndexOf(':');
    const name = i < 0 ? '' : entry.slice(0, i).trim().toUpperCase();
    const protocol =
      i < 0
        ? ''
        : entry
            .slice(i + 1)
            .trim()
            .toUpperCase();
    if (name === '' || protocol === '') {
      throw new ConfigError(key, `Invalid value '${value}' for configuration '${key}': entry '${entry}' is not NAME:PROTOCOL.`);
    }
    if (!(SECURITY_PROTOCOLS as readonly string[]).includes(protocol)) {
      throw new ConfigError(
        key,
        `Invalid value '${value}' for configuration '${key}': unknown security protocol '${protocol}' for listener ${name}; expected one of: ${SECURITY_PROTOCOLS.join(', ')}.`,
      );
    }
    if (Object.prototype.hasOwnProperty.call(map, name)) {
      throw new ConfigError(key, `Invalid value '${value}' for configuration '${key}': listener ${name} is mapped twice.`);
    }
    map[name] = protocol as SecurityProtocol;
  }
  return Object.freeze(map);
}

export interface ParseListenersOptions {
  /** The config being parsed, for messages (`listeners` or `advertised.listeners`). */
  key?: string;
  /**
   * Reject two listeners on one port (port 0 excepted), unless they are exactly one IPv4 and one
   * IPv6 literal (KIP-797). True for `listeners`, false for `advertised.listeners`.
   */
  requireDistinctPorts?: boolean;
}

/**
 * Parses a comma-separated endpoint list. Each listener name must appear in `protocols`; names
 * must be distinct; ports 0–65535. Throws `ConfigError` naming `key`.
 */
export function parseListeners(
  value: string,
  protocols: Readonly<Record<string, SecurityProtocol>>,
  opts: ParseListenersOptions = {},
): readonly ListenerEndpoint[] {
  const key = opts.key ?? 'listeners';
  const fail = (reason: string) => new ConfigError(key, `Invalid value '${value}' for configuration '${key}': ${reason}.`);
  const trimmed = value.trim();
  if (trimmed === '') return Object.freeze([]);
  const endpoints: ListenerEndpoint[] = [];
  for (const item of trimmed.split(/\s*,\s*/)) {
    const m = ENDPOINT.exec(item);
    if (!m) throw fail(`'${item}' is not a NAME://host:port endpoint (IPv6 hosts in brackets, e.g. PLAINTEXT://[::1]:9092)`);
    const listenerName = (m[1] ?? '').toUpperCase();
    const host = m[2] ?? '';
    const port = Number(m[3]);
    if (listenerName === '') throw fail(`'${item}' has no listener name`);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw fail(`port ${m[3]} of '${item}' is outside 0–65535`);
    const securityProtocol = protocols[listenerName];
    if (securityProtocol === undefined) {
      throw fail(`listener ${listenerName} is not in listener.security.protocol.map (known: ${Object.keys(protocols).join(', ')})`);
    }
    if (endpoints.some((e) => e.listenerName === listenerName)) throw fail(`each listener must have a different name; ${listenerName} appears twice`);
    endpoints.push(Object.freeze({ listenerName, host, port, securityProtocol }));
  }
  if (opts.requireDistinctPorts ?? key === 'listeners') checkDistinctPorts(endpoints, fail);
  return Object.freeze(endpoints);
}

function checkDistinctPorts(endpoints: readonly ListenerEndpoint[], fail: (reason: string) => ConfigError): void {
  const byPort = new Map<number, ListenerEndpoint[]>();
  for (const e of endpoints) {
    if (e.port === 0) continue;
    byPort.set(e.port, [...(byPort.get(e.port) ?? []), e]);
  }
  for (const [port, eps] of byPort) {
    if (eps.length < 2) continue;
    const [a, b] = eps;
    const oneV4OneV6 =
      eps.length === 2 && a && b && isIP(a.host) !== 0 && isIP(b.host) !== 0 && ((isIPv4(a.host) && isIPv6(b.host)) || (isIPv6(a.host) && isIPv4(b.host)));
    if (!oneV4OneV6) {
      throw fail(
        `each listener must have a different port unless exactly one has an IPv4 address and the other an IPv6 address; port ${port} is used by ${eps.map((e) => e.listenerName).join(', ')}`,
      );
    }
  }
}
