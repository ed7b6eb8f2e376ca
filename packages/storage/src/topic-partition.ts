/** Kafka's partition directory naming (a partition's directory is its topicPartitionKey). */
import { randomUUID } from 'node:crypto';
import type { TopicPartition } from '@samsa/protocol';
import { DELETE_DIR_SUFFIX, FUTURE_DIR_SUFFIX, STRAY_DIR_SUFFIX } from './config.js';

export type PartitionDirKind = 'log' | 'delete' | 'future' | 'stray';

export interface ParsedPartitionDir extends TopicPartition {
  kind: PartitionDirKind;
}

const DELETE_RE = /^(\S+)-(\d+)\.(\S+)-delete$/;
const SUFFIXED_RE = /^(\S+)-(\d+)\.(\S+)-(future|stray)$/;

/** Parses a partition directory name (Kafka's UnifiedLog.parseTopicPartitionName); null if it is not one. */
export function parsePartitionDirName(name: string): ParsedPartitionDir | null {
  if (name.endsWith(DELETE_DIR_SUFFIX)) {
    const m = DELETE_RE.exec(name);
    return m ? { topic: m[1] as string, partition: Number(m[2]), kind: 'delete' } : null;
  }
  if (name.endsWith(FUTURE_DIR_SUFFIX) || name.endsWith(STRAY_DIR_SUFFIX)) {
    const m = SUFFIXED_RE.exec(name);
    return m ? { topic: m[1] as string, partition: Number(m[2]), kind: m[4] as 'future' | 'stray' } : null;
  }
  const i = name.lastIndexOf('-');
  if (i <= 0 || i === name.length - 1) return null;
  const p = name.slice(i + 1);
  if (!/^\d+$/.test(p)) return null;
  const partition = Number(p);
  if (!Number.isSafeInteger(partition) || partition > 0x7fffffff) return null;
  return { topic: name.slice(0, i), partition, kind: 'log' };
}

/** `<topic>-<p>.<uuid without dashes>-delete`, the topic cut so the name stays within 255 bytes. */
export function deleteDirName(tp: TopicPartition): string {
  const suffix = `-${tp.partition}.${randomUUID().replaceAll('-', '')}${DELETE_DIR_SUFFIX}`;
  return `${tp.topic.slice(0, Math.max(0, 255 - suffix.length))}${suffix}`;
}
