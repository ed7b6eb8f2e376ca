/** A broker address from bootstrap.servers. */
export interface BrokerAddress {
  host: string;
  port: number;
}

/** `host:port`, with IPv6 hosts in brackets. */
export function formatAddress(a: BrokerAddress): string {
  return a.host.includes(':') ? `[${a.host}]:${a.port}` : `${a.host}:${a.port}`;
}

/**
 * Parses one `host:port` (IPv6 as `[::1]:9092`; a leading `LISTENER://` is tolerated, as Kafka's
 * client does). Throws with Kafka's message for a malformed entry.
 */
export function parseAddress(s: string): BrokerAddress {
  const t = s.trim();
  const m = /^(?:[A-Za-z0-9_.-]+:\/\/)?(?:\[([0-9A-Fa-f:.%a-z]+)\]|([0-9A-Za-z\-_.]+)):(\d{1,5})$/.exec(t);
  const port = m ? Number(m[3]) : NaN;
  if (!m || !(port > 0 && port < 65536)) throw new TypeError(`Invalid url in bootstrap.servers: ${t}`);
  return { host: (m[1] ?? m[2])!, port };
}

/** Parses bootstrap.servers: a comma-separated string or a list of `host:port` entries. */
export function parseBootstrapServers(servers: string | readonly string[]): BrokerAddress[] {
  const items = (typeof servers === 'string' ? servers.split(',') : servers.flatMap((s) => s.split(','))).map((s) => s.trim()).filter((s) => s !== '');
  if (items.length === 0) throw new TypeError('No resolvable bootstrap urls given in bootstrap.servers');
  const out: BrokerAddress[] = [];
  for (const item of items) {
    const a = parseAddress(item);
    if (!out.some((o) => o.host === a.host && o.port === a.port)) out.push(a);
  }
  return out;
}
