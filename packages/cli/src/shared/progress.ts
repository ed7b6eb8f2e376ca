/**
 * Progress of a long run: on a terminal (stderr is a TTY) a bar redrawn in place on stderr;
 * otherwise nothing here — the tools print their own plain lines (Kafka's output), which stay
 * parseable in logs and pipes.
 */
export interface ProgressOptions {
  total: number;
  unit: string;
  stream?: NodeJS.WriteStream;
  /** Default: whether the stream is a TTY. */
  tty?: boolean;
}

export class ProgressBar {
  readonly enabled: boolean;
  private readonly stream: NodeJS.WriteStream;
  private lastDraw = 0;
  private readonly start = Date.now();
  private drawn = false;

  constructor(private readonly o: ProgressOptions) {
    this.stream = o.stream ?? process.stderr;
    this.enabled = o.tty ?? this.stream.isTTY === true;
  }

  /** Redraws at most every 100 ms (always when `force`). */
  update(done: number, force = false): void {
    if (!this.enabled) return;
    const now = Date.now();
    if (!force && now - this.lastDraw < 100) return;
    this.lastDraw = now;
    this.stream.write(`\r${renderBar(done, this.o.total, this.o.unit, now - this.start, (this.stream.columns ?? 80) - 1)}`);
    this.drawn = true;
  }

  /** Clears the bar (before printing results). */
  done(): void {
    if (this.enabled && this.drawn) this.stream.write('\r\x1b[2K');
    this.drawn = false;
  }
}

/** `[#####.....]  50.0% 500/1000 msgs 123.4 msgs/s` fitted to `width` columns. */
export function renderBar(done: number, total: number, unit: string, elapsedMs: number, width = 79): string {
  const frac = total > 0 ? Math.min(1, done / total) : 0;
  const rate = elapsedMs > 0 ? (done * 1000) / elapsedMs : 0;
  const tail = ` ${(frac * 100).toFixed(1).padStart(5)}% ${done}/${total} ${unit} ${rate.toFixed(1)} ${unit}/s`;
  const barWidth = Math.max(10, Math.min(40, width - tail.length - 2));
  const filled = Math.round(frac * barWidth);
  return `[${'#'.repeat(filled)}${'.'.repeat(barWidth - filled)}]${tail}`.slice(0, Math.max(width, 20));
}
