/**
 * A member's client host as Kafka reports it (InetAddress.toString of the connection's peer:
 * "/127.0.0.1"), from the socket's "address:port".
 */
export function clientHostOf(remote: string): string {
  const i = remote.lastIndexOf(':');
  let host = i > 0 ? remote.slice(0, i) : remote;
  if (host.startsWith('::ffff:')) host = host.slice('::ffff:'.length);
  return `/${host}`;
}
