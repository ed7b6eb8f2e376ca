import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import pino, { type DestinationStream, type Logger } from 'pino';
import { StateChangeRing } from '@samsa/broker';

export interface BrokerLoggers {
  logger: Logger;
  /** Kafka's state.change.logger: controller decisions and the LeaderAndIsr / StopReplica brokers apply. */
  stateChangeLogger: Logger;
  /** The newest state-change records, for the metrics endpoint's /state-change (the web console's timeline). */
  stateChangeRing: StateChangeRing;
}

/** The logger name state-change records carry (Kafka's log4j `state.change.logger`). */
export const STATE_CHANGE_LOGGER = 'state.change.logger';

/**
 * The broker's loggers: pino JSON lines on stdout, pretty-printed (pino-pretty, loaded only then)
 * when stdout is a terminal. State-change records go to the main log with
 * `logger: "state.change.logger"`, or, with state.change.log.file set, as JSON lines to that file.
 * Either way they are also kept in a StateChangeRing (the ring skips every other line).
 */
export async function createBrokerLoggers(o: { level: string; stateChangeLogFile: string | null; tty?: boolean }): Promise<BrokerLoggers> {
  const base = { pid: process.pid };
  const tty = o.tty ?? process.stdout.isTTY === true;
  const ring = new StateChangeRing();
  const withRing = (dest: DestinationStream) =>
    pino.multistream([
      { level: o.level as pino.Level, stream: dest },
      { level: o.level as pino.Level, stream: ring },
    ]);
  let main: DestinationStream;
  if (tty) {
    const { default: pretty } = await import('pino-pretty');
    main = pretty({ colorize: true, sync: true });
  } else {
    main = pino.destination({ dest: 1, sync: false });
  }
  // the ring sees the main log's lines only while state changes go there
  const logger = pino({ level: o.level, base }, o.stateChangeLogFile ? main : withRing(main));
  let stateChangeLogger = logger.child({ logger: STATE_CHANGE_LOGGER });
  if (o.stateChangeLogFile) {
    mkdirSync(dirname(o.stateChangeLogFile), { recursive: true });
    // synchronous writes: state changes are few, and none may be lost when the broker exits
    const dest = pino.destination({ dest: o.stateChangeLogFile, sync: true, append: true });
    stateChangeLogger = pino({ level: o.level, base }, withRing(dest)).child({ logger: STATE_CHANGE_LOGGER });
    logger.info({ file: o.stateChangeLogFile }, 'state-change log goes to its own file (state.change.log.file)');
  }
  return { logger, stateChangeLogger, stateChangeRing: ring };
}
