import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { STATE_CHANGE_LOGGER, createBrokerLoggers } from './broker-logging.js';

describe('createBrokerLoggers', () => {
  let dir = '';
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('logging – with state.change.log.file the state-change logger writes JSON lines to that file, tagged with its logger name', async () => {
    dir = await mkdtemp(join(tmpdir(), 'samsa-logging-'));
    const file = join(dir, 'sub', 'state-change.log');
    const { logger, stateChangeLogger, stateChangeRing } = await createBrokerLoggers({ level: 'info', stateChangeLogFile: file, tty: false });
    stateChangeLogger.info({ topic: 't', partition: 0, leader: 1 }, 'applied LeaderAndIsr');
    stateChangeLogger.info({ topic: 't', partition: 1, leader: 2 }, 'elected leader');
    expect(logger).not.toBe(stateChangeLogger);
    const lines = (await readFile(file, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ logger: STATE_CHANGE_LOGGER, topic: 't', partition: 0, leader: 1, msg: 'applied LeaderAndIsr' });
    expect(lines[1]).toMatchObject({ logger: STATE_CHANGE_LOGGER, msg: 'elected leader' });
    // kept for GET /state-change too
    expect(stateChangeRing.since(0).records.map((r) => [r.seq, r.msg, r.partition])).toEqual([
      [1, 'applied LeaderAndIsr', 0],
      [2, 'elected leader', 1],
    ]);
  });

  it('logging – without a file the state-change logger is a child of the main logger tagged logger=state.change.logger', async () => {
    const { logger, stateChangeLogger, stateChangeRing } = await createBrokerLoggers({ level: 'debug', stateChangeLogFile: null, tty: false });
    expect(stateChangeLogger.bindings()).toMatchObject({ logger: STATE_CHANGE_LOGGER });
    expect(logger.bindings()).not.toHaveProperty('logger');
    expect(stateChangeLogger.level).toBe('debug');
    // the ring keeps the state-change lines of the main log, not the others
    logger.debug({ component: 'x' }, 'an ordinary line');
    stateChangeLogger.debug({ topic: 't', partition: 3, from: 'OfflinePartition', to: 'OnlinePartition' }, 'partition state change');
    expect(stateChangeRing.since(0).records).toMatchObject([{ seq: 1, msg: 'partition state change', partition: 3, to: 'OnlinePartition' }]);
  });
});
