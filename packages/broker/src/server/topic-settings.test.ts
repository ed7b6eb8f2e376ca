import { describe, expect, it } from 'vitest';
import { buildBrokerConfig } from '../config/broker-config.js';
import { topicSettingsFrom } from './topic-settings.js';

const cfg = buildBrokerConfig({ properties: { 'zookeeper.connect': '127.0.0.1:2181', 'log.retention.hours': '24', 'min.insync.replicas': '2' } });

describe('topic settings', () => {
  it('topic settings – topic overrides win over the broker log.* defaults', () => {
    const s = topicSettingsFrom(cfg, { 'retention.ms': '1000', 'segment.bytes': '1048576' });
    expect(s.logConfig.retentionMs).toBe(1000);
    expect(s.logConfig.segmentBytes).toBe(1048576);
    expect(s.minInsyncReplicas).toBe(2);
    expect(topicSettingsFrom(cfg).logConfig.retentionMs).toBe(24 * 3600 * 1000);
  });

  it('topic settings – a compact-only topic is never trimmed by retention; compact,delete is', () => {
    const compact = topicSettingsFrom(cfg, { 'cleanup.policy': 'compact' });
    expect(compact.compacted).toBe(true);
    expect(compact.logConfig.retentionMs).toBe(-1);
    expect(compact.logConfig.retentionBytes).toBe(-1);
    const both = topicSettingsFrom(cfg, { 'cleanup.policy': 'compact,delete', 'retention.ms': '5000' });
    expect(both.logConfig.retentionMs).toBe(5000);
  });
});
