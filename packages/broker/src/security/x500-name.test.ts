import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { certificateSubject, escapeRfc2253Value } from './x500-name.js';

const dir = mkdtempSync(join(tmpdir(), 'samsa-x500-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A self-signed certificate with openssl's `-subj` (its own order: first RDN first). */
function subjectOf(subj: string, multivalue = false, utf8 = false): string {
  const cert = join(dir, `c${Math.random().toString(36).slice(2)}.pem`);
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      `${cert}.key`,
      '-out',
      cert,
      '-days',
      '1',
      ...(multivalue ? ['-multivalue-rdn'] : []),
      ...(utf8 ? ['-utf8'] : []),
      '-subj',
      subj,
    ],
    { stdio: 'pipe' },
  );
  return certificateSubject(new X509Certificate(readFileSync(cert)).raw);
}

describe('x500 name', () => {
  it("x500 name – a certificate's subject in RFC 2253 as Java prints it: last RDN first, Kafka's CN=...,OU=...,O=...", () => {
    expect(subjectOf('/O=Samsa/OU=eng/CN=alice')).toBe('CN=alice,OU=eng,O=Samsa');
    expect(subjectOf('/C=US/ST=MD/L=Fulton/O=mycp/OU=SME/CN=Duke')).toBe('CN=Duke,OU=SME,O=mycp,L=Fulton,ST=MD,C=US');
    expect(subjectOf('/DC=org/DC=samsa/UID=u1/CN=x')).toBe('CN=x,UID=u1,DC=samsa,DC=org');
  });

  it('x500 name – special characters escaped with \\ (Java also escapes = and #), leading and trailing spaces too', () => {
    expect(subjectOf(String.raw`/C=US/O=Acme, Inc./OU=a\+b;c=d/CN= alice #1 `)).toBe(String.raw`CN=\ alice \#1\ ,OU=a\+b\;c\=d,O=Acme\, Inc.,C=US`);
    expect(escapeRfc2253Value('<x>"\\')).toBe('\\<x\\>\\"\\\\');
  });

  it('x500 name – attributes without an RFC 2253 keyword print as OID=#<DER hex> (emailAddress, as Java does)', () => {
    expect(subjectOf('/O=Samsa/CN=alice/emailAddress=a@b.c')).toBe('1.2.840.113549.1.9.1=#16056140622e63,CN=alice,O=Samsa');
  });

  it('x500 name – a multi-valued RDN joins its attributes with + (in encoded order)', () => {
    expect(subjectOf('/O=Samsa/OU=eng+CN=bob', true)).toBe('CN=bob+OU=eng,O=Samsa');
  });

  it('x500 name – UTF-8 values come out as text', () => {
    expect(subjectOf('/O=Samsa/CN=Zoë Ŝ', false, true)).toBe('CN=Zoë Ŝ,O=Samsa');
  });
});
