import { describe, expect, it } from 'vitest';
import { createSaslClient } from '@samsa/protocol';
import { ScramSaslServer } from './scram-server.js';
import { SCRAM_MECHANISMS, decodeSaslName, encodeSaslName, formatCredential, generateCredential, parseCredential, type ScramCredential } from './scram.js';
import { SaslAuthenticationError, SaslError } from './sasl-server.js';

const SHA256 = SCRAM_MECHANISMS['SCRAM-SHA-256'];
const SHA512 = SCRAM_MECHANISMS['SCRAM-SHA-512'];

// RFC 7677 section 3: user "user", password "pencil"
const RFC = {
  salt: Buffer.from('W22ZaJ0SNY7soEsUEjb6gQ==', 'base64'),
  clientFirst: 'n,,n=user,r=rOprNGfwEbeRWgbNEkqO',
  serverNonce: '%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0',
  serverFirst: 'r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096',
  clientFinal: 'c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=',
  serverFinal: 'v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=',
};

const rfcCredential = generateCredential(SHA256, 'pencil', 4096, RFC.salt);
const server = (cred: ScramCredential | undefined = rfcCredential, m = SHA256) =>
  new ScramSaslServer(
    m,
    (u) => (u === 'user' ? cred : undefined),
    () => RFC.serverNonce,
  );
const evaluate = (s: ScramSaslServer, msg: string) => s.evaluate(Buffer.from(msg)).toString();

describe('SCRAM', () => {
  it('SCRAM – the server side reproduces RFC 7677’s SCRAM-SHA-256 test vector', () => {
    const s = server();
    expect(evaluate(s, RFC.clientFirst)).toBe(RFC.serverFirst);
    expect(s.complete).toBe(false);
    expect(evaluate(s, RFC.clientFinal)).toBe(RFC.serverFinal);
    expect(s.complete).toBe(true);
    expect(s.authorizationId).toBe('user');
  });

  it('SCRAM – our client side produces RFC 7677’s client messages and accepts its server signature', async () => {
    const c = createSaslClient({ mechanism: 'SCRAM-SHA-256', username: 'user', password: 'pencil' }, 'rOprNGfwEbeRWgbNEkqO');
    expect((await c.initial()).toString()).toBe(RFC.clientFirst);
    expect((await c.evaluate(Buffer.from(RFC.serverFirst)))!.toString()).toBe(RFC.clientFinal);
    expect(await c.evaluate(Buffer.from(RFC.serverFinal))).toBeUndefined();
    expect(c.done).toBe(true);
    const forged = createSaslClient({ mechanism: 'SCRAM-SHA-256', username: 'user', password: 'pencil' }, 'rOprNGfwEbeRWgbNEkqO');
    await forged.initial();
    await forged.evaluate(Buffer.from(RFC.serverFirst));
    await expect(forged.evaluate(Buffer.from('v=AAAA'))).rejects.toThrow(/invalid server signature/);
  });

  it('SCRAM – a SCRAM-SHA-512 exchange between our client and the server side completes', async () => {
    const cred = generateCredential(SHA512, 'alice-secret');
    const s = new ScramSaslServer(SHA512, (u) => (u === 'al,i=ce' ? cred : undefined));
    const c = createSaslClient({ mechanism: 'SCRAM-SHA-512', username: 'al,i=ce', password: 'alice-secret' });
    const token = await c.initial();
    expect(token.toString()).toMatch(/^n,,n=al=2Ci=3Dce,r=/);
    for (let t: Buffer | undefined = token; t;) t = await c.evaluate(s.evaluate(t));
    expect(s.complete && c.done).toBe(true);
    expect(s.authorizationId).toBe('al,i=ce');
  });

  it('SCRAM – a wrong password, an unknown user, a foreign nonce and too few iterations fail', async () => {
    const wrong = createSaslClient({ mechanism: 'SCRAM-SHA-256', username: 'user', password: 'pen' }, 'rOprNGfwEbeRWgbNEkqO');
    const s1 = server();
    const final = await wrong.evaluate(s1.evaluate(await wrong.initial()));
    expect(() => s1.evaluate(final!)).toThrow(new SaslError('Invalid client credentials'));
    expect(s1.complete).toBe(false);

    expect(() => evaluate(server(), 'n,,n=bob,r=abc')).toThrow(/Invalid user credentials/);

    const s2 = server();
    evaluate(s2, RFC.clientFirst);
    expect(() => evaluate(s2, RFC.clientFinal.replace('hNlF$k0', 'hNlF$k1'))).toThrow(/Invalid client nonce/);

    const weak = generateCredential(SHA256, 'pencil', 1000, RFC.salt);
    expect(() => evaluate(server(weak), RFC.clientFirst)).toThrow(/Iterations 1000 is less than the minimum 4096 for SCRAM-SHA-256/);
  });

  it('SCRAM – librdkafka’s client-final nonce (its own nonce before the server’s) is accepted, as Kafka checks only the ending', () => {
    const s = server();
    evaluate(s, RFC.clientFirst);
    // the proof no longer matches (the nonce is in the signed message), but the nonce check passes
    expect(() => evaluate(s, RFC.clientFinal.replace('r=rOpr', 'r=XYZrOpr'))).toThrow(/Invalid client credentials/);
  });

  it('SCRAM – malformed messages, a different authorization id and a message after completion fail', () => {
    expect(() => evaluate(server(), 'garbage')).toThrow(/Invalid SCRAM client first message format/);
    expect(() => evaluate(server(), 'y,,n=user,r=abc')).toThrow(/format/);
    expect(() => evaluate(server(), 'n,,n=us=er,r=abc')).toThrow(/Invalid SCRAM username/);
    expect(() => evaluate(server(), 'n,a=admin,n=user,r=abc')).toThrow(SaslAuthenticationError);
    const s = server();
    evaluate(s, RFC.clientFirst);
    expect(() => evaluate(s, 'c=biws,r=x')).toThrow(/client final message format/);
    const done = server();
    evaluate(done, RFC.clientFirst);
    evaluate(done, RFC.clientFinal);
    expect(() => evaluate(done, RFC.clientFinal)).toThrow(/Unexpected SCRAM message/);
  });

  it('SCRAM – credentials in Kafka’s format round-trip; malformed ones are refused', () => {
    const text = formatCredential(rfcCredential);
    expect(text).toMatch(/^salt=W22ZaJ0SNY7soEsUEjb6gQ==,stored_key=[A-Za-z0-9+/=]+,server_key=[A-Za-z0-9+/=]+,iterations=4096$/);
    expect(parseCredential(text)).toEqual(rfcCredential);
    expect(() => parseCredential('salt=abc,iterations=4096')).toThrow(/stored_key missing/);
    expect(() => parseCredential('garbage')).toThrow();
    expect(decodeSaslName(encodeSaslName('a=b,c'))).toBe('a=b,c');
    expect(decodeSaslName('a=2Xb')).toBeUndefined();
  });
});
