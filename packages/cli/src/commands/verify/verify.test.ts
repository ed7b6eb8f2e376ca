import { describe, expect, it } from 'vitest';
import type { Admin, AdminOptions } from '@samsa/client';
import { Command } from 'commander';
import { chaosCommand } from '../chaos/chaos.js';
import { addVerifyOptions, ensureVerifyTopic, verifyRunOptions, type RawVerifyOptions } from './verify.js';

describe('verify', () => {
  it('verify – the topic is created through the tools’ Admin set-up (defaults, then the embedder options)', async () => {
    const built: AdminOptions[] = [];
    const created: unknown[] = [];
    const admin = {
      createTopics: async (topics: unknown[]) => void created.push(...topics),
      describeTopics: async () => [{ partitions: [{ leader: 1 }, { leader: 2 }] }],
      close: async () => undefined,
    } as unknown as Admin;
    const lines: string[] = [];
    await ensureVerifyTopic({
      bootstrap: 'b:9092',
      topic: 'v',
      partitions: 2,
      replicationFactor: 3,
      minInsyncReplicas: 2,
      out: (s) => lines.push(s),
      adminDeps: { createAdmin: (o) => (built.push(o), admin), adminOptions: { requestTimeoutMs: 50 } },
    });
    expect(built).toEqual([
      { bootstrapServers: 'b:9092', clientId: 'samsa-verify', requestTimeoutMs: 50 },
      { bootstrapServers: 'b:9092', clientId: 'samsa-verify', requestTimeoutMs: 50 },
    ]);
    expect(created).toEqual([{ name: 'v', numPartitions: 2, replicationFactor: 3, configs: { 'min.insync.replicas': '2' } }]);
    expect(lines).toEqual(['Created topic v (partitions 2, replication factor 3, min.insync.replicas 2).']);
  });

  it('verify – --transactional with --transaction-size and --abort-every becomes the run’s transactional workload; samsa chaos accepts the same flags', () => {
    const parse = (...args: string[]) => {
      const cmd = addVerifyOptions(new Command('verify').option('--bootstrap-server <s>'));
      cmd.parse(['--bootstrap-server', 'b:9092', ...args], { from: 'user' });
      return verifyRunOptions(cmd.opts<RawVerifyOptions>(), () => undefined);
    };
    expect(parse('--transactional', '--transaction-size', '5', '--abort-every', '3').transactional).toEqual({ size: 5, abortEvery: 3 });
    expect(parse('--transactional').transactional).toEqual({ size: 10, abortEvery: 7 });
    expect(parse().transactional).toBeUndefined();
    expect(() => parse('--transactional', '--acks', '1')).toThrow(/--transactional needs idempotence/);
    expect(() => parse('--transactional', '--no-idempotence')).toThrow(/--transactional needs idempotence/);
    const chaos = chaosCommand({ out: () => undefined, err: () => undefined }, () => undefined);
    expect(chaos.options.map((o) => o.long)).toEqual(expect.arrayContaining(['--transactional', '--transaction-size', '--abort-every']));
  });

  it('verify – --command-config with SASL_SSL gives the admin, the producers and the checker TLS and SCRAM; without it no security', async () => {
    const files: Record<string, string> = {
      '/c.properties': [
        'security.protocol=SASL_SSL',
        'ssl.truststore.type=PEM',
        'ssl.truststore.location=/ca.pem',
        'sasl.mechanism=SCRAM-SHA-512',
        'sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="p";',
      ].join('\n'),
      '/ca.pem': 'CA-PEM',
    };
    const read = (f: string) => files[f] ?? '';
    const parse = (...args: string[]) => {
      const cmd = addVerifyOptions(new Command('verify').option('--bootstrap-server <s>'));
      cmd.parse(['--bootstrap-server', 'b:9092', ...args], { from: 'user' });
      return verifyRunOptions(cmd.opts<RawVerifyOptions>(), () => undefined, read);
    };
    const run = parse('--command-config', '/c.properties');
    expect(run.security).toEqual({ tls: { ca: 'CA-PEM' }, sasl: { mechanism: 'SCRAM-SHA-512', username: 'u', password: 'p' } });
    expect(parse().security).toBeUndefined();
    const built: AdminOptions[] = [];
    const admin = {
      createTopics: async () => undefined,
      describeTopics: async () => [{ partitions: [{ leader: 1 }] }],
      close: async () => undefined,
    } as unknown as Admin;
    await ensureVerifyTopic({ ...run, adminDeps: { createAdmin: (o) => (built.push(o), admin) } });
    expect(built[0]).toMatchObject({ tls: { ca: 'CA-PEM' }, sasl: { mechanism: 'SCRAM-SHA-512', username: 'u', password: 'p' } });
    const chaos = chaosCommand({ out: () => undefined, err: () => undefined }, () => undefined);
    expect(chaos.options.map((o) => o.long)).toContain('--command-config');
  });
});
