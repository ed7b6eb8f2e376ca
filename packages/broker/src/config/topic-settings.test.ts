import { describe, expect, it } from 'vitest';
import { buildBrokerConfig } from './broker-config.js';
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

  it('topic settings – compaction settings: topic overrides, else the log.cleaner.* broker defaults', () => {
    const d = topicSettingsFrom(cfg).logConfig;
    expect({
      compact: d.compact,
      deleteRetentionMs: d.deleteRetentionMs,
      minCleanableRatio: d.minCleanableRatio,
      minCompactionLagMs: d.minCompactionLagMs,
    }).toEqual({
      compact: false,
      deleteRetentionMs: 86_400_000,
      minCleanableRatio: 0.5,
      minCompactionLagMs: 0,
    });
    expect(d.maxCompactionLagMs).toBeGreaterThanOrEqual(Number.MAX_SAFE_INTEGER);
    const broker = buildBrokerConfig({
      properties: { 'zookeeper.connect': '127.0.0.1:2181', 'log.cleaner.delete.retention.ms': '5000', 'log.cleaner.min.cleanable.ratio': '0.2' },
    });
    const t = topicSettingsFrom(broker, {
      'cleanup.policy': 'compact',
      'min.cleanable.dirty.ratio': '0.01',
      'min.compaction.lag.ms': '100',
      'max.compaction.lag.ms': '900000',
    }).logConfig;
    expect({
      compact: t.compact,
      deleteRetentionMs: t.deleteRetentionMs,
      minCleanableRatio: t.minCleanableRatio,
      minCompactionLagMs: t.minCompactionLagMs,
      maxCompactionLagMs: t.maxCompactionLagMs,
    }).toEqual({
      compact: true,
      deleteRetentionMs: 5000,
      minCleanableRatio: 0.01,
      minCompactionLagMs: 100,
      maxCompactionLagMs: 900_000,
    });
  });
});
