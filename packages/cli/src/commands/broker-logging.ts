import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import pino, { type Logger } from 'pino';

export interface BrokerLoggers {
  logger: Logger;
  /** Kafka's state.change.logger: controller decisions and the LeaderAndIsr / StopReplica brokers apply. */
  stateChangeLogger: Logger;
}

/** The logger name state-change records carry (Kafka's log4j `state.change.logger`). */
export const STATE_CHANGE_LOGGER = 'state.change.logger';

/**
 * The broker's loggers: pino JSON lines on stdout, pretty-printed (pino-pretty, loaded only then)
 * when stdout is a terminal. State-change records go to the main log with
 * `logger: "state.change.logger"`, or, with state.change.log.file set, as JSON lines to that file.
 */
export async function createBrokerLoggers(o: { level: string; stateChangeLogFile: string | null; tty?: boolean }): Promise<BrokerLoggers> {
  const base = { pid: process.pid };
  const tty = o.tty ?? process.stdout.isTTY === true;
  let logger: Logger;
  if (tty) {
    const { default: pretty } = await import('pino-pretty');
    logger = pino({ level: o.level, base }, pretty({ colorize: true, sync: true }));
  } else {
    logger = pino({ level: o.level, base });
  }
  let stateChangeLogger = logger.child({ logger: STATE_CHANGE_LOGGER });
  if (o.stateChangeLogFile) {
    mkdirSync(dirname(o.stateChangeLogFile), { recursive: true });
    // synchronous writes: state changes are few, and none may be lost when the broker exits
    const dest = pino.destination({ dest: o.stateChangeLogFile, sync: true, append: true });
    stateChangeLogger = pino({ level: o.level, base }, dest).child({ logger: STATE_CHANGE_LOGGER });
    logger.info({ file: o.stateChangeLogFile }, 'state-change log goes to its own file (state.change.log.file)');
  }
  return { logger, stateChangeLogger };
}
