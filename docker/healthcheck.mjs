// Docker HEALTHCHECK: the broker answers ApiVersions (v0) on its client listener, as
// kafka-broker-api-versions.sh would show. Exit 0 healthy, 1 not.
// The listener: SAMSA_HEALTHCHECK_LISTENER, else inter.broker.listener.name, else the first one in
// `listeners` that is not the control plane's. On an SSL / SASL_SSL listener (per
// SAMSA_LISTENER_SECURITY_PROTOCOL_MAP) it speaks TLS, trusting SAMSA_SSL_TRUSTSTORE_LOCATION (PEM) when
// set; ApiVersions needs no SASL authentication.
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';

const env = process.env;
const listeners = (env.SAMSA_LISTENERS || 'PLAINTEXT://:9092,CONTROLLER://:19092')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
const controlPlane = (env.SAMSA_CONTROL_PLANE_LISTENER_NAME || 'CONTROLLER').toUpperCase();
const wanted = (env.SAMSA_HEALTHCHECK_LISTENER || env.SAMSA_INTER_BROKER_LISTENER_NAME || '').toUpperCase();
const parsed = listeners
  .map((l) => /^(.*):\/\/\[?([^\]]*)\]?:(\d+)$/.exec(l))
  .filter((m) => m !== null)
  .map((m) => ({ name: m[1].toUpperCase(), host: m[2], port: Number(m[3]) }));
const target = parsed.find((l) => l.name === wanted) ?? parsed.find((l) => l.name !== controlPlane);
if (!target) {
  console.error(`healthcheck: no client listener in '${listeners.join(',')}'`);
  process.exit(1);
}
const host = target.host === '' || target.host === '0.0.0.0' || target.host === '::' ? '127.0.0.1' : target.host;

const clientId = Buffer.from('samsa-healthcheck');
const body = Buffer.alloc(2 + 2 + 4 + 2 + clientId.length);
body.writeInt16BE(18, 0); // ApiVersions
body.writeInt16BE(0, 2); // v0
body.writeInt32BE(1, 4); // correlation id
body.writeInt16BE(clientId.length, 8);
clientId.copy(body, 10);
const size = Buffer.alloc(4);
size.writeInt32BE(body.length, 0);

const protocolMap = Object.fromEntries(
  (env.SAMSA_LISTENER_SECURITY_PROTOCOL_MAP || '')
    .split(',')
    .map((kv) => kv.trim().split(':'))
    .filter((kv) => kv.length === 2)
    .map(([k, v]) => [k.trim().toUpperCase(), v.trim().toUpperCase()]),
);
const protocol = protocolMap[target.name] ?? target.name;
const useTls = protocol === 'SSL' || protocol === 'SASL_SSL';
const ca = useTls && env.SAMSA_SSL_TRUSTSTORE_LOCATION ? [readFileSync(env.SAMSA_SSL_TRUSTSTORE_LOCATION, 'utf8')] : undefined;
const sock = useTls
  ? // the certificate is checked against the CA; the host name is not (we connect to ourselves)
    tlsConnect({ host, port: target.port, ...(ca ? { ca } : {}), checkServerIdentity: () => undefined })
  : connect({ host, port: target.port });
const timer = setTimeout(() => fail('no answer within 4 s'), 4000);
let got = Buffer.alloc(0);
function fail(why) {
  console.error(`healthcheck: ${host}:${target.port} (${target.name}): ${why}`);
  process.exit(1);
}
sock.on(useTls ? 'secureConnect' : 'connect', () => sock.write(Buffer.concat([size, body])));
sock.on('error', (err) => fail(err.message));
sock.on('data', (chunk) => {
  got = Buffer.concat([got, chunk]);
  if (got.length < 10) return;
  const correlationId = got.readInt32BE(4);
  const errorCode = got.readInt16BE(8);
  clearTimeout(timer);
  sock.destroy();
  if (correlationId !== 1 || errorCode !== 0) fail(`ApiVersions answered correlation ${correlationId}, error ${errorCode}`);
  process.exit(0);
});
