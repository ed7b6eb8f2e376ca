import { describe, expect, it } from 'vitest';
import type { Admin, AdminOptions } from '@samsa/client';
import { ensureVerifyTopic } from './verify.js';

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
});
