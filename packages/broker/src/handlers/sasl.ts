import { ErrorCode } from '@samsa/protocol';
import type { ApiHandler } from '../api/api-handler.js';
import { alterUserScramCredentials, describeUserScramCredentials } from '../admin/scram-credential-admin.js';
import type { BrokerServices } from './services.js';

/**
 * SaslHandshake reaching the request handler: a PLAINTEXT listener, or an authenticated connection
 * that may not re-authenticate (network/sasl-authenticator.ts takes the others). Kafka answers
 * ILLEGAL_SASL_STATE with the enabled mechanisms.
 */
export const saslHandshakeHandler: ApiHandler<17, BrokerServices> = {
  apiKey: 17,
  async handle(_req, _ctx, s) {
    return { errorCode: ErrorCode.ILLEGAL_SASL_STATE, mechanisms: [...s.config.get('sasl.enabled.mechanisms')] };
  },
  errorResponse(_req, code) {
    return { errorCode: code, mechanisms: [] };
  },
};

/** SaslAuthenticate outside an authentication: Kafka's ILLEGAL_SASL_STATE answer. */
export const saslAuthenticateHandler: ApiHandler<36, BrokerServices> = {
  apiKey: 36,
  async handle() {
    return {
      errorCode: ErrorCode.ILLEGAL_SASL_STATE,
      errorMessage: 'SaslAuthenticate request received after successful authentication',
      authBytes: Buffer.alloc(0),
      sessionLifetimeMs: 0n,
    };
  },
  errorResponse(_req, code) {
    return { errorCode: code, errorMessage: null, authBytes: Buffer.alloc(0), sessionLifetimeMs: 0n };
  },
};

/** DescribeUserScramCredentials (KIP-554): mechanism and iterations of each user's credentials. */
export const describeUserScramCredentialsHandler: ApiHandler<50, BrokerServices> = {
  apiKey: 50,
  async handle(req, _ctx, s) {
    const users = req.body.users === null ? null : req.body.users.map((u) => u.name);
    const results = await describeUserScramCredentials(s.kzk, users, s.log);
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, results };
  },
  errorResponse(_req, code) {
    return { throttleTimeMs: 0, errorCode: code, errorMessage: null, results: [] };
  },
};

/**
 * AlterUserScramCredentials (KIP-554): upserts (from the client's salted password) and deletes
 * credentials; only the controller serves it (NOT_CONTROLLER elsewhere), as in Kafka's ZooKeeper mode.
 */
export const alterUserScramCredentialsHandler: ApiHandler<51, BrokerServices> = {
  apiKey: 51,
  async handle(req, _ctx, s) {
    if (!s.controller.isActive) return this.errorResponse(req, ErrorCode.NOT_CONTROLLER);
    const results = await alterUserScramCredentials(s.kzk, req.body.deletions, req.body.upsertions, s.log);
    return { throttleTimeMs: 0, results };
  },
  errorResponse(req, code) {
    const users = new Set([...req.body.deletions, ...req.body.upsertions].map((o) => o.name));
    return { throttleTimeMs: 0, results: [...users].map((user) => ({ user, errorCode: code, errorMessage: null })) };
  },
};
