import { describe, expect, it } from 'vitest';
import { ConfigSource, type Admin, type AdminOptions, type ConfigEntry } from '@samsa/client';
import { runConfigsCommand, type ConfigsDeps } from './configs.js';

const entry = (name: string, value: string): ConfigEntry =>
  ({ name, value, source: ConfigSource.DynamicTopicConfig, isSensitive: false, isReadOnly: false, synonyms: [] }) as unknown as ConfigEntry;

/** An Admin that answers DescribeConfigs for one topic and records the options it was built with. */
function fakeAdmin(): { deps: ConfigsDeps; built: AdminOptions[]; closed: () => number } {
  const built: AdminOptions[] = [];
  let closed = 0;
  const admin = {
    describeConfigs: async () => [{ entries: [entry('retention.ms', '1000')] }],
    close: async () => void closed++,
  } as unknown as Admin;
  const files: Record<string, string> = { 'admin.properties': 'client.id=ops\nrequest.timeout.ms=700\n', 'bad.properties': 'request.timeout.ms=soon\n' };
  const deps: ConfigsDeps = {
    createAdmin: (o) => (built.push(o), admin),
    adminOptions: { retryBackoffMs: 5 },
    readFile: (p) => {
      const f = files[p];
      if (f === undefined) throw new Error(`${p} (No such file or directory)`);
      return f;
    },
  };
  return { deps, built, closed: () => closed };
}

async function run(deps: ConfigsDeps, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runConfigsCommand(args, { out: (s) => (out += s), err: (s) => (err += s) }, deps);
  return { code, out, err };
}

describe('configs', () => {
  it('configs – --command-config settings go to the Admin over the tool defaults and the embedder options', async () => {
    const f = fakeAdmin();
    const r = await run(
      f.deps,
      '--bootstrap-server',
      'b:9092',
      '--entity-type',
      'topics',
      '--entity-name',
      't',
      '--describe',
      '--command-config',
      'admin.properties',
    );
    expect(r).toEqual({ code: 0, out: 'Dynamic configs for topic t are:\n  retention.ms=1000 sensitive=false synonyms={}\n', err: '' });
    expect(f.built).toEqual([{ bootstrapServers: 'b:9092', clientId: 'ops', defaultApiTimeoutMs: 30_000, requestTimeoutMs: 700, retryBackoffMs: 5 }]);
    expect(f.closed()).toBe(1);
  });

  it('configs – without --command-config the tool defaults stand', async () => {
    const f = fakeAdmin();
    expect((await run(f.deps, '--bootstrap-server', 'b:9092', '--entity-type', 'topics', '--entity-name', 't', '--describe')).code).toBe(0);
    expect(f.built).toEqual([
      { bootstrapServers: 'b:9092', clientId: 'samsa-configs', defaultApiTimeoutMs: 30_000, requestTimeoutMs: 15_000, retryBackoffMs: 5 },
    ]);
  });

  it('configs – an unreadable or invalid --command-config is an error (exit 1), no Admin is built', async () => {
    const f = fakeAdmin();
    const missing = await run(f.deps, '--bootstrap-server', 'b:9092', '--entity-type', 'topics', '--describe', '--command-config', 'nope.properties');
    expect(missing).toEqual({ code: 1, out: '', err: 'nope.properties (No such file or directory)\n' });
    const bad = await run(f.deps, '--bootstrap-server', 'b:9092', '--entity-type', 'topics', '--describe', '--command-config', 'bad.properties');
    expect(bad).toEqual({ code: 1, out: '', err: 'Invalid value soon for configuration request.timeout.ms: Not a number of type INT\n' });
    expect(f.built).toEqual([]);
  });
});
