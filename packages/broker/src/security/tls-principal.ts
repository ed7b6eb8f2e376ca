/**
 * The principal of a TLS connection (Kafka's DefaultKafkaPrincipalBuilder for an SSL
 * authentication context): with ssl.client.auth=required|requested and a trusted client
 * certificate, `User:<name>` where name is the certificate's subject DN (RFC 2253) mapped through
 * ssl.principal.mapping.rules; without a certificate, none (User:ANONYMOUS). An untrusted
 * certificate (possible with `requested`, where Node lets the handshake finish) or a DN no rule
 * maps is an authentication failure: the connection is closed.
 */
import type { TLSSocket } from 'node:tls';
import { userPrincipal, type KafkaPrincipal } from './kafka-principal.js';
import type { ServerTls } from './ssl-factory.js';
import { NoMatchingRule } from './ssl-principal-mapper.js';
import { certificateSubject } from './x500-name.js';

export type TlsPeer = { principal?: KafkaPrincipal; dn?: string } | { error: string };

export function tlsPeerPrincipal(socket: TLSSocket, tls: Pick<ServerTls, 'clientAuth' | 'principalMapper'>): TlsPeer {
  if (tls.clientAuth === 'none') return {};
  const cert = socket.getPeerX509Certificate();
  if (!cert) return {};
  if (!socket.authorized) return { error: `untrusted client certificate (${String(socket.authorizationError)})` };
  let dn: string;
  try {
    dn = certificateSubject(cert.raw);
  } catch (err) {
    return { error: `unreadable client certificate subject: ${(err as Error).message}` };
  }
  try {
    return { principal: userPrincipal(tls.principalMapper.getName(dn)), dn };
  } catch (err) {
    if (err instanceof NoMatchingRule) return { error: err.message };
    throw err;
  }
}
