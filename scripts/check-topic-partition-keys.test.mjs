import { describe, expect, it } from 'vitest';
import { checkRepository, findHandBuiltKeys } from './check-topic-partition-keys.mjs';
import { fixture } from './test-fixture.mjs';

describe('check-topic-partition-keys', () => {
  it('check-topic-partition-keys – flags hand-built topic-partition strings and parse-backs', () => {
    const src = [
      'const a = `${tp.topic}-${tp.partition}`;',
      'const b = `${t.name}-${p.partitionIndex}`;',
      'const c = `not the leader of ${topic}-${p}`;',
      "const i = k.lastIndexOf('-');",
    ].join('\n');
    expect(findHandBuiltKeys(src).map((f) => f.line)).toEqual([1, 2, 3, 4]);
  });

  it('check-topic-partition-keys – leaves other dashes alone', () => {
    const src = [
      'const v = `v${api.minVersion}-${api.maxVersion}`;',
      'const id = `${clientId}-${randomUUID()}`;',
      'const key = topicPartitionKey(tp);',
      'const r = `${r}-${k}`;',
    ].join('\n');
    expect(findHandBuiltKeys(src)).toEqual([]);
  });

  it('check-topic-partition-keys – only the helper and the log directory parser may build or parse keys', () => {
    const root = fixture({
      'packages/protocol/src/topic-partition.ts': 'export const k = (topic, partition) => `${topic}-${partition}`;',
      'packages/storage/src/topic-partition.ts': "const i = name.lastIndexOf('-');",
      'packages/broker/src/replica/x.ts': 'const k = `${p.topic}-${p.partition}`;',
      'test-e2e/y.test.ts': 'const k = `${topic}-${partition}`;',
    });
    expect(checkRepository(root).map((f) => `${f.file}:${f.line}`)).toEqual(['test-e2e/y.test.ts:1', 'packages/broker/src/replica/x.ts:1']);
  });
});
