import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { consoleProducerCommand, consoleProducerProps } from './console-producer.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

/** The options commander gives the console producer's action for `argv` (the action itself not run). */
function parsed(argv: string[]): Parameters<typeof consoleProducerProps>[0] {
  const cmd = consoleProducerCommand({ out: () => undefined, err: () => undefined }, () => undefined);
  cmd.exitOverride().action(() => undefined);
  cmd.parse(argv, { from: 'user' });
  return cmd.opts() as Parameters<typeof consoleProducerProps>[0];
}

describe('console-producer', () => {
  it('console-producer – --producer.config is read, and --producer-property items win over it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'console-producer-'));
    dirs.push(dir);
    const file = join(dir, 'producer.properties');
    await writeFile(file, 'client.id=from-file\nacks=1\nenable.idempotence=false\n');
    const props = consoleProducerProps(parsed(['--topic', 't', '--producer.config', file, '--producer-property', 'acks=0']), '127.0.0.1:9092');
    expect(props).toMatchObject({
      'client.id': 'from-file',
      acks: '0',
      'enable.idempotence': 'false',
      'bootstrap.servers': '127.0.0.1:9092',
      'linger.ms': '1000',
    });
  });

  it('console-producer – without a config file the tool defaults stand (client.id, acks=-1, linger.ms from --timeout)', () => {
    const props = consoleProducerProps(parsed(['--topic', 't', '--timeout', '50', '--compression-codec']), 'b:1');
    expect(props).toEqual({ 'bootstrap.servers': 'b:1', 'linger.ms': '50', acks: '-1', 'client.id': 'console-producer', 'compression.type': 'gzip' });
  });
});
