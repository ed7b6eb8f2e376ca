/**
 * A certificate's subject distinguished name in RFC 2253 form, as Java's
 * `X500Principal.getName()` prints it (what Kafka maps to a principal with
 * ssl.principal.mapping.rules): the last RDN first, RDNs joined by `,`, attributes of a multi-valued
 * RDN by `+`; the keywords CN, C, L, ST, O, OU, STREET, DC, UID, any other attribute as its dotted
 * OID with the DER value in hex (`1.2.840.113549.1.9.1=#16...`); `,=+<>#;"\` in values escaped with
 * `\`, as are a leading and a trailing space. Read from the certificate's DER (Node's own subject
 * string has OpenSSL's order and names).
 */

const KEYWORDS: Readonly<Record<string, string>> = {
  '2.5.4.3': 'CN',
  '2.5.4.6': 'C',
  '2.5.4.7': 'L',
  '2.5.4.8': 'ST',
  '2.5.4.10': 'O',
  '2.5.4.11': 'OU',
  '2.5.4.9': 'STREET',
  '0.9.2342.19200300.100.1.25': 'DC',
  '0.9.2342.19200300.100.1.1': 'UID',
};

/** DER string types whose value Java prints as text. */
const STRING_TAGS = new Set([0x0c, 0x13, 0x14, 0x16, 0x1a, 0x1e, 0x1c]);

interface Tlv {
  tag: number;
  /** Start of the whole element (tag byte). */
  start: number;
  /** Start and end of the contents. */
  body: number;
  end: number;
}

function readTlv(b: Buffer, at: number): Tlv {
  if (at + 2 > b.length) throw new Error('truncated DER');
  const tag = b[at]!;
  let len = b[at + 1]!;
  let body = at + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4 || body + n > b.length) throw new Error('unsupported DER length');
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + b[body + i]!;
    body += n;
  }
  if (body + len > b.length) throw new Error('truncated DER');
  return { tag, start: at, body, end: body + len };
}

function children(b: Buffer, t: Tlv): Tlv[] {
  const out: Tlv[] = [];
  for (let at = t.body; at < t.end;) {
    const c = readTlv(b, at);
    out.push(c);
    at = c.end;
  }
  return out;
}

function oidString(b: Buffer, t: Tlv): string {
  const parts: number[] = [];
  let v = 0;
  for (let i = t.body; i < t.end; i++) {
    v = v * 128 + (b[i]! & 0x7f);
    if ((b[i]! & 0x80) === 0) {
      if (parts.length === 0) parts.push(v < 80 ? Math.floor(v / 40) : 2, v < 80 ? v % 40 : v - 80);
      else parts.push(v);
      v = 0;
    }
  }
  return parts.join('.');
}

function decodeString(b: Buffer, t: Tlv): string {
  const raw = b.subarray(t.body, t.end);
  if (t.tag === 0x1e)
    return Buffer.from(raw.subarray(0, raw.length & ~1))
      .swap16()
      .toString('utf16le');
  if (t.tag === 0x1c) {
    let s = '';
    for (let i = 0; i + 3 < raw.length; i += 4) s += String.fromCodePoint(raw.readUInt32BE(i));
    return s;
  }
  if (t.tag === 0x14) return raw.toString('latin1');
  return raw.toString('utf8');
}

/** RFC 2253 escaping as Java applies it. */
export function escapeRfc2253Value(v: string): string {
  let out = '';
  for (const c of v) out += ',=+<>#;"\\'.includes(c) ? `\\${c}` : c;
  if (out.startsWith(' ')) out = `\\${out}`;
  if (out.endsWith(' ') && !out.endsWith('\\ ')) out = `${out.slice(0, -1)}\\ `;
  return out;
}

/** An X.501 Name (DER) as RFC 2253. */
export function nameToRfc2253(der: Buffer, name: Tlv = readTlv(der, 0)): string {
  const rdns = children(der, name).map((set) =>
    children(der, set)
      .map((ava) => {
        const [oidTlv, valueTlv] = children(der, ava);
        if (!oidTlv || !valueTlv) throw new Error('malformed attribute');
        const oid = oidString(der, oidTlv);
        const keyword = KEYWORDS[oid];
        if (keyword && STRING_TAGS.has(valueTlv.tag)) return `${keyword}=${escapeRfc2253Value(decodeString(der, valueTlv))}`;
        return `${keyword ?? oid}=#${der.subarray(valueTlv.start, valueTlv.end).toString('hex')}`;
      })
      .join('+'),
  );
  return rdns.reverse().join(',');
}

/** The subject DN (RFC 2253, Java's form) of a DER-encoded X.509 certificate. */
export function certificateSubject(certDer: Buffer): string {
  const cert = readTlv(certDer, 0);
  const tbs = children(certDer, cert)[0];
  if (!tbs) throw new Error('malformed certificate');
  const fields = children(certDer, tbs);
  // [0] version (optional), serial, signature, issuer, validity, subject
  const i = fields[0]?.tag === 0xa0 ? 1 : 0;
  const subject = fields[i + 4];
  if (!subject) throw new Error('certificate without subject');
  return nameToRfc2253(certDer, subject);
}
