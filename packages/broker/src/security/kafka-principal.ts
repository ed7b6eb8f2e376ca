/**
 * Kafka's KafkaPrincipal: who a connection is, as `<type>:<name>` (`User:alice`,
 * `User:CN=client,O=Samsa`). PLAINTEXT connections and TLS connections without a client
 * certificate are `User:ANONYMOUS`; SASL sets the authenticated user; mutual TLS maps the
 * certificate's distinguished name (`ssl.principal.mapping.rules`).
 */
export interface KafkaPrincipal {
  readonly principalType: string;
  readonly name: string;
}

export const USER_TYPE = 'User';

export const ANONYMOUS: KafkaPrincipal = Object.freeze({ principalType: USER_TYPE, name: 'ANONYMOUS' });

export function userPrincipal(name: string): KafkaPrincipal {
  return Object.freeze({ principalType: USER_TYPE, name });
}

/** `User:alice`, as Kafka prints a principal (ACLs, super.users, the authorizer log). */
export function principalToString(p: KafkaPrincipal): string {
  return `${p.principalType}:${p.name}`;
}

/**
 * Parses `<type>:<name>` (the name may itself contain ':'), as Kafka's
 * SecurityUtils.parseKafkaPrincipal: both parts must be non-empty.
 */
export function parsePrincipal(s: string): KafkaPrincipal {
  const i = s.indexOf(':');
  if (i <= 0 || i === s.length - 1) {
    throw new Error(`Invalid principal '${s}': expected <principalType>:<principalName>, e.g. User:alice`);
  }
  return Object.freeze({ principalType: s.slice(0, i), name: s.slice(i + 1) });
}

export function samePrincipal(a: KafkaPrincipal, b: KafkaPrincipal): boolean {
  return a.principalType === b.principalType && a.name === b.name;
}
