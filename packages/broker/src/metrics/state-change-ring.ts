/**
 * The newest state-change records (Kafka's state.change.logger) kept in memory, so the metrics
 * endpoint can serve them (GET /state-change?since=<seq>) to the web console's timeline. It is a
 * pino destination: the broker's loggers write every JSON line to it as well, and only lines of the
 * state-change logger are kept (a substring test first, JSON parsing only for those).
 */

export interface StateChangeRecord {
  /** 1, 2, 3, … in the order written (restarts at 1 with the broker). */
  seq: number;
  /** Epoch ms (pino's `time`). */
  time: number;
  level: number;
  msg: string;
  [field: string]: unknown;
}

const MARK = '"logger":"state.change.logger"';

export class StateChangeRing {
  private readonly records: StateChangeRecord[] = [];
  private seq = 0;

  constructor(private readonly capacity = 2000) {}

  /** pino destination interface: one JSON line per call. */
  write(line: string): boolean {
    if (!line.includes(MARK)) return true;
    try {
      const o = JSON.parse(line) as Record<string, unknown>;
      const { logger: _logger, pid: _pid, hostname: _hostname, ...rest } = o;
      this.records.push({ ...rest, seq: ++this.seq, time: Number(o['time'] ?? Date.now()), level: Number(o['level'] ?? 30), msg: String(o['msg'] ?? '') });
      if (this.records.length > this.capacity) this.records.splice(0, this.records.length - this.capacity);
    } catch {
      /* not JSON: not ours */
    }
    return true;
  }

  /** Records with seq > `since` (at most `limit`, oldest first) and the seq to ask from next. */
  /**
   * Records with seq > `since` (at most `limit`, oldest first), the seq to ask from next, the oldest
   * seq still kept and the newest written (`last` < `since`: the broker restarted, ask from 0).
   */
  since(since: number, limit = 500): { records: StateChangeRecord[]; next: number; first: number; last: number } {
    const records = this.records.filter((r) => r.seq > since).slice(0, limit);
    return { records, next: records.at(-1)?.seq ?? Math.max(since, 0), first: this.records[0]?.seq ?? this.seq + 1, last: this.seq };
  }
}
