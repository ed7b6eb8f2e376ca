import { describe, expect, it } from 'vitest';
import type { Admin, AdminOptions } from '@samsa/client';
import { CommandConfigError, adminOptionsFromProperties, openAdmin, readCommandConfig } from './admin-client.js';

describe('admin client of the tools', () => {
  it('admin client – --command-config properties become the Admin settings this client has', () => {
    const p = readCommandConfig(
      'admin.properties',
      () => '# admin\nclient.id = cli\nrequest.timeout.ms=500\n! other\ndefault.api.timeout.ms: 2000\nsasl.mechanism=PLAIN\n',
    );
    expect(p).toEqual({ 'client.id': 'cli', 'request.timeout.ms': '500', 'default.api.timeout.ms': '2000', 'sasl.mechanism': 'PLAIN' });
    expect(adminOptionsFromProperties(p)).toEqual({ clientId: 'cli', requestTimeoutMs: 500, defaultApiTimeoutMs: 2000 });
    expect(() => adminOptionsFromProperties({ 'request.timeout.ms': 'x' })).toThrow(CommandConfigError);
    expect(() => adminOptionsFromProperties({ 'request.timeout.ms': 'x' })).toThrow(
      /Invalid value x for configuration request.timeout.ms: Not a number of type INT/,
    );
  });

  it('admin client – the tool defaults, then the embedder options, then --command-config', () => {
    let seen: AdminOptions | undefined;
    const createAdmin = (o: AdminOptions) => ((seen = o), {} as Admin);
    openAdmin(
      { bootstrapServers: 'b:9092', clientId: 'samsa-x', requestTimeoutMs: 1, defaultApiTimeoutMs: 2 },
      { createAdmin, adminOptions: { requestTimeoutMs: 10, retryBackoffMs: 5 } },
      { 'request.timeout.ms': '100' },
    );
    expect(seen).toEqual({ bootstrapServers: 'b:9092', clientId: 'samsa-x', requestTimeoutMs: 100, defaultApiTimeoutMs: 2, retryBackoffMs: 5 });
  });

  it('admin client – no --command-config reads nothing', () => {
    expect(
      readCommandConfig(undefined, () => {
        throw new Error('read');
      }),
    ).toEqual({});
    expect(readCommandConfig('f', () => 'a=1')).toEqual({ a: '1' });
  });
});
